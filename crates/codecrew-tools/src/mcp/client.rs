//! The MCP client: starts the servers of `[mcp.<server>]` over stdio and offers each of
//! their tools as one [`Tool`], named `<server>__<tool>`.
//!
//! A server whose tool list an earlier run kept need not start with the run: [`on_call`]
//! offers its tools from that list and starts it, in the same way, at the first call of
//! one of them; a failed start is that call's error (`E_MCP_UNAVAILABLE`).
//!
//! Starting never fails the run. Every server starts concurrently and gets
//! `startup_timeout_secs` for the handshake and the (paginated) tool list; one that cannot
//! be run, exits, times out or does not speak MCP becomes a notice
//! (`mcp.files did not start: …`, quoting the end of its stderr) and the run goes on
//! without its tools.
//!
//! A server runs like the programs tools start: the scrubbed environment plus its `env`,
//! a session and process group of its own (registered, so it is killed when codecrew
//! exits), no terminal. Its stderr never reaches the user's terminal: each line goes to
//! the log at debug level (`-vv`) and the last few KiB are kept to quote when it fails.
//! It runs in the OS sandbox of the run's mode, as external tools do: on Linux with
//! Landlock it may read anything but write only in the workspace (execute mode) and
//! `/tmp`, and use the network only when its config says `network = true`. What its tools
//! may do is also governed per call by the permission policy.
//!
//! Names. A remote tool name keeps its ASCII letters, digits and `-`; any other
//! character becomes `_`, runs of `_` become one and `_` at either end is dropped, so
//! `get.weather` is offered as `<server>__get_weather` and the name never holds a second
//! `__`. A name left empty or longer than [`MAX_NAME_CHARS`], or one that clashes with an
//! earlier tool of the same server once sanitised, is left out with a notice. Calls use
//! the server's own name.
//!
//! Results. A call's MCP result becomes one JSON object (see [`shape`]): `text` (the text
//! parts joined), `content` (the other parts, binary data summarised, never inlined),
//! `structured` (`structuredContent`), and `truncated` + `note` when the result was cut
//! at [`MAX_OUTPUT_BYTES`]. `isError: true` is an `E_MCP_TOOL_ERROR` with the tool's text;
//! a server that went away is `E_MCP_UNAVAILABLE`.
//!
//! The tool list is read once: `notifications/tools/list_changed` does not change what a
//! running session offers. Servers that ask for user input (elicitation) or answer with
//! a long-running task get an `E_MCP_UNSUPPORTED` error.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub use super::limits::{MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, MAX_OUTPUT_BYTES};
use super::offers::offers;
pub use super::offers::sanitise;
pub use super::remote::McpTool;
pub use super::result::shape;
pub use super::server::ListingHook;
use super::server::{Connection, LazyServer, start_one};
use crate::config::McpServerConfig;
use crate::{Tool, ToolContext};

/// The running MCP servers of one run, their tools, and what went wrong starting them.
///
/// Dropping it closes each connection (rmcp then closes the server's stdin) and sends
/// SIGTERM to each server's process group (a server started at a call, once the last of
/// its tools is dropped too); [`McpClients::shutdown`] waits for the servers
/// to exit instead. Either way codecrew's exit sweep kills whatever is left.
#[derive(Default)]
pub struct McpClients {
    connections: Vec<Connection>,
    tools: Vec<Arc<dyn Tool>>,
    notices: Vec<String>,
    /// What each server that started listed, as it listed it.
    listings: BTreeMap<String, Vec<rmcp::model::Tool>>,
    /// The servers that start at the first call of one of their tools.
    lazy: Vec<Arc<LazyServer>>,
}

impl std::fmt::Debug for McpClients {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClients")
            .field(
                "servers",
                &self.connections.iter().map(|c| &c.name).collect::<Vec<_>>(),
            )
            .field(
                "tools",
                &self.tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
            )
            .field("notices", &self.notices)
            .finish()
    }
}

impl McpClients {
    /// The tools of every server that started, in server then tool order.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }

