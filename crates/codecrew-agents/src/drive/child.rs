//! A CLI's process as codecrew drives it: started without `fork`
//! ([`codecrew_policy::spawn`]), its exit awaited through a pidfd, its standard streams
//! tokio's pipes.
//!
//! Where the kernel has no pidfd (before Linux 5.3), or the program is not found here,
//! it is started as before, by tokio's `Command` (a `fork`, the walls made in the child),
//! behind the same type: [`CliChild`] is what [`super::process`] and [`super::resident`]
//! hold either way.

use std::ffi::OsString;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::OnceLock;

use codecrew_policy::spawn::{Apart, Launch, Walls};
use nix::libc;
use nix::unistd::Pid;
use tokio::io::unix::AsyncFd;
use tokio::net::unix::pipe;

/// A running CLI process: its pipes (each taken by whoever reads or writes it), and its
/// exit, awaited with [`CliChild::wait`]. Killed (SIGKILL) when dropped before it has
/// ended, and reaped.
pub(crate) struct CliChild {
    pub stdin: Option<pipe::Sender>,
    pub stdout: Option<pipe::Receiver>,
    pub stderr: Option<pipe::Receiver>,
    exit: Exit,
}

enum Exit {
    /// Started here: its pid, and its pidfd, readable once it has ended.
    Spawned {
        pid: Pid,
        pidfd: Option<AsyncFd<OwnedFd>>,
        status: Option<ExitStatus>,
    },
    /// Started by tokio (`kill_on_drop` set).
    Forked(tokio::process::Child),
}

/// What to start, as [`spawn`] takes it.
pub(crate) struct Start<'a> {
    /// Its `argv[0]`: the program as the command names it.
    pub arg0: &'a std::ffi::OsStr,
    pub args: &'a [OsString],
    /// Exactly the child's variables.
    pub env: Vec<(OsString, OsString)>,
    pub cwd: Option<&'a Path>,
    /// Stdin piped (else `/dev/null`).
    pub stdin: bool,
    pub apart: Apart,
    pub walls: Option<Walls>,
}

/// The program to give [`spawn`], or None when this kernel or this program needs the
/// forked start ([`forked`]): no pidfd, or a program not found on the PATH of `env`, the
/// child's variables, from `cwd`, its folder (tokio's start then says why).
pub(crate) fn spawnable(
    program: &Path,
    env: &[(OsString, OsString)],
    cwd: Option<&Path>,
) -> Option<PathBuf> {
    if !has_pidfd() {
        return None;
    }
    let cwd = match cwd {
        Some(cwd) => cwd.to_path_buf(),
        None => std::env::current_dir().ok()?,
    };
    located(program, env, &cwd)
}

/// Starts `program` (as [`spawnable`] gave it) without `fork`.
pub(crate) fn spawn(program: &Path, start: Start) -> io::Result<CliChild> {
    let launch = Launch::new(program, start.arg0, start.args, start.env, start.cwd)?;
    let pipe = || nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(io::Error::from);
    let (stdin_read, stdin_write) = if start.stdin {
        let (read, write) = pipe()?;
        (read, Some(write))
    } else {
        (std::fs::File::open("/dev/null")?.into(), None)
    };
    let (stdout_read, stdout_write) = pipe()?;
    let (stderr_read, stderr_write) = pipe()?;
    let pid = launch.start(
        [&stdin_read, &stdout_write, &stderr_write],
        start.apart,
        start.walls.as_ref(),
    )?;
    // The child's ends are its own now: codecrew's copies go, so that its reads see the
    // end of the child's output.
    drop((stdin_read, stdout_write, stderr_write));
    // Held from here on: whatever fails below, its drop kills the child and reaps it.
    let mut child = CliChild {
        stdin: None,
        stdout: None,
        stderr: None,
        exit: Exit::Spawned {
            pid,
            pidfd: None,
            status: None,
        },
    };
    let pidfd = watched(pidfd_open(pid)?)?;
    if let Exit::Spawned { pidfd: slot, .. } = &mut child.exit {
        *slot = Some(pidfd);
    }
    child.stdin = stdin_write.map(pipe::Sender::from_owned_fd).transpose()?;
    child.stdout = Some(pipe::Receiver::from_owned_fd(stdout_read)?);
    child.stderr = Some(pipe::Receiver::from_owned_fd(stderr_read)?);
    Ok(child)
}

