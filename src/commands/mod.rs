//! One module per command. Each prints its result on stdout and returns the exit code.

pub mod agents;
pub mod completions;
pub mod init;
pub mod intercept;
pub mod prompt;
pub mod run;
pub mod tools;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use codecrew::tool::middleware::TracingLogger;
use codecrew::tool::{Mode, ToolCatalog, ToolContext, ToolExecutor, ToolRegistry};

/// Usage or configuration error.
pub const EXIT_USAGE: u8 = 2;

/// The canonical workspace root: `--workdir`, or the current directory.
pub fn workspace(workdir: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = match workdir {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let canonical = dir
        .canonicalize()
        .with_context(|| format!("the workspace {} does not exist", dir.display()))?;
    anyhow::ensure!(
        canonical.is_dir(),
        "the workspace {} is not a directory",
        dir.display()
    );
    Ok(canonical)
}

/// The executor for one run in `mode` over `workspace`.
pub fn executor(mode: Mode, workspace: PathBuf) -> anyhow::Result<ToolExecutor> {
    let registry = Arc::new(ToolRegistry::builtin());
    let catalog = Arc::new(ToolCatalog::for_mode(&registry, mode)?);
    let context = ToolContext { workspace, mode };
    Ok(ToolExecutor::new(registry, catalog, context).with_middleware(Arc::new(TracingLogger)))
}

/// Strips the `codecrew:` (or `codecrew__`) prefix a user may type.
pub fn bare_name(name: &str) -> &str {
    name.strip_prefix("codecrew:")
        .or_else(|| name.strip_prefix("codecrew__"))
        .unwrap_or(name)
}
