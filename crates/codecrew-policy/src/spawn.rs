//! An agent CLI started without `fork`.
//!
//! `fork` copies codecrew's page tables, marks every page it shares copy-on-write, and
//! the child tears that copy down again when it executes the CLI: 0.2 ms of a plain
//! answer (docs/PERFORMANCE.md, issue 52), and more the more memory codecrew holds (a
//! long `chat`, an `mcp --http` or `acp` server). `posix_spawn` avoids it by running
//! the child in the parent's memory until it executes (`clone(CLONE_VM | CLONE_VFORK)`),
//! but it cannot make the walls a CLI needs before it executes: a session of its own,
//! no CAP_SYS_PTRACE, its Landlock domain and filter, the parent-death signal. So the
//! child here is started as `posix_spawn` starts one (`clone_vm::start`) and
//! makes them itself, with plain system calls on what [`Launch`] made ready before.
//!
//! The child runs on a stack of its own in codecrew's memory while codecrew's thread
//! that started it waits (`CLONE_VFORK`); codecrew's other threads go on. It allocates
//! nothing, takes no lock and writes nothing of codecrew's but its one failure slot.

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;
use std::sync::atomic::{AtomicI32, Ordering};

use nix::libc;
use nix::unistd::Pid;
use seccompiler::BpfProgram;

/// The child's stack: a few frames of plain system calls (debug builds' frames are
/// large, hence the room), above a guard page (`clone_vm::Stack`).
const CHILD_STACK: usize = 256 * 1024;

/// The shell a program without `#!` runs in.
const SH: &std::ffi::CStr = c"/bin/sh";

/// Linux's number for CAP_SYS_PTRACE (capability.h).
const CAP_SYS_PTRACE: libc::c_ulong = 19;

/// How the child is kept from codecrew's terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Apart {
    /// A session of its own: no controlling terminal, so nothing it runs can open
    /// `/dev/tty` to read what the user types at codecrew's prompts; Ctrl-C and the
    /// terminal's hang-up do not reach it. It also leads a process group, codecrew's to
    /// kill.
    Session,
    /// Only a process group of its own, in codecrew's session (a CLI run unconfined).
    Group,
}

/// The walls a confined child enters before it executes its program: its Landlock
/// ruleset and its system-call filter, built before the start
/// ([`crate::sandbox::Domain::into_parts`]), and no CAP_SYS_PTRACE.
pub struct Walls {
    pub ruleset: Option<OwnedFd>,
    pub filter: Option<BpfProgram>,
}

/// A program to start, with every string the child needs made ready: the child itself
/// must not allocate.
pub struct Launch {
    program: CString,
    /// `argv[0]` first.
    args: Vec<CString>,
    env: Vec<CString>,
    cwd: Option<CString>,
}

impl Launch {
    /// `program` (a path: the child does not search PATH) with `args`, named `arg0`
    /// (its `argv[0]`, as the command was given), in `cwd`, with exactly the variables
    /// `env` (nothing inherited but what it names).
    pub fn new(
        program: &Path,
        arg0: &OsStr,
        args: &[OsString],
        env: impl IntoIterator<Item = (OsString, OsString)>,
        cwd: Option<&Path>,
    ) -> std::io::Result<Launch> {
        let program = c_string(program.as_os_str().as_bytes())?;
        let mut all_args = vec![c_string(arg0.as_bytes())?];
        for arg in args {
            all_args.push(c_string(arg.as_bytes())?);
        }
        let mut all_env = Vec::new();
        for (name, value) in env {
            let mut pair = name.into_vec();
            pair.push(b'=');
            pair.extend_from_slice(value.as_bytes());
            all_env.push(c_string(&pair)?);
        }
        let cwd = cwd
            .map(|dir| c_string(dir.as_os_str().as_bytes()))
            .transpose()?;
        Ok(Launch {
            program,
            args: all_args,
            env: all_env,
            cwd,
        })
    }

