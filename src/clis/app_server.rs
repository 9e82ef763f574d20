//! Codex kept for the whole loop: `codex app-server`, JSON-RPC over stdio (one JSON
//! object per line, no `"jsonrpc"` field).
//!
//! ```text
//! first turn:  initialize → initialized + thread/start (or thread/resume <id>) → turn/start
//! next turns:  turn/start on the same thread
//! a turn:      item/* and thread/tokenUsage/updated notifications … turn/completed
//! ```
//!
//! What the server reports is rewritten as the `codex exec --json` events codecrew's Codex
//! decoder already reads (`thread.started`, `item.completed`, `turn.completed`,
//! `turn.failed`, `error`), so one decoder serves both ways of running Codex. The
//! server's requests of its client (approving a command or a file change, granting
//! permissions, answering an elicitation) are all declined: Codex's own tools run inside
//! the sandbox of the mode without asking (`approvalPolicy: on-request`), and whatever
//! would leave it is refused, as `codex exec` refuses it headless. codecrew never grants.

use serde_json::{Value, json};

use codecrew_tools::Mode;

use super::json_lines::{JsonLines, line};

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
    /// The thread's running token totals (as the server last reported them).
    usage: Option<Value>,
    lines: JsonLines,
}

impl AppServer {
    pub fn new(settings: ThreadSettings) -> Self {
        AppServer {
            settings,
            thread: None,
            pending: None,
            usage: None,
            lines: JsonLines::default(),
        }
    }

