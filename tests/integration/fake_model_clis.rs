//! The fake model server on its own (wire formats, scripting, prompt extraction on recorded
//! requests) and the real `claude`, `gemini` and `codex` CLIs run directly against it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::clis::{CLI_TIMEOUT, Cli, CliEnv, CliRun, Clis, TestHome, run};
use crate::support::fake_model::{
    Api, Extracted, FakeModel, LoggedRequest, Reply, Rule, Script, chunk_text, extract_anthropic,
    extract_gemini, extract_openai, is_gemini_structured, schema_instance,
};

const HELLO: &str = "Hello! I am the fake model. How can I help?";
const TOOL_DONE: &str = "The tool printed fake-tool-output.";
const FAIL: &str = "scripted failure from fake server";

fn envelope_reply_text() -> String {
    "Sure, calling the helper tool:\n\n```json\n\
     {\"type\":\"tool_use\",\"name\":\"codecrew:help\",\"input\":{}}\n```\n"
        .to_string()
}

/// The script every real-CLI test uses; only the native tool call differs per CLI.
fn script(cli: Cli) -> Script {
    let tool = match cli {
        Cli::Claude => Reply::text("I'll run that command.").with_tool_call(
            "Bash",
            json!({"command": "echo fake-tool-output", "description": "Echo a test string"}),
        ),
        Cli::Gemini => Reply::text("Running it.").with_tool_call(
            "run_shell_command",
            json!({"command": "echo fake-tool-output", "description": "echo"}),
        ),
        Cli::Codex => Reply::text("Running it.")
            .with_tool_call("exec_command", json!({"cmd": "echo fake-tool-output"})),
        Cli::Copilot => Reply::text("Running it.").with_tool_call(
            "bash",
            json!({"command": "echo fake-tool-output", "description": "echo", "mode": "sync", "initial_wait": 10}),
        ),
    };
    Script::new()
        .rule(Rule::on_tool_result("fake-tool-output", Reply::text(TOOL_DONE)).named("tool-done"))
        .rule(Rule::on_prompt("hello", Reply::text(HELLO)).named("hello"))
        .rule(Rule::on_prompt("codecrew", Reply::text(envelope_reply_text())).named("envelope"))
        .rule(
            Rule::on_prompt(
                "remember the number",
                Reply::text("Got it: I will remember 42."),
            )
            .named("turn-1"),
        )
        .rule(
            Rule::on_prompt("what number", Reply::text("You asked me to remember 42."))
                .named("turn-2"),
        )
        .rule(Rule::on_prompt("fail please", Reply::error(400, FAIL)).named("fail"))
        .rule(Rule::on_prompt("run echo", tool).named("tool-call"))
}

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

// ---------------------------------------------------------------------------------------------
// The real CLIs
// ---------------------------------------------------------------------------------------------

/// One test's setup: the located CLIs, a fake model, a HOME and the environment.
struct Rig {
    clis: Clis,
    server: FakeModel,
    _home: TestHome,
    env: CliEnv,
    cli: Cli,
}

impl Rig {
    fn new(cli: Cli, test: &str) -> Option<Rig> {
        let clis = Clis::require(test)?;
        let server = FakeModel::start(script(cli));
        let home = TestHome::new(test);
        let env = clis.env_for(cli, &home, &server.url());
        Some(Rig {
            clis,
            server,
            _home: home,
            env,
            cli,
        })
    }

    fn run(&self, args: &[&str]) -> CliRun {
        let mut command = self.clis.command(self.cli, &self.env);
        command.args(args);
        let result = run(&mut command, CLI_TIMEOUT);
        eprintln!(
            "{} {:?}: exit {:?} in {:.2?}, {} request(s) logged so far",
            self.cli.bin_name(),
            args,
            result.code(),
            result.elapsed,
            self.server.requests().len()
        );
        result
    }
}

impl Drop for Rig {
    /// On a failed assertion, show what the CLI sent.
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("fake model request log:");
            for request in self.server.requests() {
                eprintln!("  {}", request.summary());
            }
        }
    }
}

fn claude_args(prompt: &str) -> Vec<&str> {
    vec![
        "-p",
        prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--model",
        "haiku",
    ]
}

fn gemini_args(prompt: &str) -> Vec<&str> {
    vec!["-p", prompt, "--output-format", "stream-json"]
}

fn codex_args(prompt: &str) -> Vec<&str> {
    vec!["exec", "--skip-git-repo-check", "--json", prompt]
}

/// Claude's final text (the `result` event, checked for success).
fn claude_result(run: &CliRun) -> String {
    let result = run.events("result").pop().expect("a result event");
    assert_eq!(result["is_error"], false, "{result}");
    result["result"].as_str().unwrap().to_string()
}

/// Gemini's assistant text: the concatenated `message` deltas.
fn gemini_text(run: &CliRun) -> String {
    run.events("message")
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

/// Codex's agent messages.
fn codex_messages(run: &CliRun) -> Vec<String> {
    run.events("item.completed")
        .iter()
        .filter(|e| e["item"]["type"] == "agent_message")
        .map(|e| e["item"]["text"].as_str().unwrap().to_string())
        .collect()
}

fn copilot_args(prompt: &str) -> Vec<&str> {
    vec!["-p", prompt, "--output-format", "json", "--no-auto-update"]
}

/// Copilot's whole assistant messages (`assistant.message`, text only).
fn copilot_messages(run: &CliRun) -> Vec<String> {
    run.events("assistant.message")
        .iter()
        .map(|e| e["data"]["content"].as_str().unwrap().to_string())
        .filter(|text| !text.is_empty())
        .collect()
}

/// The assistant turns replayed in a request's history, whatever the protocol.
fn replayed_assistant_text(request: &LoggedRequest) -> Vec<String> {
    let texts = |items: &Value, role: &str, parts: &str| -> Vec<String> {
        items
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == role)
            .flat_map(|m| match &m[parts] {
                Value::String(s) => vec![s.clone()],
                Value::Array(blocks) => blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str().map(str::to_string))
                    .collect(),
                _ => vec![],
            })
            .collect()
    };
    match request.api {
        Api::Anthropic => texts(&request.body["messages"], "assistant", "content"),
        Api::Gemini => texts(&request.body["contents"], "model", "parts"),
        Api::OpenAi => texts(&request.body["input"], "assistant", "content"),
        Api::Other => vec![],
    }
}

// --- Claude ---

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

// --- Gemini ---

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

// --- Codex ---

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

// --- Copilot ---

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
        "for c in claude gemini codex copilot node; do command -v $c; done",
    ]);
    env.apply(&mut which);
    let found = run(&mut which, Duration::from_secs(10));
    let lines: Vec<&str> = found.stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{}", found.stdout);
    for (line, cli) in lines.iter().zip(Cli::ALL) {
        assert_eq!(std::path::Path::new(line), clis.path(cli));
    }
}
