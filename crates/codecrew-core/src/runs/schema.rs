//! The store's schema and its migrations: `PRAGMA user_version` is the number of
//! migrations applied. A migration is only ever added, never changed.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use super::{Result, StoreError};

/// Each migration, in order: the database at version `n` has had the first `n`.
pub(super) const MIGRATIONS: &[&str] = &[
    // 1: runs, their jobs, the jobs' tool calls, and the text searched.
    r"
CREATE TABLE runs (
    id          TEXT PRIMARY KEY,      -- 16 hex digits, random
    started     INTEGER NOT NULL,      -- ms since the Unix epoch
    ended       INTEGER,               -- NULL until the run ends (or forever: killed)
    pid         INTEGER NOT NULL,      -- the codecrew process
    workspace   TEXT NOT NULL,
    command     TEXT NOT NULL,         -- query, execute, chat
    mode        TEXT NOT NULL,         -- query, execute
    task        TEXT NOT NULL,         -- the jobs' tasks (a chat's: its first line)
    input_bytes INTEGER,               -- piped input beside the tasks: its size
    input_sha256 TEXT,                 -- and digest
    exit_code   INTEGER                -- codecrew's exit code, once ended
);
CREATE INDEX runs_started ON runs(started);
CREATE INDEX runs_workspace ON runs(workspace, started);
CREATE TABLE jobs (
    run         TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL,      -- 0-based, in the order the jobs started
    agent       TEXT NOT NULL,
    cli         TEXT NOT NULL,         -- the provider: claude, codex, command...
    model       TEXT,
    task        TEXT NOT NULL,
    thread      TEXT,                  -- --thread NAME, or the chat's thread
    started     INTEGER NOT NULL,
    ended       INTEGER,               -- NULL until the job's answer is final
    session_id  TEXT,                  -- the CLI's session
    answer      TEXT,
    stop_reason TEXT,                  -- answered, max_turns, error, interrupted
    success     INTEGER,               -- 0 or 1
    error       TEXT,
    error_code  TEXT,                  -- E_...
    turns       INTEGER,
    usage       TEXT,                  -- JSON: the JobUsage of --output json
    duration_ms INTEGER,
    PRIMARY KEY (run, idx)
);
CREATE INDEX jobs_agent ON jobs(agent);
CREATE TABLE tool_calls (
    run         TEXT NOT NULL,
    job         INTEGER NOT NULL,
    seq         INTEGER NOT NULL,      -- 0-based within the job
    at          INTEGER NOT NULL,      -- when its result came (ms)
    name        TEXT NOT NULL,         -- the tool, without the codecrew: prefix
    input       TEXT NOT NULL,         -- JSON
    status      TEXT NOT NULL,         -- ok, error, denied...
    output      TEXT NOT NULL,         -- JSON, cut at 64 KiB
    output_cut  INTEGER NOT NULL,      -- 1 when output was cut
    error       TEXT,                  -- JSON: the ToolError
    duration_ms INTEGER NOT NULL,
    PRIMARY KEY (run, job, seq),
    FOREIGN KEY (run, job) REFERENCES jobs(run, idx) ON DELETE CASCADE
);
-- What `codecrew logs search` searches: each run's task and each job's answer.
CREATE VIRTUAL TABLE texts USING fts5(run UNINDEXED, job UNINDEXED, text);
",
    // 2: where a run went on from, its process's start, the crew calls' jobs, and who
    // decided each call.
    r"
ALTER TABLE runs ADD COLUMN continues TEXT;  -- the run `-c`/--resume went on from
ALTER TABLE runs ADD COLUMN pid_start INTEGER;  -- when pid started (ms, from /proc): a reused pid told apart
ALTER TABLE jobs ADD COLUMN parent INTEGER;  -- the job whose call started this one
ALTER TABLE jobs ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;  -- 0: the command line's
ALTER TABLE tool_calls ADD COLUMN decided_by TEXT;  -- policy, mode, user, session, yes, nobody
ALTER TABLE tool_calls ADD COLUMN output_withheld INTEGER NOT NULL DEFAULT 0;
CREATE INDEX runs_continues ON runs(continues);
",
    // 3: each call's id, the one its events, its result and ACP carry.
    r"
ALTER TABLE tool_calls ADD COLUMN call_id TEXT;  -- NULL for calls recorded before it
",
    // 4: the --schema a run's answers were held to (each kept once, by its hash), and
    // each answer's checked data.
    r"
CREATE TABLE schemas (
    hash        TEXT PRIMARY KEY,      -- 16 hex digits of the SHA-256 of its JSON
    schema      TEXT NOT NULL          -- the JSON Schema
);
ALTER TABLE runs ADD COLUMN schema TEXT;  -- schemas.hash, NULL without --schema
ALTER TABLE jobs ADD COLUMN data TEXT;  -- JSON: the answer's document, once it fitted
CREATE INDEX runs_schema ON runs(schema);
",
    // 5: the git worktree a job of `execute --worktrees` worked in (JSON: path, branch,
    // base, and once settled what it changed).
    r"
ALTER TABLE jobs ADD COLUMN worktree TEXT;
",
    // 6: the search index filled when `logs search` runs, not by each run (its pages were
    // a third of a run's writes): what is not in `texts` yet is marked 0.
    r"
ALTER TABLE runs ADD COLUMN task_indexed INTEGER NOT NULL DEFAULT 1;
ALTER TABLE jobs ADD COLUMN answer_indexed INTEGER NOT NULL DEFAULT 1;
",
];

/// The schema version this codecrew writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings `conn` to [`VERSION`], in one write transaction (two codecrews opening a new
/// store at once migrate it once).
pub(super) fn migrate(conn: &mut Connection, path: &Path) -> Result<()> {
    let sqlite = |source| StoreError::Sqlite {
        path: path.to_owned(),
        source,
    };
    let read = |conn: &Connection| -> rusqlite::Result<i64> {
        conn.pragma_query_value(None, "user_version", |row| row.get(0))
    };
    if read(conn).map_err(sqlite)? == VERSION {
        return Ok(());
    }
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sqlite)?;
    let found = read(&tx).map_err(sqlite)?;
    if found > VERSION {
        return Err(StoreError::Newer {
            path: path.to_owned(),
            found,
            known: VERSION,
        });
    }
    let start = usize::try_from(found).unwrap_or(0);
    for migration in MIGRATIONS.iter().skip(start) {
        tx.execute_batch(migration).map_err(sqlite)?;
    }
    tx.pragma_update(None, "user_version", VERSION)
        .map_err(sqlite)?;
    tx.commit().map_err(sqlite)
}
