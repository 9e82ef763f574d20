//! `codecrew ps`, `kill` and `result`: the runs that have not ended, read from the run
//! store; one stopped as Ctrl-C would stop it; one's answers printed once it has ended.
//!
//! A run is running while its row has no end and the process that records it lives
//! ([`runs::process_runs`]: its pid, started by the time the run was, the user's). A row
//! without an end whose process is gone is dead: its codecrew was killed, or the machine
//! restarted.

use std::fmt::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use codecrew::cli::{KillArgs, OutputArg, PsArgs, ResultArgs};
use codecrew::output::console::{self, Text};
use codecrew::output::render::failure_line;
use codecrew_core::runs::{self, JobDetail, Progress, RunDetail, Store, StoreError};
use nix::sys::signal::{Signal, kill as signal};
use nix::unistd::Pid;
use serde_json::{Value, json};

use super::logs::{agents, duration, home_relative, minute, now_ms, shortened, table};

/// `result` of a run still going, without `--wait` (sysexits' EX_TEMPFAIL: try later).
pub const EXIT_RUNNING: u8 = 75;
/// How often `result --wait` and `kill` read the store.
const POLL: Duration = Duration::from_millis(200);
/// How long `kill` gives a run to stop after its interrupt, before a second one.
const STOP_WAIT: Duration = Duration::from_secs(10);
/// How long after the second interrupt, which stops it at once.
const STOP_NOW_WAIT: Duration = Duration::from_secs(5);
/// The most of a task `ps` shows.
const TASK_WIDTH: usize = 50;

