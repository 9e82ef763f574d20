//! What is kept of one run for undo: a small JSON file per run in the workspace's own
//! folder of codecrew's state (`<state>/undo/<workspace key>/runs/<run>.json`), beside the
//! workspace's private repository and index, and that folder's lock.
//!
//! The folder is keyed by a digest of the workspace's canonical path, and each record
//! names its workspace again: a record read back for another workspace is refused, so
//! one workspace's undo cannot touch another's. A record is codecrew's own data, but is
//! still checked as it is read (its run id, its trees): one that does not parse is an
//! error, never a panic.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::UndoError;
use super::git::{object_id, private_dir};

/// The record's format.
const VERSION: u32 = 1;

/// How many records a workspace keeps: the oldest beyond it are removed as a run starts.
pub(crate) const KEPT_RECORDS: usize = 100;

/// What changed the workspace: a run of `execute`, or `codecrew apply`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordKind {
    Execute,
    Apply,
}

/// One run's record.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RunRecord {
    pub version: u32,
    pub run: String,
    /// The canonical workspace, as recorded (compared whole when read back).
    pub workspace: String,
    pub kind: RecordKind,
    pub started_ms: i64,
    /// The process that records the run, and its start as `/proc` gives it: a record
    /// with no `after` is of a run going on only while that very process lives.
    pub pid: i64,
    pub pid_start: Option<i64>,
    /// The workspace's tree before the run.
    pub before: String,
    /// The workspace's tree when the run ended; None while it runs, and forever when its
    /// codecrew was killed.
    pub after: Option<String>,
    pub ended_ms: Option<i64>,
    /// When `codecrew undo` put it back.
    pub undone_ms: Option<i64>,
}

impl RunRecord {
    /// Whether the run may still be going: no end recorded, and its process lives.
    pub fn going(&self) -> bool {
        self.after.is_none() && crate::runs::process_runs(self.pid, self.started_ms, self.pid_start)
    }
}

/// One workspace's folder of undo records.
#[derive(Debug, Clone)]
pub(crate) struct Folder {
    pub dir: PathBuf,
    pub workspace: PathBuf,
}

impl Folder {
    /// The folder of `workspace` under the state folder `state`.
    pub fn of(state: &Path, workspace: &Path) -> Folder {
        Folder {
            dir: state.join("undo").join(workspace_key(workspace)),
            workspace: workspace.to_owned(),
        }
    }

    /// Whether a run was ever recorded here.
    pub fn recorded(&self) -> bool {
        self.runs().is_dir()
    }

    fn runs(&self) -> PathBuf {
        self.dir.join("runs")
    }

    fn path(&self, run: &str) -> Result<PathBuf, UndoError> {
        Ok(self.runs().join(format!("{}.json", checked_run(run)?)))
    }

