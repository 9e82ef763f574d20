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
//! Adding a CLI: a module here, its line in [`cli_for`] (and its name in
//! [`ProviderKind`]), a decoder with fixtures of its real output in
//! `codecrew-intercept` unless it prints a format one already reads, and its row in the
//! end-to-end matrix.

mod claude;
mod codex;
mod command;
mod copilot;
mod gemini;
mod llm;
mod opencode;
mod qwen;

pub mod drive;
pub mod wall;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use codecrew_intercept::decode::Format;
use codecrew_tools::Mode;

use crate::clis::drive::process::CommandSpec;
use crate::config::{AgentConfig, ProviderKind};

/// One turn to run.
#[derive(Debug, Clone)]
pub struct Turn<'a> {
    pub prompt: &'a str,
    /// The session to continue, when the CLI can resume one.
    pub session: Option<&'a str>,
    pub mode: Mode,
    pub model: Option<&'a str>,
    /// `--yes`: what would ask is allowed. A CLI that cannot ask codecrew about its own
    /// tools turns them on only then.
    pub assume_yes: bool,
}

/// Everything one turn's command line is made from.
#[derive(Debug, Clone, Copy)]
pub struct TurnCommand<'a> {
    /// The CLI, found on PATH.
    pub program: &'a Path,
    pub cwd: &'a Path,
    pub turn: &'a Turn<'a>,
    /// The model the turn runs with (the mention's, else the agent's), `None` for the
    /// CLI's own default.
    pub model: Option<&'a str>,
    /// The agent's extra arguments for this mode.
    pub extra: &'a [String],
    /// Whether the user trusts the project (`trusted_projects`): only then does the CLI
    /// load the configuration the checkout ships for it (hooks, MCP servers, plugins,
    /// settings), which can run programs or widen what its tools may do.
    pub trusted: bool,
}

impl TurnCommand<'_> {
    /// A command running the program in the workspace, with nothing else set yet.
    pub fn spec(&self) -> CommandSpec {
        CommandSpec {
            program: self.program.to_path_buf(),
            cwd: Some(self.cwd.to_path_buf()),
            ..CommandSpec::default()
        }
    }
}

/// A run of the CLI before its first turn, that fills a folder its wall then keeps read
/// only ([`Cli::preparation`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preparation {
    /// The CLI's arguments for a run that does nothing else (`--version`).
    pub args: Vec<String>,
    /// What that run may write, besides what the CLI's state grants.
    pub write: Vec<PathBuf>,
}

/// How a CLI serves a whole tool loop from one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LongLived {
    /// A stream-json `user` line per turn on stdin, output as when run per turn
    /// (Claude's `--input-format stream-json`). The turn's own flags apply.
    StreamJsonInput,
    /// `codex app-server` JSON-RPC ([`app_server`]).
    AppServer,
    /// The Agent Client Protocol ([`acp`]): `gemini --acp`, `qwen --acp`.
    /// A stored session is continued per turn (the client opens new sessions only).
    Acp,
}

/// What codecrew knows of one CLI.
pub trait Cli: std::fmt::Debug + Send + Sync {
    fn kind(&self) -> ProviderKind;

    /// The program looked up on PATH (empty when an agent configured none).
    fn program(&self) -> &str;

    /// How to install the CLI, for the "not installed" message.
    fn install_hint(&self) -> String;

    /// The output format of the CLI as codecrew runs it.
    fn format(&self) -> Format;

    /// Whether a follow-up turn can continue the CLI's own session; otherwise codecrew
    /// sends the transcript so far.
    fn can_resume(&self) -> bool {
        true
    }

    /// Whether `--version` prints the CLI's version (`doctor` shows it).
    fn reports_version(&self) -> bool {
        true
    }

