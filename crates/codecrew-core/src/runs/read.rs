//! What `codecrew logs` reads: runs listed, one shown; runs removed (the search is
//! `search.rs`).
//! What `ps`, `kill` and `result` poll: the runs not ended, where one stands.

use rusqlite::{OptionalExtension, Row, params};
use serde::Serialize;
use serde_json::Value;

use super::{MIN_ID_LEN, Result, Store, StoreError};

/// The smallest bound [`Store::keep_under`] keeps the store under.
pub const MIN_BOUND: u64 = 1 << 20;

/// How a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Ended with exit code 0.
    Ok,
    /// Ended with another exit code.
    Failed,
    /// Not ended: still running, or killed.
    NotFinished,
}

impl RunStatus {
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Failed => "failed",
            RunStatus::NotFinished => "not finished",
        }
    }
}

/// Which runs a listing shows.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// At most this many, newest first.
    pub limit: usize,
    pub workspace: Option<String>,
    /// Runs with a job of this agent.
    pub agent: Option<String>,
    /// Runs started at or after this time (ms since the epoch).
    pub since_ms: Option<i64>,
    pub status: Option<RunStatus>,
    /// Runs of this command (`acp`: an editor's sessions).
    pub command: Option<String>,
    /// Runs whose answers were held to the schema of this hash (`--schema`).
    pub schema: Option<String>,
}

/// One answer's checked data, as `codecrew logs --schema ... --data` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct AnswerData {
    pub run: String,
    pub agent: String,
    pub data: serde_json::Value,
}

/// A run, as a listing shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    pub id: String,
    /// The shortest prefix of `id` no other run shares (at least 6 characters).
    pub short_id: String,
    /// RFC 3339, UTC.
    pub started: String,
    pub ended: Option<String>,
    pub duration_ms: Option<i64>,
    pub workspace: String,
    pub command: String,
    pub mode: String,
    pub task: String,
    pub agents: Vec<String>,
    pub status: RunStatus,
    pub exit_code: Option<i64>,
    pub pid: i64,
    /// The run this one went on from (`-c`, `--resume`).
    pub continues: Option<String>,
    /// When its process started, as `/proc` gives it (ms): tells the process from a
    /// later one that took its pid.
    #[serde(skip)]
    pub pid_start: Option<i64>,
    #[serde(skip)]
    pub started_ms: i64,
}

/// A run with its jobs.
#[derive(Debug, Clone, Serialize)]
pub struct RunDetail {
    #[serde(flatten)]
    pub run: RunSummary,
    pub input_bytes: Option<i64>,
    pub input_sha256: Option<String>,
    pub jobs: Vec<JobDetail>,
}

/// One job of a run.
#[derive(Debug, Clone, Serialize)]
pub struct JobDetail {
    pub index: i64,
    /// The job whose call (`query_agent`, `execute_agent`) started this one.
    pub parent: Option<i64>,
    /// 0 for the command line's jobs (a chat's lines), 1 for the agents they called...
    pub depth: i64,
    pub agent: String,
    pub cli: String,
    pub model: Option<String>,
    pub task: String,
    pub thread: Option<String>,
    pub session_id: Option<String>,
    /// None until the job's answer was final.
    pub answer: Option<String>,
    pub stop_reason: Option<String>,
    pub success: Option<bool>,
    pub error: Option<String>,
    pub error_code: Option<String>,
    pub turns: Option<i64>,
    pub usage: Option<Value>,
    pub duration_ms: Option<i64>,
    pub tool_calls: Vec<CallDetail>,
    /// The git worktree it worked in (`execute --worktrees`): path, branch, base, change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree: Option<Value>,
}

