//! A scripted fake model server that speaks the three wire protocols the real CLIs use:
//! Anthropic Messages (Claude Code, and Copilot CLI offline), Gemini `generateContent`
//! (Gemini CLI) and OpenAI Responses (Codex). The end-to-end tests point each real CLI at it.
//!
//! # Choosing the answer
//!
//! The CLIs run in parallel and re-send requests (Claude re-sends a 400 five times, Gemini asks
//! a router first), so the answer is chosen from the **content** of each request, never from the
//! order of arrival. Each request is reduced to an [`Extracted`]: the latest user prompt and, when
//! the last user turn carries tool results, their text. A [`Script`] then picks a [`Rule`]:
//!
//! 1. if the request carries a tool result, the tool-result rules ([`Rule::on_tool_result`]) in
//!    order; prompt rules are **not** consulted, so a rule that calls a tool cannot fire again on
//!    its own result and loop;
//! 2. otherwise the prompt rules ([`Rule::on_prompt`]) in order;
//! 3. otherwise the script's default reply.
//!
//! Structured-output requests (Gemini's `auto` router: `generationConfig.responseMimeType ==
//! "application/json"` or a `responseJsonSchema`) are answered with a JSON instance of the schema
//! (`{"complexity_reasoning":"fake","complexity_score":1}` for the router), never from the script.
//!
//! # Threading
//!
//! [`FakeModel::start`] is a plain (non-async) function: the server runs on a dedicated thread
//! with its own current-thread tokio runtime. Blocking test code (`std::process::Command`, which
//! spawns codecrew, which spawns the CLIs) can therefore wait on child processes while the server
//! keeps answering, and the server works the same from a `#[test]` or a `#[tokio::test]`.
//! Dropping the [`FakeModel`] stops that runtime, which also ends requests that were scripted to
//! hang.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::{SocketAddr, TcpListener as StdTcpListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// The default size, in characters, of the text pieces a reply is streamed in.
pub const DEFAULT_CHUNK_SIZE: usize = 12;

/// The text answered when no rule matches and no other default was set.
pub const DEFAULT_REPLY_TEXT: &str = "Default fake reply.";

// ---------------------------------------------------------------------------------------------
// Script
// ---------------------------------------------------------------------------------------------

/// A native tool call the fake model asks the CLI to run (Anthropic `tool_use`, Gemini
/// `functionCall`, OpenAI `function_call`). The names differ per CLI: `Bash` for Claude,
/// `run_shell_command` / `list_directory` for Gemini, `exec_command` for Codex.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    pub name: String,
    pub input: Value,
}

/// An HTTP error answer: the status and the message, wrapped in each protocol's error body.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    pub status: u16,
    pub message: String,
}

/// What the fake model answers to one request.
///
/// Built with [`Reply::text`], [`Reply::tool`], [`Reply::error`] or [`Reply::hang`], refined with
/// the `with_*` methods.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    text: String,
    thinking: Option<String>,
    tool_calls: Vec<ToolCall>,
    error: Option<ApiError>,
    hang: bool,
    delay: Duration,
    chunk_size: Option<usize>,
}

impl Reply {
    /// A plain text answer, streamed in chunks.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply {
            text: text.into(),
            thinking: None,
            tool_calls: Vec::new(),
            error: None,
            hang: false,
            delay: Duration::ZERO,
            chunk_size: None,
        }
    }

    /// A native tool call with no text before it.
    pub fn tool(name: impl Into<String>, input: Value) -> Reply {
        Reply::text("").with_tool_call(name, input)
    }

    /// An HTTP error with this status and message (in the protocol's own error body).
    pub fn error(status: u16, message: impl Into<String>) -> Reply {
        Reply {
            error: Some(ApiError {
                status,
                message: message.into(),
            }),
            ..Reply::text("")
        }
    }

    /// Accept the request and never answer it (until the server is dropped).
    pub fn hang() -> Reply {
        Reply {
            hang: true,
            ..Reply::text("")
        }
    }

    /// A thinking block streamed before the text.
    pub fn with_thinking(mut self, thinking: impl Into<String>) -> Reply {
        self.thinking = Some(thinking.into());
        self
    }

    /// A native tool call after the text (may be repeated for several calls).
    pub fn with_tool_call(mut self, name: impl Into<String>, input: Value) -> Reply {
        self.tool_calls.push(ToolCall {
            name: name.into(),
            input,
        });
        self
    }

    /// Wait this long before answering (an error, or the start of the stream).
    pub fn with_delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// Shorthand for [`Reply::with_delay`] in milliseconds.
    pub fn with_delay_ms(self, ms: u64) -> Reply {
        self.with_delay(Duration::from_millis(ms))
    }

    /// Stream the text in pieces of this many characters (overrides the script's size).
    pub fn with_chunk_size(mut self, chars: usize) -> Reply {
        self.chunk_size = Some(chars.max(1));
        self
    }

    pub fn text_str(&self) -> &str {
        &self.text
    }

    pub fn tool_calls(&self) -> &[ToolCall] {
        &self.tool_calls
    }
}

/// One scripted answer and the condition that selects it. See the module docs for the order.
#[derive(Clone, Debug)]
pub struct Rule {
    name: Option<String>,
    on_tool_result: bool,
    prompt_contains: Option<String>,
    tool_result_contains: Option<String>,
    reply: Reply,
}

