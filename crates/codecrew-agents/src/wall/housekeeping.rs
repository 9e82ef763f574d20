//! What codecrew tidies up beside a run, in a thread of its own started with the first
//! wall a codecrew builds and joined before it exits ([`finish`]), so that it is not cut
//! short:
//!
//! - **The temporary directories of CLIs whose codecrew was killed.** Each CLI gets a
//!   temporary directory of its own (its `TMPDIR`), removed when its command ends. A
//!   `kill -9` (or the OOM killer, or a second Ctrl-C) gives codecrew no chance to: the
//!   watchdog kills the CLI, but its directory, with whatever the CLI left there, stays.
//!   So the directory's name carries the pid of the codecrew that made it
//!   ([`temp_prefix`]), and those whose codecrew is gone are removed.
//! - **Node compile caches no run has used for a month** ([`super::compile_cache`]),
//!   looked over once a day.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{Mutex, Once};
use std::thread::JoinHandle;

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

const PREFIX: &str = "codecrew-cli-";

static RUNNING: Mutex<Option<JoinHandle<()>>> = Mutex::new(None);

/// The prefix of this codecrew's CLI directories: `codecrew-cli-<pid>-`.
pub fn temp_prefix() -> String {
    format!("{PREFIX}{}-", std::process::id())
}

/// Starts the housekeeping thread, once per codecrew.
pub fn start() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        let started = std::thread::Builder::new()
            .name("codecrew-housekeeping".into())
            .spawn(|| {
                sweep_abandoned_temps(&std::env::temp_dir());
                super::compile_cache::prune_unused();
            });
        if let (Ok(handle), Ok(mut slot)) = (started, RUNNING.lock()) {
            *slot = Some(handle);
        }
    });
}

/// Waits for the housekeeping, when it was started, so that the exit does not cut it
/// short.
pub fn finish() {
    let handle = RUNNING.lock().ok().and_then(|mut slot| slot.take());
    if let Some(handle) = handle {
        let _ = handle.join();
    }
}

/// Removes the CLI directories in `temp` left by a codecrew that is gone: named for a
/// pid that no longer runs, real directories (not links), owned by this user.
fn sweep_abandoned_temps(temp: &Path) {
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    let me = nix::unistd::getuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        if pid <= 0 || kill(Pid::from_raw(pid), None) != Err(Errno::ESRCH) {
            continue;
        }
        let path = entry.path();
        let ours =
            std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir() && meta.uid() == me);
        if ours {
            // `remove_dir_all` does not follow links inside the directory.
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_directories_of_a_gone_codecrew_are_removed() {
        let temp = tempfile::tempdir().unwrap();
        // No process has pid 2^22 + 1 (above the kernel's pid_max limit).
        let gone = temp.path().join(format!("{PREFIX}4194305-abc123"));
        let mine = temp.path().join(format!("{}abc123", temp_prefix()));
        let other = temp.path().join("codecrew-other-4194305");
        let link = temp.path().join(format!("{PREFIX}4194306-link"));
        for dir in [&gone, &mine, &other] {
            std::fs::create_dir_all(dir.join("inside")).unwrap();
        }
        std::os::unix::fs::symlink(&other, &link).unwrap();
        sweep_abandoned_temps(temp.path());
        assert!(!gone.exists(), "a gone codecrew's directory stays");
        assert!(
            mine.join("inside").exists(),
            "a running codecrew's is removed"
        );
        assert!(other.exists());
        // A link is left alone, and what it leads to is untouched.
        assert!(link.symlink_metadata().is_ok());
        assert!(other.join("inside").exists());
    }
}