    /// The command line of one turn run by a process of its own. The prompt goes on
    /// stdin or in one argv element, never through a shell.
    fn turn_command(&self, turn: &TurnCommand<'_>) -> CommandSpec;

    /// The CLI's long-lived mode, if it has one.
    fn long_lived(&self) -> Option<LongLived> {
        None
    }

    /// The command line of a process kept for the loop ([`Cli::long_lived`]).
    fn kept_command(&self, turn: &TurnCommand<'_>) -> CommandSpec {
        self.turn_command(turn)
    }

    /// How the CLI's ACP agent differs from the protocol's plain course
    /// ([`LongLived::Acp`]), `model` being the turn's model: whether it continues a
    /// stored session (else such a job runs per turn), how it takes a model, what of its
    /// stream is not the model's.
    fn acp_dialect(&self, _model: Option<&str>) -> drive::acp::Dialect {
        drive::acp::Dialect::default()
    }

    /// Whether the usage the CLI reports at the end of a run counts its whole session,
    /// earlier resumed runs included, rather than this run alone.
    fn reports_session_usage(&self) -> bool {
        false
    }

    /// What to do about a failed turn, when what the CLI said (its error, then its
    /// stderr) shows it is not signed in.
    fn failure_hint(&self, _said: &str) -> Option<&'static str> {
        None
    }

    /// Whether the CLI's processes share what the first of them sets up on a fresh data
    /// folder, so that two starting at once may collide (opencode's database): its first
    /// start in codecrew goes alone ([`drive::start`]).
    fn shares_start_up(&self) -> bool {
        false
    }

    /// Whether `stderr`, of a start that failed before it answered, shows it collided
    /// with another of the CLI's processes setting up ([`Cli::shares_start_up`]): it is
    /// then started again.
    fn collided_at_start(&self, _stderr: &str) -> bool {
        false
    }

    /// A process kept for the loop, started at `started`, has ended; `session` is the
    /// session it served, where the protocol names one. Where the CLI's long-lived mode
    /// leaves something of its own start-up behind, it goes here.
    fn after_kept(&self, _started: std::time::SystemTime, _session: Option<&str>) {}

    /// What the CLI keeps in the home directory, as its wall grants it ([`wall::State`]):
    /// its settings read only, its sessions and caches writable. None leaves the CLI
    /// unconfined: a user-declared command whose needs codecrew does not know.
    fn state(&self) -> Option<wall::State>;

    /// What of the CLI's state belongs to the workspace `cwd`, besides [`Cli::state`]'s
    /// own: the folder it keeps for that project alone (written, where the rest of its
    /// projects' folders are not), and what of it is fed to a later session (Claude's
    /// auto-memory, held).
    fn state_for(&self, _cwd: &Path) -> wall::State {
        wall::State::default()
    }

