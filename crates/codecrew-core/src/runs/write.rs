//! A run recorded as it goes: [`RunLog`], the engine's handle on the store.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use rusqlite::params_from_iter;
use rusqlite::types::Value as SqlValue;
use serde_json::Value;

use super::{Result, Store, now_ms};
use crate::schema::AnswerSchema;
use crate::session::{JobEvent, JobReport};
use codecrew_agents::notices;
use codecrew_tools::{Decided, ToolResult};

/// The most of a call's output that is kept.
pub const OUTPUT_CAP: usize = 64 * 1024;

/// What is kept instead of the output of a call let through after asking about what it
/// reads (a sensitive file, a risky command).
pub const WITHHELD: &str = "(not kept: the call read what the policy guards, and was \
                            let through when asked)";

/// What a run's row says at its start.
#[derive(Debug, Clone, Default)]
pub struct NewRun {
    /// The run's id when it was chosen before the run started (a run in the background:
    /// its parent printed it); else a new one ([`new_id`]).
    pub id: Option<String>,
    pub workspace: String,
    /// `query`, `execute`, `chat`.
    pub command: String,
    pub mode: String,
    pub task: String,
    /// Piped input set beside the tasks: its size and SHA-256, hex.
    pub input: Option<(u64, String)>,
    /// The run this one goes on from (`-c`, `--resume`).
    pub continues: Option<String>,
}

/// One job as it starts.
#[derive(Debug, Clone)]
pub struct NewJob<'a> {
    pub agent: &'a str,
    pub cli: &'a str,
    pub model: Option<&'a str>,
    pub task: &'a str,
    pub thread: Option<&'a str>,
    /// The job whose call (`query_agent`, `execute_agent`) started this one.
    pub parent: Option<usize>,
    /// 0 for a job of the command line (or a chat's line), 1 for one it called...
    pub depth: u32,
}

/// A job's place in the run store: the run's log and the job's index in it.
#[derive(Clone)]
pub struct JobRow {
    pub log: Arc<RunLog>,
    pub job: usize,
}

/// A run being recorded. The writes go, in order, to a thread of the run's own that
/// owns the store, so that neither the start of a run nor the events it streams wait for
/// the disk; [`RunLog::ended`] waits for them all. The first write that fails is said
/// once (a warning) and the store is let go, so that the run goes on unrecorded.
pub struct RunLog {
    id: String,
    writes: mpsc::Sender<Write>,
    pending: Mutex<Pending>,
    /// The jobs recorded so far: the next one's index.
    jobs: AtomicUsize,
}

/// The calls whose results have not come yet, by id (their input), and each job's count
/// of calls recorded.
#[derive(Default)]
struct Pending {
    calls: BTreeMap<String, Value>,
    recorded: BTreeMap<usize, u32>,
}

/// One step for the writer: statements run in one transaction, or the run's end.
enum Write {
    Steps(Vec<Step>),
    /// Every write before it is done: say whether the run was recorded to its end.
    Flush(mpsc::Sender<bool>),
}

