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
//! What the agent reports becomes the interception engine's events ([`Event`]): its
//! session, the model's text as it streams, the agent's own tool calls and their results,
//! and the turn's end with what it used or why it failed.
//!
//! The agent asks its client before one of its own tools writes, runs a command, reads
//! outside the workspace or fetches (`session/request_permission`, in the approval mode
//! that asks: Gemini's and Qwen's `default`). codecrew decides each question as the
//! codecrew call it amounts to (`permission`). What the agent does without asking (its reads inside the
//! workspace) stays inside its wall. codecrew offers no file system and no terminal; any
//! other request of the agent is answered "not supported".
//!
//! What a turn used comes where each agent puts it: Gemini in the prompt response's
//! `_meta.quota.token_count`; Qwen Code in `_meta.usage` on its message chunks, one per
//! model call (summed here); others in the response's `usage` (ACP's own field) and the
//! session's running cost in `usage_update` notifications (as `opencode acp` does).
//!
//! A stored session is continued with `session/load` where the agent offers it and its
//! module trusts it ([`crate::Provider::loads_kept_sessions`]): the agent first replays
//! the session's history as `session/update` notifications, which codecrew has already
//! shown and so drops until the load's response. Gemini CLI 0.61.0's `session/load`
//! starts a new record under the session's id before it reads the stored one, which
//! erases the stored conversation, and then fails ("No previous sessions found"): a job
//! that continues a Gemini session runs per turn (`--resume`), see
//! [`crate::drive::transport`].

use std::sync::{Arc, Mutex};

use codecrew_intercept::decode::{Event, Usage};
use serde_json::{Value, json};

mod dialect;
mod permission;
mod usage;

pub use dialect::Dialect;
use usage::CallUsage;

use super::json_lines::{JsonLines, line};
use super::native::Outbox;
use super::turn_events::TurnEvents;

/// The ids of codecrew's handshake; prompts are numbered from `FIRST_PROMPT` on.
const INITIALIZE: u64 = 0;
/// `session/new`, or `session/load` when a stored session is continued.
const NEW_SESSION: u64 = 1;
/// `session/set_model`, where the dialect chooses the model so.
const SET_MODEL: u64 = 2;
const FIRST_PROMPT: u64 = 3;

/// How many times in one turn codecrew tells the model of a refusal and lets it go on
/// ([`Dialect::refusal_ends_turn`]): a model that keeps reaching for a refused tool then
/// ends its turn with what it has.
const MAX_REFUSAL_PROMPTS: usize = 3;

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
    /// The stored session to continue (`session/load`) instead of opening a new one.
    resume: Option<String>,
    /// Between `session/load` and its response: the agent replays the stored history,
    /// which is not this turn's.
    loading: bool,
    /// The prompt waiting for the handshake to finish.
    pending: Option<String>,
    /// The id of the prompt in flight, whose response ends the turn.
    prompt: Option<u64>,
    next_prompt: u64,
    /// What the turn's model calls reported so far (Qwen Code's per-call `_meta.usage`).
    calls: CallUsage,
    /// The session's running cost, from the last `usage_update` (opencode).
    cost: Option<f64>,
    /// What of that cost was spent before this process loaded the session: unknown
    /// until the first turn after a load ends (the replayed history states no cost), so
    /// that turn reports none.
    cost_before: Option<f64>,
    dialect: Dialect,
    /// Nothing but the agent's own updates since the last text chunk (or the turn's
    /// start): the next chunk starts a message.
    at_message_start: bool,
    /// A chunk that may be the agent's report of a failed model call
    /// ([`Dialect::notices_in_text`]), held until the turn's end or the next update.
    held: Option<String>,
    /// The running total of a dialect whose usage counts the whole process, as of the
    /// last turn's end.
    total_before: CallUsage,
    /// The agent's tool calls codecrew refused this turn, with why (for a dialect whose
    /// agent ends its turn at a refusal). Filled by the answers to its questions.
    refused: Arc<Mutex<Vec<String>>>,
    /// The prompts codecrew sent this turn to tell the model of a refusal.
    refusal_prompts: usize,
    /// The turn's events so far.
    events: TurnEvents,
    lines: JsonLines,
}

