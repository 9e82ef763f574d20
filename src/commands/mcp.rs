//! `codecrew mcp`: codecrew's tools (and other agents) served over MCP on stdin/stdout.
//!
//! stdout belongs to the protocol: this command prints nothing there itself, and logs and
//! warnings go to stderr. stdin is the transport too, so no call may prompt on the
//! terminal: every executor here gets the non-interactive asker.

use std::process::ExitCode;
use std::sync::Arc;

use codecrew::cli::McpArgs;
use codecrew::mcp_server::{Agents, DEPTH_ENV, ExecutorFactory, MAX_DEPTH, McpServer};
use codecrew_policy::NonInteractive;
use codecrew_tools::{Mode, ToolCatalog};

pub async fn run(args: McpArgs, options: super::ToolOptions) -> anyhow::Result<ExitCode> {
    let mode = Mode::from(args.mode);
    let workspace = options.workspace.clone();
    let (loaded, policy) = super::config_and_policy(&workspace)?;
    // Lives as long as the server: it owns the config's MCP servers.
    let toolbox = super::toolbox(&loaded, &workspace, mode).await;
    let registry = toolbox.registry().clone();
    let catalog = Arc::new(ToolCatalog::for_mode(&registry, mode)?);
    // Every executor here, the server's and each delegated job's, comes from this factory.
    // `executor_for` picks a terminal asker when there is a terminal; with stdin taken by
    // the transport, a prompt could never be answered, so Ask always becomes a denial.
    let executor_for: ExecutorFactory = {
        let registry = registry.clone();
        Arc::new(move |mode, catalog| {
            super::executor_for(registry.clone(), catalog, mode, &options, policy.clone())
                .with_asker(Arc::new(NonInteractive))
        })
    };
    let mut server = McpServer::new(Arc::new(executor_for(mode, catalog)));
    if !args.no_agents {
        let depth = depth();
        if depth >= MAX_DEPTH {
            tracing::info!(depth, "at the maximum delegation depth: no agent tools");
        }
        let agents = Agents::new(loaded, registry, workspace, depth, executor_for);
        server = server.with_agents(agents);
    }
    tracing::info!(mode = mode.name(), "serving MCP on stdin/stdout");
    let served = server.serve_stdio().await;
    // The config's MCP servers exit cleanly (dropping the toolbox would only signal them).
    toolbox.shutdown().await;
    served?;
    Ok(ExitCode::SUCCESS)
}

/// This server's nesting depth from [`DEPTH_ENV`]: 0 when unset. A value that is not a
/// number counts as the maximum, so a garbled variable can never reopen delegation.
fn depth() -> u32 {
    match std::env::var(DEPTH_ENV) {
        Err(std::env::VarError::NotPresent) => 0,
        Ok(value) => value.trim().parse().unwrap_or_else(|_| {
            tracing::warn!("{DEPTH_ENV}={value:?} is not a number; starting no agents");
            MAX_DEPTH
        }),
        Err(std::env::VarError::NotUnicode(_)) => MAX_DEPTH,
    }
}