/// A statement and its parameters.
type Step = (&'static str, Vec<SqlValue>);

/// The longest [`RunLog::ended`] waits for the writes before it (a store another
/// codecrew holds locked has a busy timeout of its own).
const FLUSH_WAIT: Duration = Duration::from_secs(3);

impl RunLog {
    /// Records the run in the store at `path`, opened on the writer's thread. None only
    /// when no thread can be started; a store that cannot be opened or written is said
    /// once, there, and the run goes on unrecorded.
    /// Before the run's row is written, the oldest finished runs are removed while the
    /// store holds more than `bound` bytes.
    pub fn start(path: &Path, run: &NewRun, bound: u64) -> Option<RunLog> {
        let path = path.to_owned();
        let (id, first) = start_steps(run);
        RunLog::spawn(id, move |writes| {
            let store = Store::open(&path).and_then(|store| {
                match store.keep_under(bound) {
                    Ok(0) => {}
                    Ok(removed) => tracing::info!(removed, bound, "the run store was pruned"),
                    Err(error) => tracing::warn!("the run store was not pruned: {error}"),
                }
                run_steps(&store, &first).map_err(|error| store.sqlite(error))?;
                Ok(store)
            });
            match store {
                Ok(store) => serve(Some(store), writes),
                Err(error) => {
                    warn(&error);
                    serve(None, writes);
                }
            }
        })
    }

    /// As [`RunLog::start`], with the store opened and the run's row written before it
    /// returns: the error, if any, is returned instead of said.
    pub fn try_start(path: &Path, run: &NewRun) -> Result<RunLog> {
        let store = Store::open(path)?;
        let (id, first) = start_steps(run);
        run_steps(&store, &first).map_err(|error| store.sqlite(error))?;
        RunLog::spawn(id, move |writes| serve(Some(store), writes)).ok_or_else(|| {
            super::StoreError::Io {
                path: path.to_owned(),
                source: std::io::Error::other("cannot start the run store's writer"),
            }
        })
    }

    /// Records again in the run `id`, which an earlier process recorded (an editor's
    /// session loaded after a restart): the run is this process's again, not ended, and
    /// its next job follows the last it has. The store is opened, and the run read,
    /// before it returns.
    pub fn reopen(path: &Path, id: &str) -> Result<RunLog> {
        let store = Store::open(path)?;
        if let Some(progress) = store.progress(id)?
            && progress.pid != i64::from(std::process::id())
            && progress.running()
        {
            return Err(super::StoreError::InUse {
                id: id.to_owned(),
                pid: progress.pid,
            });
        }
        let next: i64 = store
            .conn
            .query_row(
                "SELECT COALESCE(MAX(idx) + 1, 0) FROM jobs WHERE run = ?1",
                [id],
                |row| row.get(0),
            )
            .map_err(|error| store.sqlite(error))?;
        let reopened = store
            .conn
            .execute(
                "UPDATE runs SET ended = NULL, exit_code = NULL, pid = ?2, pid_start = ?3
                 WHERE id = ?1",
                rusqlite::params![id, std::process::id(), own_start()],
            )
            .map_err(|error| store.sqlite(error))?;
        if reopened == 0 {
            return Err(super::StoreError::NotFound(id.to_owned()));
        }
        let log = RunLog::spawn(id.to_owned(), move |writes| serve(Some(store), writes))
            .ok_or_else(|| super::StoreError::Io {
                path: path.to_owned(),
                source: std::io::Error::other("cannot start the run store's writer"),
            })?;
        log.jobs
            .store(usize::try_from(next).unwrap_or(0), Ordering::Relaxed);
        Ok(log)
    }

    /// The run's task becomes `task` (a conversation started before its first line: an
    /// editor's session), searched as a task is.
    pub fn titled(&self, task: &str) {
        self.write(vec![(
            "UPDATE runs SET task = ?2, task_indexed = 0 WHERE id = ?1",
            vec![self.id.clone().into(), task.to_owned().into()],
        )]);
    }

    fn spawn(
        id: String,
        writer: impl FnOnce(mpsc::Receiver<Write>) + Send + 'static,
    ) -> Option<RunLog> {
        let (writes, received) = mpsc::channel();
        std::thread::Builder::new()
            .name("codecrew-runs".to_owned())
            .spawn(move || writer(received))
            .map_err(|error| tracing::warn!("the run store's writer: {error}"))
            .ok()?;
        if let Ok(mut open) = OPEN.lock() {
            open.push((id.clone(), writes.clone()));
        }
        Some(RunLog {
            id,
            writes,
            pending: Mutex::new(Pending::default()),
            jobs: AtomicUsize::new(0),
        })
    }

    /// The run's full id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// A job starts: its index in the run, in the order the jobs started.
    pub fn job_started(&self, job: &NewJob<'_>) -> usize {
        let index = self.jobs.fetch_add(1, Ordering::Relaxed);
        self.write(vec![(
            "INSERT INTO jobs (run, idx, agent, cli, model, task, thread, started, parent, depth)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            vec![
                self.id.clone().into(),
                int(index).into(),
                job.agent.to_owned().into(),
                job.cli.to_owned().into(),
                job.model.map(str::to_owned).into(),
                job.task.to_owned().into(),
                job.thread.map(str::to_owned).into(),
                now_ms().into(),
                job.parent.map(int).into(),
                job.depth.into(),
            ],
        )]);
        index
    }

    /// The git worktree job `index` works in (`execute --worktrees`), as JSON: set when
    /// it is made, again once settled.
    pub fn job_worktree(&self, index: usize, worktree: &serde_json::Value) {
        self.write(vec![(
            "UPDATE jobs SET worktree = ?3 WHERE run = ?1 AND idx = ?2",
            vec![
                self.id.clone().into(),
                int(index).into(),
                worktree.to_string().into(),
            ],
        )]);
    }

    /// One of job `index`'s events: a call is kept until its result (the one with its id)
    /// comes, then both are recorded. A sub-agent's events are its own job's, which the
    /// crew records.
    pub fn event(&self, index: usize, event: &JobEvent) {
        match event {
            JobEvent::ToolCall { id, call } => {
                if let Ok(mut pending) = self.pending.lock() {
                    pending.calls.insert(id.clone(), call.input.clone());
                }
            }
            JobEvent::ToolResult(result) => self.call(index, result),
            JobEvent::Turn(_)
            | JobEvent::TurnEnd { .. }
            | JobEvent::Text(_)
            | JobEvent::MessageEnd
            | JobEvent::Rejected(_)
            | JobEvent::Notice(_)
            | JobEvent::Retry(_)
            | JobEvent::Sub(_)
            | JobEvent::NativeTool { .. }
            | JobEvent::NativeToolResult { .. } => {}
        }
    }

    fn call(&self, index: usize, result: &ToolResult) {
        let (input, seq) = {
            let Ok(mut pending) = self.pending.lock() else {
                return;
            };
            let input = pending
                .calls
                .remove(&result.tool_call_id)
                .unwrap_or(Value::Null);
            let count = pending.recorded.entry(index).or_default();
            let seq = *count;
            *count += 1;
            (input, seq)
        };
        // What a call let through after asking about a sensitive file may be a secret:
        // the call is kept, not what it read.
        let withheld = result.decided.is_some_and(|decided| decided.guarded);
        let output = if withheld {
            Value::String(WITHHELD.to_owned()).to_string()
        } else {
            result.output.to_string()
        };
        let (output, cut) = capped(&output);
        let decided_by = result
            .decided
            .map(|Decided { by, .. }| by.name().to_owned());
        let error = result
            .error
            .as_ref()
            .and_then(|error| serde_json::to_string(error).ok());
        let status = serde_json::to_value(result.status)
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned))
            .unwrap_or_default();
        self.write(vec![(
            "INSERT INTO tool_calls (run, job, seq, at, name, input, status, output, output_cut,
                 error, duration_ms, decided_by, output_withheld, call_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            vec![
                self.id.clone().into(),
                int(index).into(),
                seq.into(),
                now_ms().into(),
                result.tool.clone().into(),
                input.to_string().into(),
                status.into(),
                output.to_owned().into(),
                cut.into(),
                error.into(),
                i64::try_from(result.duration_ms).unwrap_or(i64::MAX).into(),
                decided_by.into(),
                withheld.into(),
                result.tool_call_id.clone().into(),
            ],
        )]);
    }

    /// Job `index`'s answer is final.
    pub fn job_ended(&self, index: usize, report: &JobReport) {
        let usage = serde_json::to_string(&report.usage).ok();
        let stop = serde_json::to_value(report.stop_reason)
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned));
        let code = report.error_code.map(|code| code.as_str().to_owned());
        let data = report.data.as_ref().map(Value::to_string);
        // The answer goes into the search index when `logs search` next runs.
        self.write(vec![(
            "UPDATE jobs SET ended = ?3, session_id = ?4, answer = ?5, stop_reason = ?6,
                 success = ?7, error = ?8, error_code = ?9, turns = ?10, usage = ?11,
                 duration_ms = ?12, model = COALESCE(?13, model), data = ?14,
                 answer_indexed = ?15
             WHERE run = ?1 AND idx = ?2",
            vec![
                self.id.clone().into(),
                int(index).into(),
                now_ms().into(),
                report.session_id.clone().into(),
                report.response.clone().into(),
                stop.into(),
                report.success.into(),
                report.error.clone().into(),
                code.into(),
                report.turns.into(),
                usage.into(),
                i64::try_from(report.duration_ms).unwrap_or(i64::MAX).into(),
                report.model.clone().into(),
                data.into(),
                report.response.is_empty().into(),
            ],
        )]);
    }

    /// The run's answers are held to `schema` (`--schema`): kept once by its hash, which
    /// `codecrew logs --schema` finds the run by.
    pub fn answered_with(&self, schema: &AnswerSchema) {
        let hash = schema.hash();
        self.write(vec![
            (
                "INSERT OR IGNORE INTO schemas (hash, schema) VALUES (?1, ?2)",
                vec![hash.clone().into(), schema.json().to_string().into()],
            ),
            (
                "UPDATE runs SET schema = ?2 WHERE id = ?1",
                vec![self.id.clone().into(), hash.into()],
            ),
        ]);
    }

    /// Job `index` of a served run (a client of `codecrew mcp`) ends as the server does:
    /// it has no answer, only its calls.
    pub fn job_served(&self, index: usize) {
        self.write(vec![(
            "UPDATE jobs SET ended = ?3, stop_reason = 'served', success = 1,
                 duration_ms = ?3 - started
             WHERE run = ?1 AND idx = ?2",
            vec![self.id.clone().into(), int(index).into(), now_ms().into()],
        )]);
    }

    /// The run ends, with codecrew's exit code: recorded after every write before it,
    /// which this waits for (at most `FLUSH_WAIT`). Whether the run was recorded to
    /// its end.
    pub fn ended(&self, exit_code: u8) -> bool {
        if let Ok(mut open) = OPEN.lock() {
            open.retain(|(id, _)| *id != self.id);
        }
        let _ = self.writes.send(end_step(&self.id, exit_code));
        self.flush()
    }

    /// Waits (at most `FLUSH_WAIT`) until every write so far is done; whether the
    /// store still records them.
    pub fn flush(&self) -> bool {
        let (done, finished) = mpsc::channel();
        if self.writes.send(Write::Flush(done)).is_err() {
            return false;
        }
        finished.recv_timeout(FLUSH_WAIT).unwrap_or(false)
    }

    /// Hands `steps` to the writer (gone only when its thread died: nothing to say).
    fn write(&self, steps: Vec<Step>) {
        let _ = self.writes.send(Write::Steps(steps));
    }
}