    /// What starts a turn with `prompt`: the handshake first, for the first turn.
    pub fn start_turn(&mut self, prompt: &str) -> Vec<u8> {
        match &self.thread {
            Some(thread) => line(&turn_start(thread, prompt)),
            None => {
                self.pending = Some(prompt.to_owned());
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

    /// One chunk of the server's stdout: the `exec --json` lines for the decoder go to
    /// `decoded`, what codecrew answers goes to `replies`. True when the turn is over.
    pub fn read(&mut self, bytes: &[u8], decoded: &mut Vec<u8>, replies: &mut Vec<u8>) -> bool {
        let mut over = false;
        for message in self.lines.feed(bytes, "codex app-server") {
            over |= self.message(&message, decoded, replies);
        }
        over
    }

    fn message(&mut self, message: &Value, decoded: &mut Vec<u8>, replies: &mut Vec<u8>) -> bool {
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id");
        match (method, id) {
            // A request of the server: declined.
            (Some(method), Some(id)) => {
                replies.extend(line(&decline(method, id)));
                false
            }
            (Some(method), None) => self.notification(method, &message["params"], decoded),
            (None, Some(id)) => self.response(id.as_str().unwrap_or(""), message, decoded, replies),
            (None, None) => false,
        }
    }

    fn response(
        &mut self,
        id: &str,
        message: &Value,
        decoded: &mut Vec<u8>,
        replies: &mut Vec<u8>,
    ) -> bool {
        if let Some(error) = message.get("error") {
            let text = error["message"]
                .as_str()
                .unwrap_or("codex app-server refused a request");
            let text = format!("codex app-server: {text}");
            decoded.extend(line(&json!({"type": "error", "message": text})));
            decoded.extend(line(
                &json!({"type": "turn.failed", "error": {"message": text}}),
            ));
            return true;
        }
        match id {
            INITIALIZE => {
                replies.extend(line(&json!({"method": "initialized"})));
                replies.extend(line(&self.open_thread()));
            }
            THREAD => {
                let Some(thread) = message["result"]["thread"]["id"].as_str() else {
                    let text = "codex app-server opened a thread without an id";
                    decoded.extend(line(
                        &json!({"type": "turn.failed", "error": {"message": text}}),
                    ));
                    return true;
                };
                self.thread = Some(thread.to_owned());
                decoded.extend(line(
                    &json!({"type": "thread.started", "thread_id": thread}),
                ));
                let prompt = self.pending.take().unwrap_or_default();
                replies.extend(line(&turn_start(thread, &prompt)));
            }
            _ => {}
        }
        false
    }

    fn open_thread(&self) -> Value {
        let settings = &self.settings;
        let sandbox = match settings.mode {
            Mode::Query => "read-only",
            Mode::Execute => "workspace-write",
        };
        let mut params = json!({
            "cwd": settings.cwd,
            "sandbox": sandbox,
            "approvalPolicy": "on-request",
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

    fn notification(&mut self, method: &str, params: &Value, decoded: &mut Vec<u8>) -> bool {
        match method {
            "item/started" if params["item"]["type"] == "commandExecution" => {
                decoded.extend(line(
                    &json!({"type": "item.started", "item": command(&params["item"])}),
                ));
            }
            "item/completed" => {
                let item = &params["item"];
                let exec = match item["type"].as_str() {
                    Some("agentMessage") => json!({
                        "id": item["id"], "type": "agent_message", "text": item["text"],
                    }),
                    Some("commandExecution") => command(item),
                    _ => return false,
                };
                decoded.extend(line(&json!({"type": "item.completed", "item": exec})));
            }
            "thread/tokenUsage/updated" => {
                self.usage = Some(params["tokenUsage"]["total"].clone());
            }
            "error" if params["willRetry"] != true => {
                let text = params["error"]["message"]
                    .as_str()
                    .unwrap_or("codex reported an error");
                decoded.extend(line(&json!({"type": "error", "message": text})));
            }
            "turn/completed" => {
                let turn = &params["turn"];
                let usage = self.usage.as_ref().map(|total| {
                    json!({
                        "input_tokens": total["inputTokens"],
                        "cached_input_tokens": total["cachedInputTokens"],
                        "output_tokens": total["outputTokens"],
                    })
                });
                let event = match turn["status"].as_str() {
                    Some("completed") => json!({"type": "turn.completed", "usage": usage}),
                    Some("interrupted") => json!({
                        "type": "turn.failed", "usage": usage,
                        "error": {"message": "codex interrupted the turn"},
                    }),
                    _ => json!({
                        "type": "turn.failed", "usage": usage,
                        "error": {"message": turn["error"]["message"]},
                    }),
                };
                decoded.extend(line(&event));
                return true;
            }
            _ => {}
        }
        false
    }
}

/// A `commandExecution` item as `exec --json` names its `command_execution`.
fn command(item: &Value) -> Value {
    json!({
        "id": item["id"], "type": "command_execution", "command": item["command"],
        "aggregated_output": item["aggregatedOutput"], "exit_code": item["exitCode"],
        "status": item["status"],
    })
}

fn turn_start(thread: &str, prompt: &str) -> Value {
    json!({
        "id": TURN,
        "method": "turn/start",
        "params": {"threadId": thread, "input": [{"type": "text", "text": prompt}]},
    })
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
mod tests {
    use super::*;

    fn server(resume: Option<&str>) -> AppServer {
        AppServer::new(ThreadSettings {
            cwd: "/ws".to_owned(),
            mode: Mode::Query,
            model: Some("gpt-5.5".to_owned()),
            resume: resume.map(str::to_owned),
        })
    }

    fn lines(bytes: &[u8]) -> Vec<Value> {
        String::from_utf8_lossy(bytes)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn feed(server: &mut AppServer, message: Value) -> (Vec<Value>, Vec<Value>, bool) {
        let (mut decoded, mut replies) = (Vec::new(), Vec::new());
        let over = server.read(&line(&message), &mut decoded, &mut replies);
        (lines(&decoded), lines(&replies), over)
    }

    #[test]
    fn the_first_turn_shakes_hands_opens_the_thread_then_prompts() {
        let mut app = server(None);
        let first = lines(&app.start_turn("hello"));
        assert_eq!(first[0]["method"], "initialize");
        let (_, replies, _) = feed(&mut app, json!({"id": INITIALIZE, "result": {}}));
        assert_eq!(replies[0], json!({"method": "initialized"}));
        assert_eq!(replies[1]["method"], "thread/start");
        assert_eq!(replies[1]["params"]["sandbox"], "read-only");
        assert_eq!(replies[1]["params"]["model"], "gpt-5.5");
        let (decoded, replies, _) = feed(
            &mut app,
            json!({"id": THREAD, "result": {"thread": {"id": "T1"}}}),
        );
        assert_eq!(
            decoded,
            [json!({"type": "thread.started", "thread_id": "T1"})]
        );
        assert_eq!(replies[0]["method"], "turn/start");
        assert_eq!(replies[0]["params"]["input"][0]["text"], "hello");
        // The next turn goes straight to the thread.
        let next = lines(&app.start_turn("again"));
        assert_eq!(next[0]["params"]["threadId"], "T1");
    }

    #[test]
    fn a_turn_becomes_exec_events_and_ends_with_its_running_usage() {
        let mut app = server(Some("T0"));
        app.start_turn("hi");
        let (_, replies, _) = feed(&mut app, json!({"id": INITIALIZE, "result": {}}));
        assert_eq!(replies[1]["method"], "thread/resume");
        assert_eq!(replies[1]["params"]["threadId"], "T0");
        feed(
            &mut app,
            json!({"id": THREAD, "result": {"thread": {"id": "T0"}}}),
        );
        let (decoded, _, over) = feed(
            &mut app,
            json!({"method": "item/completed", "params": {
            "item": {"type": "agentMessage", "id": "m1", "text": "Hello."}}}),
        );
        assert!(!over);
        assert_eq!(decoded[0]["item"]["type"], "agent_message");
        assert_eq!(decoded[0]["item"]["text"], "Hello.");
        feed(
            &mut app,
            json!({"method": "thread/tokenUsage/updated", "params": {"tokenUsage": {
            "total": {"inputTokens": 215, "cachedInputTokens": 0, "outputTokens": 9}}}}),
        );
        let (decoded, _, over) = feed(
            &mut app,
            json!({"method": "turn/completed",
            "params": {"turn": {"status": "completed"}}}),
        );
        assert!(over);
        assert_eq!(decoded[0]["type"], "turn.completed");
        assert_eq!(decoded[0]["usage"]["input_tokens"], 215);
    }

    #[test]
    fn every_request_of_the_server_is_declined() {
        let mut app = server(None);
        for (method, answer) in [
            (
                "item/commandExecution/requestApproval",
                json!({"decision": "decline"}),
            ),
            (
                "item/fileChange/requestApproval",
                json!({"decision": "decline"}),
            ),
            (
                "item/permissions/requestApproval",
                json!({"permissions": {}, "scope": "turn"}),
            ),
        ] {
            let (_, replies, _) = feed(&mut app, json!({"id": 0, "method": method, "params": {}}));
            assert_eq!(replies, [json!({"id": 0, "result": answer})], "{method}");
        }
        let (_, replies, _) = feed(
            &mut app,
            json!({"id": 7, "method": "item/tool/call", "params": {}}),
        );
        assert_eq!(replies[0]["error"]["code"], -32601);
    }

    #[test]
    fn failures_end_the_turn_as_failed_turns() {
        let mut app = server(Some("gone"));
        app.start_turn("hi");
        feed(&mut app, json!({"id": INITIALIZE, "result": {}}));
        let (decoded, _, over) = feed(
            &mut app,
            json!({"id": THREAD,
            "error": {"code": -32600, "message": "thread not found: gone"}}),
        );
        assert!(over);
        assert_eq!(decoded[1]["type"], "turn.failed");
        assert!(
            decoded[0]["message"]
                .as_str()
                .unwrap()
                .contains("thread not found")
        );
        // Retries in progress are not errors; a failed turn is.
        let (decoded, _, _) = feed(
            &mut app,
            json!({"method": "error", "params": {
            "error": {"message": "Reconnecting... 1/5"}, "willRetry": true}}),
        );
        assert!(decoded.is_empty());
        let (decoded, _, over) = feed(
            &mut app,
            json!({"method": "turn/completed", "params": {
            "turn": {"status": "failed", "error": {"message": "HTTP 500"}}}}),
        );
        assert!(over);
        assert_eq!(decoded[0]["error"]["message"], "HTTP 500");
    }
}
