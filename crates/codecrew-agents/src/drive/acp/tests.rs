use super::*;
use crate::drive::json_lines::parse_lines as lines;
use crate::drive::native::Verdict;

fn feed(acp: &mut Acp, message: Value) -> (Vec<Event>, Vec<Value>, bool) {
    let (events, outbox, over) = feed_outbox(acp, message);
    assert!(outbox.pending.is_empty());
    (events, lines(&outbox.bytes), over)
}

fn feed_outbox(acp: &mut Acp, message: Value) -> (Vec<Event>, Outbox, bool) {
    let (mut events, mut outbox) = (Vec::new(), Outbox::default());
    let over = acp.read(&line(&message), &mut events, &mut outbox);
    (events, outbox, over)
}

/// What the turn that ended with `events` used.
fn usage(events: &[Event]) -> Usage {
    match events.last() {
        Some(Event::Finished {
            is_error: false,
            usage: Some(usage),
            ..
        }) => *usage,
        _ => panic!("{events:?}"),
    }
}

/// The end of a turn that failed with `why`.
fn failed(why: &str) -> [Event; 2] {
    [
        Event::Error(why.to_owned()),
        Event::Finished {
            text: None,
            is_error: true,
            usage: None,
            stop: None,
        },
    ]
}

/// An agent past the handshake, in session `S1`.
fn in_session() -> Acp {
    let mut acp = Acp::new("gemini --acp", "/ws".to_owned());
    acp.start_turn("hello");
    feed(&mut acp, json!({"jsonrpc": "2.0", "id": 0, "result": {}}));
    feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "S1"}}),
    );
    acp
}

#[test]
fn the_first_turn_shakes_hands_opens_a_session_then_prompts() {
    let mut acp = Acp::new("gemini --acp", "/ws".to_owned());
    let first = lines(&acp.start_turn("hello"));
    assert_eq!(first[0]["method"], "initialize");
    assert_eq!(first[0]["params"]["clientCapabilities"]["terminal"], false);
    let (_, replies, _) = feed(&mut acp, json!({"jsonrpc": "2.0", "id": 0, "result": {}}));
    assert_eq!(replies[0]["method"], "session/new");
    assert_eq!(replies[0]["params"]["cwd"], "/ws");
    let (events, replies, over) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 1, "result": {
            "sessionId": "S1", "models": {"currentModelId": "gemini-2.5-flash"}}}),
    );
    assert!(!over);
    assert_eq!(
        events,
        [Event::Session {
            id: "S1".to_owned(),
            model: Some("gemini-2.5-flash".to_owned()),
        }]
    );
    assert_eq!(replies[0]["method"], "session/prompt");
    assert_eq!(replies[0]["params"]["prompt"][0]["text"], "hello");
    // The next turn goes straight to the session, under a new id.
    let next = lines(&acp.start_turn("again"));
    assert_eq!(next[0]["params"]["sessionId"], "S1");
    assert_ne!(next[0]["id"], replies[0]["id"]);
}

#[test]
fn a_turn_becomes_events_and_ends_with_its_tokens() {
    let mut acp = in_session();
    let chunk = |text: &str| {
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "S1",
            "update": {"sessionUpdate": "agent_message_chunk",
                       "content": {"type": "text", "text": text}}}})
    };
    let (events, _, over) = feed(&mut acp, chunk("Plain "));
    assert!(!over);
    assert_eq!(events, [Event::Text("Plain ".to_owned())]);
    let id = Some("write_file__write_file_17_0".to_owned());
    let (events, _, _) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"update": {
            "sessionUpdate": "tool_call", "toolCallId": "write_file__write_file_17_0",
            "status": "in_progress", "title": "Writing to a.txt", "kind": "edit"}}}),
    );
    // The agent's own tool ends the message before it.
    assert_eq!(
        events,
        [
            Event::TextEnd,
            Event::NativeTool {
                id: id.clone(),
                name: "write_file".to_owned(),
                input: json!({"title": "Writing to a.txt", "locations": null}),
            }
        ]
    );
    let (events, _, _) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"update": {
            "sessionUpdate": "tool_call_update", "toolCallId": "write_file__write_file_17_0",
            "status": "completed",
            "content": [{"type": "diff", "path": "/ws/a.txt", "newText": "hi"}]}}}),
    );
    assert_eq!(
        events,
        [Event::NativeToolResult {
            id,
            output: "changed /ws/a.txt".to_owned(),
            is_error: false,
        }]
    );
    // Thoughts and command lists are not events.
    let (events, _, _) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"update": {
            "sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hm"}}}}),
    );
    assert!(events.is_empty());
    let (events, _, over) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn",
            "_meta": {"quota": {"token_count": {"input_tokens": 120, "output_tokens": 3}}}}}),
    );
    assert!(over);
    // The answer is the last message.
    assert_eq!(
        events,
        [Event::Finished {
            text: Some("Plain ".to_owned()),
            is_error: false,
            usage: Some(Usage {
                input_tokens: Some(120),
                output_tokens: Some(3),
                ..Usage::default()
            }),
            stop: None,
        }]
    );
}

