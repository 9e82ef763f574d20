//! The fake model server on its own (wire formats, scripting, prompt extraction on recorded
//! requests) and the real `claude`, `gemini` and `codex` CLIs run directly against it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::fake_model::{
    Api, Extracted, FakeModel, Reply, Rule, Script, chunk_text, extract_anthropic, extract_gemini,
    extract_openai, is_gemini_structured, schema_instance,
};

const HELLO: &str = "Hello! I am the fake model. How can I help?";
const FAIL: &str = "scripted failure from fake server";

fn fixture(name: &str) -> Vec<Value> {
    let path = format!(
        "{}/tests/fixtures/requests/{name}.requests.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// A minimal HTTP/1.1 client, enough to test the fake without a CLI.
// ---------------------------------------------------------------------------------------------

struct HttpAnswer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl HttpAnswer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap()
    }

    /// `(event name, data)` of each SSE event (`event:` lines optional).
    fn sse(&self) -> Vec<(Option<String>, Value)> {
        self.body
            .replace("\r\n", "\n")
            .split("\n\n")
            .filter(|block| !block.trim().is_empty())
            .map(|block| {
                let mut name = None;
                let mut data = Value::Null;
                for line in block.lines() {
                    if let Some(n) = line.strip_prefix("event: ") {
                        name = Some(n.to_string());
                    } else if let Some(d) = line.strip_prefix("data: ") {
                        data = serde_json::from_str(d).unwrap();
                    } else {
                        panic!("unexpected SSE line {line:?}");
                    }
                }
                (name, data)
            })
            .collect()
    }
}

fn send(addr: SocketAddr, method: &str, target: &str, body: Option<&Value>) -> TcpStream {
    let mut stream = TcpStream::connect(addr).unwrap();
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        stream,
        "{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nX-Api-Key: k\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    stream
}

fn http(addr: SocketAddr, method: &str, target: &str, body: Option<&Value>) -> HttpAnswer {
    let stream = send(addr, method, target, body);
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let status: u16 = line.split(' ').nth(1).unwrap().parse().unwrap();
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        let (k, v) = trimmed.split_once(':').unwrap();
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    let mut raw = Vec::new();
    if method != "HEAD" {
        reader.read_to_end(&mut raw).unwrap();
    }
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked { dechunk(&raw) } else { raw };
    HttpAnswer {
        status,
        headers,
        body: String::from_utf8(body).unwrap(),
    }
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let end = raw.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&raw[..end]).unwrap().trim(), 16).unwrap();
        raw = &raw[end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&raw[..size]);
        raw = &raw[size + 2..];
    }
}

// ---------------------------------------------------------------------------------------------
// Prompt extraction on recorded requests
// ---------------------------------------------------------------------------------------------

/// The model requests of a fixture, without HEAD probes.
fn bodies(name: &str) -> Vec<Value> {
    fixture(name)
        .into_iter()
        .filter(|r| r["method"] == "POST")
        .map(|r| r["body"].clone())
        .collect()
}

fn turn(prompt: &str, tool_result: Option<&str>) -> Extracted {
    Extracted {
        prompt: Some(prompt.to_string()),
        tool_result: tool_result.map(str::to_string),
    }
}

#[test]
fn extracts_claude_prompts() {
    // 2.1.329: context in <system-reminder> blocks, role "system" messages, the last message
    // often role "system".
    let plain = bodies("claude/a_plain_stream_json");
    assert_eq!(
        plain[0]["messages"].as_array().unwrap().last().unwrap()["role"],
        "system"
    );
    assert_eq!(extract_anthropic(&plain[0]), turn("hello", None));
    // A resumed prompt arrives as a plain string after the replayed history.
    let resumed = bodies("claude/c_turn2_resume_stream_json");
    assert_eq!(
        extract_anthropic(&resumed[0]),
        turn("what number did I ask you to remember?", None)
    );
    // The tool round trip: the tool result, and the prompt that led to it.
    let tool = bodies("claude/e_tool_bash_allowed");
    assert_eq!(extract_anthropic(&tool[0]), turn("run mkdir for me", None));
    assert_eq!(
        extract_anthropic(&tool[1]),
        turn("run mkdir for me", Some("(Bash completed with no output)"))
    );
    // stream-json input and the older 2.1.197 layout (several reminders, no system messages).
    let input = bodies("claude/h_stream_json_input");
    assert_eq!(
        extract_anthropic(&input[0]).prompt.as_deref(),
        Some("hello via stream-json input")
    );
    let old = bodies("claude-2.1.197/a_plain_stream_json");
    assert_eq!(extract_anthropic(&old[0]), turn("hello", None));
}

