//! Who a job is, as the front ends show it.

use crate::runs::NewJob;
use crate::session::JobRun;

/// Who a job is, for headers, status lines and events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobLabel {
    pub agent: String,
    /// The CLI's name (`claude`).
    pub provider: String,
    /// The model it runs, when one was asked for or configured.
    pub model: Option<String>,
    pub mode: &'static str,
}

impl JobLabel {
    /// The label of a planned job.
    pub fn of(run: &JobRun) -> JobLabel {
        JobLabel {
            agent: run.job.agent.clone(),
            provider: run.provider.kind().name().to_owned(),
            model: run.model(),
            mode: run.settings.mode.name(),
        }
    }

    /// The job as the run store records it when it starts.
    pub(crate) fn new_job<'a>(&'a self, task: &'a str, thread: Option<&'a str>) -> NewJob<'a> {
        NewJob {
            agent: &self.agent,
            cli: &self.provider,
            model: self.model.as_deref(),
            task,
            thread,
            parent: None,
            depth: 0,
        }
    }

    /// `@claude (claude · haiku)`.
    pub fn title(&self) -> String {
        match &self.model {
            Some(model) => format!("@{} ({} · {model})", self.agent, self.provider),
            None => format!("@{} ({})", self.agent, self.provider),
        }
    }

    /// `@claude:haiku`, the name of an agent's status line.
    pub fn mention(&self) -> String {
        match &self.model {
            Some(model) => format!("@{}:{model}", self.agent),
            None => format!("@{}", self.agent),
        }
    }
}
