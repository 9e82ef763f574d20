//! Claude Code (`claude`): `-p --output-format stream-json --verbose`, the prompt on
//! stdin; `--resume <id>` continues a session; kept for the loop with
//! `--input-format stream-json`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use codecrew_intercept::decode::Format;
use codecrew_tools::Mode;
use codecrew_tools::executor::CallRequest;
use serde_json::Value;

use super::native::{self, Native};
use super::{Cli, LongLived, TurnCommand, argv, wall};
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

    /// `~/.claude` (or `$CLAUDE_CONFIG_DIR`): its settings, sign-in and sessions.
    fn state(&self) -> Option<Vec<PathBuf>> {
        Some(
            wall::dir_from_env("CLAUDE_CONFIG_DIR", ".claude")
                .into_iter()
                .collect(),
        )
    }

    /// `~/.claude.json`, its global state, beside the folder.
    fn state_files(&self) -> Vec<PathBuf> {
        wall::home()
            .map(|home| home.join(".claude.json"))
            .into_iter()
            .collect()
    }

    fn turn_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        self.command(command, false)
    }

    fn long_lived(&self) -> Option<LongLived> {
        Some(LongLived::StreamJsonInput)
    }

    /// The turn's command, reading its user messages from stdin as stream-json, and
    /// asking codecrew before each of its own tool calls (see [`super::claude_control`]).
    fn kept_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        self.command(command, true)
    }
}

impl Claude {
    /// Per turn, Claude cannot ask codecrew: its own writes and shell are off (its
    /// headless default mode refuses what would ask, and `Bash` is not offered), and its
    /// reads stay inside its wall. Kept, every call of its own asks codecrew first through
    /// a `PreToolUse` hook on the control pipe (`--permission-prompt-tool stdio` for the
    /// questions Claude adds itself), in its default permission mode.
    fn command(&self, command: &TurnCommand<'_>, kept: bool) -> CommandSpec {
        let turn = command.turn;
        let mut args: Vec<String> = vec!["-p".to_owned()];
        if kept {
            args.extend(
                [
                    "--input-format",
                    "stream-json",
                    "--permission-prompt-tool",
                    "stdio",
                ]
                .map(String::from),
            );
        }
        args.extend(["--output-format", "stream-json", "--verbose"].map(String::from));
        if let Some(model) = command.model {
            args.extend(["--model".to_owned(), model.to_owned()]);
        }
        if let Some(session) = turn.session {
            args.extend(["--resume".to_owned(), session.to_owned()]);
        }
        let disallowed = match (turn.mode, kept) {
            // Not even offered in query: the model reaches for codecrew's tools.
            (Mode::Query, _) => Some("Edit,Write,NotebookEdit"),
            (Mode::Execute, false) => Some("Bash"),
            (Mode::Execute, true) => None,
        };
        if let Some(disallowed) = disallowed {
            args.extend(["--disallowedTools".to_owned(), disallowed.to_owned()]);
        }
        args.extend(command.extra.iter().cloned());
        let mut spec = command.spec();
        spec.args = argv(args);
        if !kept {
            spec.stdin = Some(turn.prompt.as_bytes().to_vec());
        }
        spec.env_remove = CLAUDE_MARKERS.iter().map(OsString::from).collect();
        spec
    }
}

