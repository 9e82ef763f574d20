//! codecrew's engine: a command's jobs, from the tasks on its command line to the
//! reports of their runs.
//!
//! ```text
//! "@agent:model task" + LoadedConfig -> Jobs -> JobRuns (catalog + executor each)
//!     -> per job: prompt -> the CLI (codecrew-agents) -> events decoded and intercepted
//!        (codecrew-intercept) -> calls run (codecrew-tools, under codecrew-policy) ->
//!        results back to the same session, until the answer
//!     -> JobEvent stream + JobReport; a thread's exchange recorded
//! ```
//!
//! It prints nothing: the front ends render the events. Here:
//! the mentions ([`mention`]), the prompt ([`prompt`]), the jobs and their tools
//! ([`jobs`], [`toolbox`], [`mcp_listing`]), the loop of one job ([`session`]), agents
//! that consult each other ([`crew`], [`codecrew_config::agent_tools`]), threads across invocations
//! ([`thread`]), what each job used ([`usage`]) and the store of every run ([`runs`]).

// This layer prints nothing: the front ends render its events.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod crew;
pub mod engine;
pub mod ids;
pub mod jobs;
pub mod mcp_listing;
pub mod mention;
pub mod piped;
pub mod prompt;
pub mod runs;
pub mod schema;
pub mod session;
pub mod thread;
pub mod toolbox;
pub mod undo;
pub mod usage;
pub mod worktree;
