//! `query --detach` and `execute --detach`: the run handed to a codecrew of its own that
//! goes on in the background, its id printed at once.
//!
//! ```text
//! this codecrew: the config, stdin and the mentions checked (a mistake is said here,
//!   exit 2) -> a run id -> `codecrew <the same arguments> --run-id ID` started in a
//!   session of its own (no terminal), stdin the input read here, stdout /dev/null
//!   -> waits until the child has recorded its run in the run store, relaying what it
//!   said until then (and its exit code, if it ended first) -> prints the id, exits 0
//! the child: the run as without a terminal (nobody is asked), recorded under ID; what
//!   it says once recorded is lost (its answers and errors are in the store)
//! ```
//!
//! The child's stderr is a pipe to this codecrew until this one exits, and nothing after:
//! its console ignores a write that fails, and its stdout, where the renderer's writes
//! must not fail, is /dev/null.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::process::{ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Context;
use codecrew::cli::{RunArgs, RunOutput};
use codecrew::output::console::{self, Text};
use codecrew_core::piped::Piped;
use codecrew_core::runs::{self, Store};
use serde_json::json;

/// The longest the child may take to record its run (its config read, its agents
/// planned, the store opened, perhaps behind another codecrew's write).
const RECORD_WAIT: Duration = Duration::from_secs(20);
/// How often the store is read meanwhile.
const POLL: Duration = Duration::from_millis(20);

pub async fn start(args: RunArgs, options: super::ToolOptions) -> anyhow::Result<ExitCode> {
    let engine = options.engine()?;
    // The answer is only ever in the run store: a run kept out of it could not be read.
    let Some(path) = engine.runs_path() else {
        console::error(
            "--detach keeps the run's answer in the run store for `codecrew result`, and this \
             run would not be kept there: drop --no-log (`[logs] enabled = false` in your \
             user config, or neither XDG_STATE_HOME nor HOME set, also keep runs out)",
        );
        return Ok(ExitCode::from(super::EXIT_USAGE));
    };
    let store = match Store::open(&path) {
        Ok(store) => store,
        Err(error) => {
            console::error(format_args!(
                "--detach keeps the run's answer in the run store, which cannot be used: {error}"
            ));
            return Ok(ExitCode::from(1));
        }
    };
    let Some(piped) = super::tasks::read_stdin(&args).await else {
        return Ok(ExitCode::from(super::EXIT_USAGE));
    };
    let Some((tasks, beside)) = super::tasks::tasks(&args, piped.clone()) else {
        return Ok(ExitCode::from(super::EXIT_USAGE));
    };
    // What `Engine::start` checks first, here: a mistyped agent, or a run to go on
    // from that is not there, is said now (a usage error, exit 2), not left to a run
    // nobody watches.
    let Some((_, jobs)) = super::tasks::jobs(&engine, &args, &tasks, &beside) else {
        return Ok(ExitCode::from(super::EXIT_USAGE));
    };
    codecrew_core::jobs::check(engine.config(), &jobs)?;

    let id = runs::new_id();
    let (input, cut) = match piped {
        Piped::Text { text, cut } => (Some(text), cut),
        Piped::Nothing | Piped::Silent(_) => (None, false),
    };
    let exe = std::env::current_exe()
        .context("cannot find codecrew's own program to run in the background")?;
    let mut command = std::process::Command::new(exe);
    command
        .args(child_args(std::env::args_os().skip(1), &id, cut))
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    codecrew_policy::process::own_session(&mut command);
    // Started with std's Command, not registered with codecrew's process groups: the
    // sweep as this codecrew exits (`Engine::finish`) kills only what it started
    // through them, and leaves this child alone.
    let mut child = command
        .spawn()
        .context("cannot start codecrew in the background")?;
    let writer = match (child.stdin.take(), input) {
        (Some(mut stdin), Some(text)) => Some(std::thread::spawn(move || {
            // A child that ended before reading it says why on stderr.
            let _ = stdin.write_all(text.as_bytes());
        })),
        _ => None,
    };
    let said = match child.stderr.take() {
        Some(stderr) => lines_of(stderr),
        None => mpsc::channel().1,
    };

    let deadline = Instant::now() + RECORD_WAIT;
    let recorded = loop {
        relay(&said);
        if store.progress(&id)?.is_some() {
            break true;
        }
        if let Some(status) = child.try_wait()? {
            // It may have recorded its run and ended between the two looks.
            if store.progress(&id)?.is_some() {
                break true;
            }
            // What it said, to its end (its stderr closed; a while at most, should
            // something it started still hold it).
            let until = Instant::now() + Duration::from_secs(2);
            while let Ok(line) = said.recv_timeout(until.saturating_duration_since(Instant::now()))
            {
                console::line(&Text::plain(&line));
            }
            return Ok(ExitCode::from(ended_early(status)));
        }
        if Instant::now() >= deadline {
            break false;
        }
        tokio::time::sleep(POLL).await;
    };
    relay(&said);
    if recorded {
        // It has read its input by now: the writer is done.
        if let Some(writer) = writer {
            let _ = writer.join();
        }
    } else {
        console::warn(format_args!(
            "the run in the background has not been recorded in the run store after {} s; \
             `codecrew ps` lists it once it is",
            RECORD_WAIT.as_secs()
        ));
    }
    match args.output {
        RunOutput::Json | RunOutput::StreamJson => {
            console::stdout().json_line(&json!({ "run": id }))?;
        }
        RunOutput::Text => {
            console::stdout().show(&Text::plain(&format!("{id}\n")))?;
        }
    }
    if !args.quiet {
        let short = store.short_id(&id).unwrap_or_else(|_| id.clone());
        console::note(format_args!(
            "running in the background; `codecrew result {short} --wait` prints its answer, \
             `codecrew kill {short}` stops it"
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// The child's arguments: this codecrew's, `--detach` replaced by the run's id (and
/// whether the input handed on was cut). Only before a `--`: past it, `--detach` is a task.
fn child_args(args: impl IntoIterator<Item = OsString>, id: &str, cut: bool) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut tasks_only = false;
    let mut replaced = false;
    for arg in args {
        if !tasks_only && arg == "--" {
            tasks_only = true;
        }
        if !tasks_only && arg == "--detach" {
            if !replaced {
                out.push(OsString::from(format!("--run-id={id}")));
                if cut {
                    out.push(OsString::from("--stdin-cut"));
                }
                replaced = true;
            }
            continue;
        }
        out.push(arg);
    }
    out
}

/// The lines the child writes on stderr, as they come, until it closes it.
fn lines_of(stderr: std::process::ChildStderr) -> mpsc::Receiver<String> {
    let (lines, said) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stderr);
        let mut line = Vec::new();
        while matches!(reader.read_until(b'\n', &mut line), Ok(1..)) {
            let text = String::from_utf8_lossy(&line).trim_end().to_owned();
            line.clear();
            if lines.send(text).is_err() {
                break;
            }
        }
    });
    said
}

