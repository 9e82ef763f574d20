//! The worktrees codecrew keeps: found by their records, removed for good (and checked to
//! be gone: the folder, the branch, git's record of the worktree).

use std::path::{Path, PathBuf};

use super::git::GitError;
use super::record::{Record, RecordError};
use super::repository::Repository;

/// Why a worktree could not be removed, or a listing read.
#[derive(Debug, thiserror::Error)]
pub enum KeptError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the worktree of @{agent} in run {run} is still there after its removal: {what}")]
    Left {
        run: String,
        agent: String,
        what: String,
    },
}

/// One kept worktree, as `codecrew worktrees` lists it.
#[derive(Debug, Clone)]
pub struct Kept {
    pub record: Record,
    pub path: PathBuf,
}

/// Every worktree under `folder` (one repository's), oldest first. A record that cannot
/// be read is skipped (and logged): it names nothing codecrew acts on.
pub fn list(folder: &Path) -> Vec<Kept> {
    let mut kept = Vec::new();
    let Ok(runs) = std::fs::read_dir(folder) else {
        return kept;
    };
    for run in runs.flatten() {
        let Ok(files) = std::fs::read_dir(run.path()) else {
            continue;
        };
        for file in files.flatten() {
            let file = file.path();
            if file.extension().is_none_or(|ext| ext != "json") {
                continue;
            }
            match Record::read(&file) {
                Ok(record) => kept.push(Kept {
                    path: record.path(folder),
                    record,
                }),
                Err(error) => tracing::warn!("{error}"),
            }
        }
    }
    kept.sort_by(|a, b| {
        (a.record.created, &a.record.run, &a.record.agent).cmp(&(
            b.record.created,
            &b.record.run,
            &b.record.agent,
        ))
    });
    kept
}

/// The worktrees of the run whose id is `run` or starts with it.
pub fn of_run(folder: &Path, run: &str) -> Vec<Kept> {
    list(folder)
        .into_iter()
        .filter(|kept| kept.record.run.starts_with(run))
        .collect()
}

/// Removes `record`'s worktree: its folder, git's record of it, its branch and
/// codecrew's record; then checks that each is gone. The folder is removed by codecrew
/// (never by `git worktree remove`, which deletes where the worktree's own links say).
pub fn remove(repo: &Repository, folder: &Path, record: &Record) -> Result<(), KeptError> {
    let path = record.path(folder);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| KeptError::Io { path, source }
    };
    if path.symlink_metadata().is_ok() {
        std::fs::remove_dir_all(&path).map_err(io(&path))?;
    }
    let git_dir = repo.worktree_git_dir(record);
    if git_dir.symlink_metadata().is_ok() {
        std::fs::remove_dir_all(&git_dir).map_err(io(&git_dir))?;
    }
    let git = repo.git();
    git.run(["worktree", "prune"])?;
    let branch_ref = format!("refs/heads/{}", record.branch);
    if git.succeeds(["rev-parse", "--verify", "--quiet", &branch_ref])? {
        git.run(["branch", "--quiet", "-D", &record.branch])?;
    }
    let file = Record::file(folder, &record.run, &record.agent);
    if file.exists() {
        std::fs::remove_file(&file).map_err(io(&file))?;
    }
    // The run's folder goes with its last worktree.
    let _ = std::fs::remove_dir(folder.join(&record.run));
    let left = |what: String| KeptError::Left {
        run: record.run.clone(),
        agent: record.agent.clone(),
        what,
    };
    if path.symlink_metadata().is_ok() {
        return Err(left(format!("its folder {}", path.display())));
    }
    if git.succeeds(["rev-parse", "--verify", "--quiet", &branch_ref])? {
        return Err(left(format!("its branch {}", record.branch)));
    }
    let listed = git.run(["worktree", "list", "--porcelain"])?;
    let line = format!("worktree {}", path.display());
    if listed.lines().any(|listed| listed == line) {
        return Err(left("git's record of it (`git worktree list`)".into()));
    }
    Ok(())
}

/// A folder's size in bytes (links not followed), for the listing.
pub fn size(path: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                total += meta.len();
            }
        }
    }
    total
}
