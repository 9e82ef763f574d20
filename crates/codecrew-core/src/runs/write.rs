//! A run recorded as it goes: [`RunLog`], the engine's handle on the store.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::Mutex;

use rusqlite::params;
use serde_json::Value;

use super::{Result, Store, now_ms};
use crate::session::{JobEvent, JobReport};
use codecrew_agents::notices;
use codecrew_tools::ToolResult;

/// The most of a call's output that is kept.
pub const OUTPUT_CAP: usize = 64 * 1024;

/// What a run's row says at its start.
#[derive(Debug, Clone, Default)]
pub struct NewRun {
    pub workspace: String,
    /// `query`, `execute`, `chat`.
    pub command: String,
    pub mode: String,
    pub task: String,
    /// Piped input set beside the tasks: its size and SHA-256, hex.
    pub input: Option<(u64, String)>,
}

/// One job as it starts.
#[derive(Debug, Clone)]
pub struct NewJob<'a> {
    pub agent: &'a str,
    pub cli: &'a str,
    pub model: Option<&'a str>,
    pub task: &'a str,
    pub thread: Option<&'a str>,
}

/// A run being recorded. Every write is tried in turn; the first that fails is said
/// once (a warning) and the store is let go, so that the run goes on unrecorded.
pub struct RunLog {
    id: String,
    state: Mutex<State>,
}

struct State {
    store: Option<Store>,
    /// Each job's calls whose results have not come yet (name, input), and its count of
    /// calls recorded.
    pending: BTreeMap<usize, (VecDeque<(String, Value)>, u32)>,
}

impl RunLog {
    /// Opens the store at `path` and records the run's start. None (said once) when the
    /// store cannot be opened or written.
    pub fn start(path: &Path, run: &NewRun) -> Option<RunLog> {
        match RunLog::try_start(path, run) {
            Ok(log) => Some(log),
            Err(error) => {
                warn(&error);
                None
            }
        }
    }

