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
//! `turn.failed`, `error`), so one decoder serves both ways of running Codex.
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

use serde_json::{Value, json};

use codecrew_tools::Mode;

use super::json_lines::{JsonLines, line};
use super::native::{self, Outbox, Pending, Verdict};

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
    /// The files each patch in flight touches, by item id, from its `item/started`.
    patches: HashMap<String, Vec<String>>,
    lines: JsonLines,
}

impl AppServer {
    pub fn new(settings: ThreadSettings) -> Self {
        AppServer {
            settings,
            thread: None,
            pending: None,
            usage: None,
            patches: HashMap::new(),
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
    pub fn read(&mut self, bytes: &[u8], decoded: &mut Vec<u8>, outbox: &mut Outbox) -> bool {
        let mut over = false;
        for message in self.lines.feed(bytes, "codex app-server") {
            over |= self.message(&message, decoded, outbox);
        }
        over
    }

    fn message(&mut self, message: &Value, decoded: &mut Vec<u8>, outbox: &mut Outbox) -> bool {
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id");
        match (method, id) {
            (Some(method), Some(id)) => {
                self.request(method, id, &message["params"], outbox);
                false
            }
            (Some(method), None) => self.notification(method, &message["params"], decoded),
            (None, Some(id)) => self.response(id.as_str().unwrap_or(""), message, decoded, outbox),
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
        decoded: &mut Vec<u8>,
        outbox: &mut Outbox,
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
                outbox.bytes.extend(line(&json!({"method": "initialized"})));
                outbox.bytes.extend(line(&self.open_thread()));
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
                outbox.bytes.extend(line(&turn_start(thread, &prompt)));
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

    fn notification(&mut self, method: &str, params: &Value, decoded: &mut Vec<u8>) -> bool {
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
mod tests {
    use super::*;
    use crate::drive::json_lines::parse_lines as lines;

    fn server(resume: Option<&str>) -> AppServer {
        AppServer::new(ThreadSettings {
            cwd: "/ws".to_owned(),
            mode: Mode::Query,
            model: Some("gpt-5.5".to_owned()),
            resume: resume.map(str::to_owned),
        })
    }

    fn feed(server: &mut AppServer, message: Value) -> (Vec<Value>, Vec<Value>, bool) {
        let (decoded, outbox, over) = feed_outbox(server, message);
        assert!(outbox.pending.is_empty());
        (decoded, lines(&outbox.bytes), over)
    }

    fn feed_outbox(server: &mut AppServer, message: Value) -> (Vec<Value>, Outbox, bool) {
        let (mut decoded, mut outbox) = (Vec::new(), Outbox::default());
        let over = server.read(&line(&message), &mut decoded, &mut outbox);
        (lines(&decoded), outbox, over)
    }

    #[test]
    fn the_first_turn_shakes_hands_opens_the_thread_then_prompts() {
        let mut app = server(None);
        let first = lines(&app.start_turn("hello"));
        assert_eq!(first[0]["method"], "initialize");
        let (_, replies, _) = feed(&mut app, json!({"id": INITIALIZE, "result": {}}));
        assert_eq!(replies[0], json!({"method": "initialized"}));
        assert_eq!(replies[1]["method"], "thread/start");
        assert_eq!(replies[1]["params"]["sandbox"], "danger-full-access");
        assert_eq!(replies[1]["params"]["approvalPolicy"], "untrusted");
        assert_eq!(
            replies[1]["params"]["config"]["features.unified_exec_tty"],
            false
        );
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
    fn commands_and_patches_are_questions_and_other_requests_are_declined() {
        let mut app = server(None);
        let (_, mut outbox, _) = feed_outbox(
            &mut app,
            json!({"id": 0, "method": "item/commandExecution/requestApproval", "params": {
                "itemId": "call_1", "command": "/bin/bash -lc 'cat .env | head'", "cwd": "/ws/sub"}}),
        );
        let question = outbox.pending.pop().unwrap();
        assert_eq!(question.calls[0].tool, "run_command");
        assert_eq!(question.calls[0].input["command"], "cat .env | head");
        assert_eq!(question.calls[0].input["cwd"], "/ws/sub");
        assert_eq!(
            lines(&question.answer_now(&Verdict::Deny("asks".into()))),
            [json!({"id": 0, "result": {"decision": "decline"}})]
        );

        feed(
            &mut app,
            json!({"method": "item/started", "params": {"item": {"type": "fileChange", "id": "call_2",
                "changes": [{"path": "/ws/a.txt", "kind": {"type": "add"}},
                            {"path": "/ws/b.txt", "kind": {"type": "update", "move_path": "/ws/.env"}}]}}}),
        );
        let (_, mut outbox, _) = feed_outbox(
            &mut app,
            json!({"id": 1, "method": "item/fileChange/requestApproval", "params": {"itemId": "call_2"}}),
        );
        let question = outbox.pending.pop().unwrap();
        let paths: Vec<&Value> = question.calls.iter().map(|c| &c.input["path"]).collect();
        assert_eq!(paths, ["/ws/a.txt", "/ws/b.txt", "/ws/.env"]);
        assert_eq!(
            lines(&question.answer_now(&Verdict::Allow)),
            [json!({"id": 1, "result": {"decision": "accept"}})]
        );
        // A patch whose files codecrew never saw cannot be judged: nothing to allow.
        let (_, mut outbox, _) = feed_outbox(
            &mut app,
            json!({"id": 2, "method": "item/fileChange/requestApproval", "params": {"itemId": "call_9"}}),
        );
        assert!(outbox.pending.pop().unwrap().calls.is_empty());

        let (_, replies, _) = feed(
            &mut app,
            json!({"id": 3, "method": "item/permissions/requestApproval", "params": {}}),
        );
        assert_eq!(
            replies,
            [json!({"id": 3, "result": {"permissions": {}, "scope": "turn"}})]
        );
        let (_, replies, _) = feed(
            &mut app,
            json!({"id": 7, "method": "item/tool/call", "params": {}}),
        );
        assert_eq!(replies[0]["error"]["code"], -32601);
    }

    #[test]
    fn a_bash_wrapper_is_judged_by_its_script() {
        assert_eq!(script("/bin/bash -lc 'ls -la && cat a'"), "ls -la && cat a");
        assert_eq!(script("bash -c 'x'"), "x");
        assert_eq!(script("python3 -c 'x'"), "python3 -c 'x'");
        assert_eq!(script("/bin/bash -lc 'a' extra"), "/bin/bash -lc 'a' extra");
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
