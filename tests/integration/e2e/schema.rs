//! `--schema` with every CLI: the final answer's JSON document checked, asked for again
//! with the checker's errors until it fits, and printed alone for a script.

use super::*;

const FITS: &str = "Here it is:\n```json\n{\"file\": \"src/a.rs\", \"risk\": 3}\n```";
const RISK_IN_WORDS: &str = "```json\n{\"file\": \"src/a.rs\", \"risk\": \"high\"}\n```";
const RETRY: &str = "does not fit the JSON Schema";

/// `codecrew query --schema SCHEMA @agent TASK` (text output: what a script reads).
fn shaped(world: &World, schema_flag: &str, schema: &str, agent: &str, task: &str) -> CliRun {
    world.codecrew(&["query", schema_flag, schema, &format!("@{agent} {task}")])
}

/// The one JSON document stdout holds, and nothing else.
fn document(run: &CliRun) -> Value {
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    serde_json::from_str(lines[0]).unwrap()
}

per_cli!(an_answer_that_fits_at_once_is_stdout_alone);

fn an_answer_that_fits_at_once_is_stdout_alone(agent: &str) {
    let script = Script::new().on_prompt("E2E-SCHEMA-FIT", Reply::text(FITS));
    let Some(world) = World::new(&format!("e2e-schema-fit-{agent}"), script) else {
        return;
    };
    let run = shaped(
        &world,
        "--schema",
        "file, risk int",
        agent,
        "E2E-SCHEMA-FIT which?",
    );
    run.assert_code(0);
    assert_eq!(document(&run), json!({"file": "src/a.rs", "risk": 3}));
    // The schema went in the prompt, after the task.
    let requests = world.server.model_requests();
    assert_eq!(requests.len(), 1, "{agent}");
    let prompt = requests[0].prompt.clone().unwrap();
    let task_at = prompt.find("E2E-SCHEMA-FIT").unwrap();
    let schema_at = prompt.find("The shape of your final answer").unwrap();
    assert!(task_at < schema_at, "{prompt}");
    assert!(prompt.contains("\"risk\""), "{prompt}");
}

per_cli!(an_answer_that_fits_on_the_second_ask);

fn an_answer_that_fits_on_the_second_ask(agent: &str) {
    let script = Script::new()
        .rule(Rule::on_prompt(RETRY, Reply::text(FITS)).and_prompt("at /risk"))
        .on_prompt("E2E-SCHEMA-AGAIN", Reply::text(RISK_IN_WORDS));
    let Some(world) = World::new(&format!("e2e-schema-again-{agent}"), script) else {
        return;
    };
    let (run, doc) = world.json(
        "query",
        &[
            "--schema",
            "file, risk int",
            &format!("@{agent} E2E-SCHEMA-AGAIN"),
        ],
    );
    run.assert_code(0);
    let r = result(&doc);
    assert_eq!(
        r["data"],
        json!({"file": "src/a.rs", "risk": 3}),
        "{agent}: {doc}"
    );
    assert_eq!(r["success"], true);
    assert_eq!(r["turns"], 2);
    assert!(r.get("schema_errors").is_none(), "{r}");
    // The second request went to the same session, carrying the checker's errors.
    let requests = world.server.model_requests();
    assert_eq!(requests.len(), 2, "{agent}");
    let again = requests[1].prompt.clone().unwrap();
    assert!(again.contains("at /risk"), "{again}");
    assert!(again.contains("integer"), "{again}");
    let body = requests[1].body.to_string();
    assert!(
        body.contains("E2E-SCHEMA-AGAIN"),
        "{agent}: not the same session"
    );
}

per_cli!(an_answer_that_never_fits_is_not_printed_as_if_it_did);

