//! The permission section of the configuration, as the policy reads it.

use serde::{Deserialize, Serialize};

/// Permission rules, e.g. `run_command(git diff *)`, `write_file(src/**)`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PermissionsConfig {
    pub allow: Vec<String>,
    pub ask: Vec<String>,
    pub deny: Vec<String>,
    /// Environment variables passed to tool commands despite the scrub.
    pub pass_env: Vec<String>,
    /// Whether run_command may use the network inside the sandbox (execute mode).
    pub allow_network: bool,
    /// Folders the agent CLIs may also read inside their wall (`~/` is the home
    /// directory): where a version manager keeps a CLI it runs through a shim (`~/.asdf`),
    /// a toolchain the CLI's own shell uses (`~/.cargo`, `~/.rustup`).
    pub cli_read: Vec<String>,
}
