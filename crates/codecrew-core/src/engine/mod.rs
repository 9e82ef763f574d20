//! The engine every front end drives: `query`/`execute`, `chat` and `mcp` (and the next
//! ones) each parse their input, hand it here and show what comes back.
//!
//! ```text
//! Options (workspace, --yes, --audit, who is asked, the help text)
//!   -> Engine::open: the config's layers + the permission policy
//!   -> Engine::stage(mode, limits): the mode's tools (MCP servers started on call) and
//!      the crew whose executors all share the one policy
//!   -> Engine::start(Request)  -> Run: events and reports of every job at once
//!      KeptAgents (chat)       -> each agent's CLI kept between tasks
//!      Stage (mcp)             -> the tools and the crew served to a client
//!   -> lifecycle: recover_abandoned before any CLI starts, stop_now on a second signal,
//!      finish as the process ends
//! ```
//!
//! The engine prints nothing. What the user should know on the way (a project section
//! ignored, a checkout's CLI config left out, a tool that could not start) goes through
//! [`codecrew_agents::notices`], which the front end routes to its console.

mod job_log;
mod kept;
mod label;
mod run;
mod served;
mod stage;
mod thread_saver;
mod undo_recording;
mod updates;
mod worktrees;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use codecrew_agents::{Provider, notices};
use codecrew_config::{ConfigError, LoadedConfig};
use codecrew_policy::{Asker, Policy, RuleError};
use codecrew_tools::builtin::HelpSource;
use codecrew_tools::middleware::{AuditLog, TracingLogger};
use codecrew_tools::{Mode, ToolCatalog, ToolContext, ToolExecutor, ToolRegistry, Toolbox};

use crate::crew::ExecutorFactory;
use crate::runs::RunLog;

pub use kept::{KeptAgents, Line};
pub use label::JobLabel;
pub use run::{Request, Resume, ResumeError, Run, StartError};
pub use served::ServedRun;
pub use stage::Stage;
pub use thread_saver::ThreadSaver;
pub use updates::Update;
pub use worktrees::{RunWorktrees, Settled, WorktreeError};

/// What a front end gives the engine once, for every run it starts.
#[derive(Clone)]
pub struct Options {
    /// The canonical workspace root.
    pub workspace: PathBuf,
    /// `--yes`: allow what would be asked; never what is denied.
    pub yes: bool,
    /// `--audit`: one JSON line per call in `.codecrew/audit.jsonl`.
    pub audit: bool,
    /// Who answers the policy's questions: a person at the terminal, an editor, or
    /// nobody (every question a denial).
    pub asker: Arc<dyn Asker>,
    /// What the built-in help tool explains (the front end's commands).
    pub help: Arc<dyn HelpSource>,
    /// The command whose runs are recorded in the run store (`query`, `chat`...), and
    /// whether they are (`--no-log` says not; so does the user's `[logs] enabled = false`).
    pub log: LogOptions,
}

/// Whether and as what the engine's runs are recorded in the run store ([`crate::runs`]).
#[derive(Debug, Clone)]
pub struct LogOptions {
    /// The front end's command, as `codecrew logs` shows it.
    pub command: &'static str,
    /// False: nothing is recorded (`--no-log`).
    pub enabled: bool,
}

/// The flags that override the config's limits for one run.
#[derive(Debug, Clone, Default)]
pub struct Limits {
    /// `--max-turns`.
    pub max_turns: Option<u32>,
    /// `--timeout`: one CLI turn.
    pub turn_timeout: Option<Duration>,
    /// `--schema`: the shape every final answer must have.
    pub answer: Option<crate::schema::AnswerShape>,
}

/// Why the engine could not open a workspace: its config or its permission rules. The
/// message says what to change (a usage error: exit 2).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Rules(#[from] RuleError),
}

/// One workspace's configuration and policy, and what runs there.
pub struct Engine {
    loaded: LoadedConfig,
    policy: Arc<Policy>,
    options: Options,
}

impl Engine {
    /// The workspace's merged config and its policy: built-in defaults < user config <
    /// project config (which only restricts, unless the user trusts the project).
    pub fn open(options: Options) -> Result<Engine, OpenError> {
        let loaded = codecrew_config::load(&options.workspace)?;
        Engine::with_config(loaded, options)
    }

