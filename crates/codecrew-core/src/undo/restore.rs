//! Putting files back: from what a run changed (its before and after trees) and what
//! the workspace holds now, what to refuse and what to write, then the writes.
//!
//! The workspace is not codecrew's: an agent may have left a link where a folder was, or
//! anything else. So every write goes through [`Beneath`]: the file's folder opened by
//! the kernel beneath the workspace root with no link on the way (a folder that is now a
//! link fails that file, named), the file itself replaced by a rename, never written
//! through. A path from the store is checked again before use: relative, no `..`, no
//! `.git`, not codecrew's own state folder.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use codecrew_tools::beneath::Beneath;
use serde::Serialize;

use super::UndoError;
use super::git::{Blobs, Change, Entry, PrivateGit};

/// What was done to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Put back as it was before the run.
    Restored,
    /// Deleted: the run created it.
    Removed,
    /// Made again: the run deleted it.
    Recreated,
}

/// One file put back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileUndone {
    pub path: String,
    pub action: Action,
}

/// One file that could not be put back, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileFailed {
    pub path: String,
    pub error: String,
}

/// One file to put back: as it was before (None: absent), as it is now.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    pub path: PathBuf,
    pub before: Option<Entry>,
    pub now: Option<Entry>,
}

/// The files the run changed, each with what the workspace holds now, and those of
/// them changed since the run ended (`after` as the run left them, None when its end
/// was never recorded: then every file that differs from before counts as changed).
pub(crate) struct Plan {
    pub steps: Vec<Step>,
    pub changed_since: Vec<PathBuf>,
}

/// The plan for putting the workspace back to `before`.
pub(crate) fn plan(
    git: &PrivateGit,
    before: &str,
    after: Option<&str>,
    current: &str,
) -> Result<Plan, UndoError> {
    let Some(after) = after else {
        // No end recorded: what differs from before now is all there is to go by.
        let steps: Vec<Step> = git
            .changes(before, current)?
            .into_iter()
            .map(|change| Step {
                path: change.path,
                before: change.old,
                now: change.new,
            })
            .collect();
        let changed_since = steps.iter().map(|step| step.path.clone()).collect();
        return Ok(Plan {
            steps,
            changed_since,
        });
    };
    let since: HashMap<PathBuf, Change> = git
        .changes(after, current)?
        .into_iter()
        .map(|change| (change.path.clone(), change))
        .collect();
    let mut steps = Vec::new();
    let mut changed_since = Vec::new();
    for change in git.changes(before, after)? {
        let now = match since.get(&change.path) {
            Some(later) => later.new.clone(),
            None => change.new.clone(),
        };
        if now != change.new && now != change.old {
            // Neither as the run left it nor already as it was: someone else's change.
            changed_since.push(change.path.clone());
        }
        steps.push(Step {
            path: change.path,
            before: change.old,
            now,
        });
    }
    Ok(Plan {
        steps,
        changed_since,
    })
}

