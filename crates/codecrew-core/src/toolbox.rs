//! The tools of one run, from the config: the built-ins (their help tool explaining the
//! front end's commands, from the [`HelpSource`] it hands in), the `[tools.*]` external
//! tools and the `[mcp.*]` servers.

use std::path::Path;
use std::sync::Arc;

use codecrew_tools::builtin::HelpSource;
use codecrew_tools::mcp::client::ListingHook;
use codecrew_tools::{Mode, ToolContext, ToolRegistry, Toolbox};

use crate::mcp_listing;
use codecrew_config::Config;

/// The built-in tools, the help tool explaining what `help` says.
pub fn builtin(help: Arc<dyn HelpSource>) -> ToolRegistry {
    ToolRegistry::builtin(help)
}

/// Every tool `config` gives a run of `mode` in `workspace`; starts its MCP servers, in
/// the OS sandbox of that mode (and keeps their tool lists, see [`crate::mcp_listing`]).
pub async fn start(
    config: &Config,
    workspace: &Path,
    mode: Mode,
    help: Arc<dyn HelpSource>,
) -> Toolbox {
    start_or_list(config, workspace, mode, help, false).await
}

/// As [`start`], except that the MCP servers whose tool list an earlier run kept do not
/// start now: their tools are offered from it, and each starts (in the same sandbox) at
/// the first call of one of its tools. A run that calls none, or a command that only
/// shows the tools, saves the seconds a server can take to start.
pub async fn on_call(
    config: &Config,
    workspace: &Path,
    mode: Mode,
    help: Arc<dyn HelpSource>,
) -> Toolbox {
    start_or_list(config, workspace, mode, help, true).await
}

async fn start_or_list(
    config: &Config,
    workspace: &Path,
    mode: Mode,
    help: Arc<dyn HelpSource>,
    use_lists: bool,
) -> Toolbox {
    let mut ctx = ToolContext::new(workspace.to_path_buf(), mode);
    ctx.exec.pass_env = config.permissions.pass_env.clone();
    ctx.exec.sandbox = sandbox_enabled();
    let lists = mcp_listing::dir();
    let kept = match (&lists, use_lists) {
        (Some(dir), true) => mcp_listing::load(dir, workspace, &config.mcp),
        _ => mcp_listing::Listings::new(),
    };
    let on_listing = lists.map(|dir| {
        let workspace = workspace.to_path_buf();
        let servers = config.mcp.clone();
        let hook: ListingHook = Arc::new(move |name: &str, tools: &[rmcp::model::Tool]| {
            if let Some(server) = servers.get(name) {
                mcp_listing::store(&dir, &workspace, name, server, tools);
            }
        });
        hook
    });
    Toolbox::start_or_list(
        builtin(help),
        &config.tools,
        &config.mcp,
        &kept,
        &ctx,
        on_listing,
    )
    .await
}

/// Whether the OS sandbox confines what tools start. The user (never the model) can turn
/// it off with `CODECREW_SANDBOX=off`, e.g. for builds that must write caches outside the
/// workspace.
pub fn sandbox_enabled() -> bool {
    codecrew_policy::sandbox::enabled()
}