    /// What the user should know: servers that did not start, tools left out.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The names of the servers that started with these clients (not those started
    /// later, at a call).
    pub fn servers(&self) -> impl Iterator<Item = &str> {
        self.connections.iter().map(|c| c.name.as_str())
    }

    /// The tool list of each server that started with these clients, as the server sent
    /// it: what [`on_call`] offers again in a later run without starting the server.
    pub fn listings(&self) -> &BTreeMap<String, Vec<rmcp::model::Tool>> {
        &self.listings
    }

    /// Adds `other`'s servers, tools and notices to these.
    pub fn merge(&mut self, mut other: McpClients) {
        self.connections.append(&mut other.connections);
        self.tools.append(&mut other.tools);
        self.notices.append(&mut other.notices);
        self.listings.append(&mut other.listings);
        self.lazy.append(&mut other.lazy);
    }

    /// Closes every connection and waits (a few seconds at most) for the servers to exit;
    /// whatever is left of their process groups is then killed.
    pub async fn shutdown(mut self) {
        let mut closing = tokio::task::JoinSet::new();
        let started_at_a_call = self
            .lazy
            .iter()
            .filter_map(|server| server.take_connection());
        for connection in std::mem::take(&mut self.connections)
            .into_iter()
            .chain(started_at_a_call.collect::<Vec<_>>())
        {
            closing.spawn(connection.close());
        }
        while closing.join_next().await.is_some() {}
    }
}

/// Starts every server of `servers` concurrently; see the module doc. The run's `ctx`
/// gives the workspace (the base of relative `cwd`s and commands), the variables the
/// scrub keeps, the mode and whether the OS sandbox is on.
pub async fn start(servers: &BTreeMap<String, McpServerConfig>, ctx: &ToolContext) -> McpClients {
    let mut starting = tokio::task::JoinSet::new();
    let mut names = HashMap::new();
    for (name, config) in servers {
        let task = starting.spawn(start_one(name.clone(), config.clone(), ctx.clone()));
        names.insert(task.id(), name.clone());
    }
    let mut outcomes = BTreeMap::new();
    while let Some(joined) = starting.join_next_with_id().await {
        let (id, outcome) = match joined {
            Ok((id, outcome)) => (id, outcome),
            Err(error) => (
                error.id(),
                Err(format!("its start-up task failed ({error})")),
            ),
        };
        if let Some(name) = names.remove(&id) {
            outcomes.insert(name, outcome);
        }
    }
    let mut clients = McpClients::default();
    for (name, outcome) in outcomes {
        match outcome {
            Ok(started) => {
                let (offers, notices) = offers(&name, &servers[&name], &started.tools);
                for offer in offers {
                    let tool = McpTool::connected(offer, Arc::clone(&started.link));
                    clients.tools.push(Arc::new(tool));
                }
                clients.notices.extend(notices);
                clients.listings.insert(name, started.tools);
                clients.connections.push(started.connection);
            }
            Err(reason) => clients
                .notices
                .push(format!("mcp.{name} did not start: {reason}")),
        }
    }
    clients
}

/// The tools of `servers` as `listings` (an earlier run's tool lists, by server) give
/// them, each server started only at the first call of one of its tools, in the sandbox
/// of `ctx`. A server without a listing offers nothing here.
pub fn on_call(
    servers: &BTreeMap<String, McpServerConfig>,
    listings: &BTreeMap<String, Vec<rmcp::model::Tool>>,
    ctx: &ToolContext,
    on_listing: Option<&ListingHook>,
) -> McpClients {
    let mut clients = McpClients::default();
    for (name, config) in servers {
        let Some(listing) = listings.get(name) else {
            continue;
        };
        let server = Arc::new(LazyServer::new(name, config, ctx, on_listing));
        let (offers, notices) = offers(name, config, listing);
        for offer in offers {
            clients
                .tools
                .push(Arc::new(McpTool::on_call(offer, Arc::clone(&server))));
        }
        clients.notices.extend(notices);
        clients.lazy.push(server);
    }
    clients
}