/// `pidfd` registered with the runtime, to be awaited readable.
#[allow(unsafe_code)]
fn watched(pidfd: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: an `OwnedFd` is open, and stays the same descriptor until it is dropped
    // with the `AsyncFd`.
    unsafe { AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE) }
        .map_err(|error| error.into_parts().1)
}

/// A child tokio started (its pipes made tokio's pipes), for the kernels and programs
/// [`spawnable`] leaves to it.
pub(crate) fn forked(mut child: tokio::process::Child) -> io::Result<CliChild> {
    let stdin = child.stdin.take().map(|stdin| stdin.into_owned_fd());
    let stdout = child.stdout.take().map(|stdout| stdout.into_owned_fd());
    let stderr = child.stderr.take().map(|stderr| stderr.into_owned_fd());
    Ok(CliChild {
        stdin: stdin
            .transpose()?
            .map(pipe::Sender::from_owned_fd)
            .transpose()?,
        stdout: stdout
            .transpose()?
            .map(pipe::Receiver::from_owned_fd)
            .transpose()?,
        stderr: stderr
            .transpose()?
            .map(pipe::Receiver::from_owned_fd)
            .transpose()?,
        exit: Exit::Forked(child),
    })
}

impl CliChild {
    /// Its pid, while it has not been reaped.
    pub fn id(&self) -> Option<u32> {
        match &self.exit {
            Exit::Spawned {
                pid, status: None, ..
            } => u32::try_from(pid.as_raw()).ok(),
            Exit::Spawned { .. } => None,
            Exit::Forked(child) => child.id(),
        }
    }

    /// Waits for it to end, and reaps it. Cancel-safe: dropped half-way, it waits on
    /// the next call.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        match &mut self.exit {
            Exit::Forked(child) => child.wait().await,
            Exit::Spawned {
                status: Some(status),
                ..
            } => Ok(*status),
            Exit::Spawned {
                pid,
                pidfd: Some(pidfd),
                status,
            } => loop {
                let mut ready = pidfd.readable().await?;
                match reap(*pid)? {
                    Some(ended) => {
                        *status = Some(ended);
                        return Ok(ended);
                    }
                    None => ready.clear_ready(),
                }
            },
            Exit::Spawned { pidfd: None, .. } => Err(io::Error::other("no pidfd")),
        }
    }
}

impl Drop for CliChild {
    fn drop(&mut self) {
        let Exit::Spawned {
            pid,
            pidfd,
            status: None,
        } = &mut self.exit
        else {
            return;
        };
        let (pid, pidfd) = (*pid, pidfd.take());
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        if matches!(reap(pid), Ok(Some(_))) {
            return;
        }
        // SIGKILL takes a moment: reaped once it has ended, by the runtime when there is
        // one, else by a thread of its own, so that no zombie is left behind.
        match (tokio::runtime::Handle::try_current(), pidfd) {
            (Ok(runtime), Some(pidfd)) => {
                runtime.spawn(async move {
                    let _ = pidfd.readable().await;
                    let _ = reap(pid);
                });
            }
            _ => {
                let _ = std::thread::Builder::new()
                    .name("codecrew-reap".into())
                    .spawn(move || nix::sys::wait::waitpid(pid, None));
            }
        }
    }
}

/// Its wait status when `pid` has ended (reaped), None while it runs.
fn reap(pid: Pid) -> io::Result<Option<ExitStatus>> {
    let mut raw = 0;
    loop {
        // SAFETY: a plain system call writing into `raw`.
        #[allow(unsafe_code)]
        let reaped = unsafe { libc::waitpid(pid.as_raw(), &mut raw, libc::WNOHANG) };
        match reaped {
            0 => return Ok(None),
            -1 => {
                let error = io::Error::last_os_error();
                if error.kind() != io::ErrorKind::Interrupted {
                    return Err(error);
                }
            }
            _ => return Ok(Some(ExitStatus::from_raw(raw))),
        }
    }
}

