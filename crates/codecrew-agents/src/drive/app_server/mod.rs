//! Codex kept for the whole loop: `codex app-server`, JSON-RPC over stdio (one JSON
//! object per line, no `"jsonrpc"` field).
//!
//! ```text
//! first turn:  initialize → initialized + thread/start (or thread/resume <id>) → turn/start
//! next turns:  turn/start on the same thread
//! a turn:      item/* and thread/tokenUsage/updated notifications … turn/completed
//! ```
//!
//! What the server reports becomes the interception engine's events ([`Event`]): the
//! thread, each agent message whole, the commands Codex runs and their results, errors,
//! and the turn's end with what it used.
//!
//! Codex's own tools answer to codecrew's policy: the thread is opened with
//! `approvalPolicy: untrusted`, under which Codex asks before every command and every
//! patch (`item/commandExecution/requestApproval`, `item/fileChange/requestApproval`),
//! and each question is decided as the codecrew call it amounts to (the command line;
//! a write of each file the patch touches, whose paths came in the `fileChange` item
//! started just before). Codex's own sandbox is off (`danger-full-access`): its
//! bubblewrap cannot run inside the wall codecrew keeps the whole CLI in, and that wall
//! holds what an approved command does (crate::wall). Terminal input to a running
//! command (`unified_exec_tty`) is off, as it would reach a shell without a question.
//! The other requests (wider permissions, elicitations, questions for the user) are
//! declined; codecrew never answers "for the session".

use std::collections::HashMap;
use std::path::Path;

use codecrew_intercept::decode::{Event, Usage};
use serde_json::{Value, json};

use codecrew_tools::Mode;

use super::json_lines::{JsonLines, line};
use super::native::{self, Outbox, Pending, Verdict};
use super::turn_events::TurnEvents;

/// The ids of codecrew's own requests (the server numbers its requests apart).
const INITIALIZE: &str = "codecrew-initialize";
const THREAD: &str = "codecrew-thread";
const TURN: &str = "codecrew-turn";

/// How the thread of a job is opened.
#[derive(Debug, Clone)]
pub struct ThreadSettings {
    pub cwd: String,
    pub mode: Mode,
    pub model: Option<String>,
    /// The stored thread to continue (a `--thread`'s session, or a job's own after a
    /// restart).
    pub resume: Option<String>,
}

/// One kept `codex app-server` conversation.
#[derive(Debug)]
pub struct AppServer {
    settings: ThreadSettings,
    thread: Option<String>,
    /// The prompt waiting for the handshake to finish.
    pending: Option<String>,
    /// The pending turn's output schema (its answer's strict JSON Schema), if any.
    pending_schema: Option<Value>,
    /// The thread's running token totals (as the server last reported them).
    usage: Option<Value>,
    /// The files each patch in flight touches, by item id, from its `item/started`.
    patches: HashMap<String, Vec<String>>,
    /// The turn's events so far.
    events: TurnEvents,
    /// The command items of this turn announced by `item/started`: their completion
    /// reports only the result.
    started: Vec<String>,
    lines: JsonLines,
}

impl AppServer {
    pub fn new(settings: ThreadSettings) -> Self {
        AppServer {
            settings,
            thread: None,
            pending: None,
            pending_schema: None,
            usage: None,
            patches: HashMap::new(),
            events: TurnEvents::default(),
            started: Vec::new(),
            lines: JsonLines::default(),
        }
    }

    /// What starts a turn with `prompt` (its final message held to `schema`, Codex's
    /// `outputSchema`, when given): the handshake first, for the first turn.
    pub fn start_turn(&mut self, prompt: &str, schema: Option<&Value>) -> Vec<u8> {
        self.events = TurnEvents::default();
        self.started.clear();
        match &self.thread {
            Some(thread) => line(&turn_start(thread, prompt, schema)),
            None => {
                self.pending = Some(prompt.to_owned());
                self.pending_schema = schema.cloned();
                line(&json!({
                    "id": INITIALIZE,
                    "method": "initialize",
                    "params": {
                        "clientInfo": {"name": "codecrew", "title": null, "version": env!("CARGO_PKG_VERSION")},
                        "capabilities": {"optOutNotificationMethods": [
                            "account/rateLimits/updated", "remoteControl/status/changed"
                        ]},
                    },
                }))
            }
        }
    }

    /// One chunk of the server's stdout: the turn's events go to `out`, what codecrew
    /// answers goes to `outbox`. True when the turn is over.
    pub fn read(&mut self, bytes: &[u8], out: &mut Vec<Event>, outbox: &mut Outbox) -> bool {
        let mut over = false;
        for message in self.lines.feed(bytes, "codex app-server") {
            over |= self.message(&message, out, outbox);
        }
        over
    }

