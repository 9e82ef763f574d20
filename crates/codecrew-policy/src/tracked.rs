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
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use crate::home::HomeInWorkspace;
use crate::{git, paths, sandbox};

/// How long the listing may take before the repository counts as unchecked.
const TIME_LIMIT: Duration = Duration::from_secs(10);

/// What changes when the repository gains a commit, a ref or a staged file.
type Fingerprint = Vec<Option<(SystemTime, u64)>>;

/// The most object ids kept to check the names a command gives; a larger repository's
/// names are not checked, and a command naming an object by id asks there.
const MAX_OBJECTS: usize = 2_000_000;

/// What the listing of one repository found.
#[derive(Debug, Clone)]
struct Listing {
    /// Why a command that prints contents must ask (a sensitive path, or unchecked).
    sensitive: Option<String>,
    /// Every object the listing named, sorted; None when not all could be kept.
    objects: Option<Arc<Vec<String>>>,
}

static LISTINGS: Mutex<Vec<(PathBuf, Fingerprint, Listing)>> = Mutex::new(Vec::new());

/// The pseudo-refs that name commits outside `refs/` (what a reset or a merge left).
const PSEUDO_REFS: &[&str] = &[
    "ORIG_HEAD",
    "FETCH_HEAD",
    "MERGE_HEAD",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "REBASE_HEAD",
    "BISECT_HEAD",
    "AUTO_MERGE",
];

/// Why a reading git command in `dir` may print a sensitive file's contents: the path of
/// one such file the repository holds, or why it could not be checked. None when the
/// repository holds none (or there is no repository).
pub fn sensitive_in_history(dir: &Path) -> Option<String> {
    listing(dir)?.sensitive
}

/// The first of `names` (object ids, or their abbreviations, as a command gives them)
/// that names no object the listing reached: an object no branch, tag, reflog or the
/// index reaches (a file added, then reset away) holds a file whose name codecrew cannot
/// check. None when every name is reached, or there is no repository.
pub fn unreached_object<'a>(dir: &Path, names: &[&'a str]) -> Option<&'a str> {
    if names.is_empty() {
        return None;
    }
    let listing = listing(dir)?;
    let Some(objects) = listing.objects else {
        return names.first().copied();
    };
    names.iter().copied().find(|name| {
        let name = name.to_ascii_lowercase();
        let at = objects.partition_point(|id| id.as_str() < name.as_str());
        !objects.get(at).is_some_and(|id| id.starts_with(&name))
    })
}

fn listing(dir: &Path) -> Option<Listing> {
    let (git_dir, _) = git::find_git_dir(dir)?;
    let fingerprint = fingerprint(&git_dir);
    if let Ok(listings) = LISTINGS.lock()
        && let Some((_, _, listing)) = listings
            .iter()
            .find(|(known, print, _)| *known == git_dir && *print == fingerprint)
    {
        return Some(listing.clone());
    }
    let listing = list(dir, &git_dir);
    if let Ok(mut listings) = LISTINGS.lock() {
        listings.retain(|(known, _, _)| *known != git_dir);
        listings.push((git_dir, fingerprint, listing.clone()));
    }
    Some(listing)
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

/// The listing's environment: the scrubbed one commands get (git needs no secret), with
/// git's read-only configuration, in the C locale.
fn environment() -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    let mut env = crate::secrets::scrub_env(std::env::vars_os());
    git::read_only_environment(&mut env);
    env.push(("LC_ALL".into(), "C".into()));
    env
}

/// Runs the listing and reads it as it comes, stopping at the first sensitive path.
fn list(dir: &Path, git_dir: &Path) -> Listing {
    let unchecked = |why: &str| Listing {
        sensitive: Some(format!("its history could not be checked ({why})")),
        objects: None,
    };
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
        .args(
            PSEUDO_REFS
                .iter()
                .filter(|name| git_dir.join(name).is_file()),
        )
        .env_clear()
        .envs(environment())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let workspace_like = git::find_git_dir(dir).map_or_else(|| dir.to_path_buf(), |(_, tree)| tree);
    // The listing names paths from the repository's top, so that is the frame a home's
    // hidden entries are found in (a repository of the home itself: its `.ssh/config`).
    let home = HomeInWorkspace::of(&workspace_like);
    match sandbox::read_only_domain(&workspace_like, &sandbox::LinkedGit::default()) {
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
        let mut objects = Some(Vec::new());
        let mut found = None;
        for line in BufReader::new(stdout).split(b'\n').map_while(Result::ok) {
            let line = String::from_utf8_lossy(&line);
            let (id, path) = line.split_once(' ').unwrap_or((&line, ""));
            if paths::sensitive(Path::new(path), &home).is_some() {
                found = Some(path.to_owned());
                break;
            }
            if let Some(kept) = objects.as_mut() {
                if kept.len() < MAX_OBJECTS {
                    kept.push(id.to_owned());
                } else {
                    objects = None;
                }
            }
        }
        let _ = sender.send((found, objects));
    });
    match receiver.recv_timeout(TIME_LIMIT) {
        Ok((Some(path), _)) => {
            // Found early: the rest of the listing is not needed.
            let _ = child.kill();
            let _ = child.wait();
            Listing {
                sensitive: Some(format!("it holds {path}")),
                objects: None,
            }
        }
        // The whole listing was read: it is an answer only if git listed everything
        // (a repository it could not read, e.g. objects borrowed from outside the
        // workspace, is not a clean one).
        Ok((None, objects)) => match child.wait() {
            Ok(status) if status.success() => Listing {
                sensitive: None,
                objects: objects.map(|mut objects| {
                    objects.sort_unstable();
                    Arc::new(objects)
                }),
            },
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

    /// A repository with one harmless commit.
    fn repository() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        git(&root, &["init", "-q"]);
        std::fs::write(root.join("README"), "hello\n").unwrap();
        git(&root, &["add", "README"]);
        git(&root, &["commit", "-qm", "first"]);
        (dir, root)
    }

    #[test]
    fn a_sensitive_file_anywhere_in_history_is_found() {
        if sandbox::read_only_unavailable(true).is_some() {
            return;
        }
        let (_dir, root) = repository();
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
        let (_dir, root) = repository();
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
    fn objects_no_ref_reaches_are_told_apart() {
        if sandbox::read_only_unavailable(true).is_some() {
            return;
        }
        let (_dir, root) = repository();
        let id = |args: &[&str]| {
            let output = Command::new("git")
                .args(args)
                .current_dir(&root)
                .output()
                .unwrap();
            String::from_utf8(output.stdout).unwrap().trim().to_owned()
        };
        let head = id(&["rev-parse", "HEAD"]);
        // A file staged, then unstaged: its blob stays in the store, reached by nothing.
        std::fs::write(root.join("notes"), "a secret once staged\n").unwrap();
        git(&root, &["add", "notes"]);
        let blob = id(&["rev-parse", ":notes"]);
        git(&root, &["rm", "-q", "--cached", "notes"]);
        assert_eq!(unreached_object(&root, &[&head[..7]]), None);
        assert_eq!(unreached_object(&root, &[&head]), None);
        assert_eq!(unreached_object(&root, &[&blob[..8]]), Some(&blob[..8]));
        assert_eq!(unreached_object(&root, &[]), None);
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
