//! The CLIs codecrew drives, one module each, behind the [`Cli`] trait; beside them,
//! the means of driving them ([`drive`]: processes, kept processes, the transports and
//! protocols, the bridge of their own tools) and the kernel wall each runs in ([`wall`]).
//!
//! A module says everything codecrew knows of its CLI: the program and how to install
//! it, the command line of one turn and how the prompt reaches it, how a session
//! continues, what the CLI's own tools may do in each mode, what of the home directory
//! its wall grants, what a checkout ships for it and how that is left out of a project
//! the user has not trusted, the output format its decoder reads, its long-lived mode if
//! it has one, and what to tell the user when it fails for want of a sign-in. The rest of
//! codecrew asks a [`Provider`] (an agent and its CLI) and never matches on which CLI it
//! is.
//!
//! Adding a CLI: a module here and its line in `known_cli`, its line in the registry
//! ([`CliKind`], in `codecrew-intercept`: its name and the dialect it prints; the config's
//! `provider` values and the built-in agents follow from it), a decoder with fixtures of
//! its real output in `codecrew-intercept` unless it prints a format one already reads,
//! and its offline environment and its name in the matrix (checked against the registry)
//! for the end-to-end tests.

// This layer prints nothing: what the user must know goes through [`notices`], whose sink
// the front end sets.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod claude;
mod codex;
mod command;
mod copilot;
mod gemini;
mod llm;
mod opencode;
mod qwen;

mod cli;
pub mod drive;
pub mod identifiers;
pub mod notices;
pub mod strict_schema;
pub mod wall;

pub use cli::{Cli, LongLived, Preparation, Turn, TurnCommand};

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use codecrew_intercept::decode::Format;
use codecrew_tools::Mode;

use crate::drive::process::CommandSpec;
use codecrew_config::{AgentConfig, CliKind, ProviderKind};

/// The module that knows the agent's CLI.
fn cli_for(agent_id: &str, agent: &AgentConfig) -> Arc<dyn Cli> {
    match agent.provider {
        ProviderKind::Cli(kind) => known_cli(kind),
        ProviderKind::Command => Arc::new(command::DeclaredCommand::new(agent_id, agent)),
    }
}

/// The module of each CLI of the registry ([`CliKind`]): one line per CLI.
fn known_cli(kind: CliKind) -> Arc<dyn Cli> {
    match kind {
        CliKind::Claude => Arc::new(claude::Claude),
        CliKind::Gemini => Arc::new(gemini::Gemini),
        CliKind::Codex => Arc::new(codex::Codex),
        CliKind::Copilot => Arc::new(copilot::Copilot),
        CliKind::Opencode => Arc::new(opencode::Opencode),
        CliKind::Qwen => Arc::new(qwen::Qwen),
        CliKind::Llm => Arc::new(llm::Llm),
    }
}

/// The shape of the session ids of the CLI a thread names by its provider's name
/// (`claude`, `command`…): a known CLI's, or one of a name codecrew does not know,
/// the plain word.
pub fn session_shape_of(provider: &str) -> identifiers::SessionShape {
    match CliKind::from_name(provider) {
        Some(kind) => known_cli(kind).session_shape(),
        None => identifiers::SessionShape::Word,
    }
}

/// An agent and its CLI.
#[derive(Debug, Clone)]
pub struct Provider {
    pub agent_id: String,
    pub agent: AgentConfig,
    cli: Arc<dyn Cli>,
    /// Whether the user trusts the project (see [`TurnCommand::trusted`]).
    trusted: bool,
}

impl Provider {
    pub fn new(agent_id: &str, agent: AgentConfig) -> Self {
        Provider {
            cli: cli_for(agent_id, &agent),
            agent_id: agent_id.to_owned(),
            agent,
            trusted: false,
        }
    }

    /// The provider for a project the user trusts (or not): the CLI then loads the
    /// project's own configuration for it as it would on its own.
    pub fn trusting_project(mut self, trusted: bool) -> Self {
        self.trusted = trusted;
        self
    }

    pub fn kind(&self) -> ProviderKind {
        self.cli.kind()
    }

    pub fn program(&self) -> String {
        self.cli.program().to_owned()
    }

    pub fn install_hint(&self) -> String {
        self.cli.install_hint()
    }

    pub fn format(&self) -> Format {
        self.cli.format()
    }

    pub fn can_resume(&self) -> bool {
        self.cli.can_resume()
    }

    /// Whether the CLI takes codecrew's tools section as its system prompt
    /// ([`Cli::takes_system_prompt`]).
    pub fn takes_system_prompt(&self) -> bool {
        self.cli.takes_system_prompt()
    }