impl Acp {
    /// A conversation with the agent `agent` (its command, for messages) in `cwd`.
    pub fn new(agent: &str, cwd: String) -> Self {
        Acp {
            agent: agent.to_owned(),
            cwd,
            session: None,
            resume: None,
            loading: false,
            pending: None,
            prompt: None,
            next_prompt: FIRST_PROMPT,
            calls: CallUsage::default(),
            cost: None,
            cost_before: Some(0.0),
            dialect: Dialect::default(),
            at_message_start: true,
            held: None,
            total_before: CallUsage::default(),
            refused: Arc::default(),
            refusal_prompts: 0,
            events: TurnEvents::default(),
            lines: JsonLines::default(),
        }
    }

    /// The conversation as `dialect` says the agent speaks.
    pub fn speaking(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }

    /// The conversation continues the stored session `session` (when `Some`), loaded
    /// over `session/load`.
    pub fn resuming(mut self, session: Option<String>) -> Self {
        self.resume = session;
        self
    }

    /// The session the agent opened, once it has.
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// What starts a turn with `prompt`: the handshake first, for the first turn.
    pub fn start_turn(&mut self, prompt: &str) -> Vec<u8> {
        self.at_message_start = true;
        self.refusal_prompts = 0;
        self.events = TurnEvents::default();
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

    /// One chunk of the agent's stdout: the turn's events go to `out`, what codecrew
    /// answers goes to `outbox`. True when the turn is over.
    pub fn read(&mut self, bytes: &[u8], out: &mut Vec<Event>, outbox: &mut Outbox) -> bool {
        let mut over = false;
        for message in self.lines.feed(bytes, &self.agent) {
            over |= self.message(&message, out, outbox);
        }
        over
    }

    fn message(&mut self, message: &Value, out: &mut Vec<Event>, outbox: &mut Outbox) -> bool {
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
            // The stored history, replayed by `session/load`: already shown, not this turn's.
            (Some("session/update"), None) if self.loading => false,
            (Some("session/update"), None) => {
                let update = &message["params"]["update"];
                if let Some(usage) = update.pointer("/_meta/usage") {
                    self.calls.add(usage);
                }
                if let Some(cost) = update.pointer("/cost/amount").and_then(Value::as_f64) {
                    self.cost = Some(cost);
                }
                self.update(update, out);
                false
            }
            (None, Some(id)) => self.response(id.as_u64(), message, out, outbox),
            _ => false,
        }
    }

    /// A question about one of the agent's own tool calls: to the gate.
    fn permission(&mut self, id: &Value, params: &Value, outbox: &mut Outbox) {
        // The program's name: `gemini` of `gemini --acp`.
        let program = self.agent.split_whitespace().next().unwrap_or("agent");
        let refused = self
            .dialect
            .refusal_ends_turn
            .then(|| Arc::clone(&self.refused));
        permission::question(program, id, params, outbox, refused);
    }