    /// As [`Engine::open`], over a config already loaded.
    fn with_config(loaded: LoadedConfig, options: Options) -> Result<Engine, OpenError> {
        let policy = Policy::from_layers(
            &codecrew_policy::builtin_defaults(),
            loaded.user_permissions.as_ref(),
            loaded.project_permissions.as_ref(),
            loaded.project_trusted,
        )?
        .with_network(loaded.config.permissions.allow_network);
        Ok(Engine {
            loaded,
            policy: Arc::new(policy),
            options,
        })
    }

    pub fn config(&self) -> &LoadedConfig {
        &self.loaded
    }

    /// The config, to change before anything starts (which MCP servers a command needs).
    pub fn config_mut(&mut self) -> &mut LoadedConfig {
        &mut self.loaded
    }

    pub fn workspace(&self) -> &Path {
        &self.options.workspace
    }

    /// The permission policy every job's executor shares.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Where this engine's runs are recorded: None when `--no-log`, the user's
    /// `[logs] enabled = false`, or no state folder (neither XDG_STATE_HOME nor HOME).
    pub fn runs_path(&self) -> Option<PathBuf> {
        if !self.options.log.enabled || !self.loaded.logs_enabled {
            return None;
        }
        crate::runs::default_path()
    }

    /// The run's record, started in the store under `id` (a new one when None), or None
    /// when runs are not recorded, or the store cannot be written (said once, the run
    /// goes on).
    pub(crate) fn start_log(
        &self,
        id: Option<String>,
        mode: Mode,
        tasks: &[&str],
        input: Option<(u64, String)>,
        continues: Option<String>,
    ) -> Option<Arc<crate::runs::RunLog>> {
        let path = self.runs_path()?;
        let mut task: Vec<&str> = Vec::new();
        for one in tasks {
            if !task.contains(one) {
                task.push(one);
            }
        }
        let run = crate::runs::NewRun {
            id,
            workspace: self.workspace().display().to_string(),
            command: self.options.log.command.to_owned(),
            mode: mode.name().to_owned(),
            task: task.join("\n\n"),
            input,
            continues,
        };
        crate::runs::RunLog::start(&path, &run, self.loaded.logs_max_size.0).map(Arc::new)
    }

    /// An editor's conversation in the run store, recorded from the moment it is made
    /// (before its first line, so that it can be listed and loaded) under `id`: None
    /// when runs are not recorded here (a store that cannot be written is said once).
    pub fn conversation_log(&self, id: &str, mode: Mode, title: &str) -> Option<Arc<RunLog>> {
        self.start_log(Some(id.to_owned()), mode, &[title], None, None)
    }

    /// The conversation `id` of the run store, recorded by this process from now on (an
    /// editor's session loaded after a restart): None when runs are not recorded here.
    pub fn reopen_log(&self, id: &str) -> Result<Option<Arc<RunLog>>, crate::runs::StoreError> {
        let Some(path) = self.runs_path() else {
            return Ok(None);
        };
        RunLog::reopen(&path, id).map(|log| Some(Arc::new(log)))
    }

    /// The same engine, asking `asker` instead (the MCP server: nobody can be asked).
    pub fn asking(mut self, asker: Arc<dyn Asker>) -> Engine {
        self.options.asker = asker;
        self
    }

    /// The tools of the config for `mode`: built-ins, external tools, and the MCP servers
    /// (started in the mode's sandbox at the first call of one of their tools, when an
    /// earlier run listed them; see [`crate::toolbox::on_call`]).
    pub async fn toolbox(&self, mode: Mode) -> Toolbox {
        self.say_blocked();
        let help = self.options.help.clone();
        say(crate::toolbox::on_call(&self.loaded.config, self.workspace(), mode, help).await)
    }

    /// As [`Engine::toolbox`], with every MCP server started now (the commands that check
    /// them: `tools list`, `doctor`).
    pub async fn toolbox_started(&self, mode: Mode) -> Toolbox {
        self.say_blocked();
        let help = self.options.help.clone();
        say(crate::toolbox::start(&self.loaded.config, self.workspace(), mode, help).await)
    }

    /// The executor of one command in `mode` over every tool of the mode, and the
    /// toolbox it needs alive (it owns the MCP servers).
    pub async fn executor(
        &self,
        mode: Mode,
    ) -> Result<(ToolExecutor, Toolbox), codecrew_tools::catalog::CatalogError> {
        let toolbox = self.toolbox(mode).await;
        let registry = toolbox.registry().clone();
        let catalog = Arc::new(ToolCatalog::for_mode(&registry, mode)?);
        Ok((self.executor_over(registry, catalog, mode), toolbox))
    }