    /// `schema` as the CLI's own structured-output mechanism takes it, if codecrew uses
    /// one for it; why not, where the CLI cannot take it ([`Cli::native_schema`]).
    pub fn native_schema(
        &self,
        schema: &serde_json::Value,
    ) -> Result<Option<serde_json::Value>, String> {
        self.cli.native_schema(schema)
    }

    /// `id` when it has the shape of the CLI's session ids, else why not.
    pub fn checked_session<'a>(&self, id: &'a str) -> Result<&'a str, String> {
        let shape = self.cli.session_shape();
        if shape.fits(id) {
            Ok(id)
        } else {
            Err(format!(
                "the session id {id:?} is not {shape}, the shape {} gives its sessions",
                self.cli.kind().name()
            ))
        }
    }

    pub fn reports_version(&self) -> bool {
        self.cli.reports_version()
    }

    pub fn reports_session_usage(&self) -> bool {
        self.cli.reports_session_usage()
    }

    /// Whether a turn failed because its model cannot take the schema it was given
    /// ([`Cli::refused_native_schema`]).
    pub fn refused_native_schema(&self, said: &str) -> bool {
        self.cli.refused_native_schema(said)
    }

    pub fn failure_hint(&self, said: &str) -> Option<&'static str> {
        self.cli.failure_hint(said)
    }

    pub fn model_aliases(&self) -> &'static [&'static str] {
        self.cli.model_aliases()
    }

    /// The command line of the CLI's own sign-in, to run at a terminal
    /// ([`Cli::sign_in`]); None where the CLI has no one sign-in.
    pub fn sign_in(&self) -> Option<(String, Vec<String>)> {
        let args = self.cli.sign_in()?;
        let program = self.program();
        (!program.is_empty()).then(|| (program, args.iter().map(|arg| (*arg).to_owned()).collect()))
    }

    pub fn shares_start_up(&self) -> bool {
        self.cli.shares_start_up()
    }

    pub fn collided_at_start(&self, stderr: &str) -> bool {
        self.cli.collided_at_start(stderr)
    }

    pub fn after_kept(&self, started: std::time::SystemTime, session: Option<&str>) {
        self.cli.after_kept(started, session);
    }

    pub fn long_lived(&self) -> Option<LongLived> {
        self.cli.long_lived()
    }

    /// Whether the CLI's ACP agent continues a stored session ([`Cli::acp_dialect`]).
    pub fn loads_kept_sessions(&self) -> bool {
        self.cli.acp_dialect(None).loads_sessions
    }

    pub fn acp_dialect(&self, chosen: Option<&str>) -> drive::acp::Dialect {
        self.cli.acp_dialect(self.model(chosen))
    }

    /// Whether the CLI runs inside a wall (codecrew knows its state, and the sandbox is
    /// on).
    pub fn is_walled(&self) -> bool {
        self.cli.state().is_some() && codecrew_policy::sandbox::enabled()
    }

    /// Whether every read of the CLI's own tools is judged by codecrew's policy in
    /// `mode`, or it has no tools of its own (llm, a declared command): where its wall
    /// alone keeps files from it, the files it must read, its own sign-in among them, are
    /// open to its tools too.
    pub fn judges_every_read(&self, mode: Mode) -> bool {
        self.cli.long_lived().is_none() || (self.keeps_alive(mode) && self.cli.judges_own_reads())
    }

    /// Why the agent must not start in `mode` where the `workspace` holds the home (opted
    /// in with `--allow-home`): its own reads are not all judged, and its wall must grant
    /// it its own folders in the home, sign-in included (`~/.gemini/oauth_creds.json`),
    /// which a workspace there no longer keeps from its tools. None elsewhere, and for a
    /// CLI whose every read codecrew judges (Claude and Codex kept for the loop) or that
    /// has no tools.
    pub fn refuses_in_the_home(&self, workspace: &Path, mode: Mode) -> Option<String> {
        if codecrew_policy::home::HomeInWorkspace::of(workspace).is_empty()
            || self.judges_every_read(mode)
        {
            return None;
        }
        Some(
            "the workspace holds your home directory, and this CLI's own tools read without \
             asking codecrew what its wall lets it read, its own sign-in in your home \
             included; cd into a project (or --workdir DIR), or ask an agent whose every \
             read codecrew judges (@claude, @codex)"
                .to_owned(),
        )
    }

    /// Why the CLI must not start in `workspace` ([`Cli::refuses`]).
    pub fn refuses(&self, workspace: &Path) -> Option<String> {
        self.cli.refuses(workspace, self.trusted)
    }

    /// What of the checkout's own configuration for this CLI is in `workspace` and left
    /// out, since the user has not trusted the project (none when trusted).
    pub fn left_out(&self, workspace: &Path) -> Vec<&'static str> {
        if self.trusted {
            return Vec::new();
        }
        self.cli
            .project_files()
            .iter()
            .copied()
            .filter(|file| std::fs::symlink_metadata(workspace.join(file)).is_ok())
            .collect()
    }

    /// The model a job runs with: the one its mention chose (`@agent:model`), else the
    /// agent's configured one, else the CLI's own default (`None`).
    pub fn model<'a>(&'a self, chosen: Option<&'a str>) -> Option<&'a str> {
        chosen.or(self.agent.model.as_deref())
    }

    fn extra(&self, mode: Mode) -> &[String] {
        match mode {
            Mode::Query => &self.agent.args.query,
            Mode::Execute => &self.agent.args.execute,
        }
    }

    /// Whether the job keeps one CLI process for its whole tool loop in `mode`: where the
    /// CLI has a long-lived mode, unless the agent sets `keep_alive = false`. Extra
    /// arguments are written for the CLI's headless mode, which a JSON-RPC server does
    /// not take: such an agent starts per turn.
    pub fn keeps_alive(&self, mode: Mode) -> bool {
        self.agent.keep_alive.unwrap_or(true)
            && match self.cli.long_lived() {
                Some(LongLived::StreamJsonInput) => true,
                Some(LongLived::AppServer | LongLived::Acp) => self.extra(mode).is_empty(),
                None => false,
            }
    }

    fn turn_command<'a>(
        &'a self,
        program: &'a Path,
        turn: &'a Turn<'a>,
        cwd: &'a Path,
    ) -> TurnCommand<'a> {
        TurnCommand {
            program,
            cwd,
            turn,
            model: self.model(turn.model),
            effort: self.agent.effort.as_deref(),
            extra: self.extra(turn.mode),
            trusted: self.trusted,
        }
    }

    /// The command line for one turn.
    pub fn command(&self, program: &Path, turn: &Turn<'_>, cwd: &Path) -> CommandSpec {
        let spec = self
            .cli
            .turn_command(&self.turn_command(program, turn, cwd));
        self.walled(spec, program, turn.mode, cwd, false)
    }

    /// The run before the CLI's first turn in `cwd`, when it needs one
    /// ([`Cli::preparation`]): inside the wall of a `query` turn that may also write what
    /// the preparation fills. It runs in the program's own folder, not the checkout (whose
    /// `.tool-versions` would pick the program a version manager's shim runs), and without
    /// the compile cache programs in the query wall write (its code would run with the
    /// preparation's wider rights).
    pub fn preparation_command(&self, program: &Path, cwd: &Path) -> Option<CommandSpec> {
        let preparation = self.cli.preparation(program)?;
        let spec = CommandSpec {
            program: program.to_path_buf(),
            args: argv(preparation.args),
            cwd: program.parent().map(Path::to_path_buf),
            ..CommandSpec::default()
        };
        let state = self.cli.state().map(|mut state| {
            state.read.retain(|dir| !preparation.write.contains(dir));
            state.write.extend(preparation.write);
            state
        });
        let mut spec = self.walled_in(spec, program, Mode::Query, cwd, false, state);
        spec.env.retain(|(name, _)| name != "NODE_COMPILE_CACHE");
        Some(spec)
    }

    /// `spec` inside the CLI's wall for `mode`, where the CLI has one; `kept` for the
    /// process kept for the loop.
    fn walled(
        &self,
        spec: CommandSpec,
        program: &Path,
        mode: Mode,
        cwd: &Path,
        kept: bool,
    ) -> CommandSpec {
        self.walled_in(spec, program, mode, cwd, kept, self.cli.state())
    }

    /// `spec` inside the wall `state` makes for `mode` (none without a state).
    fn walled_in(
        &self,
        mut spec: CommandSpec,
        program: &Path,
        mode: Mode,
        cwd: &Path,
        kept: bool,
        state: Option<wall::State>,
    ) -> CommandSpec {
        let reads_sensitive = kept && self.cli.judges_own_reads();
        let untrusted = if self.trusted {
            &[]
        } else {
            self.cli.project_files()
        };
        let withheld = if self.cli.runs_without_project_files() {
            untrusted
        } else {
            &[]
        };
        let kind = match self.cli.kind() {
            ProviderKind::Cli(kind) => kind.name(),
            ProviderKind::Command => "command",
        };
        let confinement = state.and_then(|mut state| {
            state.extend(self.cli.state_for(cwd));
            if mode == Mode::Execute {
                state.guarded.extend(checkout_held(untrusted, cwd));
            }
            wall::confinement(program, cwd, mode, state, reads_sensitive, withheld, kind)
        });
        if let Some(mut confinement) = confinement {
            confinement
                .wall
                .install
                .extend(spec.files.iter().map(|file| file.to_path_buf()));
            spec.env.extend(confinement.env());
            spec.confinement = Some(confinement);
        }
        spec
    }

    /// `program --version` inside the wall a turn of `query` would get in `cwd` (with
    /// `cli_read`'s folders): whether the CLI can start there at all (`codecrew doctor`).
    pub fn version_command(&self, program: &Path, cwd: &Path, reads: &[PathBuf]) -> CommandSpec {
        let spec = CommandSpec {
            program: program.to_path_buf(),
            args: argv(["--version"]),
            cwd: Some(cwd.to_path_buf()),
            ..CommandSpec::default()
        };
        let mut spec = self.walled(spec, program, Mode::Query, cwd, false);
        spec.read_also(reads);
        spec
    }

    /// The command line of a CLI kept for the whole loop ([`Self::keeps_alive`]).
    pub fn resident_command(&self, program: &Path, turn: &Turn<'_>, cwd: &Path) -> CommandSpec {
        let mut spec = self
            .cli
            .kept_command(&self.turn_command(program, turn, cwd));
        spec.stdin = None;
        self.walled(spec, program, turn.mode, cwd, true)
    }
}

