//! codecrew's configuration, and the user's private state files.
//!
//! ```text
//! codecrew.toml (project) + the user's config file -> LoadedConfig: the merged Config over
//!     the built-in defaults, the permission layers, whether the project is trusted (and
//!     what of an untrusted one is left out), errors at file:line:column
//! a secret's file in the user's state folder -> the secret (secret_file: refused when
//!     another could know it; made once, 0600)
//! ```
//!
//! It reads files and decides nothing else: no process, no terminal. The types here are
//! the contract the layers above read (the agents, the engine, the front ends); loading,
//! discovery, validation and the starter file live in the submodules.

pub mod agent_tools;
mod error;
mod keys;
mod layer;
pub mod load;
pub mod projects;
pub mod secret_file;
mod spans;
pub mod starter;
#[cfg(test)]
mod tests;
mod validate;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use codecrew_policy::PermissionsConfig;
pub use codecrew_tools::config::{ExportConfig, ExternalToolConfig, McpServerConfig};
pub use error::{ConfigError, Diagnostic};
pub use load::{
    CONFIG_ENV, LoadedConfig, Origin, PROJECT_FILE, find_project_file, load, load_from,
    user_config_path, user_config_path_with,
};

/// The environment variable that gives `codecrew mcp --http` its bearer token. It is
/// removed from the environment of every CLI codecrew starts (an agent holding it could
/// call the server, in a mode above its own, from inside its wall).
pub const MCP_TOKEN_ENV: &str = "CODECREW_MCP_TOKEN";

/// Everything codecrew can be configured with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// The agent used when a task has no `@mention`.
    pub default_agent: String,
    /// Agents by id (`@id` in a task).
    pub agents: BTreeMap<String, AgentConfig>,
    pub permissions: PermissionsConfig,
    pub limits: LimitsConfig,
    /// External tools by resource name, offered as `codecrew:<resource>__<export>`.
    pub tools: BTreeMap<String, ExternalToolConfig>,
    /// MCP servers by name, whose tools are offered as `codecrew:<server>__<tool>`.
    pub mcp: BTreeMap<String, McpServerConfig>,
}

/// Which CLI an agent runs, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    Claude,
    Gemini,
    Codex,
    Copilot,
    Opencode,
    Qwen,
    Llm,
    /// Any other CLI, described by a [`CommandProvider`].
    Command,
}

impl ProviderKind {
    /// The CLIs codecrew knows, each a built-in agent of the same name (the CLI layer
    /// has a module for each).
    pub const BUILT_IN: [ProviderKind; 7] = [
        ProviderKind::Claude,
        ProviderKind::Gemini,
        ProviderKind::Codex,
        ProviderKind::Copilot,
        ProviderKind::Opencode,
        ProviderKind::Qwen,
        ProviderKind::Llm,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::Claude => "claude",
            ProviderKind::Gemini => "gemini",
            ProviderKind::Codex => "codex",
            ProviderKind::Copilot => "copilot",
            ProviderKind::Opencode => "opencode",
            ProviderKind::Qwen => "qwen",
            ProviderKind::Llm => "llm",
            ProviderKind::Command => "command",
        }
    }
}

/// One agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    pub provider: ProviderKind,
    /// The model used when the mention names none (`@claude` vs `@claude:haiku`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Text put before codecrew's prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Extra arguments for the CLI, per mode.
    #[serde(default)]
    pub args: ModeArgs,
    /// The codecrew tools offered to this agent (names without prefix); all the mode
    /// allows when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// For `provider = "command"`: how to run the CLI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<CommandProvider>,
    /// Whether one CLI process serves the whole tool loop where the CLI can (Claude);
    /// `false` starts it again for every turn, resuming its session. Default: true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<bool>,
}

/// Extra CLI arguments per mode.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModeArgs {
    pub query: Vec<String>,
    pub execute: Vec<String>,
}

/// A CLI codecrew does not know, described by the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandProvider {
    /// The argv template. `{prompt}` is replaced by the prompt (when `prompt = "arg"`),
    /// `{model}` by the model; an argument that is only `{model}` is dropped when there is
    /// no model. Never run through a shell.
    pub argv: Vec<String>,
    /// How the prompt reaches the CLI.
    #[serde(default)]
    pub prompt: PromptVia,
    /// What the CLI prints.
    #[serde(default)]
    pub output: OutputFormat,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptVia {
    /// Written to the CLI's stdin, which is then closed.
    #[default]
    Stdin,
    /// Put in place of `{prompt}` in the argv.
    Arg,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    #[default]
    Text,
    Claude,
    Gemini,
    Codex,
    Copilot,
    Opencode,
    Llm,
}

/// Limits of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Model turns per job before codecrew stops (`--max-turns`).
    pub max_turns: u32,
    /// Seconds one CLI turn may take (`--timeout`).
    pub turn_timeout_secs: u64,
    /// Calls accepted from one message.
    pub max_calls_per_message: usize,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            max_turns: 8,
            turn_timeout_secs: 600,
            max_calls_per_message: 16,
        }
    }
}

impl LimitsConfig {
    pub fn turn_timeout(&self) -> Duration {
        Duration::from_secs(self.turn_timeout_secs)
    }
}

impl Default for Config {
    /// The built-in agents: one per known CLI, `claude` the default.
    fn default() -> Self {
        let agents = ProviderKind::BUILT_IN
            .into_iter()
            .map(|provider| {
                (
                    provider.name().to_owned(),
                    AgentConfig {
                        provider,
                        model: None,
                        system_prompt: None,
                        args: ModeArgs::default(),
                        tools: None,
                        command: None,
                        keep_alive: None,
                    },
                )
            })
            .collect();
        Config {
            default_agent: "claude".to_owned(),
            agents,
            permissions: PermissionsConfig::default(),
            limits: LimitsConfig::default(),
            tools: BTreeMap::new(),
            mcp: BTreeMap::new(),
        }
    }
}