    /// The configuration a checkout can ship for this CLI (paths relative to the
    /// workspace, files or folders) that can make it run a program or widen what its
    /// tools may do. Unless the user trusts the project ([`TurnCommand::trusted`]) the
    /// module tells the CLI to leave it out, and in `execute` it is held as it was for
    /// the run ([`wall::Guarded`]): a CLI does not rewrite it on its own (Qwen Code's
    /// settings migration, opencode's `$schema`). Instructions (`CLAUDE.md`,
    /// `AGENTS.md`) are not among them: text for the model.
    fn project_files(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether the CLI carries on when its wall does not let it read
    /// [`Cli::project_files`]; then, unless the project is trusted, it does not (the
    /// kernel behind the CLI's own flags). Gemini, Qwen Code, Codex and opencode stop
    /// at a configuration file they cannot read.
    fn runs_without_project_files(&self) -> bool {
        false
    }

    /// Why the CLI must not start in `cwd`, when the checkout ships something of its own
    /// that the CLI would run whatever codecrew tells it and the user has not trusted
    /// the project.
    fn refuses(&self, _cwd: &Path, _trusted: bool) -> Option<String> {
        None
    }

    /// A run that must come before the CLI's first turn (the installed program being
    /// `program`), when what the CLI would otherwise write on start-up into a folder it
    /// runs code from is missing: its wall for the turns then keeps that folder read
    /// only, so that nothing run inside it can plant code there that the CLI would run
    /// later, outside codecrew (Copilot's unpacked package).
    fn preparation(&self, _program: &Path) -> Option<Preparation> {
        None
    }

    /// Whether, kept for the loop, the CLI asks codecrew before every read of its own
    /// (Claude's hook, Codex's approvals): only then may its wall in `execute` let it
    /// read the workspace's sensitive files, which the policy asks about. Every other
    /// CLI reads the workspace without them, as in `query`.
    fn judges_own_reads(&self) -> bool {
        false
    }
}

/// The module that knows the agent's CLI: the registry.
fn cli_for(agent_id: &str, agent: &AgentConfig) -> Arc<dyn Cli> {
    match agent.provider {
        ProviderKind::Claude => Arc::new(claude::Claude),
        ProviderKind::Gemini => Arc::new(gemini::Gemini),
        ProviderKind::Codex => Arc::new(codex::Codex),
        ProviderKind::Copilot => Arc::new(copilot::Copilot),
        ProviderKind::Opencode => Arc::new(opencode::Opencode),
        ProviderKind::Qwen => Arc::new(qwen::Qwen),
        ProviderKind::Llm => Arc::new(llm::Llm),
        ProviderKind::Command => Arc::new(command::Command::new(agent_id, agent)),
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

    pub fn reports_version(&self) -> bool {
        self.cli.reports_version()
    }

    pub fn reports_session_usage(&self) -> bool {
        self.cli.reports_session_usage()
    }

    pub fn failure_hint(&self, said: &str) -> Option<&'static str> {
        self.cli.failure_hint(said)
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
        let confinement = state.and_then(|mut state| {
            state.extend(self.cli.state_for(cwd));
            if mode == Mode::Execute {
                state
                    .guarded
                    .extend(untrusted.iter().map(|file| wall::Guarded {
                        path: cwd.join(file),
                        hold: wall::Hold::Whole,
                    }));
            }
            wall::confinement(program, cwd, mode, state, reads_sensitive, withheld)
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
    crate::clis::wall::install::find_program(&program)
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
    use crate::config::Config;

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
mod tests {
    use super::testing::*;
    use super::*;

    #[test]
    fn every_built_in_agent_has_its_cli() {
        for kind in ProviderKind::BUILT_IN {
            let provider = provider(kind.name());
            assert_eq!(provider.kind(), kind);
            assert_eq!(provider.program(), kind.name());
            assert!(!provider.install_hint().is_empty());
            assert!(provider.can_resume(), "{kind:?}");
        }
    }

    #[test]
    fn only_claude_and_codex_kept_and_llm_have_every_read_judged() {
        for mode in [Mode::Query, Mode::Execute] {
            let judged: Vec<&str> = ProviderKind::BUILT_IN
                .into_iter()
                .filter(|kind| provider(kind.name()).judges_every_read(mode))
                .map(ProviderKind::name)
                .collect();
            assert_eq!(judged, ["claude", "codex", "llm"], "{mode:?}");
        }
        let mut agent = crate::config::Config::default().agents["claude"].clone();
        agent.keep_alive = Some(false);
        assert!(
            !Provider::new("claude", agent).judges_every_read(Mode::Query),
            "run per turn, Claude's reads ask no one"
        );
    }

    #[test]
    fn every_cli_with_tools_is_kept_for_the_loop() {
        let kept: Vec<&str> = ProviderKind::BUILT_IN
            .into_iter()
            .filter(|kind| provider(kind.name()).keeps_alive(Mode::Execute))
            .map(ProviderKind::name)
            .collect();
        assert_eq!(
            kept,
            ["claude", "gemini", "codex", "copilot", "opencode", "qwen"]
        );
        let mut agent = crate::config::Config::default().agents["codex"].clone();
        agent.args.query = vec!["--oss".into()];
        let codex = Provider::new("codex", agent);
        assert!(
            !codex.keeps_alive(Mode::Query),
            "extra exec flags: per turn"
        );
        assert!(codex.keeps_alive(Mode::Execute));
    }
}
