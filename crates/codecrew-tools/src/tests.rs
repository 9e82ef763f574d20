//! The executor end to end over the built-in registry: lookup, validation, mode, timeout,
//! caps, ordering and middleware.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::executor::{CallRequest, truncate_chars};
use super::middleware::{AuditLog, CallInfo, Middleware};
use super::*;

fn executor(mode: Mode, dir: &std::path::Path) -> ToolExecutor {
    let registry = Arc::new(ToolRegistry::builtin(Arc::new(crate::builtin::NoCommands)));
    let catalog = Arc::new(ToolCatalog::for_mode(&registry, mode).unwrap());
    let context = ToolContext::new(dir.canonicalize().unwrap(), mode);
    ToolExecutor::new(registry, catalog, context)
}

fn call(tool: &str, input: Value) -> CallRequest {
    CallRequest {
        id: String::new(),
        tool: tool.to_owned(),
        input,
    }
}

#[tokio::test]
async fn unknown_and_not_offered_tools_are_errors_as_data() {
    let dir = tempfile::tempdir().unwrap();
    let query = executor(Mode::Query, dir.path());
    let unknown = query.call(&call("nope", json!({}))).await;
    assert_eq!(unknown.status, Status::Error);
    let error = unknown.error.unwrap();
    assert_eq!(error.code, ErrorCode::UnknownTool);
    assert!(error.suggestion.unwrap().contains("codecrew:read_file"));

    let write = query
        .call(&call("write_file", json!({"path": "a", "content": "b"})))
        .await;
    assert_eq!(write.status, Status::Denied);
    assert_eq!(write.error.unwrap().code, ErrorCode::ToolNotInCatalog);
    assert!(!dir.path().join("a").exists());
}

#[tokio::test]
async fn inputs_are_validated_with_paths_the_model_can_fix() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(Mode::Query, dir.path());
    for (input, expected) in [
        (json!({"path": 3}), "input.path"),
        (json!({}), "path"),
        (json!({"path": "a", "extra": true}), "extra"),
        (json!("not an object"), "input"),
        (json!({"path": "a", "limit": "ten"}), "input.limit"),
    ] {
        let result = exec.call(&call("read_file", input.clone())).await;
        let error = result.error.unwrap();
        assert_eq!(error.code, ErrorCode::InvalidInput, "{input}");
        assert!(
            error.message.contains(expected),
            "{input}: {}",
            error.message
        );
    }
}

#[tokio::test]
async fn a_check_refuses_what_the_call_would_be_refused_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let query = executor(Mode::Query, dir.path());
    let cases = [
        (
            call("nope", json!({})),
            Status::Error,
            ErrorCode::UnknownTool,
        ),
        (
            call("write_file", json!({"path": "a", "content": "b"})),
            Status::Denied,
            ErrorCode::ToolNotInCatalog,
        ),
        (
            call("read_file", json!({"pat": "src"})),
            Status::Error,
            ErrorCode::InvalidInput,
        ),
    ];
    for (request, status, code) in cases {
        let (got_status, error) = query.check(&request).unwrap_err();
        assert_eq!((got_status, error.code), (status, code), "{}", request.tool);
        // The same refusal as a call gets.
        let result = query.call(&request).await;
        assert_eq!(result.status, status);
        assert_eq!(result.error.unwrap(), error);
    }
    assert!(!dir.path().join("a").exists());
    assert_eq!(
        query.check(&call("read_file", json!({"path": "a"}))),
        Ok(())
    );
    // A check asks nobody and writes nothing, even for a call the policy would ask about.
    let execute = executor(Mode::Execute, dir.path());
    let write = call("write_file", json!({"path": "a", "content": "b"}));
    assert_eq!(execute.check(&write), Ok(()));
    assert!(!dir.path().join("a").exists());
    assert_eq!(execute.authorized_calls(), 0);
}

#[tokio::test]
async fn results_keep_the_order_of_the_calls_and_get_ids() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a", "b", "c"] {
        std::fs::write(dir.path().join(name), name).unwrap();
    }
    let exec = executor(Mode::Execute, dir.path());
    let calls = vec![
        call("read_file", json!({"path": "a"})),
        call("read_file", json!({"path": "b"})),
        call("write_file", json!({"path": "d", "content": "new"})),
        call("read_file", json!({"path": "d"})),
        call("read_file", json!({"path": "missing"})),
    ];
    let results = exec.call_all(&calls).await;
    let summary: Vec<(&str, Status)> = results
        .iter()
        .map(|r| (r.tool.as_str(), r.status))
        .collect();
    assert_eq!(
        summary,
        [
            ("read_file", Status::Ok),
            ("read_file", Status::Ok),
            ("write_file", Status::Ok),
            ("read_file", Status::Ok),
            ("read_file", Status::Error),
        ]
    );
    // The read after the write sees it: a write is never run alongside reads.
    assert!(
        results[3].output["content"]
            .as_str()
            .unwrap()
            .contains("new")
    );
    let ids: std::collections::BTreeSet<&str> =
        results.iter().map(|r| r.tool_call_id.as_str()).collect();
    assert_eq!(ids.len(), results.len(), "ids are unique");
}

