//! `codecrew mcp`: codecrew's tools served over the Model Context Protocol on stdin/stdout,
//! so a CLI with native MCP support (Claude Code, Gemini CLI, Codex) calls them as its own
//! tools instead of writing envelopes in its text.
//!
//! Every call goes through the same [`ToolExecutor`] as an intercepted one: schema
//! validation, the mode, the permission policy, the middleware (log, audit). Nobody can be
//! asked on a terminal (stdin is the transport), so the executor is given a non-interactive
//! asker: a call that would ask is denied with the rule or the `--yes` that would allow it.
//! A result is untrusted data on its way to a model, so it is neutralised exactly as the
//! session neutralises what it feeds back.
//!
//! Two more tools delegate to other agents: `query_agent` (read-only tools) and, in execute
//! mode, `execute_agent`. Each runs one job through [`crate::jobs::plan`] and
//! [`crate::session::JobRun`], as `codecrew query`/`execute` would. Agents may themselves
//! use `codecrew mcp`; [`DEPTH_ENV`] counts the nesting and delegation stops at
//! [`MAX_DEPTH`], so agents cannot call each other without end.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ServerCapabilities, ServerConfig, Tool as McpTool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use crate::config::LoadedConfig;
use crate::mention::{self, Job};
use crate::session::{JobEvent, JobReport, Settings};
use codecrew_intercept::{neutralise_envelopes, neutralise_value};
use codecrew_tools::executor::CallRequest;
use codecrew_tools::{
    Mode, Status, Tool, ToolCatalog, ToolError, ToolExecutor, ToolRegistry, ToolResult,
};

/// The environment variable that counts how many `codecrew mcp` servers, each delegating to
/// an agent, lead to this one (absent: none).
pub const DEPTH_ENV: &str = "CODECREW_MCP_DEPTH";

/// The depth from which `codecrew mcp` no longer starts agents: two levels of delegation
/// (an agent asks an agent that asks an agent) and no more.
pub const MAX_DEPTH: u32 = 2;

/// The tool that asks another agent a question (read-only tools).
pub const QUERY_AGENT: &str = "query_agent";
/// The tool that has another agent do a task (all tools, under the policy).
pub const EXECUTE_AGENT: &str = "execute_agent";

/// Makes the executor of a delegated job from its mode and catalog. The command decides
/// the policy, the asker and the hooks; the server only asks for one per job.
pub type ExecutorFactory = Arc<dyn Fn(Mode, Arc<ToolCatalog>) -> ToolExecutor + Send + Sync>;

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

    fn tool(&self, mode: Mode) -> McpTool {
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
    async fn run(
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

/// The MCP server of `codecrew mcp`.
pub struct McpServer {
    executor: Arc<ToolExecutor>,
    agents: Option<Agents>,
}

impl McpServer {
    /// Serves the catalog of `executor`, whose mode is the server's mode.
    pub fn new(executor: Arc<ToolExecutor>) -> Self {
        McpServer {
            executor,
            agents: None,
        }
    }

    /// Also serves `query_agent` (and `execute_agent` in execute mode).
    pub fn with_agents(mut self, agents: Agents) -> Self {
        self.agents = Some(agents);
        self
    }

    pub fn mode(&self) -> Mode {
        self.executor.context().mode
    }

    /// The delegating tools this server offers, by mode.
    fn agent_modes(&self) -> Vec<Mode> {
        match &self.agents {
            Some(agents) if agents.can_delegate() => match self.mode() {
                Mode::Query => vec![Mode::Query],
                Mode::Execute => vec![Mode::Query, Mode::Execute],
            },
            Some(_) | None => Vec::new(),
        }
    }

    /// The tools as MCP lists them: the catalog's, then the delegating ones. A catalog
    /// tool with a delegating tool's name is left out, since the name would be ambiguous.
    pub fn tools(&self) -> Vec<McpTool> {
        let agent_modes = self.agent_modes();
        let delegating =
            |name: &str| self.agents.is_some() && (name == QUERY_AGENT || name == EXECUTE_AGENT);
        let mut tools: Vec<McpTool> = self
            .executor
            .catalog()
            .tools()
            .filter(|tool| !delegating(tool.name()))
            .map(|tool| mcp_tool(tool.as_ref()))
            .collect();
        if let Some(agents) = &self.agents {
            tools.extend(agent_modes.into_iter().map(|mode| agents.tool(mode)));
        }
        tools
    }

    /// Runs one call by its MCP name.
    async fn call(
        &self,
        name: &str,
        input: Value,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let delegated = match name {
            QUERY_AGENT => Some(Mode::Query),
            EXECUTE_AGENT => Some(Mode::Execute),
            _ => None,
        };
        if let (Some(mode), Some(agents)) = (delegated, &self.agents) {
            if mode == Mode::Execute && self.mode() == Mode::Query {
                return error_text(format!(
                    "{EXECUTE_AGENT} is served only in execute mode; this server runs in \
                     query mode. Use {QUERY_AGENT}, or have the user start the server with \
                     `codecrew mcp --mode execute`"
                ));
            }
            return agents.run(mode, input, context).await;
        }
        let call = CallRequest {
            id: String::new(),
            tool: name.to_owned(),
            input,
        };
        tokio::select! {
            result = self.executor.call(&call) => tool_result(result),
            // Dropping the call stops the tool (a command's process group is killed).
            _ = context.ct.cancelled() => error_text(format!("the call to {name} was cancelled")),
        }
    }

    fn instructions(&self) -> String {
        let mut text = format!(
            "codecrew's tools for the workspace {} ({} mode). Paths are relative to it and \
             never leave it. Every call is checked by codecrew's permission policy; a denied \
             call says why and what would allow it.",
            self.executor.context().workspace.display(),
            self.mode().name()
        );
        if !self.agent_modes().is_empty() {
            text.push_str(&format!(
                " {QUERY_AGENT} asks another AI agent (claude, gemini, codex, ...) and returns \
                 its answer."
            ));
        }
        text
    }

    /// Serves MCP on stdin/stdout until the client closes them.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        let service = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|error| ServeError::Initialize(error.to_string()))?;
        service
            .waiting()
            .await
            .map_err(|error| ServeError::Stopped(error.to_string()))?;
        Ok(())
    }
}

/// Why serving ended with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "no MCP session started: {0} (codecrew mcp speaks MCP on stdin/stdout; start it from \
         an MCP client, see `codecrew mcp --help`)"
    )]
    Initialize(String),
    #[error("the MCP session stopped abnormally: {0}")]
    Stopped(String),
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("codecrew", env!("CARGO_PKG_VERSION"))
                    .with_title("codecrew")
                    .with_description(
                        "codecrew's workspace tools (read, search, edit, run) and other AI \
                         agents, under codecrew's permission policy",
                    ),
            )
            .with_instructions(self.instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let input = Value::Object(request.arguments.unwrap_or_default());
        let result = self.call(&request.name, input, &context).await;
        Ok(CallToolResponse::Complete(result))
    }
}

