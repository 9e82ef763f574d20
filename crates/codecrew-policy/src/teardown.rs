//! codecrew's exit, sooner: its memory freed after its caller has learnt that it ended.
//!
//! A process frees its memory before its parent hears of its exit: for a run of codecrew,
//! about 16 MB of its binary mapped and 2 MB of heap, which took 0.4 ms that a shell or
//! a script waits for after the answer is out (docs/PERFORMANCE.md, issue 52). So just
//! before it ends, codecrew starts a helper that shares its memory (`CLONE_VM`, as a
//! thread does, but a process of its own) and waits for codecrew to be gone: codecrew's
//! exit then only lets go of the memory, and the helper, ending after it, frees it. The
//! helper is an orphan by then, reaped by the init process (or the user's subreaper), as
//! the watchdog is ([`crate::lifeline`]).

use std::os::fd::{AsRawFd, IntoRawFd, RawFd};

use nix::libc;

/// The helper's stack: it makes a handful of system calls.
const HELPER_STACK: usize = 16 * 1024;

/// Starts the helper that frees codecrew's memory after codecrew has exited, and says
/// its pid. Call it last, when nothing is left to do but return from `main`: the helper
/// holds the memory as it is. Best effort: without it (None), the exit frees the memory
/// itself.
#[allow(unsafe_code)]
pub fn hand_off() -> Option<nix::unistd::Pid> {
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).ok()?;
    // Never freed: the helper runs on it until its own end, after codecrew's.
    let stack: &'static mut [u8] = Box::leak(vec![0u8; HELPER_STACK].into_boxed_slice());
    let ends = Box::leak(Box::new([read.as_raw_fd(), write.as_raw_fd()]));
    // SAFETY: the stack is leaked, so it stays as long as the memory does (the helper's
    // hold keeps it). The helper runs `wait_for_exit` on it, which makes raw system calls
    // only, on its own stack, and reads `ends`, which is leaked too; it never returns
    // into codecrew's code. It has its own table of open files (no `CLONE_FILES`), so
    // its copy of the write end is its own to close.
    let started = unsafe {
        crate::clone_vm::start(
            stack,
            wait_for_exit,
            libc::SIGCHLD,
            std::ptr::from_mut(ends).cast(),
        )
    };
    let helper = started.ok()?;
    // codecrew's write end stays open until its exit closes it, which is what the helper
    // waits for.
    let _ = write.into_raw_fd();
    Some(helper)
}

/// The helper: waits until codecrew's exit has closed the pipe's last write end, then
/// ends, freeing the memory it shared.
#[allow(unsafe_code)]
extern "C" fn wait_for_exit(ends: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `ends` is the leaked pair of descriptors `hand_off` passed. Every call is a
    // plain system call on this stack (chdir, close_range, read, exit_group): no
    // lock, no allocation, nothing of codecrew's state touched.
    unsafe {
        // Every signal is blocked already (`clone_vm::start`): neither Ctrl-C at the
        // terminal (the helper is in codecrew's process group) nor anything else runs a
        // handler of codecrew's here.
        let [read, _write]: [RawFd; 2] = *ends.cast::<[RawFd; 2]>();
        // It holds no folder of the user's (a workspace a test or a script looks for
        // what still runs in, a drive to unmount).
        libc::chdir(c"/".as_ptr());
        // Every other descriptor closed, the write end among them: a copy of codecrew's
        // stdout held here would keep its reader from the end of the answer.
        let read_end = libc::c_uint::try_from(read).unwrap_or(0);
        if read_end > 0 {
            libc::close_range(0, read_end - 1, 0);
        }
        libc::close_range(read_end + 1, libc::c_uint::MAX, 0);
        // Returns at the end of the pipe, when codecrew is gone. It cannot be interrupted
        // (every signal is blocked); should it fail, the helper ends now, and codecrew's
        // exit frees the memory itself as it would have without it. The bare system
        // calls, not libc's wrappers: the helper shares the thread-local storage of the
        // thread that started it, which a wrapper reads (its cancellation check, errno)
        // and which may be gone by the time the wait returns.
        let mut byte = 0u8;
        libc::syscall(
            libc::SYS_read,
            libc::c_long::from(read),
            std::ptr::from_mut(&mut byte),
            1usize,
        );
        libc::syscall(libc::SYS_exit_group, 0 as libc::c_long);
        libc::_exit(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The helper waits while its process lives, in `/`, holding no descriptor but its
    /// pipe's read end: no copy of a stdout whose reader waits for its end.
    #[test]
    fn the_helper_waits_holding_nothing_but_its_pipe() {
        let helper = hand_off().expect("the helper starts").as_raw();
        // It has closed the rest by the time it waits on the pipe.
        let mut fds = Vec::new();
        for _ in 0..200 {
            fds = std::fs::read_dir(format!("/proc/{helper}/fd"))
                .unwrap()
                .flatten()
                .map(|entry| entry.file_name())
                .collect();
            if fds.len() == 1 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(fds.len(), 1, "{fds:?}");
        let pipe = std::fs::read_link(format!("/proc/{helper}/fd/{}", fds[0].to_string_lossy()));
        assert!(
            pipe.unwrap().to_string_lossy().starts_with("pipe:"),
            "its one descriptor is the pipe"
        );
        assert_eq!(
            std::fs::read_link(format!("/proc/{helper}/cwd")).unwrap(),
            std::path::Path::new("/")
        );
        // Every signal blocked: Ctrl-C to codecrew's process group runs nothing in it.
        let status = std::fs::read_to_string(format!("/proc/{helper}/status")).unwrap();
        let blocked = status
            .lines()
            .find_map(|line| line.strip_prefix("SigBlk:"))
            .unwrap()
            .trim();
        let mask = u64::from_str_radix(blocked, 16).unwrap();
        for signal in [
            libc::SIGINT,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGQUIT,
            libc::SIGCHLD,
            libc::SIGPIPE,
        ] {
            assert_ne!(mask & (1 << (signal - 1)), 0, "{signal} in {blocked}");
        }
        let stat = std::fs::read_to_string(format!("/proc/{helper}/stat")).unwrap();
        let state = stat.rsplit_once(") ").unwrap().1.chars().next();
        assert_eq!(state, Some('S'), "it waits: {stat}");
    }
}
