//! The CLIs' own tools under codecrew's policy. A kept CLI asks before it runs one of its
//! own tools (Claude's `can_use_tool` and `PreToolUse` hook, ACP's
//! `session/request_permission`, the Codex app server's approval requests); the module
//! that speaks its protocol turns the question into the codecrew call it amounts to (a
//! write with its path, a shell command, a read with its path) and leaves it in the
//! [`Outbox`], with how to answer. The job's [`NativeGate`] decides it exactly as that
//! codecrew call: mode, rules, path classes, shell analysis, the prompt or `--yes`, the
//! audit log. What the CLI does without asking stays inside its wall (`super::wall`).

use std::future::Future;
use std::path::Path;
use std::pin::Pin;

use codecrew_tools::ToolExecutor;
use codecrew_tools::executor::CallRequest;
use serde_json::{Value, json};

/// The answer to a CLI's question about one of its own tool calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Refused, with the reason the model reads.
    Deny(String),
}

/// Builds the CLI's answer (one line of its protocol) from a verdict.
pub type Reply = Box<dyn FnOnce(&Verdict) -> Vec<u8> + Send>;

/// A CLI's question about one of its own tool calls, and how to answer it.
pub struct Pending {
    /// The CLI's name for its tool, for messages.
    pub native: String,
    /// The codecrew calls it amounts to, each of which must be allowed (a patch of
    /// several files is one call per file); none when codecrew cannot tell what the tool
    /// does, and then it is refused.
    pub calls: Vec<CallRequest>,
    pub answer: Reply,
}

impl Pending {
    /// The question answered with `verdict` at once.
    pub fn answer_now(self, verdict: &Verdict) -> Vec<u8> {
        (self.answer)(verdict)
    }
}

/// What one of a CLI's own tool calls amounts to.
#[derive(Debug, Clone, PartialEq)]
pub enum Native {
    /// It neither touches files nor runs anything (a to-do list, a sub-agent whose own
    /// calls come through the same bridge): allowed without a question.
    Harmless,
    /// These codecrew calls, each of which must be allowed.
    Judged(Vec<CallRequest>),
}

/// What codecrew has to send a kept CLI after reading a chunk of its output: lines to
/// write at once, and questions to decide first.
#[derive(Default)]
pub struct Outbox {
    pub bytes: Vec<u8>,
    pub pending: Vec<Pending>,
}

impl Outbox {
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty() && self.pending.is_empty()
    }
}

/// Decides the CLIs' own tool calls: the job's tool executor, judging each as the
/// codecrew call it amounts to.
pub trait NativeGate: Send + Sync {
    fn decide<'a>(
        &'a self,
        call: &'a CallRequest,
    ) -> Pin<Box<dyn Future<Output = Verdict> + Send + 'a>>;
}

/// The job's tool executor decides: the call's mode check, policy, asker and audit.
impl NativeGate for ToolExecutor {
    fn decide<'a>(
        &'a self,
        call: &'a CallRequest,
    ) -> Pin<Box<dyn Future<Output = Verdict> + Send + 'a>> {
        Box::pin(async move {
            match self.authorize(call).await {
                Ok(_) => Verdict::Allow,
                Err(error) => Verdict::Deny(match error.suggestion {
                    Some(suggestion) => format!("{} ({suggestion})", error.message),
                    None => error.message,
                }),
            }
        })
    }
}