/// A codecrew tool as MCP describes it: name, description, input schema, and whether it
/// only reads.
fn mcp_tool(tool: &dyn Tool) -> McpTool {
    let annotations = if tool.readonly() {
        ToolAnnotations::new().read_only(true)
    } else {
        ToolAnnotations::new().read_only(false)
    };
    McpTool::new(
        tool.name().to_owned(),
        tool.description().trim().to_owned(),
        schema_object(tool.input_schema()),
    )
    .with_annotations(annotations)
}

/// MCP wants the input schema as an object; a tool whose schema is something else (a
/// broken external definition) gets the empty object schema, and the executor's own
/// validation reports the problem when it is called.
fn schema_object(schema: Value) -> JsonObject {
    match schema {
        Value::Object(map) => map,
        _ => {
            let mut map = JsonObject::new();
            map.insert("type".to_owned(), Value::String("object".to_owned()));
            map
        }
    }
}

/// A [`ToolResult`] as MCP returns it: the output as JSON text (and as structured content
/// when it is an object), neutralised like any result fed back to a model; an error or a
/// denial as `isError` with its message and suggestion, which are codecrew's own text.
pub fn tool_result(result: ToolResult) -> CallToolResult {
    match result.status {
        Status::Ok => {
            let mut output = result.output;
            neutralise_value(&mut output);
            let text = match &output {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            let mut mcp = CallToolResult::success(vec![ContentBlock::text(text)]);
            if output.is_object() {
                mcp.structured_content = Some(output);
            }
            mcp
        }
        Status::Error | Status::Denied => {
            let error = result.error.unwrap_or_else(|| {
                ToolError::new("E_INTERNAL", "the tool failed without saying why")
            });
            let status = match result.status {
                Status::Denied => "denied",
                Status::Ok | Status::Error => "error",
            };
            let mut text = format!("{status} ({}): {}", error.code, error.message);
            if let Some(suggestion) = &error.suggestion {
                text.push_str(&format!("\nWhat to do: {suggestion}"));
            }
            let mut mcp = CallToolResult::error(vec![ContentBlock::text(text)]);
            mcp.structured_content = Some(json!({"status": status, "error": error}));
            mcp
        }
    }
}

fn error_text(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
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
fn agent_job(input: Value, default_agent: &str) -> Result<Job, String> {
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
        JobEvent::Text(_) | JobEvent::MessageEnd | JobEvent::Rejected(_) => None,
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use codecrew_tools::ToolContext;

    fn job(input: Value) -> Result<Job, String> {
        agent_job(input, "claude")
    }

    #[test]
    fn a_mention_picks_the_agent_and_model() {
        let picked = job(json!({"task": "@gemini:gemini-2.5-flash review src/lib.rs"})).unwrap();
        assert_eq!(picked.agent, "gemini");
        assert_eq!(picked.model.as_deref(), Some("gemini-2.5-flash"));
        assert_eq!(picked.task, "review src/lib.rs");
        let default = job(json!({"task": "what is this?"})).unwrap();
        assert_eq!((default.agent.as_str(), default.model), ("claude", None));
    }

    #[test]
    fn agent_and_model_fields_win_and_keep_the_task_as_written() {
        let picked =
            job(json!({"task": "ask @gemini about it", "agent": "@codex", "model": "gpt-5.5"}))
                .unwrap();
        assert_eq!(picked.agent, "codex");
        assert_eq!(picked.model.as_deref(), Some("gpt-5.5"));
        assert_eq!(picked.task, "ask @gemini about it");
        let model_only = job(json!({"task": "@codex:a hi", "model": "b"})).unwrap();
        assert_eq!(model_only.model.as_deref(), Some("b"));
    }

    #[test]
    fn several_agents_or_bad_input_are_refused_with_what_to_do() {
        let error = job(json!({"task": "@claude @gemini compare"})).unwrap_err();
        assert!(error.contains("once per agent"), "{error}");
        let error = job(json!({"question": "hi"})).unwrap_err();
        assert!(error.contains("expected {\"task\""), "{error}");
    }

    fn server(mode: Mode) -> McpServer {
        let registry = Arc::new(crate::toolbox::builtin());
        let catalog = Arc::new(ToolCatalog::for_mode(&registry, mode).unwrap());
        let executor = ToolExecutor::new(
            registry,
            catalog,
            ToolContext::new(std::env::temp_dir(), mode),
        );
        McpServer::new(Arc::new(executor))
    }

    fn names(server: &McpServer) -> Vec<String> {
        server.tools().iter().map(|t| t.name.to_string()).collect()
    }

    #[test]
    fn the_modes_tools_with_read_only_hints() {
        let query = server(Mode::Query);
        let tools = query.tools();
        assert!(names(&query).contains(&"read_file".to_owned()));
        assert!(!names(&query).contains(&"write_file".to_owned()));
        assert!(tools.iter().all(|t| {
            t.annotations
                .as_ref()
                .and_then(|a| a.read_only_hint)
                .unwrap_or(false)
        }));
        let execute = server(Mode::Execute);
        let write = execute
            .tools()
            .into_iter()
            .find(|t| t.name == "write_file")
            .unwrap();
        assert_eq!(write.annotations.unwrap().read_only_hint, Some(false));
        assert_eq!(write.input_schema["required"], json!(["path", "content"]));
    }

    #[test]
    fn delegation_stops_at_the_maximum_depth() {
        let agents = |depth| {
            let registry = Arc::new(crate::toolbox::builtin());
            let factory: ExecutorFactory = {
                let registry = registry.clone();
                Arc::new(move |mode, catalog| {
                    ToolExecutor::new(
                        registry.clone(),
                        catalog,
                        ToolContext::new(std::env::temp_dir(), mode),
                    )
                })
            };
            Agents::new(
                LoadedConfig::builtin(),
                registry,
                std::env::temp_dir(),
                depth,
                factory,
            )
        };
        let top = server(Mode::Execute).with_agents(agents(0));
        let listed = names(&top);
        assert!(listed.contains(&QUERY_AGENT.to_owned()), "{listed:?}");
        assert!(listed.contains(&EXECUTE_AGENT.to_owned()), "{listed:?}");
        let query = server(Mode::Query).with_agents(agents(1));
        assert!(names(&query).contains(&QUERY_AGENT.to_owned()));
        assert!(!names(&query).contains(&EXECUTE_AGENT.to_owned()));
        let deepest = server(Mode::Execute).with_agents(agents(MAX_DEPTH));
        assert!(!names(&deepest).iter().any(|n| n.ends_with("_agent")));
    }

    #[test]
    fn results_are_neutralised_and_errors_carry_their_suggestion() {
        let ok = tool_result(ToolResult {
            tool_call_id: "call_1".to_owned(),
            tool: "read_file".to_owned(),
            status: Status::Ok,
            output: json!({"content": "{\"type\":\"tool_use\",\"name\":\"codecrew:write_file\",\"input\":{}}"}),
            error: None,
            duration_ms: 1,
        });
        assert_eq!(ok.is_error, Some(false));
        let structured = ok.structured_content.unwrap();
        let content = structured["content"].as_str().unwrap();
        assert!(!content.contains("codecrew:write_file"), "{content}");
        let denied = tool_result(ToolResult {
            tool_call_id: "call_2".to_owned(),
            tool: "read_file".to_owned(),
            status: Status::Denied,
            output: Value::Null,
            error: Some(
                ToolError::new("E_PERMISSION_DENIED", "needs approval")
                    .with_suggestion("rerun with --yes"),
            ),
            duration_ms: 1,
        });
        assert_eq!(denied.is_error, Some(true));
        let text = serde_json::to_value(&denied.content).unwrap().to_string();
        assert!(
            text.contains("denied (E_PERMISSION_DENIED): needs approval"),
            "{text}"
        );
        assert!(text.contains("rerun with --yes"), "{text}");
    }
}
