//! What a run used: the figures each real CLI reports, carried per job and summed, equal
//! to what the fake model server reported to the CLI.

use super::*;

/// A two-turn loop: one `read_file` call, then the answer.
fn two_turns() -> Script {
    let call = fenced(&[envelope("read_file", json!({"path": "notes.txt"}))]);
    Script::new()
        .rule(
            Rule::on_prompt(FOLLOW_UP, Reply::text("The notes say USAGE-42."))
                .and_prompt("USAGE-42"),
        )
        .rule(Rule::on_prompt(
            "E2E-USAGE",
            Reply::text(format!("Let me read it.\n\n{call}")),
        ))
}

/// The server's own figures: every answer's (input, output) tokens, summed; with
/// `router`, also those of the structured-output calls Gemini's model router makes.
fn served(server: &FakeModel, router: bool) -> (u64, u64) {
    server
        .requests()
        .iter()
        .filter(|request| router || request.is_model_turn())
        .filter_map(|request| request.reported_usage)
        .fold((0, 0), |(i, o), (input, output)| (i + input, o + output))
}

per_cli!(usage_is_what_the_model_server_reported_summed_over_the_turns);

fn usage_is_what_the_model_server_reported_summed_over_the_turns(agent: &str) {
    // A server per agent, so that its log holds only this agent's requests.
    let Some(world) = World::new(&format!("e2e-usage-{agent}"), two_turns()) else {
        return;
    };
    std::fs::write(world.workspace().join("notes.txt"), "USAGE-42\n").unwrap();
    let (run, doc) = world.json("query", &[&format!("@{agent} E2E-USAGE read the notes")]);
    run.assert_code(0);
    let usage = &result(&doc)["usage"];
    assert_eq!(result(&doc)["turns"], 2, "{agent}: {doc}");
    assert_eq!(usage["turns"], 2, "{agent}: {usage}");
    assert_eq!(usage["tool_calls"], 1, "{agent}: {usage}");
    assert!(usage["duration_ms"].as_u64().unwrap() > 0, "{usage}");
    // Kept over ACP, Gemini counts the tokens of the model that answers, not those of
    // its router's classifier calls (model `auto`); and it reports no cached count.
    let (input, output) = served(&world.server, agent != "gemini");
    assert_eq!(usage["input_tokens"], input, "{agent}: {usage}");
    assert_eq!(usage["output_tokens"], output, "{agent}: {usage}");
    // Gemini, llm and opencode (kept, over ACP) report no cached count.
    let cached = match agent {
        "gemini" | "llm" | "opencode" => Value::Null,
        _ => json!(0),
    };
    assert_eq!(usage["cached_tokens"], cached, "{agent}: {usage}");
    // Only Claude and opencode state a price; nobody else's is made up.
    match agent {
        "claude" | "opencode" => {
            assert!(
                usage["cost_usd"].as_f64().unwrap() > 0.0,
                "{agent}: {usage}"
            )
        }
        _ => assert_eq!(usage["cost_usd"], Value::Null, "{agent}: {usage}"),
    }
    // One result: the document's total is that result's usage.
    assert_eq!(&doc["usage"], usage, "{agent}: {doc}");
}

#[test]
fn text_ends_with_a_usage_line_per_agent_and_quiet_hides_it() {
    let Some(world) = World::new("e2e-usage-text", two_turns()) else {
        return;
    };
    std::fs::write(world.workspace().join("notes.txt"), "USAGE-42\n").unwrap();
    let run = world.codecrew(&["query", "@claude @codex E2E-USAGE read the notes"]);
    run.assert_code(0);
    let lines: Vec<&str> = run.stderr.lines().collect();
    let claude = lines.iter().find(|l| l.starts_with("@claude")).unwrap();
    assert!(
        claude.contains("2 turns, 1 tool call,")
            && claude.contains(" tokens in")
            && claude.contains('$'),
        "{}",
        run.stderr
    );
    let codex = lines.iter().find(|l| l.starts_with("@codex")).unwrap();
    assert!(
        codex.contains("2 turns, 1 tool call,") && !codex.contains('$'),
        "{codex}"
    );
    assert!(
        lines
            .last()
            .unwrap()
            .starts_with("total: 4 turns, 2 tool calls,"),
        "{}",
        run.stderr
    );
    // The answers are on stdout, untouched by the summary.
    assert!(!run.stdout.contains("tokens in"), "{}", run.stdout);

    let run = world.codecrew(&["query", "--quiet", "@claude E2E-USAGE read the notes"]);
    run.assert_code(0);
    assert!(!run.stderr.contains("tokens in"), "{}", run.stderr);
    assert!(
        run.stdout.contains("The notes say USAGE-42."),
        "{}",
        run.stdout
    );
}

#[test]
fn stream_json_reports_usage_per_turn_and_threads_keep_it() {
    let Some(world) = World::new("e2e-usage-stream", two_turns()) else {
        return;
    };
    std::fs::write(world.workspace().join("notes.txt"), "USAGE-42\n").unwrap();
    let run = world.codecrew(&[
        "query",
        "--output",
        "stream-json",
        "--thread",
        "costs",
        "@codex E2E-USAGE read the notes",
    ]);
    run.assert_code(0);
    let events: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let turn_ends: Vec<&Value> = events.iter().filter(|e| e["type"] == "turn_end").collect();
    assert_eq!(turn_ends.len(), 2, "{}", run.stdout);
    let per_turn: u64 = turn_ends
        .iter()
        .map(|e| e["usage"]["output_tokens"].as_u64().unwrap())
        .sum();
    let done = events.iter().find(|e| e["type"] == "done").unwrap();
    assert_eq!(done["usage"]["output_tokens"], per_turn, "{done}");
    assert_eq!(per_turn, served(&world.server, true).1);

    // The thread recorded the exchange's usage; `threads show` sums it.
    let shown = world.codecrew(&["threads", "show", "costs", "--output", "json"]);
    shown.assert_code(0);
    let thread: Value = serde_json::from_str(&shown.stdout).unwrap();
    assert_eq!(thread["exchanges"][0]["usage"], done["usage"], "{thread}");
    assert_eq!(thread["usage"]["output_tokens"], per_turn, "{thread}");

    // Codex reports its session's running total; the thread's second exchange, in the
    // same resumed session, still records only its own part.
    let before = served(&world.server, true);
    let run = world.codecrew(&[
        "query",
        "--output",
        "json",
        "--thread",
        "costs",
        "@codex E2E-USAGE read the notes again",
    ]);
    run.assert_code(0);
    let after = served(&world.server, true);
    let shown = world.codecrew(&["threads", "show", "costs", "--output", "json"]);
    let thread: Value = serde_json::from_str(&shown.stdout).unwrap();
    assert_eq!(
        thread["exchanges"][1]["session_id"], thread["exchanges"][0]["session_id"],
        "{thread}"
    );
    let second = &thread["exchanges"][1]["usage"];
    assert_eq!(second["input_tokens"], after.0 - before.0, "{thread}");
    assert_eq!(second["output_tokens"], after.1 - before.1, "{thread}");
    assert_eq!(thread["usage"]["output_tokens"], after.1, "{thread}");
    let shown = world.codecrew(&["threads", "show", "costs"]);
    shown.assert_code(0);
    assert!(
        shown.stdout.contains("used: 4 turns, 2 tool calls,"),
        "{}",
        shown.stdout
    );
}
