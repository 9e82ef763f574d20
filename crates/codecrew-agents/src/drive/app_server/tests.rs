//! The app-server adapter against scripted Codex messages.

use super::*;
use crate::drive::json_lines::parse_lines as lines;

fn server(resume: Option<&str>) -> AppServer {
    AppServer::new(ThreadSettings {
        cwd: "/ws".to_owned(),
        mode: Mode::Query,
        model: Some("gpt-5.5".to_owned()),
        resume: resume.map(str::to_owned),
    })
}

fn feed(server: &mut AppServer, message: Value) -> (Vec<Event>, Vec<Value>, bool) {
    let (events, outbox, over) = feed_outbox(server, message);
    assert!(outbox.pending.is_empty());
    (events, lines(&outbox.bytes), over)
}

fn feed_outbox(server: &mut AppServer, message: Value) -> (Vec<Event>, Outbox, bool) {
    let (mut events, mut outbox) = (Vec::new(), Outbox::default());
    let over = server.read(&line(&message), &mut events, &mut outbox);
    (events, outbox, over)
}

/// The end of a turn that failed with `why`, having used `usage`.
fn failed(why: &str, usage: Option<Usage>) -> [Event; 2] {
    [
        Event::Error(why.to_owned()),
        Event::Finished {
            text: None,
            is_error: true,
            usage,
            stop: None,
        },
    ]
}

#[test]
fn the_first_turn_shakes_hands_opens_the_thread_then_prompts() {
    let mut app = server(None);
    let first = lines(&app.start_turn("hello", None));
    assert_eq!(first[0]["method"], "initialize");
    let (_, replies, _) = feed(&mut app, json!({"id": INITIALIZE, "result": {}}));
    assert_eq!(replies[0], json!({"method": "initialized"}));
    assert_eq!(replies[1]["method"], "thread/start");
    assert_eq!(replies[1]["params"]["sandbox"], "danger-full-access");
    assert_eq!(replies[1]["params"]["approvalPolicy"], "untrusted");
    assert_eq!(
        replies[1]["params"]["config"]["features.unified_exec_tty"],
        false
    );
    assert_eq!(replies[1]["params"]["model"], "gpt-5.5");
    let (events, replies, _) = feed(
        &mut app,
        json!({"id": THREAD, "result": {"thread": {"id": "T1"}}}),
    );
    assert_eq!(
        events,
        [Event::Session {
            id: "T1".to_owned(),
            model: None
        }]
    );
    assert_eq!(replies[0]["method"], "turn/start");
    assert_eq!(replies[0]["params"]["input"][0]["text"], "hello");
    // The next turn goes straight to the thread.
    let next = lines(&app.start_turn("again", None));
    assert_eq!(next[0]["params"]["threadId"], "T1");
    assert!(next[0]["params"].get("outputSchema").is_none());
    // A turn held to a schema carries it as Codex's outputSchema.
    let schema = json!({"type": "object", "properties": {}, "required": [],
                        "additionalProperties": false});
    let shaped = lines(&app.start_turn("the document alone", Some(&schema)));
    assert_eq!(shaped[0]["params"]["outputSchema"], schema);
}

#[test]
fn a_turn_becomes_events_and_ends_with_its_running_usage() {
    let mut app = server(Some("T0"));
    app.start_turn("hi", None);
    let (_, replies, _) = feed(&mut app, json!({"id": INITIALIZE, "result": {}}));
    assert_eq!(replies[1]["method"], "thread/resume");
    assert_eq!(replies[1]["params"]["threadId"], "T0");
    feed(
        &mut app,
        json!({"id": THREAD, "result": {"thread": {"id": "T0"}}}),
    );
    let (events, _, over) = feed(
        &mut app,
        json!({"method": "item/completed", "params": {
        "item": {"type": "agentMessage", "id": "m1", "text": "Hello."}}}),
    );
    assert!(!over);
    assert_eq!(events, [Event::Text("Hello.".to_owned()), Event::TextEnd]);
    feed(
        &mut app,
        json!({"method": "thread/tokenUsage/updated", "params": {"tokenUsage": {
        "total": {"inputTokens": 215, "cachedInputTokens": 0, "outputTokens": 9}}}}),
    );
    let (events, _, over) = feed(
        &mut app,
        json!({"method": "turn/completed",
        "params": {"turn": {"status": "completed"}}}),
    );
    assert!(over);
    assert_eq!(
        events,
        [Event::Finished {
            text: Some("Hello.".to_owned()),
            is_error: false,
            usage: Some(Usage {
                input_tokens: Some(215),
                output_tokens: Some(9),
                cached_tokens: Some(0),
                cost_usd: None,
            }),
            stop: None,
        }]
    );
}

