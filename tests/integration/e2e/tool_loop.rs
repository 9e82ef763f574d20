//! The tool loop with every CLI: a plain answer, one call, several, a chain and --max-turns, an API error.

use super::*;

per_cli!(plain_answer);

fn plain_answer(agent: &str) {
    let script = Script::new().rule(Rule::on_prompt(
        "E2E-PLAIN",
        Reply::text("Plain answer from the fake."),
    ));
    let Some(world) = World::new(&format!("e2e-plain-{agent}"), script) else {
        return;
    };
    let (run, doc) = world.json("query", &[&format!("@{agent} E2E-PLAIN say hi")]);
    run.assert_code(0);
    let r = result(&doc);
    assert_eq!(doc["success"], true, "{agent}: {doc}");
    assert_eq!(r["agent"], agent);
    assert_eq!(r["provider"], agent);
    assert_eq!(r["mode"], "query");
    assert_eq!(r["response"], "Plain answer from the fake.", "{agent}");
    assert_eq!(r["turns"], 1);
    assert!(r["session_id"].is_string(), "{agent}: {r}");
    assert_eq!(r["tool_calls"], json!([]));
    // What reached the model lists codecrew's tools and carries the task.
    let first = world.server.model_requests();
    let read = first
        .iter()
        .find(|r| r.prompt.is_some())
        .unwrap()
        .read_by_the_model();
    assert!(read.contains("### codecrew:read_file"), "{read}");
    assert!(read.contains("E2E-PLAIN say hi"));
    if agent == "claude" {
        // Claude Code takes the tools section as its system prompt: the message is the
        // task alone.
        let prompt = first.iter().find_map(|r| r.prompt.clone()).unwrap();
        assert_eq!(prompt.trim(), "E2E-PLAIN say hi", "{prompt}");
    }
}

/// Claude Code gets the tools section as its system prompt only while every tool in it is
/// codecrew's own: one a configuration describes (or an MCP server) is text codecrew did
/// not write, which a system prompt would give more weight than the message it came in
/// before. The whole section then stays in the message.
#[test]
fn a_tool_codecrew_did_not_describe_keeps_the_section_in_claudes_message() {
    let script = Script::new().rule(Rule::on_prompt(
        "E2E-FOREIGN",
        Reply::text("Answered without a tool."),
    ));
    let Some(world) = World::new("e2e-foreign-tool", script) else {
        return;
    };
    let env = super::config::with_user_config(
        &world,
        "[tools.notes]\ncommand = \"/bin/true\"\n\n[[tools.notes.exports]]\n\
         name = \"lookup\"\ndescription = \"FOREIGN-TOOL-WORDS: look a note up\"\n\
         readonly = true\ninput_schema = { type = \"object\" }\n",
    );
    let run = world.codecrew_with(
        &env,
        &["query", "--output", "json", "@claude E2E-FOREIGN say hi"],
    );
    run.assert_code(0);
    let doc: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(
        result(&doc)["response"],
        "Answered without a tool.",
        "{doc}"
    );
    let requests = world.server.model_requests();
    let first = requests
        .iter()
        .find(|r| {
            r.prompt
                .as_deref()
                .is_some_and(|p| p.contains("E2E-FOREIGN"))
        })
        .unwrap();
    let message = first.prompt.as_deref().unwrap_or_default();
    assert!(message.contains("### codecrew:notes__lookup"), "{message}");
    assert!(message.contains("FOREIGN-TOOL-WORDS"), "{message}");
    assert!(message.contains("### codecrew:read_file"), "{message}");
    let system = first.system();
    assert!(!system.contains("FOREIGN-TOOL-WORDS"), "{system}");
    assert!(!system.contains("### codecrew:"), "{system}");
}

per_cli!(one_tool_call_then_the_answer_in_the_same_session);

