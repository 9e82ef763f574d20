//! Going on from an earlier run kept in the run store: `query -c` from the last one in
//! the workspace, `--resume ID` from any. A `command` agent that cannot resume shows what
//! it was sent (the earlier exchanges); the real CLIs resume their own sessions.

use std::process::Command;

use serde_json::Value;

use crate::support::binary::{BIN, assert_exit, text};
use crate::support::{AgentScript, World};

/// `@echo` and `@other`, both the scripted agent answering `ANSWER-<task>`.
fn world() -> World {
    World::new()
        .agent("echo", AgentScript::new())
        .agent("other", AgentScript::new())
}

/// The last prompt either agent was sent.
fn last_prompt(world: &World) -> String {
    world.prompts_of(&["echo", "other"]).pop().unwrap()
}

fn listed_runs(world: &World) -> Vec<Value> {
    let output = world.run(&["logs", "--output", "json"]);
    assert_exit(&output, 0);
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    listed["runs"].as_array().unwrap().clone()
}

#[test]
fn continue_goes_on_from_the_last_run_with_its_agents() {
    let world = world();
    let first = world.run(&["query", "--raw", "@echo @other TASK-ONE first"]);
    assert_exit(&first, 0);

    // No mention: the task goes to both agents of the last run, each with its exchange.
    let second = world.run(&["query", "--output", "json", "-c", "TASK-TWO second"]);
    assert_exit(&second, 0);
    let doc: Value = serde_json::from_slice(&second.stdout).unwrap();
    let agents: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| result["agent"].as_str().unwrap())
        .collect();
    assert_eq!(agents, ["echo", "other"], "{}", text(&second.stdout));
    let prompt = last_prompt(&world);
    let earlier = prompt.find("TASK-ONE first").expect(&prompt);
    let answer = prompt.find("ANSWER-TASK-ONE").expect(&prompt);
    let now = prompt.find("TASK-TWO second").expect(&prompt);
    assert!(earlier < answer && answer < now, "{prompt}");

    let runs = listed_runs(&world);
    let (newest, oldest) = (&runs[0], &runs[1]);
    assert_eq!(newest["continues"], oldest["id"]);
    assert_eq!(oldest["continues"], Value::Null);

    // -c again follows the chain: both earlier exchanges, oldest first.
    let third = world.run(&["query", "--raw", "-c", "@echo TASK-THREE third"]);
    assert_exit(&third, 0);
    let prompt = last_prompt(&world);
    let one = prompt.find("ANSWER-TASK-ONE").expect(&prompt);
    let two = prompt.find("ANSWER-TASK-TWO").expect(&prompt);
    assert!(
        one < two && two < prompt.find("TASK-THREE").unwrap(),
        "{prompt}"
    );

    // --resume goes on from the run named, not from the last.
    let short = oldest["short_id"].as_str().unwrap();
    let fourth = world.run(&["query", "--raw", "--resume", short, "@other TASK-FOUR"]);
    assert_exit(&fourth, 0);
    let prompt = last_prompt(&world);
    assert!(prompt.contains("ANSWER-TASK-ONE"), "{prompt}");
    assert!(!prompt.contains("ANSWER-TASK-TWO"), "{prompt}");
    assert_eq!(listed_runs(&world)[0]["continues"], oldest["id"]);
}

#[test]
fn nothing_to_go_on_from_is_a_usage_error_that_says_what_to_do() {
    let world = world();
    let nothing = world.run(&["query", "-c", "TASK-X"]);
    assert_exit(&nothing, 2);
    let said = text(&nothing.stderr);
    assert!(said.contains("no earlier run in"), "{said}");
    assert!(said.contains("codecrew logs"), "{said}");

    let first = world.run(&["query", "--raw", "@echo TASK-ONE"]);
    assert_exit(&first, 0);
    let unknown = world.run(&["query", "--resume", "abcdef12", "TASK-X"]);
    assert_exit(&unknown, 2);
    assert!(
        text(&unknown.stderr).contains("no run has the id"),
        "{}",
        text(&unknown.stderr)
    );
    let bad = world.run(&["query", "--resume", "../etc", "TASK-X"]);
    assert_exit(&bad, 2);
    assert!(
        text(&bad.stderr).contains("not a run's id"),
        "{}",
        text(&bad.stderr)
    );
    let both = world.run(&["query", "-c", "--thread", "t", "TASK-X"]);
    assert_exit(&both, 2);
    assert!(
        text(&both.stderr).contains("cannot be used with"),
        "{}",
        text(&both.stderr)
    );
}