/// The runs of this process not ended yet, and their writers: what [`end_open_runs`]
/// ends when the process cannot wait for them to end their own way.
static OPEN: Mutex<Vec<(String, mpsc::Sender<Write>)>> = Mutex::new(Vec::new());

/// The process is about to end at once (a second interrupt): each run not ended yet is
/// recorded as ended with `exit_code`, its writes so far done first. Waits at most half a
/// second in all; a run it cannot record stays "not finished".
pub fn end_open_runs(exit_code: u8) {
    let open = OPEN.lock().map(|mut open| std::mem::take(&mut *open));
    let deadline = std::time::Instant::now() + Duration::from_millis(500);
    for (id, writes) in open.unwrap_or_default() {
        let (done, finished) = mpsc::channel();
        if writes.send(end_step(&id, exit_code)).is_err()
            || writes.send(Write::Flush(done)).is_err()
        {
            continue;
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let _ = finished.recv_timeout(left);
    }
}

/// The step that records run `id`'s end.
fn end_step(id: &str, exit_code: u8) -> Write {
    Write::Steps(vec![(
        "UPDATE runs SET ended = ?2, exit_code = ?3 WHERE id = ?1",
        vec![id.to_owned().into(), now_ms().into(), exit_code.into()],
    )])
}

/// The run's id and the steps that record its start.
fn start_steps(run: &NewRun) -> (String, Vec<Step>) {
    let id = run.id.clone().unwrap_or_else(new_id);
    let (bytes, digest) = match &run.input {
        Some((bytes, digest)) => (
            Some(i64::try_from(*bytes).unwrap_or(i64::MAX)),
            Some(digest.clone()),
        ),
        None => (None, None),
    };
    // The task goes into the search index when `logs search` next runs (`task_indexed`).
    let steps = vec![(
        "INSERT INTO runs (id, started, pid, workspace, command, mode, task, input_bytes,
             input_sha256, continues, pid_start, task_indexed)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 0)",
        vec![
            id.clone().into(),
            now_ms().into(),
            std::process::id().into(),
            run.workspace.clone().into(),
            run.command.clone().into(),
            run.mode.clone().into(),
            run.task.clone().into(),
            bytes.into(),
            digest.into(),
            run.continues.clone().into(),
            own_start().into(),
        ],
    )];
    (id, steps)
}

