//! No orphans: every process group a tool starts is registered, and whatever is left of
//! them is killed when codecrew exits (normally, on Ctrl-C or on SIGTERM/SIGHUP).
//!
//! codecrew also makes itself a *child subreaper*: a process that leaves its group (with
//! `setsid`) and is orphaned is re-parented to codecrew instead of init, so the exit sweep
//! finds it among codecrew's children.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// Whether this process ever started one; without one there are no orphans to sweep, and
/// the exit costs no scan of `/proc`.
static SPAWNED: AtomicBool = AtomicBool::new(false);

/// Records that a child process (an agent CLI) was started.
pub fn note_spawn() {
    SPAWNED.store(true, Ordering::Relaxed);
}

/// Remembers a process group codecrew started (a tool's, an MCP server's, an agent
/// CLI's): killed at exit, and by the watchdog if codecrew is killed
/// ([`crate::lifeline`]).
pub fn register(pgid: i32) {
    note_spawn();
    if let Ok(mut groups) = GROUPS.lock() {
        groups.insert(pgid);
    }
    crate::lifeline::watch(pgid);
}

/// Forgets a group once nothing of it is left (so a reused number is never killed).
pub fn release_if_empty(pgid: i32) {
    if killpg(Pid::from_raw(pgid), None).is_err()
        && let Ok(mut groups) = GROUPS.lock()
    {
        groups.remove(&pgid);
        crate::lifeline::forget(pgid);
    }
}

/// Makes orphaned descendants come back to this process (Linux); best effort.
pub fn become_subreaper() {
    let _ = nix::sys::prctl::set_child_subreaper(true);
}

/// Kills every registered group and every remaining child of this process. Called when
/// codecrew exits.
pub fn kill_all() {
    if !SPAWNED.load(Ordering::Relaxed) {
        return;
    }
    let groups: Vec<i32> = GROUPS
        .lock()
        .map(|groups| groups.iter().copied().collect())
        .unwrap_or_default();
    for pgid in groups {
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    }
    crate::lifeline::stop();
    // As a subreaper, codecrew is an ancestor of every process it ever started, so with
    // no child left there is nothing left at all, and no need to scan `/proc`.
    if no_children_left() {
        return;
    }
    // Children re-parented to us (we are a subreaper) and their groups; killing one may
    // re-parent its own children to us, so sweep a few times.
    let me = std::process::id();
    for _ in 0..5 {
        let children = children_of(me);
        if children.is_empty() {
            break;
        }
        for (pid, pgid) in children {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            if pgid > 1 && (pgid == pid || own_group() != Some(pgid)) {
                let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Reaps the children that have ended; true when none is left, living or dead. Called
/// once the runtime that waits for its own children has stopped.
fn no_children_left() -> bool {
    loop {
        match waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
            Err(Errno::ECHILD) => return true,
            Err(Errno::EINTR) => continue,
            Ok(WaitStatus::StillAlive) | Err(_) => return false,
            // One reaped; there may be more.
            Ok(_) => continue,
        }
    }
}

fn own_group() -> Option<i32> {
    Some(nix::unistd::getpgrp().as_raw())
}

/// Live (not zombie) children of `parent`: (pid, pgid).
fn children_of(parent: u32) -> Vec<(i32, i32)> {
    let parent = i32::try_from(parent).unwrap_or(-1);
    pids()
        .into_iter()
        .filter_map(|pid| {
            let stat = stat(pid)?;
            (!stat.zombie && stat.ppid == parent).then_some((pid, stat.pgrp))
        })
        .collect()
}

/// Every pid in `/proc`.
pub fn pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|entry| entry.file_name().to_string_lossy().parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// What `/proc/<pid>/stat` says of a process that matters here.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stat {
    /// Dead, waiting to be reaped (state `Z`).
    pub zombie: bool,
    pub ppid: i32,
    pub pgrp: i32,
    /// When it started, in clock ticks after the boot: with the pid, which process it
    /// is (a pid is reused, a pid and start time are not).
    pub start: u64,
}

/// Reads `/proc/<pid>/stat`; `None` when the process is gone or the line is odd.
pub fn stat(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses.
    let after = &text[text.rfind(')')? + 1..];
    let mut fields = after.split_whitespace();
    let state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    // Field 22, `starttime`: 17 after the process group.
    let start = fields.nth(16)?.parse().ok()?;
    Some(Stat {
        zombie: state == "Z",
        ppid,
        pgrp,
        start,
    })
}
