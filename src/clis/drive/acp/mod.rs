//! A CLI kept for the whole loop as an agent of the Agent Client Protocol (JSON-RPC 2.0
//! over stdio, one message per line): `gemini --acp`, `qwen --acp`.
//!
//! ```text
//! first turn:  initialize → session/new → session/prompt
//! next turns:  session/prompt in the same session
//! a turn:      session/update notifications … the session/prompt response
//!              (its stopReason, and the turn's tokens in _meta.quota)
//! ```
//!
//! What the agent reports is rewritten as the `--output-format stream-json` events
//! codecrew's Gemini decoder already reads (`init`, `message`, `tool_use`, `tool_result`,
//! `result`), so one decoder serves every ACP agent and Gemini run per turn.
//!
//! The agent asks its client before one of its own tools writes, runs a command, reads
//! outside the workspace or fetches (`session/request_permission`, in the approval mode
//! that asks: Gemini's and Qwen's `default`). codecrew decides each question as the
//! codecrew call it amounts to ([`permission`]). What the agent does without asking (its reads inside the
//! workspace) stays inside its wall. codecrew offers no file system and no terminal; any
//! other request of the agent is answered "not supported".
//!
//! What a turn used comes where each agent puts it: Gemini in the prompt response's
//! `_meta.quota.token_count`; Qwen Code in `_meta.usage` on its message chunks, one per
//! model call (summed here); others in the response's `usage` (ACP's own field) and the
//! session's running cost in `usage_update` notifications (as `opencode acp` does).
//!
//! Not used to continue a stored session: Gemini CLI 0.61.0's `session/load` starts a new
//! record under the session's id before it reads the stored one, which erases the stored
//! conversation, and then fails ("No previous sessions found"). A job that continues a
//! session runs per turn (`--resume`), see [`crate::clis::drive::transport`].

use serde_json::{Value, json};

mod permission;

use super::json_lines::{JsonLines, line};
use super::native::Outbox;

/// The ids of codecrew's handshake; prompts are numbered from `FIRST_PROMPT` on.
const INITIALIZE: u64 = 0;
const NEW_SESSION: u64 = 1;
const FIRST_PROMPT: u64 = 2;

/// The protocol version codecrew speaks (ACP's first, the one Gemini CLI answers with).
const PROTOCOL_VERSION: u64 = 1;

/// One kept ACP conversation.
#[derive(Debug)]
pub struct Acp {
    /// The agent's command, for messages (`gemini --acp`).
    agent: String,
    /// The session's working directory (absolute, as ACP requires).
    cwd: String,
    session: Option<String>,
    /// The prompt waiting for the handshake to finish.
    pending: Option<String>,
    /// The id of the prompt in flight, whose response ends the turn.
    prompt: Option<u64>,
    next_prompt: u64,
    /// What the turn's model calls reported so far (Qwen Code's per-call `_meta.usage`).
    calls: CallUsage,
    /// The session's running cost, from the last `usage_update` (opencode).
    cost: Option<f64>,
    lines: JsonLines,
}

/// Token counts summed over a turn's model calls.
#[derive(Debug, Default, Clone, Copy)]
struct CallUsage {
    input: Option<u64>,
    output: Option<u64>,
    cached: Option<u64>,
}

impl CallUsage {
    /// Adds one call's ACP-style counts (`inputTokens`, `outputTokens`, `thoughtTokens`,
    /// `cachedReadTokens`).
    fn add(&mut self, usage: &Value) {
        let field = |name: &str| usage.get(name).and_then(Value::as_u64);
        let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        self.input = sum(self.input, field("inputTokens"));
        self.output = sum(
            self.output,
            sum(field("outputTokens"), field("thoughtTokens")),
        );
        self.cached = sum(self.cached, field("cachedReadTokens"));
    }
}

impl Acp {
    /// A conversation with the agent `agent` (its command, for messages) in `cwd`.
    pub fn new(agent: &str, cwd: String) -> Self {
        Acp {
            agent: agent.to_owned(),
            cwd,
            session: None,
            pending: None,
            prompt: None,
            next_prompt: FIRST_PROMPT,
            calls: CallUsage::default(),
            cost: None,
            lines: JsonLines::default(),
        }
    }

