//! A child process that shares codecrew's memory (`clone` with `CLONE_VM`), as
//! `posix_spawn` starts one: no page tables copied, none to tear down. The watchdog's
//! first child ([`crate::lifeline`]) and the exit's helper ([`crate::teardown`]) are
//! started here, the one place of this unsafe start.

use nix::unistd::Pid;

/// Starts `entry(arg)` as a process of its own that shares codecrew's memory
/// (`CLONE_VM`, and `flags`: `SIGCHLD`, `CLONE_VFORK`), running on `stack`, which grows
/// down from its end, with every signal blocked: its pid. What `posix_spawn` does to
/// start a child without copying codecrew's page tables.
///
/// # Safety
///
/// `stack` must stay allocated, and untouched by codecrew, for as long as the child runs
/// on it. `entry` must make raw system calls only, on its own stack, and end with
/// `_exit`, never returning into codecrew's code: it shares codecrew's heap, its locks
/// and its thread's thread-local storage, which codecrew's other threads go on using.
#[allow(unsafe_code)]
pub(crate) unsafe fn start(
    stack: &mut [u8],
    entry: extern "C" fn(*mut nix::libc::c_void) -> nix::libc::c_int,
    flags: nix::libc::c_int,
    arg: *mut nix::libc::c_void,
) -> std::io::Result<Pid> {
    use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};
    let end = stack.as_mut_ptr_range().end;
    // The ABI wants the stack pointer 16-byte aligned.
    let top = end.wrapping_sub(end.addr() % 16);
    // Every signal blocked across the start, as `posix_spawn` does: the child starts with
    // them blocked (its mask is a copy of this thread's), so that no handler of codecrew's
    // (the runtime's, on codecrew's memory) ever runs in it.
    let mut before = SigSet::empty();
    pthread_sigmask(
        SigmaskHow::SIG_SETMASK,
        Some(&SigSet::all()),
        Some(&mut before),
    )?;
    // SAFETY: the caller keeps the stack and restricts `entry` as said above.
    let child = unsafe { nix::libc::clone(entry, top.cast(), nix::libc::CLONE_VM | flags, arg) };
    let started = if child < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(Pid::from_raw(child))
    };
    let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&before), None);
    started
}