fn an_answer_that_never_fits_is_not_printed_as_if_it_did(agent: &str) {
    let script = Script::new()
        .on_prompt(RETRY, Reply::text(RISK_IN_WORDS))
        .on_prompt("E2E-SCHEMA-NEVER", Reply::text(RISK_IN_WORDS));
    let Some(world) = World::new(&format!("e2e-schema-never-{agent}"), script) else {
        return;
    };
    let run = world.codecrew(&[
        "query",
        "--schema",
        "file, risk int",
        "--schema-retries",
        "1",
        &format!("@{agent} E2E-SCHEMA-NEVER"),
    ]);
    run.assert_code(65);
    assert_eq!(run.stdout, "", "{agent}");
    assert!(
        run.stderr.contains("does not fit the schema"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("at /risk"), "{}", run.stderr);
    // The last attempt, for the user to see what came.
    assert!(run.stderr.contains("\"high\""), "{}", run.stderr);
    assert_eq!(
        world.server.model_requests().len(),
        2,
        "{agent}: one ask, one retry"
    );
}

per_cli!(a_list_of_objects_in_the_compact_form);

fn a_list_of_objects_in_the_compact_form(agent: &str) {
    let list = "```json\n{\"items\": [{\"name\": \"parse\", \"risk\": 4}, \
                {\"name\": \"render\", \"risk\": 1}]}\n```";
    let script = Script::new().on_prompt("E2E-SCHEMA-MULTI", Reply::text(list));
    let Some(world) = World::new(&format!("e2e-schema-multi-{agent}"), script) else {
        return;
    };
    let run = shaped(
        &world,
        "--schema-multi",
        "name, risk int: 1 to 5",
        agent,
        "E2E-SCHEMA-MULTI",
    );
    run.assert_code(0);
    let data = document(&run);
    assert_eq!(
        data["items"][0],
        json!({"name": "parse", "risk": 4}),
        "{agent}"
    );
    assert_eq!(data["items"].as_array().unwrap().len(), 2);
    let prompt = world.server.model_requests()[0].prompt.clone().unwrap();
    assert!(
        prompt.contains("1 to 5"),
        "the description reaches the model: {prompt}"
    );
}

per_cli!(a_tool_call_comes_before_the_answer);

fn a_tool_call_comes_before_the_answer(agent: &str) {
    let call = fenced(&[envelope("read_file", json!({"path": "notes.txt"}))]);
    let answer = "```json\n{\"file\": \"notes.txt\", \"risk\": 42}\n```";
    let script = Script::new()
        .rule(Rule::on_prompt(FOLLOW_UP, Reply::text(answer)).and_prompt("NOTE-RISK-42"))
        .on_prompt(
            "E2E-SCHEMA-TOOL",
            Reply::text(format!("Reading.\n\n{call}")),
        );
    let Some(world) = World::new(&format!("e2e-schema-tool-{agent}"), script) else {
        return;
    };
    std::fs::write(world.workspace().join("notes.txt"), "NOTE-RISK-42\n").unwrap();
    let run = shaped(
        &world,
        "--schema",
        "file, risk int",
        agent,
        "E2E-SCHEMA-TOOL",
    );
    run.assert_code(0);
    assert_eq!(
        document(&run),
        json!({"file": "notes.txt", "risk": 42}),
        "{agent}"
    );
}

/// Several agents: one JSON line each, as each ends, saying whether its answer fitted.
#[test]
fn several_agents_give_one_json_line_each() {
    let script = Script::new()
        .on_prompt("E2E-SCHEMA-GOOD", Reply::text(FITS))
        .on_prompt(RETRY, Reply::text(RISK_IN_WORDS))
        .on_prompt("E2E-SCHEMA-BAD", Reply::text(RISK_IN_WORDS));
    let Some(world) = World::new("e2e-schema-two", script) else {
        return;
    };
    let run = world.codecrew(&[
        "query",
        "--schema",
        "file, risk int",
        "@claude E2E-SCHEMA-GOOD",
        "@gemini E2E-SCHEMA-BAD",
    ]);
    run.assert_code(65);
    let mut lines = run.json_lines();
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    lines.sort_by_key(|line| line["agent"].as_str().unwrap().to_owned());
    assert_eq!(
        lines[0],
        json!({"agent": "claude", "ok": true, "data": {"file": "src/a.rs", "risk": 3}})
    );
    assert_eq!(lines[1]["agent"], "gemini");
    assert_eq!(lines[1]["ok"], false);
    assert!(
        lines[1]["error"].as_str().unwrap().contains("at /risk"),
        "{}",
        lines[1]
    );
    assert!(lines[1].get("data").is_none());
}

/// A schema whose `why` is optional: Codex's strict form makes it required and nullable.
const OPTIONAL_WHY: &str = r#"{"type": "object", "properties": {"file": {"type": "string"}, "why": {"type": "string"}}, "required": ["file"]}"#;

/// Codex's own mechanism holds the re-ask to the schema's strict form (its
/// `outputSchema`, sent to the model as the response's JSON Schema); the `null` it gives
/// for the optional key is no key in the data.
#[test]
fn codex_is_held_to_the_strict_form_on_the_re_ask() {
    let strict = json!({
        "type": "object",
        "properties": {"file": {"type": "string"}, "why": {"type": ["string", "null"]}},
        "required": ["file", "why"],
        "additionalProperties": false,
    });
    let script = Script::new()
        .on_prompt(
            RETRY,
            Reply::text("{\"file\": \"src/a.rs\", \"why\": null}"),
        )
        .on_prompt("E2E-SCHEMA-CODEX", Reply::text("no JSON at all"));
    let Some(world) = World::new("e2e-schema-codex-strict", script) else {
        return;
    };
    let run = shaped(
        &world,
        "--schema",
        OPTIONAL_WHY,
        "codex",
        "E2E-SCHEMA-CODEX",
    );
    run.assert_code(0);
    assert_eq!(document(&run), json!({"file": "src/a.rs"}));
    let requests = world.server.model_requests();
    assert_eq!(requests.len(), 2);
    // The first turn may call codecrew's tools: no schema holds its text.
    assert!(
        requests[0].body["text"]["format"]["schema"].is_null(),
        "{}",
        requests[0].body["text"]
    );
    let format = &requests[1].body["text"]["format"];
    assert_eq!(format["type"], "json_schema", "{format}");
    assert_eq!(format["schema"], strict, "{format}");
}

/// A schema with no strict form is refused before Codex starts, saying why (exit 2).
#[test]
fn a_schema_codex_cannot_take_is_refused_before_it_starts() {
    let Some(world) = World::new("e2e-schema-codex-open", Script::new()) else {
        return;
    };
    let open = r#"{"type": "object", "properties": {"tags": {"type": "object", "additionalProperties": {"type": "string"}, "properties": {}}}}"#;
    let run = shaped(&world, "--schema", open, "codex", "E2E-SCHEMA-OPEN");
    run.assert_code(2);
    assert!(
        run.stderr.contains("@codex cannot take this --schema"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("/properties/tags"), "{}", run.stderr);
    assert!(world.server.model_requests().is_empty());
}

/// llm's own `--schema` on the re-ask, for a model that takes one (the request's
/// `response_format`); a model that cannot is asked again without it (the other
/// scenarios' `fake`).
#[test]
fn llm_is_held_to_the_schema_on_the_re_ask() {
    let script = Script::new()
        .on_prompt(RETRY, Reply::text("{\"file\": \"src/a.rs\", \"risk\": 3}"))
        .on_prompt("E2E-SCHEMA-LLM", Reply::text(RISK_IN_WORDS));
    let Some(world) = World::new("e2e-schema-llm-native", script) else {
        return;
    };
    let run = shaped(
        &world,
        "--schema",
        "file, risk int",
        "llm:fake-schema",
        "E2E-SCHEMA-LLM",
    );
    run.assert_code(0);
    assert_eq!(document(&run), json!({"file": "src/a.rs", "risk": 3}));
    let requests = world.server.model_requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[0].body["response_format"].is_null());
    let format = &requests[1].body["response_format"];
    assert_eq!(format["type"], "json_schema", "{format}");
    assert_eq!(
        format["json_schema"]["schema"]["properties"]["risk"],
        json!({"type": "integer"}),
        "{format}"
    );
}

/// In stream-json, the re-ask is a `retry` event, never an `error`: a script that stops
/// at an error would give up on a run that then answers.
#[test]
fn the_re_ask_is_a_retry_event_in_stream_json() {
    let script = Script::new()
        .rule(Rule::on_prompt(RETRY, Reply::text(FITS)).and_prompt("at /risk"))
        .on_prompt("E2E-SCHEMA-RETRY", Reply::text(RISK_IN_WORDS));
    let Some(world) = World::new("e2e-schema-retry-event", script) else {
        return;
    };
    let run = world.codecrew(&[
        "query",
        "--output",
        "stream-json",
        "--schema",
        "file, risk int",
        "@claude E2E-SCHEMA-RETRY",
    ]);
    run.assert_code(0);
    // Every line an event; none an error, one a retry.
    assert_eq!(
        run.json_lines().len(),
        run.stdout.lines().count(),
        "{}",
        run.stdout
    );
    assert_eq!(run.events("error"), Vec::<Value>::new());
    let retries = run.events("retry");
    let [retry] = retries.as_slice() else {
        panic!("not one retry event:\n{}", run.stdout);
    };
    assert_eq!(retry["agent"], "claude");
    let message = retry["message"].as_str().unwrap();
    assert!(message.contains("asking again (1 of 2)"), "{message}");
    assert!(message.contains("/risk"), "{message}");
}
