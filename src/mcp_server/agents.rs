//! The agents a `codecrew mcp` server delegates to: `query_agent` and `execute_agent`
//! run one job each, as `codecrew query`/`execute` would, with progress notifications.

use std::sync::Arc;

use rmcp::model::{
    CallToolResult, ContentBlock, ProgressNotificationParam, ProgressToken, Tool as McpTool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use codecrew_core::crew::{self, Crew, Delegation};
use codecrew_core::session::{JobEvent, JobLog, JobReport};
use codecrew_intercept::neutralise_envelopes;
use codecrew_tools::{Mode, Status};

use super::http::abandoned;
use super::limits::{AgentLimits, AgentSlots};
use super::{EXECUTE_AGENT, MAX_DEPTH, QUERY_AGENT, error_text, schema_object};

/// What `query_agent` and `execute_agent` need to run a job: the crew of the server's
/// run (the same job runner as the prompted tools of `codecrew query`/`execute`).
#[derive(Clone)]
pub struct Agents {
    crew: Arc<Crew>,
    depth: u32,
    slots: AgentSlots,
}

impl Agents {
    /// The agents of `crew`, for a server at `depth` (its [`crew::DEPTH_ENV`] value),
    /// running at most `limits` at once.
    pub fn new(crew: Arc<Crew>, depth: u32, limits: AgentLimits) -> Self {
        Agents {
            crew,
            depth,
            slots: AgentSlots::new(limits),
        }
    }

    /// Whether this server may still start agents.
    pub fn can_delegate(&self) -> bool {
        self.depth < MAX_DEPTH
    }

    pub(super) fn tool(&self, mode: Mode) -> McpTool {
        let (name, annotations) = match mode {
            Mode::Query => (
                QUERY_AGENT,
                ToolAnnotations::new().read_only(true).open_world(true),
            ),
            Mode::Execute => (
                EXECUTE_AGENT,
                ToolAnnotations::new()
                    .read_only(false)
                    .destructive(true)
                    .open_world(true),
            ),
        };
        let description = crew::describe(mode, &self.crew.roster());
        McpTool::new(name, description, schema_object(crew::input_schema()))
            .with_annotations(annotations)
    }

    /// Runs one delegated job to its end, logged under `client` (the calling client's
    /// job in the run store), reporting its progress, and stops it when the client
    /// cancels the call or goes away. Beyond the running limit it waits for a place;
    /// beyond the queue's, it is refused with a JSON-RPC error.
    pub(super) async fn run(
        &self,
        mode: Mode,
        input: Value,
        client: Option<&Arc<dyn JobLog>>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        if !self.can_delegate() {
            return Ok(error_text(crew::depth_refusal(self.depth)));
        }
        let answer = match crew::agent_schema(&input) {
            Ok(answer) => answer,
            Err(message) => return Ok(error_text(message)),
        };
        let job = match crew::agent_job(input, self.crew.default_agent()) {
            Ok(job) => job,
            Err(message) => return Ok(error_text(message)),
        };
        let admitted = self.slots.admit()?;
        let abandoned = abandoned(context);
        tokio::pin!(abandoned);
        // Held until the run ends: the place of the next queued run.
        let Some(_running) = (tokio::select! {
            running = admitted.run() => running,
            () = &mut abandoned => None,
        }) else {
            return Ok(error_text(format!(
                "the call to @{} was cancelled before it started",
                job.agent
            )));
        };
        let agent = job.agent.clone();
        let mut progress = Progress::new(context);
        let (events_tx, mut events) = mpsc::unbounded_channel();
        let (cancel_tx, cancel) = watch::channel(false);
        let job = self.crew.run_job(
            mode,
            Delegation { job, answer },
            self.depth + 1,
            None,
            client,
            cancel,
            move |event| {
                let _ = events_tx.send(event);
            },
        );
        tokio::pin!(job);
        let mut cancelled = false;
        let report = loop {
            tokio::select! {
                report = &mut job => break report,
                Some(event) = events.recv() => {
                    if let Some(message) = progress_message(&agent, &event) {
                        progress.report(message).await;
                    }
                }
                () = &mut abandoned, if !cancelled => {
                    // The job stops its CLI's process group and ends with what arrived.
                    cancelled = true;
                    let _ = cancel_tx.send(true);
                }
            }
        };
        Ok(match report {
            Ok(report) => agent_result(&report),
            Err(message) => error_text(message),
        })
    }
}

/// A finished delegated job as MCP returns it: the answer (neutralised: it is a model's
/// text on its way to another model), then a summary line; `isError` unless it succeeded.
fn agent_result(report: &JobReport) -> CallToolResult {
    let answer = neutralise_envelopes(report.response.trim());
    let error = report.error.as_deref().map(neutralise_envelopes);
    let model = report
        .model
        .as_deref()
        .map(|m| format!(":{m}"))
        .unwrap_or_default();
    let mut summary = format!(
        "[codecrew] @{}{model} ({}, {} mode): {}, {} turn(s), {} tool call(s), stop: {}",
        report.agent,
        report.provider,
        report.mode.name(),
        if report.success { "success" } else { "failed" },
        report.turns,
        report.tool_calls.len(),
        serde_json::to_value(report.stop_reason)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
    );
    if let Some(error) = &error {
        summary.push_str(&format!("; error: {error}"));
    }
    let mut content = Vec::new();
    if !answer.is_empty() {
        content.push(ContentBlock::text(answer.clone()));
    }
    content.push(ContentBlock::text(summary));
    let mut result = if report.success {
        CallToolResult::success(content)
    } else {
        CallToolResult::error(content)
    };
    result.structured_content = Some(json!({
        "answer": answer,
        "agent": report.agent,
        "provider": report.provider,
        "model": report.model,
        "mode": report.mode,
        "success": report.success,
        "turns": report.turns,
        "tool_calls": report.tool_calls.len(),
        "stop_reason": report.stop_reason,
        "session_id": report.session_id,
        "duration_ms": report.duration_ms,
        "usage": report.usage,
        "error": error,
    }));
    if let (Some(data), Some(Value::Object(fields))) =
        (&report.data, &mut result.structured_content)
    {
        // The answer's checked document (the call's `schema`).
        fields.insert("data".to_owned(), data.clone());
    }
    result
}

/// A short line about a job's progress, for the client's progress display.
fn progress_message(agent: &str, event: &JobEvent) -> Option<String> {
    match event {
        JobEvent::Turn(turn) => Some(format!("@{agent}: turn {turn}")),
        JobEvent::ToolCall { call, .. } => Some(format!("@{agent}: calls {}", call.name)),
        JobEvent::ToolResult(result) => Some(format!(
            "@{agent}: {} {}",
            result.tool,
            match result.status {
                Status::Ok => "ok",
                Status::Error => "failed",
                Status::Denied => "denied",
            }
        )),
        JobEvent::Notice(notice) | JobEvent::Retry(notice) => Some(format!("@{agent}: {notice}")),
        JobEvent::NativeTool { name, .. } => Some(format!("@{agent}: its {name}")),
        JobEvent::Sub(sub) => {
            progress_message(&sub.agent, &sub.event).map(|m| format!("@{agent} → {m}"))
        }
        JobEvent::Text(_)
        | JobEvent::TurnEnd { .. }
        | JobEvent::MessageEnd
        | JobEvent::Rejected(_)
        | JobEvent::NativeToolResult { .. } => None,
    }
}

/// MCP progress notifications for one call, sent only when the client asked for them
/// (with a progress token).
struct Progress<'a> {
    context: &'a RequestContext<RoleServer>,
    token: Option<ProgressToken>,
    count: u32,
}

impl<'a> Progress<'a> {
    fn new(context: &'a RequestContext<RoleServer>) -> Self {
        Progress {
            context,
            token: context.meta.get_progress_token(),
            count: 0,
        }
    }

    async fn report(&mut self, message: String) {
        let Some(token) = &self.token else {
            return;
        };
        self.count += 1;
        let notification = ProgressNotificationParam::new(token.clone(), f64::from(self.count))
            .with_message(message);
        if let Err(error) = self.context.peer.notify_progress(notification).await {
            tracing::debug!("cannot send a progress notification: {error}");
        }
    }
}
