//! Nothing outlives a killed codecrew.
//!
//! The exit sweep ([`crate::process::kill_all`]) runs when codecrew exits, is interrupted
//! or is asked to stop; a `kill -9` or the OOM killer gives it no chance. Two things make
//! sure that whatever codecrew started dies with it all the same:
//!
//! - **The parent-death signal.** Every process codecrew starts (the agent CLIs, tool
//!   commands, MCP servers) gets `PR_SET_PDEATHSIG(SIGKILL)` before it executes its
//!   program ([`die_with_codecrew`]; an agent CLI makes the same call itself, started
//!   without fork: [`crate::spawn`]). The kernel sends it when the *thread* that started
//!   the child ends, not the process, so children are started only from threads that
//!   live as long as codecrew's runtime (its main and worker threads; never from a
//!   `spawn_blocking` thread, which ends when idle).
//! - **The watchdog**, for what those processes started in turn (a CLI's own shell
//!   commands, a tool's background jobs), which the signal does not reach. At the first
//!   registered process group codecrew forks a tiny process that holds the read end of a
//!   pipe and learns of every process group codecrew starts and ends. When codecrew dies,
//!   however it dies, the kernel closes the pipe; the watchdog then kills every group it
//!   still knows and exits. It runs in a session of its own with every signal blocked
//!   (Ctrl-C at the terminal does not reach it), and closes every other file codecrew
//!   had open, so it holds no pipe a caller waits on.

use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Mutex, OnceLock};

use nix::libc;
use nix::unistd::{ForkResult, Pid};

/// The most groups the watchdog keeps in mind; more at once are only swept normally.
const MAX_GROUPS: usize = 4096;

/// The parent side: the pipe's write end and the watchdog's pid.
struct Watchdog {
    pipe: Mutex<Option<std::fs::File>>,
    /// None when it is not codecrew's child (started detached): nothing to reap.
    pid: Option<Pid>,
}

static WATCHDOG: OnceLock<Option<Watchdog>> = OnceLock::new();

