//! What the engine keeps of each job it runs: its row in the run store (every event, the
//! answer) and, for a conversation with a thread, its answer in the thread. The session
//! writes to it as the job runs ([`JobStream`](crate::session::JobStream)), whatever front
//! end reads the run; a sub-agent's log is made from its caller's.

use std::sync::Arc;

use super::ThreadSaver;
use crate::runs::{JobRow, NewJob};
use crate::session::{JobEvent, JobLog, JobReport, JobRun};

/// One job's log: where the run store has it, and the thread its answer goes in.
pub(crate) struct KeptJob {
    pub(crate) row: Option<JobRow>,
    pub(crate) thread: Option<ThreadSaver>,
}

impl KeptJob {
    /// The log of a job kept in `row` and `thread`; None when neither keeps it.
    pub(crate) fn log(row: Option<JobRow>, thread: Option<ThreadSaver>) -> Option<Arc<dyn JobLog>> {
        if row.is_none() && thread.is_none() {
            return None;
        }
        Some(Arc::new(KeptJob { row, thread }))
    }
}

impl JobLog for KeptJob {
    fn event(&self, event: &JobEvent) {
        if let Some(row) = &self.row {
            row.log.event(row.job, event);
        }
    }

    fn answered(&self, task: &str, report: &JobReport) {
        if let Some(row) = &self.row {
            row.log.job_ended(row.job, report);
        }
        if let Some(thread) = &self.thread {
            thread.save(task, report);
        }
    }

    /// A sub-agent's job is a job of its caller's run, under the caller's job; its
    /// answer is its caller's call's result, not an exchange of the thread.
    fn sub_job(&self, run: &JobRun, depth: u32) -> Arc<dyn JobLog> {
        let row = self.row.as_ref().map(|caller| {
            let model = run.model();
            let job = caller.log.job_started(&NewJob {
                agent: &run.job.agent,
                cli: run.provider.kind().name(),
                model: model.as_deref(),
                task: &run.job.task,
                thread: None,
                parent: Some(caller.job),
                depth,
            });
            JobRow {
                log: caller.log.clone(),
                job,
            }
        });
        Arc::new(KeptJob { row, thread: None })
    }
}