/// One tool call of a job.
#[derive(Debug, Clone, Serialize)]
pub struct CallDetail {
    /// The call's id (its result's `tool_call_id`, its `toolCallId` in ACP); None for a
    /// call recorded before the store kept it.
    pub call_id: Option<String>,
    pub name: String,
    pub input: Value,
    pub status: String,
    /// As the tool gave it; a string when it was cut at 64 KiB.
    pub output: Value,
    pub output_cut: bool,
    /// The output was not kept: the call was let through after asking about what it
    /// reads (a sensitive file).
    pub output_withheld: bool,
    pub error: Option<Value>,
    pub duration_ms: i64,
    /// Who let it run or refused it: `policy`, `mode`, `user`, `session`, `yes`,
    /// `nobody`; None when it never reached the permission check.
    pub decided_by: Option<String>,
}

/// Where a run stands, as `result --wait` and `kill` poll it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// The codecrew process that records it.
    pub pid: i64,
    pub started_ms: i64,
    /// When its process started, as `/proc` gives it (ms).
    pub pid_start: Option<i64>,
    /// None while it runs, or forever if its process was killed.
    pub ended_ms: Option<i64>,
    pub exit_code: Option<i64>,
}

impl Progress {
    /// Not ended, and its process still runs ([`super::process_runs`]).
    pub fn running(&self) -> bool {
        self.ended_ms.is_none() && super::process_runs(self.pid, self.started_ms, self.pid_start)
    }
}

impl RunSummary {
    /// Not ended, and its process still runs ([`super::process_runs`]).
    pub fn running(&self) -> bool {
        self.status == RunStatus::NotFinished
            && super::process_runs(self.pid, self.started_ms, self.pid_start)
    }
}

pub(super) const SUMMARY: &str =
    "SELECT id, started, ended, workspace, command, mode, task, exit_code, pid,
        strftime('%Y-%m-%dT%H:%M:%SZ', started / 1000, 'unixepoch'),
        strftime('%Y-%m-%dT%H:%M:%SZ', ended / 1000, 'unixepoch'),
        continues, pid_start
    FROM runs r";

impl Store {
    /// The runs `filter` lets through, newest first.
    pub fn list(&self, filter: &Filter) -> Result<Vec<RunSummary>> {
        let status = filter.status.map(|status| match status {
            RunStatus::Ok => "ok",
            RunStatus::Failed => "failed",
            RunStatus::NotFinished => "open",
        });
        let sql = format!(
            "{SUMMARY} WHERE (?1 IS NULL OR workspace = ?1)
               AND (?2 IS NULL OR started >= ?2)
               AND (?3 IS NULL OR EXISTS (SELECT 1 FROM jobs j WHERE j.run = r.id AND j.agent = ?3))
               AND (?4 IS NULL
                    OR (?4 = 'ok' AND ended IS NOT NULL AND exit_code = 0)
                    OR (?4 = 'failed' AND ended IS NOT NULL AND exit_code IS NOT 0)
                    OR (?4 = 'open' AND ended IS NULL))
               AND (?6 IS NULL OR command = ?6)
               AND (?7 IS NULL OR schema = ?7)
             ORDER BY started DESC, rowid DESC LIMIT ?5"
        );
        let limit = i64::try_from(filter.limit).unwrap_or(i64::MAX);
        let rows = self
            .query_runs(
                &sql,
                params![
                    filter.workspace,
                    filter.since_ms,
                    filter.agent,
                    status,
                    limit,
                    filter.command,
                    filter.schema
                ],
            )
            .map_err(|e| self.sqlite(e))?;
        Ok(rows)
    }

    /// The checked data of the answers of the runs `filter` lets through, newest run
    /// first, its jobs in order (`codecrew logs --schema ... --data`).
    pub fn data(&self, filter: &Filter) -> Result<Vec<AnswerData>> {
        let runs = self.list(filter)?;
        let mut found = Vec::new();
        for run in runs {
            let rows: Vec<(String, String)> = self
                .conn
                .prepare_cached(
                    "SELECT agent, data FROM jobs WHERE run = ?1 AND data IS NOT NULL
                     ORDER BY idx",
                )
                .and_then(|mut statement| {
                    statement
                        .query_map(params![run.id], |row| Ok((row.get(0)?, row.get(1)?)))?
                        .collect()
                })
                .map_err(|e| self.sqlite(e))?;
            for (agent, data) in rows {
                if let Ok(data) = serde_json::from_str(&data) {
                    found.push(AnswerData {
                        run: run.id.clone(),
                        agent,
                        data,
                    });
                }
            }
        }
        Ok(found)
    }

