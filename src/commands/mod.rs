//! One module per command. Each prints its result on stdout and returns the exit code.

pub mod acp;
pub mod agents;
pub mod background;
pub mod chat;
pub mod completions;
pub mod crew_table;
pub mod detach;
pub mod doctor;
pub mod init;
pub mod intercept;
pub mod judge;
pub mod logs;
pub mod man;
pub mod mcp;
pub mod prompt;
pub mod run;
pub mod schema;
pub mod tasks;
pub mod threads;
pub mod tools;
pub mod undo;
pub mod worktrees;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use codecrew::cli::CliHelp;
use codecrew::output::ask::default_asker;
use codecrew::output::console;
use codecrew_core::engine::{self, Engine};

/// Usage or configuration error.
pub const EXIT_USAGE: u8 = 2;

/// The canonical workspace root: `--workdir`, or the current directory.
pub fn workspace(workdir: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = match workdir {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let canonical = dir
        .canonicalize()
        .with_context(|| format!("the workspace {} does not exist", dir.display()))?;
    anyhow::ensure!(
        canonical.is_dir(),
        "the workspace {} is not a directory",
        dir.display()
    );
    Ok(canonical)
}

/// What the global flags give every command that runs tools.
#[derive(Debug, Clone)]
pub struct ToolOptions {
    /// The canonical workspace root.
    pub workspace: PathBuf,
    /// `--yes`: allow what would be asked; never what is denied.
    pub yes: bool,
    /// `--audit`: one JSON line per call in `.codecrew/audit.jsonl`.
    pub audit: bool,
    /// `--color` with the environment: which streams are styled.
    pub colors: codecrew::output::color::Colors,
    /// The command whose runs the engine records, and whether (`--no-log`).
    pub log: engine::LogOptions,
}

impl ToolOptions {
    /// The engine over the workspace: its config's layers and permission policy, asking
    /// the person at the terminal (when there is one). An error is a config error: `main`
    /// prints it and exits 2.
    pub fn engine(&self) -> anyhow::Result<Engine> {
        Ok(Engine::open(engine::Options {
            workspace: self.workspace.clone(),
            yes: self.yes,
            audit: self.audit,
            asker: default_asker(self.colors.tty),
            help: Arc::new(CliHelp),
            log: self.log.clone(),
        })?)
    }
}

/// Strips the `codecrew:` (or `codecrew__`) prefix a user may type.
pub fn bare_name(name: &str) -> &str {
    name.strip_prefix("codecrew:")
        .or_else(|| name.strip_prefix("codecrew__"))
        .unwrap_or(name)
}

/// Resolves on Ctrl-C, SIGTERM or SIGHUP with the exit code to use (130, 143, 129); the
/// caller then stops what it runs, and `main` sweeps up whatever is left.
pub async fn interrupted() -> u8 {
    interrupted_on(None).await
}

/// [`interrupted`], on `signals` when given: listened for since they were made, so that
/// one that came before this is awaited is not lost.
pub async fn interrupted_on(signals: Option<Signals>) -> u8 {
    let code = match signals.or_else(Signals::new) {
        Some(mut signals) => signals.next().await,
        None => std::future::pending().await,
    };
    console::line(&console::Text::plain(
        "\ncodecrew: interrupted; stopping the agents and commands it started",
    ));
    code
}

/// [`interrupted`], without its message.
pub async fn interrupted_quietly() -> u8 {
    match Signals::new() {
        Some(mut signals) => signals.next().await,
        None => std::future::pending().await,
    }
}

/// The signals that end a command (SIGINT, SIGTERM, SIGHUP), listened for from the
/// moment this is made: one that comes while nobody awaits [`Signals::next`] waits for
/// the next call, so a command that listens across several steps (the chat's prompt,
/// then its answer) loses none between them.
pub struct Signals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    /// None when the signals cannot be listened for (no signal driver).
    pub fn new() -> Option<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Some(Signals {
            int: signal(SignalKind::interrupt()).ok()?,
            term: signal(SignalKind::terminate()).ok()?,
            hup: signal(SignalKind::hangup()).ok()?,
        })
    }

    /// The next signal, as the exit code it gives: 130 (SIGINT), 143 (SIGTERM), 129
    /// (SIGHUP). A hang-up means the terminal is gone: from then on nothing is written
    /// to it ([`console::hang_up`]). Cancel-safe.
    pub async fn next(&mut self) -> u8 {
        tokio::select! {
            _ = self.int.recv() => EXIT_SIGINT,
            _ = self.term.recv() => EXIT_SIGTERM,
            _ = self.hup.recv() => {
                console::hang_up();
                EXIT_SIGHUP
            }
        }
    }
}

/// Ended by SIGINT (Ctrl-C).
pub const EXIT_SIGINT: u8 = 130;
/// Ended by SIGTERM.
pub const EXIT_SIGTERM: u8 = 143;
/// Ended by SIGHUP: the terminal hung up.
pub const EXIT_SIGHUP: u8 = 129;