    /// As [`RunLog::start`], the error returned.
    pub fn try_start(path: &Path, run: &NewRun) -> Result<RunLog> {
        let store = Store::open(path)?;
        let id = new_id();
        let (bytes, digest) = match &run.input {
            Some((bytes, digest)) => (
                Some(i64::try_from(*bytes).unwrap_or(i64::MAX)),
                Some(digest),
            ),
            None => (None, None),
        };
        let tx = store
            .conn
            .unchecked_transaction()
            .map_err(|e| store.sqlite(e))?;
        tx.execute(
            "INSERT INTO runs (id, started, pid, workspace, command, mode, task, input_bytes, input_sha256)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                id,
                now_ms(),
                std::process::id(),
                run.workspace,
                run.command,
                run.mode,
                run.task,
                bytes,
                digest
            ],
        )
        .map_err(|e| store.sqlite(e))?;
        tx.execute(
            "INSERT INTO texts (run, job, text) VALUES (?1, NULL, ?2)",
            params![id, run.task],
        )
        .map_err(|e| store.sqlite(e))?;
        tx.commit().map_err(|e| store.sqlite(e))?;
        Ok(RunLog {
            id,
            state: Mutex::new(State {
                store: Some(store),
                pending: BTreeMap::new(),
            }),
        })
    }

    /// The run's full id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Job `index` starts.
    pub fn job_started(&self, index: usize, job: &NewJob<'_>) {
        self.write(|store, id| {
            store.conn.execute(
                "INSERT INTO jobs (run, idx, agent, cli, model, task, thread, started)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    id,
                    int(index),
                    job.agent,
                    job.cli,
                    job.model,
                    job.task,
                    job.thread,
                    now_ms()
                ],
            )?;
            Ok(())
        });
    }

    /// One of job `index`'s events: a call is kept until its result comes, then both are
    /// recorded. A sub-agent's events are not (yet) recorded.
    pub fn event(&self, index: usize, event: &JobEvent) {
        match event {
            JobEvent::ToolCall(call) => {
                if let Ok(mut state) = self.state.lock() {
                    let (calls, _) = state.pending.entry(index).or_default();
                    calls.push_back((call.tool.clone(), call.input.clone()));
                }
            }
            JobEvent::ToolResult(result) => self.call(index, result),
            JobEvent::Turn(_)
            | JobEvent::TurnEnd { .. }
            | JobEvent::Text(_)
            | JobEvent::MessageEnd
            | JobEvent::Rejected(_)
            | JobEvent::Notice(_)
            | JobEvent::Sub(_) => {}
        }
    }

    fn call(&self, index: usize, result: &ToolResult) {
        let (input, seq) = {
            let Ok(mut state) = self.state.lock() else {
                return;
            };
            let (calls, count) = state.pending.entry(index).or_default();
            let at = calls.iter().position(|(name, _)| *name == result.tool);
            let input = at
                .and_then(|at| calls.remove(at))
                .map_or(Value::Null, |(_, input)| input);
            let seq = *count;
            *count += 1;
            (input, seq)
        };
        let output = result.output.to_string();
        let (output, cut) = capped(&output);
        let error = result
            .error
            .as_ref()
            .and_then(|error| serde_json::to_string(error).ok());
        let status = serde_json::to_value(result.status)
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned))
            .unwrap_or_default();
        self.write(|store, id| {
            store.conn.execute(
                "INSERT INTO tool_calls (run, job, seq, at, name, input, status, output, output_cut, error, duration_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    id,
                    int(index),
                    seq,
                    now_ms(),
                    result.tool,
                    input.to_string(),
                    status,
                    output,
                    cut,
                    error,
                    i64::try_from(result.duration_ms).unwrap_or(i64::MAX)
                ],
            )?;
            Ok(())
        });
    }

    /// Job `index`'s answer is final.
    pub fn job_ended(&self, index: usize, report: &JobReport) {
        let usage = serde_json::to_string(&report.usage).ok();
        let stop = serde_json::to_value(report.stop_reason)
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned));
        let code = report.error_code.map(|code| code.as_str().to_owned());
        self.write(|store, id| {
            let tx = store.conn.unchecked_transaction()?;
            tx.execute(
                "UPDATE jobs SET ended = ?3, session_id = ?4, answer = ?5, stop_reason = ?6,
                     success = ?7, error = ?8, error_code = ?9, turns = ?10, usage = ?11,
                     duration_ms = ?12, model = COALESCE(?13, model)
                 WHERE run = ?1 AND idx = ?2",
                params![
                    id,
                    int(index),
                    now_ms(),
                    report.session_id,
                    report.response,
                    stop,
                    report.success,
                    report.error,
                    code,
                    report.turns,
                    usage,
                    i64::try_from(report.duration_ms).unwrap_or(i64::MAX),
                    report.model
                ],
            )?;
            if !report.response.is_empty() {
                tx.execute(
                    "INSERT INTO texts (run, job, text) VALUES (?1, ?2, ?3)",
                    params![id, int(index), report.response],
                )?;
            }
            tx.commit()
        });
    }

    /// The run ends, with codecrew's exit code.
    pub fn ended(&self, exit_code: u8) {
        self.write(|store, id| {
            store.conn.execute(
                "UPDATE runs SET ended = ?2, exit_code = ?3 WHERE id = ?1",
                params![id, now_ms(), exit_code],
            )?;
            Ok(())
        });
    }

    /// Runs `write`; the first failure is said and the store let go.
    fn write(&self, write: impl FnOnce(&Store, &str) -> rusqlite::Result<()>) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        let Some(store) = &state.store else {
            return;
        };
        if let Err(error) = write(store, &self.id) {
            warn(&store.sqlite(error));
            state.store = None;
        }
    }
}

fn int(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn warn(error: &super::StoreError) {
    notices::warn(&format!(
        "this run is not kept for `codecrew logs`: {error} (the run goes on; \
         `[logs] enabled = false` in your user config or --no-log turns the store off)"
    ));
}

/// `text` cut to [`OUTPUT_CAP`] bytes at a character's boundary, and whether it was.
fn capped(text: &str) -> (&str, bool) {
    if text.len() <= OUTPUT_CAP {
        return (text, false);
    }
    let mut end = OUTPUT_CAP;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text.get(..end).unwrap_or_default(), true)
}

/// 16 hex digits from the OS's random source (the clock's, should it fail).
fn new_id() -> String {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        let mixed = (nanos as u64) ^ u64::from(std::process::id()).rotate_left(40);
        bytes = mixed.to_be_bytes();
    }
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
