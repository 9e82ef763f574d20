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
//! mode, `execute_agent`. Each runs one job through [`codecrew_core::jobs::plan`] and
//! [`codecrew_core::session::JobRun`], as `codecrew query`/`execute` would. Agents may themselves
//! use `codecrew mcp`; [`DEPTH_ENV`] counts the nesting and delegation stops at
//! [`MAX_DEPTH`], so agents cannot call each other without end.

use std::future::Future;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool as McpTool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

use codecrew_core::engine::ServedRun;
use codecrew_intercept::{ToolCall, neutralise_value};
use codecrew_tools::executor::CallRequest;
use codecrew_tools::{ErrorCode, Mode, Status, Tool, ToolError, ToolExecutor, ToolResult};

pub use codecrew_core::crew::{DEPTH_ENV, EXECUTE_AGENT, ExecutorFactory, MAX_DEPTH, QUERY_AGENT};

mod agents;
pub mod http;
pub mod limits;

pub use agents::Agents;
use limits::InFlight;

/// The MCP server of `codecrew mcp`. Over HTTP each session gets a clone: they share the
/// executor, the agents' places and the count of calls in flight.
#[derive(Clone)]
pub struct McpServer {
    executor: Arc<ToolExecutor>,
    agents: Option<Agents>,
    in_flight: Arc<InFlight>,
    /// Where the clients' calls are recorded (the run store), when they are.
    served: Option<Arc<ServedRun>>,
}

impl McpServer {
    /// Serves the catalog of `executor`, whose mode is the server's mode.
    pub fn new(executor: Arc<ToolExecutor>) -> Self {
        McpServer {
            executor,
            agents: None,
            in_flight: Arc::new(InFlight::default()),
            served: None,
        }
    }

    /// Records every client's calls in `served`, one job per client.
    pub fn recorded_in(mut self, served: Arc<ServedRun>) -> Self {
        self.served = Some(served);
        self
    }

    /// Also serves `query_agent` (and `execute_agent` in execute mode).
    pub fn with_agents(mut self, agents: Agents) -> Self {
        self.agents = Some(agents);
        self
    }

    /// The calls this server (and every clone) is running.
    pub fn in_flight(&self) -> Arc<InFlight> {
        self.in_flight.clone()
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
            .map(|tool| mcp_tool(tool.as_ref(), self.executor.context().mode))
            .collect();
        if let Some(agents) = &self.agents {
            tools.extend(agent_modes.into_iter().map(|mode| agents.tool(mode)));
        }
        tools
    }

    /// Runs one call by its MCP name; an error when the server is at a limit.
    async fn call(
        &self,
        name: &str,
        input: Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let delegated = match name {
            QUERY_AGENT => Some(Mode::Query),
            EXECUTE_AGENT => Some(Mode::Execute),
            _ => None,
        };
        // The client's job in the run store: the agents it asks are recorded under it.
        let client = self.served.as_ref().and_then(|served| {
            let client = context.peer.peer_info();
            served.client(client.as_ref().map_or("", |info| &info.client_info.name))
        });
        if let (Some(mode), Some(agents)) = (delegated, &self.agents) {
            if mode == Mode::Execute && self.mode() == Mode::Query {
                return Ok(error_text(format!(
                    "{EXECUTE_AGENT} is served only in execute mode; this server runs in \
                     query mode. Use {QUERY_AGENT}, or have the user start the server with \
                     `codecrew mcp --mode execute`"
                )));
            }
            return agents.run(mode, input, client.as_ref(), context).await;
        }
        let call = CallRequest {
            id: codecrew_core::session::new_call_id(),
            tool: name.to_owned(),
            input,
        };
        Ok(tokio::select! {
            result = self.executor.call(&call) => {
                if let Some(client) = &client {
                    let made = ToolCall {
                        name: format!("codecrew:{name}"),
                        tool: call.tool.clone(),
                        input: call.input.clone(),
                    };
                    ServedRun::call(client.as_ref(), made, &result);
                }
                tool_result(result)
            }
            // Dropping the call stops the tool (a command's process group is killed).
            () = http::abandoned(context) => {
                error_text(format!("the call to {name} was cancelled"))
            }
        })
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

    /// Serves MCP over HTTP on `server` until `stop` resolves, then drains; `hurry`
    /// cuts the drain's grace period short.
    pub async fn serve_http(
        self,
        server: http::HttpServer,
        stop: impl Future<Output = ()>,
        hurry: tokio_util::sync::CancellationToken,
    ) {
        server.serve(self, stop, hurry).await;
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
        let _call = self.in_flight.start();
        let input = Value::Object(request.arguments.unwrap_or_default());
        let result = self.call(&request.name, input, &context).await?;
        Ok(CallToolResponse::Complete(result))
    }
}

/// A codecrew tool as MCP describes it: name, description, input schema, and whether it
/// only reads (in `query` every tool offered does).
fn mcp_tool(tool: &dyn Tool, mode: Mode) -> McpTool {
    let annotations = if tool.readonly() || mode == Mode::Query {
        ToolAnnotations::new().read_only(true)
    } else {
        ToolAnnotations::new().read_only(false)
    };
    McpTool::new(
        tool.name().to_owned(),
        tool.description_in(mode).trim().to_owned(),
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
                ToolError::new(ErrorCode::Internal, "the tool failed without saying why")
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

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
