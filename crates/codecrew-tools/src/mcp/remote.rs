//! One remote MCP tool as a codecrew [`Tool`]: what its server's list offers of it
//! (`offers.rs`), and its calls over the server's link (`server.rs`).

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::Value;

use super::limits::{MAX_ERROR_CHARS, TIMEOUT_MARGIN};
use super::offers::Offer;
use super::result::shape;
use super::server::{LazyServer, ServerLink};
use crate::{ErrorCode, Tool, ToolContext, ToolError, ToolFuture};
use codecrew_intercept::neutralise_envelopes;

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
                    ErrorCode::McpUnavailable,
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
                    ErrorCode::InvalidInput,
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
                    ErrorCode::Timeout,
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
                ErrorCode::Internal,
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
                ErrorCode::McpToolError,
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
            ErrorCode::McpUnsupported,
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
                ErrorCode::McpToolError,
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
                    ErrorCode::McpUnavailable,
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
                ErrorCode::Timeout,
                format!(
                    "codecrew:{} (MCP server {server}) did not answer in time",
                    self.offer.name
                ),
            ),
            other => ToolError::new(
                ErrorCode::McpProtocol,
                format!(
                    "the MCP server {server} answered the call of codecrew:{} in a way \
                     codecrew does not understand: {other}",
                    self.offer.name
                ),
            ),
        }
    }
}
