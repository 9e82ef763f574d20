//! opencode's and Qwen Code's own tools under codecrew, attacked as a model that read
//! hostile text would: their own write tool in `query`, their own shell in either mode.
//! (Every CLI's own tools against codecrew's policy and its wall: native_policy.rs.)

use super::*;

/// Each CLI's own write and shell calls, on an absolute path in the workspace.
fn native_calls(agent: &str, file: &Path, marker: &Path) -> (Reply, Reply) {
    let touch = format!("touch {}", marker.display());
    match agent {
        "opencode" => (
            Reply::tool(
                "write",
                json!({"filePath": file, "content": "NATIVE-WROTE"}),
            ),
            Reply::tool("bash", json!({"command": touch, "description": "touch"})),
        ),
        _ => (
            Reply::tool(
                "write_file",
                json!({"file_path": file, "content": "NATIVE-WROTE"}),
            ),
            Reply::tool(
                "run_shell_command",
                json!({"command": touch, "description": "touch"}),
            ),
        ),
    }
}

#[test]
fn their_own_writes_run_only_in_execute_and_their_shells_never() {
    for agent in ["opencode", "qwen"] {
        let Some(world) = World::new(&format!("e2e-native-{agent}"), Script::new()) else {
            return;
        };
        let file = world.workspace().join("native.txt");
        let marker = world.workspace().join("native-shell-ran");
        let (write, shell) = native_calls(agent, &file, &marker);
        world.server.set_script(
            Script::new()
                .rule(Rule::on_any_tool_result(Reply::text("The agent went on.")))
                .rule(Rule::on_prompt("E2E-NATIVE-WRITE", write))
                .rule(Rule::on_prompt("E2E-NATIVE-SHELL", shell)),
        );
        for mode in ["query", "execute"] {
            let (run, doc) = world.json(mode, &[&format!("@{agent} E2E-NATIVE-SHELL")]);
            run.assert_code(0);
            assert!(!marker.exists(), "{agent} {mode}: its own shell ran: {doc}");

            let (run, doc) = world.json(mode, &[&format!("@{agent} E2E-NATIVE-WRITE")]);
            run.assert_code(0);
            match mode {
                "query" => assert!(!file.exists(), "{agent}: wrote in query: {doc}"),
                _ => assert_eq!(
                    std::fs::read_to_string(&file).unwrap_or_default(),
                    "NATIVE-WROTE",
                    "{agent}: an ordinary edit in execute: {doc}"
                ),
            }
        }
    }
}
