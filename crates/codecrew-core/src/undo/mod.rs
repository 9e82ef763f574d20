//! `codecrew undo`: what a run of `execute` (or a `codecrew apply`) changed in its
//! workspace, put back as it was before.
//!
//! ```text
//! record_before(workspace, id, kind)  -> Recording: the workspace's tree before, in a
//!                                        private git store under the state folder
//! Recording::finish                   -> the tree after, in the same record
//! undo(workspace, run, force)         -> Outcome: each file the run changed, checked to
//!                                        be as the run left it (else refused, named),
//!                                        put back (written, recreated, removed)
//! ```
//!
//! Files are recorded whoever writes them (codecrew's tools, a CLI's own Write or shell),
//! since a snapshot is of the workspace, not of calls. What the workspace's `.gitignore`
//! files ignore is in no snapshot and is not put back, nor are folders of installed
//! dependencies (`node_modules`, `.venv`, `__pycache__`), nor what lies in a nested git
//! repository. Recording goes by git's plumbing (`git.rs`): its environment and the store's
//! attributes keep the workspace from making git run anything or convert a file.
//!
//! The store lives in `<state>/undo/<workspace key>/` (`record.rs`): a bare repository,
//! its index, one JSON record per run, a lock. Nothing of it is in the run store.

mod git;
mod record;
mod restore;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use record::RecordKind;
pub use restore::{Action, FileFailed, FileUndone};

use git::PrivateGit;
use record::{Folder, RunRecord};

/// Why a run cannot be recorded or undone.
#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    #[error("git is not installed: codecrew records runs for `codecrew undo` with git")]
    GitMissing,
    #[error("{0}")]
    Git(String),
    #[error("cannot use {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("an undo record cannot be used: {0}")]
    BadRecord(String),
    #[error(
        "no run {0} to undo in this workspace (a run is undone from the workspace it \
         changed: `codecrew logs` shows each run's workspace)"
    )]
    NoSuchRun(String),
    #[error("no run of execute has changed files in {} that can be undone", .0.display())]
    NothingToUndo(PathBuf),
    #[error("{0} is the start of several runs' ids ({runs}): give one of them", runs = .1.join(", "))]
    Ambiguous(String, Vec<String>),
    #[error("there is no state folder to record runs in: neither XDG_STATE_HOME nor HOME is set")]
    NoStateFolder,
    #[error(
        "run {0} is still going: wait for its end, or stop it (`codecrew kill {0}`), then undo it"
    )]
    Going(String),
    #[error("run {0} has already been undone")]
    AlreadyUndone(String),
}

/// A run being recorded: its tree before is kept; [`Recording::finish`] keeps the tree
/// after. Dropped without finishing (or codecrew killed), the record stays without an
/// end, and undoing it needs `--force`.
#[derive(Debug)]
pub struct Recording {
    folder: Folder,
    git: PrivateGit,
    record: RunRecord,
}

/// Records the workspace as it is before a run (`id`: the run's id in the run store, or
/// an id of its own for an apply: letters, digits, `-`, `_`). Blocking: a snapshot reads
/// the workspace (only what changed since the last one is read again).
pub fn record_before(workspace: &Path, id: &str, kind: RecordKind) -> Result<Recording, UndoError> {
    record_before_in(&state_folder()?, workspace, id, kind)
}

/// [`record_before`], with the state folder given (a test's, a benchmark's).
pub fn record_before_in(
    state: &Path,
    workspace: &Path,
    id: &str,
    kind: RecordKind,
) -> Result<Recording, UndoError> {
    record::checked_run(id)?;
    let folder = Folder::of(state, workspace);
    let _lock = folder.lock()?;
    let git = store(state, &folder);
    git.init()?;
    let pruned = folder.prune(record::KEPT_RECORDS);
    if !pruned.is_empty()
        && let Err(error) = git.prune(&pruned)
    {
        tracing::warn!("the undo store was not pruned: {error}");
    }
    let before = git.snapshot()?;
    git.keep(&format!("{id}/before"), &before)?;
    let record = record::new_record(workspace, id, kind, before);
    folder.write(&record)?;
    Ok(Recording {
        folder,
        git,
        record,
    })
}

impl Recording {
    /// The id the run is recorded under.
    pub fn id(&self) -> &str {
        &self.record.run
    }

    /// Records the workspace as the run leaves it. Blocking, as [`record_before`].
    pub fn finish(mut self) -> Result<(), UndoError> {
        let _lock = self.folder.lock()?;
        let after = self.git.snapshot()?;
        self.git
            .keep(&format!("{}/after", self.record.run), &after)?;
        self.record.after = Some(after);
        self.record.ended_ms = Some(crate::runs::now_ms());
        self.folder.write(&self.record)
    }
}

/// What `codecrew undo` did, or why it did nothing.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The run's id, as recorded.
    pub run: String,
    pub kind: RecordKind,
    pub started_ms: i64,
    /// Whether the run's end was recorded (false: its codecrew was killed).
    pub ended: bool,
    pub status: Status,
    /// With `refused`: the files that are not as the run left them (changed since by
    /// someone else), or, for a run whose end was never recorded, every file that
    /// differs from before it.
    pub changed_since: Vec<String>,
    /// The files put back.
    pub files: Vec<FileUndone>,
    /// The files that could not be put back, and why.
    pub failed: Vec<FileFailed>,
}