    /// The session the agent opened, once it has.
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// What starts a turn with `prompt`: the handshake first, for the first turn.
    pub fn start_turn(&mut self, prompt: &str) -> Vec<u8> {
        match self.session.clone() {
            Some(session) => line(&self.prompt_request(&session, prompt)),
            None => {
                self.pending = Some(prompt.to_owned());
                line(&request(
                    INITIALIZE,
                    "initialize",
                    json!({
                        "protocolVersion": PROTOCOL_VERSION,
                        "clientCapabilities": {
                            "fs": {"readTextFile": false, "writeTextFile": false},
                            "terminal": false,
                        },
                        "clientInfo": {"name": "codecrew", "version": env!("CARGO_PKG_VERSION")},
                    }),
                ))
            }
        }
    }

    /// One chunk of the agent's stdout: the stream-json lines for the decoder go to
    /// `decoded`, what codecrew answers goes to `replies`. True when the turn is over.
    pub fn read(&mut self, bytes: &[u8], decoded: &mut Vec<u8>, outbox: &mut Outbox) -> bool {
        let mut over = false;
        for message in self.lines.feed(bytes, &self.agent) {
            over |= self.message(&message, decoded, outbox);
        }
        over
    }

    fn message(&mut self, message: &Value, decoded: &mut Vec<u8>, outbox: &mut Outbox) -> bool {
        let method = message.get("method").and_then(Value::as_str);
        match (method, message.get("id")) {
            (Some("session/request_permission"), Some(id)) => {
                self.permission(id, &message["params"], outbox);
                false
            }
            (Some(method), Some(id)) => {
                outbox
                    .bytes
                    .extend(line(&json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": -32601, "message": format!("codecrew does not answer {method}"),
                    }})));
                false
            }
            (Some("session/update"), None) => {
                let update = &message["params"]["update"];
                if let Some(usage) = update.pointer("/_meta/usage") {
                    self.calls.add(usage);
                }
                if let Some(cost) = update.pointer("/cost/amount").and_then(Value::as_f64) {
                    self.cost = Some(cost);
                }
                self::update(update, decoded);
                false
            }
            (None, Some(id)) => self.response(id.as_u64(), message, decoded, outbox),
            _ => false,
        }
    }

    /// A question about one of the agent's own tool calls: to the gate.
    fn permission(&mut self, id: &Value, params: &Value, outbox: &mut Outbox) {
        // The program's name: `gemini` of `gemini --acp`.
        let program = self.agent.split_whitespace().next().unwrap_or("agent");
        permission::question(program, id, params, outbox);
    }

    fn response(
        &mut self,
        id: Option<u64>,
        message: &Value,
        decoded: &mut Vec<u8>,
        outbox: &mut Outbox,
    ) -> bool {
        if let Some(error) = message.get("error") {
            // A failed handshake or a failed prompt: either way the turn is over.
            self.calls = CallUsage::default();
            decoded.extend(line(&failed(&error_text(&self.agent, error))));
            return true;
        }
        let result = &message["result"];
        match id {
            Some(INITIALIZE) => outbox.bytes.extend(line(&request(
                NEW_SESSION,
                "session/new",
                json!({"cwd": self.cwd, "mcpServers": []}),
            ))),
            Some(NEW_SESSION) => {
                let Some(session) = result["sessionId"].as_str() else {
                    let message = format!("{} opened a session without an id", self.agent);
                    decoded.extend(line(&failed(&message)));
                    return true;
                };
                self.session = Some(session.to_owned());
                let mut init = json!({"type": "init", "session_id": session});
                if let Some(model) = result["models"]["currentModelId"].as_str() {
                    init["model"] = json!(model);
                }
                decoded.extend(line(&init));
                let prompt = self.pending.take().unwrap_or_default();
                outbox
                    .bytes
                    .extend(line(&self.prompt_request(session, &prompt)));
            }
            Some(id) if self.prompt == Some(id) => {
                self.prompt = None;
                let calls = std::mem::take(&mut self.calls);
                decoded.extend(line(&finished(&self.agent, result, calls, self.cost)));
                return true;
            }
            _ => {}
        }
        false
    }

    fn prompt_request(&mut self, session: &str, prompt: &str) -> Value {
        let id = self.next_prompt;
        self.next_prompt += 1;
        self.prompt = Some(id);
        request(
            id,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": prompt}]}),
        )
    }
}

