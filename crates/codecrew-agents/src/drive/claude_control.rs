//! Claude Code's control protocol on a kept process's stream-json pipes: how codecrew
//! decides every one of Claude's own tool calls.
//!
//! ```text
//! codecrew → initialize {hooks: PreToolUse "*" → codecrew-pre-tool-use}   (before the first user line)
//! claude   → control_request hook_callback {tool_name, tool_input, cwd, tool_use_id}
//! codecrew → control_response {hookSpecificOutput: {permissionDecision: allow | deny}}
//! claude   → control_request can_use_tool {tool_name, input, tool_use_id}
//! codecrew → control_response {behavior: allow | deny, message}
//! ```
//!
//! The hook fires for every tool call, reads inside the working directory included,
//! which Claude's own permission check lets through without asking. Claude still asks
//! (`can_use_tool`, through `--permission-prompt-tool stdio`) for what its own safety
//! checks hold back even after a hook allowed it (`.git/`, `.claude/settings.json`):
//! a call the hook already allowed is allowed there without a second question; any other
//! is judged afresh. The hook blocks when codecrew's answer fails or times out, so a call
//! never runs for want of an answer. Everything else on stdout passes through to the
//! decoder, which skips the control lines.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::claude_tools;
use super::json_lines::{JsonLines, line};
use super::native::{Native, Outbox, Pending, Verdict};

/// The id codecrew's hook is registered under.
const HOOK: &str = "codecrew-pre-tool-use";
/// The id of the `initialize` request.
const INITIALIZE: &str = "codecrew-initialize";
/// How long Claude waits for a hook answer, in seconds: long enough for the user to
/// answer a prompt; the job's turn timeout still holds.
const HOOK_TIMEOUT_SECS: u64 = 3600;

/// One kept Claude's control conversation.
#[derive(Debug, Default)]
pub struct ClaudeControl {
    initialized: bool,
    /// The tool calls codecrew's hook allowed, by `tool_use_id`.
    allowed: Arc<Mutex<HashSet<String>>>,
    lines: JsonLines,
}

impl ClaudeControl {
    /// What starts a turn with `prompt`: the hook's registration first, for the first
    /// turn (Claude applies hooks registered before its first user message only).
    pub fn start_turn(&mut self, prompt: &str) -> Vec<u8> {
        let mut bytes = Vec::new();
        if !self.initialized {
            self.initialized = true;
            bytes.extend(line(&json!({
                "type": "control_request",
                "request_id": INITIALIZE,
                "request": {
                    "subtype": "initialize",
                    "hooks": {"PreToolUse": [{
                        "matcher": "*",
                        "hookCallbackIds": [HOOK],
                        "timeout": HOOK_TIMEOUT_SECS,
                        "onFailure": "block",
                    }]},
                },
            })));
        }
        bytes.extend(line(&json!({
            "type": "user",
            "message": {"role": "user", "content": prompt},
        })));
        bytes
    }

    /// One chunk of Claude's stdout: its questions go to `outbox`.
    pub fn read(&mut self, bytes: &[u8], outbox: &mut Outbox) {
        for message in self.lines.feed_of_type(bytes, "claude", "control_request") {
            self.request(&message, outbox);
        }
    }

    fn request(&mut self, message: &Value, outbox: &mut Outbox) {
        let id = message["request_id"].clone();
        let request = &message["request"];
        match request["subtype"].as_str() {
            Some("hook_callback") => {
                let input = &request["input"];
                let tool = input["tool_name"].as_str().unwrap_or("");
                let tool_use = input["tool_use_id"]
                    .as_str()
                    .or(request["tool_use_id"].as_str())
                    .unwrap_or("")
                    .to_owned();
                let native = claude_tools::native(
                    tool,
                    &input["tool_input"],
                    &tool_use,
                    input["cwd"].as_str(),
                );
                let allowed = Arc::clone(&self.allowed);
                let answer = move |verdict: &Verdict| {
                    if *verdict == Verdict::Allow
                        && let Ok(mut allowed) = allowed.lock()
                    {
                        allowed.insert(tool_use);
                    }
                    success(&id, hook_answer(verdict))
                };
                queue(tool, native, Box::new(answer), outbox);
            }
            Some("can_use_tool") => {
                let tool = request["tool_name"].as_str().unwrap_or("");
                let tool_use = request["tool_use_id"].as_str().unwrap_or("");
                let hook_allowed = self
                    .allowed
                    .lock()
                    .is_ok_and(|allowed| allowed.contains(tool_use));
                let native = if hook_allowed {
                    Native::Harmless
                } else {
                    claude_tools::native(tool, &request["input"], tool_use, None)
                };
                let answer = move |verdict: &Verdict| success(&id, permission_answer(verdict));
                queue(tool, native, Box::new(answer), outbox);
            }
            Some(subtype) => {
                tracing::debug!(
                    subtype,
                    "claude sent a control request codecrew does not answer"
                );
                outbox.bytes.extend(line(&json!({
                    "type": "control_response",
                    "response": {
                        "subtype": "error",
                        "request_id": id,
                        "error": format!("codecrew does not answer {subtype}"),
                    },
                })));
            }
            None => {}
        }
    }
}

