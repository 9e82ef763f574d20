//! A run of `query` or `execute`: every job at once, from the request to the reports.

use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::JoinSet;

use super::job_log::KeptJob;
use super::undo_recording;
use super::updates::Updates;
use super::{Engine, JobLabel, Limits, RunWorktrees, Stage, ThreadSaver, Update, WorktreeError};
use crate::jobs::PlanError;
use crate::mention::Job;
use crate::runs::{self, Earlier, JobRow, RunLog, Store, StoreError};
use crate::session::JobStream;
use crate::thread::{ThreadError, ThreadName, ThreadStore};
use crate::undo::Recording;
use crate::worktree::make::Isolation;
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
    /// Each job in a git worktree of its own (`execute --worktrees`): how they are
    /// made, and the `--check` command run in each once the jobs end.
    pub isolation: Option<(Isolation, Option<String>)>,
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
    /// The jobs' worktrees could not be made (a dirty checkout, no repository).
    #[error(transparent)]
    Worktree(#[from] WorktreeError),
    /// Several agents would write one folder at once (a line of a chat in execute).
    #[error(
        "{0} agents would write this folder at once in execute mode: address one agent per \
         line (/mode query asks several), or give them the task with `codecrew execute \
         --worktrees`, where each works in a worktree of its own"
    )]
    SharedWorkspace(usize),
}

/// Jobs running at once. Read [`Run::next`] until it ends, then [`Run::wind_down`] and
/// [`Run::finish`].
pub struct Run {
    labels: Vec<JobLabel>,
    updates: Updates,
    cancel: watch::Sender<bool>,
    jobs: JoinSet<()>,
    /// The run store's record.
    pub(super) log: Option<Arc<RunLog>>,
    /// What `codecrew undo` needs of an execute run in place: its workspace before,
    /// then after.
    recording: Option<Recording>,
    stage: Stage,
    /// The jobs' worktrees, when they have them.
    pub(super) worktrees: Option<RunWorktrees>,
    /// Each job's index in the run store, in the order of the request.
    pub(super) rows: Vec<Option<usize>>,
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
        let (thread_saver, thread) = match request.thread {
            Some(name) => {
                let store = ThreadStore::in_workspace(self.workspace());
                let thread = store.load_to_continue(&name, self.config().project_trusted)?;
                (Some(ThreadSaver::new(store, name)), thread)
            }
            None => (None, None),
        };
        // Each job's worktree, made before any CLI starts; the run's id names them.
        let mut run_id = request.run_id;
        let worktrees = match request.isolation {
            Some((isolation, check)) if request.mode == Mode::Execute => {
                let id = run_id.get_or_insert_with(runs::new_id).clone();
                Some(self.make_worktrees(&id, &request.jobs, &isolation, check)?)
            }
            _ => None,
        };
        let places = worktrees
            .as_ref()
            .map(RunWorktrees::places)
            .unwrap_or_default();
        let schema = request
            .limits
            .answer
            .as_ref()
            .map(|shape| shape.schema.clone());
        let stage = self.stage(request.mode, request.limits).await;
        let mut runs = match stage.plan_in(self, request.jobs, &places) {
            Ok(runs) => runs,
            Err(error) => {
                if let Some(worktrees) = &worktrees {
                    worktrees.remove_all();
                }
                return Err(error.into());
            }
        };
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
        // Recorded from here on: the run, then each job as it starts.
        let tasks: Vec<&str> = runs.iter().map(|run| run.job.task.as_str()).collect();
        let log = self.start_log(
            run_id,
            request.mode,
            &tasks,
            request.input,
            request.continues.map(|earlier| earlier.run),
        );
        if let (Some(log), Some(schema)) = (&log, &schema) {
            log.answered_with(schema);
        }
        // Before any job can write: the workspace as it is, for `codecrew undo`.
        // In its worktrees, a run changes nothing here (an apply records its own).
        let recording = match request.mode {
            Mode::Execute if worktrees.is_none() => {
                let id = log
                    .as_ref()
                    .map_or_else(runs::new_id, |log| log.id().to_owned());
                undo_recording::start(self.workspace(), id).await
            }
            Mode::Execute | Mode::Query => None,
        };
        let (updates, events, answers) = Updates::new(runs.len(), thread_saver.clone());
        let (cancel, cancelled) = watch::channel(false);
        // Each job's report comes as soon as its answer is final; its task ends once its
        // CLI has shut down, which the answer does not wait for.
        let mut jobs = JoinSet::new();
        let mut rows = Vec::with_capacity(runs.len());
        for (run, label) in runs.into_iter().zip(&labels) {
            let index = run.index;
            let row = log.as_ref().map(|log| JobRow {
                log: log.clone(),
                job: log.job_started(&label.new_job(&run.job.task, thread_name.as_deref())),
            });
            rows.push(row.as_ref().map(|row| row.job));
            if let (Some(row), Some(worktrees)) = (&row, &worktrees) {
                worktrees.record_start(index, &row.log, row.job);
            }
            let stream = JobStream::new(events.clone(), index)
                .logged(KeptJob::log(row, thread_saver.clone()));
            let (answers, cancelled) = (answers.clone(), cancelled.clone());
            jobs.spawn(async move {
                run.run_reporting(stream, cancelled, |report| {
                    let _ = answers.send((index, report));
                })
                .await;
            });
        }
        Ok(Run {
            labels,
            updates,
            cancel,
            jobs,
            log,
            recording,
            stage,
            worktrees,
            rows,
        })
    }
}

impl Run {
    /// Who each job is, in the order of the request.
    pub fn labels(&self) -> &[JobLabel] {
        &self.labels
    }

    /// The next event or answer, then what the thread could not keep; None once every
    /// job has answered (or ended without: it stopped abnormally, which is logged) and
    /// the thread has every answer it can. Each update is already recorded (the run
    /// store, the thread) when it comes. Cancel-safe.
    pub async fn next(&mut self) -> Option<Update> {
        self.updates.next().await
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

    /// After [`Run::wind_down`]: the MCP servers ended, and the run's end recorded in
    /// the run store with `exit_code`.
    pub async fn finish(self, exit_code: u8) {
        if let Some(recording) = self.recording {
            undo_recording::finish(recording).await;
        }
        if let Some(log) = &self.log {
            log.ended(exit_code);
        }
        self.stage.shutdown().await;
    }
}
