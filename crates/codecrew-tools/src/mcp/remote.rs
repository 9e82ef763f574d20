//! One remote MCP tool as a codecrew [`Tool`]: its sanitised name, description and input
//! schema, and its calls over the server's link.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::{Map, Value, json};

use super::client::{
    LazyServer, MAX_DESCRIPTION_CHARS, MAX_ERROR_CHARS, MAX_NAME_CHARS, ServerLink, TIMEOUT_MARGIN,
};
use super::result::shape;
use crate::config::McpServerConfig;
use crate::{Tool, ToolContext, ToolError, ToolFuture};
use codecrew_intercept::neutralise_envelopes;

/// What codecrew offers of one remote tool: its name, description, schema and the
/// user's word on whether it only reads; not yet tied to a running server.
#[derive(Debug, Clone)]
pub(super) struct Offer {
    /// `<server>__<tool>`.
    name: String,
    /// The server's name for it.
    remote: String,
    server: String,
    description: String,
    input_schema: Value,
    readonly: bool,
    timeout: Duration,
}

/// What one server's tool list offers, and notices for the tools left out.
pub(super) fn offers(
    server: &str,
    config: &McpServerConfig,
    remote: &[rmcp::model::Tool],
) -> (Vec<Offer>, Vec<String>) {
    let mut offers = Vec::new();
    let mut notices = Vec::new();
    let mut taken = BTreeSet::new();
    let mut readonly_unused: BTreeSet<&str> =
        config.readonly_tools.iter().map(String::as_str).collect();
    for tool in remote {
        let remote_name = tool.name.to_string();
        let local = match sanitise(&remote_name) {
            Ok(local) => local,
            Err(why) => {
                notices.push(format!(
                    "mcp.{server}: tool {remote_name:?} is left out: {why}"
                ));
                continue;
            }
        };
        if !taken.insert(local.clone()) {
            notices.push(format!(
                "mcp.{server}: tool {remote_name:?} is left out: another of its tools is \
                 already offered as codecrew:{server}__{local}"
            ));
            continue;
        }
        // The user's word, by the server's name or the offered one; never the server's
        // own hints.
        let readonly = config
            .readonly_tools
            .iter()
            .any(|listed| *listed == remote_name || *listed == local);
        readonly_unused.remove(remote_name.as_str());
        readonly_unused.remove(local.as_str());
        let name = format!("{server}__{local}");
        let (input_schema, schema_problem) = input_schema(&tool.input_schema);
        if let Some(problem) = schema_problem {
            notices.push(format!(
                "mcp.{server}: the input schema of {remote_name:?} {problem}; codecrew:{name} \
                 accepts any object and leaves the checks to the server"
            ));
        }
        offers.push(Offer {
            name,
            remote: remote_name,
            server: server.to_owned(),
            description: description(tool, server),
            input_schema,
            readonly,
            timeout: Duration::from_secs(config.timeout_secs),
        });
    }
    for unused in readonly_unused {
        notices.push(format!(
            "mcp.{server}: readonly_tools names {unused:?}, which the server does not offer"
        ));
    }
    (offers, notices)
}

/// The tool part of `<server>__<tool>` for a remote name; see the module doc.
pub fn sanitise(remote: &str) -> Result<String, String> {
    let mut local = String::with_capacity(remote.len());
    for c in remote.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if !(c == '_' && local.ends_with('_')) {
            local.push(c);
        }
    }
    let local = local.trim_matches('_');
    if local.is_empty() {
        return Err("its name has no ASCII letter or digit".to_owned());
    }
    if local.chars().count() > MAX_NAME_CHARS {
        return Err(format!(
            "its name is longer than {MAX_NAME_CHARS} characters"
        ));
    }
    Ok(local.to_owned())
}

