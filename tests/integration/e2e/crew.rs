//! Agents consulting agents through `codecrew:query_agent` / `codecrew:execute_agent`,
//! with the real CLIs: the answer reaches the caller in its same session, nested in the
//! output; the depth limit; execute_agent refused in query mode and asked in execute.

use std::time::Instant;

use super::*;

fn consult(agent: &str, task: &str) -> String {
    fenced(&[envelope(
        "query_agent",
        json!({"agent": agent, "task": task}),
    )])
}

/// The stream-json events of a run.
fn events(run: &CliRun) -> Vec<Value> {
    run.stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn an_agent_consults_another_and_gets_its_answer_in_the_same_session() {
    for (caller, consulted) in [
        ("claude", "gemini"),
        ("codex", "claude"),
        ("opencode", "llm"),
        ("qwen", "opencode"),
        ("llm", "qwen"),
    ] {
        let script = Script::new()
            .rule(
                Rule::on_prompt(FOLLOW_UP, Reply::text("Both agree: SECOND-OPINION-7."))
                    .and_prompt("SECOND-OPINION-7"),
            )
            .rule(Rule::on_prompt(
                "E2E-SECOND",
                Reply::text("SECOND-OPINION-7: the diff is fine."),
            ))
            .rule(Rule::on_prompt(
                "E2E-CONSULT",
                Reply::text(format!(
                    "I will ask @{consulted}.\n\n{}",
                    consult(consulted, "E2E-SECOND is this diff fine?")
                )),
            ));
        let Some(world) = World::new(&format!("e2e-crew-{caller}"), script) else {
            return;
        };
        let (run, doc) = world.json("query", &[&format!("@{caller} E2E-CONSULT review")]);
        run.assert_code(0);
        let r = result(&doc);
        assert_eq!(
            r["response"], "Both agree: SECOND-OPINION-7.",
            "{caller}: {doc}"
        );
        assert_eq!(r["turns"], 2, "{doc}");
        // The call's output holds the consulted agent's work.
        let call = &r["tool_calls"][0];
        assert_eq!(call["name"], "codecrew:query_agent");
        assert_eq!(call["status"], "ok", "{call}");
        let output = &call["output"];
        assert_eq!(output["agent"], consulted, "{output}");
        assert_eq!(output["mode"], "query");
        assert_eq!(output["success"], true);
        assert_eq!(output["answer"], "SECOND-OPINION-7: the diff is fine.");
        assert_eq!(output["turns"], 1);
        // Its usage is counted apart, under sub_agents, and in the document's total.
        assert_eq!(r["usage"]["sub_agents"]["agents"], 1, "{}", r["usage"]);
        assert_eq!(r["usage"]["sub_agents"]["turns"], 1);
        assert_eq!(doc["usage"]["sub_agents"]["agents"], 1, "{doc}");
        // The caller went on in its own session: its second turn resumed it.
        let requests = world.server.model_requests();
        let follow_up = requests
            .iter()
            .find(|r| r.prompt.as_deref().is_some_and(|p| p.contains(FOLLOW_UP)))
            .unwrap();
        assert!(
            follow_up
                .prompt
                .as_deref()
                .unwrap()
                .contains("SECOND-OPINION-7"),
            "{}",
            follow_up.summary()
        );

        // stream-json: the consulted agent's events name it and the caller.
        let run = world.codecrew(&[
            "query",
            "--output",
            "stream-json",
            &format!("@{caller} E2E-CONSULT review"),
        ]);
        run.assert_code(0);
        let events = events(&run);
        let nested: Vec<&Value> = events.iter().filter(|e| e["parent"] == caller).collect();
        assert!(
            nested
                .iter()
                .any(|e| e["type"] == "text" && e["agent"] == consulted),
            "{}",
            run.stdout
        );
        assert!(nested.iter().all(|e| e["depth"] == 1 && e["job"] == 0));

        // Text: the consulted agent's lines nested under the call.
        let run = world.codecrew(&["query", &format!("@{caller} E2E-CONSULT review")]);
        run.assert_code(0);
        assert!(
            run.stdout.contains(&format!(
                "  │ @{consulted}: SECOND-OPINION-7: the diff is fine.\n"
            )),
            "{}",
            run.stdout
        );
    }
}

#[test]
fn delegation_stops_at_the_depth_limit_with_an_error_the_model_reads() {
    let script = Script::new()
        .rule(Rule::on_prompt(FOLLOW_UP, Reply::text("LEVEL3-DONE")).and_prompt("E_DEPTH_LIMIT"))
        .rule(Rule::on_prompt(FOLLOW_UP, Reply::text("LEVEL2-DONE")).and_prompt("LEVEL3-DONE"))
        .rule(Rule::on_prompt(FOLLOW_UP, Reply::text("LEVEL1-DONE")).and_prompt("LEVEL2-DONE"))
        .rule(Rule::on_prompt(
            "E2E-DEPTH-3",
            Reply::text(consult("claude", "E2E-DEPTH-4 go deeper")),
        ))
        .rule(Rule::on_prompt(
            "E2E-DEPTH-2",
            Reply::text(consult("codex", "E2E-DEPTH-3 go deeper")),
        ))
        .rule(Rule::on_prompt(
            "E2E-DEPTH-1",
            Reply::text(consult("gemini", "E2E-DEPTH-2 go deeper")),
        ));
    let Some(world) = World::new("e2e-crew-depth", script) else {
        return;
    };
    let run = world.codecrew(&[
        "query",
        "--output",
        "stream-json",
        "@claude E2E-DEPTH-1 start",
    ]);
    run.assert_code(0);
    let events = events(&run);
    let done = events.iter().find(|e| e["type"] == "done").unwrap();
    assert_eq!(done["response"], "LEVEL1-DONE", "{}", run.stdout);
    // The third agent's call was refused, as data it read, and nothing ran deeper.
    let refused = events
        .iter()
        .find(|e| e["type"] == "tool_result" && e["agent"] == "codex")
        .unwrap();
    assert_eq!(refused["parent"], "gemini", "{refused}");
    assert_eq!(refused["depth"], 2);
    assert_eq!(refused["error"]["code"], "E_DEPTH_LIMIT", "{refused}");
    assert!(
        !world.server.requests().iter().any(|r| r
            .prompt
            .as_deref()
            .is_some_and(|p| p.contains("E2E-DEPTH-4"))),
        "an agent ran beyond the limit"
    );
    assert_eq!(done["usage"]["sub_agents"]["agents"], 2, "{done}");
}

#[test]
fn execute_agent_is_refused_in_query_mode_and_asks_in_execute() {
    let call = fenced(&[envelope(
        "execute_agent",
        json!({"agent": "gemini", "task": "E2E-NEVER write a file"}),
    )]);
    let script = Script::new()
        .rule(Rule::on_prompt(
            FOLLOW_UP,
            Reply::text("Could not delegate."),
        ))
        .rule(Rule::on_prompt("E2E-EXEC-AGENT", Reply::text(call)));
    let Some(world) = World::new("e2e-crew-exec", script) else {
        return;
    };
    let (run, doc) = world.json("query", &["@claude E2E-EXEC-AGENT delegate"]);
    run.assert_code(0);
    let call = &result(&doc)["tool_calls"][0];
    assert_eq!(call["status"], "denied", "{call}");
    assert_eq!(call["error"]["code"], "E_TOOL_NOT_IN_CATALOG", "{call}");
    // In execute mode it asks; with no terminal to ask on, it is denied.
    let (run, doc) = world.json("execute", &["@claude E2E-EXEC-AGENT delegate"]);
    run.assert_code(0);
    let call = &result(&doc)["tool_calls"][0];
    assert_eq!(call["status"], "denied", "{call}");
    assert_eq!(call["error"]["code"], "E_PERMISSION_DENIED", "{call}");
    assert!(
        !world
            .server
            .requests()
            .iter()
            .any(|r| r.prompt.as_deref().is_some_and(|p| p.contains("E2E-NEVER"))),
        "the sub-agent ran"
    );
}

#[test]
fn several_consultations_in_one_message_run_together_and_answer_in_call_order() {
    let calls = fenced(&[
        envelope(
            "query_agent",
            json!({"agent": "gemini", "task": "E2E-PAIR-A"}),
        ),
        envelope(
            "query_agent",
            json!({"agent": "codex", "task": "E2E-PAIR-B"}),
        ),
    ]);
    let script = Script::new()
        .rule(Rule::on_prompt(FOLLOW_UP, Reply::text("Heard both.")).and_prompt("ANSWER-B"))
        .rule(Rule::on_prompt(
            "E2E-PAIR-A",
            Reply::text("ANSWER-A").with_delay_ms(1500),
        ))
        .rule(Rule::on_prompt("E2E-PAIR-B", Reply::text("ANSWER-B")))
        .rule(Rule::on_prompt("E2E-PAIR", Reply::text(calls)));
    let Some(world) = World::new("e2e-crew-pair", script) else {
        return;
    };
    let run = world.codecrew(&[
        "query",
        "--output",
        "stream-json",
        "@claude E2E-PAIR ask both",
    ]);
    run.assert_code(0);
    let events = events(&run);
    // Both sub-agents started before either finished its turn: they ran together.
    let position = |kind: &str, agent: &str| {
        events
            .iter()
            .position(|e| e["type"] == kind && e["agent"] == agent && e["parent"] == "claude")
            .unwrap_or_else(|| panic!("no {kind} of {agent}: {}", run.stdout))
    };
    let last_start = position("turn", "gemini").max(position("turn", "codex"));
    let first_end = position("turn_end", "gemini").min(position("turn_end", "codex"));
    assert!(last_start < first_end, "{}", run.stdout);
    // The results are in call order, whoever finished first.
    let done = events.iter().find(|e| e["type"] == "done").unwrap();
    let answers: Vec<&str> = done["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["output"]["answer"].as_str().unwrap())
        .collect();
    assert_eq!(answers, ["ANSWER-A", "ANSWER-B"], "{done}");
    assert_eq!(done["response"], "Heard both.");
}

#[test]
fn an_interrupt_and_the_timeout_reach_a_consulted_agent() {
    let script = Script::new()
        .rule(Rule::on_prompt(
            FOLLOW_UP,
            Reply::text("Went on without it."),
        ))
        .rule(Rule::on_prompt("E2E-SUB-HANG", Reply::hang()))
        .rule(Rule::on_prompt(
            "E2E-ASK-HANGING",
            Reply::text(consult("codex", "E2E-SUB-HANG think forever")),
        ));
    let Some(world) = World::new("e2e-crew-interrupt", script) else {
        return;
    };
    // Ctrl-C while the consulted agent waits on the model: everything stops, exit 130.
    let workspace = world.workspace().canonicalize().unwrap();
    let child = super::interrupt::spawn(&world, &["query", "@claude E2E-ASK-HANGING"]);
    let started = Instant::now();
    while !world.server.requests().iter().any(|r| {
        r.prompt
            .as_deref()
            .is_some_and(|p| p.contains("E2E-SUB-HANG"))
    }) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "codex was never consulted"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    super::interrupt::interrupt_exits_130_leaving_nothing(child, &workspace);

    // --timeout: the consulted agent's turn times out; its caller reads the error as
    // data and answers.
    let (run, doc) = world.json("query", &["--timeout", "5s", "@claude E2E-ASK-HANGING"]);
    run.assert_code(0);
    let r = result(&doc);
    assert_eq!(r["response"], "Went on without it.", "{doc}");
    let output = &r["tool_calls"][0]["output"];
    assert_eq!(output["success"], false, "{output}");
    assert!(
        output["error"].as_str().unwrap().contains("within 5 s"),
        "{output}"
    );
}
