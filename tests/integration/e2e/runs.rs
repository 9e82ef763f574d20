//! How runs end and print: a timeout, agents in parallel, query and execute writes, text and
//! stream-json. (A missing CLI and an unknown agent, which need no CLI: `run_errors.rs`.)

use super::*;

per_cli!(a_hanging_cli_is_killed_at_the_timeout);

fn a_hanging_cli_is_killed_at_the_timeout(agent: &str) {
    let script = Script::new().rule(Rule::on_prompt("E2E-HANG", Reply::hang()));
    let Some(world) = World::new(&format!("e2e-hang-{agent}"), script) else {
        return;
    };
    let started = std::time::Instant::now();
    let (run, doc) = world.json("query", &["--timeout", "4s", &format!("@{agent} E2E-HANG")]);
    run.assert_code(124);
    assert!(
        result(&doc)["error"]
            .as_str()
            .unwrap()
            .contains("within 4 s"),
        "{agent}: {doc}"
    );
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[test]
fn agents_run_in_parallel_each_with_its_own_result() {
    let script = Script::new().rule(Rule::on_prompt(
        "E2E-PAR",
        Reply::text("parallel answer").with_delay_ms(1500),
    ));
    let Some(world) = World::new("e2e-parallel", script) else {
        return;
    };
    let (run, doc) = world.json(
        "query",
        &[
            "@claude @codex E2E-PAR",
            "@gemini @copilot E2E-PAR",
            "@opencode @qwen @llm E2E-PAR",
        ],
    );
    run.assert_code(0);
    let agents: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["agent"].as_str().unwrap())
        .collect();
    assert_eq!(
        agents,
        [
            "claude", "codex", "gemini", "copilot", "opencode", "qwen", "llm"
        ]
    );
    for r in doc["results"].as_array().unwrap() {
        assert_eq!(r["response"], "parallel answer", "{r}");
    }
    // Not a terminal: every line streams whole, under its agent's name.
    let run = world.codecrew(&["query", "@claude @codex E2E-PAR"]);
    run.assert_code(0);
    let mut lines: Vec<&str> = run.stdout.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        ["[claude] parallel answer", "[codex] parallel answer"],
        "{}",
        run.stdout
    );
    // --raw: each answer alone, under a header.
    let run = world.codecrew(&["query", "--raw", "@claude @codex E2E-PAR"]);
    run.assert_code(0);
    assert!(
        run.stdout
            .contains("━━ @claude (claude) ━━\nparallel answer\n"),
        "{}",
        run.stdout
    );
}

per_cli!(execute_writes_a_file_and_query_may_not);

fn execute_writes_a_file_and_query_may_not(agent: &str) {
    let call = fenced(&[envelope(
        "write_file",
        json!({"path": "out/hello.txt", "content": "written by the model\n"}),
    )]);
    let script = Script::new()
        .rule(Rule::on_prompt(FOLLOW_UP, Reply::text("Written.")).and_prompt("\"status\":\"ok\""))
        .rule(Rule::on_prompt(FOLLOW_UP, Reply::text("It was refused.")).and_prompt("E_"))
        .rule(Rule::on_prompt("E2E-WRITE", Reply::text(call)));
    let Some(world) = World::new(&format!("e2e-write-{agent}"), script) else {
        return;
    };
    let target = world.workspace().join("out/hello.txt");
    let (run, doc) = world.json("query", &[&format!("@{agent} E2E-WRITE")]);
    run.assert_code(0);
    assert_eq!(
        result(&doc)["tool_calls"][0]["status"],
        "denied",
        "{agent}: {doc}"
    );
    assert!(!target.exists(), "query wrote a file");

    let (run, doc) = world.json("execute", &[&format!("@{agent} E2E-WRITE")]);
    run.assert_code(0);
    let r = result(&doc);
    assert_eq!(r["mode"], "execute");
    assert_eq!(r["tool_calls"][0]["status"], "ok", "{agent}: {doc}");
    assert_eq!(r["response"], "Written.");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "written by the model\n"
    );
    // An ordinary run changes nothing the walls hold (no CLI's own settings
    // rewrite is taken for an attack).
    assert!(
        !run.stderr.contains("put back as it was"),
        "{agent}: {}",
        run.stderr
    );
}

per_cli!(execute_denies_a_protected_write_without_a_terminal);

/// In `execute` a write to a protected file asks; with no terminal to ask on, it is
/// denied, the model hears why, and nothing is written, whatever the CLI.
fn execute_denies_a_protected_write_without_a_terminal(agent: &str) {
    let call = fenced(&[envelope(
        "write_file",
        json!({"path": ".github/workflows/ci.yml", "content": "on: push\n"}),
    )]);
    let script = Script::new()
        .rule(
            Rule::on_prompt(FOLLOW_UP, Reply::text("Refused, as it should be."))
                .and_prompt("E_PERMISSION_DENIED"),
        )
        .rule(Rule::on_prompt(
            FOLLOW_UP,
            Reply::text("Something else happened."),
        ))
        .rule(Rule::on_prompt("E2E-PROTECTED", Reply::text(call)));
    let Some(world) = World::new(&format!("e2e-protected-{agent}"), script) else {
        return;
    };
    let target = world.workspace().join(".github/workflows/ci.yml");
    let (run, doc) = world.json("execute", &[&format!("@{agent} E2E-PROTECTED")]);
    run.assert_code(0);
    let r = result(&doc);
    assert_eq!(r["tool_calls"][0]["status"], "denied", "{agent}: {doc}");
    assert_eq!(r["response"], "Refused, as it should be.", "{agent}: {doc}");
    assert!(!target.exists(), "{agent}: a protected file was written");
}

#[test]
fn text_and_stream_json_output() {
    let call = fenced(&[envelope("list_directory", json!({}))]);
    let script = Script::new()
        .rule(Rule::on_prompt(FOLLOW_UP, Reply::text("Listed.")))
        .rule(Rule::on_prompt(
            "E2E-SHOW",
            Reply::text(format!("Looking.\n{call}")),
        ));
    let Some(world) = World::new("e2e-show", script) else {
        return;
    };
    let run = world.codecrew(&["query", "@claude E2E-SHOW"]);
    run.assert_code(0);
    assert_eq!(
        run.stdout
            .lines()
            .map(|l| l.split(" (").next().unwrap_or(l))
            .collect::<Vec<_>>(),
        [
            "Looking.",
            "→ codecrew:list_directory {}",
            "  ← list_directory ok",
            "Listed."
        ],
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains("tool_use"),
        "envelopes are hidden from the display"
    );

    let run = world.codecrew(&["query", "--raw", "@claude E2E-SHOW"]);
    assert_eq!(run.stdout, "Listed.\n");

    let run = world.codecrew(&["query", "--output", "stream-json", "@codex E2E-SHOW"]);
    run.assert_code(0);
    let types: Vec<String> = run
        .json_lines()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(types.first().map(String::as_str), Some("start"));
    assert_eq!(types.last().map(String::as_str), Some("done"));
    for kind in ["turn", "text", "tool_call", "tool_result"] {
        assert!(
            types.iter().any(|t| t == kind),
            "{kind} missing in {types:?}"
        );
    }
    assert!(run.json_lines().iter().all(|e| e["agent"] == "codex"));
}
