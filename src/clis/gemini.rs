//! Gemini CLI (`gemini`): `--output-format stream-json`, the whole prompt on stdin (no
//! `-p`); `--resume <id>` continues a session; kept for the loop as an ACP agent
//! (`gemini --acp`, see [`super::acp`]).

use std::ffi::OsString;

use codecrew_intercept::decode::Format;
use codecrew_tools::Mode;

use super::{Cli, LongLived, TurnCommand, argv};
use crate::clis::process::CommandSpec;
use crate::config::ProviderKind;

#[derive(Debug)]
pub struct Gemini;

impl Cli for Gemini {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Gemini
    }

    fn program(&self) -> &str {
        "gemini"
    }

    fn install_hint(&self) -> String {
        "npm install -g @google/gemini-cli".to_owned()
    }

    fn format(&self) -> Format {
        Format::Gemini
    }

    fn turn_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let turn = command.turn;
        let mut args: Vec<String> = ["--output-format", "stream-json"]
            .map(String::from)
            .to_vec();
        if let Some(model) = command.model {
            args.extend(["-m".to_owned(), model.to_owned()]);
        }
        if let Some(session) = turn.session {
            args.extend(["--resume".to_owned(), session.to_owned()]);
        }
        if turn.mode == Mode::Execute {
            args.extend(["--approval-mode", "auto_edit"].map(String::from));
        }
        args.extend(command.extra.iter().cloned());
        let mut spec = command.spec();
        spec.args = argv(args);
        // Headless Gemini reads the whole prompt from stdin when there is no -p.
        spec.stdin = Some(turn.prompt.as_bytes().to_vec());
        spec
    }

    fn long_lived(&self) -> Option<LongLived> {
        Some(LongLived::Acp)
    }

    /// `gemini --acp` with the model and approval mode of a run per turn.
    fn kept_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let mut args = vec![OsString::from("--acp")];
        if let Some(model) = command.model {
            args.extend(argv(["-m", model]));
        }
        if command.turn.mode == Mode::Execute {
            args.extend(argv(["--approval-mode", "auto_edit"]));
        }
        let mut spec = command.spec();
        spec.args = args;
        spec
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::testing::*;
    use super::*;

    #[test]
    fn the_prompt_goes_on_stdin() {
        let spec = provider("gemini").command(
            Path::new("gemini"),
            &turn(None, Mode::Query),
            Path::new("."),
        );
        assert_eq!(
            args(&spec),
            ["--output-format", "stream-json", "-m", "haiku"]
        );
        assert!(spec.stdin.is_some());
    }

    #[test]
    fn the_kept_agent_speaks_acp_with_the_turns_model_and_mode() {
        let spec = provider("gemini").resident_command(
            Path::new("gemini"),
            &turn(None, Mode::Execute),
            Path::new("."),
        );
        assert_eq!(
            args(&spec),
            ["--acp", "-m", "haiku", "--approval-mode", "auto_edit"]
        );
    }
}
