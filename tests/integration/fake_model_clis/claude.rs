//! The real Claude Code against the fake.

use super::*;

#[test]
fn claude_plain_answer() {
    let Some(rig) = Rig::new(Cli::Claude, "claude_plain_answer") else {
        return;
    };
    let run = rig.run(&claude_args("hello"));
    run.assert_code(0);
    let assistant = run.events("assistant");
    assert_eq!(assistant[0]["message"]["content"][0]["text"], HELLO);
    assert!(
        assistant[0]["request_id"]
            .as_str()
            .unwrap()
            .starts_with("req_")
    );
    assert_eq!(claude_result(&run), HELLO);
    let requests = rig.server.model_requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].prompt.as_deref(), Some("hello"));
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].answered_by, "hello");
    assert_eq!(
        requests[0].header("x-api-key"),
        rig.env.get("ANTHROPIC_API_KEY").and_then(|v| v.to_str())
    );
    let session = &run.events("system")[0]["session_id"];
    assert_eq!(
        requests[0].header("x-claude-code-session-id"),
        session.as_str()
    );
}

#[test]
fn claude_passes_a_fenced_envelope_through() {
    let Some(rig) = Rig::new(Cli::Claude, "claude_envelope") else {
        return;
    };
    let run = rig.run(&claude_args("please use codecrew help"));
    run.assert_code(0);
    assert_eq!(claude_result(&run), envelope_reply_text());
    assert_eq!(
        run.events("assistant")[0]["message"]["content"][0]["text"],
        envelope_reply_text()
    );
}

#[test]
fn claude_resumed_session_replays_history() {
    let Some(rig) = Rig::new(Cli::Claude, "claude_resume") else {
        return;
    };
    let first = rig.run(&claude_args("remember the number 42"));
    first.assert_code(0);
    let session = first.events("system")[0]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut args = claude_args("what number did I ask you to remember?");
    args.extend(["--resume", &session]);
    let second = rig.run(&args);
    second.assert_code(0);
    assert_eq!(claude_result(&second), "You asked me to remember 42.");
    assert_eq!(second.events("result")[0]["session_id"], session.as_str());
    let requests = rig.server.model_requests();
    let last = requests.last().unwrap();
    assert_eq!(last.answered_by, "turn-2");
    assert_eq!(
        last.prompt.as_deref(),
        Some("what number did I ask you to remember?")
    );
    assert!(replayed_assistant_text(last).contains(&"Got it: I will remember 42.".to_string()));
}

#[test]
fn claude_api_error_exits_1() {
    let Some(rig) = Rig::new(Cli::Claude, "claude_api_error") else {
        return;
    };
    let run = rig.run(&claude_args("fail please"));
    run.assert_code(Cli::Claude.api_error_exit_code());
    let result = run.events("result").pop().unwrap();
    assert_eq!(result["is_error"], true);
    assert_eq!(result["api_error_status"], 400);
    assert!(
        result["result"].as_str().unwrap().contains(FAIL),
        "{result}"
    );
    // 2.1.329 re-sends a 400 with fewer beta features; every request got the error.
    let requests = rig.server.model_requests();
    assert!(!requests.is_empty());
    assert!(requests.iter().all(|r| r.answered_by == "fail"));
}

#[test]
fn claude_native_tool_round_trip() {
    let Some(rig) = Rig::new(Cli::Claude, "claude_tool") else {
        return;
    };
    let mut args = claude_args("run echo for me");
    args.extend(["--allowedTools", "Bash"]);
    let run = rig.run(&args);
    run.assert_code(0);
    let tool_use = run
        .events("assistant")
        .into_iter()
        .find(|e| e["message"]["content"][0]["type"] == "tool_use")
        .expect("a tool_use event");
    assert_eq!(tool_use["message"]["content"][0]["name"], "Bash");
    let user = run.events("user");
    assert_eq!(
        user[0]["message"]["content"][0]["content"],
        "fake-tool-output"
    );
    assert_eq!(claude_result(&run), TOOL_DONE);
    let requests = rig.server.model_requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].answered_by, "tool-call");
    assert_eq!(requests[1].answered_by, "tool-done");
    assert_eq!(requests[1].tool_result.as_deref(), Some("fake-tool-output"));
    assert_eq!(requests[1].prompt.as_deref(), Some("run echo for me"));
}

#[test]
fn claude_thinking_block() {
    let Some(rig) = Rig::new(Cli::Claude, "claude_thinking") else {
        return;
    };
    rig.server.set_script(
        Script::new().default_reply(
            Reply::text("Here is my considered answer.")
                .with_thinking("Let me think about this carefully."),
        ),
    );
    let run = rig.run(&claude_args("think first"));
    run.assert_code(0);
    let thinking = run
        .events("assistant")
        .into_iter()
        .find(|e| e["message"]["content"][0]["type"] == "thinking")
        .expect("a thinking block");
    assert_eq!(
        thinking["message"]["content"][0]["thinking"],
        "Let me think about this carefully."
    );
    assert_eq!(claude_result(&run), "Here is my considered answer.");
}
