use super::*;
use crate::drive::json_lines::parse_lines as lines;
use crate::drive::native::Verdict;

fn feed(acp: &mut Acp, message: Value) -> (Vec<Value>, Vec<Value>, bool) {
    let (decoded, outbox, over) = feed_outbox(acp, message);
    assert!(outbox.pending.is_empty());
    (decoded, lines(&outbox.bytes), over)
}

fn feed_outbox(acp: &mut Acp, message: Value) -> (Vec<Value>, Outbox, bool) {
    let (mut decoded, mut outbox) = (Vec::new(), Outbox::default());
    let over = acp.read(&line(&message), &mut decoded, &mut outbox);
    (lines(&decoded), outbox, over)
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
    let (decoded, replies, over) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 1, "result": {
            "sessionId": "S1", "models": {"currentModelId": "gemini-2.5-flash"}}}),
    );
    assert!(!over);
    assert_eq!(
        decoded,
        [json!({"type": "init", "session_id": "S1", "model": "gemini-2.5-flash"})]
    );
    assert_eq!(replies[0]["method"], "session/prompt");
    assert_eq!(replies[0]["params"]["prompt"][0]["text"], "hello");
    // The next turn goes straight to the session, under a new id.
    let next = lines(&acp.start_turn("again"));
    assert_eq!(next[0]["params"]["sessionId"], "S1");
    assert_ne!(next[0]["id"], replies[0]["id"]);
}

#[test]
fn a_turn_becomes_stream_json_events_and_ends_with_its_tokens() {
    let mut acp = in_session();
    let chunk = |text: &str| {
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "S1",
            "update": {"sessionUpdate": "agent_message_chunk",
                       "content": {"type": "text", "text": text}}}})
    };
    let (decoded, _, over) = feed(&mut acp, chunk("Plain "));
    assert!(!over);
    assert_eq!(decoded[0]["content"], "Plain ");
    assert_eq!(decoded[0]["role"], "assistant");
    let (decoded, _, _) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"update": {
            "sessionUpdate": "tool_call", "toolCallId": "write_file__write_file_17_0",
            "status": "in_progress", "title": "Writing to a.txt", "kind": "edit"}}}),
    );
    assert_eq!(decoded[0]["type"], "tool_use");
    assert_eq!(decoded[0]["tool_name"], "write_file");
    let (decoded, _, _) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"update": {
            "sessionUpdate": "tool_call_update", "toolCallId": "write_file__write_file_17_0",
            "status": "completed",
            "content": [{"type": "diff", "path": "/ws/a.txt", "newText": "hi"}]}}}),
    );
    assert_eq!(decoded[0]["type"], "tool_result");
    assert_eq!(decoded[0]["status"], "success");
    assert_eq!(decoded[0]["output"], "changed /ws/a.txt");
    // Thoughts and command lists are not events.
    let (decoded, _, _) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"update": {
            "sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hm"}}}}),
    );
    assert!(decoded.is_empty());
    let (decoded, _, over) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn",
            "_meta": {"quota": {"token_count": {"input_tokens": 120, "output_tokens": 3}}}}}),
    );
    assert!(over);
    assert_eq!(decoded[0]["type"], "result");
    assert_eq!(decoded[0]["status"], "success");
    assert_eq!(decoded[0]["stats"]["input_tokens"], 120);
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
    let (decoded, _, over) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}),
    );
    assert!(over);
    assert_eq!(decoded[0]["stats"]["input_tokens"], 220);
    assert_eq!(decoded[0]["stats"]["output_tokens"], 16);
    assert_eq!(decoded[0]["stats"]["cached"], 8);
    // The next turn counts afresh.
    acp.start_turn("again");
    feed(&mut acp, usage_chunk(50, 1));
    let (decoded, _, _) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 4, "result": {"stopReason": "end_turn"}}),
    );
    assert_eq!(decoded[0]["stats"]["input_tokens"], 50);
    // opencode: ACP's `usage` on the response, the session's cost in `usage_update`.
    let mut acp = in_session();
    feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"update": {
            "sessionUpdate": "usage_update", "used": 100, "size": 200000,
            "cost": {"amount": 0.000135, "currency": "USD"}}}}),
    );
    let (decoded, _, _) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn",
            "usage": {"inputTokens": 100, "outputTokens": 7, "totalTokens": 107}}}),
    );
    assert_eq!(decoded[0]["stats"]["input_tokens"], 100);
    assert_eq!(decoded[0]["stats"]["output_tokens"], 7);
    assert_eq!(decoded[0]["stats"]["total_cost_usd"], 0.000135);
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
fn failures_end_the_turn_as_failed_results() {
    let mut acp = Acp::new("gemini --acp", "/ws".to_owned());
    acp.start_turn("hi");
    feed(&mut acp, json!({"jsonrpc": "2.0", "id": 0, "result": {}}));
    let (decoded, _, over) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32000,
            "message": "Authentication required.", "data": {"details": "no key"}}}),
    );
    assert!(over);
    assert_eq!(decoded[0]["status"], "error");
    assert_eq!(
        decoded[0]["error"]["message"],
        "gemini --acp: Authentication required.: no key"
    );
    let mut acp = in_session();
    let (decoded, _, over) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "cancelled"}}),
    );
    assert!(over);
    assert_eq!(decoded[0]["status"], "error");
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
        let (decoded, replies, over) = feed(
            &mut acp,
            json!({"jsonrpc": "2.0", "method": "session/update",
                   "params": {"sessionId": "ses_1", "update": update}}),
        );
        assert!(
            decoded.is_empty() && replies.is_empty() && !over,
            "{decoded:?}"
        );
    }
    let (decoded, replies, _) = feed(&mut acp, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(decoded, [json!({"type": "init", "session_id": "ses_1"})]);
    assert_eq!(replies[0]["method"], "session/prompt");
    assert_eq!(replies[0]["params"]["sessionId"], "ses_1");
    assert_eq!(replies[0]["params"]["prompt"][0]["text"], "and then?");
    assert_eq!(acp.session(), Some("ses_1"));
    // From here on, updates are the turn's.
    let (decoded, _, _) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"update": {
            "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "NEW"}}}}),
    );
    assert_eq!(decoded[0]["content"], "NEW");
}