    /// Starts the program with `stdio` as its standard input, output and error (each a
    /// descriptor of codecrew's above 2; they are codecrew's still, to close after),
    /// kept `apart`, in `walls` when given: its pid once it has executed the program, or
    /// why it could not (then nothing of it is left).
    #[allow(unsafe_code)]
    pub fn start(
        &self,
        stdio: [&OwnedFd; 3],
        apart: Apart,
        walls: Option<&Walls>,
    ) -> std::io::Result<Pid> {
        let stdio = stdio.map(AsRawFd::as_raw_fd);
        if stdio.iter().any(|fd| *fd <= 2) {
            // A descriptor 0 to 2 of codecrew's could be overwritten by another's dup2
            // before it is read (std keeps 0 to 2 open, so codecrew's pipes never are).
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a child's standard streams must be descriptors above 2",
            ));
        }
        let args = null_terminated(&self.args);
        // A program the kernel cannot execute (ENOEXEC: a script without `#!`) runs in
        // `/bin/sh`, as `execvp` (std's start) runs it: `sh PROGRAM ARGS...`.
        let sh_args: Vec<*const libc::c_char> = [SH.as_ptr(), self.program.as_ptr()]
            .into_iter()
            .chain(args[1..].iter().copied())
            .collect();
        let env = null_terminated(&self.env);
        let plan = Plan {
            program: self.program.as_ptr(),
            args: args.as_ptr(),
            sh_args: sh_args.as_ptr(),
            env: env.as_ptr(),
            cwd: self
                .cwd
                .as_ref()
                .map_or(std::ptr::null(), |cwd| cwd.as_ptr()),
            stdio,
            apart,
            ruleset: walls.and_then(|walls| walls.ruleset.as_ref().map(AsRawFd::as_raw_fd)),
            filter: walls.and_then(|walls| walls.filter.as_ref()),
            confined: walls.is_some(),
            parent: nix::unistd::getpid().as_raw(),
            failed: AtomicI32::new(0),
        };
        let mut stack = crate::clone_vm::Stack::new(CHILD_STACK)?;
        // SAFETY: the stack and the plan live until `start` returns, which with
        // CLONE_VFORK is after the child has executed the program or exited: it never
        // runs on them after. `child` makes plain system calls only (and the filter's,
        // which reads the prepared program), allocates nothing, writes only the plan's
        // atomic failure slot, and ends in `execve` or `_exit`.
        let pid = unsafe {
            crate::clone_vm::start(
                stack.as_mut_slice(),
                child,
                libc::SIGCHLD | libc::CLONE_VFORK,
                std::ptr::from_ref(&plan).cast_mut().cast(),
            )
        }?;
        match plan.failed.load(Ordering::Acquire) {
            0 => Ok(pid),
            errno => {
                // It has exited: reaped, so that nothing of it is left.
                let _ = nix::sys::wait::waitpid(pid, None);
                Err(std::io::Error::from_raw_os_error(errno))
            }
        }
    }
}

/// `bytes` as a C string; a NUL inside is refused (it would cut the string short).
fn c_string(bytes: &[u8]) -> std::io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a program, argument, variable or folder with a NUL byte",
        )
    })
}

