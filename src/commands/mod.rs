//! One module per command. Each prints its result on stdout and returns the exit code.

pub mod intercept;
pub mod prompt;
pub mod tools;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use codecrew::permission::Policy;
use codecrew::permission::ask::default_asker;
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

/// The executor for one run in `mode` over `workspace`; `yes` is `--yes`.
///
/// The policy is the built-in defaults until config loading hands over the user's and the
/// project's `[permissions]` (see `Policy::from_layers`).
pub fn executor(mode: Mode, workspace: PathBuf, yes: bool) -> anyhow::Result<ToolExecutor> {
    let registry = Arc::new(ToolRegistry::builtin());
    let catalog = Arc::new(ToolCatalog::for_mode(&registry, mode)?);
    let mut context = ToolContext::new(workspace, mode);
    // The user (never the model) can turn the OS sandbox off, e.g. for builds that must
    // write caches outside the workspace.
    context.exec.sandbox = std::env::var("CODECREW_SANDBOX").map_or(true, |value| value != "off");
    if !context.exec.sandbox {
        eprintln!(
            "codecrew: warning: CODECREW_SANDBOX=off: run_command runs without the OS sandbox"
        );
    }
    Ok(ToolExecutor::new(registry, catalog, context)
        .with_middleware(Arc::new(TracingLogger))
        .with_policy(Arc::new(Policy::default()))
        .with_asker(default_asker())
        .assume_yes(yes))
}

/// Strips the `codecrew:` (or `codecrew__`) prefix a user may type.
pub fn bare_name(name: &str) -> &str {
    name.strip_prefix("codecrew:")
        .or_else(|| name.strip_prefix("codecrew__"))
        .unwrap_or(name)
}
