//! What codecrew asks of every CLI it drives: the [`Cli`] trait, one implementation per
//! module beside this one, and the turn it is given.

use std::path::{Path, PathBuf};

use codecrew_intercept::decode::Format;
use codecrew_tools::Mode;

use super::drive;
use super::identifiers::SessionShape;
use super::wall;
use crate::drive::process::CommandSpec;
use codecrew_config::ProviderKind;

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
    /// On a turn that asks for the answer's JSON document alone (a re-ask after an answer
    /// that did not fit `--schema`): the schema in the form the CLI's own mechanism takes
    /// ([`Cli::native_schema`]), which holds its model to it; codecrew checks the answer
    /// anyway. Never on a turn where the model may call codecrew's tools: they are
    /// written in its text, which a native schema would forbid.
    pub schema: Option<&'a serde_json::Value>,
    /// codecrew's standing instructions for the whole session (its tools section), for a
    /// CLI that takes a system prompt of its own ([`Cli::takes_system_prompt`]); the
    /// prompt then carries only the task. Given on every turn: a kept process takes it
    /// when it starts, a turn run by a process of its own each time.
    pub system: Option<&'a str>,
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
    /// The agent's reasoning effort (`effort` in its config, one of the levels its CLI
    /// accepts), `None` for the CLI's own default.
    pub effort: Option<&'a str>,
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
    /// `codex app-server` JSON-RPC (`app_server`).
    AppServer,
    /// The Agent Client Protocol (`acp`): `gemini --acp`, `qwen --acp`.
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

    /// The output format of the CLI as codecrew runs it: a known CLI's is its dialect in
    /// the registry ([`codecrew_config::CliKind::format`]); a declared command's is
    /// configured.
    fn format(&self) -> Format {
        match self.kind() {
            ProviderKind::Cli(kind) => kind.format(),
            ProviderKind::Command => Format::Text,
        }
    }

    /// Whether a follow-up turn can continue the CLI's own session; otherwise codecrew
    /// sends the transcript so far.
    fn can_resume(&self) -> bool {
        true
    }

    /// Whether the CLI takes codecrew's tools section as a system prompt of its own
    /// ([`Turn::system`], on its command line) rather than in the first message.
    fn takes_system_prompt(&self) -> bool {
        false
    }

    /// The shape of the session ids the CLI gives: a stored or reported id of another
    /// shape is never passed to it ([`super::identifiers`]).
    fn session_shape(&self) -> SessionShape {
        SessionShape::Word
    }

    /// Whether `--version` prints the CLI's version (`doctor` shows it).
    fn reports_version(&self) -> bool {
        true
    }

    /// The command line of one turn run by a process of its own. The prompt goes on
    /// stdin or in one argv element, never through a shell.
    fn turn_command(&self, turn: &TurnCommand<'_>) -> CommandSpec;

    /// The form in which this CLI's own structured-output mechanism takes `schema` (the
    /// run's `--schema`) on a turn that asks for the answer's document alone
    /// ([`Turn::schema`]): `Ok(None)` where codecrew uses none for this CLI (its check and
    /// re-ask do all), `Err(why)` where the CLI cannot take this schema (refused before
    /// any CLI starts).
    fn native_schema(
        &self,
        _schema: &serde_json::Value,
    ) -> Result<Option<serde_json::Value>, String> {
        Ok(None)
    }

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

    /// Whether a failed turn that was given [`Turn::schema`] failed because the model
    /// cannot take a schema (what the CLI said: its error, then its stderr): the turn then
    /// runs again without it, codecrew's check alone holding the answer to the schema.
    fn refused_native_schema(&self, _said: &str) -> bool {
        false
    }

    /// What to do about a failed turn, when what the CLI said (its error, then its
    /// stderr) shows it is not signed in.
    fn failure_hint(&self, _said: &str) -> Option<&'static str> {
        None
    }

    /// The model names the CLI itself resolves to its current models (its aliases:
    /// Claude Code's `sonnet`, Gemini CLI's `flash`), which stay good across its
    /// releases: what an editor offers beside the agent's configured model. Empty where
    /// the CLI's models are only full names that come and go.
    fn model_aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// The arguments of the CLI's own sign-in, run at a terminal (`codex login`); `&[]`
    /// for a CLI that signs in when started on its own. None where there is no one
    /// sign-in (llm's keys are per provider; a declared command's is its own).
    fn sign_in(&self) -> Option<&'static [&'static str]> {
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
