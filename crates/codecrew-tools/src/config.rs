//! The tools' sections of the configuration: `[tools.<resource>]` external tools and
//! `[mcp.<server>]` servers, as the tools read them. The binary's config loader
//! deserialises into these types.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

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
    /// Whether the server may use the network inside the OS sandbox (a server that
    /// calls a web API, or `npx` fetching its package).
    #[serde(default)]
    pub network: bool,
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
