//! Every tool one run can use: the built-ins, the config's external tools, and the tools
//! of its MCP servers, which live as long as the toolbox.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{ToolContext, ToolRegistry, external};
use crate::config::{ExternalToolConfig, McpServerConfig};
use crate::mcp::client::{self, ListingHook, McpClients};

/// The tools of one run.
///
/// It owns the run's MCP servers: dropping it stops them (see [`McpClients`]);
/// [`Toolbox::shutdown`] waits for them to exit.
pub struct Toolbox {
    registry: Arc<ToolRegistry>,
    /// What the user should know: servers that did not start, tools left out.
    notices: Vec<String>,
    mcp: McpClients,
}

impl Toolbox {
    /// `registry` (the built-ins), the external tools of `tools`, and the tools of the
    /// `mcp` servers, started for the run of `ctx`: in its workspace, with its `pass_env`
    /// let through the environment scrub, in the OS sandbox of its mode (a server that
    /// fails to start is a notice, not an error).
    pub async fn start(
        registry: ToolRegistry,
        tools: &BTreeMap<String, ExternalToolConfig>,
        mcp: &BTreeMap<String, McpServerConfig>,
        ctx: &ToolContext,
    ) -> Toolbox {
        Toolbox::start_or_list(registry, tools, mcp, &BTreeMap::new(), ctx, None).await
    }

    /// As [`Toolbox::start`], except that the servers `listings` has a tool list for
    /// (from an earlier run) do not start now: their tools are offered as listed, and
    /// each starts at the first call of one of its tools. `on_listing` is told the list
    /// of every server that starts, now or at a call.
    pub async fn start_or_list(
        mut registry: ToolRegistry,
        tools: &BTreeMap<String, ExternalToolConfig>,
        mcp: &BTreeMap<String, McpServerConfig>,
        listings: &BTreeMap<String, Vec<rmcp::model::Tool>>,
        ctx: &ToolContext,
        on_listing: Option<ListingHook>,
    ) -> Toolbox {
        for tool in external::from_config(tools) {
            registry.register(tool);
        }
        let (listed, unlisted): (BTreeMap<_, _>, BTreeMap<_, _>) = mcp
            .iter()
            .map(|(name, config)| (name.clone(), config.clone()))
            .partition(|(name, _)| listings.contains_key(name));
        let mut mcp = client::start(&unlisted, ctx).await;
        if let Some(hook) = &on_listing {
            for (name, tools) in mcp.listings() {
                hook(name, tools);
            }
        }
        mcp.merge(client::on_call(&listed, listings, ctx, on_listing.as_ref()));
        let mut notices = mcp.notices().to_vec();
        for tool in mcp.tools() {
            if registry.contains(tool.name()) {
                // `[tools.files]` and `[mcp.files]` may both export `read`.
                notices.push(format!(
                    "the MCP tool codecrew:{} is left out: an external tool has that name",
                    tool.name()
                ));
                continue;
            }
            registry.register(Arc::clone(tool));
        }
        Toolbox {
            registry: Arc::new(registry),
            notices,
            mcp,
        }
    }

    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The names of the MCP servers that started with the toolbox.
    pub fn mcp_servers(&self) -> impl Iterator<Item = &str> {
        self.mcp.servers()
    }

    /// Stops the MCP servers and waits (a few seconds at most) for them to exit.
    pub async fn shutdown(self) {
        self.mcp.shutdown().await;
    }
}
