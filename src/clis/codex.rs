//! Codex (`codex`): `exec --json`, the prompt on stdin (`-`); `exec … resume <id>`
//! continues a thread; kept for the loop as `codex app-server` (see
//! [`super::app_server`]), where codecrew decides each of its own commands and patches.
//! Run per turn it cannot ask, so its own shell is off and its sandbox read-only (its
//! patches are refused) in either mode: codecrew's tools do that work.

use std::path::PathBuf;

use codecrew_intercept::decode::Format;

use super::{Cli, LongLived, TurnCommand, argv, wall};
use crate::clis::process::CommandSpec;
use crate::config::ProviderKind;

#[derive(Debug)]
pub struct Codex;

impl Cli for Codex {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Codex
    }

    fn program(&self) -> &str {
        "codex"
    }

    fn install_hint(&self) -> String {
        "npm install -g @openai/codex".to_owned()
    }

    fn format(&self) -> Format {
        Format::Codex
    }

    /// `~/.codex` (or `$CODEX_HOME`): its config, sign-in and sessions.
    fn state(&self) -> Option<Vec<PathBuf>> {
        Some(
            wall::dir_from_env("CODEX_HOME", ".codex")
                .into_iter()
                .collect(),
        )
    }

    fn turn_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let turn = command.turn;
        let mut args: Vec<String> = ["exec", "--json", "--skip-git-repo-check"]
            .map(String::from)
            .to_vec();
        if let Some(model) = command.model {
            args.extend(["-m".to_owned(), model.to_owned()]);
        }
        args.extend(["--sandbox", "read-only", "--disable", "shell_tool"].map(String::from));
        args.extend(command.extra.iter().cloned());
        // Exec options come before `resume`; `-` reads the prompt from stdin.
        if let Some(session) = turn.session {
            args.extend(["resume".to_owned(), session.to_owned()]);
        }
        args.push("-".to_owned());
        let mut spec = command.spec();
        spec.args = argv(args);
        spec.stdin = Some(turn.prompt.as_bytes().to_vec());
        spec
    }

    fn long_lived(&self) -> Option<LongLived> {
        Some(LongLived::AppServer)
    }

    /// `codex app-server`: the thread's model, sandbox and session go in its requests.
    fn kept_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let mut spec = command.spec();
        // Without this, a model server that refuses connections makes Codex retry
        // forever instead of failing the turn.
        spec.args = argv(["app-server", "--disable", "unbounded_connection_retries"]);
        spec
    }

    /// Codex's `turn.completed` counts the whole thread, earlier resumed runs included.
    fn reports_session_usage(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use codecrew_tools::Mode;

    use super::super::testing::*;

    #[test]
    fn exec_options_come_before_resume() {
        let spec = provider("codex").command(
            Path::new("codex"),
            &turn(Some("t1"), Mode::Execute),
            Path::new("."),
        );
        assert_eq!(
            args(&spec),
            [
                "exec",
                "--json",
                "--skip-git-repo-check",
                "-m",
                "haiku",
                "--sandbox",
                "read-only",
                "--disable",
                "shell_tool",
                "resume",
                "t1",
                "-"
            ]
        );
    }
}