fn one_tool_call_then_the_answer_in_the_same_session(agent: &str) {
    let call = fenced(&[envelope("read_file", json!({"path": "notes.txt"}))]);
    let script = Script::new()
        .rule(
            Rule::on_prompt(FOLLOW_UP, Reply::text("The notes say NOTE-CONTENT-42."))
                .and_prompt("NOTE-CONTENT-42"),
        )
        .rule(Rule::on_prompt(
            "E2E-READ",
            Reply::text(format!("Let me read it.\n\n{call}")),
        ));
    let Some(world) = World::new(&format!("e2e-read-{agent}"), script) else {
        return;
    };
    std::fs::write(world.workspace().join("notes.txt"), "NOTE-CONTENT-42\n").unwrap();
    let (run, doc) = world.json(
        "query",
        &[&format!("@{agent} E2E-READ what do the notes say?")],
    );
    run.assert_code(0);
    let r = result(&doc);
    assert_eq!(
        r["response"], "The notes say NOTE-CONTENT-42.",
        "{agent}: {doc}"
    );
    assert_eq!(r["turns"], 2);
    let calls = r["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["name"], "codecrew:read_file");
    assert_eq!(calls[0]["status"], "ok");
    assert!(
        calls[0]["output"]["content"]
            .as_str()
            .unwrap()
            .contains("NOTE-CONTENT-42")
    );
    // The follow-up continued its session: the model saw the first turn's history.
    let follow_ups: Vec<_> = world
        .server
        .model_requests()
        .into_iter()
        .filter(|r| r.prompt.as_deref().is_some_and(|p| p.contains(FOLLOW_UP)))
        .collect();
    assert_eq!(follow_ups.len(), 1, "{agent}");
    for request in follow_ups {
        let body = request.body.to_string();
        assert!(
            body.contains("E2E-READ"),
            "the follow-up lacks the first turn: {:?}",
            request.api
        );
        assert!(body.contains("Let me read it."), "{:?}", request.api);
    }
}

per_cli!(several_calls_in_one_message_and_an_unknown_tool);

fn several_calls_in_one_message_and_an_unknown_tool(agent: &str) {
    let calls = fenced(&[
        envelope("read_file", json!({"path": "a.txt"})),
        envelope("list_directory", json!({})),
        envelope("no_such_tool", json!({})),
    ]);
    let script = Script::new()
        .rule(
            Rule::on_prompt(FOLLOW_UP, Reply::text("Got all three."))
                .and_prompt("ALPHA")
                .and_prompt("b.txt")
                .and_prompt("E_UNKNOWN_TOOL"),
        )
        .rule(Rule::on_prompt("E2E-MANY", Reply::text(calls)));
    let Some(world) = World::new(&format!("e2e-many-{agent}"), script) else {
        return;
    };
    std::fs::write(world.workspace().join("a.txt"), "ALPHA\n").unwrap();
    std::fs::write(world.workspace().join("b.txt"), "beta\n").unwrap();
    let (run, doc) = world.json("query", &[&format!("@{agent} E2E-MANY")]);
    run.assert_code(0);
    let r = result(&doc);
    assert_eq!(r["response"], "Got all three.", "{agent}: {doc}");
    let statuses: Vec<&str> = r["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["ok", "ok", "error"], "{agent}");
    assert_eq!(r["tool_calls"][2]["error"]["code"], "E_UNKNOWN_TOOL");
}

per_cli!(a_chain_of_three_turns_and_max_turns);

fn a_chain_of_three_turns_and_max_turns(agent: &str) {
    let first = fenced(&[envelope("read_file", json!({"path": "step1.txt"}))]);
    let second = fenced(&[envelope("read_file", json!({"path": "step2.txt"}))]);
    let script = Script::new()
        .rule(
            Rule::on_prompt(FOLLOW_UP, Reply::text("Both steps read: STEP-TWO."))
                .and_prompt("STEP-TWO"),
        )
        .rule(
            Rule::on_prompt(FOLLOW_UP, Reply::text(format!("Next one.\n{second}")))
                .and_prompt("STEP-ONE"),
        )
        .rule(Rule::on_prompt("E2E-CHAIN", Reply::text(first)));
    let Some(world) = World::new(&format!("e2e-chain-{agent}"), script) else {
        return;
    };
    std::fs::write(world.workspace().join("step1.txt"), "STEP-ONE\n").unwrap();
    std::fs::write(world.workspace().join("step2.txt"), "STEP-TWO\n").unwrap();
    let (run, doc) = world.json("query", &[&format!("@{agent} E2E-CHAIN")]);
    run.assert_code(0);
    let r = result(&doc);
    assert_eq!(
        r["response"], "Both steps read: STEP-TWO.",
        "{agent}: {doc}"
    );
    assert_eq!(r["turns"], 3);
    assert_eq!(r["tool_calls"].as_array().unwrap().len(), 2);

    // Stopped after two turns with the model still calling: the second turn's call ran,
    // its result is reported, and the job is no success: the model never answered.
    let (run, doc) = world.json(
        "query",
        &["--max-turns", "2", &format!("@{agent} E2E-CHAIN")],
    );
    run.assert_code(1);
    let r = result(&doc);
    assert_eq!(r["turns"], 2, "{agent}: {doc}");
    assert_eq!(r["stop_reason"], "max_turns");
    assert_eq!(r["success"], false);
    assert_eq!(r["error_code"], "E_MAX_TURNS");
    assert!(
        r["error"].as_str().unwrap().contains("turn limit (2)"),
        "{agent}: {doc}"
    );
    assert_eq!(r["tool_calls"].as_array().unwrap().len(), 2);

    // One turn returns the tool results themselves.
    let (run, doc) = world.json(
        "query",
        &["--max-turns", "1", &format!("@{agent} E2E-CHAIN")],
    );
    run.assert_code(0);
    let r = result(&doc);
    assert_eq!(r["turns"], 1);
    assert!(
        r["response"].as_str().unwrap().contains("STEP-ONE"),
        "{agent}: {doc}"
    );
}

per_cli!(an_api_error_is_a_failure_with_its_message);

fn an_api_error_is_a_failure_with_its_message(agent: &str) {
    let script = Script::new().rule(Rule::on_prompt(
        "E2E-FAIL",
        Reply::error(400, "scripted failure E2E"),
    ));
    let Some(world) = World::new(&format!("e2e-fail-{agent}"), script) else {
        return;
    };
    let (run, doc) = world.json("query", &[&format!("@{agent} E2E-FAIL")]);
    run.assert_code(1);
    let r = result(&doc);
    assert_eq!(doc["success"], false);
    assert_eq!(r["success"], false);
    let error = r["error"].as_str().unwrap();
    assert!(error.contains("scripted failure E2E"), "{agent}: {error}");
}