/// The server's description (or title), trimmed and capped.
pub(super) fn description(tool: &rmcp::model::Tool, server: &str) -> String {
    let text = tool
        .description
        .as_deref()
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .or_else(|| tool.title.as_deref().map(str::trim))
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
        .unwrap_or_else(|| format!("The tool {:?} of the MCP server {server}.", tool.name));
    if text.chars().count() > MAX_DESCRIPTION_CHARS {
        let cut: String = text.chars().take(MAX_DESCRIPTION_CHARS).collect();
        format!("{}…", cut.trim_end())
    } else {
        text
    }
}

/// The schema codecrew checks inputs against: the server's when it describes an object
/// and compiles, else any object (and what was wrong with it).
pub(super) fn input_schema(schema: &Map<String, Value>) -> (Value, Option<&'static str>) {
    let any_object = || json!({"type": "object"});
    if schema.is_empty() {
        return (any_object(), None);
    }
    let mut schema = schema.clone();
    match schema.get("type") {
        None => {
            // Only objects can be arguments; saying so lets codecrew reject the rest.
            schema.insert("type".to_owned(), json!("object"));
        }
        Some(Value::String(kind)) if kind == "object" => {}
        Some(_) => return (any_object(), Some("does not describe an object")),
    }
    let schema = Value::Object(schema);
    if jsonschema::validator_for(&schema).is_err() {
        return (any_object(), Some("is not a valid JSON Schema"));
    }
    (schema, None)
}

/// One tool of an MCP server: of a server that started with the run, or of one offered
/// from a kept tool list and started at the first call of one of its tools.
pub struct McpTool {
    offer: Offer,
    server: Server,
}

enum Server {
    Running(Arc<ServerLink>),
    OnCall(Arc<LazyServer>),
}

impl McpTool {
    pub(super) fn connected(offer: Offer, link: Arc<ServerLink>) -> McpTool {
        McpTool {
            offer,
            server: Server::Running(link),
        }
    }

    pub(super) fn on_call(offer: Offer, server: Arc<LazyServer>) -> McpTool {
        McpTool {
            offer,
            server: Server::OnCall(server),
        }
    }
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.offer.name)
            .field("remote", &self.offer.remote)
            .field("readonly", &self.offer.readonly)
            .field("started", &matches!(self.server, Server::Running(_)))
            .finish_non_exhaustive()
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.offer.name
    }

    fn description(&self) -> &str {
        &self.offer.description
    }

    fn input_schema(&self) -> Value {
        self.offer.input_schema.clone()
    }

    fn readonly(&self) -> bool {
        self.offer.readonly
    }

    fn timeout(&self) -> Duration {
        // A first call may start the server.
        let startup = match &self.server {
            Server::Running(_) => Duration::ZERO,
            Server::OnCall(server) => server.startup(),
        };
        self.offer.timeout + TIMEOUT_MARGIN + startup
    }

    fn max_error_chars(&self) -> usize {
        MAX_ERROR_CHARS
    }

    fn execute<'a>(&'a self, _ctx: &'a ToolContext, input: Value) -> ToolFuture<'a> {
        Box::pin(self.call(input))
    }
}