/// The checkout's `files` for a CLI in `cwd`, each held whole (in `execute`, where the
/// user has not trusted the project: [`Cli::project_files`]).
fn checkout_held<'a>(files: &'a [&str], cwd: &'a Path) -> impl Iterator<Item = wall::Guarded> + 'a {
    files.iter().map(move |file| wall::Guarded {
        path: cwd.join(file),
        hold: wall::Hold::Whole,
    })
}

/// Everything `cli`'s guards may hold when it runs in `cwd`, however it runs: what of
/// its own state its module holds ([`Cli::state`], [`Cli::state_for`]) and the
/// checkout's files for it. The same code that decides what a run holds, so that a
/// record read back from the journal may put back these paths only.
fn held_by(cli: &dyn Cli, cwd: &Path) -> Vec<wall::Guarded> {
    let mut held = cli.state().map(|state| state.guarded).unwrap_or_default();
    held.extend(cli.state_for(cwd).guarded);
    held.extend(checkout_held(cli.project_files(), cwd));
    held
}

/// Puts back what killed codecrews held for their CLIs, before any CLI of this command
/// starts (`wall::guard`). A record puts back only what codecrew holds for the CLI it
/// names in the workspace it names, as that CLI's module says now (`held_by`): one
/// that names anything else is refused, and nothing it names is written.
pub fn recover_abandoned() {
    wall::guard::recover_abandoned(&|holder| {
        CliKind::from_name(&holder.cli)
            .map(|kind| held_by(known_cli(kind).as_ref(), &holder.workspace))
            .unwrap_or_default()
    });
}

