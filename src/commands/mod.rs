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
use codecrew::tool::middleware::{AuditLog, TracingLogger};
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
pub fn executor(mode: Mode, workspace: PathBuf, audit: bool) -> anyhow::Result<ToolExecutor> {
    let registry = Arc::new(ToolRegistry::builtin());
    let catalog = Arc::new(ToolCatalog::for_mode(&registry, mode)?);
    Ok(executor_for(registry, catalog, mode, workspace, audit))
}

/// The executor over a given catalog, with the logging and (when asked) the audit hooks.
pub fn executor_for(
    registry: Arc<ToolRegistry>,
    catalog: Arc<ToolCatalog>,
    mode: Mode,
    workspace: PathBuf,
    audit: bool,
) -> ToolExecutor {
    let audit_log = audit.then(|| Arc::new(AuditLog::in_workspace(&workspace)));
    let context = ToolContext { workspace, mode };
    let mut executor =
        ToolExecutor::new(registry, catalog, context).with_middleware(Arc::new(TracingLogger));
    if let Some(audit_log) = audit_log {
        executor = executor.with_middleware(audit_log);
    }
    executor
}

/// Strips the `codecrew:` (or `codecrew__`) prefix a user may type.
pub fn bare_name(name: &str) -> &str {
    name.strip_prefix("codecrew:")
        .or_else(|| name.strip_prefix("codecrew__"))
        .unwrap_or(name)
}
