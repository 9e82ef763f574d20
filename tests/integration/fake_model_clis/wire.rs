//! The wire formats, over real HTTP.

use super::*;

#[test]
fn unknown_paths_get_200_for_get_and_head_and_404_otherwise() {
    let server = FakeModel::start(Script::new());
    let get = http(server.addr(), "GET", "/api/hello", None);
    assert_eq!((get.status, get.json()), (200, json!({})));
    assert_eq!(http(server.addr(), "HEAD", "/", None).status, 200);
    let post = http(server.addr(), "POST", "/v2/nothing?x=1", Some(&json!({})));
    assert_eq!(post.status, 404);
    assert!(
        post.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/v2/nothing")
    );
    let log = server.requests();
    assert_eq!(log.len(), 3);
    assert!(
        log.iter()
            .all(|r| r.api == Api::Other && r.answered_by == "unknown-path")
    );
    assert_eq!(log[2].query.as_deref(), Some("x=1"));
    assert!(server.model_requests().is_empty());
}

#[test]
fn anthropic_stream_has_the_exact_event_sequence() {
    let server = FakeModel::start(
        Script::new().on_prompt(
            "hello",
            Reply::text(HELLO)
                .with_thinking("Let me think")
                .with_tool_call("Bash", json!({"command": "echo hi"})),
        ),
    );
    let body = bodies("claude/a_plain_stream_json").remove(0);
    let answer = http(server.addr(), "POST", "/v1/messages?beta=true", Some(&body));
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    assert!(answer.header("request-id").unwrap().starts_with("req_"));
    let events = answer.sse();
    for (name, data) in &events {
        assert_eq!(
            name.as_deref(),
            data["type"].as_str(),
            "event name == data.type"
        );
    }
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_deref().unwrap()).collect();
    let text_deltas = chunk_text(HELLO, 12).len();
    let mut expected = vec!["message_start", "ping"];
    expected.extend([
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
    ]);
    expected.push("content_block_stop");
    expected.push("content_block_start");
    expected.extend(std::iter::repeat_n("content_block_delta", text_deltas));
    expected.push("content_block_stop");
    expected.extend([
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    ]);
    expected.extend(["message_delta", "message_stop"]);
    assert_eq!(names, expected);
    let data: Vec<&Value> = events.iter().map(|(_, d)| d).collect();
    assert_eq!(data[0]["message"]["model"], "claude-haiku-5-5");
    assert_eq!(data[2]["content_block"]["type"], "thinking");
    assert_eq!(data[4]["delta"]["type"], "signature_delta");
    let text: String = data
        .iter()
        .filter(|d| d["delta"]["type"] == "text_delta")
        .map(|d| d["delta"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, HELLO);
    let tool_start = data
        .iter()
        .find(|d| d["content_block"]["type"] == "tool_use")
        .unwrap();
    assert_eq!(tool_start["index"], 2);
    assert!(
        tool_start["content_block"]["id"]
            .as_str()
            .unwrap()
            .starts_with("toolu_fake_")
    );
    let partial = data
        .iter()
        .find(|d| d["delta"]["type"] == "input_json_delta")
        .unwrap();
    let input: Value =
        serde_json::from_str(partial["delta"]["partial_json"].as_str().unwrap()).unwrap();
    assert_eq!(input, json!({"command": "echo hi"}));
    let delta = data[data.len() - 2];
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");

    let logged = &server.requests()[0];
    assert_eq!(
        (logged.api, logged.prompt.as_deref()),
        (Api::Anthropic, Some("hello"))
    );
    assert_eq!(logged.query.as_deref(), Some("beta=true"));
    assert_eq!(logged.header("X-API-KEY"), Some("k"));
    assert_eq!(logged.answered_by, "rules[0]");
}

