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
//! codecrew (here)     "@agent:model task"     -> the CLI run, its calls served, the answer printed
//! ```
//!
//! Here, one module per step of a run: [`mention`] → [`prompt`] → [`clis`] →
//! [`process`] → (decode and intercept) → (tools) → [`render`], with [`session`] the only
//! module that knows their order, [`jobs`] building the jobs of one command, [`config`]
//! the settings they read, and [`mcp_server`] the front end that serves the same tools
//! over MCP.

pub mod agent_tools;
pub mod ask;
pub mod cli;
pub mod clis;
pub mod color;
pub mod config;
pub mod crew;
pub mod jobs;
pub mod live;
pub mod mcp_listing;
pub mod mcp_server;
pub mod mention;
pub mod process;
pub mod prompt;
pub mod render;
pub mod resident;
pub mod session;
pub mod thread;
pub mod toolbox;
pub mod transport;
pub mod usage;
