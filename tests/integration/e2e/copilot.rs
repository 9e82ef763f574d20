//! Copilot's own tools under codecrew.

use super::*;

/// Copilot's own tools are governed like Claude's: in `query` the model is offered only its
/// reading tools, and in `execute` its file edits may run but its shell may not, so a
/// model that reaches for Copilot's `bash` instead of codecrew's `run_command` runs
/// nothing.
#[test]
fn copilot_own_tools_read_only_in_query_and_no_shell_in_execute() {
    let shell = Reply::tool(
        "bash",
        json!({"command": "touch made-by-copilot-shell", "description": "touch",
               "mode": "sync", "initial_wait": 10}),
    );
    // Copilot reports a shell that ran as "<shellId: 0 completed with exit code 0>".
    let script = Script::new()
        .on_tool_result("completed with exit code", Reply::text("The shell ran."))
        .on_tool_result("", Reply::text("The shell was refused."))
        .on_prompt("E2E-COPILOT-TOOLS", shell);
    let Some(world) = World::new("e2e-copilot-tools", script) else {
        return;
    };
    let marker = world.workspace().join("made-by-copilot-shell");
    for mode in ["query", "execute"] {
        let before = world.server.model_requests().len();
        let (run, doc) = world.json(mode, &["@copilot E2E-COPILOT-TOOLS"]);
        run.assert_code(0);
        assert!(!marker.exists(), "{mode}: Copilot's shell ran: {doc}");
        let requests = world.server.model_requests();
        let first = requests[before..]
            .iter()
            .find(|r| {
                r.prompt
                    .as_deref()
                    .is_some_and(|p| p.contains("E2E-COPILOT-TOOLS"))
            })
            .unwrap_or_else(|| panic!("{mode}: no request"));
        let offered: Vec<&str> = first.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap())
            .collect();
        if mode == "query" {
            assert_eq!(offered, ["view", "grep", "glob"], "{mode}");
        } else {
            assert!(offered.contains(&"create"), "{mode}: {offered:?}");
        }
        let answered = requests[before..]
            .iter()
            .find(|r| r.tool_result.is_some())
            .unwrap_or_else(|| panic!("{mode}: the model never got the tool's result"));
        assert_eq!(
            result(&doc)["response"],
            "The shell was refused.",
            "{mode}: {:?}",
            answered.tool_result
        );
    }
}