/// A tool that sleeps, for the timeout and concurrency checks.
struct Sleeper(Duration);

impl Tool for Sleeper {
    fn name(&self) -> &str {
        "sleeper"
    }
    fn description(&self) -> &str {
        "sleeps"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn readonly(&self) -> bool {
        true
    }
    fn execute<'a>(&'a self, _ctx: &'a ToolContext, _input: Value) -> ToolFuture<'a> {
        Box::pin(async move {
            tokio::time::sleep(self.0).await;
            Ok(json!("slept"))
        })
    }
    fn timeout(&self) -> Duration {
        Duration::from_millis(300)
    }
    fn max_error_chars(&self) -> usize {
        20
    }
}

fn sleeper_executor(sleep: Duration) -> ToolExecutor {
    let mut registry = ToolRegistry::default();
    registry.register(Arc::new(Sleeper(sleep)));
    let catalog = ToolCatalog::for_mode(&registry, Mode::Query).unwrap();
    let context = ToolContext::new(std::env::temp_dir(), Mode::Query);
    // Tools beyond the built-ins need a rule that allows them.
    let rules = codecrew_policy::PermissionsConfig {
        allow: vec!["sleeper".to_owned()],
        ..codecrew_policy::PermissionsConfig::default()
    };
    let policy = codecrew_policy::Policy::from_layers(&rules, None, None, false).unwrap();
    ToolExecutor::new(Arc::new(registry), Arc::new(catalog), context).with_policy(Arc::new(policy))
}

#[tokio::test]
async fn a_call_past_its_timeout_is_an_error_with_a_capped_message() {
    let result = sleeper_executor(Duration::from_secs(10))
        .call(&call("sleeper", json!({})))
        .await;
    assert_eq!(result.status, Status::Error);
    let error = result.error.unwrap();
    assert_eq!(error.code, ErrorCode::Timeout);
    assert!(
        error.message.starts_with("the tool codecrew:sl"),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("more characters]"),
        "capped at 20: {}",
        error.message
    );
}

#[tokio::test]
async fn consecutive_read_only_calls_run_concurrently() {
    let exec = sleeper_executor(Duration::from_millis(200));
    let calls: Vec<CallRequest> = (0..5).map(|_| call("sleeper", json!({}))).collect();
    let started = std::time::Instant::now();
    let results = exec.call_all(&calls).await;
    assert!(results.iter().all(ToolResult::is_ok));
    // Five 200 ms sleeps one after the other would take a second.
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
}

#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl Middleware for Recorder {
    fn before(&self, call: &CallInfo) {
        self.0.lock().unwrap().push(format!("before {}", call.tool));
    }
    fn after(&self, call: &CallInfo, result: &ToolResult) {
        self.0
            .lock()
            .unwrap()
            .push(format!("after {} {:?}", call.tool, result.status));
    }
}

#[tokio::test]
async fn middleware_sees_every_call_and_the_audit_log_records_it() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Arc::new(Recorder::default());
    let audit = Arc::new(AuditLog::in_workspace(dir.path()));
    let exec = executor(Mode::Query, dir.path())
        .with_middleware(recorder.clone())
        .with_middleware(audit);
    exec.call(&call("help", json!({}))).await;
    exec.call(&call(
        "write_file",
        json!({"path": "secret-name", "content": "TOP-SECRET"}),
    ))
    .await;
    assert_eq!(
        *recorder.0.lock().unwrap(),
        [
            "before help",
            "after help Ok",
            "before write_file",
            "after write_file Denied"
        ]
    );
    let log = std::fs::read_to_string(dir.path().join(".codecrew/audit.jsonl")).unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["tool"], "help");
    assert_eq!(lines[0]["decision"], "allow");
    assert_eq!(lines[1]["decision"], "deny");
    assert_eq!(lines[1]["status"], "denied");
    assert_eq!(lines[1]["input_sha256"].as_str().unwrap().len(), 64);
    assert!(
        !log.contains("TOP-SECRET"),
        "the audit log holds digests, not inputs"
    );
}

#[test]
fn truncation_counts_characters_not_bytes() {
    assert_eq!(truncate_chars("héllo", 10), "héllo");
    assert_eq!(
        truncate_chars("héllo wörld", 5),
        "héllo… [6 more characters]"
    );
}

#[test]
fn a_summary_is_the_descriptions_first_sentence() {
    use crate::first_sentence;
    assert_eq!(
        first_sentence("Finds files by pattern, e.g. \"**/*.rs\". The pattern is relative."),
        "Finds files by pattern, e.g. \"**/*.rs\""
    );
    assert_eq!(
        first_sentence("  One line, no period  "),
        "One line, no period"
    );
    assert_eq!(
        first_sentence("Reads .gitignore files. Then more."),
        "Reads .gitignore files"
    );
    let long = format!("{}. Rest.", "word ".repeat(40));
    let summary = first_sentence(&long);
    assert_eq!(summary.chars().count(), crate::SUMMARY_CHARS + 1);
    assert!(summary.ends_with('…'));
}