    fn message(&mut self, message: &Value, out: &mut Vec<Event>, outbox: &mut Outbox) -> bool {
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id");
        match (method, id) {
            (Some(method), Some(id)) => {
                self.request(method, id, &message["params"], outbox);
                false
            }
            (Some(method), None) => self.notification(method, &message["params"], out),
            (None, Some(id)) => self.response(id.as_str().unwrap_or(""), message, out, outbox),
            (None, None) => false,
        }
    }

    /// A request of the server: a question about one of Codex's own tools goes to the
    /// gate; anything else is declined.
    fn request(&mut self, method: &str, id: &Value, params: &Value, outbox: &mut Outbox) {
        let item = params["itemId"].as_str().unwrap_or("").to_owned();
        let calls = match method {
            "item/commandExecution/requestApproval" => {
                let cwd = params["cwd"].as_str().map(Path::new);
                params["command"]
                    .as_str()
                    .map(|command| {
                        native::shell("codex", "exec_command", &item, &script(command), cwd)
                    })
                    .into_iter()
                    .collect()
            }
            "item/fileChange/requestApproval" => self
                .patches
                .remove(&item)
                .unwrap_or_default()
                .iter()
                .map(|path| native::write("codex", "apply_patch", &item, path))
                .collect(),
            _ => {
                outbox.bytes.extend(line(&decline(method, id)));
                return;
            }
        };
        let id = id.clone();
        outbox.pending.push(Pending {
            native: format!(
                "codex's {}",
                if method.contains("command") {
                    "shell"
                } else {
                    "patch"
                }
            ),
            calls,
            answer: Box::new(move |verdict| {
                let decision = match verdict {
                    Verdict::Allow => "accept",
                    Verdict::Deny(_) => "decline",
                };
                line(&json!({"id": id, "result": {"decision": decision}}))
            }),
        });
    }

    fn response(
        &mut self,
        id: &str,
        message: &Value,
        out: &mut Vec<Event>,
        outbox: &mut Outbox,
    ) -> bool {
        if let Some(error) = message.get("error") {
            let text = error["message"]
                .as_str()
                .unwrap_or("codex app-server refused a request");
            let text = format!("codex app-server: {text}");
            self.events.failed(&text, None, out);
            return true;
        }
        match id {
            INITIALIZE => {
                outbox.bytes.extend(line(&json!({"method": "initialized"})));
                outbox.bytes.extend(line(&self.open_thread()));
            }
            THREAD => {
                let Some(thread) = message["result"]["thread"]["id"].as_str() else {
                    let text = "codex app-server opened a thread without an id";
                    self.events.failed(text, None, out);
                    return true;
                };
                self.thread = Some(thread.to_owned());
                // The model is only in Codex's config, never in what the server says.
                self.events.session(thread, None, out);
                let prompt = self.pending.take().unwrap_or_default();
                let schema = self.pending_schema.take();
                outbox
                    .bytes
                    .extend(line(&turn_start(thread, &prompt, schema.as_ref())));
            }
            _ => {}
        }
        false
    }

    fn open_thread(&self) -> Value {
        let settings = &self.settings;
        // Every command and patch asks codecrew; the CLI's wall confines what runs.
        let mut params = json!({
            "cwd": settings.cwd,
            "sandbox": "danger-full-access",
            "approvalPolicy": "untrusted",
            "config": {"features.unified_exec_tty": false},
        });
        if let Some(model) = &settings.model {
            params["model"] = json!(model);
        }
        let method = match &settings.resume {
            Some(thread) => {
                tracing::info!("codex app-server: thread/resume {thread}");
                params["threadId"] = json!(thread);
                params["excludeTurns"] = json!(true);
                "thread/resume"
            }
            None => "thread/start",
        };
        json!({"id": THREAD, "method": method, "params": params})
    }