impl McpTool {
    async fn call(&self, input: Value) -> Result<Value, ToolError> {
        let link = match &self.server {
            Server::Running(link) => Arc::clone(link),
            Server::OnCall(server) => server.link().await.map_err(|reason| {
                ToolError::new(
                    "E_MCP_UNAVAILABLE",
                    format!(
                        "the MCP server {} did not start, so codecrew:{} cannot be called: {}",
                        self.offer.server,
                        self.offer.name,
                        neutralise_envelopes(&reason)
                    ),
                )
                .with_suggestion(format!(
                    "do without the codecrew:{}__* tools in this run",
                    self.offer.server
                ))
            })?,
        };
        let arguments = match input {
            Value::Object(arguments) => arguments,
            other => {
                return Err(ToolError::new(
                    "E_INVALID_INPUT",
                    format!("the input must be a JSON object, not {other}"),
                ));
            }
        };
        let params =
            CallToolRequestParams::new(self.offer.remote.clone()).with_arguments(arguments);
        // Dropping the call (timeout) sends `notifications/cancelled` to the server.
        let response = match tokio::time::timeout(
            self.offer.timeout,
            link.peer.call_tool_once(params),
        )
        .await
        {
            Ok(response) => response.map_err(|error| self.service_error(error, &link))?,
            Err(_) => {
                return Err(ToolError::new(
                    "E_TIMEOUT",
                    format!(
                        "codecrew:{} (MCP server {}) did not answer within {} s",
                        self.offer.name,
                        self.offer.server,
                        self.offer.timeout.as_secs()
                    ),
                )
                .with_suggestion(format!(
                    "try a smaller request, or raise timeout_secs of [mcp.{}]",
                    self.offer.server
                )));
            }
        };
        let result = match response {
            CallToolResponse::Complete(result) => result,
            CallToolResponse::InputRequired(_) => {
                return Err(self.unsupported("asked for user input, which codecrew cannot give"));
            }
            CallToolResponse::Task(_) => {
                return Err(
                    self.unsupported("started a long-running task, which codecrew cannot follow")
                );
            }
            _ => {
                return Err(
                    self.unsupported("answered with a kind of result codecrew does not know")
                );
            }
        };
        let wire = serde_json::to_value(&result).map_err(|error| {
            ToolError::new(
                "E_INTERNAL",
                format!(
                    "cannot read the result of codecrew:{}: {error}",
                    self.offer.name
                ),
            )
        })?;
        // The tool's own words reach the model inside codecrew's message: no envelope in
        // them may read as a call.
        shape(&wire).map_err(|text| {
            ToolError::new(
                "E_MCP_TOOL_ERROR",
                format!(
                    "codecrew:{} failed: {}",
                    self.offer.name,
                    neutralise_envelopes(&text)
                ),
            )
        })
    }

    fn unsupported(&self, what: &str) -> ToolError {
        ToolError::new(
            "E_MCP_UNSUPPORTED",
            format!(
                "codecrew:{} (MCP server {}) {what}",
                self.offer.name, self.offer.server
            ),
        )
    }

    fn service_error(&self, error: ServiceError, link: &ServerLink) -> ToolError {
        let server = &self.offer.server;
        match error {
            ServiceError::McpError(data) => ToolError::new(
                "E_MCP_TOOL_ERROR",
                format!(
                    "the MCP server {server} refused the call of codecrew:{}: {} (JSON-RPC \
                     error {})",
                    self.offer.name,
                    neutralise_envelopes(&data.message),
                    data.code.0
                ),
            )
            .with_suggestion(format!(
                "`codecrew tools show {}` prints the input schema",
                self.offer.name
            )),
            ServiceError::TransportClosed
            | ServiceError::TransportSend(_)
            | ServiceError::Cancelled { .. } => {
                let stderr = link
                    .stderr
                    .quote()
                    .map(|text| format!(" (its stderr: {})", neutralise_envelopes(&text)))
                    .unwrap_or_default();
                ToolError::new(
                    "E_MCP_UNAVAILABLE",
                    format!(
                        "the MCP server {server} is not running any more, so codecrew:{} \
                         cannot be called{stderr}",
                        self.offer.name
                    ),
                )
                .with_suggestion(format!(
                    "do without the codecrew:{server}__* tools in this run; the server \
                     starts again with the next codecrew run"
                ))
            }
            ServiceError::Timeout { .. } => ToolError::new(
                "E_TIMEOUT",
                format!(
                    "codecrew:{} (MCP server {server}) did not answer in time",
                    self.offer.name
                ),
            ),
            other => ToolError::new(
                "E_MCP_PROTOCOL",
                format!(
                    "the MCP server {server} answered the call of codecrew:{} in a way \
                     codecrew does not understand: {other}",
                    self.offer.name
                ),
            ),
        }
    }
}
