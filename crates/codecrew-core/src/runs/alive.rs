//! Whether the codecrew that records a run still runs.
//!
//! A run's row names its process by pid, and keeps `ended` NULL until it ends: a
//! codecrew killed with `kill -9`, or a machine that restarted, leaves it NULL forever.
//! The pid alone is not enough to tell: once the process is gone the pid may be given to
//! another, so the process must also have started by the time the run did (a later
//! process that took the pid started after the run) and be the user's.

/// How much later than the run's start its process may seem to have started: the boot
/// time `/proc` gives is whole seconds, so a start time read from it may be up to a second
/// early or (the clock stepped since) a little late.
const SLACK_MS: i64 = 1000;

/// Whether `pid` is a living process of this user's that started when the run's process
/// did (`pid_start`, as `/proc` gave it then), or, for a run recorded without it, by
/// `started_ms` (ms since the epoch, the run's start): the process that records the run.
/// A zombie (ended, not yet reaped) does not run.
pub fn process_runs(pid: i64, started_ms: i64, pid_start: Option<i64>) -> bool {
    use codecrew_policy::process;
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    if pid <= 0 || process::stat(pid).is_none_or(|stat| stat.zombie) {
        return false;
    }
    let mine = process::owner(pid) == Some(nix::unistd::getuid().as_raw());
    let started = process::started_ms(pid);
    let same_process = match pid_start {
        // Both read alike from /proc: equal for the same process, whatever the clock did.
        Some(known) => started == Some(known),
        None => started.is_some_and(|start| start <= started_ms.saturating_add(SLACK_MS)),
    };
    mine && same_process
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_runs_a_run_it_started_not_one_before_it() {
        let me = i64::from(std::process::id());
        let now = crate::runs::now_ms();
        assert!(process_runs(me, now, None));
        // A run recorded a minute before this process started was another process's,
        // whose pid this one was given.
        let started = codecrew_policy::process::started_ms(i32::try_from(me).unwrap()).unwrap();
        assert!(!process_runs(me, started - 60_000, None));
        // With the process's start recorded: only the very process, however close.
        assert!(process_runs(me, now, Some(started)));
        assert!(!process_runs(me, now, Some(started - 10)));
    }

    #[test]
    fn a_pid_no_process_has_or_a_zombie_runs_nothing() {
        let now = crate::runs::now_ms();
        assert!(!process_runs(i64::from(i32::MAX), now, None));
        assert!(!process_runs(0, now, None));
        assert!(!process_runs(-1, now, None));
        assert!(!process_runs(i64::MAX, now, None));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        // Ended, not reaped yet: a zombie.
        let zombie = || codecrew_policy::process::stat(pid).is_some_and(|stat| stat.zombie);
        let start = std::time::Instant::now();
        while !zombie() {
            assert!(start.elapsed().as_secs() < 10, "`true` never ended");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!process_runs(i64::from(pid), now + 60_000, None));
        child.wait().unwrap();
    }
}