    fn notification(&mut self, method: &str, params: &Value, out: &mut Vec<Event>) -> bool {
        match method {
            "item/started" if params["item"]["type"] == "fileChange" => {
                let item = &params["item"];
                // Each file the patch adds, changes or deletes, and where one moves to.
                let paths = item["changes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .flat_map(|change| {
                        [
                            change["path"].as_str(),
                            change["kind"]["move_path"].as_str(),
                        ]
                    })
                    .flatten()
                    .map(str::to_owned)
                    .collect();
                if let Some(id) = item["id"].as_str() {
                    self.patches.insert(id.to_owned(), paths);
                }
            }
            "item/started" if params["item"]["type"] == "commandExecution" => {
                let item = &params["item"];
                if let Some(id) = item["id"].as_str() {
                    self.started.push(id.to_owned());
                }
                self.events.push(command(item), out);
            }
            "item/completed" => {
                let item = &params["item"];
                match item["type"].as_str() {
                    Some("agentMessage") => {
                        let text = item["text"].as_str().unwrap_or_default().to_owned();
                        self.events.message(text, out);
                    }
                    Some("commandExecution") => self.command_completed(item, out),
                    _ => {}
                }
            }
            "thread/tokenUsage/updated" => {
                self.usage = Some(params["tokenUsage"]["total"].clone());
            }
            "error" if params["willRetry"] != true => {
                let text = params["error"]["message"]
                    .as_str()
                    .unwrap_or("codex reported an error");
                self.events.error(error_text(Some(text)), out);
            }
            "turn/completed" => {
                let turn = &params["turn"];
                let usage = self.usage.as_ref().map(|total| Usage {
                    input_tokens: total["inputTokens"].as_u64(),
                    output_tokens: total["outputTokens"].as_u64(),
                    cached_tokens: total["cachedInputTokens"].as_u64(),
                    cost_usd: None,
                });
                match turn["status"].as_str() {
                    Some("completed") => self.events.finished(usage, out),
                    Some("interrupted") => {
                        self.events.failed("codex interrupted the turn", usage, out);
                    }
                    _ => {
                        let message = error_text(turn["error"]["message"].as_str());
                        self.events.failed(message, usage, out);
                    }
                }
                return true;
            }
            _ => {}
        }
        false
    }
}

impl AppServer {
    /// A command Codex ran: its call, unless `item/started` announced it, and its result.
    fn command_completed(&mut self, item: &Value, out: &mut Vec<Event>) {
        let id = item["id"].as_str();
        let announced = id
            .and_then(|id| self.started.iter().position(|seen| seen == id))
            .map(|index| self.started.swap_remove(index))
            .is_some();
        if !announced {
            self.events.push(command(item), out);
        }
        let is_error = match item["exitCode"].as_i64() {
            Some(code) => code != 0,
            // Declined or failed before running.
            None => item["status"] != "completed",
        };
        let result = Event::NativeToolResult {
            id: id.map(str::to_owned),
            output: item["aggregatedOutput"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            is_error,
        };
        self.events.push(result, out);
    }
}

/// A `commandExecution` item as the call of Codex's own tool it is.
fn command(item: &Value) -> Event {
    Event::NativeTool {
        id: item["id"].as_str().map(str::to_owned),
        name: "command_execution".to_owned(),
        input: json!({"command": item["command"].as_str().unwrap_or_default()}),
    }
}

/// What an error says, or that there was one.
fn error_text(message: Option<&str>) -> &str {
    match message {
        Some(message) if !message.is_empty() => message,
        _ => "Codex reported an error",
    }
}

fn turn_start(thread: &str, prompt: &str, schema: Option<&Value>) -> Value {
    let mut params = json!({"threadId": thread, "input": [{"type": "text", "text": prompt}]});
    if let Some(schema) = schema {
        params["outputSchema"] = schema.clone();
    }
    json!({"id": TURN, "method": "turn/start", "params": params})
}

/// The script of a command Codex runs as `/bin/bash -lc '<script>'`, which is what the
/// policy judges; any other command line is judged whole.
fn script(command: &str) -> String {
    match shlex::split(command).as_deref() {
        Some([shell, flag, script])
            if matches!(
                Path::new(shell).file_name().and_then(|name| name.to_str()),
                Some("bash" | "sh" | "zsh")
            ) && matches!(flag.as_str(), "-c" | "-lc") =>
        {
            script.clone()
        }
        _ => command.to_owned(),
    }
}

/// The answer that grants nothing, for each kind of request the server makes.
fn decline(method: &str, id: &Value) -> Value {
    tracing::info!(method, "declined a request of codex app-server");
    let result = match method {
        "item/commandExecution/requestApproval"
        | "item/fileChange/requestApproval"
        | "execCommandApproval"
        | "applyPatchApproval" => json!({"decision": "decline"}),
        "item/permissions/requestApproval" => json!({"permissions": {}, "scope": "turn"}),
        "mcpServer/elicitation/request" => json!({"action": "decline", "content": null}),
        _ => {
            return json!({"id": id, "error": {
                "code": -32601,
                "message": format!("codecrew does not answer {method}"),
            }});
        }
    };
    json!({"id": id, "result": result})
}

#[cfg(test)]
mod tests;
