//! The real Copilot CLI against the fake, and the harness that finds all four.

use super::*;

#[test]
fn copilot_plain_answer() {
    let Some(rig) = Rig::new(Cli::Copilot, "copilot_plain_answer") else {
        return;
    };
    let run = rig.run(&copilot_args("hello"));
    run.assert_code(0);
    assert_eq!(copilot_messages(&run), [HELLO]);
    let result = run.events("result").pop().expect("a result line");
    assert_eq!(result["exitCode"], 0);
    assert!(result["sessionId"].is_string(), "{result}");
    let turns = rig.server.model_requests();
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].path, "/v1/messages");
    assert_eq!(
        turns[0].header("x-api-key"),
        Some(crate::support::clis::FAKE_API_KEY)
    );
    // Copilot puts the date before the prompt.
    assert!(
        turns[0]
            .prompt
            .as_deref()
            .is_some_and(|p| p.ends_with("hello")),
        "{:?}",
        turns[0].prompt
    );
}

#[test]
fn copilot_passes_a_fenced_envelope_through() {
    let Some(rig) = Rig::new(Cli::Copilot, "copilot_envelope") else {
        return;
    };
    let run = rig.run(&copilot_args("please use codecrew help"));
    run.assert_code(0);
    assert_eq!(copilot_messages(&run), [envelope_reply_text()]);
    // Streamed in pieces first: the deltas add up to the whole message.
    let streamed: String = run
        .events("assistant.message_delta")
        .iter()
        .map(|e| e["data"]["deltaContent"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, envelope_reply_text());
}

#[test]
fn copilot_resumed_session_replays_history() {
    let Some(rig) = Rig::new(Cli::Copilot, "copilot_resume") else {
        return;
    };
    let first = rig.run(&copilot_args("remember the number 42"));
    first.assert_code(0);
    let session = first.events("result")[0]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let resume = format!("--resume={session}");
    let mut args = copilot_args("what number did I ask you to remember?");
    args.push(&resume);
    let second = rig.run(&args);
    second.assert_code(0);
    assert_eq!(copilot_messages(&second), ["You asked me to remember 42."]);
    assert_eq!(second.events("result")[0]["sessionId"], session.as_str());
    let last = rig.server.model_requests().pop().unwrap();
    assert_eq!(last.answered_by, "turn-2");
    assert!(replayed_assistant_text(&last).contains(&"Got it: I will remember 42.".to_string()));
}

#[test]
fn copilot_api_error_exits_1_with_a_session_error() {
    let Some(rig) = Rig::new(Cli::Copilot, "copilot_api_error") else {
        return;
    };
    let run = rig.run(&copilot_args("fail please"));
    run.assert_code(Cli::Copilot.api_error_exit_code());
    let error = run.events("session.error").pop().expect("session.error");
    assert!(
        error["data"]["message"].as_str().unwrap().contains(FAIL),
        "{error}"
    );
    assert_eq!(run.events("result")[0]["exitCode"], 1);
    assert_eq!(rig.server.model_requests().len(), 1, "a 400 is not retried");
}

#[test]
fn copilot_native_tool_round_trip() {
    let Some(rig) = Rig::new(Cli::Copilot, "copilot_tool") else {
        return;
    };
    let mut args = copilot_args("run echo for me");
    args.push("--allow-all-tools");
    let run = rig.run(&args);
    run.assert_code(0);
    let done = run
        .events("tool.execution_complete")
        .pop()
        .expect("a tool.execution_complete");
    assert_eq!(done["data"]["success"], true, "{done}");
    assert_eq!(copilot_messages(&run), ["Running it.", TOOL_DONE]);
    let turns = rig.server.model_requests();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[1].answered_by, "tool-done");
}

#[test]
fn harness_env_for_all_clis_puts_the_clis_first_on_path() {
    let Some(clis) = Clis::require("harness_env_for_all") else {
        return;
    };
    let home = TestHome::new("harness_env");
    let env = clis.env_for_all(&home, "http://127.0.0.1:9");
    let path = env.get("PATH").unwrap();
    let first = std::env::split_paths(path).next().unwrap();
    assert_eq!(first, clis.bin_dir());
    for key in [
        "ANTHROPIC_BASE_URL",
        "GOOGLE_GEMINI_BASE_URL",
        "CODEX_HOME",
        "GEMINI_CLI_HOME",
    ] {
        assert!(env.get(key).is_some(), "{key}");
    }
    assert!(env.remove.iter().any(|k| k == "CLAUDECODE"));
    assert!(env.remove.iter().any(|k| k == "OPENAI_API_KEY"));
    let config = std::fs::read_to_string(home.home().join(".codex/config.toml")).unwrap();
    assert!(config.contains("base_url = \"http://127.0.0.1:9/v1\""));
    assert!(home.home().join(".gemini/settings.json").is_file());
    // codecrew finds the CLIs by name on this PATH.
    let mut which = std::process::Command::new("sh");
    which.args([
        "-c",
        "for c in claude gemini codex copilot opencode qwen llm node; do command -v $c; done",
    ]);
    env.apply(&mut which);
    let found = run(&mut which, Duration::from_secs(10));
    let lines: Vec<&str> = found.stdout.lines().collect();
    assert_eq!(lines.len(), 8, "{}", found.stdout);
    for (line, cli) in lines.iter().zip(Cli::ALL) {
        assert_eq!(std::path::Path::new(line), clis.path(cli));
    }
}