    /// The runs not ended (running, or their process killed), newest first.
    pub fn unfinished(&self) -> Result<Vec<RunSummary>> {
        self.list(&Filter {
            limit: usize::MAX,
            status: Some(RunStatus::NotFinished),
            ..Filter::default()
        })
    }

    /// Where the run `id` (whole, as [`Store::resolve`] gives it) stands; None when no
    /// run has it (yet: a run being started is recorded by its own process).
    pub fn progress(&self, id: &str) -> Result<Option<Progress>> {
        self.conn
            .query_row(
                "SELECT pid, started, ended, exit_code, pid_start FROM runs WHERE id = ?1",
                params![id],
                |row| {
                    Ok(Progress {
                        pid: row.get(0)?,
                        started_ms: row.get(1)?,
                        ended_ms: row.get(2)?,
                        exit_code: row.get(3)?,
                        pid_start: row.get(4)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.sqlite(e))
    }

    /// The run whose id is, or starts with, `prefix`.
    pub fn show(&self, prefix: &str) -> Result<RunDetail> {
        let id = self.resolve(prefix)?;
        let sql = format!("{SUMMARY} WHERE id = ?1");
        let run = self
            .query_runs(&sql, params![id])
            .map_err(|e| self.sqlite(e))?
            .pop()
            .ok_or_else(|| StoreError::NotFound(prefix.to_owned()))?;
        let (input_bytes, input_sha256) = self
            .conn
            .query_row(
                "SELECT input_bytes, input_sha256 FROM runs WHERE id = ?1",
                params![id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .map_err(|e| self.sqlite(e))?;
        let jobs = self.jobs(&id).map_err(|e| self.sqlite(e))?;
        Ok(RunDetail {
            run,
            input_bytes,
            input_sha256,
            jobs,
        })
    }

    /// Removes the run whose id is, or starts with, `prefix`; its full id.
    pub fn remove(&self, prefix: &str) -> Result<String> {
        let id = self.resolve(prefix)?;
        self.delete_where("id = ?1", params![id])?;
        Ok(id)
    }

    /// Removes the oldest finished runs while the store holds more than `bound` bytes
    /// (at least 1 MiB, `MIN_BOUND`); how many. A run not finished (going on, or killed) is
    /// left: it may be another codecrew's. The file keeps its size; what was freed is
    /// used again, so it does not grow past the bound.
    pub fn keep_under(&self, bound: u64) -> Result<usize> {
        let bound = bound.max(MIN_BOUND);
        let mut removed = 0;
        loop {
            let used = self.used_bytes().map_err(|e| self.sqlite(e))?;
            if used <= bound {
                return Ok(removed);
            }
            // A tenth of the runs at a time (at least one): few passes, little overshoot.
            let batch = self.delete_where(
                "id IN (SELECT id FROM runs WHERE ended IS NOT NULL ORDER BY started, rowid
                            LIMIT max(1, (SELECT count(*) FROM runs) / 10))",
                params![],
            )?;
            if batch == 0 {
                return Ok(removed);
            }
            removed += batch;
            // The search index keeps what was deleted until its segments are merged.
            self.conn
                .execute("INSERT INTO texts (texts) VALUES ('optimize')", [])
                .map_err(|e| self.sqlite(e))?;
        }
    }

    /// The bytes the store's pages in use hold.
    pub(super) fn used_bytes(&self) -> rusqlite::Result<u64> {
        let pragma = |name: &str| -> rusqlite::Result<i64> {
            self.conn.pragma_query_value(None, name, |row| row.get(0))
        };
        let pages = pragma("page_count")? - pragma("freelist_count")?;
        Ok(u64::try_from(pages.max(0) * pragma("page_size")?).unwrap_or(0))
    }

    /// Removes the runs started before `before_ms`; how many.
    pub fn prune(&self, before_ms: i64) -> Result<usize> {
        self.delete_where("started < ?1", params![before_ms])
    }

    fn delete_where(
        &self,
        condition: &str,
        values: impl rusqlite::Params + Clone,
    ) -> Result<usize> {
        let delete = || -> rusqlite::Result<usize> {
            let tx = self.conn.unchecked_transaction()?;
            tx.execute(
                &format!("DELETE FROM texts WHERE run IN (SELECT id FROM runs WHERE {condition})"),
                values.clone(),
            )?;
            let count = tx.execute(&format!("DELETE FROM runs WHERE {condition}"), values)?;
            tx.commit()?;
            Ok(count)
        };
        delete().map_err(|e| self.sqlite(e))
    }

    /// The full id of the one run whose id starts with `prefix`.
    pub fn resolve(&self, prefix: &str) -> Result<String> {
        let prefix = prefix.trim().to_ascii_lowercase();
        if prefix.is_empty() || !prefix.bytes().all(|byte| byte.is_ascii_hexdigit()) {
            return Err(StoreError::BadId(prefix));
        }
        let ids: Vec<String> = (|| {
            let mut statement = self
                .conn
                .prepare("SELECT id FROM runs WHERE substr(id, 1, ?2) = ?1 ORDER BY id LIMIT 5")?;
            let rows = statement.query_map(
                params![prefix, i64::try_from(prefix.len()).unwrap_or(i64::MAX)],
                |row| row.get(0),
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })()
        .map_err(|e| self.sqlite(e))?;
        match ids.as_slice() {
            [] => Err(StoreError::NotFound(prefix)),
            [id] => Ok(id.clone()),
            _ => Err(StoreError::Ambiguous { prefix, ids }),
        }
    }

    /// The shortest prefix of `id` that no other run's id starts with, at least
    /// [`MIN_ID_LEN`] characters.
    pub fn short_id(&self, id: &str) -> Result<String> {
        let neighbour = |sql: &str| -> rusqlite::Result<Option<String>> {
            self.conn
                .query_row(sql, params![id], |row| row.get(0))
                .optional()
        };
        let below = neighbour("SELECT id FROM runs WHERE id < ?1 ORDER BY id DESC LIMIT 1")
            .map_err(|e| self.sqlite(e))?;
        let above = neighbour("SELECT id FROM runs WHERE id > ?1 ORDER BY id LIMIT 1")
            .map_err(|e| self.sqlite(e))?;
        let shared = [below, above]
            .iter()
            .flatten()
            .map(|other| common_prefix(id, other))
            .max()
            .unwrap_or(0);
        let len = (shared + 1).max(MIN_ID_LEN).min(id.len());
        Ok(id.get(..len).unwrap_or(id).to_owned())
    }

    pub(super) fn query_runs(
        &self,
        sql: &str,
        values: impl rusqlite::Params,
    ) -> rusqlite::Result<Vec<RunSummary>> {
        let mut statement = self.conn.prepare(sql)?;
        let rows = statement.query_map(values, summary)?;
        let mut runs: Vec<RunSummary> = rows.collect::<rusqlite::Result<_>>()?;
        for run in &mut runs {
            let mut agents = self
                .conn
                .prepare_cached("SELECT agent FROM jobs WHERE run = ?1 ORDER BY idx")?;
            let names = agents.query_map(params![run.id], |row| row.get::<_, String>(0))?;
            for name in names {
                let name = name?;
                if !run.agents.contains(&name) {
                    run.agents.push(name);
                }
            }
            run.short_id = match self.short_id(&run.id) {
                Ok(short) => short,
                Err(_) => run.id.clone(),
            };
        }
        Ok(runs)
    }

    fn jobs(&self, run: &str) -> rusqlite::Result<Vec<JobDetail>> {
        let mut statement = self.conn.prepare(
            "SELECT idx, agent, cli, model, task, thread, session_id, answer, stop_reason,
                    success, error, error_code, turns, usage, duration_ms, parent, depth,
                    worktree
             FROM jobs WHERE run = ?1 ORDER BY idx",
        )?;
        let rows = statement.query_map(params![run], |row| {
            let usage: Option<String> = row.get(13)?;
            Ok(JobDetail {
                index: row.get(0)?,
                parent: row.get(15)?,
                depth: row.get(16)?,
                agent: row.get(1)?,
                cli: row.get(2)?,
                model: row.get(3)?,
                task: row.get(4)?,
                thread: row.get(5)?,
                session_id: row.get(6)?,
                answer: row.get(7)?,
                stop_reason: row.get(8)?,
                success: row.get(9)?,
                error: row.get(10)?,
                error_code: row.get(11)?,
                turns: row.get(12)?,
                usage: usage.and_then(|usage| serde_json::from_str(&usage).ok()),
                duration_ms: row.get(14)?,
                tool_calls: Vec::new(),
                worktree: row
                    .get::<_, Option<String>>(17)?
                    .and_then(|json| serde_json::from_str(&json).ok()),
            })
        })?;
        let mut jobs: Vec<JobDetail> = rows.collect::<rusqlite::Result<_>>()?;
        let mut calls = self.conn.prepare(
            "SELECT name, input, status, output, output_cut, error, duration_ms, decided_by,
                    output_withheld, call_id
             FROM tool_calls WHERE run = ?1 AND job = ?2 ORDER BY seq",
        )?;
        for job in &mut jobs {
            let rows = calls.query_map(params![run, job.index], |row| {
                let (input, output): (String, String) = (row.get(1)?, row.get(3)?);
                let cut: bool = row.get(4)?;
                let error: Option<String> = row.get(5)?;
                Ok(CallDetail {
                    call_id: row.get(9)?,
                    name: row.get(0)?,
                    input: serde_json::from_str(&input).unwrap_or(Value::String(input)),
                    status: row.get(2)?,
                    output: if cut {
                        Value::String(output)
                    } else {
                        serde_json::from_str(&output).unwrap_or(Value::String(output))
                    },
                    output_cut: cut,
                    output_withheld: row.get(8)?,
                    error: error.and_then(|error| serde_json::from_str(&error).ok()),
                    duration_ms: row.get(6)?,
                    decided_by: row.get(7)?,
                })
            })?;
            job.tool_calls = rows.collect::<rusqlite::Result<_>>()?;
        }
        Ok(jobs)
    }
}

fn summary(row: &Row<'_>) -> rusqlite::Result<RunSummary> {
    let started_ms: i64 = row.get(1)?;
    let ended_ms: Option<i64> = row.get(2)?;
    let exit_code: Option<i64> = row.get(7)?;
    let status = match (ended_ms, exit_code) {
        (None, _) => RunStatus::NotFinished,
        (Some(_), Some(0)) => RunStatus::Ok,
        (Some(_), _) => RunStatus::Failed,
    };
    Ok(RunSummary {
        id: row.get(0)?,
        short_id: String::new(),
        started: row.get(9)?,
        ended: row.get(10)?,
        duration_ms: ended_ms.map(|ended| ended - started_ms),
        workspace: row.get(3)?,
        command: row.get(4)?,
        mode: row.get(5)?,
        task: row.get(6)?,
        agents: Vec::new(),
        status,
        exit_code,
        pid: row.get(8)?,
        continues: row.get(11)?,
        pid_start: row.get(12)?,
        started_ms,
    })
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}