/// What the child has said so far, on this codecrew's stderr.
fn relay(said: &mpsc::Receiver<String>) {
    for line in said.try_iter() {
        console::line(&relayed(&line));
    }
}

/// A line of the child's stderr as this codecrew shows it. The child made what it did not
/// compose inert already; what is left of escape sequences is its own styles (under
/// CLICOLOR_FORCE or `--color always`), dropped, and the rest made inert again, so that
/// nothing in a relayed line can act on the terminal.
fn relayed(line: &str) -> Text {
    let mut plain = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("\x1b[") {
        plain.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let params = after
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(after.len());
        if after[params..].starts_with('m') {
            rest = &after[params + 1..];
        } else {
            // Not a style: kept, to be shown inert.
            plain.push_str(&rest[at..at + 2]);
            rest = after;
        }
    }
    plain.push_str(rest);
    Text::plain(&plain)
}

/// The exit code for a child that ended before its run was recorded: its own (a usage
/// error is 2, said on the stderr just relayed), or 1.
fn ended_early(status: std::process::ExitStatus) -> u8 {
    match status.code().and_then(|code| u8::try_from(code).ok()) {
        Some(code) if code != 0 => code,
        _ => {
            let how = match status.code() {
                Some(code) => format!("exit code {code}"),
                None => "killed by a signal".to_owned(),
            };
            console::error(format_args!(
                "the run in the background ended ({how}) without being recorded in the run \
                 store; its answer cannot be read"
            ));
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relayed_line_loses_the_childs_styles_and_stays_inert() {
        let styled = "codecrew: \x1b[1;33mwarning:\x1b[0m left out";
        assert_eq!(
            relayed(styled).as_str(),
            Text::plain("codecrew: warning: left out").as_str()
        );
        // Anything else is shown, not sent: no escape byte reaches the terminal.
        let other = relayed("a \x1b[2J clear \x1b]52;c;eA==\x07 and \x1b[");
        assert!(!other.as_str().contains('\x1b'), "{:?}", other.as_str());
        assert!(other.as_str().contains("clear"), "{:?}", other.as_str());
    }

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_child_gets_the_same_arguments_with_the_id_for_detach() {
        let id = "0123456789abcdef";
        assert_eq!(
            child_args(
                args(&["--yes", "query", "--detach", "--thread", "t", "@a hi"]),
                id,
                false
            ),
            args(&[
                "--yes",
                "query",
                "--run-id=0123456789abcdef",
                "--thread",
                "t",
                "@a hi"
            ])
        );
        // Cut input said; `--detach` given twice replaced once.
        assert_eq!(
            child_args(args(&["execute", "--detach", "-", "--detach"]), id, true),
            args(&["execute", "--run-id=0123456789abcdef", "--stdin-cut", "-"])
        );
        // After `--` it is a task, kept as it is.
        assert_eq!(
            child_args(args(&["query", "--detach", "--", "--detach"]), id, false),
            args(&["query", "--run-id=0123456789abcdef", "--", "--detach"])
        );
    }
}
