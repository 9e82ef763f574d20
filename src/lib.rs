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
//! Here, the front ends and what they share: [`cli`] (every command, flag and help
//! text), [`output`] (what the user sees: the rendered results, the live status lines,
//! colours, the terminal's questions), [`chat`] (the parts of the conversation at the
//! terminal), [`acp_server`] (the crew served to an editor over ACP), [`mcp_server`] (the
//! same tools, and the agents, served over MCP) and [`home`] (which keeps the commands that
//! run tools out of a workspace that is the home directory or holds it). Each front end
//! drives `codecrew_core::engine::Engine` and reads its updates; the commands themselves
//! (`src/commands/`) belong to the binary, `src/main.rs`.

// Everything printed passes through one door, `output::console` (std's stdout and stderr
// are banned in clippy.toml for the same reason).
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod acp_server;
pub mod chat;
pub mod cli;
pub mod home;
pub mod mcp_server;
pub mod output;