/// The pointers of `strings`, then NULL, as `execve` takes them.
fn null_terminated(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings
        .iter()
        .map(|string| string.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// What the child reads: every pointer into memory [`Launch::start`] keeps alive.
struct Plan<'a> {
    program: *const libc::c_char,
    args: *const *const libc::c_char,
    /// `/bin/sh`'s, for a program without `#!`.
    sh_args: *const *const libc::c_char,
    env: *const *const libc::c_char,
    /// NULL: codecrew's own.
    cwd: *const libc::c_char,
    stdio: [RawFd; 3],
    apart: Apart,
    ruleset: Option<RawFd>,
    filter: Option<&'a BpfProgram>,
    confined: bool,
    /// codecrew's pid: the child's parent while codecrew lives.
    parent: libc::pid_t,
    /// The errno of the step that failed; 0 while none has.
    failed: AtomicI32,
}

/// The child: its walls, then the program. On a failure, its errno in the plan and
/// `_exit(127)`.
#[allow(unsafe_code)]
extern "C" fn child(plan: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `plan` is the `Plan` that `Launch::start` keeps alive until the child has
    // executed or exited.
    let plan = unsafe { &*plan.cast::<Plan>() };
    // SAFETY: see `prepare_and_execute`.
    let errno = unsafe { prepare_and_execute(plan) };
    plan.failed.store(errno, Ordering::Release);
    // SAFETY: ends this process at once, running nothing of codecrew's.
    unsafe { libc::_exit(127) }
}

/// Makes the child's walls and executes the program; returns only on a failure, with
/// its errno.
///
/// # Safety
///
/// Only in the child [`Launch::start`] starts, whose plan's pointers are alive.
#[allow(unsafe_code)]
unsafe fn prepare_and_execute(plan: &Plan) -> libc::c_int {
    let errno = || {
        std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    };
    // SAFETY (every call below): plain system calls on descriptors, C strings and
    // structures codecrew made ready, or on this stack.
    unsafe {
        for (target, fd) in (0..).zip(plan.stdio) {
            // The pipes are close-on-exec; the copies `dup2` makes are not.
            if libc::dup2(fd, target) < 0 {
                return errno();
            }
        }
        if !plan.cwd.is_null() && libc::chdir(plan.cwd) != 0 {
            return errno();
        }
        let apart = match plan.apart {
            Apart::Session => libc::setsid(),
            Apart::Group => libc::setpgid(0, 0),
        };
        if apart < 0 {
            return errno();
        }
        if plan.confined {
            // Fails without CAP_SETPCAP (not root), where there is nothing to drop.
            let _ = libc::prctl(libc::PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0);
            crate::sandbox::close_inherited_on_exec();
        }
        // What the landlock crate's `restrict_self` does: no new privileges (Landlock
        // requires it of an unprivileged process), then the domain.
        if let Some(ruleset) = plan.ruleset
            && (libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0) != 0)
        {
            return errno();
        }
        if let Some(filter) = plan.filter
            && seccompiler::apply_filter(filter).is_err()
        {
            return libc::EPERM;
        }
        // Dies with codecrew (`crate::lifeline`): the signal comes when the thread that
        // started it ends, and never if codecrew died before this call.
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
            return errno();
        }
        if libc::getppid() != plan.parent {
            return libc::ESRCH;
        }
        // Every signal is blocked (`clone_vm::start`): codecrew's handlers, which would
        // run on codecrew's memory, are put back to the default before any is let
        // through; what codecrew ignores, SIGPIPE but for Rust's own, stays ignored, as
        // it would through `exec`.
        for signal in 1..=libc::SIGRTMAX() {
            if signal == libc::SIGKILL || signal == libc::SIGSTOP {
                continue;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut action) != 0 {
                continue;
            }
            let handled =
                action.sa_sigaction != libc::SIG_IGN && action.sa_sigaction != libc::SIG_DFL;
            if handled || signal == libc::SIGPIPE {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(signal, &default, std::ptr::null_mut());
            }
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::pthread_sigmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::execve(plan.program, plan.args, plan.env);
        let failed = errno();
        if failed == libc::ENOEXEC {
            libc::execve(SH.as_ptr(), plan.sh_args, plan.env);
        }
        failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn pipe() -> (OwnedFd, OwnedFd) {
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap()
    }

    fn null() -> OwnedFd {
        std::fs::File::open("/dev/null").unwrap().into()
    }

    fn sh(script: &str, env: &[(&str, &str)]) -> Launch {
        Launch::new(
            Path::new("/bin/sh"),
            OsStr::new("sh"),
            &["-c".into(), script.into()],
            env.iter()
                .map(|(name, value)| ((*name).into(), (*value).into())),
            Some(Path::new("/")),
        )
        .unwrap()
    }

    /// Starts `launch`, and returns what it printed and its wait status.
    fn run(launch: &Launch, apart: Apart, walls: Option<&Walls>) -> (String, i32) {
        let (read, write) = pipe();
        let stdin = null();
        let pid = launch
            .start([&stdin, &write, &write], apart, walls)
            .unwrap();
        drop(write);
        let mut out = String::new();
        std::fs::File::from(read).read_to_string(&mut out).unwrap();
        let status = match nix::sys::wait::waitpid(pid, None).unwrap() {
            nix::sys::wait::WaitStatus::Exited(_, code) => code,
            other => panic!("{other:?}"),
        };
        (out, status)
    }

    #[test]
    fn the_child_runs_with_its_own_streams_folder_variables_and_session() {
        let (out, status) = run(
            &sh(
                "echo \"$PWD $GREETING ${HOME:-no home}\"; echo oops >&2; \
                 cut -d' ' -f6 /proc/$$/stat; echo $$; trap; exit 3",
                &[("GREETING", "hi")],
            ),
            Apart::Session,
            None,
        );
        assert_eq!(status, 3, "{out}");
        let lines: Vec<&str> = out.lines().collect();
        // Only the variables given; the folder given; stderr where it was sent.
        assert_eq!(lines[0], "/ hi no home", "{out}");
        assert_eq!(lines[1], "oops");
        // It leads a session of its own.
        assert_eq!(lines[2].trim(), lines[3].trim(), "{out}");
        // No handler of codecrew's, nothing ignored that a shell would show.
        assert_eq!(lines.len(), 4, "{out}");
    }

    #[test]
    fn a_script_without_a_shebang_runs_in_sh_and_argv0_is_as_given() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("cli");
        std::fs::write(&script, "echo \"$0 $1\"\n").unwrap();
        std::fs::set_permissions(
            &script,
            <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755),
        )
        .unwrap();
        let launch = Launch::new(&script, OsStr::new("cli"), &["one".into()], [], None).unwrap();
        let (out, status) = run(&launch, Apart::Group, None);
        assert_eq!(
            (out.as_str(), status),
            (format!("{} one\n", script.display()).as_str(), 0)
        );
        // A program run directly sees argv[0] as the command gave it, not its path.
        let (out, _) = run(&sh("echo $0", &[]), Apart::Group, None);
        assert_eq!(out, "sh\n");
    }

    /// A confined CLI cannot write through a descriptor codecrew's caller left open.
    #[test]
    fn a_confined_child_cannot_use_a_descriptor_it_inherited() {
        let dir = tempfile::tempdir().unwrap();
        let (_held, fd) = crate::sandbox::tests::inherited_file(dir.path());
        let launch = sh(
            &format!("(echo through >&{fd}) 2>/dev/null && echo wrote || echo refused"),
            &[],
        );
        let walls = Walls {
            ruleset: None,
            filter: None,
        };
        let (out, _) = run(&launch, Apart::Session, Some(&walls));
        assert_eq!(out, "refused\n");
        let (out, _) = run(&launch, Apart::Group, None);
        assert_eq!(
            out, "wrote\n",
            "unconfined it can: the refusal was the wall's"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("held-open.txt")).unwrap(),
            "through\n"
        );
    }

    #[test]
    fn a_child_in_a_group_of_its_own_stays_in_codecrews_session() {
        let (out, _) = run(
            &sh("cut -d' ' -f5,6 /proc/$$/stat; echo $$", &[]),
            Apart::Group,
            None,
        );
        let lines: Vec<&str> = out.lines().collect();
        let ids: Vec<i32> = lines[0]
            .split_whitespace()
            .map(|id| id.parse().unwrap())
            .collect();
        let pid: i32 = lines[1].trim().parse().unwrap();
        assert_eq!(ids[1], nix::unistd::getsid(None).unwrap().as_raw());
        assert_eq!(ids[0], pid, "leads its own group");
    }

    #[test]
    fn a_program_or_folder_that_cannot_be_used_is_an_error() {
        let launch = Launch::new(
            Path::new("/nonexistent/cli"),
            OsStr::new("cli"),
            &[],
            [],
            None,
        )
        .unwrap();
        let (read, write) = pipe();
        let error = launch
            .start([&read, &write, &write], Apart::Group, None)
            .unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc::ENOENT));
        let folder = Launch::new(
            Path::new("/bin/true"),
            OsStr::new("true"),
            &[],
            [],
            Some(Path::new("/nonexistent")),
        )
        .unwrap();
        let error = folder
            .start([&read, &write, &write], Apart::Group, None)
            .unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc::ENOENT));
    }

    #[test]
    #[allow(unsafe_code)]
    fn a_nul_byte_or_a_standard_stream_is_refused_before_any_start() {
        let error = Launch::new(
            Path::new("/bin/true"),
            OsStr::new("true"),
            &["a\0b".into()],
            [],
            None,
        )
        .err()
        .unwrap();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
        // codecrew's own stderr as a child's: refused, since another stream's dup2 could
        // overwrite it first. Never closed here.
        // SAFETY: descriptor 2 is open (std keeps 0 to 2 open) and never dropped.
        let stderr = std::mem::ManuallyDrop::new(unsafe {
            <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(2)
        });
        let (_read, write) = pipe();
        let error = sh("true", &[])
            .start([&write, &write, &stderr], Apart::Group, None)
            .unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    }

    #[test]
    fn the_walls_hold_in_the_child() {
        if crate::sandbox::support() != crate::sandbox::Support::Full {
            return;
        }
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret");
        std::fs::write(&secret, "no").unwrap();
        let domain = crate::sandbox::CliWall {
            workspace: std::env::temp_dir().join("codecrew-spawn-test-absent"),
            ..Default::default()
        }
        .domain()
        .unwrap();
        let (ruleset, filter) = domain.into_parts();
        let walls = Walls { ruleset, filter };
        let script = format!(
            "cat {} >/dev/null 2>&1 && echo read || echo refused; grep NoNewPrivs /proc/self/status",
            secret.display()
        );
        let (out, _) = run(&sh(&script, &[]), Apart::Session, Some(&walls));
        assert!(out.starts_with("refused\n"), "{out}");
        assert!(out.contains("NoNewPrivs:\t1"), "{out}");
        // The same without walls reads it: the refusal was the wall's.
        let (out, _) = run(&sh(&script, &[]), Apart::Session, None);
        assert!(out.starts_with("read\n"), "{out}");
    }
}