#[test]
fn gemini_stream_is_data_only_crlf_and_the_router_gets_schema_json() {
    let server = FakeModel::start(
        Script::new()
            .on_prompt(
                "hello",
                Reply::text(HELLO).with_tool_call("list_directory", json!({"dir_path": "."})),
            )
            .default_reply(Reply::tool("never", json!({}))),
    );
    let requests = bodies("gemini/a_plain_stream_json");
    let router = http(
        server.addr(),
        "POST",
        "/v1beta/models/gemini-3.5-flash-lite:generateContent",
        Some(&requests[0]),
    );
    assert_eq!(router.status, 200);
    let parts = &router.json()["candidates"][0]["content"]["parts"];
    assert_eq!(
        parts.as_array().unwrap().len(),
        1,
        "never a tool call: {parts}"
    );
    let routed: Value = serde_json::from_str(parts[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        routed,
        json!({"complexity_reasoning": "fake", "complexity_score": 1})
    );

    let stream = http(
        server.addr(),
        "POST",
        "/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse",
        Some(&requests[1]),
    );
    assert_eq!(stream.header("content-type"), Some("text/event-stream"));
    assert!(stream.body.starts_with("data: {"));
    assert!(stream.body.ends_with("}\r\n\r\n"));
    assert!(!stream.body.contains("event:"));
    let chunks: Vec<Value> = stream
        .sse()
        .into_iter()
        .map(|(name, data)| {
            assert_eq!(name, None);
            data
        })
        .collect();
    let text: String = chunks
        .iter()
        .filter_map(|c| c["candidates"][0]["content"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(text, HELLO);
    let last = chunks.last().unwrap();
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert_eq!(
        last["candidates"][0]["content"]["parts"][0]["functionCall"],
        json!({"name": "list_directory", "args": {"dir_path": "."}})
    );
    assert!(last["usageMetadata"]["totalTokenCount"].is_u64());
    assert!(
        chunks[..chunks.len() - 1]
            .iter()
            .all(|c| c.get("usageMetadata").is_none()
                && c["candidates"][0].get("finishReason").is_none())
    );
    assert_eq!(last["modelVersion"], "gemini-3.8-flash");

    let log = server.requests();
    assert_eq!(log[0].answered_by, "structured-output");
    assert!(!log[0].is_model_turn());
    assert_eq!(log[1].model.as_deref(), Some("gemini-3.8-flash"));
    assert_eq!(log[1].query.as_deref(), Some("alt=sse"));
    assert_eq!(server.model_requests().len(), 1);
}

#[test]
fn openai_stream_numbers_its_events_and_ends_with_response_completed() {
    let server = FakeModel::start(Script::new().chunk_size(5).on_prompt(
        "hello",
        Reply::text(HELLO).with_tool_call("exec_command", json!({"cmd": "echo hi"})),
    ));
    let body = bodies("codex/a_plain_json").remove(0);
    let answer = http(server.addr(), "POST", "/v1/responses", Some(&body));
    let events = answer.sse();
    for (seq, (name, data)) in events.iter().enumerate() {
        assert_eq!(name.as_deref(), data["type"].as_str());
        assert_eq!(data["sequence_number"], seq);
    }
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_deref().unwrap()).collect();
    assert_eq!(
        &names[..3],
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added"
        ]
    );
    assert_eq!(names.last(), Some(&"response.completed"));
    let deltas: Vec<&str> = events
        .iter()
        .filter(|(n, _)| n.as_deref() == Some("response.output_text.delta"))
        .map(|(_, d)| d["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas.concat(), HELLO);
    assert_eq!(deltas[0].chars().count(), 5);
    let completed = &events.last().unwrap().1["response"];
    assert_eq!(completed["status"], "completed");
    let call = &completed["output"][1];
    assert_eq!(call["type"], "function_call");
    assert_eq!(call["arguments"], json!({"cmd": "echo hi"}).to_string());
    assert!(call["call_id"].as_str().unwrap().starts_with("call_fake_"));
    assert!(completed["usage"]["total_tokens"].is_u64());
}

#[test]
fn errors_use_each_protocols_body() {
    let server = FakeModel::start(Script::new().default_reply(Reply::error(400, FAIL)));
    let claude = http(
        server.addr(),
        "POST",
        "/v1/messages?beta=true",
        Some(&json!({"stream": true})),
    );
    assert_eq!(claude.status, 400);
    assert_eq!(
        claude.json(),
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": FAIL}})
    );
    let gemini = http(
        server.addr(),
        "POST",
        "/v1beta/models/m:streamGenerateContent?alt=sse",
        Some(&json!({"contents": []})),
    );
    assert_eq!(
        (gemini.status, gemini.json()),
        (
            400,
            json!({"error": {"code": 400, "message": FAIL, "status": "INVALID_ARGUMENT"}})
        )
    );
    let openai = http(
        server.addr(),
        "POST",
        "/v1/responses",
        Some(&json!({"input": []})),
    );
    assert_eq!(
        (openai.status, openai.json()),
        (
            400,
            json!({"error": {"type": "invalid_request_error", "message": FAIL, "code": null}})
        )
    );
    server.set_script(Script::new().default_reply(Reply::error(529, "Overloaded (scripted)")));
    let overloaded = http(server.addr(), "POST", "/v1/messages", Some(&json!({})));
    assert_eq!(overloaded.status, 529);
    assert_eq!(overloaded.json()["error"]["type"], "overloaded_error");
}

#[test]
fn hang_accepts_and_never_answers_and_delay_waits() {
    let server = FakeModel::start(
        Script::new()
            .on_prompt("hang", Reply::hang())
            .on_prompt("slow", Reply::text("late").with_delay_ms(300)),
    );
    let body =
        |prompt: &str| json!({"stream": false, "messages": [{"role": "user", "content": prompt}]});
    let mut stream = send(
        server.addr(),
        "POST",
        "/v1/messages",
        Some(&body("please hang")),
    );
    stream
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut byte = [0u8; 1];
    let err = stream.read(&mut byte).unwrap_err();
    assert!(matches!(
        err.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    ));
    let logged = server.wait_for_model_requests(1, Duration::from_secs(5));
    assert_eq!(logged[0].prompt.as_deref(), Some("please hang"));

    let start = Instant::now();
    let slow = http(
        server.addr(),
        "POST",
        "/v1/messages",
        Some(&body("slow one")),
    );
    assert!(start.elapsed() >= Duration::from_millis(300));
    assert_eq!(slow.json()["content"][0]["text"], "late");

    // Dropping the server ends the hanging request at once.
    let start = Instant::now();
    drop(server);
    assert!(start.elapsed() < Duration::from_secs(2));
    let mut rest = Vec::new();
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    assert_eq!(
        stream.read_to_end(&mut rest).unwrap(),
        0,
        "connection closed, no answer"
    );
}