#[test]
fn qwen_and_opencode_report_their_tokens_and_cost_their_own_way() {
    let usage_chunk = |input: u64, output: u64| {
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"update": {
            "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": ""},
            "_meta": {"usage": {"inputTokens": input, "outputTokens": output,
                                "thoughtTokens": 0, "cachedReadTokens": 4}}}}})
    };
    // Qwen Code: one `_meta.usage` per model call, summed over the turn.
    let mut acp = in_session();
    feed(&mut acp, usage_chunk(100, 9));
    feed(&mut acp, usage_chunk(120, 7));
    let (events, _, over) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}),
    );
    assert!(over);
    assert_eq!(
        usage(&events),
        Usage {
            input_tokens: Some(220),
            output_tokens: Some(16),
            cached_tokens: Some(8),
            cost_usd: None,
        }
    );
    // The next turn counts afresh.
    acp.start_turn("again");
    feed(&mut acp, usage_chunk(50, 1));
    let (events, _, _) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 4, "result": {"stopReason": "end_turn"}}),
    );
    assert_eq!(usage(&events).input_tokens, Some(50));
    // opencode: ACP's `usage` on the response, the session's cost in `usage_update`.
    let mut acp = in_session();
    feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"update": {
            "sessionUpdate": "usage_update", "used": 100, "size": 200000,
            "cost": {"amount": 0.000135, "currency": "USD"}}}}),
    );
    let (events, _, _) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn",
            "usage": {"inputTokens": 100, "outputTokens": 7, "totalTokens": 107}}}),
    );
    assert_eq!(
        usage(&events),
        Usage {
            input_tokens: Some(100),
            output_tokens: Some(7),
            cached_tokens: None,
            cost_usd: Some(0.000135),
        }
    );
}

#[test]
fn requests_for_what_codecrew_never_offered_are_not_answered() {
    // A file system or a terminal: codecrew offers neither.
    let mut acp = in_session();
    let (_, replies, _) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 2, "method": "fs/write_text_file", "params": {}}),
    );
    assert_eq!(replies[0]["error"]["code"], -32601);
}

#[test]
fn failures_end_the_turn_as_failed_turns() {
    let mut acp = Acp::new("gemini --acp", "/ws".to_owned());
    acp.start_turn("hi");
    feed(&mut acp, json!({"jsonrpc": "2.0", "id": 0, "result": {}}));
    let (events, _, over) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32000,
            "message": "Authentication required.", "data": {"details": "no key"}}}),
    );
    assert!(over);
    assert_eq!(
        events,
        failed("gemini --acp: Authentication required.: no key")
    );
    let mut acp = in_session();
    let (events, _, over) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "cancelled"}}),
    );
    assert!(over);
    assert_eq!(events, failed("gemini --acp cancelled the turn"));
}

#[test]
fn a_stored_session_is_loaded_and_its_replayed_history_is_not_this_turn() {
    let mut acp = Acp::new("opencode acp", "/ws".to_owned()).resuming(Some("ses_1".into()));
    acp.start_turn("and then?");
    let (_, replies, _) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 0, "result": {"agentCapabilities": {"loadSession": true}}}),
    );
    assert_eq!(replies[0]["method"], "session/load");
    assert_eq!(replies[0]["params"]["sessionId"], "ses_1");
    assert_eq!(replies[0]["params"]["cwd"], "/ws");
    // The history comes back as updates before the load's answer: none is an event.
    for update in [
        json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "remember"}}),
        json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "OLD"}}),
        json!({"sessionUpdate": "tool_call", "toolCallId": "t0", "kind": "read", "status": "completed"}),
    ] {
        let (events, replies, over) = feed(
            &mut acp,
            json!({"jsonrpc": "2.0", "method": "session/update",
                   "params": {"sessionId": "ses_1", "update": update}}),
        );
        assert!(
            events.is_empty() && replies.is_empty() && !over,
            "{events:?}"
        );
    }
    let (events, replies, _) = feed(&mut acp, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(
        events,
        [Event::Session {
            id: "ses_1".to_owned(),
            model: None
        }]
    );
    assert_eq!(replies[0]["method"], "session/prompt");
    assert_eq!(replies[0]["params"]["sessionId"], "ses_1");
    assert_eq!(replies[0]["params"]["prompt"][0]["text"], "and then?");
    assert_eq!(acp.session(), Some("ses_1"));
    // From here on, updates are the turn's.
    let (events, _, _) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"update": {
            "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "NEW"}}}}),
    );
    assert_eq!(events, [Event::Text("NEW".to_owned())]);
}

