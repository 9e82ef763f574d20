//! Every run kept, with the real CLIs against the fake model: a query, a crew call, runs
//! in the background (`execute --detach`, `ps`, `result --wait`, `kill`), then `logs`,
//! `logs show` and `logs search` over them. (A chat's run: `chat.rs`; going on with `-c`:
//! `resume.rs` of the integration tests.)

use std::time::{Duration, Instant};

use super::*;

fn script() -> Script {
    let ask_gemini = fenced(&[envelope(
        "query_agent",
        json!({"agent": "gemini", "task": "KEPT-SUB what do you say?"}),
    )]);
    Script::new()
        .rule(
            Rule::on_prompt(FOLLOW_UP, Reply::text("Crew done: KEPT-SUB-SAID."))
                .and_prompt("KEPT-SUB-SAID"),
        )
        .rule(Rule::on_prompt(
            "KEPT-SUB",
            Reply::text("KEPT-SUB-SAID by gemini."),
        ))
        .rule(Rule::on_prompt("KEPT-CREW", Reply::text(ask_gemini)))
        .rule(Rule::on_prompt(
            "KEPT-SLOW",
            Reply::text("Too late.").with_delay_ms(120_000),
        ))
        .rule(Rule::on_prompt(
            "KEPT-DETACH",
            Reply::text("Detached answer: quokka."),
        ))
        .rule(Rule::on_prompt(
            "KEPT-FIRST",
            Reply::text("First answer: zebracorn."),
        ))
}

fn runs(world: &World) -> Vec<Value> {
    let logs = world.codecrew(&["logs", "--output", "json"]);
    logs.assert_code(0);
    let listed: Value = serde_json::from_str(&logs.stdout).unwrap();
    listed["runs"].as_array().unwrap().clone()
}

fn shown(world: &World, id: &str) -> Value {
    let shown = world.codecrew(&["logs", "show", id, "--output", "json"]);
    shown.assert_code(0);
    serde_json::from_str(&shown.stdout).unwrap()
}

#[test]
fn every_run_is_kept_and_found_with_the_real_clis() {
    let Some(world) = World::new("e2e-kept-runs", script()) else {
        return;
    };
    // A query.
    let (run, doc) = world.json("query", &["@claude KEPT-FIRST hello"]);
    run.assert_code(0);
    assert_eq!(result(&doc)["response"], "First answer: zebracorn.");

    // A crew call: gemini's job kept under claude's.
    let (run, doc) = world.json("query", &["@claude KEPT-CREW ask gemini"]);
    run.assert_code(0);
    assert_eq!(
        result(&doc)["response"],
        "Crew done: KEPT-SUB-SAID.",
        "{doc}"
    );
    let crew = &runs(&world)[0];
    assert_eq!(crew["agents"], json!(["claude", "gemini"]));
    let detail = shown(&world, crew["id"].as_str().unwrap());
    let jobs = detail["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "{detail:#}");
    assert_eq!(
        (&jobs[1]["agent"], &jobs[1]["parent"], &jobs[1]["depth"]),
        (&json!("gemini"), &json!(0), &json!(1))
    );
    assert_eq!(jobs[1]["answer"], "KEPT-SUB-SAID by gemini.");
    assert_eq!(jobs[0]["tool_calls"][0]["name"], "query_agent");
    assert_eq!(jobs[0]["tool_calls"][0]["decided_by"], "policy");

    // In the background: the id at once, the answer when it comes.
    let detached = world.codecrew(&["execute", "--detach", "@claude KEPT-DETACH go"]);
    detached.assert_code(0);
    let id = detached.stdout.trim().to_owned();
    assert_eq!(id.len(), 16, "{}", detached.stdout);
    let answer = world.codecrew(&["result", "--wait", &id]);
    answer.assert_code(0);
    assert!(
        answer.stdout.contains("Detached answer: quokka."),
        "{}",
        answer.stdout
    );
    assert_eq!(shown(&world, &id)["command"], "execute");

    // A slow one: `ps` shows it running, `kill` stops it as Ctrl-C would.
    let slow = world.codecrew(&["query", "--detach", "@claude KEPT-SLOW wait"]);
    slow.assert_code(0);
    let slow = slow.stdout.trim().to_owned();
    let started = Instant::now();
    loop {
        let ps = world.codecrew(&["ps", "--output", "json"]);
        ps.assert_code(0);
        // The model has the request: the CLI runs, codecrew waits for it.
        if ps.stdout.contains(&slow)
            && world
                .server
                .model_requests()
                .iter()
                .any(|r| r.prompt.as_deref().is_some_and(|p| p.contains("KEPT-SLOW")))
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "never running: {}",
            ps.stdout
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let killed = world.codecrew(&["kill", &slow]);
    killed.assert_code(0);
    let detail = shown(&world, &slow);
    assert_eq!(detail["exit_code"], 130, "{detail:#}");
    let ps = world.codecrew(&["ps", "--output", "json"]);
    assert!(!ps.stdout.contains(&slow), "{}", ps.stdout);

    // All four listed, newest first; a word of an answer found.
    let listed = runs(&world);
    let commands: Vec<&str> = listed
        .iter()
        .map(|run| run["command"].as_str().unwrap())
        .collect();
    assert_eq!(
        commands,
        ["query", "execute", "query", "query"],
        "{listed:#?}"
    );
    let found = world.codecrew(&["logs", "search", "zebracorn", "--output", "json"]);
    let found: Value = serde_json::from_str(&found.stdout).unwrap();
    assert_eq!(found["matches"].as_array().unwrap().len(), 1, "{found:#}");
    assert_eq!(found["matches"][0]["id"], listed[3]["id"]);
}