/// Runs `steps` in one transaction.
fn run_steps(store: &Store, steps: &[Step]) -> rusqlite::Result<()> {
    let tx = store.conn.unchecked_transaction()?;
    for (sql, values) in steps {
        tx.prepare_cached(sql)?
            .execute(params_from_iter(values.iter()))?;
    }
    tx.commit()
}

/// The writer's loop: every step in order until every handle is gone; after a failure
/// (said once) the steps are dropped. The steps waiting when the writer comes to them go
/// in one transaction: a run whose events come quickly costs few commits.
fn serve(mut store: Option<Store>, writes: mpsc::Receiver<Write>) {
    // The run's first commit is behind it (its row), and ran SQLite's checkpoint if the
    // WAL was long. The rest of the run's commits leave the WAL to the next run's first
    // unless it grows far past its bound (a long chat): the last of them is what
    // codecrew's exit waits for, and a checkpoint's two fsyncs there held it until the
    // disk answered (one run's end in three, in the shared bench).
    if let Some(open) = &store
        && let Err(error) = open.checkpoint_past(super::WAL_PAGES_IN_A_RUN)
    {
        warn(&open.sqlite(error));
        store = None;
    }
    let mut next = writes.recv().ok();
    while let Some(write) = next.take() {
        match write {
            Write::Steps(mut steps) => {
                // Gather what is already waiting, up to a flush (answered after).
                loop {
                    match writes.try_recv() {
                        Ok(Write::Steps(more)) => steps.extend(more),
                        Ok(flush @ Write::Flush(_)) => {
                            next = Some(flush);
                            break;
                        }
                        Err(_) => break,
                    }
                }
                if let Some(open) = &store
                    && let Err(error) = run_steps(open, &steps)
                {
                    warn(&open.sqlite(error));
                    store = None;
                }
            }
            Write::Flush(done) => {
                let _ = done.send(store.is_some());
            }
        }
        if next.is_none() {
            next = writes.recv().ok();
        }
    }
}

/// When this process started, as `/proc` gives it (what `ps` compares a pid's with).
fn own_start() -> Option<i64> {
    static START: std::sync::OnceLock<Option<i64>> = std::sync::OnceLock::new();
    *START.get_or_init(|| {
        i32::try_from(std::process::id())
            .ok()
            .and_then(codecrew_policy::process::started_ms)
    })
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

/// A new run's id: 16 hex digits from the OS's random source ([`crate::ids::random_hex`]).
/// Made by the run's log, or beforehand by whoever must name the run before it starts
/// ([`NewRun::id`]).
pub fn new_id() -> String {
    crate::ids::random_hex()
}
