//! The agents a `codecrew mcp` server delegates to: `query_agent` and `execute_agent`
//! run one job each, as `codecrew query`/`execute` would, with progress notifications.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolResult, ContentBlock, ProgressNotificationParam, ProgressToken, Tool as McpTool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use crate::config::LoadedConfig;
use crate::mention::{self, Job};
use crate::session::{JobEvent, JobReport, Settings};
use codecrew_intercept::neutralise_envelopes;
use codecrew_tools::{Mode, Status, ToolRegistry};

use super::{
    DEPTH_ENV, EXECUTE_AGENT, ExecutorFactory, MAX_DEPTH, QUERY_AGENT, error_text, schema_object,
};

/// What `query_agent` and `execute_agent` need to run a job.
pub struct Agents {
    loaded: LoadedConfig,
    registry: Arc<ToolRegistry>,
    workspace: PathBuf,
    depth: u32,
    executor_for: ExecutorFactory,
}

impl Agents {
    /// The agents of `loaded`, running in `workspace` with the tools of `registry`. `depth`
    /// is this server's [`DEPTH_ENV`] value.
    pub fn new(
        loaded: LoadedConfig,
        registry: Arc<ToolRegistry>,
        workspace: PathBuf,
        depth: u32,
        executor_for: ExecutorFactory,
    ) -> Self {
        Agents {
            loaded,
            registry,
            workspace,
            depth,
            executor_for,
        }
    }

    /// Whether this server may still start agents.
    pub fn can_delegate(&self) -> bool {
        self.depth < MAX_DEPTH
    }

    /// `@claude (default), @gemini, @codex (model gpt-5.5)`: what the descriptions offer.
    fn roster(&self) -> String {
        let config = &self.loaded.config;
        let names: Vec<String> = config
            .agents
            .iter()
            .map(|(id, agent)| {
                let mut name = format!("@{id}");
                if *id == config.default_agent {
                    name.push_str(" (default)");
                } else if let Some(model) = &agent.model {
                    name.push_str(&format!(" (model {model})"));
                }
                name
            })
            .collect();
        names.join(", ")
    }

    pub(super) fn tool(&self, mode: Mode) -> McpTool {
        let (name, what, annotations) = match mode {
            Mode::Query => (
                QUERY_AGENT,
                "Ask another AI coding agent (a CLI such as Claude Code, Gemini CLI or Codex, \
                 run by codecrew) a question and get its answer. The agent works in the same \
                 workspace with codecrew's read-only tools; it cannot change anything.",
                ToolAnnotations::new().read_only(true).open_world(true),
            ),
            Mode::Execute => (
                EXECUTE_AGENT,
                "Have another AI coding agent (a CLI such as Claude Code, Gemini CLI or Codex, \
                 run by codecrew) do a task in the workspace. It may write files and run \
                 commands, within codecrew's permission policy.",
                ToolAnnotations::new()
                    .read_only(false)
                    .destructive(true)
                    .open_world(true),
            ),
        };
        let description = format!(
            "{what} `task` is the request, optionally starting with a mention that picks the \
             agent and its model: \"@gemini review src/lib.rs\", \"@codex:gpt-5.5 where is \
             the config parsed?\". Without a mention the default agent answers. One agent per \
             call: to ask several, make several calls (they may run at the same time). \
             Instead of a mention you may pass `agent` (and `model`); `task` is then used as \
             written. The result is the agent's answer followed by a summary line (agent, \
             model, turns, tool calls, success); it can take minutes. Agents: {}.",
            self.roster()
        );
        let schema = json!({
            "type": "object",
            "properties": {
                "task": {
                    "type": "string",
                    "description": "What the agent should do or answer, optionally starting with @agent or @agent:model"
                },
                "agent": {
                    "type": "string",
                    "description": "The agent's id (e.g. claude, gemini, codex); overrides a mention in task"
                },
                "model": {
                    "type": "string",
                    "description": "The model the agent should use; overrides the mention's"
                }
            },
            "required": ["task"],
            "additionalProperties": false
        });
        McpTool::new(name, description, schema_object(schema)).with_annotations(annotations)
    }