#[test]
fn an_agent_that_cannot_load_a_session_fails_the_turn_with_why() {
    let mut acp = Acp::new("gemini --acp", "/ws".to_owned()).resuming(Some("s".into()));
    acp.start_turn("hi");
    let (decoded, replies, over) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 0, "result": {"agentCapabilities": {}}}),
    );
    assert!(over && replies.is_empty());
    assert!(
        decoded[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("offers no session/load"),
        "{decoded:?}"
    );
    // A failed load ends the turn too, and the replay stops counting as history.
    let mut acp = Acp::new("opencode acp", "/ws".to_owned()).resuming(Some("gone".into()));
    acp.start_turn("hi");
    feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 0, "result": {"agentCapabilities": {"loadSession": true}}}),
    );
    let (decoded, _, over) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Session not found"}}),
    );
    assert!(over);
    assert_eq!(
        decoded[0]["error"]["message"],
        "opencode acp: Session not found"
    );
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
    // The session had cost 0.5 before; this turn's share of 0.7 is not known.
    feed(&mut acp, cost(0.7));
    let (decoded, _, _) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}),
    );
    assert!(
        decoded[0]["stats"].get("total_cost_usd").is_none(),
        "{decoded:?}"
    );
    // From then on, what this process spent.
    acp.start_turn("more");
    feed(&mut acp, cost(0.9));
    let (decoded, _, _) = feed(
        &mut acp,
        json!({"jsonrpc": "2.0", "id": 4, "result": {"stopReason": "end_turn"}}),
    );
    let spent = decoded[0]["stats"]["total_cost_usd"].as_f64().unwrap();
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
        let (decoded, replies, over) = feed(
            &mut acp,
            json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": "end_turn"}}),
        );
        if over {
            assert_eq!(decoded[0]["status"], "success");
            break;
        }
        assert_eq!(replies[0]["method"], "session/prompt");
        prompts += 1;
    }
    assert_eq!(prompts, MAX_REFUSAL_PROMPTS);
}