/// A descriptor that becomes readable when `pid` (a child not yet reaped, so the pid is
/// still its) ends.
fn pidfd_open(pid: Pid) -> io::Result<OwnedFd> {
    // SAFETY: a plain system call; the descriptor it returns is owned here alone.
    #[allow(unsafe_code)]
    unsafe {
        let fd = libc::syscall(libc::SYS_pidfd_open, pid.as_raw(), 0);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let fd = i32::try_from(fd).map_err(|_| io::Error::other("a pidfd out of range"))?;
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

/// Whether this kernel gives pidfds (Linux 5.3), asked once.
fn has_pidfd() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| pidfd_open(nix::unistd::getpid()).is_ok())
}

/// `program` as the child would find it: a path as it is, a bare name on the PATH of
/// the child's variables, a relative entry of it taken from `cwd`, the child's folder
/// (`which`, as `execvp` searches).
fn located(program: &Path, env: &[(OsString, OsString)], cwd: &Path) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    if program.as_os_str().as_bytes().contains(&b'/') {
        return Some(program.to_path_buf());
    }
    let path = env.iter().find(|(name, _)| name == "PATH")?;
    which::which_in(program, Some(&path.1), cwd).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn start(program: &Path, args: &[OsString], stdin: bool) -> io::Result<CliChild> {
        let env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
        let program = spawnable(program, &env, None).expect("this kernel has pidfds");
        spawn(
            &program,
            Start {
                arg0: program.as_os_str(),
                args,
                env,
                cwd: None,
                stdin,
                apart: Apart::Group,
                walls: None,
            },
        )
    }

    #[tokio::test]
    async fn a_child_found_on_path_is_fed_read_and_reaped() {
        let args = ["-c".into(), "cat; echo err >&2; exit 4".into()];
        let mut child = start(Path::new("sh"), &args, true).unwrap();
        assert!(matches!(child.exit, Exit::Spawned { .. }));
        let pid = child.id().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"hello").await.unwrap();
        drop(stdin);
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .await
            .unwrap();
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .await
            .unwrap();
        let status = child.wait().await.unwrap();
        assert_eq!((out.as_str(), err.as_str()), ("hello", "err\n"));
        assert_eq!(status.code(), Some(4));
        // Reaped: no pid any more, and waiting again says the same.
        assert_eq!(child.id(), None);
        assert_eq!(child.wait().await.unwrap().code(), Some(4));
        let gone = nix::sys::wait::waitpid(
            Pid::from_raw(i32::try_from(pid).unwrap()),
            Some(nix::sys::wait::WaitPidFlag::WNOHANG),
        );
        assert_eq!(gone, Err(nix::errno::Errno::ECHILD));
    }

    #[tokio::test]
    async fn a_child_dropped_while_it_runs_is_killed_and_reaped() {
        let args = ["-c".into(), "sleep 60".into()];
        let child = start(Path::new("/bin/sh"), &args, false).unwrap();
        let pid = i32::try_from(child.id().unwrap()).unwrap();
        drop(child);
        for _ in 0..100 {
            if codecrew_policy::process::stat(pid).is_none() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        panic!(
            "{pid} is still there: {:?}",
            codecrew_policy::process::stat(pid)
        );
    }

    #[test]
    fn a_program_is_found_as_execvp_finds_it() {
        let here = tempfile::tempdir().unwrap();
        let env = |path: &str| vec![(OsString::from("PATH"), OsString::from(path))];
        let found = |name: &str, path: &str| located(Path::new(name), &env(path), here.path());
        assert_eq!(
            found("sh", "/nonexistent:/bin"),
            Some(PathBuf::from("/bin/sh"))
        );
        assert_eq!(found("no-such-program-here", "/bin"), None);
        assert_eq!(
            located(Path::new("./relative/cli"), &[], here.path()),
            Some(PathBuf::from("./relative/cli"))
        );
        assert_eq!(located(Path::new("sh"), &[], here.path()), None, "no PATH");
        // A folder of the program's name is passed over.
        let folders = tempfile::tempdir().unwrap();
        std::fs::create_dir(folders.path().join("sh")).unwrap();
        assert_eq!(
            found("sh", &format!("{}:/bin", folders.path().display())),
            Some(PathBuf::from("/bin/sh"))
        );
        // A relative entry is looked up from the child's folder.
        let tool = here.path().join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let relative = found("tool", ".:/bin").unwrap();
        assert_eq!(
            relative.canonicalize().unwrap(),
            tool.canonicalize().unwrap()
        );
        assert_eq!(found("sh", ".:/bin"), Some(PathBuf::from("/bin/sh")));
    }
}
