//! `codecrew logs [show|search|rm|prune]`: the runs kept in the run store
//! (`$XDG_STATE_HOME/codecrew/runs.db`), which the engine writes as each run goes.

use std::fmt::Write;
use std::path::Path;
use std::process::ExitCode;

use codecrew::cli::{LogsArgs, LogsCommand, LogsListArgs, LogsStatus, OutputArg, Since};
use codecrew::output::console::{self, Text};
use codecrew_core::runs::{self, Filter, RunDetail, RunStatus, RunSummary, Store};
use codecrew_core::schema::AnswerSchema;
use codecrew_core::usage::JobUsage;
use serde_json::json;

/// The most of a task a listing shows.
const TASK_WIDTH: usize = 60;

pub fn run(args: &LogsArgs, workspace: &Path) -> anyhow::Result<ExitCode> {
    let Some(path) = runs::default_path() else {
        console::error("no run store: neither XDG_STATE_HOME nor HOME is set");
        return Ok(ExitCode::from(1));
    };
    let store = match Store::open_existing(&path) {
        Ok(store) => store,
        Err(error) => {
            console::error(error);
            return Ok(ExitCode::from(1));
        }
    };
    let done = match (&args.command, store) {
        (None, store) => list(store.as_ref(), &args.list, workspace),
        (Some(LogsCommand::Show { id, output }), Some(store)) => show(&store, id, *output),
        (
            Some(LogsCommand::Search {
                text,
                limit,
                output,
            }),
            store,
        ) => search(store.as_ref(), &text.join(" "), *limit, *output),
        (Some(LogsCommand::Rm { id }), Some(store)) => remove(&store, id),
        (Some(LogsCommand::Prune { older_than, output }), store) => {
            prune(store.as_ref(), *older_than, *output)
        }
        (Some(LogsCommand::Show { id, .. } | LogsCommand::Rm { id }), None) => {
            Err(runs::StoreError::NotFound(id.clone()).into())
        }
    };
    match done {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(error) => match error.downcast::<runs::StoreError>() {
            Ok(error) => {
                console::error(error);
                Ok(ExitCode::from(1))
            }
            Err(error) => Err(error),
        },
    }
}

fn list(store: Option<&Store>, args: &LogsListArgs, workspace: &Path) -> anyhow::Result<()> {
    let schema = match (&args.schema, &args.schema_multi) {
        (Some(schema), _) => Some((schema, false)),
        (None, Some(schema)) => Some((schema, true)),
        (None, None) => None,
    };
    let schema = match schema {
        Some((argument, multi)) => {
            let dir = std::env::current_dir().unwrap_or_default();
            Some(AnswerSchema::from_argument(argument, multi, &dir)?.hash())
        }
        None if args.data => {
            anyhow::bail!("--data prints the data of the runs of one schema: give it with --schema")
        }
        None => None,
    };
    let filter = Filter {
        limit: args.limit,
        workspace: args.here.then(|| workspace.display().to_string()),
        agent: args.agent.clone(),
        since_ms: args.since.map(since_ms),
        status: args.status.map(|status| match status {
            LogsStatus::Ok => RunStatus::Ok,
            LogsStatus::Failed => RunStatus::Failed,
            LogsStatus::NotFinished => RunStatus::NotFinished,
        }),
        command: None,
        schema,
    };
    if args.data {
        for answer in store
            .map(|store| store.data(&filter))
            .transpose()?
            .unwrap_or_default()
        {
            console::stdout().json_line(&answer.data)?;
        }
        return Ok(());
    }
    let listed = match store {
        Some(store) => store.list(&filter)?,
        None => Vec::new(),
    };
    if args.output == OutputArg::Json {
        console::stdout().json_pretty(&json!({ "runs": listed }))?;
        return Ok(());
    }
    if listed.is_empty() {
        let filtered =
            args.here || args.agent.is_some() || args.since.is_some() || filter.schema.is_some();
        let text = if filtered || args.status.is_some() {
            "No run matches.\n"
        } else {
            "No runs kept yet; each run of query, execute and chat is kept here.\n"
        };
        console::stdout().show(&Text::plain(text))?;
        return Ok(());
    }
    let rows: Vec<[String; 7]> = listed
        .iter()
        .map(|run| {
            [
                run.short_id.clone(),
                minute(&run.started),
                run.status.name().to_owned(),
                run.duration_ms.map_or_else(|| "-".to_owned(), duration),
                agents(run),
                home_relative(&run.workspace),
                shortened(&run.task, TASK_WIDTH),
            ]
        })
        .collect();
    let titles = [
        "ID",
        "STARTED (UTC)",
        "STATUS",
        "TIME",
        "AGENTS",
        "WORKSPACE",
        "TASK",
    ];
    // Tasks and workspaces are anyone's text: shown inert.
    console::stdout().show(&Text::plain(&table(&titles, &rows)?))?;
    Ok(())
}

