//! Qwen Code (`qwen`): `--output-format stream-json` (Claude's shape, read by the Claude
//! decoder), the prompt on stdin; `--resume <id>` continues a session; kept for the loop
//! as an ACP agent (`qwen --acp`, see [`super::acp`]) with the same flags.
//!
//! Headless, Qwen's default approval mode is `auto` (its own classifier approves
//! actions), so codecrew always sets the mode: `plan` in `query` (nothing modified,
//! nothing run), `default` in `execute` (its edits and shell ask, and codecrew's policy
//! answers; its shell commands it deems read-only it runs without asking, inside its
//! wall). `--safe-mode` keeps its "managed memory" sub-agent from
//! running after each turn with write and shell tools of its own, and keeps out hooks,
//! extensions, skills, MCP servers and context files (`QWEN.md`) codecrew has not seen;
//! settings (the model provider, its key) still apply. (`--bare` would also turn the
//! memory off, but it ignores the auth type chosen in settings.)

use std::path::PathBuf;

use codecrew_intercept::decode::Format;
use codecrew_tools::Mode;

use super::{Cli, LongLived, TurnCommand, argv, wall};
use crate::clis::process::CommandSpec;
use crate::config::ProviderKind;

#[derive(Debug)]
pub struct Qwen;

impl Cli for Qwen {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Qwen
    }

    fn program(&self) -> &str {
        "qwen"
    }

    fn install_hint(&self) -> String {
        "npm install -g @qwen-code/qwen-code".to_owned()
    }

    fn format(&self) -> Format {
        Format::Claude
    }

    /// `~/.qwen`: its settings, sign-in and chats.
    fn state(&self) -> Option<Vec<PathBuf>> {
        Some(
            wall::home()
                .map(|home| home.join(".qwen"))
                .into_iter()
                .collect(),
        )
    }

    fn turn_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let turn = command.turn;
        let mut args: Vec<String> = ["--output-format", "stream-json", "--safe-mode"]
            .map(String::from)
            .to_vec();
        if let Some(model) = command.model {
            args.extend(["-m".to_owned(), model.to_owned()]);
        }
        if let Some(session) = turn.session {
            args.extend(["--resume".to_owned(), session.to_owned()]);
        }
        args.extend([
            "--approval-mode".to_owned(),
            approval_mode(turn.mode).to_owned(),
        ]);
        args.extend(command.extra.iter().cloned());
        let mut spec = command.spec();
        spec.args = argv(args);
        spec.stdin = Some(turn.prompt.as_bytes().to_vec());
        spec
    }

    fn long_lived(&self) -> Option<LongLived> {
        Some(LongLived::Acp)
    }

    /// `qwen --acp` with the model, approval mode and safe mode of a run per turn.
    fn kept_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let mut args = vec!["--acp".to_owned(), "--safe-mode".to_owned()];
        if let Some(model) = command.model {
            args.extend(["-m".to_owned(), model.to_owned()]);
        }
        args.extend([
            "--approval-mode".to_owned(),
            approval_mode(command.turn.mode).to_owned(),
        ]);
        let mut spec = command.spec();
        spec.args = argv(args);
        spec
    }

    /// A resumed run's `result` counts the whole session: a second run that used 100
    /// tokens after a first that used 100 reports 200.
    fn reports_session_usage(&self) -> bool {
        true
    }
}

/// Never Qwen's own `auto` classifier: nothing modified or run in `query`; in `execute`
/// its `default` mode, where its edits and its shell ask first (kept, codecrew answers:
/// [`super::acp`]; per turn, headless, nobody does and they do not run).
fn approval_mode(mode: Mode) -> &'static str {
    match mode {
        Mode::Query => "plan",
        Mode::Execute => "default",
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::testing::*;
    use super::*;

    #[test]
    fn codecrew_sets_the_approval_mode_of_each_mode() {
        let query = provider("qwen").command(
            Path::new("qwen"),
            &turn(Some("s1"), Mode::Query),
            Path::new("."),
        );
        assert_eq!(
            args(&query),
            [
                "--output-format",
                "stream-json",
                "--safe-mode",
                "-m",
                "haiku",
                "--resume",
                "s1",
                "--approval-mode",
                "plan"
            ]
        );
        assert_eq!(query.stdin.as_deref(), Some(&b"the prompt"[..]));
        let execute = provider("qwen").command(
            Path::new("qwen"),
            &turn(None, Mode::Execute),
            Path::new("."),
        );
        assert!(args(&execute).ends_with(&["--approval-mode".into(), "default".into()]));
        assert_eq!(provider("qwen").format(), Format::Claude);
        assert!(provider("qwen").reports_session_usage());
        let kept = provider("qwen").resident_command(
            Path::new("qwen"),
            &turn(None, Mode::Query),
            Path::new("."),
        );
        assert_eq!(
            args(&kept),
            [
                "--acp",
                "--safe-mode",
                "-m",
                "haiku",
                "--approval-mode",
                "plan"
            ]
        );
    }
}
