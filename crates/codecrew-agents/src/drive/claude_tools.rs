//! Claude Code's own tools, and the codecrew calls each amounts to: what the control
//! protocol ([`super::claude_control`]) asks the job's gate about, as the other
//! protocols' modules do for theirs ([`super::app_server`], [`super::acp`]).

use std::path::Path;

use codecrew_tools::executor::CallRequest;
use serde_json::Value;

use super::native::{self, Native};

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
    use serde_json::json;

    use super::*;

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
