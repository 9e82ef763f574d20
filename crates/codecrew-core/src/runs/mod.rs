//! The run store: every run of `query`, `execute` and `chat` kept in one SQLite database
//! of the user's (`$XDG_STATE_HOME/codecrew/runs.db`), as it goes, for `codecrew logs`.
//!
//! ```text
//! Engine::start / KeptAgents (the engine, not the front ends)
//!   -> RunLog: the run's row at its start, each job's row as it starts and ends, each
//!      tool call as its result comes, the run's end (a run killed keeps `ended` NULL)
//! codecrew logs -> Store: runs listed, shown, searched (FTS5), removed, pruned
//! codecrew ps, kill, result -> the runs not ended, each with whether its process still
//!      runs (alive.rs: its pid, started by the run's start, the user's)
//! ```
//!
//! The schema is in `docs/RUNS.md` and `schema.rs`; a database another codecrew made
//! newer is refused rather than written. A store that cannot be opened or written never
//! stops a run: [`RunLog`] says so once, through the notices, and the run goes on.

mod alive;
mod read;
mod resume;
mod schema;
mod search;
mod write;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

pub use alive::process_runs;
pub use read::{
    AnswerData, CallDetail, Filter, JobDetail, Progress, RunDetail, RunStatus, RunSummary,
};
pub use resume::Earlier;
pub use search::SearchHit;
pub use write::{JobRow, NewJob, NewRun, RunLog, WITHHELD, end_open_runs, new_id};

/// How long a write waits for another codecrew's.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// The WAL's length, in pages, at which SQLite folds it into the database.
const WAL_PAGES: i64 = 64;
/// The same, once a run's first commit is behind it (see `write::serve`).
const WAL_PAGES_IN_A_RUN: i64 = 4 * WAL_PAGES;
/// The fewest characters a run's id is shown with.
pub const MIN_ID_LEN: usize = 6;

/// Why the store cannot do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the run store {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file cannot be made, or is not the user's alone (a link, another's, one
    /// others may read).
    #[error("the run store {0}")]
    File(#[from] codecrew_config::secret_file::SecretFileError),
    #[error("the run store {}: {source}", path.display())]
    Sqlite {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error(
        "the run store {} was made by a newer codecrew (schema {found}; this one knows up to {known})",
        path.display()
    )]
    Newer {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error("no run has the id {0} (`codecrew logs` lists them)")]
    NotFound(String),
    #[error("the id {prefix} is ambiguous: it starts {} (give more of it)", ids.join(", "))]
    Ambiguous { prefix: String, ids: Vec<String> },
    #[error("`{0}` is not a run's id: ids are hexadecimal (`codecrew logs` lists them)")]
    BadId(String),
    #[error("the run {0} has no answer to go on from (none of its agents answered)")]
    NothingToResume(String),
    #[error("the run {id} is being recorded by another codecrew (pid {pid}): end that one first")]
    InUse { id: String, pid: i64 },
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// The store's place: `$XDG_STATE_HOME/codecrew/runs.db`, else
/// `~/.local/state/codecrew/runs.db` (beside the thread key and the MCP token). None
/// when neither XDG_STATE_HOME nor HOME is set.
pub fn default_path() -> Option<PathBuf> {
    codecrew_policy::state_folder::location().map(|dir| dir.join("runs.db"))
}

/// An open run store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens the store at `path`, made when there is none (its folder 0700, the file
    /// 0600, never through a link), and brought to the current schema.
    pub fn open(path: &Path) -> Result<Store> {
        // Made 0600 before SQLite opens it (its journals take the database's mode), and
        // refused when others could read it: it holds the agents' answers.
        codecrew_config::secret_file::open_private(path)?;
        Store::connect(path)
    }

    /// The store at `path` when there is one (the commands that only read it make none).
    pub fn open_existing(path: &Path) -> Result<Option<Store>> {
        match fs::symlink_metadata(path) {
            Ok(_) => Store::open(path).map(Some),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StoreError::Io {
                path: path.to_owned(),
                source,
            }),
        }
    }

    fn connect(path: &Path) -> Result<Store> {
        let sqlite = |source| StoreError::Sqlite {
            path: path.to_owned(),
            source,
        };
        let mut conn = Connection::open(path).map_err(sqlite)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sqlite)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(sqlite)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(sqlite)?;
        // No checkpoint as each codecrew closes the store (two fsyncs a run): the WAL is
        // folded in by SQLite's automatic checkpoint as it grows. Each codecrew is
        // usually the store's only connection, so its first read replays the whole WAL
        // (reads it and checks each frame): a short WAL keeps that cheap, 1.6 ms for
        // the default 1000 pages (4 MB), under 0.1 ms for these.
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )
        .map_err(sqlite)?;
        conn.pragma_update(None, "wal_autocheckpoint", WAL_PAGES)
            .map_err(sqlite)?;
        // The WAL file itself is cut back to this after a checkpoint.
        conn.pragma_update(None, "journal_size_limit", WAL_PAGES * 4096)
            .map_err(sqlite)?;
        schema::migrate(&mut conn, path)?;
        Ok(Store {
            conn,
            path: path.to_owned(),
        })
    }

    /// From now on, SQLite's automatic checkpoint runs at a commit only when the WAL
    /// holds more than `pages` pages.
    fn checkpoint_past(&self, pages: i64) -> rusqlite::Result<()> {
        self.conn.pragma_update(None, "wal_autocheckpoint", pages)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sqlite(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

#[cfg(test)]
mod tests;
