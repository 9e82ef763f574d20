//! No orphans: every process group a tool starts is registered, and whatever is left of
//! them is killed when codecrew exits (normally, on Ctrl-C or on SIGTERM/SIGHUP).
//!
//! codecrew also makes itself a *child subreaper*: a process that leaves its group (with
//! `setsid`) and is orphaned is re-parented to codecrew instead of init, so the exit sweep
//! finds it among codecrew's children.
//!
//! Beside it, what `/proc` says of any process (its parent, group, start time, owner: a
//! pid and its start time name one process), and the session of its own that a run in
//! the background starts in ([`own_session`]).

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

/// Makes orphaned descendants come back to this process (Linux); best effort. Called
/// after the watchdog started early is an orphan ([`crate::lifeline::start_early`]), so
/// that it is not adopted.
pub fn become_subreaper() {
    let _ = nix::sys::prctl::set_child_subreaper(true);
}

/// Kills every registered group and every remaining child of this process. Called when
/// codecrew exits.
pub fn kill_all() {
    if !SPAWNED.load(Ordering::Relaxed) {
        // A watchdog started early, for a run that never started a process.
        crate::lifeline::stop();
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

/// When `pid` started, in milliseconds since the Unix epoch: the boot time (`btime` of
/// `/proc/stat`, whole seconds) plus its start in clock ticks. Good to about a second,
/// which is enough to tell a process from a later one that took its pid. `None` when the
/// process is gone or `/proc` does not say.
pub fn started_ms(pid: i32) -> Option<i64> {
    let ticks = i64::try_from(stat(pid)?.start).ok()?;
    let per_second = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .filter(|hz| *hz > 0)?;
    let boot = boot_time()?;
    // `c_long`: i64 here, i32 on 32-bit targets.
    Some(boot.saturating_mul(1000) + ticks.saturating_mul(1000) / per_second as i64)
}

/// `btime` of `/proc/stat`: when the machine booted, in seconds since the Unix epoch.
fn boot_time() -> Option<i64> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix("btime "))
        .and_then(|seconds| seconds.trim().parse().ok())
}

/// The real user id `pid` runs as (`Uid:` of `/proc/<pid>/status`); `None` when it is
/// gone. Read from `status`, which anyone may read, since the owner of `/proc/<pid>`
/// itself is root for a process that made itself non-dumpable, as codecrew does.
pub fn owner(pid: i32) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().next())
        .and_then(|real| real.parse().ok())
}

/// Makes the child of `command` start a session of its own, as a program run in the
/// background is (`query --detach`): it has no controlling terminal, so nothing it runs
/// can open `/dev/tty` to ask a question, and the terminal's Ctrl-C and hang-up do not
/// reach it.
#[allow(unsafe_code)]
pub fn own_session(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child before exec and makes one system call
    // (setsid), which is async-signal-safe; it allocates nothing and takes no lock, and
    // its error is a plain errno value.
    unsafe {
        command.pre_exec(|| {
            nix::unistd::setsid()
                .map(drop)
                .map_err(|errno| std::io::Error::from_raw_os_error(errno as i32))
        });
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> i32 {
        i32::try_from(std::process::id()).unwrap()
    }

    fn now_ms() -> i64 {
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        i64::try_from(since.as_millis()).unwrap()
    }

    #[test]
    fn this_process_started_before_now_and_is_the_users() {
        let started = started_ms(me()).unwrap();
        let now = now_ms();
        // The boot time is whole seconds: a start read up to a second early.
        assert!(started <= now + 1000, "started {started}, now {now}");
        // A test process is not older than a day.
        assert!(now - started < 86_400_000, "started {started}, now {now}");
        assert_eq!(owner(me()), Some(nix::unistd::getuid().as_raw()));
    }

    #[test]
    fn a_child_just_started_started_now_and_after_its_parent() {
        let parent = started_ms(me()).unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        let started = started_ms(pid).unwrap();
        let now = now_ms();
        child.kill().unwrap();
        child.wait().unwrap();
        // Milliseconds since the epoch, not ticks or seconds: within the second the boot
        // time loses.
        assert!((now - started).abs() < 2000, "child {started}, now {now}");
        assert!(started >= parent, "child {started}, parent {parent}");
        // pid_max is at most 2^22: this pid is never anyone's.
        assert_eq!(started_ms(i32::MAX), None);
        assert_eq!(owner(i32::MAX), None);
    }

    #[test]
    fn a_command_in_its_own_session_leads_it() {
        let mut command = std::process::Command::new("sleep");
        command.arg("5");
        own_session(&mut command);
        let mut child = command.spawn().unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        let session = nix::unistd::getsid(Some(Pid::from_raw(pid))).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(session.as_raw(), pid);
        assert_ne!(nix::unistd::getsid(None).unwrap().as_raw(), pid);
    }
}