/// Decides `pending`: refused when codecrew cannot tell what it does or no gate is
/// there, else as the gate says. Returns the CLI's answer.
pub async fn settle(pending: Pending, gate: Option<&dyn NativeGate>) -> Vec<u8> {
    let verdict = match gate {
        _ if pending.calls.is_empty() => Verdict::Deny(format!(
            "codecrew does not let {} run: it cannot tell what the tool would do; use the \
             codecrew: tools instead",
            pending.native
        )),
        None => Verdict::Deny(format!(
            "codecrew cannot approve {} here; use the codecrew: tools instead",
            pending.native
        )),
        Some(gate) => {
            let mut verdict = Verdict::Allow;
            for call in &pending.calls {
                verdict = gate.decide(call).await;
                if verdict != Verdict::Allow {
                    break;
                }
            }
            verdict
        }
    };
    match &verdict {
        Verdict::Allow => tracing::info!("allowed {}", pending.native),
        Verdict::Deny(reason) => tracing::info!("refused {}: {reason}", pending.native),
    }
    pending.answer_now(&verdict)
}

/// A call id that says which CLI's tool it was (the audit log records it).
fn id(cli: &str, native: &str, id: &str) -> String {
    format!("{cli}:{native}:{id}")
}

/// The codecrew call, with the CLI's tool named in it (the prompt shows it).
fn call(cli: &str, native: &str, native_id: &str, tool: &str, mut input: Value) -> CallRequest {
    input["via"] = json!(format!("{cli}'s own {native} tool"));
    CallRequest {
        id: id(cli, native, native_id),
        tool: tool.to_owned(),
        input,
    }
}

/// A read of `path` (a file, or a folder's listing or search).
pub fn read(cli: &str, native: &str, native_id: &str, path: &str) -> CallRequest {
    call(cli, native, native_id, "read_file", json!({ "path": path }))
}

/// A listing or search beneath `path`.
pub fn list(cli: &str, native: &str, native_id: &str, path: &str) -> CallRequest {
    call(
        cli,
        native,
        native_id,
        "list_directory",
        json!({ "path": path }),
    )
}

/// A write, edit, creation or deletion of `path`.
pub fn write(cli: &str, native: &str, native_id: &str, path: &str) -> CallRequest {
    call(
        cli,
        native,
        native_id,
        "write_file",
        json!({ "path": path }),
    )
}

/// A tool codecrew has no equivalent of (a web fetch, a plan tool with effects): it
/// asks, as an unknown call does, so `query` refuses it and `execute` asks.
pub fn other(cli: &str, native: &str, native_id: &str, input: &Value) -> CallRequest {
    call(
        cli,
        native,
        native_id,
        &format!("{cli}:{native}"),
        json!({ "input": input }),
    )
}

/// A shell command line, run in `cwd` (the workspace when None).
pub fn shell(
    cli: &str,
    native: &str,
    native_id: &str,
    command: &str,
    cwd: Option<&Path>,
) -> CallRequest {
    let mut input = json!({ "command": command });
    if let Some(cwd) = cwd {
        input["cwd"] = json!(cwd);
    }
    call(cli, native, native_id, "run_command", input)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Refuses;

    impl NativeGate for Refuses {
        fn decide<'a>(
            &'a self,
            call: &'a CallRequest,
        ) -> Pin<Box<dyn Future<Output = Verdict> + Send + 'a>> {
            Box::pin(async move { Verdict::Deny(format!("no {}", call.tool)) })
        }
    }

    fn pending(calls: Vec<CallRequest>) -> Pending {
        Pending {
            native: "Write".into(),
            calls,
            answer: Box::new(|verdict| format!("{verdict:?}").into_bytes()),
        }
    }

    #[tokio::test]
    async fn a_question_is_decided_by_the_gate_and_refused_without_one() {
        let write = write("claude", "Write", "t1", "/w/.env");
        assert_eq!(write.id, "claude:Write:t1");
        let answer = settle(pending(vec![write.clone()]), Some(&Refuses)).await;
        assert_eq!(
            String::from_utf8(answer).unwrap(),
            "Deny(\"no write_file\")"
        );
        let answer = settle(pending(vec![write]), None).await;
        assert!(String::from_utf8(answer).unwrap().starts_with("Deny"));
        let answer = settle(pending(vec![]), Some(&Refuses)).await;
        assert!(String::from_utf8(answer).unwrap().contains("cannot tell"));
    }
}