/// Makes the child of `command` die with SIGKILL when codecrew does (see the module
/// docs), and fail to start when codecrew is already gone.
#[allow(unsafe_code)]
pub fn die_with_codecrew(command: &mut tokio::process::Command) {
    let parent = std::process::id();
    // SAFETY: the closure runs in the forked child before exec and only makes two system
    // calls (prctl, getppid), which are async-signal-safe; it allocates nothing.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // codecrew died between the fork and the prctl: the signal will never come.
            if u32::try_from(libc::getppid()).ok() != Some(parent) {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// Starts the watchdog now, detached (not codecrew's child, so never waited for at the
/// exit), for a command that will start processes. Call it first thing in `main`, while
/// codecrew is one thread, not yet a subreaper, with an almost empty heap (the fork
/// copies little). Without this call the watchdog starts at the first process group,
/// as codecrew's child, reaped at the exit.
pub fn start_early() {
    WATCHDOG.get_or_init(|| start(true));
}

/// Tells the watchdog (started on first use) about a process group codecrew started.
pub fn watch(pgid: i32) {
    send(pgid);
}

/// Tells the watchdog a group has ended.
pub fn forget(pgid: i32) {
    send(-pgid);
}

fn send(record: i32) {
    let Some(watchdog) = WATCHDOG.get_or_init(|| start(false)) else {
        return;
    };
    if let Ok(mut pipe) = watchdog.pipe.lock()
        && let Some(file) = pipe.as_mut()
    {
        // Four bytes: one write below PIPE_BUF is atomic, so records never interleave.
        let _ = file.write_all(&record.to_ne_bytes());
    }
}

/// Ends the watchdog at a normal exit (after the sweep, which has killed the groups):
/// closes the pipe and reaps it, so the exit sweep finds no child of codecrew left.
pub fn stop() {
    let Some(Some(watchdog)) = WATCHDOG.get() else {
        return;
    };
    if let Ok(mut pipe) = watchdog.pipe.lock() {
        pipe.take();
    }
    if let Some(pid) = watchdog.pid {
        let _ = nix::sys::wait::waitpid(pid, None);
    }
}

/// Forks the watchdog; None (logged) when the pipe or the fork fails, leaving the
/// parent-death signal and the exit sweep.
///
/// `detached` (only while codecrew is one thread, before it is a subreaper): the
/// watchdog is forked by a first child, which then ends, so that it is not codecrew's
/// child but an orphan the init process (or the user's subreaper) adopts. codecrew then
/// never waits for it: at a normal exit it only closes the pipe, and the watchdog ends on
/// its own, after.
#[allow(unsafe_code)]
fn start(detached: bool) -> Option<Watchdog> {
    let (read, write) = match nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC) {
        Ok(pair) => pair,
        Err(error) => {
            tracing::warn!("no watchdog for killed runs: pipe: {error}");
            return None;
        }
    };
    if detached {
        return match orphan(read.as_raw_fd()) {
            Ok(()) => {
                drop(read);
                Some(Watchdog {
                    pipe: Mutex::new(Some(std::fs::File::from(write))),
                    pid: None,
                })
            }
            Err(error) => {
                tracing::warn!("no watchdog for killed runs: clone: {error}");
                None
            }
        };
    }
    // SAFETY: codecrew may have several threads here, so the child runs only
    // async-signal-safe system calls (`watch_over` says which) on memory it owns (a
    // stack array), and leaves with `_exit`, never returning into Rust code of the
    // parent.
    match unsafe { nix::unistd::fork() } {
        Ok(ForkResult::Child) => watch_over(read.as_raw_fd()),
        Ok(ForkResult::Parent { child }) => {
            drop(read);
            Some(Watchdog {
                pipe: Mutex::new(Some(std::fs::File::from(write))),
                pid: Some(child),
            })
        }
        Err(error) => {
            tracing::warn!("no watchdog for killed runs: fork: {error}");
            None
        }
    }
}

/// The first child's stack: it makes two system calls; the watchdog, forked from it, goes
/// on with a copy of it (`watch_over` keeps the groups in an array on it).
const FIRST_CHILD_STACK: usize = 64 * 1024;

/// Starts the watchdog as an orphan: a first child forks it and ends, and is reaped here.
///
/// The first child shares codecrew's memory and codecrew waits while it runs
/// (`CLONE_VM | CLONE_VFORK`, as `posix_spawn` does): it copies no page tables of its own
/// and has none to tear down when it ends, so it is over by the time `clone` returns.
/// A first child forked the usual way still had both to do when codecrew came to reap
/// it, 0.2 ms later (docs/PERFORMANCE.md, issue 52).
#[allow(unsafe_code)]
fn orphan(pipe: RawFd) -> std::io::Result<()> {
    let mut stack = vec![0u8; FIRST_CHILD_STACK];
    // SAFETY: the stack is ours and outlives the child: codecrew is suspended until the
    // child has ended (`CLONE_VFORK`), and only then is the stack dropped. The child
    // runs `first_child` on it, which makes raw system calls only and never returns into
    // codecrew's code.
    let child = unsafe {
        crate::clone_vm::start(
            &mut stack,
            first_child,
            libc::CLONE_VFORK | libc::SIGCHLD,
            std::ptr::without_provenance_mut(usize::try_from(pipe).unwrap_or(usize::MAX)),
        )
    };
    drop(stack);
    let child = child?;
    // Ended already (see above): reaped before codecrew becomes a subreaper, which would
    // otherwise adopt the watchdog when the first child ends.
    let _ = nix::sys::wait::waitpid(child, None);
    Ok(())
}

/// The first child of a detached start (see [`orphan`]): forks the watchdog and ends.
/// The fork is the raw system call (no `atfork` handler runs, as none may in a child
/// that shares its parent's memory).
#[allow(unsafe_code)]
extern "C" fn first_child(pipe: *mut libc::c_void) -> libc::c_int {
    let pipe = RawFd::try_from(pipe.addr()).unwrap_or(-1);
    // SAFETY: `clone` with only SIGCHLD and no new stack is `fork`, async-signal-safe as a
    // bare system call; the watchdog goes on with raw system calls only, on its own copy
    // of this stack, and this child ends with `_exit` (its own, not codecrew's: it is a
    // process of its own that shares codecrew's memory, not one of its threads).
    unsafe {
        let forked = libc::syscall(
            libc::SYS_clone,
            libc::c_long::from(libc::SIGCHLD),
            0,
            0,
            0,
            0,
        );
        if forked == 0 {
            watch_over(pipe)
        }
        libc::_exit(0)
    }
}

/// The watchdog's whole life, in the forked child: raw system calls only.
#[allow(unsafe_code)]
fn watch_over(pipe: RawFd) -> ! {
    // SAFETY: every call below is async-signal-safe (setsid, chdir, sigprocmask, prctl,
    // dup2, close_range, read, kill, _exit) and works on this function's own stack.
    unsafe {
        libc::setsid();
        // It may outlive codecrew by a moment: it holds no folder of the user's (a
        // workspace on a drive to unmount), as it holds no file.
        libc::chdir(c"/".as_ptr());
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigprocmask(libc::SIG_SETMASK, &all, std::ptr::null_mut());
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        // The pipe becomes stdin; every other descriptor of codecrew is closed.
        if libc::dup2(pipe, 0) < 0 {
            libc::_exit(1);
        }
        libc::close_range(1, libc::c_uint::MAX, 0);
        let mut groups = [0i32; MAX_GROUPS];
        let mut known = 0usize;
        let mut buffer = [0u8; 1024];
        loop {
            let read = libc::read(0, buffer.as_mut_ptr().cast(), buffer.len());
            if read < 0 {
                if *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                break;
            }
            if read == 0 {
                break;
            }
            let read = usize::try_from(read).unwrap_or(0);
            for record in buffer[..read].chunks_exact(4) {
                let value = i32::from_ne_bytes([record[0], record[1], record[2], record[3]]);
                if value > 0 && known < MAX_GROUPS {
                    groups[known] = value;
                    known += 1;
                } else if value < 0
                    && let Some(at) = groups[..known].iter().position(|g| *g == -value)
                {
                    known -= 1;
                    groups[at] = groups[known];
                }
            }
        }
        for pgid in &groups[..known] {
            libc::kill(-*pgid, libc::SIGKILL);
        }
        libc::_exit(0)
    }
}
