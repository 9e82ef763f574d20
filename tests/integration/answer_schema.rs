//! `--schema` with a declared CLI (a scripted `command` agent) and `codecrew schema`:
//! what needs no real CLI. With every real CLI: `e2e/schema.rs`.

use crate::support::World;
use crate::support::agent_script::{AgentScript, Answer, Turn};
use crate::support::binary::assert_exit;
use serde_json::{Value, json};

const RETRY: &str = "does not fit the JSON Schema";

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_declared_cli_is_asked_again_until_its_answer_fits() {
    let script = AgentScript::new()
        .turn(Turn::on_prompt(
            RETRY,
            Answer::text("{\"file\": \"a.rs\", \"risk\": 2}"),
        ))
        .otherwise(Answer::text(
            "```json\n{\"file\": \"a.rs\", \"risk\": \"low\"}\n```",
        ));
    let world = World::new().agent("a", script);
    let output = world.run(&["query", "--schema", "file, risk int", "@a which file?"]);
    assert_exit(&output, 0);
    let data: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(data, json!({"file": "a.rs", "risk": 2}));
    let prompts = world.prompts("a");
    assert_eq!(prompts.len(), 2);
    assert!(
        prompts[0].contains("The shape of your final answer"),
        "{}",
        prompts[0]
    );
    // A declared CLI cannot resume: the re-ask resends the exchange, then what was wrong.
    assert!(prompts[1].contains("\"low\""), "{}", prompts[1]);
    assert!(prompts[1].contains("at /risk"), "{}", prompts[1]);
}

#[test]
fn an_answer_that_never_fits_exits_65_with_the_errors_on_stderr() {
    let script = AgentScript::new().otherwise(Answer::text("I would rather not."));
    let world = World::new().agent("a", script);
    let output = world.run(&[
        "query",
        "--schema",
        "file",
        "--schema-retries",
        "0",
        "@a hi",
    ]);
    assert_exit(&output, 65);
    assert_eq!(stdout(&output), "");
    let said = stderr(&output);
    assert!(said.contains("no JSON document"), "{said}");
    assert!(
        said.contains("I would rather not."),
        "the last answer: {said}"
    );
    assert_eq!(world.prompts("a").len(), 1, "--schema-retries 0 asks once");
    // --output json: the report says it, beside what it always said.
    let output = world.run(&["query", "--output", "json", "--schema", "file", "@a hi"]);
    assert_exit(&output, 65);
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    let result = &document["results"][0];
    assert_eq!(result["failure"], "schema_mismatch");
    assert_eq!(result["response"], "I would rather not.");
    assert!(result.get("data").is_none());
    assert!(
        result["schema_errors"][0]
            .as_str()
            .unwrap()
            .contains("no JSON")
    );
}

#[test]
fn a_schema_that_is_not_one_is_refused_before_any_cli_starts() {
    let world = World::new().agent("a", AgentScript::new());
    for (schema, said) in [
        (
            r#"{"type": "object", "properties": {"risk": {"type": "integr"}}}"#,
            "/properties/risk/type",
        ),
        ("risk integer", "str, int, float or bool"),
        ("@missing.json", "missing.json"),
        ("{\"type\": ", "not JSON"),
    ] {
        let output = world.run(&["query", "--schema", schema, "@a hi"]);
        assert_exit(&output, 2);
        assert!(
            stderr(&output).contains(said),
            "{schema}: {}",
            stderr(&output)
        );
    }
    assert!(world.prompts("a").is_empty());
}

#[test]
fn codecrew_schema_prints_what_a_compact_form_means() {
    let world = World::new();
    let output = world.run(&["schema", "--multi", "name, risk int: 1 to 5"]);
    assert_exit(&output, 0);
    let schema: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "risk": {"type": "integer", "description": "1 to 5"},
                },
                "required": ["name", "risk"],
            }}},
            "required": ["items"],
        })
    );
}

#[test]
fn logs_finds_the_runs_of_a_schema_and_prints_their_data() {
    let script = AgentScript::new()
        .turn(Turn::on_prompt(
            "TASK-ONE",
            Answer::text("{\"file\": \"a.rs\", \"risk\": 1}"),
        ))
        .turn(Turn::on_prompt(
            "TASK-TWO",
            Answer::text("{\"file\": \"b.rs\", \"risk\": 5}"),
        ))
        .otherwise(Answer::text("no schema here"));
    let world = World::new().agent("a", script);
    for task in ["@a TASK-ONE", "@a TASK-TWO"] {
        assert_exit(
            &world.run(&["query", "--schema", "file, risk int", task]),
            0,
        );
    }
    assert_exit(&world.run(&["query", "@a third, without a schema"]), 0);
    // The same schema, written otherwise: the same hash.
    let same = r#"{"type": "object", "properties": {"file": {"type": "string"}, "risk": {"type": "integer"}}, "required": ["file", "risk"]}"#;
    let output = world.run(&["logs", "--schema", same, "--data"]);
    assert_exit(&output, 0);
    let data: Vec<Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        data,
        [
            json!({"file": "b.rs", "risk": 5}),
            json!({"file": "a.rs", "risk": 1})
        ]
    );
    let listed = world.run(&["logs", "--schema", "file, risk int", "--output", "json"]);
    assert_exit(&listed, 0);
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed["runs"].as_array().unwrap().len(), 2, "{listed}");
    let other = world.run(&["logs", "--schema", "file", "--data"]);
    assert_exit(&other, 0);
    assert_eq!(stdout(&other), "");
    assert_exit(&world.run(&["logs", "--data"]), 2);
}

#[test]
fn a_chats_schema_holds_the_next_line_alone() {
    use crate::support::binary::BIN;
    use crate::support::pty::Terminal;
    let script = AgentScript::new()
        .turn(Turn::on_prompt(
            RETRY,
            Answer::text("{\"file\": \"b.rs\", \"risk\": 7}"),
        ))
        .turn(Turn::on_prompt(
            "The shape of your final answer",
            Answer::text("{\"file\": \"b.rs\", \"risk\": \"high\"}"),
        ))
        .otherwise(Answer::text("PLAIN-PROSE-ANSWER"));
    let world = World::new().agent("a", script);
    let limit = std::time::Duration::from_secs(60);
    let mut terminal = Terminal::run(&world.env, std::path::Path::new(BIN), &["chat"]);
    terminal.wait_for("prompt", limit, |shown| shown.contains("query> "));
    terminal.type_keys(b"/schema file, risk int\r");
    terminal.wait_for("the schema taken", limit, |shown| {
        shown.contains("held to the schema")
    });
    terminal.type_keys(b"@a which file?\r");
    // Asked again with the checker's errors, then the data alone.
    terminal.wait_for("the data", limit, |shown| {
        shown.contains("{\"file\":\"b.rs\",\"risk\":7}")
    });
    terminal.type_keys(b"@a and now?\r");
    terminal.wait_for("a plain answer", limit, |shown| {
        shown.contains("PLAIN-PROSE-ANSWER")
    });
    let prompts = world.prompts("a");
    assert_eq!(prompts.len(), 3, "{prompts:?}");
    assert!(!prompts[2].contains("The shape of your final answer"));
}