/// What to tell the user when the agent's CLI is not installed.
pub fn describe_missing(provider: &Provider) -> String {
    format!(
        "the {} CLI ({}) is not installed or not on PATH; install it with: {}",
        provider.kind().name(),
        provider.program(),
        provider.install_hint()
    )
}

/// Looks the provider's program up on PATH.
pub fn locate(provider: &Provider) -> Option<PathBuf> {
    let program = provider.program();
    if program.is_empty() {
        return None;
    }
    crate::wall::install::find_program(&program)
}

/// The repository `dir` lies in: its nearest ancestor (itself included) with a `.git`.
fn repository_root(dir: &Path) -> Option<&Path> {
    dir.ancestors().find(|dir| dir.join(".git").exists())
}

/// Turns argument strings into a command's argv.
fn argv<I, S>(args: I) -> Vec<OsString>
where
    I: IntoIterator<Item = S>,
    S: Into<OsString>,
{
    args.into_iter().map(Into::into).collect()
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use codecrew_config::Config;

    pub fn provider(kind: &str) -> Provider {
        let config = Config::default();
        Provider::new(kind, config.agents[kind].clone())
    }

    pub fn args(spec: &CommandSpec) -> Vec<String> {
        spec.args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    pub fn turn(session: Option<&'static str>, mode: Mode) -> Turn<'static> {
        Turn {
            prompt: "the prompt",
            session,
            mode,
            model: Some("haiku"),
            assume_yes: false,
            schema: None,
            system: None,
        }
    }

    pub fn env<'a>(spec: &'a CommandSpec, name: &str) -> Option<&'a str> {
        spec.env
            .iter()
            .find(|(key, _)| key == name)
            .and_then(|(_, value)| value.to_str())
    }
}

#[cfg(test)]
#[path = "lib_tests.rs"]
mod tests;