    /// Takes the folder's lock (made private on the way), waiting for whoever holds it:
    /// one snapshot or undo at a time shares the index.
    pub fn lock(&self) -> Result<Flock<File>, UndoError> {
        let path = self.dir.join("lock");
        let io = |source| UndoError::Io {
            path: path.clone(),
            source,
        };
        private_dir(&self.runs()).map_err(io)?;
        let file = File::options()
            .create(true)
            .append(true)
            .mode(0o600)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&path)
            .map_err(io)?;
        let mut file = file;
        loop {
            match Flock::lock(file, FlockArg::LockExclusive) {
                Ok(locked) => return Ok(locked),
                Err((again, Errno::EINTR)) => file = again,
                Err((_, errno)) => return Err(io(errno.into())),
            }
        }
    }

    /// Writes `record` whole (a temporary file renamed over the old one).
    pub fn write(&self, record: &RunRecord) -> Result<(), UndoError> {
        let path = self.path(&record.run)?;
        let io = |source| UndoError::Io {
            path: path.clone(),
            source,
        };
        let bytes = serde_json::to_vec_pretty(record)
            .map_err(|error| UndoError::BadRecord(error.to_string()))?;
        let mut temp = tempfile::NamedTempFile::new_in(self.runs()).map_err(io)?;
        temp.write_all(&bytes).map_err(io)?;
        temp.as_file().sync_all().map_err(io)?;
        temp.persist(&path).map_err(|error| io(error.error))?;
        Ok(())
    }

    /// The record of `run` in this folder: None when there is none.
    pub fn read(&self, run: &str) -> Result<Option<RunRecord>, UndoError> {
        let path = self.path(run)?;
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(UndoError::Io { path, source }),
        };
        let record: RunRecord = serde_json::from_slice(&bytes).map_err(|error| {
            UndoError::BadRecord(format!("{} does not parse: {error}", path.display()))
        })?;
        self.check(&record, run, &path)?;
        Ok(Some(record))
    }

    /// Every record of the folder, newest first; one that does not parse is skipped
    /// (said in the log), since it cannot be undone anyway.
    pub fn all(&self) -> Result<Vec<RunRecord>, UndoError> {
        let entries = match std::fs::read_dir(self.runs()) {
            Ok(entries) => entries,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(UndoError::Io {
                    path: self.runs(),
                    source,
                });
            }
        };
        let mut records = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(run) = name.to_str().and_then(|name| name.strip_suffix(".json")) else {
                continue;
            };
            match self.read(run) {
                Ok(Some(record)) => records.push(record),
                Ok(None) => {}
                Err(error) => tracing::warn!("an undo record is left aside: {error}"),
            }
        }
        records.sort_by(|a, b| b.started_ms.cmp(&a.started_ms).then(b.run.cmp(&a.run)));
        Ok(records)
    }

    /// Removes the oldest records beyond the newest `keep` ([`KEPT_RECORDS`]): the runs
    /// removed.
    pub fn prune(&self, keep: usize) -> Vec<String> {
        let Ok(records) = self.all() else {
            return Vec::new();
        };
        let mut removed = Vec::new();
        for record in records.iter().skip(keep) {
            if let Ok(path) = self.path(&record.run)
                && std::fs::remove_file(path).is_ok()
            {
                removed.push(record.run.clone());
            }
        }
        removed
    }

    /// A record read back must be the one asked for, of this workspace, and name trees.
    fn check(&self, record: &RunRecord, run: &str, path: &Path) -> Result<(), UndoError> {
        let bad = |what: &str| UndoError::BadRecord(format!("{}: {what}", path.display()));
        if record.version != VERSION {
            return Err(bad(&format!(
                "format {} is not one this codecrew reads",
                record.version
            )));
        }
        if record.run != run {
            return Err(bad("it names another run"));
        }
        if record.workspace != self.workspace.to_string_lossy() {
            return Err(bad("it is another workspace's"));
        }
        let trees = std::iter::once(&record.before).chain(record.after.as_ref());
        if trees.into_iter().any(|tree| !object_id(tree)) {
            return Err(bad("a tree is not a git object id"));
        }
        Ok(())
    }
}

/// A new record of `run` in `workspace`, before it changes anything.
pub(crate) fn new_record(
    workspace: &Path,
    run: &str,
    kind: RecordKind,
    before: String,
) -> RunRecord {
    let pid = std::process::id();
    RunRecord {
        version: VERSION,
        run: run.to_owned(),
        workspace: workspace.to_string_lossy().into_owned(),
        kind,
        started_ms: crate::runs::now_ms(),
        pid: i64::from(pid),
        pid_start: i32::try_from(pid)
            .ok()
            .and_then(codecrew_policy::process::started_ms),
        before,
        after: None,
        ended_ms: None,
        undone_ms: None,
    }
}

/// The name of a workspace's folder: the first 32 hex digits of its path's SHA-256.
fn workspace_key(workspace: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let digest = Sha256::digest(workspace.as_os_str().as_bytes());
    digest
        .iter()
        .take(16)
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// A run id as a file name: letters, digits, `-` and `_`, 1 to 64 of them.
pub(crate) fn checked_run(run: &str) -> Result<&str, UndoError> {
    let fine = !run.is_empty()
        && run.len() <= 64
        && run
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_');
    if fine {
        Ok(run)
    } else {
        Err(UndoError::NoSuchRun(run.to_owned()))
    }
}
