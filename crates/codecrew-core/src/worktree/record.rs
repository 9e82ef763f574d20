//! What codecrew knows of one worktree it made: a JSON file beside the worktree, in the
//! worktrees' folder, where no agent's wall lets it write. Read back, it is still checked
//! (its run and agent must be names, its file where the worktree's layout puts it): the
//! paths codecrew acts on are derived from where the record lies, never taken from it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One worktree: who works there, from what, and what came of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub run: String,
    pub agent: String,
    /// The main checkout's top folder.
    pub repository: PathBuf,
    pub branch: String,
    /// Its folder in the repository's `worktrees/` (git's name for it).
    pub git_name: String,
    /// The commit the worktree started from.
    pub base: String,
    /// When it was made (seconds since the epoch).
    pub created: u64,
    /// The codecrew that made it (its pid, and when that process started as `/proc` says):
    /// one that died before settling it left it abandoned.
    #[serde(default)]
    pub pid: Option<i64>,
    #[serde(default)]
    pub pid_start: Option<i64>,
    /// The checkout's folders linked in (`[worktree] link`): never part of the change.
    #[serde(default)]
    pub linked: Vec<String>,
    /// What the agent changed, once its job ended ([`crate::worktree::settle`]).
    #[serde(default)]
    pub change: Option<Change>,
    /// `--check`'s result in the worktree.
    #[serde(default)]
    pub check: Option<Check>,
    /// Whether and how it was brought into the checkout.
    #[serde(default)]
    pub applied: Option<Applied>,
}

/// What an agent's branch changes against its base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub files: u64,
    pub added: u64,
    pub removed: u64,
    /// The commit codecrew made of the agent's work (None: nothing to commit).
    pub commit: Option<String>,
    /// Whether the branch merges onto the checkout's HEAD without a conflict (None: git
    /// could not say), and the files that would conflict.
    pub merges_cleanly: Option<bool>,
    #[serde(default)]
    pub conflicts: Vec<String>,
}

impl Change {
    pub fn is_empty(&self) -> bool {
        self.files == 0
    }
}

/// The result of `--check` in one worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub command: String,
    pub passed: bool,
    /// The exit code (None: killed, timed out, or it could not start).
    pub exit_code: Option<i32>,
    /// The end of what it printed.
    pub output: String,
}

/// An apply: how, and when (seconds since the epoch).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    pub method: String,
    pub at: u64,
}

/// Why a record could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a worktree record codecrew wrote ({why})", .path.display())]
    Garbled { path: PathBuf, why: String },
}

/// Whether `name` can be a run id or an agent id in a path and a branch name: ASCII
/// letters, digits, `_` and `-`, not starting with `-`.
pub fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
}

impl Record {
    /// The record's file: `<folder>/<run>/<agent>.json`, the worktree `<run>/<agent>`.
    pub fn file(folder: &Path, run: &str, agent: &str) -> PathBuf {
        folder.join(run).join(format!("{agent}.json"))
    }

    /// Reads the record at `file`, checked against where it lies: its run and agent are
    /// the names its place gives.
    pub fn read(file: &Path) -> Result<Record, RecordError> {
        let garbled = |why: String| RecordError::Garbled {
            path: file.to_path_buf(),
            why,
        };
        let bytes = std::fs::read(file).map_err(|source| RecordError::Io {
            path: file.to_path_buf(),
            source,
        })?;
        let record: Record =
            serde_json::from_slice(&bytes).map_err(|error| garbled(error.to_string()))?;
        let agent = file.file_stem().and_then(|stem| stem.to_str());
        let run = file
            .parent()
            .and_then(Path::file_name)
            .and_then(|name| name.to_str());
        if agent != Some(record.agent.as_str()) || run != Some(record.run.as_str()) {
            return Err(garbled("its run or agent is not where it lies".into()));
        }
        if !is_plain_name(&record.agent) || !is_plain_name(&record.run) {
            return Err(garbled("a run or agent that is not a plain name".into()));
        }
        if record.branch != super::branch(&record.run, &record.agent) {
            return Err(garbled("a branch that is not codecrew's".into()));
        }
        if !is_plain_name(&record.git_name) {
            return Err(garbled("a worktree name that is not a plain name".into()));
        }
        if !record.repository.is_absolute() {
            return Err(garbled("a repository that is not an absolute path".into()));
        }
        Ok(record)
    }

    /// Writes the record at its place under `folder` (a new file renamed over the old).
    pub fn write(&self, folder: &Path) -> Result<(), RecordError> {
        let file = Record::file(folder, &self.run, &self.agent);
        let io = |source| RecordError::Io {
            path: file.clone(),
            source,
        };
        let json = serde_json::to_vec_pretty(self).map_err(|error| RecordError::Garbled {
            path: file.clone(),
            why: error.to_string(),
        })?;
        let temp = file.with_extension("json.new");
        std::fs::write(&temp, json).map_err(io)?;
        std::fs::rename(&temp, &file).map_err(io)
    }

    /// Left by a codecrew that died before its agent's work was settled (killed, the
    /// machine restarted): nobody will settle it.
    pub fn abandoned(&self) -> bool {
        self.change.is_none()
            && !self.pid.is_some_and(|pid| {
                crate::runs::process_runs(pid, self.created as i64 * 1000, self.pid_start)
            })
    }

    /// What the run store keeps of it: where, on what, from what, and what changed.
    pub fn summary(&self, path: &Path) -> serde_json::Value {
        serde_json::json!({
            "path": path,
            "branch": self.branch,
            "base": self.base,
            "change": self.change,
            "check": self.check,
        })
    }

    /// The worktree's folder, from where its record lies under `folder`.
    pub fn path(&self, folder: &Path) -> PathBuf {
        folder.join(&self.run).join(&self.agent)
    }
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        Record {
            run: "0123abcd".into(),
            agent: "claude".into(),
            repository: "/repo".into(),
            branch: "codecrew/0123abcd/claude".into(),
            git_name: "claude".into(),
            base: "abc".into(),
            created: 1,
            pid: None,
            pid_start: None,
            linked: Vec::new(),
            change: None,
            check: None,
            applied: None,
        }
    }

    #[test]
    fn a_record_reads_back_where_it_was_written() {
        let folder = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(folder.path().join("0123abcd")).unwrap();
        record().write(folder.path()).unwrap();
        let file = Record::file(folder.path(), "0123abcd", "claude");
        assert_eq!(Record::read(&file).unwrap(), record());
    }

    #[test]
    fn a_record_moved_or_naming_another_branch_is_refused() {
        let folder = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(folder.path().join("0123abcd")).unwrap();
        record().write(folder.path()).unwrap();
        let file = Record::file(folder.path(), "0123abcd", "claude");
        let moved = Record::file(folder.path(), "0123abcd", "codex");
        std::fs::copy(&file, &moved).unwrap();
        assert!(matches!(
            Record::read(&moved),
            Err(RecordError::Garbled { .. })
        ));
        let mut other = record();
        other.branch = "main".into();
        other.write(folder.path()).unwrap();
        assert!(matches!(
            Record::read(&file),
            Err(RecordError::Garbled { .. })
        ));
        std::fs::write(&file, "{").unwrap();
        assert!(matches!(
            Record::read(&file),
            Err(RecordError::Garbled { .. })
        ));
    }

    #[test]
    fn names_with_separators_or_dots_are_not_plain() {
        for name in ["", "../x", "a/b", "-x", "a.b", "a b"] {
            assert!(!is_plain_name(name), "{name:?}");
        }
        assert!(is_plain_name("claude-2_x"));
    }
}
