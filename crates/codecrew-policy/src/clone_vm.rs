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

/// A stack for a child of [`start`], mapped apart from codecrew's heap with a page below
/// it that no one may touch: a child that overflows it is killed by the fault rather
/// than writing over memory codecrew's other threads are using.
pub(crate) struct Stack {
    mapped: std::ptr::NonNull<nix::libc::c_void>,
    /// The whole mapping, the guard page included.
    length: usize,
    guard: usize,
}

impl Stack {
    /// `size` bytes of stack, above a guard page.
    #[allow(unsafe_code)]
    pub(crate) fn new(size: usize) -> std::io::Result<Stack> {
        use nix::libc;
        let guard = nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
            .ok()
            .flatten()
            .and_then(|page| usize::try_from(page).ok())
            .unwrap_or(4096);
        let length = size + guard;
        // SAFETY: a fresh private anonymous mapping, owned by the `Stack` until its drop.
        let mapped = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                length,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if mapped == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let stack = Stack {
            mapped: std::ptr::NonNull::new(mapped).ok_or_else(std::io::Error::last_os_error)?,
            length,
            guard,
        };
        // SAFETY: the lowest page of the mapping just made. A stack grows down, so an
        // overflow reaches it first.
        if unsafe { libc::mprotect(mapped, guard, libc::PROT_NONE) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(stack)
    }

    /// The usable part, above the guard page.
    #[allow(unsafe_code)]
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is `length` bytes, readable and writable above `guard`, and
        // borrowed mutably through `self` alone.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.mapped.as_ptr().cast::<u8>().add(self.guard),
                self.length - self.guard,
            )
        }
    }
}

impl Drop for Stack {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: the mapping `new` made, no longer borrowed.
        unsafe {
            nix::libc::munmap(self.mapped.as_ptr(), self.length);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stack_is_usable_to_its_ends_above_a_page_no_one_may_touch() {
        let mut stack = Stack::new(64 * 1024).unwrap();
        let slice = stack.as_mut_slice();
        assert_eq!(slice.len(), 64 * 1024);
        slice[0] = 1;
        slice[64 * 1024 - 1] = 1;
        let usable = slice.as_ptr().addr();
        // The page below is mapped with no access (`---p` in /proc/self/maps).
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let guard = maps.lines().find(|line| {
            let Some((range, _)) = line.split_once(' ') else {
                return false;
            };
            let Some((_, end)) = range.split_once('-') else {
                return false;
            };
            usize::from_str_radix(end, 16) == Ok(usable)
        });
        let guard = guard.unwrap_or_else(|| panic!("nothing mapped below {usable:x}:\n{maps}"));
        assert!(guard.contains(" ---p "), "{guard}");
    }
}
