//! The real Gemini CLI against the fake.

use super::*;

#[test]
fn gemini_plain_answer() {
    let Some(rig) = Rig::new(Cli::Gemini, "gemini_plain_answer") else {
        return;
    };
    let run = rig.run(&gemini_args("hello"));
    run.assert_code(0);
    assert_eq!(gemini_text(&run), HELLO);
    // Each streamed chunk is one delta event.
    let deltas = run
        .events("message")
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count();
    assert_eq!(deltas, chunk_text(HELLO, 12).len());
    assert_eq!(run.events("result")[0]["status"], "success");
    let log = rig.server.requests();
    assert!(
        log.iter()
            .any(|r| r.answered_by == "structured-output" && r.prompt.as_deref() == Some("hello"))
    );
    let turns = rig.server.model_requests();
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].prompt.as_deref(), Some("hello"));
    assert!(turns[0].path.ends_with(":streamGenerateContent"));
}

#[test]
fn gemini_passes_a_fenced_envelope_through() {
    let Some(rig) = Rig::new(Cli::Gemini, "gemini_envelope") else {
        return;
    };
    let run = rig.run(&gemini_args("please use codecrew help"));
    run.assert_code(0);
    assert_eq!(gemini_text(&run), envelope_reply_text());
}

#[test]
fn gemini_resumed_session_replays_history() {
    let Some(rig) = Rig::new(Cli::Gemini, "gemini_resume") else {
        return;
    };
    let first = rig.run(&gemini_args("remember the number 42"));
    first.assert_code(0);
    let session = first.events("init")[0]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut args = gemini_args("what number did I ask you to remember?");
    args.extend(["--resume", &session]);
    let second = rig.run(&args);
    second.assert_code(0);
    assert_eq!(gemini_text(&second), "You asked me to remember 42.");
    assert_eq!(second.events("init")[0]["session_id"], session.as_str());
    let last = rig.server.model_requests().pop().unwrap();
    assert_eq!(last.answered_by, "turn-2");
    assert!(
        replayed_assistant_text(&last)
            .concat()
            .contains("Got it: I will remember 42.")
    );
}

#[test]
fn gemini_api_error_exits_144() {
    let Some(rig) = Rig::new(Cli::Gemini, "gemini_api_error") else {
        return;
    };
    let run = rig.run(&gemini_args("fail please"));
    run.assert_code(Cli::Gemini.api_error_exit_code());
    let result = run.events("result").pop().unwrap();
    assert_eq!(result["status"], "error");
    assert!(result["error"]["message"].as_str().unwrap().contains(FAIL));
}

#[test]
fn gemini_native_tool_round_trip() {
    let Some(rig) = Rig::new(Cli::Gemini, "gemini_tool") else {
        return;
    };
    let mut args = gemini_args("run echo for me");
    args.push("--yolo");
    let run = rig.run(&args);
    run.assert_code(0);
    let tool_use = run.events("tool_use").pop().expect("a tool_use event");
    assert_eq!(tool_use["tool_name"], "run_shell_command");
    assert_eq!(run.events("tool_result")[0]["status"], "success");
    assert!(gemini_text(&run).ends_with(TOOL_DONE));
    let turns = rig.server.model_requests();
    assert_eq!(turns.last().unwrap().answered_by, "tool-done");
    assert!(
        turns
            .last()
            .unwrap()
            .tool_result
            .as_deref()
            .unwrap()
            .contains("fake-tool-output")
    );
}

#[test]
fn gemini_drops_thought_parts_from_its_output() {
    let Some(rig) = Rig::new(Cli::Gemini, "gemini_thinking") else {
        return;
    };
    rig.server.set_script(
        Script::new().default_reply(
            Reply::text("Here is my considered answer.")
                .with_thinking("Let me think about this carefully."),
        ),
    );
    let run = rig.run(&gemini_args("think first"));
    run.assert_code(0);
    assert_eq!(gemini_text(&run), "Here is my considered answer.");
    assert!(!run.stdout.contains("Let me think"), "{}", run.stdout);
}
