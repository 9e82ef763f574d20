//! The real Codex against the fake.

use super::*;

#[test]
fn codex_plain_answer() {
    let Some(rig) = Rig::new(Cli::Codex, "codex_plain_answer") else {
        return;
    };
    let run = rig.run(&codex_args("hello"));
    run.assert_code(0);
    assert_eq!(codex_messages(&run), [HELLO]);
    assert_eq!(run.events("turn.completed").len(), 1);
    let turns = rig.server.model_requests();
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].prompt.as_deref(), Some("hello"));
    assert_eq!(turns[0].path, "/v1/responses");
    let bearer = format!("Bearer {}", crate::support::clis::FAKE_API_KEY);
    assert_eq!(turns[0].header("authorization"), Some(bearer.as_str()));
    // Codex refuses helper binaries under the system temp dir; test homes avoid it unless
    // the checkout itself lives there.
    let homes_in_temp = Path::new(env!("CARGO_TARGET_TMPDIR")).starts_with(std::env::temp_dir());
    assert!(
        homes_in_temp || !run.stderr.contains("could not create PATH aliases"),
        "{}",
        run.stderr
    );
}

#[test]
fn codex_passes_a_fenced_envelope_through() {
    let Some(rig) = Rig::new(Cli::Codex, "codex_envelope") else {
        return;
    };
    let run = rig.run(&codex_args("please use codecrew help"));
    run.assert_code(0);
    assert_eq!(codex_messages(&run), [envelope_reply_text()]);
}

#[test]
fn codex_resumed_session_replays_history() {
    let Some(rig) = Rig::new(Cli::Codex, "codex_resume") else {
        return;
    };
    let first = rig.run(&codex_args("remember the number 42"));
    first.assert_code(0);
    let thread = first.events("thread.started")[0]["thread_id"]
        .as_str()
        .unwrap()
        .to_string();
    let second = rig.run(&[
        "exec",
        "--skip-git-repo-check",
        "--json",
        "resume",
        &thread,
        "what number did I ask you to remember?",
    ]);
    second.assert_code(0);
    assert_eq!(codex_messages(&second), ["You asked me to remember 42."]);
    assert_eq!(
        second.events("thread.started")[0]["thread_id"],
        thread.as_str()
    );
    let last = rig.server.model_requests().pop().unwrap();
    assert_eq!(last.answered_by, "turn-2");
    assert!(replayed_assistant_text(&last).contains(&"Got it: I will remember 42.".to_string()));
}

#[test]
fn codex_api_error_exits_1() {
    let Some(rig) = Rig::new(Cli::Codex, "codex_api_error") else {
        return;
    };
    let run = rig.run(&codex_args("fail please"));
    run.assert_code(Cli::Codex.api_error_exit_code());
    let failed = run.events("turn.failed").pop().expect("turn.failed");
    assert!(failed["error"]["message"].as_str().unwrap().contains(FAIL));
    assert_eq!(rig.server.model_requests().len(), 1, "no retries");
}

#[test]
fn codex_native_tool_round_trip() {
    let Some(rig) = Rig::new(Cli::Codex, "codex_tool") else {
        return;
    };
    let run = rig.run(&codex_args("run echo for me"));
    run.assert_code(0);
    let command = run
        .events("item.completed")
        .into_iter()
        .find(|e| e["item"]["type"] == "command_execution")
        .expect("a command_execution item");
    assert_eq!(command["item"]["aggregated_output"], "fake-tool-output\n");
    assert_eq!(codex_messages(&run), ["Running it.", TOOL_DONE]);
    let turns = rig.server.model_requests();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[1].answered_by, "tool-done");
    assert_eq!(turns[1].prompt.as_deref(), Some("run echo for me"));
}

#[test]
fn codex_reasoning_summary_becomes_a_reasoning_item() {
    let Some(rig) = Rig::new(Cli::Codex, "codex_thinking") else {
        return;
    };
    rig.server.set_script(
        Script::new().default_reply(
            Reply::text("Here is my considered answer.")
                .with_thinking("Let me think about this carefully."),
        ),
    );
    let run = rig.run(&codex_args("think first"));
    run.assert_code(0);
    let items: Vec<Value> = run
        .events("item.completed")
        .into_iter()
        .map(|e| e["item"].clone())
        .collect();
    assert_eq!(items[0]["type"], "reasoning");
    assert_eq!(items[0]["text"], "Let me think about this carefully.");
    assert_eq!(codex_messages(&run), ["Here is my considered answer."]);
}