#[test]
fn extracts_gemini_prompts_and_recognises_the_router() {
    let plain = bodies("gemini/a_plain_stream_json");
    let (router, stream) = (&plain[0], &plain[1]);
    assert!(is_gemini_structured(router));
    assert!(!is_gemini_structured(stream));
    assert_eq!(
        schema_instance(&router["generationConfig"]["responseJsonSchema"]),
        json!({"complexity_reasoning": "fake", "complexity_score": 1})
    );
    assert_eq!(extract_gemini(router), turn("hello", None));
    assert_eq!(extract_gemini(stream), turn("hello", None));
    // Yolo router: <session_context> as a separate user entry; then the functionResponse turn.
    let yolo = bodies("gemini/e_tool_shell_yolo");
    assert_eq!(extract_gemini(&yolo[0]), turn("run echo for me", None));
    assert_eq!(extract_gemini(&yolo[1]), turn("run echo for me", None));
    assert_eq!(
        extract_gemini(&yolo[2]),
        turn(
            "run echo for me",
            Some(
                "<untrusted_context>\nOutput: fake-tool-output\nProcess Group PGID: 7872\n</untrusted_context>"
            )
        )
    );
    let resumed = bodies("gemini/c_turn2_resume_id_stream_json");
    assert_eq!(
        extract_gemini(&resumed[1]),
        turn("what number did I ask you to remember?", None)
    );
    let stdin = bodies("gemini/d_stdin_plus_p_json");
    assert_eq!(
        extract_gemini(&stdin[1]),
        turn("context from stdin\n\nhello", None)
    );
}

#[test]
fn extracts_codex_prompts() {
    let plain = bodies("codex/a_plain_json");
    assert_eq!(extract_openai(&plain[0]), turn("hello", None));
    let resumed = bodies("codex/c_turn2_resume_id_json");
    assert_eq!(
        extract_openai(&resumed[0]),
        turn("what number did I ask you to remember?", None)
    );
    let tool = bodies("codex/e_tool_exec_readonly");
    assert_eq!(extract_openai(&tool[0]), turn("run echo for me", None));
    let second = extract_openai(&tool[1]);
    assert_eq!(second.prompt.as_deref(), Some("run echo for me"));
    assert!(
        second
            .tool_result
            .unwrap()
            .ends_with("Output:\nfake-tool-output\n")
    );
}

#[test]
fn recorded_prompts_match_the_recorders_view() {
    // The recording server's own summary (`view.prompt`) agrees with our extraction wherever it
    // was not a tool round trip (where it showed the tool result instead).
    for name in [
        "claude/a_plain_stream_json",
        "claude/c_turn2_resume_stream_json",
        "claude-2.1.197/a_plain_stream_json",
        "gemini/a_plain_stream_json",
        "gemini/c_turn2_resume_id_stream_json",
        "gemini/d_stdin_plus_p_json",
        "codex/a_plain_json",
        "codex/c_turn2_resume_id_json",
    ] {
        for request in fixture(name).iter().filter(|r| r["method"] == "POST") {
            let body = &request["body"];
            let extracted = match request["view"]["api"].as_str().unwrap() {
                "anthropic" => extract_anthropic(body),
                "gemini" => extract_gemini(body),
                _ => extract_openai(body),
            };
            assert_eq!(
                extracted.prompt.as_deref(),
                request["view"]["prompt"].as_str(),
                "{name} #{}",
                request["seq"]
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Scripting
// ---------------------------------------------------------------------------------------------

#[test]
fn tool_result_rules_come_first_and_prompt_rules_never_see_tool_results() {
    let script = Script::new()
        .on_prompt("run", Reply::tool("Bash", json!({"command": "ls"})))
        .on_tool_result("needle", Reply::text("saw the needle"))
        .rule(Rule::on_any_tool_result(Reply::text("some tool")).and_prompt("other"));
    let (label, reply) = script.choose(&turn("run it", None));
    assert_eq!((label.as_str(), reply.tool_calls().len()), ("rules[0]", 1));
    let (label, reply) = script.choose(&turn("run it", Some("a needle here")));
    assert_eq!(
        (label.as_str(), reply.text_str()),
        ("rules[1]", "saw the needle")
    );
    let (label, _) = script.choose(&turn("run other", Some("hay")));
    assert_eq!(label, "rules[2]");
    // An unmatched tool result gets the default, not the rule that called the tool.
    let (label, reply) = script.choose(&turn("run it", Some("hay")));
    assert_eq!(
        (label.as_str(), reply.text_str()),
        ("default", "Default fake reply.")
    );
    assert_eq!(chunk_text("héllo wörld", 4), ["héll", "o wö", "rld"]);
}

// ---------------------------------------------------------------------------------------------
// Wire formats, over real HTTP
// ---------------------------------------------------------------------------------------------

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