    fn response(
        &mut self,
        id: Option<u64>,
        message: &Value,
        out: &mut Vec<Event>,
        outbox: &mut Outbox,
    ) -> bool {
        if let Some(error) = message.get("error") {
            // A failed handshake or a failed prompt: either way the turn is over.
            self.calls = CallUsage::default();
            self.loading = false;
            self.held = None;
            self.events
                .failed(&error_text(&self.agent, error), None, out);
            return true;
        }
        let result = &message["result"];
        match id {
            Some(INITIALIZE) => match self.resume.clone() {
                None => outbox.bytes.extend(line(&request(
                    NEW_SESSION,
                    "session/new",
                    json!({"cwd": self.cwd, "mcpServers": []}),
                ))),
                Some(session) if result["agentCapabilities"]["loadSession"] == true => {
                    self.loading = true;
                    self.cost_before = None;
                    outbox.bytes.extend(line(&request(
                        NEW_SESSION,
                        "session/load",
                        json!({"sessionId": session, "cwd": self.cwd, "mcpServers": []}),
                    )));
                }
                Some(_) => {
                    let message = format!(
                        "{} cannot continue a stored session (it offers no session/load)",
                        self.agent
                    );
                    self.events.failed(&message, None, out);
                    return true;
                }
            },
            Some(NEW_SESSION) => {
                // `session/load` answers without the id it was given.
                let loaded = std::mem::take(&mut self.loading);
                let session = match (loaded, &self.resume, result["sessionId"].as_str()) {
                    (true, Some(resumed), _) => resumed.clone(),
                    (false, _, Some(opened)) => opened.to_owned(),
                    _ => {
                        let message = format!("{} opened a session without an id", self.agent);
                        self.events.failed(&message, None, out);
                        return true;
                    }
                };
                self.session = Some(session.clone());
                let model = self.dialect.model.clone();
                let reported = model
                    .as_deref()
                    .or(result["models"]["currentModelId"].as_str());
                self.events.session(&session, reported, out);
                match model {
                    Some(model) => outbox.bytes.extend(line(&request(
                        SET_MODEL,
                        "session/set_model",
                        json!({"sessionId": session, "modelId": model}),
                    ))),
                    None => self.send_pending(&session, outbox),
                }
            }
            Some(SET_MODEL) => {
                if let Some(session) = self.session.clone() {
                    self.send_pending(&session, outbox);
                }
            }
            Some(id) if self.prompt == Some(id) => return self.answered(result, out, outbox),
            _ => {}
        }
        false
    }

    /// The prompt's response: the turn's end, unless the agent stopped at a refusal the
    /// model is to read first ([`Dialect::refusal_ends_turn`]).
    fn answered(&mut self, result: &Value, out: &mut Vec<Event>, outbox: &mut Outbox) -> bool {
        self.prompt = None;
        let refused = std::mem::take(&mut *lock(&self.refused));
        let retell = !refused.is_empty() && self.refusal_prompts < MAX_REFUSAL_PROMPTS;
        if let (true, Some(session)) = (retell, self.session.clone()) {
            // The agent stopped at a refusal: the model reads why and goes on.
            self.refusal_prompts += 1;
            self.flush_held(out);
            self.at_message_start = true;
            let prompt = refusal_prompt(&refused);
            outbox
                .bytes
                .extend(line(&self.prompt_request(&session, &prompt)));
            return false;
        }
        if let Some(error) = self.held.take() {
            if !dialect::has_usage(result) {
                self.calls = CallUsage::default();
                let message = format!("{}: {error}", self.agent);
                self.events.failed(&message, None, out);
                return true;
            }
            self.events.piece(&error, out);
        }
        let mut calls = std::mem::take(&mut self.calls);
        let mut result = result.clone();
        if self.dialect.usage_is_running_total && dialect::has_usage(&result) {
            let mut total = CallUsage::default();
            total.add(&result["usage"]);
            result["usage"] = total.since(&self.total_before).as_acp();
            self.total_before = total;
            calls = CallUsage::default();
        }
        let cost = match self.cost_before {
            Some(before) => self.cost.map(|cost| cost - before),
            None => {
                self.cost_before = self.cost;
                None
            }
        };
        match result["stopReason"].as_str() {
            Some("cancelled") => {
                let message = format!("{} cancelled the turn", self.agent);
                self.events.failed(&message, None, out);
            }
            Some("refusal") => {
                let message = format!("{} refused to go on", self.agent);
                self.events.failed(&message, None, out);
            }
            // end_turn, and the limits (max_tokens, max_turn_requests): the answer as it
            // stands.
            _ => self.events.finished(turn_usage(&result, calls, cost), out),
        }
        true
    }

    /// The prompt that waited for the handshake.
    fn send_pending(&mut self, session: &str, outbox: &mut Outbox) {
        let prompt = self.pending.take().unwrap_or_default();
        outbox
            .bytes
            .extend(line(&self.prompt_request(session, &prompt)));
    }

