//! codecrew: a proxy for LLM command-line agents that gives them tools they lack.
//!
//! This is the top of the workspace: the front end that turns flags and config into
//! agents run and results printed. The layers below it are their own crates, each
//! depending only on the ones before it:
//!
//! ```text
//! codecrew-intercept  stdout bytes of a CLI   -> decode::Event, Segment::{Text, Call, Rejected}
//! codecrew-policy     call + mode + rules     -> Allow | Ask | Deny (and the sandbox, secrets)
//! codecrew-tools      call                    -> ToolResult (registry, catalog, executor, MCP client)
//! codecrew-config     config files            -> LoadedConfig (layers, trust); the user's secrets
//! codecrew-agents     an agent + a turn       -> its CLI run in its wall, stdout chunks, questions
//! codecrew-core       jobs + config           -> JobEvents and JobReports: the session loop, crew, threads
//! codecrew (here)     "@agent:model task"     -> the CLI run, its calls served, the answer printed
//! ```
//!
//! Here, in four parts: [`clis`] (each CLI, and how a turn reaches it: a process per
//! turn or one kept for the loop), [`run`] (a command's jobs: [`run::mention`] →
//! [`run::prompt`] → the CLI → (decode and intercept) → (tools), with [`run::session`]
//! the only module that knows their order), [`output`] (what the user sees: the
//! rendered results, the live status lines, colours, the terminal's questions) and
//! [`config`] the settings they read; [`mcp_server`] is the front end that serves the
//! same tools over MCP, [`chat`] the parts of the conversation at the terminal, and
//! [`home`] keeps the commands that run tools out of a workspace that is the home
//! directory or holds it.

// Everything printed passes through one door, `output::console` (std's stdout and stderr
// are banned in clippy.toml for the same reason).
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod acp_server;
pub mod chat;
pub mod cli;
pub use codecrew_agents as clis;
pub use codecrew_config as config;
pub mod home;
pub mod mcp_server;
pub mod output;
pub use codecrew_config::secret_file;
pub use codecrew_core as run;