    /// Makes every executor of the engine's runs, sub-agents' included: the same policy,
    /// asker, `--yes` and hooks.
    pub fn executor_factory(&self) -> ExecutorFactory {
        let (options, policy) = (self.options.clone(), self.policy.clone());
        Arc::new(move |mode, registry, catalog| {
            executor(registry, catalog, mode, &options, policy.clone())
        })
    }

    /// The executor over a given catalog, as [`Engine::executor_factory`] makes them.
    pub fn executor_over(
        &self,
        registry: Arc<ToolRegistry>,
        catalog: Arc<ToolCatalog>,
        mode: Mode,
    ) -> ToolExecutor {
        executor(registry, catalog, mode, &self.options, self.policy.clone())
    }

    /// Says once what the checkout ships for the CLIs that they start without, since the
    /// user has not trusted the project, and how to trust it.
    pub fn say_left_out<'a>(&self, agents: impl Iterator<Item = (&'a str, &'a Provider)>) {
        let workspace = self.workspace();
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
        let folder = self
            .loaded
            .project_file
            .as_deref()
            .and_then(Path::parent)
            .unwrap_or(workspace);
        notices::note(&format!(
            "this project is not trusted, so the agent CLIs start without the configuration \
             it ships for them, which can run programs: {}; {}",
            said.join("; "),
            codecrew_config::projects::trust_advice(folder)
        ));
    }

    fn say_blocked(&self) {
        for name in &self.loaded.blocked {
            let file = self.loaded.project_file.as_deref().map_or_else(
                || "the project config".to_owned(),
                |p| p.display().to_string(),
            );
            let why = if name.ends_with(".keep_alive") {
                "running a CLI per turn lets some of its own tools act without asking codecrew"
            } else {
                "a project's tools and MCP servers run programs"
            };
            notices::warn(&format!(
                "[{name}] in {file} is ignored: {why}, so it applies only when you trust the \
                 folder (trusted_projects in your user config)"
            ));
        }
    }

    /// Before any CLI starts: what a killed codecrew held goes back first, so that no CLI
    /// meets what a program in its wall left.
    pub fn recover_abandoned() {
        codecrew_agents::recover_abandoned();
    }

    /// Ends what runs at once, dropping nothing: the CLIs' and tools' process groups are
    /// killed first, then what the CLIs' walls hold is put back (which dropping their
    /// commands would have done), and each run not ended yet is recorded as ended with
    /// `exit_code`. For a second signal, or an end that cannot wait.
    pub fn stop_now(exit_code: u8) {
        codecrew_policy::process::kill_all();
        codecrew_agents::wall::guard::restore_all_now();
        crate::runs::end_open_runs(exit_code);
    }

    /// As the process ends: whatever still runs is killed, what the walls hold is put
    /// back, and the walls' housekeeping is done.
    pub fn finish() {
        codecrew_policy::process::kill_all();
        codecrew_agents::wall::guard::finish();
        codecrew_agents::wall::finish_housekeeping();
    }
}

fn say(toolbox: Toolbox) -> Toolbox {
    for notice in toolbox.notices() {
        notices::warn(notice);
    }
    toolbox
}

/// The executor over a given catalog and policy, with the logging, the asker, `--yes`
/// and (when asked) the audit hooks.
fn executor(
    registry: Arc<ToolRegistry>,
    catalog: Arc<ToolCatalog>,
    mode: Mode,
    options: &Options,
    policy: Arc<Policy>,
) -> ToolExecutor {
    let mut context = ToolContext::new(options.workspace.clone(), mode);
    context.exec.pass_env = policy.pass_env().to_vec();
    context.exec.allow_network = policy.allow_network();
    context.exec.sandbox = crate::toolbox::sandbox_enabled();
    if !context.exec.sandbox {
        notices::warn("CODECREW_SANDBOX=off: run_command runs without the OS sandbox");
    }
    let mut executor = ToolExecutor::new(registry, catalog, context)
        .with_middleware(Arc::new(TracingLogger))
        .with_policy(policy)
        .with_asker(options.asker.clone())
        .assume_yes(options.yes);
    if options.audit {
        executor = executor.with_middleware(Arc::new(AuditLog::in_workspace(&options.workspace)));
    }
    executor
}
