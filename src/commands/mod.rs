//! One module per command. Each prints its result on stdout and returns the exit code.

pub mod agents;
pub mod chat;
pub mod completions;
pub mod doctor;
pub mod init;
pub mod intercept;
pub mod man;
pub mod mcp;
pub mod prompt;
pub mod run;
pub mod threads;
pub mod tools;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use codecrew::cli::CliHelp;
use codecrew::config::LoadedConfig;
use codecrew::output::ask::default_asker;
use codecrew::output::console;
use codecrew_policy::Policy;
use codecrew_tools::middleware::{AuditLog, TracingLogger};
use codecrew_tools::{Mode, ToolCatalog, ToolContext, ToolExecutor, ToolRegistry, Toolbox};

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
}

/// The workspace's merged config and its permission policy: built-in defaults < user
/// config < project config (which only restricts, unless the user trusts the project).
/// An error is a config error: `main` prints it and exits 2.
pub fn config_and_policy(workspace: &Path) -> anyhow::Result<(LoadedConfig, Arc<Policy>)> {
    let loaded = codecrew::config::load(workspace)?;
    let policy = Policy::from_layers(
        &codecrew_policy::builtin_defaults(),
        loaded.user_permissions.as_ref(),
        loaded.project_permissions.as_ref(),
        loaded.project_trusted,
    )?
    .with_network(loaded.config.permissions.allow_network);
    Ok((loaded, Arc::new(policy)))
}

/// The executor for one run in `mode`, with the workspace's policy and every tool of the
/// config. The toolbox must live as long as the executor: it owns the MCP servers.
pub async fn executor(
    mode: Mode,
    options: &ToolOptions,
) -> anyhow::Result<(ToolExecutor, Toolbox)> {
    let (loaded, policy) = config_and_policy(&options.workspace)?;
    executor_over(loaded, policy, mode, options).await
}

/// The executor for one direct call of `tool`: of the MCP servers only the one that
/// serves it (`<server>__<tool>`) starts, none for a built-in or external tool, since
/// starting every server of the config can take seconds.
pub async fn executor_for_call(
    tool: &str,
    mode: Mode,
    options: &ToolOptions,
) -> anyhow::Result<(ToolExecutor, Toolbox)> {
    let server = tool.split_once("__").map(|(server, _)| server);
    executor_with_servers(mode, options, |name| Some(name) == server).await
}

/// The executor for a run in `mode` whose MCP servers are only those `wanted` names.
pub async fn executor_with_servers(
    mode: Mode,
    options: &ToolOptions,
    wanted: impl Fn(&str) -> bool,
) -> anyhow::Result<(ToolExecutor, Toolbox)> {
    let (mut loaded, policy) = config_and_policy(&options.workspace)?;
    loaded.config.mcp.retain(|name, _| wanted(name));
    executor_over(loaded, policy, mode, options).await
}

async fn executor_over(
    loaded: LoadedConfig,
    policy: Arc<Policy>,
    mode: Mode,
    options: &ToolOptions,
) -> anyhow::Result<(ToolExecutor, Toolbox)> {
    let toolbox = toolbox_on_call(&loaded, &options.workspace, mode).await;
    let registry = toolbox.registry().clone();
    let catalog = Arc::new(ToolCatalog::for_mode(&registry, mode)?);
    Ok((
        executor_for(registry, catalog, mode, options, policy),
        toolbox,
    ))
}

/// The tools of the config (built-ins, external tools, MCP servers started in the OS
/// sandbox of `mode`), with what the user should know about them said on stderr. For the
/// commands that check the servers (`tools list`, `doctor`): every server starts.
pub async fn toolbox(loaded: &LoadedConfig, workspace: &Path, mode: Mode) -> Toolbox {
    warn_blocked(loaded);
    warn(codecrew::run::toolbox::start(&loaded.config, workspace, mode, Arc::new(CliHelp)).await)
}

/// As [`toolbox`], for the commands that run or show the tools: MCP servers an earlier
/// run listed start only at the first call of one of their tools (see
/// `codecrew::run::toolbox::on_call`).
pub async fn toolbox_on_call(loaded: &LoadedConfig, workspace: &Path, mode: Mode) -> Toolbox {
    warn_blocked(loaded);
    warn(codecrew::run::toolbox::on_call(&loaded.config, workspace, mode, Arc::new(CliHelp)).await)
}

fn warn_blocked(loaded: &LoadedConfig) {
    for name in &loaded.blocked {
        let file = loaded.project_file.as_deref().map_or_else(
            || "the project config".to_owned(),
            |p| p.display().to_string(),
        );
        let why = if name.ends_with(".keep_alive") {
            "running a CLI per turn lets some of its own tools act without asking codecrew"
        } else {
            "a project's tools and MCP servers run programs"
        };
        console::warn(format_args!(
            "[{name}] in {file} is ignored: {why}, so it applies only when you trust the \
             folder (trusted_projects in your user config)"
        ));
    }
}

/// Says once what the checkout ships for the CLIs that they start without, since the
/// user has not trusted the project, and how to trust it.
pub fn warn_left_out<'a>(
    loaded: &LoadedConfig,
    workspace: &Path,
    agents: impl Iterator<Item = (&'a str, &'a codecrew::clis::Provider)>,
) {
    let mut said = Vec::new();
    for (agent, provider) in agents {
        let files = provider.left_out(workspace);
        let line = format!("@{agent} ({})", files.join(", "));
        if !files.is_empty() && !said.contains(&line) {
            said.push(line);
        }
    }
    if said.is_empty() {
        return;
    }
    let folder = loaded
        .project_file
        .as_deref()
        .and_then(Path::parent)
        .unwrap_or(workspace);
    console::note(format_args!(
        "this project is not trusted, so the agent CLIs start without the configuration it \
         ships for them, which can run programs: {}; {}",
        said.join("; "),
        codecrew::home::trust_advice(folder)
    ));
}

fn warn(toolbox: Toolbox) -> Toolbox {
    for notice in toolbox.notices() {
        console::warn(notice);
    }
    toolbox
}

/// The executor over a given catalog and policy, with the logging, the asker, `--yes`
/// and (when asked) the audit hooks.
pub fn executor_for(
    registry: Arc<ToolRegistry>,
    catalog: Arc<ToolCatalog>,
    mode: Mode,
    options: &ToolOptions,
    policy: Arc<Policy>,
) -> ToolExecutor {
    let mut context = ToolContext::new(options.workspace.clone(), mode);
    context.exec.pass_env = policy.pass_env().to_vec();
    context.exec.allow_network = policy.allow_network();
    context.exec.sandbox = codecrew::run::toolbox::sandbox_enabled();
    if !context.exec.sandbox {
        console::warn("CODECREW_SANDBOX=off: run_command runs without the OS sandbox");
    }
    let mut executor = ToolExecutor::new(registry, catalog, context)
        .with_middleware(Arc::new(TracingLogger))
        .with_policy(policy)
        .with_asker(default_asker(options.colors.tty))
        .assume_yes(options.yes);
    if options.audit {
        executor = executor.with_middleware(Arc::new(AuditLog::in_workspace(&options.workspace)));
    }
    executor
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
    let code = interrupted_quietly().await;
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