#[test]
fn an_agent_that_cannot_load_a_session_fails_the_turn_with_why() {
    let mut acp = Acp::new("gemini --acp", "/ws".to_owned()).resuming(Some("s".into()));
    acp.start_turn("hi");
    let (events, replies, over) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 0, "result": {"agentCapabilities": {}}}),
    );
    assert!(over && replies.is_empty());
    assert!(
        matches!(&events[0], Event::Error(why) if why.contains("offers no session/load")),
        "{events:?}"
    );
    // A failed load ends the turn too, and the replay stops counting as history.
    let mut acp = Acp::new("opencode acp", "/ws".to_owned()).resuming(Some("gone".into()));
    acp.start_turn("hi");
    feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 0, "result": {"agentCapabilities": {"loadSession": true}}}),
    );
    let (events, _, over) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Session not found"}}),
    );
    assert!(over);
    assert_eq!(events, failed("opencode acp: Session not found"));
}

#[test]
fn a_loaded_session_s_earlier_cost_is_not_this_process_s() {
    let mut acp = Acp::new("opencode acp", "/ws".to_owned()).resuming(Some("ses_1".into()));
    acp.start_turn("go on");
    feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 0, "result": {"agentCapabilities": {"loadSession": true}}}),
    );
    feed(&mut acp, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    let cost = |amount: f64| {
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"update": {
            "sessionUpdate": "usage_update", "used": 1, "size": 2,
            "cost": {"amount": amount, "currency": "USD"}}}})
    };
    let answer = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": "end_turn",
            "usage": {"inputTokens": 10, "outputTokens": 1}}})
    };
    // The session had cost 0.5 before; this turn's share of 0.7 is not known.
    feed(&mut acp, cost(0.7));
    let (events, _, _) = feed(&mut acp, answer(3));
    assert_eq!(usage(&events).cost_usd, None);
    // From then on, what this process spent.
    acp.start_turn("more");
    feed(&mut acp, cost(0.9));
    let (events, _, _) = feed(&mut acp, answer(4));
    let spent = usage(&events).cost_usd.unwrap();
    assert!((spent - 0.2).abs() < 1e-9, "{spent}");
}

#[test]
fn a_model_that_keeps_reaching_for_a_refused_tool_ends_its_turn() {
    let mut acp = Acp::new("copilot --acp", "/ws".to_owned()).speaking(Dialect {
        refusal_ends_turn: true,
        ..Dialect::default()
    });
    acp.start_turn("hello");
    feed(&mut acp, json!({"jsonrpc": "2.0", "id": 0, "result": {}}));
    feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "S1"}}),
    );
    let mut prompts = 0;
    for id in 3.. {
        // Each time: a question about an edit, refused, and the agent's turn ends.
        let (_, outbox, _) = feed_outbox(
            &mut acp,
            json!({"jsonrpc": "2.0", "id": 0, "method": "session/request_permission",
                   "params": {"toolCall": {"toolCallId": "t", "kind": "edit",
                              "locations": [{"path": "/ws/.env"}]},
                              "options": [{"optionId": "no", "kind": "reject_once"}]}}),
        );
        for pending in outbox.pending {
            pending.answer_now(&Verdict::Deny("protected".into()));
        }
        let (events, replies, over) = feed(
            &mut acp,
            json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": "end_turn"}}),
        );
        if over {
            assert!(
                matches!(
                    events[..],
                    [Event::Finished {
                        is_error: false,
                        ..
                    }]
                ),
                "{events:?}"
            );
            break;
        }
        assert_eq!(replies[0]["method"], "session/prompt");
        prompts += 1;
    }
    assert_eq!(prompts, MAX_REFUSAL_PROMPTS);
}