/// A `session/update` as the stream-json event it stands for (most updates, such as the
/// agent's thoughts, its plan or its list of commands, have none).
fn update(update: &Value, decoded: &mut Vec<u8>) {
    let event = match update["sessionUpdate"].as_str() {
        Some("agent_message_chunk") => match update["content"]["text"].as_str() {
            Some(text) => json!({
                "type": "message", "role": "assistant", "content": text, "delta": true,
            }),
            None => return,
        },
        Some("tool_call") => json!({
            "type": "tool_use",
            "tool_name": tool_name(update),
            "tool_id": update["toolCallId"],
            "parameters": update.get("rawInput").cloned().unwrap_or_else(|| json!({
                "title": update["title"], "locations": update["locations"],
            })),
        }),
        Some("tool_call_update") => {
            let status = match update["status"].as_str() {
                Some("completed") => "success",
                Some("failed") => "error",
                // Still running: its end comes in a later update.
                _ => return,
            };
            json!({
                "type": "tool_result", "tool_id": update["toolCallId"], "status": status,
                "output": tool_output(&update["content"]),
            })
        }
        _ => return,
    };
    decoded.extend(line(&event));
}

/// The tool's own name: Gemini's call ids are `<tool>__<tool>_<time>_<n>`; else its kind
/// (`read`, `edit`, `execute` …).
fn tool_name(update: &Value) -> String {
    let id = update["toolCallId"].as_str().unwrap_or_default();
    match id.split_once("__") {
        Some((name, _)) if !name.is_empty() => name.to_owned(),
        _ => update["kind"].as_str().unwrap_or("tool").to_owned(),
    }
}

/// The text of a tool call's content: its text blocks, and the files its diffs changed.
fn tool_output(content: &Value) -> String {
    let mut parts = Vec::new();
    for item in content.as_array().into_iter().flatten() {
        match item["type"].as_str() {
            Some("content") => {
                if let Some(text) = item["content"]["text"].as_str() {
                    parts.push(text.to_owned());
                }
            }
            Some("diff") => {
                if let Some(path) = item["path"].as_str() {
                    parts.push(format!("changed {path}"));
                }
            }
            _ => {}
        }
    }
    parts.join("\n")
}

/// The `result` event for a prompt's response: its stop reason and the turn's tokens
/// (Gemini's quota, else ACP's `usage`, else what the model calls reported), and the
/// session's running cost where the agent states one.
fn finished(agent: &str, result: &Value, calls: CallUsage, cost: Option<f64>) -> Value {
    let quota = &result["_meta"]["quota"]["token_count"];
    let mut stats = if quota.is_object() {
        json!({"input_tokens": quota["input_tokens"], "output_tokens": quota["output_tokens"]})
    } else {
        let mut tokens = CallUsage::default();
        if result["usage"].is_object() {
            tokens.add(&result["usage"]);
        } else {
            tokens = calls;
        }
        json!({"input_tokens": tokens.input, "output_tokens": tokens.output,
               "cached": tokens.cached})
    };
    if let Some(cost) = cost {
        stats["total_cost_usd"] = json!(cost);
    }
    match result["stopReason"].as_str() {
        Some("cancelled") => failed(&format!("{agent} cancelled the turn")),
        Some("refusal") => failed(&format!("{agent} refused to go on")),
        // end_turn, and the limits (max_tokens, max_turn_requests): the answer as it stands.
        _ => json!({"type": "result", "status": "success", "stats": stats}),
    }
}

fn failed(message: &str) -> Value {
    json!({"type": "result", "status": "error", "error": {"message": message}})
}

/// An ACP error as one line: its message, and the details Gemini puts in `data`.
fn error_text(agent: &str, error: &Value) -> String {
    let message = error["message"].as_str().unwrap_or("request failed");
    match error["data"]["details"].as_str() {
        Some(details) => format!("{agent}: {message}: {details}"),
        None => format!("{agent}: {message}"),
    }
}

/// The answer to a request of the agent: a permission is always refused.
fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clis::drive::json_lines::parse_lines as lines;

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
            json!({"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn",
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
            json!({"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}),
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
            json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}),
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
            json!({"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn",
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
            json!({"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "cancelled"}}),
        );
        assert!(over);
        assert_eq!(decoded[0]["status"], "error");
    }
}