    /// Runs one delegated job to its end, reporting its progress, and stops it when the
    /// client cancels the call.
    pub(super) async fn run(
        &self,
        mode: Mode,
        input: Value,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        if !self.can_delegate() {
            return error_text(format!(
                "codecrew mcp is {} agent delegations deep ({DEPTH_ENV}={}), the most it \
                 allows; it starts no further agents, so agents cannot call each other without \
                 end. Do the task with the other tools instead.",
                self.depth, self.depth
            ));
        }
        let job = match agent_job(input, &self.loaded.config.default_agent) {
            Ok(job) => job,
            Err(message) => return error_text(message),
        };
        let mut settings = Settings::new(mode, &self.loaded.config.limits, self.workspace.clone());
        settings.env.push((
            OsString::from(DEPTH_ENV),
            OsString::from((self.depth + 1).to_string()),
        ));
        let runs = match crate::jobs::plan(
            &self.loaded,
            vec![job],
            &settings,
            &self.registry,
            |catalog| (self.executor_for)(mode, catalog),
        ) {
            Ok(runs) => runs,
            Err(error) => return error_text(error.to_string()),
        };
        let Some(run) = runs.into_iter().next() else {
            return error_text("no job to run".to_owned());
        };
        let agent = run.job.agent.clone();
        tracing::info!(agent = %agent, mode = mode.name(), depth = self.depth, "delegating");
        let mut progress = Progress::new(context);
        let (events_tx, mut events) = mpsc::unbounded_channel();
        let (cancel_tx, cancel) = watch::channel(false);
        let job = run.run(events_tx, cancel);
        tokio::pin!(job);
        let mut cancelled = false;
        let report = loop {
            tokio::select! {
                report = &mut job => break report,
                Some((_, event)) = events.recv() => {
                    if let Some(message) = progress_message(&agent, &event) {
                        progress.report(message).await;
                    }
                }
                _ = context.ct.cancelled(), if !cancelled => {
                    // The job stops its CLI's process group and ends with what arrived.
                    cancelled = true;
                    let _ = cancel_tx.send(true);
                }
            }
        };
        agent_result(&report)
    }
}

/// The input of `query_agent` / `execute_agent`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentInput {
    task: String,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

/// The job a delegating call asks for: `agent` and `model` when given (the task then as
/// written), else the task's one mention, else the default agent.
pub(super) fn agent_job(input: Value, default_agent: &str) -> Result<Job, String> {
    let input: AgentInput = serde_json::from_value(input).map_err(|error| {
        format!(
            "invalid input: {error}; expected {{\"task\": \"@agent[:model] what to do\"}} with \
             optional \"agent\" and \"model\""
        )
    })?;
    let non_empty =
        |text: Option<String>| text.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty());
    let agent = non_empty(input.agent).map(|a| a.trim_start_matches('@').to_owned());
    let (agent, mentioned_model, task) = match agent {
        Some(agent) => (agent, None, input.task.trim().to_owned()),
        None => {
            let parsed = mention::parse_task(&input.task);
            match parsed.mentions.as_slice() {
                [] => (default_agent.to_owned(), None, parsed.text),
                [one] => (one.agent.clone(), one.model.clone(), parsed.text),
                many => {
                    let names: Vec<String> = many.iter().map(|m| format!("@{}", m.agent)).collect();
                    return Err(format!(
                        "the task mentions {} agents ({}); this tool runs one agent per call: \
                         call it once per agent (the calls may run at the same time)",
                        many.len(),
                        names.join(", ")
                    ));
                }
            }
        }
    };
    Ok(Job {
        agent,
        model: non_empty(input.model).or(mentioned_model),
        task,
    })
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
    result
}

/// A short line about a job's progress, for the client's progress display.
fn progress_message(agent: &str, event: &JobEvent) -> Option<String> {
    match event {
        JobEvent::Turn(turn) => Some(format!("@{agent}: turn {turn}")),
        JobEvent::ToolCall(call) => Some(format!("@{agent}: calls {}", call.name)),
        JobEvent::ToolResult(result) => Some(format!(
            "@{agent}: {} {}",
            result.tool,
            match result.status {
                Status::Ok => "ok",
                Status::Error => "failed",
                Status::Denied => "denied",
            }
        )),
        JobEvent::Notice(notice) => Some(format!("@{agent}: {notice}")),
        JobEvent::Text(_)
        | JobEvent::TurnEnd { .. }
        | JobEvent::MessageEnd
        | JobEvent::Rejected(_) => None,
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
