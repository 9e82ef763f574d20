//! Configuration: `codecrew.toml` (project) and the user's config file, merged over the
//! built-in defaults.
//!
//! The types here are the contract the rest of codecrew reads; loading, discovery and the
//! starter file live in the submodules.

mod error;
mod keys;
pub mod load;
mod spans;
pub mod starter;
#[cfg(test)]
mod tests;
mod validate;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use error::{ConfigError, Diagnostic};
pub use load::{
    CONFIG_ENV, LoadedConfig, Origin, PROJECT_FILE, find_project_file, load, load_from,
    user_config_path, user_config_path_with,
};

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
    /// Any other CLI, described by a [`CommandProvider`].
    Command,
}

impl ProviderKind {
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::Claude => "claude",
            ProviderKind::Gemini => "gemini",
            ProviderKind::Codex => "codex",
            ProviderKind::Copilot => "copilot",
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
}

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
}

/// An external tool: a program that gets each call's input as JSON on its stdin (never
/// spliced into a shell string) and prints the result, JSON or text, on stdout.
///
/// ```toml
/// [tools.jira]
/// command = "python3"
/// args = ["tools/jira.py"]          # the export's name is appended: tools/jira.py search
/// timeout_secs = 30
/// env = { JIRA_URL = "https://jira.example.com" }
/// network = true
///
/// [[tools.jira.exports]]
/// name = "search"
/// description = "Search issues with JQL."
/// readonly = true
/// input_schema = { type = "object", properties = { jql = { type = "string" } }, required = ["jql"] }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalToolConfig {
    /// The program: a name looked up on PATH, or a path (relative to the workspace).
    pub command: String,
    /// Arguments before the export's name.
    #[serde(default)]
    pub args: Vec<String>,
    /// Seconds one call may take before its process group is killed.
    #[serde(default = "default_tool_timeout_secs")]
    pub timeout_secs: u64,
    /// Variables set for the program, on top of the scrubbed environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The working directory, relative to the workspace (default: the workspace).
    #[serde(default)]
    pub cwd: Option<std::path::PathBuf>,
    /// Whether every export is read-only (offered in query mode, allowed without asking).
    /// Off unless declared: codecrew cannot know what a program does.
    #[serde(default)]
    pub readonly: bool,
    /// Whether the program may use the network inside the OS sandbox.
    #[serde(default)]
    pub network: bool,
    /// The operations the program offers; at least one.
    pub exports: Vec<ExportConfig>,
}

/// One operation of an external tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportConfig {
    pub name: String,
    /// What it does and when to use it, for the model.
    pub description: String,
    /// The JSON Schema of the input object (default: any object).
    #[serde(default = "any_object_schema")]
    pub input_schema: serde_json::Value,
    /// Overrides the tool's `readonly` for this export.
    #[serde(default)]
    pub readonly: Option<bool>,
}

impl ExportConfig {
    /// Whether this export of `tool` is read-only.
    pub fn is_readonly(&self, tool: &ExternalToolConfig) -> bool {
        self.readonly.unwrap_or(tool.readonly)
    }
}

/// An MCP server codecrew starts (stdio) and whose tools it offers.
///
/// ```toml
/// [mcp.files]
/// command = "npx"
/// args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
/// readonly_tools = ["read_text_file", "list_directory"]
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for the server, on top of the scrubbed environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The working directory, relative to the workspace (default: the workspace).
    #[serde(default)]
    pub cwd: Option<std::path::PathBuf>,
    /// The server's tools the user declares read-only: offered in query mode and allowed
    /// without asking. The server's own hints are not trusted.
    #[serde(default)]
    pub readonly_tools: Vec<String>,
    /// Seconds the server may take to start and list its tools.
    #[serde(default = "default_mcp_startup_secs")]
    pub startup_timeout_secs: u64,
    /// Seconds one call may take.
    #[serde(default = "default_tool_timeout_secs")]
    pub timeout_secs: u64,
}

fn default_tool_timeout_secs() -> u64 {
    60
}

fn default_mcp_startup_secs() -> u64 {
    30
}

fn any_object_schema() -> serde_json::Value {
    serde_json::json!({ "type": "object" })
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
        let agents = [
            ProviderKind::Claude,
            ProviderKind::Gemini,
            ProviderKind::Codex,
            ProviderKind::Copilot,
        ]
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
