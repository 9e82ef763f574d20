//! Claude Code (`claude`): `-p --output-format stream-json --verbose`, the prompt on
//! stdin; `--resume <id>` continues a session; kept for the loop with
//! `--input-format stream-json`.

use std::ffi::OsString;

use codecrew_intercept::decode::Format;
use codecrew_tools::Mode;

use super::{Cli, LongLived, TurnCommand, argv};
use crate::clis::process::CommandSpec;
use crate::config::ProviderKind;

/// Variables that make a CLI believe it runs inside another CLI session (set when
/// codecrew itself is run from Claude Code); they break headless runs.
const CLAUDE_MARKERS: [&str; 4] = [
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SSE_PORT",
    "CLAUDE_CODE_SESSION_ID",
];

#[derive(Debug)]
pub struct Claude;

impl Cli for Claude {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Claude
    }

    fn program(&self) -> &str {
        "claude"
    }

    fn install_hint(&self) -> String {
        "npm install -g @anthropic-ai/claude-code".to_owned()
    }

    fn format(&self) -> Format {
        Format::Claude
    }

    fn turn_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let turn = command.turn;
        let mut args: Vec<String> = ["-p", "--output-format", "stream-json", "--verbose"]
            .map(String::from)
            .to_vec();
        if let Some(model) = command.model {
            args.extend(["--model".to_owned(), model.to_owned()]);
        }
        if let Some(session) = turn.session {
            args.extend(["--resume".to_owned(), session.to_owned()]);
        }
        match turn.mode {
            // Claude's own tools, read-only: headless runs deny what needs approval,
            // and these never get it.
            Mode::Query => {
                args.extend(["--disallowedTools", "Edit,Write,NotebookEdit"].map(String::from))
            }
            Mode::Execute => args.extend(["--permission-mode", "acceptEdits"].map(String::from)),
        }
        args.extend(command.extra.iter().cloned());
        let mut spec = command.spec();
        spec.args = argv(args);
        spec.stdin = Some(turn.prompt.as_bytes().to_vec());
        spec.env_remove = CLAUDE_MARKERS.iter().map(OsString::from).collect();
        spec
    }

    fn long_lived(&self) -> Option<LongLived> {
        Some(LongLived::StreamJsonInput)
    }

    /// The turn's command, reading its user messages from stdin as stream-json.
    fn kept_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let mut spec = self.turn_command(command);
        let at = spec
            .args
            .iter()
            .position(|a| a == "-p")
            .map_or(0, |p| p + 1);
        spec.args
            .splice(at..at, argv(["--input-format", "stream-json"]));
        spec
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::testing::*;
    use super::*;

    #[test]
    fn a_turn_resumes_its_session_and_keeps_claudes_writes_out_of_query() {
        let spec = provider("claude").command(
            Path::new("claude"),
            &turn(Some("s1"), Mode::Query),
            Path::new("."),
        );
        assert_eq!(
            args(&spec),
            [
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--model",
                "haiku",
                "--resume",
                "s1",
                "--disallowedTools",
                "Edit,Write,NotebookEdit"
            ]
        );
        assert_eq!(spec.stdin.as_deref(), Some(&b"the prompt"[..]));
        assert!(spec.env_remove.contains(&OsString::from("CLAUDECODE")));
    }

    #[test]
    fn the_kept_process_reads_stream_json_and_nothing_else_on_stdin() {
        let spec = provider("claude").resident_command(
            Path::new("claude"),
            &turn(None, Mode::Execute),
            Path::new("."),
        );
        assert_eq!(args(&spec)[..3], ["-p", "--input-format", "stream-json"]);
        assert!(spec.stdin.is_none());
    }
}