/// Answers a harmless call at once; leaves the others to the gate.
fn queue(tool: &str, native: Native, answer: super::native::Reply, outbox: &mut Outbox) {
    match native {
        Native::Harmless => outbox.bytes.extend(answer(&Verdict::Allow)),
        Native::Judged(calls) => outbox.pending.push(Pending {
            native: format!("claude's {tool}"),
            calls,
            answer,
        }),
    }
}

fn success(id: &Value, response: Value) -> Vec<u8> {
    line(&json!({
        "type": "control_response",
        "response": {"subtype": "success", "request_id": id, "response": response},
    }))
}

fn hook_answer(verdict: &Verdict) -> Value {
    let (decision, reason) = match verdict {
        Verdict::Allow => ("allow", "codecrew's policy allows it"),
        Verdict::Deny(reason) => ("deny", reason.as_str()),
    };
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    }})
}

fn permission_answer(verdict: &Verdict) -> Value {
    match verdict {
        Verdict::Allow => json!({"behavior": "allow"}),
        Verdict::Deny(reason) => json!({"behavior": "deny", "message": reason}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drive::json_lines::parse_lines as lines;

    fn hook(tool: &str, input: Value, id: &str) -> Vec<u8> {
        line(
            &json!({"type": "control_request", "request_id": format!("r-{id}"), "request": {
                "subtype": "hook_callback", "callback_id": HOOK, "tool_use_id": id,
                "input": {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input,
                          "tool_use_id": id, "cwd": "/w"},
            }}),
        )
    }

    #[test]
    fn the_hook_is_registered_before_the_first_message_only() {
        let mut control = ClaudeControl::default();
        let first = lines(&control.start_turn("hello"));
        assert_eq!(first[0]["request"]["subtype"], "initialize");
        let hook = &first[0]["request"]["hooks"]["PreToolUse"][0];
        assert_eq!(hook["matcher"], "*");
        assert_eq!(hook["onFailure"], "block");
        assert_eq!(first[1]["type"], "user");
        let next = lines(&control.start_turn("again"));
        assert_eq!(next.len(), 1);
        assert_eq!(next[0]["message"]["content"], "again");
    }

    #[test]
    fn every_tool_call_is_a_question_and_the_answer_is_claudes_hook_output() {
        let mut control = ClaudeControl::default();
        let mut outbox = Outbox::default();
        control.read(
            &hook("Read", json!({"file_path": "/w/.env"}), "t1"),
            &mut outbox,
        );
        assert!(outbox.bytes.is_empty());
        let question = outbox.pending.pop().unwrap();
        assert_eq!(question.calls[0].tool, "read_file");
        let answer = lines(&question.answer_now(&Verdict::Deny("sensitive".into())));
        assert_eq!(answer[0]["response"]["request_id"], "r-t1");
        let output = &answer[0]["response"]["response"]["hookSpecificOutput"];
        assert_eq!(output["permissionDecision"], "deny");
        assert_eq!(output["permissionDecisionReason"], "sensitive");
    }

    #[test]
    fn a_call_the_hook_allowed_is_not_asked_about_twice() {
        let mut control = ClaudeControl::default();
        let mut outbox = Outbox::default();
        control.read(
            &hook("Write", json!({"file_path": "/w/.git/config"}), "t2"),
            &mut outbox,
        );
        let question = outbox.pending.pop().unwrap();
        let answer = lines(&question.answer_now(&Verdict::Allow));
        assert_eq!(
            answer[0]["response"]["response"]["hookSpecificOutput"]["permissionDecision"],
            "allow"
        );
        let ask = |id: &str| {
            line(
                &json!({"type": "control_request", "request_id": "c1", "request": {
                    "subtype": "can_use_tool", "tool_name": "Write",
                    "input": {"file_path": "/w/.git/config"}, "tool_use_id": id,
                }}),
            )
        };
        control.read(&ask("t2"), &mut outbox);
        assert!(outbox.pending.is_empty(), "already allowed by the hook");
        let answer = lines(&std::mem::take(&mut outbox.bytes));
        assert_eq!(answer[0]["response"]["response"]["behavior"], "allow");
        // One the hook never saw is judged.
        control.read(&ask("t3"), &mut outbox);
        let question = outbox.pending.pop().unwrap();
        let answer = lines(&question.answer_now(&Verdict::Deny("protected".into())));
        assert_eq!(answer[0]["response"]["response"]["behavior"], "deny");
        assert_eq!(answer[0]["response"]["response"]["message"], "protected");
    }

    #[test]
    fn harmless_tools_are_allowed_at_once_and_other_requests_get_an_error() {
        let mut control = ClaudeControl::default();
        let mut outbox = Outbox::default();
        control.read(&hook("TodoWrite", json!({"todos": []}), "t4"), &mut outbox);
        assert!(outbox.pending.is_empty());
        let answer = lines(&std::mem::take(&mut outbox.bytes));
        assert_eq!(
            answer[0]["response"]["response"]["hookSpecificOutput"]["permissionDecision"],
            "allow"
        );
        let other = line(&json!({"type": "control_request", "request_id": "m1",
                                 "request": {"subtype": "mcp_message"}}));
        control.read(&other, &mut outbox);
        assert_eq!(lines(&outbox.bytes)[0]["response"]["subtype"], "error");
    }
}
