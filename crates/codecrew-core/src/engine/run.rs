//! A run of `query` or `execute`: every job at once, from the request to the reports.

use std::sync::Arc;

use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use super::{Engine, JobLabel, Limits, Recorder, Stage};
use crate::jobs::PlanError;
use crate::mention::Job;
use crate::runs::{self, Earlier, JobRecord, RunLog, Store, StoreError};
use crate::session::{EventSender, JobEvent, JobReport};
use crate::thread::{ThreadError, ThreadName, ThreadStore};
use codecrew_tools::Mode;

/// What a front end asks the engine to run.
#[derive(Debug, Clone)]
pub struct Request {
    /// One job per mention, each with its task (piped input already beside it).
    pub jobs: Vec<Job>,
    pub mode: Mode,
    pub limits: Limits,
    /// The thread the jobs go on with, and record their answers in.
    pub thread: Option<ThreadName>,
    /// Piped input set beside the tasks: its size in bytes and SHA-256 (hex), for the
    /// run store.
    pub input: Option<(u64, String)>,
    /// The id the run is recorded under, when the front end chose it (a run in the
    /// background, whose id its parent printed); else a new one.
    pub run_id: Option<String>,
    /// The earlier run the jobs go on from (`-c`, `--resume`): each agent resumes its
    /// CLI session there, or gets its earlier tasks and answers. Not with `thread`.
    pub continues: Option<Earlier>,
}

/// Which earlier run to go on from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resume {
    /// The newest run in this workspace that an agent answered (`-c`).
    Last,
    /// The run with this id, or an unambiguous prefix of it (`--resume ID`).
    Run(String),
}