/// `rows` in columns under `titles`, each as wide as its widest cell, the last as it is.
pub(super) fn table<const N: usize>(
    titles: &[&str; N],
    rows: &[[String; N]],
) -> Result<String, std::fmt::Error> {
    let widths: Vec<usize> = (0..N)
        .map(|column| {
            rows.iter()
                .filter_map(|row| row.get(column))
                .map(|cell| cell.chars().count())
                .chain(titles.get(column).map(|title| title.len()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    let line = |out: &mut String, cells: Vec<&str>| -> std::fmt::Result {
        let last = cells.len().saturating_sub(1);
        for (column, cell) in cells.iter().enumerate() {
            if column == last {
                writeln!(out, "{cell}")?;
            } else {
                let width = widths.get(column).copied().unwrap_or(0);
                write!(out, "{cell:<width$}  ")?;
            }
        }
        Ok(())
    };
    line(&mut out, titles.to_vec())?;
    for row in rows {
        line(&mut out, row.iter().map(String::as_str).collect())?;
    }
    Ok(out)
}

fn show(store: &Store, id: &str, output: OutputArg) -> anyhow::Result<()> {
    let run = store.show(id)?;
    if output == OutputArg::Json {
        console::stdout().json_pretty(&run)?;
        return Ok(());
    }
    let mut out = String::new();
    write_run(&mut out, &run)?;
    console::stdout().show(&Text::plain(&out))?;
    Ok(())
}

fn write_run(out: &mut String, detail: &RunDetail) -> std::fmt::Result {
    let run = &detail.run;
    writeln!(out, "run {} ({})", run.id, run.status.name())?;
    writeln!(
        out,
        "  {} in {}, {} mode",
        run.command, run.workspace, run.mode
    )?;
    let ended = match (&run.ended, run.duration_ms) {
        (Some(ended), Some(ms)) => format!(", ended {ended} after {}", duration(ms)),
        _ => ", not finished".to_owned(),
    };
    let exit = run
        .exit_code
        .map(|code| format!(", exit code {code}"))
        .unwrap_or_default();
    writeln!(
        out,
        "  started {}{ended}{exit} (pid {})",
        run.started, run.pid
    )?;
    if let (Some(bytes), Some(digest)) = (detail.input_bytes, &detail.input_sha256) {
        writeln!(out, "  piped input: {bytes} bytes, sha256 {digest}")?;
    }
    if let Some(earlier) = &run.continues {
        writeln!(out, "  went on from run {earlier}")?;
    }
    for job in &detail.jobs {
        let model = job
            .model
            .as_deref()
            .map(|model| format!(":{model}"))
            .unwrap_or_default();
        // A crew call's job: indented by its depth, naming the job that called it.
        let called = job
            .parent
            .and_then(|parent| detail.jobs.iter().find(|other| other.index == parent))
            .map(|parent| format!(", called by @{} (job {})", parent.agent, parent.index))
            .unwrap_or_default();
        writeln!(
            out,
            "\n{}[job {}: @{}{model}] ({}{called})",
            "  ".repeat(usize::try_from(job.depth).unwrap_or(0)),
            job.index,
            job.agent,
            job.cli
        )?;
        writeln!(out, "task:")?;
        for line in job.task.lines() {
            writeln!(out, "  {line}")?;
        }
        if let Some(worktree) = &job.worktree {
            let text = |key: &str| worktree[key].as_str().unwrap_or_default().to_owned();
            let change = &worktree["change"];
            let changed = if change.is_object() {
                format!(
                    ": {} files, +{} -{}",
                    change["files"], change["added"], change["removed"]
                )
            } else {
                String::new()
            };
            writeln!(
                out,
                "worktree: {} ({}, from {}){changed}",
                text("path"),
                text("branch"),
                text("base").get(..12).unwrap_or_default(),
            )?;
        }
        for call in &job.tool_calls {
            let input = call.input.to_string();
            let decided = call
                .decided_by
                .as_deref()
                .map(|by| format!(", decided by {by}"))
                .unwrap_or_default();
            let output = if call.output_withheld {
                ", output not kept (it read what the policy guards)"
            } else if call.output_cut {
                ", output cut at 64 KiB"
            } else {
                ""
            };
            writeln!(
                out,
                "call {}({}) -> {} in {}{decided}{output}",
                call.name,
                shortened(&input, 80),
                call.status,
                duration(call.duration_ms),
            )?;
        }
        match &job.answer {
            Some(answer) => {
                writeln!(out, "answer:")?;
                for line in answer.lines() {
                    writeln!(out, "  {line}")?;
                }
            }
            None => writeln!(out, "(no answer: the job did not finish)")?,
        }
        if let Some(error) = &job.error {
            let code = job
                .error_code
                .as_deref()
                .map(|code| format!(" [{code}]"))
                .unwrap_or_default();
            writeln!(out, "error{code}: {error}")?;
        }
        let usage: Option<JobUsage> = job
            .usage
            .clone()
            .and_then(|usage| serde_json::from_value(usage).ok());
        if let Some(usage) = usage {
            writeln!(out, "used: {}", usage.summary())?;
        }
        if let Some(session) = &job.session_id {
            writeln!(out, "session: {session}")?;
        }
        if let Some(thread) = &job.thread {
            writeln!(out, "thread: {thread}")?;
        }
    }
    Ok(())
}

fn search(
    store: Option<&Store>,
    text: &str,
    limit: usize,
    output: OutputArg,
) -> anyhow::Result<()> {
    let hits = match store {
        Some(store) => store.search(text, limit)?,
        None => Vec::new(),
    };
    if output == OutputArg::Json {
        console::stdout().json_pretty(&json!({ "matches": hits }))?;
        return Ok(());
    }
    let mut out = String::new();
    if hits.is_empty() {
        writeln!(out, "No run's task or answer holds {text:?}.")?;
    }
    for hit in &hits {
        writeln!(
            out,
            "{}  {}  {}  {}: {}",
            hit.run.short_id,
            minute(&hit.run.started),
            agents(&hit.run),
            hit.found_in,
            shortened(&hit.snippet, 100)
        )?;
    }
    console::stdout().show(&Text::plain(&out))?;
    Ok(())
}

fn remove(store: &Store, id: &str) -> anyhow::Result<()> {
    let removed = store.remove(id)?;
    console::stdout().show(&Text::plain(&format!("Removed run {removed}.\n")))?;
    Ok(())
}

fn prune(
    store: Option<&Store>,
    older_than: std::time::Duration,
    output: OutputArg,
) -> anyhow::Result<()> {
    let before = since_ms(Since::Ago(older_than));
    let removed = match store {
        Some(store) => store.prune(before)?,
        None => 0,
    };
    if output == OutputArg::Json {
        console::stdout().json_pretty(&json!({ "removed": removed }))?;
    } else {
        let runs = if removed == 1 { "run" } else { "runs" };
        let text = format!("Removed {removed} {runs}.\n");
        console::stdout().show(&Text::plain(&text))?;
    }
    Ok(())
}

/// The time `since` names, in ms since the epoch.
fn since_ms(since: Since) -> i64 {
    match since {
        Since::Day(days) => days.saturating_mul(86_400_000),
        Since::Ago(ago) => {
            let ago = i64::try_from(ago.as_millis()).unwrap_or(i64::MAX);
            now_ms().saturating_sub(ago)
        }
    }
}

pub(super) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

/// `2026-11-28T10:04:05Z` -> `2026-11-28 10:04`.
pub(super) fn minute(rfc3339: &str) -> String {
    rfc3339.get(..16).unwrap_or(rfc3339).replace('T', " ")
}

pub(super) fn duration(ms: i64) -> String {
    match ms {
        ..1_000 => format!("{}ms", ms.max(0)),
        1_000..60_000 => format!("{:.1}s", ms as f64 / 1000.0),
        60_000..3_600_000 => format!("{}m{:02}s", ms / 60_000, ms % 60_000 / 1000),
        _ => format!("{}h{:02}m", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

pub(super) fn agents(run: &RunSummary) -> String {
    if run.agents.is_empty() {
        return "-".to_owned();
    }
    let mentions: Vec<String> = run.agents.iter().map(|agent| format!("@{agent}")).collect();
    mentions.join(",")
}

pub(super) fn home_relative(path: &str) -> String {
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() && home != "/" => match path.strip_prefix(&home) {
            Some("") => "~".to_owned(),
            Some(rest) if rest.starts_with('/') => format!("~{rest}"),
            _ => path.to_owned(),
        },
        _ => path.to_owned(),
    }
}

/// The first line of `text`, at most `width` characters (`…` where it was cut).
pub(super) fn shortened(text: &str, width: usize) -> String {
    let first = text
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("");
    let first = first.trim();
    let cut = first.chars().count() > width || text.trim().lines().nth(1).is_some();
    if !cut {
        return first.to_owned();
    }
    let kept: String = first.chars().take(width.saturating_sub(1)).collect();
    format!("{}…", kept.trim_end())
}
