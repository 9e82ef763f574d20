//! A child process that shares codecrew's memory (`clone` with `CLONE_VM`), as
//! `posix_spawn` starts one: no page tables copied, none to tear down. The watchdog's
//! first child ([`crate::lifeline`]) and the exit's helper ([`crate::teardown`]) are
//! started here, the one place of this unsafe start.

use nix::unistd::Pid;

/// Starts `entry(arg)` as a process of its own that shares codecrew's memory
/// (`CLONE_VM`, and `flags`: `SIGCHLD`, `CLONE_VFORK`), running on `stack`, which grows
/// down from its end: its pid. What `posix_spawn` does to start a child without copying
/// codecrew's page tables.
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
    let end = stack.as_mut_ptr_range().end;
    // The ABI wants the stack pointer 16-byte aligned.
    let top = end.wrapping_sub(end.addr() % 16);
    // SAFETY: the caller keeps the stack and restricts `entry` as said above.
    let child = unsafe { nix::libc::clone(entry, top.cast(), nix::libc::CLONE_VM | flags, arg) };
    if child < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Pid::from_raw(child))
}
