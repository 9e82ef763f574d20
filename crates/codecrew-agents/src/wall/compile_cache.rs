//! Where Node keeps the compiled code of a CLI run in its wall (`NODE_COMPILE_CACHE`),
//! across runs.
//!
//! A Node CLI that caches its compiled code (Copilot, Qwen Code) does so in the
//! temporary folder, which is new for every run inside its wall, and would compile its
//! whole program again each time (about 300 ms for Copilot). Compiled code is code: what
//! a program inside one wall writes there runs only in a wall like its own — the same
//! CLI, mode and workspace — never in the CLI run outside codecrew, which keeps its own
//! cache.
//!
//! One folder per CLI, mode and workspace adds up with the workspaces a user has worked
//! in, so each run marks its folder used, and folders unused for [`UNUSED_FOR`] are
//! removed ([`prune_unused`], from codecrew's housekeeping thread).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use codecrew_tools::Mode;

/// How long a compile cache no run has used is kept.
pub const UNUSED_FOR: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// `~/.cache/codecrew/node-compile-cache`, where every CLI's folders are.
fn root() -> Option<PathBuf> {
    super::xdg("XDG_CACHE_HOME", ".cache", "codecrew").map(|dir| dir.join("node-compile-cache"))
}

/// The folder of the CLI `cli` run in `mode` in `workspace`, made when missing and
/// marked used now; None when it cannot be made.
pub fn for_run(cli: &str, mode: Mode, workspace: &Path) -> Option<PathBuf> {
    folder(&root()?, cli, mode, workspace)
}

/// [`for_run`]'s folder under `root`.
fn folder(root: &Path, cli: &str, mode: Mode, workspace: &Path) -> Option<PathBuf> {
    let dir = root
        .join(cli)
        .join(mode.name())
        .join(workspace_key(workspace));
    std::fs::create_dir_all(&dir).ok()?;
    // Node writes beneath it, which leaves its own time as it was.
    if let Ok(folder) = std::fs::File::open(&dir) {
        let _ = folder.set_modified(SystemTime::now());
    }
    Some(dir)
}

fn workspace_key(workspace: &Path) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(workspace.as_os_str().as_encoded_bytes());
    digest
        .iter()
        .take(8)
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// How often the folders are looked over: not at every CLI start.
const PRUNED_EVERY: Duration = Duration::from_secs(24 * 60 * 60);

/// Removes the folders no run has marked used for [`UNUSED_FOR`], at most once every
/// [`PRUNED_EVERY`] (the time of a stamp file beside them says when last).
pub fn prune_unused() {
    let Some(root) = root() else {
        return;
    };
    let stamp = root.join(".pruned");
    let now = SystemTime::now();
    let recent = std::fs::metadata(&stamp)
        .and_then(|meta| meta.modified())
        .is_ok_and(|last| now.duration_since(last).is_ok_and(|ago| ago < PRUNED_EVERY));
    if recent {
        return;
    }
    prune(&root, now, UNUSED_FOR);
    let _ = std::fs::write(&stamp, b"");
}

/// Removes the `<cli>/<mode>/<workspace>` folders under `root` last marked used before
/// `now - unused_for` (real folders only: a link is left alone).
fn prune(root: &Path, now: SystemTime, unused_for: Duration) {
    let Some(before) = now.checked_sub(unused_for) else {
        return;
    };
    for cli in subfolders(root) {
        for mode in subfolders(&cli) {
            for cache in subfolders(&mode) {
                let stale = std::fs::symlink_metadata(&cache)
                    .and_then(|meta| meta.modified())
                    .is_ok_and(|modified| modified < before);
                if stale {
                    // `remove_dir_all` does not follow links inside the folder.
                    let _ = std::fs::remove_dir_all(&cache);
                }
            }
        }
    }
}

/// The real folders (not links) directly in `dir`.
fn subfolders(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .map(|entry| entry.path())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_unused_for_long_are_removed_and_the_rest_kept() {
        let root = tempfile::tempdir().unwrap();
        let old = root.path().join("copilot/query/00aa");
        let recent = root.path().join("copilot/execute/11bb");
        let outside = tempfile::tempdir().unwrap();
        for dir in [&old, &recent] {
            std::fs::create_dir_all(dir.join("v24/compiled")).unwrap();
        }
        std::fs::create_dir_all(outside.path().join("kept")).unwrap();
        let linked = root.path().join("copilot/query/22cc");
        std::os::unix::fs::symlink(outside.path(), &linked).unwrap();
        let day = Duration::from_secs(24 * 60 * 60);
        let long_ago = SystemTime::now() - 40 * day;
        std::fs::File::open(&old)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
        prune(root.path(), SystemTime::now(), 30 * day);
        assert!(!old.exists(), "an unused cache stays");
        assert!(
            recent.join("v24/compiled").exists(),
            "a recent cache is gone"
        );
        assert!(linked.symlink_metadata().is_ok(), "a link was removed");
        assert!(outside.path().join("kept").exists(), "a link was followed");
    }

    #[test]
    fn a_run_marks_its_folder_used() {
        let root = tempfile::tempdir().unwrap();
        let workspace = Path::new("/some/workspace");
        let dir = folder(root.path(), "copilot", Mode::Query, workspace).unwrap();
        let long_ago = SystemTime::now() - Duration::from_secs(90 * 24 * 60 * 60);
        std::fs::File::open(&dir)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
        let again = folder(root.path(), "copilot", Mode::Query, workspace);
        assert_eq!(
            again,
            Some(dir.clone()),
            "one folder per CLI, mode and workspace"
        );
        let marked = std::fs::metadata(&dir).unwrap().modified().unwrap();
        assert!(marked > long_ago + Duration::from_secs(60 * 24 * 60 * 60));
        prune(root.path(), SystemTime::now(), UNUSED_FOR);
        assert!(dir.exists(), "a folder just used was removed");
    }
}
