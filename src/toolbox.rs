//! The tools of one run, from the config: the built-ins (their help tool explaining
//! this binary's commands), the `[tools.*]` external tools and the `[mcp.*]` servers.

use std::path::Path;
use std::sync::Arc;

use codecrew_tools::builtin::HelpSource;
use codecrew_tools::{ToolRegistry, Toolbox};

use crate::cli;
use crate::config::Config;

/// The built-in tools, with the help tool reading this binary's `--help`.
pub fn builtin() -> ToolRegistry {
    ToolRegistry::builtin(Arc::new(CliHelp))
}

/// Every tool `config` gives a run in `workspace`; starts its MCP servers.
pub async fn start(config: &Config, workspace: &Path) -> Toolbox {
    Toolbox::start(
        builtin(),
        &config.tools,
        &config.mcp,
        &config.permissions.pass_env,
        workspace,
    )
    .await
}

/// The help tool's text: the command line's own help.
#[derive(Debug, Clone, Copy)]
struct CliHelp;

impl HelpSource for CliHelp {
    fn command_names(&self) -> Vec<String> {
        cli::command_names()
    }

    fn help_text(&self, command: Option<&str>) -> Option<String> {
        cli::help_text(command)
    }
}
