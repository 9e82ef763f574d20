//! Where a job's events go as it runs: the front end's stream, under the job's place
//! there, and the job's log, which each event is written to as it is sent and the answer
//! when it is final. Every job (of a command, of a chat's line, of an editor's prompt, a
//! sub-agent a call started) goes out through one of these, so what is recorded of a run
//! is written from here alone, whatever front end reads it.

use std::sync::Arc;

use super::{EventSender, JobEvent, JobReport, JobRun};

/// What is kept of one job as it runs: the engine's record of it (the run store, the
/// conversation's thread). Defined here, written by the session, made by the engine.
pub trait JobLog: Send + Sync {
    /// One of the job's events, as it is sent.
    fn event(&self, event: &JobEvent);
    /// The job's answer to `task` is final.
    fn answered(&self, task: &str, report: &JobReport);
    /// The log of the job one of this job's calls starts (`query_agent`,
    /// `execute_agent`): `run`, `depth` delegations deep, recorded under this one.
    fn sub_job(&self, run: &JobRun, depth: u32) -> Arc<dyn JobLog>;
}

/// A job's way out: events to the front end, tagged with the job's place, and to its log.
#[derive(Clone)]
pub struct JobStream {
    events: EventSender,
    index: usize,
    log: Option<Arc<dyn JobLog>>,
}

impl JobStream {
    /// The events go to `events`, tagged `index`; nothing is logged.
    pub fn new(events: EventSender, index: usize) -> JobStream {
        JobStream {
            events,
            index,
            log: None,
        }
    }

    /// The same stream, every event and the answer also written to `log`.
    pub fn logged(mut self, log: Option<Arc<dyn JobLog>>) -> JobStream {
        self.log = log;
        self
    }

    /// The job's log, for the sub-agents its calls start.
    pub fn log(&self) -> Option<&Arc<dyn JobLog>> {
        self.log.as_ref()
    }

    /// Logs `event` and sends it on. The front end may be gone (its reader hung up): the
    /// job still finishes, and its log still has it.
    pub fn send(&self, event: JobEvent) {
        if let Some(log) = &self.log {
            log.event(&event);
        }
        let _ = self.events.send((self.index, event));
    }

    /// The job's answer to `task` is final: logged.
    pub(crate) fn answered(&self, task: &str, report: &JobReport) {
        if let Some(log) = &self.log {
            log.answered(task, report);
        }
    }
}