/// What one of Claude's own tool calls amounts to. `cwd` is where its shell stands
/// (Claude follows a `cd` from one call to the next).
pub fn native(tool: &str, input: &Value, id: &str, cwd: Option<&str>) -> Native {
    let text = |field: &str| input.get(field).and_then(Value::as_str);
    let one = |call: Option<CallRequest>| Native::Judged(call.into_iter().collect());
    match tool {
        "Read" => one(text("file_path").map(|path| native::read("claude", tool, id, path))),
        "NotebookRead" => {
            one(text("notebook_path").map(|path| native::read("claude", tool, id, path)))
        }
        "Write" | "Edit" | "MultiEdit" => {
            one(text("file_path").map(|path| native::write("claude", tool, id, path)))
        }
        "NotebookEdit" => {
            one(text("notebook_path").map(|path| native::write("claude", tool, id, path)))
        }
        "Glob" | "Grep" | "LS" => one(text("path")
            .or(cwd)
            .map(|path| native::list("claude", tool, id, path))),
        "Bash" => {
            one(text("command")
                .map(|line| native::shell("claude", tool, id, line, cwd.map(Path::new))))
        }
        // Planning, to-do lists, searching its own tool list, sub-agents (whose calls
        // come through the same hook), its own background tasks.
        "Task" | "Agent" | "TodoWrite" | "TodoRead" | "ExitPlanMode" | "EnterPlanMode"
        | "ToolSearch" | "TaskStop" | "TaskOutput" | "KillShell" | "BashOutput" | "ListAgents"
        | "SendMessage" | "ReportFindings" | "Skill" => Native::Harmless,
        // The web, scheduling, worktrees, questions to a user who is not there, and
        // whatever comes next: asked about in execute, refused in query.
        _ => one(Some(native::other("claude", tool, id, input))),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

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
    fn the_kept_process_reads_stream_json_and_asks_codecrew_before_its_own_tools() {
        let spec = provider("claude").resident_command(
            Path::new("claude"),
            &turn(None, Mode::Execute),
            Path::new("."),
        );
        let args = args(&spec);
        assert_eq!(
            args[..5],
            [
                "-p",
                "--input-format",
                "stream-json",
                "--permission-prompt-tool",
                "stdio"
            ]
        );
        assert!(
            !args
                .iter()
                .any(|a| a == "acceptEdits" || a == "--disallowedTools")
        );
        assert!(spec.stdin.is_none());
    }

    #[test]
    fn per_turn_in_execute_claudes_shell_is_off() {
        let spec = provider("claude").command(
            Path::new("claude"),
            &turn(None, Mode::Execute),
            Path::new("."),
        );
        let args = args(&spec);
        assert!(args.ends_with(&["--disallowedTools".to_owned(), "Bash".to_owned()]));
        assert!(!args.iter().any(|a| a == "acceptEdits"));
    }

    #[test]
    fn claudes_own_calls_map_to_the_codecrew_calls_they_amount_to() {
        let calls = |native: Native| match native {
            Native::Judged(calls) => calls
                .into_iter()
                .map(|call| (call.tool, call.input))
                .collect::<Vec<_>>(),
            Native::Harmless => vec![],
        };
        let read = calls(super::native(
            "Read",
            &json!({"file_path": "/w/.env"}),
            "t1",
            None,
        ));
        assert_eq!(read[0].0, "read_file");
        assert_eq!(read[0].1["path"], "/w/.env");
        let write = calls(super::native(
            "Edit",
            &json!({"file_path": "/w/AGENTS.md", "old_string": "a"}),
            "t2",
            None,
        ));
        assert_eq!(write[0].0, "write_file");
        let shell = calls(super::native(
            "Bash",
            &json!({"command": "touch x"}),
            "t3",
            Some("/w/sub"),
        ));
        assert_eq!(shell[0].0, "run_command");
        assert_eq!(shell[0].1["command"], "touch x");
        assert_eq!(shell[0].1["cwd"], "/w/sub");
        assert_eq!(
            super::native("TodoWrite", &json!({}), "t4", None),
            Native::Harmless
        );
        let web = calls(super::native(
            "WebFetch",
            &json!({"url": "http://x"}),
            "t5",
            None,
        ));
        assert_eq!(web[0].0, "claude:WebFetch");
        // A call codecrew cannot read is refused: nothing to judge.
        assert_eq!(
            super::native("Write", &json!({}), "t6", None),
            Native::Judged(vec![])
        );
    }
}
