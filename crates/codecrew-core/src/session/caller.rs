//! Who is making the tool calls being run: the session sets it around a job's calls, and
//! the agent tools (`crate::crew`) read it to nest a sub-agent's events under its caller
//! and to count the delegation depth.

use std::future::Future;

use tokio::sync::watch;

use super::EventSender;

/// The job whose calls are running.
#[derive(Clone)]
pub struct CallerScope {
    /// The caller's position among its run's jobs (its events carry it).
    pub index: usize,
    pub depth: u32,
    pub events: EventSender,
    pub cancel: watch::Receiver<bool>,
}

tokio::task_local! {
    static CALLER: CallerScope;
}

/// Runs `calls` (a job's tool calls) with `scope` as their caller.
pub async fn with_caller<F: Future>(scope: CallerScope, calls: F) -> F::Output {
    CALLER.scope(scope, calls).await
}

/// The caller of the calls running on this task, if a session set one.
pub fn current_caller() -> Option<CallerScope> {
    CALLER.try_with(CallerScope::clone).ok()
}