/// How an undo went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every file the run changed is as it was before it (some may have failed: see
    /// `failed`).
    Undone,
    /// Nothing was touched: files changed since the run (see `changed_since`).
    ChangedSince,
    /// Nothing was touched: the run's end was never recorded (its codecrew was killed).
    NotEnded,
}

/// Puts back what the run `run` (an id or an unambiguous start of one; None: the newest
/// run of this workspace not undone yet that changed something) changed in `workspace`.
/// Without `force`, refuses (touching nothing) when a file is not as the run left it, or
/// the run's end was never recorded. Blocking.
pub fn undo(workspace: &Path, run: Option<&str>, force: bool) -> Result<Outcome, UndoError> {
    undo_in(&state_folder()?, workspace, run, force)
}

/// [`undo`], with the state folder given (a test's, a benchmark's).
pub fn undo_in(
    state: &Path,
    workspace: &Path,
    run: Option<&str>,
    force: bool,
) -> Result<Outcome, UndoError> {
    let folder = Folder::of(state, workspace);
    if !folder.recorded() {
        // Nothing recorded here: nothing made either.
        return Err(match run {
            Some(run) => UndoError::NoSuchRun(run.to_owned()),
            None => UndoError::NothingToUndo(workspace.to_owned()),
        });
    }
    let _lock = folder.lock()?;
    let mut record = chosen(&folder, run)?;
    if record.undone_ms.is_some() {
        return Err(UndoError::AlreadyUndone(record.run));
    }
    if record.going() {
        return Err(UndoError::Going(record.run));
    }
    let git = store(state, &folder);
    git.init()?;
    let trees = std::iter::once(&record.before).chain(record.after.as_ref());
    for tree in trees {
        if !git.has_tree(tree)? {
            return Err(UndoError::BadRecord(format!(
                "run {}'s snapshot {tree} is not in the store",
                record.run
            )));
        }
    }
    let current = git.snapshot()?;
    let plan = restore::plan(&git, &record.before, record.after.as_deref(), &current)?;
    let mut outcome = Outcome {
        run: record.run.clone(),
        kind: record.kind,
        started_ms: record.started_ms,
        ended: record.after.is_some(),
        status: Status::Undone,
        changed_since: plan
            .changed_since
            .iter()
            .map(|p| restore::shown(p))
            .collect(),
        files: Vec::new(),
        failed: Vec::new(),
    };
    if !force && record.after.is_none() {
        outcome.status = Status::NotEnded;
        return Ok(outcome);
    }
    if !force && !plan.changed_since.is_empty() {
        outcome.status = Status::ChangedSince;
        return Ok(outcome);
    }
    let excluded = excluded(state, workspace);
    let (files, failed) = restore::apply(&git, workspace, &excluded, &plan.steps)?;
    outcome.files = files;
    outcome.failed = failed;
    if outcome.failed.is_empty() {
        record.undone_ms = Some(crate::runs::now_ms());
        folder.write(&record)?;
    }
    Ok(outcome)
}

/// The record `run` names (an id, or a start of one), or the newest one to undo.
fn chosen(folder: &Folder, run: Option<&str>) -> Result<RunRecord, UndoError> {
    let Some(run) = run else {
        return folder
            .all()?
            .into_iter()
            .find(|record| {
                record.undone_ms.is_none() && record.after.as_ref() != Some(&record.before)
            })
            .ok_or_else(|| UndoError::NothingToUndo(folder.workspace.clone()));
    };
    record::checked_run(run)?;
    if let Some(record) = folder.read(run)? {
        return Ok(record);
    }
    let mut matching: Vec<RunRecord> = folder
        .all()?
        .into_iter()
        .filter(|record| record.run.starts_with(run))
        .collect();
    match matching.len() {
        0 => Err(UndoError::NoSuchRun(run.to_owned())),
        1 => Ok(matching.remove(0)),
        _ => Err(UndoError::Ambiguous(
            run.to_owned(),
            matching.into_iter().map(|record| record.run).collect(),
        )),
    }
}

/// codecrew's state folder, where the records are kept.
fn state_folder() -> Result<PathBuf, UndoError> {
    codecrew_policy::state_folder::location().ok_or(UndoError::NoStateFolder)
}

/// The private repository of the folder's workspace.
fn store(state: &Path, folder: &Folder) -> PrivateGit {
    PrivateGit::new(
        &folder.dir,
        &folder.workspace,
        excluded(state, &folder.workspace),
    )
}

/// What of the workspace no snapshot holds and no undo writes: codecrew's own state
/// folder, when it lies inside the workspace (as named, and where it leads).
fn excluded(state: &Path, workspace: &Path) -> Vec<PathBuf> {
    let real = state.canonicalize().ok();
    std::iter::once(state.to_owned())
        .chain(real)
        .filter_map(|state| state.strip_prefix(workspace).ok().map(Path::to_owned))
        .filter(|inside| !inside.as_os_str().is_empty())
        .collect()
}

/// Whether git can be run, to record runs.
pub fn available() -> bool {
    PrivateGit::installed()
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