impl Rule {
    /// Matches a request **without** a tool result whose latest user prompt contains `needle`
    /// (an empty needle matches every such request).
    pub fn on_prompt(needle: impl Into<String>, reply: Reply) -> Rule {
        Rule {
            name: None,
            on_tool_result: false,
            prompt_contains: Some(needle.into()),
            tool_result_contains: None,
            reply,
        }
    }

    /// Matches a request whose last user turn carries a tool result containing `needle`.
    pub fn on_tool_result(needle: impl Into<String>, reply: Reply) -> Rule {
        Rule {
            name: None,
            on_tool_result: true,
            prompt_contains: None,
            tool_result_contains: Some(needle.into()),
            reply,
        }
    }

    /// Matches every request that carries a tool result.
    pub fn on_any_tool_result(reply: Reply) -> Rule {
        Rule {
            tool_result_contains: None,
            ..Rule::on_tool_result("", reply)
        }
    }

    /// Also require the latest user prompt to contain `needle` (useful on tool-result rules:
    /// the prompt is then the one that led to the tool call).
    pub fn and_prompt(mut self, needle: impl Into<String>) -> Rule {
        self.prompt_contains = Some(needle.into());
        self
    }

    /// The label recorded in [`LoggedRequest::answered_by`] (default `rules[<index>]`).
    pub fn named(mut self, name: impl Into<String>) -> Rule {
        self.name = Some(name.into());
        self
    }

    fn matches(&self, turn: &Extracted) -> bool {
        if self.on_tool_result != turn.tool_result.is_some() {
            return false;
        }
        let contains = |hay: &Option<String>, needle: &Option<String>| match needle {
            None => true,
            Some(needle) => hay.as_deref().unwrap_or("").contains(needle.as_str()),
        };
        contains(&turn.prompt, &self.prompt_contains)
            && contains(&turn.tool_result, &self.tool_result_contains)
    }
}

/// The rules of a fake model, a default reply and a default chunk size.
#[derive(Clone, Debug)]
pub struct Script {
    rules: Vec<Rule>,
    default: Reply,
    chunk_size: usize,
}

impl Default for Script {
    fn default() -> Script {
        Script::new()
    }
}

impl Script {
    /// No rules; the default reply is [`DEFAULT_REPLY_TEXT`], chunks of [`DEFAULT_CHUNK_SIZE`].
    pub fn new() -> Script {
        Script {
            rules: Vec::new(),
            default: Reply::text(DEFAULT_REPLY_TEXT),
            chunk_size: DEFAULT_CHUNK_SIZE,
        }
    }

    pub fn rule(mut self, rule: Rule) -> Script {
        self.rules.push(rule);
        self
    }

    /// Shorthand for `.rule(Rule::on_prompt(needle, reply))`.
    pub fn on_prompt(self, needle: impl Into<String>, reply: Reply) -> Script {
        self.rule(Rule::on_prompt(needle, reply))
    }

    /// Shorthand for `.rule(Rule::on_tool_result(needle, reply))`.
    pub fn on_tool_result(self, needle: impl Into<String>, reply: Reply) -> Script {
        self.rule(Rule::on_tool_result(needle, reply))
    }

    /// The answer when no rule matches (also for unmatched tool results).
    pub fn default_reply(mut self, reply: Reply) -> Script {
        self.default = reply;
        self
    }

    pub fn chunk_size(mut self, chars: usize) -> Script {
        self.chunk_size = chars.max(1);
        self
    }

    /// The reply for a request, with the label of what chose it.
    pub fn choose(&self, turn: &Extracted) -> (String, Reply) {
        // Tool-result rules and prompt rules are disjoint by `Rule::matches`; walking the tool
        // result rules first keeps the documented order explicit.
        let phases = [true, false];
        for phase in phases {
            for (index, rule) in self.rules.iter().enumerate() {
                if rule.on_tool_result == phase && rule.matches(turn) {
                    let label = rule
                        .name
                        .clone()
                        .unwrap_or_else(|| format!("rules[{index}]"));
                    return (label, self.with_chunking(&rule.reply));
                }
            }
        }
        ("default".to_string(), self.with_chunking(&self.default))
    }

    fn with_chunking(&self, reply: &Reply) -> Reply {
        let mut reply = reply.clone();
        reply.chunk_size.get_or_insert(self.chunk_size);
        reply
    }
}

// ---------------------------------------------------------------------------------------------
// Prompt extraction
// ---------------------------------------------------------------------------------------------

/// What the fake reads out of a model request to choose its answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extracted {
    /// The latest user prompt: the text of the most recent user turn that has text of its own,
    /// without the context the CLI injects (`<system-reminder>`, `<session_context>`,
    /// `<environment_context>` blocks). On a tool round trip this is the prompt that led to it.
    pub prompt: Option<String>,
    /// The text of the tool results carried by the last user turn (`None` when there are none).
    pub tool_result: Option<String>,
}

fn join_non_empty(pieces: Vec<String>) -> Option<String> {
    let pieces: Vec<String> = pieces.into_iter().filter(|p| !p.is_empty()).collect();
    if pieces.is_empty() {
        None
    } else {
        Some(pieces.join("\n"))
    }
}

