//! The temporary directories of CLIs whose codecrew was killed.
//!
//! Each CLI gets a temporary directory of its own (its `TMPDIR`), removed when its
//! command ends. A `kill -9` (or the OOM killer) gives codecrew no chance to: the
//! watchdog kills the CLI, but its directory, with whatever the CLI left there, stays.
//! So the directory's name carries the pid of the codecrew that made it, and the next
//! codecrew to start a CLI removes those whose codecrew is gone, in a thread of its own
//! beside the run, joined before it exits ([`finish_sweep`]).

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{Mutex, Once};
use std::thread::JoinHandle;

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

const PREFIX: &str = "codecrew-cli-";

static SWEEP: Mutex<Option<JoinHandle<()>>> = Mutex::new(None);

/// The prefix of this codecrew's CLI directories: `codecrew-cli-<pid>-`.
pub fn prefix() -> String {
    format!("{PREFIX}{}-", std::process::id())
}

/// Starts the sweep of the temporary folder, once per codecrew.
pub fn sweep_in_background() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        let started = std::thread::Builder::new()
            .name("codecrew-temp-sweep".into())
            .spawn(|| sweep(&std::env::temp_dir()));
        if let (Ok(handle), Ok(mut slot)) = (started, SWEEP.lock()) {
            *slot = Some(handle);
        }
    });
}

/// Waits for the sweep, when one was started, so that it is not cut short by the exit.
pub fn finish_sweep() {
    let handle = SWEEP.lock().ok().and_then(|mut slot| slot.take());
    if let Some(handle) = handle {
        let _ = handle.join();
    }
}

/// Removes the CLI directories in `temp` left by a codecrew that is gone: named for a
/// pid that no longer runs, real directories (not links), owned by this user.
fn sweep(temp: &Path) {
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
        let mine = temp.path().join(format!("{}abc123", prefix()));
        let other = temp.path().join("codecrew-other-4194305");
        let link = temp.path().join(format!("{PREFIX}4194306-link"));
        for dir in [&gone, &mine, &other] {
            std::fs::create_dir_all(dir.join("inside")).unwrap();
        }
        std::os::unix::fs::symlink(&other, &link).unwrap();
        sweep(temp.path());
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
