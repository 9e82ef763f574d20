//! Running git in a test's repository.

use std::path::Path;
use std::process::{Command, Stdio};

/// `git <args>` in `dir`, quietly, with a committer set and the system config ignored;
/// fails the test when git fails.
#[track_caller]
pub fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&status.stderr)
    );
}

/// A repository in `dir` with `paths` committed.
#[track_caller]
pub fn repository_with(dir: &Path, paths: &[&str]) {
    git(dir, &["init", "-q"]);
    if paths.is_empty() {
        git(dir, &["commit", "-q", "--allow-empty", "-m", "first"]);
        return;
    }
    let mut add = vec!["add"];
    add.extend_from_slice(paths);
    git(dir, &add);
    git(dir, &["commit", "-qm", "first"]);
}
