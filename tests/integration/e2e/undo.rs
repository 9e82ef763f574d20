//! `codecrew undo` after a real CLI's own write tools: what Claude's Write and Codex's
//! apply_patch changed in execute (not codecrew's tools: the CLI's own) is put back.

use super::*;

/// The agent's own tool that writes `content` to `path`.
fn own_write(agent: &str, path: &Path, content: &str) -> Reply {
    match agent {
        "codex" => Reply::tool(
            "apply_patch",
            json!(format!(
                "*** Begin Patch\n*** Add File: {}\n+{content}\n*** End Patch\n",
                path.display()
            )),
        ),
        _ => Reply::tool("Write", json!({"file_path": path, "content": content})),
    }
}

#[test]
fn a_cli_s_own_writes_in_execute_are_undone() {
    for agent in ["claude", "codex"] {
        let Some(world) = World::new(&format!("e2e-undo-{agent}"), Script::new()) else {
            return;
        };
        let workspace = world.workspace();
        let created = workspace.join("created-by-cli.txt");
        world.server.set_script(
            Script::new()
                .rule(Rule::on_any_tool_result(Reply::text("Written.")))
                .rule(Rule::on_prompt(
                    "E2E-UNDO-WRITE",
                    own_write(agent, &created, "NATIVE-WROTE"),
                )),
        );
        std::fs::write(workspace.join("kept.txt"), "kept\n").unwrap();
        let (run, doc) = world.json("execute", &["--yes", &format!("@{agent} E2E-UNDO-WRITE")]);
        run.assert_code(0);
        assert!(
            std::fs::read_to_string(&created)
                .unwrap_or_default()
                .starts_with("NATIVE-WROTE"),
            "{agent}: its own write did not run: {doc}"
        );

        let undone = world.codecrew(&["undo", "--output", "json"]);
        undone.assert_code(0);
        let outcome: Value = serde_json::from_str(undone.stdout.trim()).unwrap();
        assert_eq!(
            outcome["files"],
            json!([{"path": "created-by-cli.txt", "action": "removed"}]),
            "{agent}: {outcome}"
        );
        assert!(!created.exists(), "{agent}: its write is still there");
        assert_eq!(
            std::fs::read_to_string(workspace.join("kept.txt")).unwrap(),
            "kept\n"
        );
    }
}