    /// A `session/update` as the event it stands for (most updates, such as the agent's
    /// thoughts, its plan or its list of commands, have none).
    fn update(&mut self, update: &Value, out: &mut Vec<Event>) {
        let kind = update["sessionUpdate"].as_str();
        if kind == Some("agent_message_chunk") {
            let Some(text) = update["content"]["text"].as_str() else {
                return;
            };
            if self.dialect.notices_in_text && self.at_message_start {
                match dialect::classify(text) {
                    dialect::Chunk::Notice => {
                        tracing::info!(agent = %self.agent, notice = text, "the agent's notice");
                        return;
                    }
                    dialect::Chunk::MaybeFailure => {
                        self.flush_held(out);
                        self.held = Some(text.to_owned());
                        self.at_message_start = false;
                        return;
                    }
                    dialect::Chunk::Text => {}
                }
            }
            self.flush_held(out);
            self.at_message_start = false;
            self.events.piece(text, out);
            return;
        }
        if matches!(kind, Some("tool_call" | "tool_call_update")) {
            self.flush_held(out);
            self.at_message_start = true;
        }
        if let Some(event) = tool_event(update) {
            self.events.push(event, out);
        }
    }

    /// A held chunk turned out to be the model's text after all.
    fn flush_held(&mut self, out: &mut Vec<Event>) {
        if let Some(text) = self.held.take() {
            self.events.piece(&text, out);
        }
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

/// What the model reads after codecrew refused some of the agent's own tool calls and the
/// agent stopped there ([`Dialect::refusal_ends_turn`]).
fn refusal_prompt(refused: &[String]) -> String {
    format!(
        "codecrew's policy refused {}. Go on without {}: use the codecrew tools you were \
         given for what they can do, or answer with what you have.",
        refused.join("; "),
        if refused.len() == 1 { "it" } else { "them" }
    )
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A tool's `session/update` as the event it stands for (the agent's own tool call, or
/// its result; a call still running has none).
fn tool_event(update: &Value) -> Option<Event> {
    let id = update["toolCallId"].as_str().map(str::to_owned);
    let event = match update["sessionUpdate"].as_str() {
        Some("tool_call") => Event::NativeTool {
            id,
            name: tool_name(update),
            input: match update.get("rawInput") {
                Some(Value::Null) => json!({}),
                Some(input) => input.clone(),
                None => json!({"title": update["title"], "locations": update["locations"]}),
            },
        },
        Some("tool_call_update") => {
            let is_error = match update["status"].as_str() {
                Some("completed") => false,
                Some("failed") => true,
                // Still running: its end comes in a later update.
                _ => return None,
            };
            Event::NativeToolResult {
                id,
                output: tool_output(&update["content"]),
                is_error,
            }
        }
        _ => return None,
    };
    Some(event)
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

/// What a turn used, from the prompt's response: the turn's tokens (Gemini's quota, else
/// ACP's `usage`, else what the model calls reported), and the session's running cost
/// where the agent states one. No tokens at all is no usage, whatever the cost.
fn turn_usage(result: &Value, calls: CallUsage, cost: Option<f64>) -> Option<Usage> {
    let quota = &result["_meta"]["quota"]["token_count"];
    let tokens = if quota.is_object() {
        CallUsage {
            input: quota["input_tokens"].as_u64(),
            output: quota["output_tokens"].as_u64(),
            cached: None,
        }
    } else if result["usage"].is_object() {
        let mut tokens = CallUsage::default();
        tokens.add(&result["usage"]);
        tokens
    } else {
        calls
    };
    if tokens.input.is_none() && tokens.output.is_none() {
        return None;
    }
    Some(Usage {
        input_tokens: tokens.input,
        output_tokens: tokens.output,
        cached_tokens: tokens.cached,
        cost_usd: cost.filter(|cost| cost.is_finite() && *cost >= 0.0),
    })
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
mod recorded;
#[cfg(test)]
mod tests;