/// Why there is no earlier run to go on from (a usage error: exit 2).
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error(
        "no earlier run in {} to go on from (`codecrew logs` lists the runs kept; \
         --resume ID goes on from one of another workspace)",
        .0.display()
    )]
    NoneHere(std::path::PathBuf),
    #[error("there is no run store to go on from: neither XDG_STATE_HOME nor HOME is set")]
    NoStore,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a run did not start. Nothing was started: a usage error (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// An unknown agent, an empty task, a model that is not one, a CLI refused here.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The thread cannot be continued (not the user's, unreadable).
    #[error(transparent)]
    Thread(#[from] ThreadError),
}

/// What a run says next.
#[derive(Debug)]
pub enum Update {
    /// One of the job's events (text, a tool call, a sub-agent's event), as it happens.
    Event(usize, JobEvent),
    /// The job's answer is final (its CLI may still be shutting down).
    Answer(usize, Box<JobReport>),
}

/// Jobs running at once. Read [`Run::next`] until it ends, then [`Run::wind_down`] and
/// [`Run::finish`].
pub struct Run {
    labels: Vec<JobLabel>,
    tasks_of: Vec<String>,
    events: mpsc::UnboundedReceiver<(usize, JobEvent)>,
    answers: mpsc::UnboundedReceiver<(usize, JobReport)>,
    answered: usize,
    cancel: watch::Sender<bool>,
    jobs: JoinSet<()>,
    recorder: Option<Recorder>,
    /// The run store's record, and each job's index in it.
    log: Option<(Arc<RunLog>, Vec<usize>)>,
    stage: Stage,
}

impl Engine {
    /// Where the agents of the earlier run `which` names stand, read from the run store
    /// (even when this run is not recorded: `--no-log`). `except`: the run asking (a
    /// chat), which is not the last one to go on from.
    pub fn earlier(&self, which: &Resume, except: Option<&str>) -> Result<Earlier, ResumeError> {
        let path = runs::default_path().ok_or(ResumeError::NoStore)?;
        let none_here = || ResumeError::NoneHere(self.workspace().to_owned());
        let Some(store) = Store::open_existing(&path)? else {
            return Err(match which {
                Resume::Last => none_here(),
                Resume::Run(id) => StoreError::NotFound(id.clone()).into(),
            });
        };
        let id = match which {
            Resume::Last => store
                .last_answered_in(&self.workspace().display().to_string(), except)?
                .ok_or_else(none_here)?,
            Resume::Run(id) => id.clone(),
        };
        Ok(store.earlier(&id)?)
    }

    /// Starts every job of `request` at once. Before anything starts, the jobs are
    /// checked (a mistyped agent costs nothing) and the thread is read.
    pub async fn start(&self, request: Request) -> Result<Run, StartError> {
        crate::jobs::check(self.config(), &request.jobs)?;
        // The thread as it stands now; each job records its exchange when it ends.
        let thread_name = request.thread.as_ref().map(ToString::to_string);
        let (recorder, thread) = match request.thread {
            Some(name) => {
                let store = ThreadStore::in_workspace(self.workspace());
                let thread = store.load_to_continue(&name, self.config().project_trusted)?;
                (Some(Recorder::new(store, name)), thread)
            }
            None => (None, None),
        };
        let stage = self.stage(request.mode, request.limits).await;
        let mut runs = stage.plan(self, request.jobs)?;
        self.say_left_out(
            runs.iter()
                .map(|run| (run.job.agent.as_str(), &run.provider)),
        );
        if let Some(thread) = &thread {
            for run in &mut runs {
                let kind = run.provider.kind().name();
                run.continuation = thread.continuation(&run.job.agent, kind);
                if run.job.model.is_none() {
                    run.job.model = thread.model_for(&run.job.agent, kind);
                }
            }
        } else if let Some(earlier) = &request.continues {
            for run in &mut runs {
                let kind = run.provider.kind().name();
                run.continuation = earlier.continuation(&run.job.agent, kind);
                if run.job.model.is_none() {
                    run.job.model = earlier.model_for(&run.job.agent, kind);
                }
            }
        }
        let labels: Vec<JobLabel> = runs.iter().map(JobLabel::of).collect();
        let tasks_of: Vec<String> = runs.iter().map(|run| run.job.task.clone()).collect();
        // Recorded from here on: the run, then each job as it starts.
        let tasks: Vec<&str> = tasks_of.iter().map(String::as_str).collect();
        let log = self
            .start_log(
                request.run_id,
                request.mode,
                &tasks,
                request.input,
                request.continues.map(|earlier| earlier.run),
            )
            .map(|log| {
                let rows: Vec<usize> = labels
                    .iter()
                    .zip(&tasks_of)
                    .map(|(label, task)| {
                        log.job_started(&label.new_job(task, thread_name.as_deref()))
                    })
                    .collect();
                (log, rows)
            });
        let (events_tx, events): (EventSender, _) = mpsc::unbounded_channel();
        let (cancel, cancelled) = watch::channel(false);
        // Each job's report comes as soon as its answer is final; its task ends once its
        // CLI has shut down, which the answer does not wait for.
        let (answers_tx, answers) = mpsc::unbounded_channel();
        let mut jobs = JoinSet::new();
        for run in runs {
            let index = run.index;
            let (events_tx, answers_tx) = (events_tx.clone(), answers_tx.clone());
            let cancelled = cancelled.clone();
            let record = log.as_ref().and_then(|(log, rows)| {
                rows.get(index).map(|&job| JobRecord {
                    log: log.clone(),
                    job,
                })
            });
            jobs.spawn(runs::recording(record, async move {
                run.run_reporting(events_tx, cancelled, |report| {
                    let _ = answers_tx.send((index, report));
                })
                .await;
            }));
        }
        Ok(Run {
            labels,
            tasks_of,
            events,
            answers,
            answered: 0,
            cancel,
            jobs,
            recorder,
            log,
            stage,
        })
    }
}

impl Run {
    /// Who each job is, in the order of the request.
    pub fn labels(&self) -> &[JobLabel] {
        &self.labels
    }

    /// The next event or answer; None once every job has answered, or ended without (it
    /// stopped abnormally, which is logged). A job's events come before its answer. An
    /// answer that succeeded is recorded in the request's thread; every event and
    /// answer in the run store. Cancel-safe.
    pub async fn next(&mut self) -> Option<Update> {
        loop {
            if self.answered == self.labels.len() {
                return None;
            }
            tokio::select! {
                biased;
                Some((index, event)) = self.events.recv() => {
                    if let Some((log, &job)) = self.row(index) {
                        log.event(job, &event);
                    }
                    return Some(Update::Event(index, event));
                }
                Some((index, report)) = self.answers.recv() => {
                    self.answered += 1;
                    if let Some((log, &job)) = self.row(index) {
                        log.job_ended(job, &report);
                    }
                    if let (Some(recorder), Some(task)) =
                        (&mut self.recorder, self.tasks_of.get(index))
                    {
                        recorder.record(task, &report);
                    }
                    return Some(Update::Answer(index, Box::new(report)));
                }
                // Only a job that stopped abnormally ends before its answer (the answers
                // are read first): with every job ended, nothing more will come.
                joined = self.jobs.join_next() => match joined {
                    Some(Ok(())) => {}
                    Some(Err(error)) => tracing::error!("a job stopped abnormally: {error}"),
                    None => return None,
                },
            }
        }
    }

    /// The run store's log and job `index`'s row in it.
    fn row(&self, index: usize) -> Option<(&RunLog, &usize)> {
        let (log, rows) = self.log.as_ref()?;
        Some((log, rows.get(index)?))
    }

    /// Tells every job to stop (their turns end, their CLIs are closed).
    pub fn stop(&self) {
        let _ = self.cancel.send(true);
    }

    /// Waits until every job's CLI has shut down. Cancel-safe: a signal may interrupt it
    /// and it is called again.
    pub async fn wind_down(&mut self) {
        while let Some(joined) = self.jobs.join_next().await {
            if let Err(error) = joined {
                tracing::error!("a job stopped abnormally: {error}");
            }
        }
    }

    /// After [`Run::wind_down`]: the thread's saves awaited, the MCP servers ended, and
    /// the run's end recorded in the run store with `exit_code` (1 when a save failed).
    /// The errors of saves that failed: the answer was printed but the thread does not
    /// have it.
    pub async fn finish(mut self, exit_code: u8) -> Vec<String> {
        let errors = match &mut self.recorder {
            Some(recorder) => recorder.settle().await,
            None => Vec::new(),
        };
        if let Some((log, _)) = &self.log {
            let failed = !errors.is_empty() && exit_code == 0;
            log.ended(if failed { 1 } else { exit_code });
        }
        self.stage.shutdown().await;
        errors
    }
}
