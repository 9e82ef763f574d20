//! Copilot's own tools under codecrew.

use super::*;

/// Copilot cannot ask codecrew about its own tools, so the model is offered only its
/// reading tools in either mode (without `--yes`): a model that reaches for Copilot's
/// `bash` instead of codecrew's `run_command` runs nothing.
#[test]
fn copilot_own_tools_are_only_its_reading_tools_without_yes() {
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
        assert_eq!(offered, ["view", "grep", "glob"], "{mode}");
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