/// The real CLIs against the fake model: `query -c` resumes the CLI session of the last
/// run (the model sees the first exchange as the CLI's own history).
#[test]
fn real_clis_resume_their_session_with_continue() {
    use crate::support::clis::{Clis, TestHome, run};
    use crate::support::fake_model::{FakeModel, Reply, Rule, Script};

    let Some(clis) = Clis::require("continue-resume") else {
        return;
    };
    let script = Script::new()
        .rule(Rule::on_prompt(
            "CONT-SECOND",
            Reply::text("Second answer."),
        ))
        .rule(Rule::on_prompt(
            "CONT-FIRST",
            Reply::text("First answer, remembered."),
        ));
    let server = FakeModel::start(script);
    for agent in [
        "claude", "gemini", "codex", "copilot", "opencode", "qwen", "llm",
    ] {
        let home = TestHome::new(&format!("continue-{agent}"));
        let env = clis
            .env_for_all(&home, &server.url())
            .with("CODECREW_CONFIG", "");
        let codecrew = |args: &[&str]| {
            let mut command = Command::new(BIN);
            env.apply(&mut command);
            command.args(["-v", "query", "--output", "json"]).args(args);
            let done = run(&mut command, std::time::Duration::from_secs(180));
            done.assert_code(0);
            let doc: Value = serde_json::from_str(done.stdout.trim()).unwrap();
            (done, doc)
        };
        let (_, first) = codecrew(&[&format!("@{agent} CONT-FIRST hello")]);
        let session = first["results"][0]["session_id"]
            .as_str()
            .unwrap()
            .to_owned();
        let before = server.model_requests().len();
        // No mention: the last run's agent answers.
        let (second_run, second) = codecrew(&["-c", "CONT-SECOND go on"]);
        assert_eq!(second["results"][0]["agent"], agent);
        assert_eq!(
            second["results"][0]["response"], "Second answer.",
            "{agent}"
        );
        let stderr = &second_run.stderr;
        assert!(
            stderr.contains(&format!("resume {session}"))
                || stderr.contains(&format!("session/load {session}"))
                || stderr.contains(&format!("--resume={session}"))
                || stderr.contains(&format!("--session={session}"))
                || stderr.contains(&format!("--cid={session}")),
            "{agent}: {stderr}"
        );
        let requests = server.model_requests();
        let request = requests[before..]
            .iter()
            .find(|r| {
                r.prompt
                    .as_deref()
                    .is_some_and(|p| p.contains("CONT-SECOND"))
            })
            .unwrap_or_else(|| panic!("{agent}: no second request"));
        let body = request.body.to_string();
        assert!(
            body.contains("First answer, remembered."),
            "{agent}: {body}"
        );
        assert!(!body.contains("earlier conversation"), "{agent}: {body}");
    }
}

/// In a chat, `/resume` goes on from the last run here: its agents answer a line that
/// mentions none, each from where it stood.
#[test]
fn chat_resume_goes_on_from_the_last_run() {
    use crate::support::pty::Terminal;
    use std::time::Duration;

    let world = world();
    let first = world.run(&["query", "--raw", "@other TASK-ONE first"]);
    assert_exit(&first, 0);
    let env = world.env.clone().with("NO_COLOR", "1");
    let limit = Duration::from_secs(60);
    let mut terminal = Terminal::run(&env, std::path::Path::new(BIN), &["chat"]);
    terminal.wait_for("prompt", limit, |shown| shown.contains("query> "));
    terminal.type_keys(b"/resume\r");
    terminal.wait_for("resumed", limit, |shown| {
        shown.contains("going on from run") && shown.contains("with @other")
    });
    terminal.type_keys(b"TASK-CHAT go on\r");
    terminal.wait_for("answer", limit, |shown| {
        shown
            .split_once("ANSWER-TASK-CHAT")
            .is_some_and(|(_, after)| after.contains("query> "))
    });
    let prompt = last_prompt(&world);
    assert!(prompt.contains("ANSWER-TASK-ONE"), "{prompt}");
    terminal.type_keys(b"/exit\r");
    let status = terminal.wait(limit).expect("the chat ended");
    assert_eq!(status.code(), Some(0), "{}", terminal.text());
    let runs = listed_runs(&world);
    assert_eq!(runs[0]["command"], "chat");
    assert_eq!(runs[0]["continues"], runs[1]["id"]);
}