/// Puts each step's file back as it was before: files the run created removed first
/// (with the folders they leave empty that held nothing before), then the others
/// written. What cannot be done is named, and the rest goes on.
pub(crate) fn apply(
    git: &PrivateGit,
    workspace: &Path,
    excluded: &[PathBuf],
    steps: &[Step],
) -> Result<(Vec<FileUndone>, Vec<FileFailed>), UndoError> {
    let root = Beneath::open(workspace).map_err(|error| UndoError::Io {
        path: workspace.to_owned(),
        source: std::io::Error::other(error.to_string()),
    })?;
    let mut done = Vec::new();
    let mut failed = Vec::new();
    let mut fail = |path: &Path, error: String| {
        failed.push(FileFailed {
            path: shown(path),
            error,
        });
    };
    let pending: Vec<&Step> = steps
        .iter()
        .filter(|step| step.now != step.before)
        .collect();
    let (removals, writes): (Vec<&Step>, Vec<&Step>) =
        pending.into_iter().partition(|step| step.before.is_none());
    let mut emptied = Vec::new();
    for step in removals {
        if let Err(why) = safe_path(&step.path, excluded) {
            fail(&step.path, why);
            continue;
        }
        match root.remove_file(&workspace.join(&step.path)) {
            Ok(_) => {
                done.push(FileUndone {
                    path: shown(&step.path),
                    action: Action::Removed,
                });
                emptied.extend(step.path.parent().map(Path::to_owned));
            }
            Err(error) => fail(&step.path, error.to_string()),
        }
    }
    remove_emptied(&root, workspace, emptied, steps);
    let mut blobs = match writes.is_empty() {
        true => None,
        false => Some(git.blobs()?),
    };
    for step in writes {
        let Some(before) = &step.before else {
            continue;
        };
        if let Err(why) = safe_path(&step.path, excluded) {
            fail(&step.path, why);
            continue;
        }
        let Some(blobs) = blobs.as_mut() else {
            continue;
        };
        match put(blobs, &root, &workspace.join(&step.path), before) {
            Ok(()) => done.push(FileUndone {
                path: shown(&step.path),
                action: if step.now.is_some() {
                    Action::Restored
                } else {
                    Action::Recreated
                },
            }),
            Err(error) => fail(&step.path, error),
        }
    }
    // Once for every file written (the renames made each whole): one flush of the file
    // system costs less than one per file.
    if let Ok(root) = std::fs::File::open(workspace) {
        let _ = nix::unistd::syncfs(&root);
    }
    Ok((done, failed))
}

/// Writes the entry `before` at `target`.
fn put(blobs: &mut Blobs, root: &Beneath, target: &Path, before: &Entry) -> Result<(), String> {
    let bytes = blobs.read(&before.id).map_err(|error| error.to_string())?;
    let written = match before.mode {
        0o100644 => root.put_file(target, &bytes, 0o644),
        0o100755 => root.put_file(target, &bytes, 0o755),
        0o120000 => root.put_symlink(target, OsStr::from_bytes(&bytes)),
        0o160000 => return Err("a nested git repository: codecrew does not put those back".into()),
        other => {
            return Err(format!(
                "an entry of mode {other:o}, which codecrew does not write"
            ));
        }
    };
    written.map_err(|error| error.to_string())
}

/// Removes the folders the run's removed files leave empty, deepest first, as long as
/// the folder held nothing before the run (git keeps no empty folder, so one that was
/// empty before the run cannot be told apart and goes too).
fn remove_emptied(root: &Beneath, workspace: &Path, emptied: Vec<PathBuf>, steps: &[Step]) {
    let held_before = |dir: &Path| {
        steps
            .iter()
            .any(|step| step.before.is_some() && step.path.starts_with(dir))
    };
    let mut dirs: Vec<PathBuf> = emptied
        .into_iter()
        .flat_map(|dir| dir.ancestors().map(Path::to_owned).collect::<Vec<_>>())
        .filter(|dir| !dir.as_os_str().is_empty())
        .collect();
    dirs.sort_by_key(|dir| std::cmp::Reverse(dir.components().count()));
    dirs.dedup();
    for dir in dirs {
        if !held_before(&dir) {
            let _ = root.remove_empty_dir(&workspace.join(&dir));
        }
    }
}

/// Whether a path from the store may be written: relative, plain names only (no `..`,
/// no root), no `.git` on the way, not in codecrew's own state folder.
fn safe_path(path: &Path, excluded: &[PathBuf]) -> Result<(), String> {
    if path.as_os_str().is_empty() || path.is_absolute() {
        return Err("not a path inside the workspace".into());
    }
    for component in path.components() {
        match component {
            Component::Normal(name) if !name.eq_ignore_ascii_case(".git") => {}
            _ => return Err("not a path inside the workspace".into()),
        }
    }
    if excluded.iter().any(|dir| path.starts_with(dir)) {
        return Err("in codecrew's own state folder".into());
    }
    Ok(())
}

/// A path as the user sees it.
pub(crate) fn shown(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_paths_outside_git_and_the_state_folder_are_written() {
        let state = vec![PathBuf::from("state")];
        assert!(safe_path(Path::new("src/a.rs"), &state).is_ok());
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "./a",
            ".git/hooks/pre-commit",
            "a/.GIT/x",
            "state/runs.db",
        ] {
            assert!(safe_path(Path::new(bad), &state).is_err(), "{bad}");
        }
    }
}
