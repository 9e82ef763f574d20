//! `query` runs reading commands: with every CLI, the model's `codecrew:run_command`
//! calls in a read-only run execute what runs without asking (in the read-only sandbox),
//! and nothing else: a reading git command runs, a write is refused, a read outside the
//! workspace fails.

use super::*;

per_cli!(query_runs_reading_commands_refuses_writes_and_outside_reads);

fn query_runs_reading_commands_refuses_writes_and_outside_reads(agent: &str) {
    if codecrew_policy::sandbox::read_only_unavailable(true).is_some() {
        eprintln!("skipped: this kernel cannot hold the read-only sandbox");
        return;
    }
    let outside = tempfile::TempDir::new_in("/var/tmp").unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "OUTSIDE-SECRET-7731\n").unwrap();
    let calls = fenced(&[
        envelope("run_command", json!({"command": "git log -p -1"})),
        envelope("run_command", json!({"command": "touch made-by-query.txt"})),
        envelope(
            "run_command",
            json!({ "command": format!("cat {}", secret.display()) }),
        ),
    ]);
    let script = Script::new()
        .rule(Rule::on_prompt(
            FOLLOW_UP,
            Reply::text("Reviewed the last commit."),
        ))
        .rule(Rule::on_prompt(
            "E2E-QUERY-RUN",
            Reply::text(format!("Let me look.\n\n{calls}")),
        ));
    let Some(world) = World::new(&format!("e2e-query-run-{agent}"), script) else {
        return;
    };
    let workspace = world.workspace();
    std::fs::write(workspace.join("lib.rs"), "fn reviewed() {}\n").unwrap();
    let git = |args: &[&str]| crate::support::git::git(&workspace, args);
    git(&["init", "-q"]);
    git(&["add", "lib.rs"]);
    git(&["commit", "-qm", "LAST-COMMIT-MESSAGE"]);
    let (run, doc) = world.json(
        "query",
        &[&format!("@{agent} E2E-QUERY-RUN review the last commit")],
    );
    run.assert_code(0);
    let r = result(&doc);
    assert_eq!(r["response"], "Reviewed the last commit.", "{agent}: {doc}");
    let calls = r["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 3, "{agent}: {doc}");
    // The reading git command ran, in the read-only sandbox.
    assert_eq!(calls[0]["status"], "ok", "{agent}: {doc}");
    assert_eq!(calls[0]["output"]["sandbox"], "read-only");
    let log = calls[0]["output"]["stdout"].as_str().unwrap();
    assert!(log.contains("LAST-COMMIT-MESSAGE"), "{agent}: {log}");
    assert!(log.contains("+fn reviewed() {}"), "{agent}: {log}");
    // The write and the outside read were refused, and nothing came back.
    for refused in &calls[1..] {
        assert_eq!(refused["status"], "denied", "{agent}: {refused}");
    }
    assert!(!workspace.join("made-by-query.txt").exists(), "{agent}");
    assert!(!doc.to_string().contains("OUTSIDE-SECRET-7731"), "{agent}");
    // The prompt offered run_command, saying what a read-only run may run.
    let prompt = world
        .server
        .model_requests()
        .iter()
        .find(|request| request.prompt.is_some())
        .unwrap()
        .read_by_the_model();
    assert!(prompt.contains("### codecrew:run_command"), "{prompt}");
    assert!(prompt.contains("read-only OS sandbox"), "{prompt}");
}
