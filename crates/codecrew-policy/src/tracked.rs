//! Whether a repository holds a sensitive file anywhere git can print it from: a commit
//! of any branch or tag, the reflog (commits rewritten away), the index (staged, not yet
//! committed).
//!
//! `read_file .env` asks, but `git show HEAD:.env`, `git log -p` or `git grep KEY` print
//! the same bytes from the repository's objects, where no path check sees them. So a
//! reading git command that prints or searches file contents asks when this finds one
//! (`crate::shell`).
//!
//! The answer comes from `git rev-list --all --reflog --indexed-objects --objects`, which
//! names every reachable file once. It runs only after the repository's configuration
//! was found to name no program ([`crate::git::program_in_repository`]), in the
//! read-only sandbox, with a time limit; a repository it cannot check in time counts as
//! holding one. Answers are kept for the life of the process, per repository state.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

use crate::{git, paths, sandbox};

/// How long the listing may take before the repository counts as unchecked.
const TIME_LIMIT: Duration = Duration::from_secs(10);

/// What changes when the repository gains a commit, a ref or a staged file.
type Fingerprint = Vec<Option<(SystemTime, u64)>>;

static ANSWERS: Mutex<Vec<(PathBuf, Fingerprint, Option<String>)>> = Mutex::new(Vec::new());

/// Why a reading git command in `dir` may print a sensitive file's contents: the path of
/// one such file the repository holds, or why it could not be checked. None when the
/// repository holds none (or there is no repository).
pub fn sensitive_in_history(dir: &Path) -> Option<String> {
    let (git_dir, _) = git::find_git_dir(dir)?;
    let fingerprint = fingerprint(&git_dir);
    if let Ok(answers) = ANSWERS.lock()
        && let Some((_, _, answer)) = answers
            .iter()
            .find(|(known, print, _)| *known == git_dir && *print == fingerprint)
    {
        return answer.clone();
    }
    let answer = list(dir);
    if let Ok(mut answers) = ANSWERS.lock() {
        answers.retain(|(known, _, _)| *known != git_dir);
        answers.push((git_dir, fingerprint, answer.clone()));
    }
    answer
}

fn fingerprint(git_dir: &Path) -> Fingerprint {
    let common = git::common_dir(git_dir).unwrap_or_else(|| git_dir.to_path_buf());
    [
        git_dir.join("HEAD"),
        git_dir.join("index"),
        git_dir.join("logs/HEAD"),
        common.join("packed-refs"),
        common.join("refs/heads"),
        common.join("refs/tags"),
        common.join("refs/remotes"),
        common.join("refs/stash"),
        common.join("logs/refs/heads"),
    ]
    .iter()
    .map(|path| {
        std::fs::metadata(path)
            .ok()
            .and_then(|meta| Some((meta.modified().ok()?, meta.len())))
    })
    .collect()
}

/// Runs the listing and reads it as it comes, stopping at the first sensitive path.
fn list(dir: &Path) -> Option<String> {
    let unchecked = |why: &str| Some(format!("its history could not be checked ({why})"));
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(dir)
        .args([
            "--no-optional-locks",
            "rev-list",
            "--all",
            "--reflog",
            "--indexed-objects",
            "--objects",
        ])
        .envs(git::READ_ONLY_ENV.iter().copied())
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let workspace_like = git::find_git_dir(dir).map_or_else(|| dir.to_path_buf(), |(_, tree)| tree);
    match sandbox::read_only_domain(&workspace_like) {
        Ok(domain) => sandbox::confine_blocking(&mut command, domain),
        Err(error) => return unchecked(&format!("no sandbox: {error}")),
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => return unchecked(&format!("git did not start: {error}")),
    };
    let Some(stdout) = child.stdout.take() else {
        let _ = child.kill();
        let _ = child.wait();
        return unchecked("no output");
    };
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let found = BufReader::new(stdout)
            .split(b'\n')
            .map_while(Result::ok)
            .find_map(|line| {
                let line = String::from_utf8_lossy(&line);
                let (_, path) = line.split_once(' ')?;
                paths::sensitive(Path::new(path)).map(|_| path.to_owned())
            });
        let _ = sender.send(found);
    });
    match receiver.recv_timeout(TIME_LIMIT) {
        Ok(Some(path)) => {
            // Found early: the rest of the listing is not needed.
            let _ = child.kill();
            let _ = child.wait();
            Some(format!("it holds {path}"))
        }
        // The whole listing was read: it is an answer only if git listed everything
        // (a repository it could not read, e.g. objects borrowed from outside the
        // workspace, is not a clean one).
        Ok(None) => match child.wait() {
            Ok(status) if status.success() => None,
            Ok(status) => unchecked(&format!("git rev-list failed: {status}")),
            Err(error) => unchecked(&error.to_string()),
        },
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            unchecked(&format!("it took over {} s", TIME_LIMIT.as_secs()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn a_sensitive_file_anywhere_in_history_is_found() {
        if sandbox::read_only_unavailable(true).is_some() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        git(&root, &["init", "-q"]);
        std::fs::write(root.join("README"), "hello\n").unwrap();
        git(&root, &["add", "README"]);
        git(&root, &["commit", "-qm", "first"]);
        assert_eq!(sensitive_in_history(&root), None);
        // Committed, then removed: still in history.
        std::fs::create_dir(root.join("config")).unwrap();
        std::fs::write(root.join("config/.env"), "KEY=1\n").unwrap();
        git(&root, &["add", "config/.env"]);
        git(&root, &["commit", "-qm", "env"]);
        git(&root, &["rm", "-q", "config/.env"]);
        git(&root, &["commit", "-qm", "gone"]);
        let found = sensitive_in_history(&root).unwrap();
        assert!(found.contains("config/.env"), "{found}");
        // From a subdirectory too.
        std::fs::create_dir(root.join("sub")).unwrap();
        assert!(sensitive_in_history(&root.join("sub")).is_some());
    }

    #[test]
    fn a_repository_git_cannot_read_counts_as_holding_one() {
        if sandbox::read_only_unavailable(true).is_some() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        git(&root, &["init", "-q"]);
        std::fs::write(root.join("README"), "hello\n").unwrap();
        git(&root, &["add", "README"]);
        git(&root, &["commit", "-qm", "first"]);
        // A ref to an object that does not exist: rev-list fails.
        std::fs::write(
            root.join(".git/refs/heads/broken"),
            "0123456789012345678901234567890123456789\n",
        )
        .unwrap();
        let found = sensitive_in_history(&root).unwrap();
        assert!(found.contains("could not be checked"), "{found}");
    }

    #[test]
    fn a_staged_key_is_found_and_no_repository_is_none() {
        if sandbox::read_only_unavailable(true).is_some() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        assert_eq!(sensitive_in_history(&root), None);
        git(&root, &["init", "-q"]);
        std::fs::write(root.join("deploy.pem"), "-----BEGIN-----\n").unwrap();
        git(&root, &["add", "deploy.pem"]);
        let found = sensitive_in_history(&root).unwrap();
        assert!(found.contains("deploy.pem"), "{found}");
    }
}