fn starts_with_any(text: &str, prefixes: &[&str]) -> bool {
    let text = text.trim_start();
    prefixes.iter().any(|p| text.starts_with(p))
}

const CLAUDE_CONTEXT: &[&str] = &["<system-reminder>"];
const GEMINI_CONTEXT: &[&str] = &["<session_context>"];
const CODEX_CONTEXT: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
];

/// Anthropic Messages: the last `role:"user"` message (roles `system` and `assistant` are
/// skipped); its `text` blocks not starting with `<system-reminder>` are the prompt, its
/// `tool_result` blocks the tool result. `content` may be a string or an array of blocks.
pub fn extract_anthropic(body: &Value) -> Extracted {
    let empty = Vec::new();
    let users: Vec<&Value> = body["messages"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter(|m| m["role"] == "user")
        .collect();
    let prompt_of = |content: &Value| -> Option<String> {
        match content {
            Value::String(s) if !starts_with_any(s, CLAUDE_CONTEXT) => Some(s.clone()),
            Value::Array(blocks) => join_non_empty(
                blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .filter(|t| !starts_with_any(t, CLAUDE_CONTEXT))
                    .map(str::to_string)
                    .collect(),
            ),
            _ => None,
        }
    };
    let tool_result = users.last().and_then(|last| {
        let blocks = last["content"].as_array()?;
        let results: Vec<&Value> = blocks
            .iter()
            .filter(|b| b["type"] == "tool_result")
            .collect();
        if results.is_empty() {
            return None;
        }
        Some(
            results
                .iter()
                .map(|b| anthropic_block_text(&b["content"]))
                .collect::<Vec<_>>()
                .join("\n"),
        )
    });
    let prompt = users.iter().rev().find_map(|m| prompt_of(&m["content"]));
    Extracted {
        prompt,
        tool_result,
    }
}

fn anthropic_block_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|i| i["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Gemini: the last `contents` entry with role `user` (a missing role counts as user); its
/// `text` parts not starting with `<session_context>` are the prompt (thoughts are skipped), its
/// `functionResponse` parts the tool result (`response.output`, else `response.error`, else the
/// response as JSON).
pub fn extract_gemini(body: &Value) -> Extracted {
    let empty = Vec::new();
    let users: Vec<&Value> = body["contents"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter(|c| c["role"].as_str().unwrap_or("user") == "user")
        .collect();
    let parts_of = |c: &Value| c["parts"].as_array().cloned().unwrap_or_default();
    let prompt_of = |c: &Value| -> Option<String> {
        join_non_empty(
            parts_of(c)
                .iter()
                .filter(|p| p["thought"] != true)
                .filter_map(|p| p["text"].as_str())
                .filter(|t| !starts_with_any(t, GEMINI_CONTEXT))
                .map(str::to_string)
                .collect(),
        )
    };
    let tool_result = users.last().and_then(|last| {
        let results: Vec<String> = parts_of(last)
            .iter()
            .filter_map(|p| p.get("functionResponse"))
            .map(|fr| {
                let response = &fr["response"];
                response["output"]
                    .as_str()
                    .or_else(|| response["error"].as_str())
                    .map(str::to_string)
                    .unwrap_or_else(|| response.to_string())
            })
            .collect();
        (!results.is_empty()).then(|| results.join("\n"))
    });
    let prompt = users.iter().rev().find_map(|c| prompt_of(c));
    Extracted {
        prompt,
        tool_result,
    }
}

/// OpenAI Responses: the last `role:"user"` message's `input_text` parts (skipping Codex's
/// `<environment_context>` and instruction messages) are the prompt; the `function_call_output`
/// items at the end of `input` (after the last message) are the tool result.
pub fn extract_openai(body: &Value) -> Extracted {
    if let Some(s) = body["input"].as_str() {
        return Extracted {
            prompt: Some(s.to_string()),
            tool_result: None,
        };
    }
    let empty = Vec::new();
    let items = body["input"].as_array().unwrap_or(&empty);
    let is_message =
        |i: &Value| i["type"] == "message" || (i["type"].is_null() && i["role"].is_string());
    let mut outputs = Vec::new();
    for item in items.iter().rev() {
        if is_message(item) {
            break;
        }
        if matches!(
            item["type"].as_str(),
            Some("function_call_output" | "custom_tool_call_output")
        ) {
            outputs.push(openai_output_text(&item["output"]));
        }
    }
    outputs.reverse();
    let tool_result = (!outputs.is_empty()).then(|| outputs.join("\n"));
    let prompt = items
        .iter()
        .rev()
        .filter(|i| is_message(i) && i["role"] == "user")
        .find_map(|m| match &m["content"] {
            Value::String(s) if !starts_with_any(s, CODEX_CONTEXT) => Some(s.clone()),
            Value::Array(parts) => join_non_empty(
                parts
                    .iter()
                    .filter(|p| p["type"] == "input_text")
                    .filter_map(|p| p["text"].as_str())
                    .filter(|t| !starts_with_any(t, CODEX_CONTEXT))
                    .map(str::to_string)
                    .collect(),
            ),
            _ => None,
        });
    Extracted {
        prompt,
        tool_result,
    }
}

fn openai_output_text(output: &Value) -> String {
    match output {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// True for a Gemini structured-output request (the `auto` router): such a request must get a
/// JSON instance of its schema, never a tool call.
pub fn is_gemini_structured(body: &Value) -> bool {
    let config = &body["generationConfig"];
    config["responseMimeType"] == "application/json"
        || !config["responseJsonSchema"].is_null()
        || !config["responseSchema"].is_null()
}

/// A JSON instance of a (Gemini or JSON Schema style) schema: strings are `"fake"`, numbers 1,
/// booleans false, arrays empty, enums their first value.
pub fn schema_instance(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let kind = match &schema["type"] {
        Value::String(s) => s.to_ascii_lowercase(),
        Value::Array(kinds) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|k| *k != "null")
            .unwrap_or("null")
            .to_ascii_lowercase(),
        _ if schema["properties"].is_object() => "object".to_string(),
        _ => "string".to_string(),
    };
    match kind.as_str() {
        "object" => {
            let mut out = serde_json::Map::new();
            if let Some(props) = schema["properties"].as_object() {
                for (key, sub) in props {
                    out.insert(key.clone(), schema_instance(sub));
                }
            }
            Value::Object(out)
        }
        "integer" | "number" => json!(1),
        "boolean" => json!(false),
        "array" => json!([]),
        "null" => Value::Null,
        _ => json!("fake"),
    }
}

/// The answer to a structured-output request with no usable schema: the router's answer.
fn router_answer(body: &Value) -> Value {
    let config = &body["generationConfig"];
    let schema = if config["responseJsonSchema"].is_object() {
        &config["responseJsonSchema"]
    } else {
        &config["responseSchema"]
    };
    if schema.is_object() {
        schema_instance(schema)
    } else {
        json!({"complexity_reasoning": "fake", "complexity_score": 1})
    }
}

// ---------------------------------------------------------------------------------------------
// Request log
// ---------------------------------------------------------------------------------------------

/// Which protocol a request spoke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    Anthropic,
    Gemini,
    OpenAi,
    /// Any other path (answered 200 `{}` for GET/HEAD, 404 otherwise).
    Other,
}

/// One request the fake received, as tests can inspect it.
#[derive(Clone, Debug)]
pub struct LoggedRequest {
    /// 0, 1, 2 … in order of arrival.
    pub seq: usize,
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    /// Header names lower-cased; repeated headers joined with `", "`.
    pub headers: BTreeMap<String, String>,
    /// The parsed JSON body (`Null` when empty, a JSON string when not JSON).
    pub body: Value,
    pub api: Api,
    /// The model named in the body (Anthropic, OpenAI) or the path (Gemini).
    pub model: Option<String>,
    pub prompt: Option<String>,
    pub tool_result: Option<String>,
    /// `rules[N]` or a rule's name, `default`, `structured-output` (Gemini router),
    /// `count-tokens` or `unknown-path`.
    pub answered_by: String,
    /// The reply chosen (None for structured-output and unknown paths).
    pub reply: Option<Reply>,
}

impl LoggedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// One line for failure messages: `#seq METHOD path?query prompt=… tool_result=… -> rule`.
    pub fn summary(&self) -> String {
        let cut = |s: &Option<String>| {
            s.as_ref()
                .map(|s| format!("{:?}", s.chars().take(80).collect::<String>()))
                .unwrap_or_else(|| "-".to_string())
        };
        format!(
            "#{} {} {}{} prompt={} tool_result={} -> {}",
            self.seq,
            self.method,
            self.path,
            self.query
                .as_ref()
                .map(|q| format!("?{q}"))
                .unwrap_or_default(),
            cut(&self.prompt),
            cut(&self.tool_result),
            self.answered_by
        )
    }

    /// True for a model call (not an unknown path, not a structured-output/router request).
    pub fn is_model_turn(&self) -> bool {
        self.api != Api::Other && self.reply.is_some()
    }
}

// ---------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------

struct Shared {
    script: Mutex<Script>,
    log: Mutex<Vec<LoggedRequest>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A test that panicked while holding the lock must not hide the log from the others.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A running fake model server on `127.0.0.1:<ephemeral port>`. Stops when dropped.
pub struct FakeModel {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl FakeModel {
    /// Binds `127.0.0.1:0` and serves `script` on a dedicated thread (see the module docs).
    pub fn start(script: Script) -> FakeModel {
        let listener = StdTcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            script: Mutex::new(script),
            log: Mutex::new(Vec::new()),
        });
        let (tx, rx) = oneshot::channel::<()>();
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let thread = std::thread::Builder::new()
            .name(format!("fake-model-{}", addr.port()))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                runtime.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                    tokio::select! {
                        result = axum::serve(listener, app) => result.unwrap(),
                        _ = rx => {}
                    }
                });
                // Dropping the runtime cancels the connection tasks, hanging ones included.
                runtime.shutdown_timeout(Duration::from_millis(100));
            })
            .unwrap();
        FakeModel {
            addr,
            shared,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// The base URL, `http://127.0.0.1:PORT` (no path).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Replaces the script for the requests that arrive from now on.
    pub fn set_script(&self, script: Script) {
        *lock(&self.shared.script) = script;
    }

    /// A snapshot of every request received so far, in order of arrival.
    pub fn requests(&self) -> Vec<LoggedRequest> {
        lock(&self.shared.log).clone()
    }

    /// The requests answered from the script (model turns; no router, no unknown paths).
    pub fn model_requests(&self) -> Vec<LoggedRequest> {
        self.requests()
            .into_iter()
            .filter(LoggedRequest::is_model_turn)
            .collect()
    }

    /// Waits until at least `n` model requests arrived; panics after `timeout`.
    pub fn wait_for_model_requests(&self, n: usize, timeout: Duration) -> Vec<LoggedRequest> {
        let start = Instant::now();
        loop {
            let requests = self.model_requests();
            if requests.len() >= n {
                return requests;
            }
            assert!(
                start.elapsed() < timeout,
                "fake model: {} model request(s) after {timeout:?}, wanted {n}: {:#?}",
                requests.len(),
                self.requests()
                    .iter()
                    .map(LoggedRequest::summary)
                    .collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[derive(Debug)]
enum Route {
    Anthropic,
    AnthropicCountTokens,
    GeminiStream(String),
    GeminiGenerate(String),
    GeminiCountTokens(String),
    OpenAi,
    Unknown,
}

impl Route {
    fn of(method: &Method, path: &str) -> Route {
        if method != Method::POST {
            return Route::Unknown;
        }
        if path == "/v1/messages" {
            return Route::Anthropic;
        }
        if path == "/v1/messages/count_tokens" {
            return Route::AnthropicCountTokens;
        }
        if path == "/v1/responses" {
            return Route::OpenAi;
        }
        if let Some((model, action)) = path
            .strip_prefix("/v1beta/models/")
            .and_then(|rest| rest.rsplit_once(':'))
        {
            let model = model.to_string();
            return match action {
                "streamGenerateContent" => Route::GeminiStream(model),
                "generateContent" => Route::GeminiGenerate(model),
                "countTokens" => Route::GeminiCountTokens(model),
                _ => Route::Unknown,
            };
        }
        Route::Unknown
    }

    fn api(&self) -> Api {
        match self {
            Route::Anthropic | Route::AnthropicCountTokens => Api::Anthropic,
            Route::GeminiStream(_) | Route::GeminiGenerate(_) | Route::GeminiCountTokens(_) => {
                Api::Gemini
            }
            Route::OpenAi => Api::OpenAi,
            Route::Unknown => Api::Other,
        }
    }
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 512 << 20)
        .await
        .unwrap_or_default();
    let body: Value = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
    };
    let mut headers = BTreeMap::<String, String>::new();
    for (name, value) in &parts.headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        headers
            .entry(name.as_str().to_ascii_lowercase())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    let path = parts.uri.path().to_string();
    let route = Route::of(&parts.method, &path);
    let extracted = match route.api() {
        Api::Anthropic => extract_anthropic(&body),
        Api::Gemini => extract_gemini(&body),
        Api::OpenAi => extract_openai(&body),
        Api::Other => Extracted::default(),
    };
    let model = match &route {
        Route::GeminiStream(m) | Route::GeminiGenerate(m) | Route::GeminiCountTokens(m) => {
            Some(m.clone())
        }
        _ => body["model"].as_str().map(str::to_string),
    };
    let structured = matches!(route, Route::GeminiStream(_) | Route::GeminiGenerate(_))
        && is_gemini_structured(&body);
    let (answered_by, reply) = match &route {
        Route::Unknown => ("unknown-path".to_string(), None),
        Route::AnthropicCountTokens | Route::GeminiCountTokens(_) => {
            ("count-tokens".to_string(), None)
        }
        _ if structured => ("structured-output".to_string(), None),
        _ => {
            let (label, reply) = lock(&shared.script).choose(&extracted);
            (label, Some(reply))
        }
    };
    {
        let mut log = lock(&shared.log);
        let seq = log.len();
        log.push(LoggedRequest {
            seq,
            method: parts.method.to_string(),
            path: path.clone(),
            query: parts.uri.query().map(str::to_string),
            headers,
            body: body.clone(),
            api: route.api(),
            model: model.clone(),
            prompt: extracted.prompt.clone(),
            tool_result: extracted.tool_result.clone(),
            answered_by,
            reply: reply.clone(),
        });
    }

    let model = model.unwrap_or_else(|| "fake-model".to_string());
    let input_tokens = (bytes.len() / 4).max(1) as u64;
    let mut response = match (route, reply) {
        (Route::Unknown, _) => {
            if parts.method == Method::GET || parts.method == Method::HEAD {
                json_response(StatusCode::OK, &json!({}))
            } else {
                json_response(
                    StatusCode::NOT_FOUND,
                    &json!({"error": {"type": "not_found_error", "message":
                        format!("fake model: no route for {} {path}", parts.method)}}),
                )
            }
        }
        (Route::AnthropicCountTokens, _) => {
            json_response(StatusCode::OK, &json!({"input_tokens": input_tokens}))
        }
        (Route::GeminiCountTokens(_), _) => {
            json_response(StatusCode::OK, &json!({"totalTokens": input_tokens}))
        }
        (route, None) => {
            // Structured output (the Gemini router): answered at once, never scripted.
            let text = router_answer(&body).to_string();
            let chunk = gemini_chunk(
                vec![json!({"text": text})],
                &model,
                &fresh_id(""),
                Some(usage_gemini(input_tokens, &text)),
            );
            match route {
                Route::GeminiStream(_) => sse_response(vec![gemini_event(&chunk)]),
                _ => json_response(StatusCode::OK, &chunk),
            }
        }
        (route, Some(reply)) => {
            if reply.hang {
                return std::future::pending::<Response>().await;
            }
            if !reply.delay.is_zero() {
                tokio::time::sleep(reply.delay).await;
            }
            if let Some(error) = &reply.error {
                error_response(route.api(), error)
            } else {
                let stream = match route {
                    Route::GeminiStream(_) => true,
                    Route::GeminiGenerate(_) => false,
                    _ => body["stream"] == true,
                };
                answer(&route, &reply, &model, input_tokens, stream)
            }
        }
    };
    response.headers_mut().insert(
        "request-id",
        HeaderValue::from_str(&fresh_id("req_")).unwrap(),
    );
    response
}

fn answer(route: &Route, reply: &Reply, model: &str, input_tokens: u64, stream: bool) -> Response {
    match (route.api(), stream) {
        (Api::Anthropic, true) => sse_response(anthropic_events(reply, model, input_tokens)),
        (Api::Anthropic, false) => json_response(
            StatusCode::OK,
            &anthropic_message(reply, model, input_tokens),
        ),
        (Api::Gemini, true) => sse_response(
            gemini_chunks(reply, model, input_tokens)
                .iter()
                .map(gemini_event)
                .collect(),
        ),
        (Api::Gemini, false) => {
            json_response(StatusCode::OK, &gemini_whole(reply, model, input_tokens))
        }
        (Api::OpenAi, true) => sse_response(openai_events(reply, model, input_tokens)),
        (Api::OpenAi, false) => {
            let (_, response) = openai_items(reply, model, input_tokens);
            json_response(StatusCode::OK, &response)
        }
        (Api::Other, _) => json_response(StatusCode::OK, &json!({})),
    }
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// One body frame per event, so each event is flushed on its own.
fn sse_response(events: Vec<String>) -> Response {
    let frames = events
        .into_iter()
        .map(|e| Ok::<Bytes, Infallible>(Bytes::from(e)));
    let mut response = Response::new(Body::from_stream(tokio_stream::iter(frames)));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn error_response(api: Api, error: &ApiError) -> Response {
    let status = StatusCode::from_u16(error.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = match api {
        Api::Anthropic => {
            let kind = match error.status {
                400 => "invalid_request_error",
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                413 => "request_too_large",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": error.message}})
        }
        Api::Gemini => {
            let kind = match error.status {
                400 => "INVALID_ARGUMENT",
                401 => "UNAUTHENTICATED",
                403 => "PERMISSION_DENIED",
                404 => "NOT_FOUND",
                429 => "RESOURCE_EXHAUSTED",
                503 => "UNAVAILABLE",
                504 => "DEADLINE_EXCEEDED",
                _ => "INTERNAL",
            };
            json!({"error": {"code": error.status, "message": error.message, "status": kind}})
        }
        Api::OpenAi | Api::Other => {
            let kind = match error.status {
                429 => "rate_limit_exceeded",
                500..=599 => "server_error",
                _ => "invalid_request_error",
            };
            json!({"error": {"type": kind, "message": error.message, "code": null}})
        }
    };
    json_response(status, &body)
}

// ---------------------------------------------------------------------------------------------
// Ids, chunks, token counts
// ---------------------------------------------------------------------------------------------

/// `prefix` followed by 24 hex digits, unique within the process.
fn fresh_id(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let a = mix(nanos ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let b = mix(a ^ n);
    format!("{prefix}{a:016x}{:08x}", b as u32)
}

/// Splits `text` into pieces of `size` characters (never inside a UTF-8 character).
pub fn chunk_text(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(size.max(1))
        .map(|c| c.iter().collect())
        .collect()
}

fn output_tokens(reply: &Reply) -> u64 {
    let chars = reply.text.chars().count()
        + reply.thinking.as_deref().map_or(0, |t| t.chars().count())
        + reply
            .tool_calls
            .iter()
            .map(|c| c.input.to_string().len() + c.name.len())
            .sum::<usize>();
    (chars / 4).max(1) as u64
}

fn chunk_size(reply: &Reply) -> usize {
    reply.chunk_size.unwrap_or(DEFAULT_CHUNK_SIZE)
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages
// ---------------------------------------------------------------------------------------------

fn sse_event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn anthropic_usage(input_tokens: u64, output_tokens: u64) -> Value {
    json!({"input_tokens": input_tokens, "output_tokens": output_tokens,
           "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0})
}

/// The content blocks of a reply, as (start block, deltas, complete block).
fn anthropic_blocks(reply: &Reply) -> Vec<(Value, Vec<Value>, Value)> {
    let size = chunk_size(reply);
    let mut blocks = Vec::new();
    if let Some(thinking) = &reply.thinking {
        let mut deltas: Vec<Value> = chunk_text(thinking, size)
            .into_iter()
            .map(|t| json!({"type": "thinking_delta", "thinking": t}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": "fake-signature"}));
        blocks.push((
            json!({"type": "thinking", "thinking": "", "signature": ""}),
            deltas,
            json!({"type": "thinking", "thinking": thinking, "signature": "fake-signature"}),
        ));
    }
    if !reply.text.is_empty() || reply.tool_calls.is_empty() {
        let deltas = chunk_text(&reply.text, size)
            .into_iter()
            .map(|t| json!({"type": "text_delta", "text": t}))
            .collect();
        blocks.push((
            json!({"type": "text", "text": ""}),
            deltas,
            json!({"type": "text", "text": reply.text}),
        ));
    }
    for call in &reply.tool_calls {
        let id = fresh_id("toolu_fake_");
        blocks.push((
            json!({"type": "tool_use", "id": id, "name": call.name, "input": {}}),
            vec![json!({"type": "input_json_delta", "partial_json": call.input.to_string()})],
            json!({"type": "tool_use", "id": id, "name": call.name, "input": call.input}),
        ));
    }
    blocks
}

fn anthropic_stop_reason(reply: &Reply) -> &'static str {
    if reply.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    }
}

fn anthropic_events(reply: &Reply, model: &str, input_tokens: u64) -> Vec<String> {
    let mut events = vec![sse_event(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": fresh_id("msg_fake_"), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": anthropic_usage(input_tokens, 1)}}),
    )];
    events.push(sse_event("ping", &json!({"type": "ping"})));
    for (index, (start, deltas, _)) in anthropic_blocks(reply).into_iter().enumerate() {
        events.push(sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in deltas {
            events.push(sse_event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        events.push(sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push(sse_event(
        "message_delta",
        &json!({"type": "message_delta",
                "delta": {"stop_reason": anthropic_stop_reason(reply), "stop_sequence": null},
                "usage": {"output_tokens": output_tokens(reply)}}),
    ));
    events.push(sse_event("message_stop", &json!({"type": "message_stop"})));
    events
}

fn anthropic_message(reply: &Reply, model: &str, input_tokens: u64) -> Value {
    let content: Vec<Value> = anthropic_blocks(reply)
        .into_iter()
        .map(|(_, _, whole)| whole)
        .collect();
    json!({"id": fresh_id("msg_fake_"), "type": "message", "role": "assistant", "model": model,
           "content": content, "stop_reason": anthropic_stop_reason(reply), "stop_sequence": null,
           "usage": anthropic_usage(input_tokens, output_tokens(reply))})
}

// ---------------------------------------------------------------------------------------------
// Gemini
// ---------------------------------------------------------------------------------------------

fn usage_gemini(prompt_tokens: u64, text: &str) -> Value {
    let out = (text.chars().count() / 4).max(1) as u64;
    json!({"promptTokenCount": prompt_tokens, "candidatesTokenCount": out,
           "totalTokenCount": prompt_tokens + out})
}

fn gemini_chunk(parts: Vec<Value>, model: &str, response_id: &str, usage: Option<Value>) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    let mut chunk = json!({"modelVersion": model, "responseId": response_id});
    if let Some(usage) = usage {
        candidate["finishReason"] = json!("STOP");
        chunk["usageMetadata"] = usage;
    }
    chunk["candidates"] = json!([candidate]);
    chunk
}

/// `data: <json>\r\n\r\n`: no `event:` lines, which the SDK's parser cannot skip.
fn gemini_event(chunk: &Value) -> String {
    format!("data: {chunk}\r\n\r\n")
}

/// One chunk per thinking piece, one per text piece; the last chunk carries the function calls,
/// `finishReason: "STOP"` and the usage.
fn gemini_chunks(reply: &Reply, model: &str, input_tokens: u64) -> Vec<Value> {
    let size = chunk_size(reply);
    let id = fresh_id("fake");
    let mut parts: Vec<Vec<Value>> = Vec::new();
    if let Some(thinking) = &reply.thinking {
        for piece in chunk_text(thinking, size) {
            parts.push(vec![json!({"text": piece, "thought": true})]);
        }
    }
    for piece in chunk_text(&reply.text, size) {
        parts.push(vec![json!({"text": piece})]);
    }
    let calls: Vec<Value> = reply
        .tool_calls
        .iter()
        .map(|c| json!({"functionCall": {"name": c.name, "args": c.input}}))
        .collect();
    if !calls.is_empty() || parts.is_empty() {
        parts.push(if calls.is_empty() {
            vec![json!({"text": ""})]
        } else {
            calls
        });
    }
    let usage = usage_gemini(input_tokens, &reply.text);
    let last = parts.len() - 1;
    parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| gemini_chunk(p, model, &id, (i == last).then(|| usage.clone())))
        .collect()
}

fn gemini_whole(reply: &Reply, model: &str, input_tokens: u64) -> Value {
    let mut parts = Vec::new();
    if let Some(thinking) = &reply.thinking {
        parts.push(json!({"text": thinking, "thought": true}));
    }
    if !reply.text.is_empty() || reply.tool_calls.is_empty() {
        parts.push(json!({"text": reply.text}));
    }
    for c in &reply.tool_calls {
        parts.push(json!({"functionCall": {"name": c.name, "args": c.input}}));
    }
    gemini_chunk(
        parts,
        model,
        &fresh_id("fake"),
        Some(usage_gemini(input_tokens, &reply.text)),
    )
}

// ---------------------------------------------------------------------------------------------
// OpenAI Responses
// ---------------------------------------------------------------------------------------------

/// The stream events of each output item (without `sequence_number`), and the completed
/// response object.
fn openai_items(reply: &Reply, model: &str, input_tokens: u64) -> (Vec<Value>, Value) {
    let size = chunk_size(reply);
    let mut events = Vec::new();
    let mut output = Vec::new();
    if let Some(thinking) = &reply.thinking {
        let index = output.len();
        let id = fresh_id("rs_fake_");
        let done = json!({"type": "reasoning", "id": id, "status": "completed",
            "summary": [{"type": "summary_text", "text": thinking}]});
        events.push(
            json!({"type": "response.output_item.added", "output_index": index,
            "item": {"type": "reasoning", "id": id, "status": "in_progress", "summary": []}}),
        );
        events.push(
            json!({"type": "response.reasoning_summary_part.added", "item_id": id,
            "output_index": index, "summary_index": 0,
            "part": {"type": "summary_text", "text": ""}}),
        );
        for piece in chunk_text(thinking, size) {
            events.push(
                json!({"type": "response.reasoning_summary_text.delta", "item_id": id,
                "output_index": index, "summary_index": 0, "delta": piece}),
            );
        }
        events.push(
            json!({"type": "response.reasoning_summary_text.done", "item_id": id,
            "output_index": index, "summary_index": 0, "text": thinking}),
        );
        events.push(
            json!({"type": "response.reasoning_summary_part.done", "item_id": id,
            "output_index": index, "summary_index": 0,
            "part": {"type": "summary_text", "text": thinking}}),
        );
        events.push(
            json!({"type": "response.output_item.done", "output_index": index,
            "item": done}),
        );
        output.push(done);
    }
    if !reply.text.is_empty() || reply.tool_calls.is_empty() {
        let index = output.len();
        let id = fresh_id("msg_fake_");
        let part = json!({"type": "output_text", "text": reply.text, "annotations": []});
        let done = json!({"type": "message", "id": id, "status": "completed",
            "role": "assistant", "content": [part]});
        events.push(
            json!({"type": "response.output_item.added", "output_index": index,
            "item": {"type": "message", "id": id, "status": "in_progress", "role": "assistant",
                     "content": []}}),
        );
        events.push(json!({"type": "response.content_part.added", "item_id": id,
            "output_index": index, "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []}}));
        for piece in chunk_text(&reply.text, size) {
            events.push(json!({"type": "response.output_text.delta", "item_id": id,
                "output_index": index, "content_index": 0, "delta": piece}));
        }
        events.push(json!({"type": "response.output_text.done", "item_id": id,
            "output_index": index, "content_index": 0, "text": reply.text}));
        events.push(json!({"type": "response.content_part.done", "item_id": id,
            "output_index": index, "content_index": 0, "part": part}));
        events.push(
            json!({"type": "response.output_item.done", "output_index": index,
            "item": done}),
        );
        output.push(done);
    }
    for call in &reply.tool_calls {
        let index = output.len();
        let id = fresh_id("fc_fake_");
        let call_id = fresh_id("call_fake_");
        let arguments = call.input.to_string();
        let done = json!({"type": "function_call", "id": id, "call_id": call_id,
            "name": call.name, "arguments": arguments, "status": "completed"});
        events.push(
            json!({"type": "response.output_item.added", "output_index": index,
            "item": {"type": "function_call", "id": id, "call_id": call_id, "name": call.name,
                     "arguments": "", "status": "in_progress"}}),
        );
        events.push(
            json!({"type": "response.function_call_arguments.delta", "item_id": id,
            "output_index": index, "delta": arguments}),
        );
        events.push(
            json!({"type": "response.function_call_arguments.done", "item_id": id,
            "output_index": index, "arguments": arguments}),
        );
        events.push(
            json!({"type": "response.output_item.done", "output_index": index,
            "item": done}),
        );
        output.push(done);
    }
    let out_tokens = output_tokens(reply);
    let response = json!({
        "id": fresh_id("resp_fake_"), "object": "response",
        "created_at": SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        "model": model, "parallel_tool_calls": true, "tool_choice": "auto", "tools": [],
        "status": "completed", "output": output,
        "usage": {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": out_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": input_tokens + out_tokens}});
    (events, response)
}

fn openai_events(reply: &Reply, model: &str, input_tokens: u64) -> Vec<String> {
    let (items, response) = openai_items(reply, model, input_tokens);
    let mut pending = response.clone();
    pending["status"] = json!("in_progress");
    pending["output"] = json!([]);
    pending
        .as_object_mut()
        .map(|o| o.remove("usage"))
        .unwrap_or_default();
    let mut all = vec![
        json!({"type": "response.created", "response": pending}),
        json!({"type": "response.in_progress", "response": pending}),
    ];
    all.extend(items);
    all.push(json!({"type": "response.completed", "response": response}));
    all.into_iter()
        .enumerate()
        .map(|(seq, mut event)| {
            event["sequence_number"] = json!(seq);
            let name = event["type"].as_str().unwrap_or("").to_string();
            sse_event(&name, &event)
        })
        .collect()
}
