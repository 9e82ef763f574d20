//! A command's jobs, from the tasks on its command line to the reports of their runs:
//! the mentions ([`mention`]), the prompt ([`prompt`]), the jobs and their tools
//! ([`jobs`], [`toolbox`], [`mcp_listing`]), the loop of one job ([`session`]), agents
//! that consult each other ([`crew`], [`crate::config::agent_tools`]), threads across invocations
//! ([`thread`]) and what each job used ([`usage`]).

pub mod crew;
pub mod jobs;
pub mod mcp_listing;
pub mod mention;
pub mod piped;
pub mod prompt;
pub mod session;
pub mod thread;
pub mod toolbox;
pub mod usage;
