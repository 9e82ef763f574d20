//! Who is making the tool calls being run: the session hands it to the executor with a
//! job's calls ([`codecrew_tools::ToolContext::caller`]), and the agent tools
//! (`crate::crew`) read it from their context to nest a sub-agent's events and its log
//! under its caller and to count the delegation depth.

use std::sync::Arc;

use tokio::sync::watch;

use super::JobStream;
use codecrew_tools::{Caller, ToolContext};

/// The job whose calls are running.
#[derive(Clone)]
pub struct CallerScope {
    /// The caller's way out: its sub-agents' events go there, and their logs under its.
    pub stream: JobStream,
    pub depth: u32,
    pub cancel: watch::Receiver<bool>,
}

impl CallerScope {
    /// The scope as the executor hands it to the tools.
    pub fn into_caller(self) -> Caller {
        Arc::new(self)
    }

    /// The caller of the call `context` runs, if a job made it.
    pub fn of(context: &ToolContext) -> Option<&CallerScope> {
        context.caller.as_ref()?.downcast_ref::<CallerScope>()
    }
}
