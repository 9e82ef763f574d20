//! `codecrew mcp`: codecrew's tools (and other agents) served over MCP on stdin/stdout.
//!
//! stdout belongs to the protocol: this command prints nothing there itself, and logs and
//! warnings go to stderr. stdin is the transport too, so no call may prompt on the
//! terminal: every executor here gets the non-interactive asker.

use std::process::ExitCode;
use std::sync::Arc;

use codecrew::cli::McpArgs;
use codecrew::mcp_server::{Agents, McpServer};
use codecrew::run::crew::{Crew, ExecutorFactory, MAX_DEPTH, depth_from_env};
use codecrew::run::session::Settings;
use codecrew_policy::NonInteractive;
use codecrew_tools::{Mode, ToolCatalog};

pub async fn run(args: McpArgs, options: super::ToolOptions) -> anyhow::Result<ExitCode> {
    let mode = Mode::from(args.mode);
    let workspace = options.workspace.clone();
    let (loaded, policy) = super::config_and_policy(&workspace)?;
    // Lives as long as the server: it owns the config's MCP servers.
    let toolbox = super::toolbox_on_call(&loaded, &workspace, mode).await;
    let registry = toolbox.registry().clone();
    let catalog = Arc::new(ToolCatalog::for_mode(&registry, mode)?);
    // Every executor here, the server's and each delegated job's, comes from this factory.
    // `executor_for` picks a terminal asker when there is a terminal; with stdin taken by
    // the transport, a prompt could never be answered, so Ask always becomes a denial.
    let executor_for: ExecutorFactory = Arc::new(move |mode, registry, catalog| {
        super::executor_for(registry, catalog, mode, &options, policy.clone())
            .with_asker(Arc::new(NonInteractive))
    });
    let mut server = McpServer::new(Arc::new(executor_for(mode, registry.clone(), catalog)));
    if !args.no_agents {
        let depth = depth_from_env();
        if depth >= MAX_DEPTH {
            tracing::info!(depth, "at the maximum delegation depth: no agent tools");
        }
        let settings = Settings::new(mode, &loaded.config.limits, workspace.clone());
        let crew = Crew::new(loaded, &registry, settings, executor_for);
        server = server.with_agents(Agents::new(crew, depth));
    }
    tracing::info!(mode = mode.name(), "serving MCP on stdin/stdout");
    let served = server.serve_stdio().await;
    // The config's MCP servers exit cleanly (dropping the toolbox would only signal them).
    toolbox.shutdown().await;
    served?;
    Ok(ExitCode::SUCCESS)
}
