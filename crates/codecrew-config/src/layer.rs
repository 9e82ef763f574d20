//! What one config file holds, read but not yet validated or merged: the shape both the
//! loader (`load.rs`, which reads and merges the layers) and the checks (`validate.rs`)
//! work on.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::{AgentConfig, ExternalToolConfig, McpServerConfig, PermissionsConfig};

/// Which file a layer comes from: they accept the same keys, except `trusted_projects`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    User,
    Project,
}

/// A config file, read and deserialized (not yet validated).
#[derive(Debug)]
pub(crate) struct ParsedFile {
    pub(crate) path: PathBuf,
    pub(crate) text: String,
    pub(crate) kind: FileKind,
    pub(crate) layer: FileLayer,
}

/// One file's contents: like [`Config`], but every scalar optional so that an absent key
/// does not override a lower layer.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileLayer {
    pub(crate) default_agent: Option<String>,
    #[serde(default)]
    pub(crate) agents: BTreeMap<String, AgentConfig>,
    pub(crate) permissions: Option<PermissionsLayer>,
    pub(crate) limits: Option<LimitsLayer>,
    #[serde(default)]
    pub(crate) tools: BTreeMap<String, ExternalToolConfig>,
    #[serde(default)]
    pub(crate) mcp: BTreeMap<String, McpServerConfig>,
    /// User file only: projects whose config may loosen permissions.
    pub(crate) trusted_projects: Option<Vec<PathBuf>>,
    /// User file only: `codecrew mcp --http`'s settings.
    pub(crate) mcp_server: Option<McpServerLayer>,
    /// User file only: whether runs are kept in the run store.
    pub(crate) logs: Option<LogsLayer>,
    /// User file only: how `execute --worktrees` sets up each agent's worktree.
    pub(crate) worktree: Option<WorktreeLayer>,
}

/// `[worktree]`: what each agent's worktree gets besides the checkout's files. User file
/// only: `setup` runs a program outside every wall, which a checkout must not name.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorktreeLayer {
    pub(crate) link: Option<Vec<String>>,
    pub(crate) setup: Option<String>,
}

/// `[logs]`: the run store (`codecrew logs`). User file only: a checkout could otherwise
/// turn on the keeping of what its users' agents read and answer.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LogsLayer {
    pub(crate) enabled: Option<bool>,
    pub(crate) max_size: Option<crate::size::ByteSize>,
}

/// `[mcp_server]`: how `codecrew mcp --http` serves. User file only: a checkout that named
/// the token would know it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct McpServerLayer {
    pub(crate) token: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct PermissionsLayer {
    pub(crate) allow: Vec<String>,
    pub(crate) ask: Vec<String>,
    pub(crate) deny: Vec<String>,
    pub(crate) pass_env: Vec<String>,
    pub(crate) allow_network: Option<bool>,
    pub(crate) cli_read: Vec<String>,
}

impl PermissionsLayer {
    pub(crate) fn into_config(self) -> PermissionsConfig {
        PermissionsConfig {
            allow: self.allow,
            ask: self.ask,
            deny: self.deny,
            pass_env: self.pass_env,
            allow_network: self.allow_network.unwrap_or(false),
            cli_read: self.cli_read,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LimitsLayer {
    pub(crate) max_turns: Option<u32>,
    pub(crate) turn_timeout_secs: Option<u64>,
    pub(crate) max_calls_per_message: Option<usize>,
}
