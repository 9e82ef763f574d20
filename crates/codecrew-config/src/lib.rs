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
mod named;
pub mod projects;
pub mod secret_file;
pub mod size;
mod spans;
pub mod starter;
#[cfg(test)]
mod tests;
mod validate;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use codecrew_intercept::CliKind;
use codecrew_intercept::decode::Format;
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

/// Which CLI an agent runs, and how. Written in a config file as the CLI's name
/// (`provider = "claude"`, [`CliKind::NAMES`]) or `"command"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// A CLI codecrew knows, each also a built-in agent of the same name (the CLI layer
    /// has a module for each).
    Cli(CliKind),
    /// Any other CLI, described by a [`CommandProvider`].
    Command,
}

impl ProviderKind {
    /// The `provider` values: the known CLIs', then `command`.
    pub const NAMES: [&'static str; CliKind::ALL.len() + 1] = {
        let mut names = ["command"; CliKind::ALL.len() + 1];
        let mut i = 0;
        while i < CliKind::ALL.len() {
            names[i] = CliKind::ALL[i].name();
            i += 1;
        }
        names
    };

    pub const fn name(self) -> &'static str {
        match self {
            ProviderKind::Cli(kind) => kind.name(),
            ProviderKind::Command => "command",
        }
    }

    /// The reasoning-effort levels the CLI's own setting accepts, mildest first (as its
    /// `--help` lists them); none where it has no such setting.
    pub const fn effort_levels(self) -> &'static [&'static str] {
        match self {
            ProviderKind::Cli(CliKind::Claude) => &["low", "medium", "high", "xhigh", "max"],
            ProviderKind::Cli(CliKind::Codex) => {
                &["none", "minimal", "low", "medium", "high", "xhigh"]
            }
            ProviderKind::Cli(CliKind::Copilot) => {
                &["none", "minimal", "low", "medium", "high", "xhigh", "max"]
            }
            _ => &[],
        }
    }

    /// The provider written `name` in a config file.
    pub fn from_name(name: &str) -> Option<ProviderKind> {
        match CliKind::from_name(name) {
            Some(kind) => Some(ProviderKind::Cli(kind)),
            None => (name == "command").then_some(ProviderKind::Command),
        }
    }
}

impl From<CliKind> for ProviderKind {
    fn from(kind: CliKind) -> Self {
        ProviderKind::Cli(kind)
    }
}

impl Serialize for ProviderKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        named::serialize(
            serializer,
            "ProviderKind",
            &ProviderKind::NAMES,
            self.name(),
        )
    }
}

impl<'de> Deserialize<'de> for ProviderKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        named::deserialize(
            deserializer,
            "ProviderKind",
            &ProviderKind::NAMES,
            ProviderKind::from_name,
        )
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
    /// Which prompt offers codecrew's tools to the agent's model. Default: full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<PromptStyle>,
    /// How hard the model thinks, where the CLI has such a setting
    /// ([`ProviderKind::effort_levels`]): Claude Code's `--effort`, Codex's
    /// `model_reasoning_effort`, Copilot's `--reasoning-effort`. The CLI's default when
    /// absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
}

/// How the prompt offers codecrew's tools to a model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptStyle {
    /// Each tool with its whole description and input schema.
    #[default]
    Full,
    /// Each tool on one line, what it does and its inputs (required first), and the
    /// envelope's rules: under half the tokens, for a model with a small context window.
    Compact,
}

impl PromptStyle {
    pub const NAMES: [&'static str; 2] = ["full", "compact"];

    /// Its name in the config.
    pub const fn name(self) -> &'static str {
        match self {
            PromptStyle::Full => "full",
            PromptStyle::Compact => "compact",
        }
    }
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

/// What a `command` agent's CLI prints (`output = "gemini"`): any format codecrew reads
/// but `auto`, by its name ([`Format::name`]); plain text by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputFormat(Format);

impl OutputFormat {
    pub const TEXT: OutputFormat = OutputFormat(Format::Text);

    /// The `output` values: [`Format::ALL`] but `auto`, in its order.
    pub const NAMES: [&'static str; Format::ALL.len() - 1] = {
        let mut names = [""; Format::ALL.len() - 1];
        let (mut from, mut to) = (0, 0);
        while from < Format::ALL.len() {
            if !matches!(Format::ALL[from], Format::Auto) {
                names[to] = Format::ALL[from].name();
                to += 1;
            }
            from += 1;
        }
        names
    };

    /// The output format `format`; `None` for [`Format::Auto`], which a CLI cannot print.
    pub fn new(format: Format) -> Option<OutputFormat> {
        (format != Format::Auto).then_some(OutputFormat(format))
    }

    /// The decoder's format.
    pub fn format(self) -> Format {
        self.0
    }

    /// The output format written `name` in a config file (exactly: names are lower case).
    pub fn from_name(name: &str) -> Option<OutputFormat> {
        Format::ALL
            .into_iter()
            .find(|format| format.name() == name)
            .and_then(OutputFormat::new)
    }
}

impl Default for OutputFormat {
    fn default() -> Self {
        OutputFormat::TEXT
    }
}

impl Serialize for OutputFormat {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        named::serialize(
            serializer,
            "OutputFormat",
            &OutputFormat::NAMES,
            self.0.name(),
        )
    }
}

impl<'de> Deserialize<'de> for OutputFormat {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        named::deserialize(
            deserializer,
            "OutputFormat",
            &OutputFormat::NAMES,
            OutputFormat::from_name,
        )
    }
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
        let agents = CliKind::ALL
            .into_iter()
            .map(|kind| {
                (
                    kind.name().to_owned(),
                    AgentConfig {
                        provider: ProviderKind::Cli(kind),
                        model: None,
                        system_prompt: None,
                        args: ModeArgs::default(),
                        tools: None,
                        command: None,
                        keep_alive: None,
                        effort: None,
                        prompt: None,
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
