//! `codecrew threads list|show|adopt|rm`: the conversations `--thread` keeps in the workspace.

use std::fmt::Write;
use std::path::Path;
use std::process::ExitCode;

use codecrew::cli::{OutputArg, ThreadsCommand};
use codecrew::output::console::{self, Text};
use codecrew_agents::identifiers;
use codecrew_core::thread::{Thread, ThreadError, ThreadName, ThreadStore};
use serde_json::{Value, json};

pub fn run(command: &ThreadsCommand, workspace: &Path) -> anyhow::Result<ExitCode> {
    let store = ThreadStore::in_workspace(workspace);
    match command {
        ThreadsCommand::List { output } => list(&store, *output),
        ThreadsCommand::Show { name, output } => show(&store, name, *output),
        ThreadsCommand::Adopt { name } => adopt(&store, name),
        ThreadsCommand::Rm { name } => remove(&store, name),
    }
}

fn list(store: &ThreadStore, output: OutputArg) -> anyhow::Result<ExitCode> {
    let listed = match store.list() {
        Ok(listed) => listed,
        Err(error) => {
            console::error(error);
            return Ok(ExitCode::from(1));
        }
    };
    let mut out = String::new();
    match output {
        OutputArg::Json => {
            let threads: Vec<Value> = listed
                .iter()
                .map(|(name, thread)| match thread {
                    Ok(thread) => json!({
                        "name": name.as_str(),
                        "agents": thread.agents.keys().collect::<Vec<_>>(),
                        "exchanges": thread.exchanges.len(),
                        "created": thread.created,
                        "updated": thread.updated,
                    }),
                    Err(error) => json!({"name": name.as_str(), "error": error.to_string()}),
                })
                .collect();
            console::stdout().json_pretty(&json!({ "threads": threads }))?;
        }
        OutputArg::Text if listed.is_empty() => writeln!(
            out,
            "No threads in {}; start one with `codecrew query --thread <name> \"...\"`.",
            store.dir().display()
        )?,
        OutputArg::Text => {
            let rows: Vec<[String; 4]> = listed
                .iter()
                .map(|(name, thread)| match thread {
                    Ok(thread) => [
                        name.to_string(),
                        agents(thread),
                        thread.exchanges.len().to_string(),
                        thread.updated.clone(),
                    ],
                    Err(_) => [
                        name.to_string(),
                        "-".to_owned(),
                        "-".to_owned(),
                        "unreadable (the error is on stderr)".to_owned(),
                    ],
                })
                .collect();
            let titles = ["NAME", "AGENTS", "EXCHANGES", "UPDATED"];
            let width = |column: usize| {
                rows.iter()
                    .map(|row| row[column].chars().count())
                    .chain([titles[column].len()])
                    .max()
                    .unwrap_or(0)
            };
            let (name_w, agents_w, count_w) = (width(0), width(1), width(2));
            let [name, agents, count, updated] = titles;
            writeln!(
                out,
                "{name:<name_w$}  {agents:<agents_w$}  {count:<count_w$}  {updated}"
            )?;
            for [name, agents, count, updated] in &rows {
                writeln!(
                    out,
                    "{name:<name_w$}  {agents:<agents_w$}  {count:<count_w$}  {updated}"
                )?;
            }
        }
    }
    // A thread's name is its file's, which may hold anything.
    console::stdout().show(&Text::plain(&out))?;
    // An unreadable thread is listed, not hidden; its error goes to stderr too.
    for (_, thread) in &listed {
        if let Err(error) = thread {
            console::error(error);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn agents(thread: &Thread) -> String {
    let ids: Vec<String> = thread.agents.keys().map(|id| format!("@{id}")).collect();
    if ids.is_empty() {
        "-".to_owned()
    } else {
        ids.join(", ")
    }
}

fn show(store: &ThreadStore, name: &ThreadName, output: OutputArg) -> anyhow::Result<ExitCode> {
    let found = store.load(name).and_then(|thread| {
        thread.ok_or_else(|| ThreadError::NotFound {
            name: name.to_string(),
            path: store.path(name),
        })
    });
    let thread = match found {
        Ok(thread) => thread,
        Err(error) => {
            console::error(error);
            return Ok(ExitCode::from(1));
        }
    };
    match output {
        OutputArg::Json => {
            // The stored thread, with the sum of what its exchanges used beside it.
            let mut value = serde_json::to_value(&thread)?;
            if let serde_json::Value::Object(map) = &mut value {
                map.insert("usage".to_owned(), serde_json::to_value(thread.usage())?);
            }
            console::stdout().json_pretty(&value)?;
        }
        OutputArg::Text => {
            // A stored answer is the model's text: shown inert, as when it streamed.
            let mut out = String::new();
            write_thread(&mut out, &thread)?;
            console::stdout().show(&Text::plain(&out))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Where each agent of the thread goes on from. A model or a session id that codecrew
/// will not pass to the CLI (not of the shape it gives them) is said to be left out.
fn write_agents(out: &mut String, thread: &Thread) -> std::fmt::Result {
    for (id, state) in &thread.agents {
        let model = match state.model.as_deref() {
            Some(model) if identifiers::is_model_name(model) => model.to_owned(),
            Some(model) => format!("default model; {model:?} is not a model's name"),
            None => "default model".to_owned(),
        };
        let shape = codecrew_agents::session_shape_of(&state.provider);
        let continues = match &state.session_id {
            Some(session) if shape.fits(session) => format!("resumes session {session}"),
            Some(session) => format!(
                "continues from the transcript; the session {session:?} is not {shape}, so \
                 it is not resumed"
            ),
            None => "continues from the transcript".to_owned(),
        };
        writeln!(out, "  @{id} ({}, {model}): {continues}", state.provider)?;
    }
    Ok(())
}

fn write_thread(out: &mut String, thread: &Thread) -> std::fmt::Result {
    writeln!(
        out,
        "Thread {}: {} exchanges, created {}, updated {}",
        thread.name,
        thread.exchanges.len(),
        thread.created,
        thread.updated
    )?;
    if thread.exchanges.iter().any(|e| e.usage.is_some()) {
        writeln!(out, "  used: {}", thread.usage().summary())?;
    }
    write_agents(out, thread)?;
    for exchange in &thread.exchanges {
        let model = exchange
            .model
            .as_deref()
            .map(|model| format!(":{model}"))
            .unwrap_or_default();
        writeln!(out)?;
        let used = exchange
            .usage
            .map(|usage| format!(" · {}", usage.summary()))
            .unwrap_or_default();
        writeln!(
            out,
            "── {} @{}{model} {}{used}",
            exchange.time, exchange.agent, exchange.mode
        )?;
        writeln!(out, "> {}", exchange.task.trim().replace('\n', "\n> "))?;
        writeln!(out)?;
        writeln!(out, "{}", exchange.answer.trim())?;
    }
    Ok(())
}

/// Seals the thread with the user's key, and says what its agents will now resume.
fn adopt(store: &ThreadStore, name: &ThreadName) -> anyhow::Result<ExitCode> {
    let thread = match store.adopt(name) {
        Ok(thread) => thread,
        Err(error) => {
            console::error(error);
            return Ok(ExitCode::from(1));
        }
    };
    let mut out = format!("Thread {name} is yours now; `--thread {name}` continues it.\n");
    write_agents(&mut out, &thread)?;
    // The thread's values are a file's: shown inert.
    console::stdout().show(&Text::plain(&out))?;
    Ok(ExitCode::SUCCESS)
}

fn remove(store: &ThreadStore, name: &ThreadName) -> anyhow::Result<ExitCode> {
    match store.remove(name) {
        Ok(()) => {
            console::stdout().show(&Text::plain(&format!("Removed thread {name}.\n")))?;
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            console::error(error);
            Ok(ExitCode::from(1))
        }
    }
}