pub fn ps(args: &PsArgs) -> anyhow::Result<ExitCode> {
    let store = match open() {
        Ok(store) => store,
        Err(code) => return Ok(code),
    };
    let unfinished = match store.as_ref().map(Store::unfinished).transpose() {
        Ok(runs) => runs.unwrap_or_default(),
        Err(error) => {
            console::error(error);
            return Ok(ExitCode::from(1));
        }
    };
    let listed: Vec<(runs::RunSummary, bool)> = unfinished
        .into_iter()
        .map(|run| {
            let running = run.running();
            (run, running)
        })
        .collect();
    if args.output == OutputArg::Json {
        let runs: Vec<Value> = listed
            .iter()
            .map(|(run, running)| {
                let mut value = serde_json::to_value(run).unwrap_or(Value::Null);
                if let Some(object) = value.as_object_mut() {
                    object.insert("state".to_owned(), json!(state_name(*running)));
                }
                value
            })
            .collect();
        console::stdout().json_pretty(&json!({ "runs": runs }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if listed.is_empty() {
        console::stdout().show(&Text::plain("No run is going.\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let now = now_ms();
    let rows: Vec<[String; 8]> = listed
        .iter()
        .map(|(run, running)| {
            [
                run.short_id.clone(),
                minute(&run.started),
                duration(now - run.started_ms),
                run.pid.to_string(),
                state_name(*running).to_owned(),
                agents(run),
                home_relative(&run.workspace),
                shortened(&run.task, TASK_WIDTH),
            ]
        })
        .collect();
    let titles = [
        "ID",
        "STARTED (UTC)",
        "AGE",
        "PID",
        "STATE",
        "AGENTS",
        "WORKSPACE",
        "TASK",
    ];
    // Tasks and workspaces are anyone's text: shown inert.
    console::stdout().show(&Text::plain(&table(&titles, &rows)?))?;
    if listed.iter().any(|(_, running)| !running) {
        console::note(
            "dead: its codecrew was killed, or the machine restarted, before the run ended; \
             `codecrew logs show ID` shows what it did, `codecrew logs rm ID` removes it",
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn kill(args: &KillArgs) -> anyhow::Result<ExitCode> {
    let (store, id) = match find(&args.id) {
        Ok(found) => found,
        Err(code) => return Ok(code),
    };
    let short = store.short_id(&id).unwrap_or_else(|_| id.clone());
    let progress = match store.progress(&id) {
        Ok(Some(progress)) => progress,
        Ok(None) => return Ok(store_error(&StoreError::NotFound(args.id.clone()))),
        Err(error) => return Ok(store_error(&error)),
    };
    if progress.ended_ms.is_some() {
        console::error(format_args!(
            "run {short} has already ended{}; `codecrew result {short}` prints its answers",
            exit_code_words(progress.exit_code)
        ));
        return Ok(ExitCode::from(1));
    }
    if !progress.running() {
        console::error(format_args!(
            "run {short} is not running: {}",
            dead_words(&short, progress.pid)
        ));
        return Ok(ExitCode::from(1));
    }
    // Never 0 or negative, which would signal a whole process group (`running` holds
    // only of a real pid; said again here, where it matters).
    let pid = match i32::try_from(progress.pid) {
        Ok(pid) if pid > 0 => Pid::from_raw(pid),
        _ => {
            console::error(format_args!(
                "run {short} names no process (pid {})",
                progress.pid
            ));
            return Ok(ExitCode::from(1));
        }
    };
    // SIGINT, as Ctrl-C at its terminal: the run stops its agents, puts back what their
    // walls hold and records its end.
    if let Err(errno) = signal(pid, Signal::SIGINT) {
        console::error(format_args!(
            "cannot interrupt run {short} (pid {pid}): {}",
            errno.desc()
        ));
        return Ok(ExitCode::from(1));
    }
    let stopped = match wait_end(&store, &id, progress, STOP_WAIT).await? {
        End::Ended(code) => format!("Stopped run {short}{}.\n", exit_code_words(code)),
        End::Gone => format!(
            "Stopped run {short}; its codecrew ended without recording the run's end (the \
             store keeps it not finished).\n"
        ),
        End::Running => {
            // A second interrupt is what codecrew takes as "stop now": its CLIs killed at
            // once, what their walls hold put back, no end recorded.
            console::note(format_args!(
                "run {short} did not stop within {} s; interrupting it again to stop it at once",
                STOP_WAIT.as_secs()
            ));
            if let Err(errno) = signal(pid, Signal::SIGINT) {
                console::error(format_args!(
                    "cannot interrupt run {short} (pid {pid}) again: {}",
                    errno.desc()
                ));
                return Ok(ExitCode::from(1));
            }
            match wait_end(&store, &id, progress, STOP_NOW_WAIT).await? {
                End::Ended(code) => format!("Stopped run {short}{}.\n", exit_code_words(code)),
                End::Gone => format!(
                    "Stopped run {short} at once: its agents' CLIs killed, what their walls \
                     held put back; the store keeps it not finished.\n"
                ),
                End::Running => {
                    console::error(format_args!(
                        "run {short} (pid {pid}) did not stop; `kill -9 {pid}` ends it (the \
                         next codecrew run puts back what its CLIs' walls hold)"
                    ));
                    return Ok(ExitCode::from(1));
                }
            }
        }
    };
    console::stdout().show(&Text::plain(&stopped))?;
    Ok(ExitCode::SUCCESS)
}

pub async fn result(args: &ResultArgs) -> anyhow::Result<ExitCode> {
    let (store, id) = match find(&args.id) {
        Ok(found) => found,
        Err(code) => return Ok(code),
    };
    let short = store.short_id(&id).unwrap_or_else(|_| id.clone());
    let mut signals = if args.wait {
        super::Signals::new()
    } else {
        None
    };
    loop {
        let progress = match store.progress(&id) {
            Ok(Some(progress)) => progress,
            Ok(None) => return Ok(store_error(&StoreError::NotFound(args.id.clone()))),
            Err(error) => return Ok(store_error(&error)),
        };
        if progress.ended_ms.is_some() {
            let code = progress
                .exit_code
                .and_then(|code| u8::try_from(code).ok())
                .unwrap_or(1);
            return answers(&store, &id, "ended", args.output).map(|()| ExitCode::from(code));
        }
        if !progress.running() {
            // It may have recorded its end and exited between the two looks.
            if store
                .progress(&id)?
                .is_some_and(|again| again.ended_ms.is_some())
            {
                continue;
            }
            answers(&store, &id, "dead", args.output)?;
            console::error(format_args!(
                "run {short} has no end: {}",
                dead_words(&short, progress.pid)
            ));
            return Ok(ExitCode::from(1));
        }
        if !args.wait {
            if args.output == OutputArg::Json {
                console::stdout().json_pretty(&json!({ "run": id, "state": "running" }))?;
            }
            console::error(format_args!(
                "run {short} is still running (for {}); `codecrew result {short} --wait` waits \
                 for its answer",
                duration(now_ms() - progress.started_ms)
            ));
            return Ok(ExitCode::from(EXIT_RUNNING));
        }
        let interrupted = async {
            match &mut signals {
                Some(signals) => signals.next().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            code = interrupted => {
                console::note(format_args!(
                    "stopped waiting; run {short} goes on (`codecrew result {short} --wait` \
                     waits again, `codecrew kill {short}` stops it)"
                ));
                return Ok(ExitCode::from(code));
            }
        }
    }
}

/// How a run stood when [`wait_end`] stopped waiting.
enum End {
    /// Its end is recorded, with this exit code.
    Ended(Option<i64>),
    /// Its process is gone without recording the end.
    Gone,
    /// Still running at the deadline.
    Running,
}

/// Waits (at most `limit`) until the run `id` ends or its process is gone.
async fn wait_end(
    store: &Store,
    id: &str,
    progress: Progress,
    limit: Duration,
) -> Result<End, StoreError> {
    let deadline = Instant::now() + limit;
    loop {
        let now = store.progress(id)?.unwrap_or(progress);
        if now.ended_ms.is_some() {
            return Ok(End::Ended(now.exit_code));
        }
        if !now.running() {
            // The end may have been recorded just before the process exited.
            let last = store.progress(id)?.unwrap_or(now);
            return Ok(match last.ended_ms {
                Some(_) => End::Ended(last.exit_code),
                None => End::Gone,
            });
        }
        if Instant::now() >= deadline {
            return Ok(End::Running);
        }
        tokio::time::sleep(POLL.min(Duration::from_millis(100))).await;
    }
}

/// The run's answers: each job's text (under its agent's name when there are several),
/// a failure on stderr; or, with `--output json`, the run and its jobs. `state` is
/// `ended` or `dead` (only the answers that were final).
fn answers(store: &Store, id: &str, state: &str, output: OutputArg) -> anyhow::Result<()> {
    let run = store.show(id)?;
    if output == OutputArg::Json {
        console::stdout().json_pretty(&result_json(&run, state))?;
        return Ok(());
    }
    let palette = console::colors().stderr;
    let many = run.jobs.len() > 1;
    let mut out = String::new();
    for job in &run.jobs {
        if many {
            if !out.is_empty() {
                out.push('\n');
            }
            writeln!(out, "[@{}{}]", job.agent, model_suffix(job))?;
        }
        match &job.answer {
            Some(answer) if !answer.is_empty() => {
                out.push_str(answer);
                if !answer.ends_with('\n') {
                    out.push('\n');
                }
            }
            _ if many => writeln!(out, "(no answer)")?,
            _ => {}
        }
    }
    // The answers are the models' text: shown inert.
    console::stdout().show(&Text::plain(&out))?;
    for job in &run.jobs {
        match (job.success, &job.error) {
            (Some(false), Some(error)) => console::line(&failure_line(palette, &job.agent, error)),
            (None, _) if state == "ended" => console::line(&failure_line(
                palette,
                &job.agent,
                "it gave no answer before the run ended",
            )),
            _ => {}
        }
        // The answer of an agent that worked in a worktree is only half of it.
        if let Some(worktree) = &job.worktree
            && worktree["change"]["files"]
                .as_u64()
                .is_some_and(|files| files > 0)
        {
            console::line(&Text::plain(&format!(
                "@{}'s change is on {} (`codecrew diff {short} {agent}`, `codecrew apply {short} {agent}`)\n",
                job.agent,
                worktree["branch"].as_str().unwrap_or_default(),
                short = run.run.id.get(..8).unwrap_or(&run.run.id),
                agent = job.agent,
            )));
        }
    }
    Ok(())
}

/// `result --output json`: the run, how it stands, and each job's answer.
fn result_json(run: &RunDetail, state: &str) -> Value {
    let jobs: Vec<Value> = run
        .jobs
        .iter()
        .map(|job| {
            json!({
                "agent": job.agent,
                "model": job.model,
                "answer": job.answer,
                "success": job.success,
                "stop_reason": job.stop_reason,
                "error": job.error,
                "error_code": job.error_code,
                "worktree": job.worktree,
            })
        })
        .collect();
    json!({
        "run": run.run.id,
        "state": state,
        "status": run.run.status,
        "exit_code": run.run.exit_code,
        "jobs": jobs,
    })
}

fn model_suffix(job: &JobDetail) -> String {
    job.model
        .as_deref()
        .map(|model| format!(":{model}"))
        .unwrap_or_default()
}

fn state_name(running: bool) -> &'static str {
    if running { "running" } else { "dead" }
}

fn exit_code_words(code: Option<i64>) -> String {
    code.map(|code| format!(" (exit code {code})"))
        .unwrap_or_default()
}

/// Why a run without an end is not running, and what to do.
fn dead_words(short: &str, pid: i64) -> String {
    format!(
        "its codecrew (pid {pid}) is gone without ending it (killed, or the machine \
         restarted); `codecrew logs show {short}` shows what it did"
    )
}

/// The run store, when there is one (None: no run was ever kept). Its error said, with
/// the exit code.
fn open() -> Result<Option<Store>, ExitCode> {
    let Some(path) = runs::default_path() else {
        console::error("no run store: neither XDG_STATE_HOME nor HOME is set");
        return Err(ExitCode::from(1));
    };
    Store::open_existing(&path).map_err(|error| store_error(&error))
}

/// The store and the whole id of the run `prefix` names. Its error said, with the exit
/// code: 2 for an id that names no run (a usage error), 1 for a store that cannot be read.
fn find(prefix: &str) -> Result<(Store, String), ExitCode> {
    let Some(store) = open()? else {
        return Err(store_error(&StoreError::NotFound(prefix.to_owned())));
    };
    match store.resolve(prefix) {
        Ok(id) => Ok((store, id)),
        Err(error) => Err(store_error(&error)),
    }
}

/// Says `error`; its exit code.
fn store_error(error: &StoreError) -> ExitCode {
    console::error(error);
    match error {
        StoreError::NotFound(_)
        | StoreError::Ambiguous { .. }
        | StoreError::BadId(_)
        | StoreError::NothingToResume(_) => ExitCode::from(super::EXIT_USAGE),
        StoreError::InUse { .. } => ExitCode::from(1),
        StoreError::Io { .. }
        | StoreError::File(_)
        | StoreError::Sqlite { .. }
        | StoreError::Newer { .. } => ExitCode::from(1),
    }
}