#[test]
fn codex_s_commands_are_its_own_tools_with_their_results() {
    let mut app = server(None);
    app.start_turn("hi", None);
    let (events, _, _) = feed(
        &mut app,
        json!({"method": "item/started", "params": {"item": {"type": "commandExecution",
            "id": "c1", "command": "ls", "status": "inProgress"}}}),
    );
    let call = |id: &str, command: &str| Event::NativeTool {
        id: Some(id.to_owned()),
        name: "command_execution".to_owned(),
        input: json!({"command": command}),
    };
    assert_eq!(events, [call("c1", "ls")]);
    let (events, _, _) = feed(
        &mut app,
        json!({"method": "item/completed", "params": {"item": {"type": "commandExecution",
            "id": "c1", "command": "ls", "aggregatedOutput": "a\n", "exitCode": 0,
            "status": "completed"}}}),
    );
    let result = |id: &str, output: &str, is_error| Event::NativeToolResult {
        id: Some(id.to_owned()),
        output: output.to_owned(),
        is_error,
    };
    assert_eq!(events, [result("c1", "a\n", false)]);
    // Never announced, declined before it ran: its call, then its failure.
    let (events, _, _) = feed(
        &mut app,
        json!({"method": "item/completed", "params": {"item": {"type": "commandExecution",
            "id": "c2", "command": "rm x", "exitCode": null, "status": "declined"}}}),
    );
    assert_eq!(events, [call("c2", "rm x"), result("c2", "", true)]);
}

#[test]
fn commands_and_patches_are_questions_and_other_requests_are_declined() {
    let mut app = server(None);
    let (_, mut outbox, _) = feed_outbox(
        &mut app,
        json!({"id": 0, "method": "item/commandExecution/requestApproval", "params": {
            "itemId": "call_1", "command": "/bin/bash -lc 'cat .env | head'", "cwd": "/ws/sub"}}),
    );
    let question = outbox.pending.pop().unwrap();
    assert_eq!(question.calls[0].tool, "run_command");
    assert_eq!(question.calls[0].input["command"], "cat .env | head");
    assert_eq!(question.calls[0].input["cwd"], "/ws/sub");
    assert_eq!(
        lines(&question.answer_now(&Verdict::Deny("asks".into()))),
        [json!({"id": 0, "result": {"decision": "decline"}})]
    );

    feed(
        &mut app,
        json!({"method": "item/started", "params": {"item": {"type": "fileChange", "id": "call_2",
            "changes": [{"path": "/ws/a.txt", "kind": {"type": "add"}},
                        {"path": "/ws/b.txt", "kind": {"type": "update", "move_path": "/ws/.env"}}]}}}),
    );
    let (_, mut outbox, _) = feed_outbox(
        &mut app,
        json!({"id": 1, "method": "item/fileChange/requestApproval", "params": {"itemId": "call_2"}}),
    );
    let question = outbox.pending.pop().unwrap();
    let paths: Vec<&Value> = question.calls.iter().map(|c| &c.input["path"]).collect();
    assert_eq!(paths, ["/ws/a.txt", "/ws/b.txt", "/ws/.env"]);
    assert_eq!(
        lines(&question.answer_now(&Verdict::Allow)),
        [json!({"id": 1, "result": {"decision": "accept"}})]
    );
    // A patch whose files codecrew never saw cannot be judged: nothing to allow.
    let (_, mut outbox, _) = feed_outbox(
        &mut app,
        json!({"id": 2, "method": "item/fileChange/requestApproval", "params": {"itemId": "call_9"}}),
    );
    assert!(outbox.pending.pop().unwrap().calls.is_empty());

    let (_, replies, _) = feed(
        &mut app,
        json!({"id": 3, "method": "item/permissions/requestApproval", "params": {}}),
    );
    assert_eq!(
        replies,
        [json!({"id": 3, "result": {"permissions": {}, "scope": "turn"}})]
    );
    let (_, replies, _) = feed(
        &mut app,
        json!({"id": 7, "method": "item/tool/call", "params": {}}),
    );
    assert_eq!(replies[0]["error"]["code"], -32601);
}

#[test]
fn a_bash_wrapper_is_judged_by_its_script() {
    assert_eq!(script("/bin/bash -lc 'ls -la && cat a'"), "ls -la && cat a");
    assert_eq!(script("bash -c 'x'"), "x");
    assert_eq!(script("python3 -c 'x'"), "python3 -c 'x'");
    assert_eq!(script("/bin/bash -lc 'a' extra"), "/bin/bash -lc 'a' extra");
}

#[test]
fn failures_end_the_turn_as_failed_turns() {
    let mut app = server(Some("gone"));
    app.start_turn("hi", None);
    feed(&mut app, json!({"id": INITIALIZE, "result": {}}));
    let (events, _, over) = feed(
        &mut app,
        json!({"id": THREAD,
        "error": {"code": -32600, "message": "thread not found: gone"}}),
    );
    assert!(over);
    assert_eq!(
        events,
        failed("codex app-server: thread not found: gone", None)
    );
    // Retries in progress are not errors; a failed turn is, reported once.
    app.start_turn("again", None);
    let (events, _, _) = feed(
        &mut app,
        json!({"method": "error", "params": {
        "error": {"message": "Reconnecting... 1/5"}, "willRetry": true}}),
    );
    assert!(events.is_empty());
    let (events, _, _) = feed(
        &mut app,
        json!({"method": "error", "params": {"error": {"message": "HTTP 500"}}}),
    );
    assert_eq!(events, [Event::Error("HTTP 500".to_owned())]);
    let (events, _, over) = feed(
        &mut app,
        json!({"method": "turn/completed", "params": {
        "turn": {"status": "failed", "error": {"message": "HTTP 500"}}}}),
    );
    assert!(over);
    assert_eq!(events, failed("HTTP 500", None)[1..]);
}
