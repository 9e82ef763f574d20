//! Agents whose CLIs are kept between tasks: a chat's (and an editor's) conversation.
//!
//! Each agent is a [`Worker`]: a task that owns the agent's [`JobRun`] and its
//! transport, so the CLI process the first line started serves every later line (a
//! follow-up pays no CLI start). Each line's events go to that line's display, tagged
//! with the agent's place on the line, and its report comes back. Closing a worker ends
//! the CLI and puts back what its wall held; the conversation it reached is kept, for a
//! worker of another mode or model to go on from.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use super::job_log::KeptJob;
use super::undo_recording;
use super::updates::Updates;
use super::{Engine, JobLabel, Limits, Stage, StartError, ThreadSaver, Update};
use crate::jobs::PlanError;
use crate::mention::Job;
use crate::runs::{Earlier, JobRow, RunLog};
use crate::schema::AnswerShape;
use crate::session::{Continuation, Conversation, JobReport, JobRun, JobStream};
use crate::thread::ThreadName;
use crate::undo::Recording;
use codecrew_tools::Mode;

/// The agents of one conversation, each kept running once started, in one mode at a
/// time; every answer recorded in the conversation's thread.
pub struct KeptAgents {
    mode: Mode,
    limits: Limits,
    stage: Option<Stage>,
    /// The running agents, and the model each was started with.
    workers: BTreeMap<String, (Worker, JobLabel)>,
    /// Where each agent's conversation stood when its worker was closed.
    conversations: BTreeMap<String, Conversation>,
    /// Workers being closed, each on a task of its own: a close nobody waits for any more
    /// (a chat's Ctrl-C during `/mode`) goes on, and where its conversation stood is
    /// collected by the next close or the agent's next start ([`KeptAgents::collect`]).
    closing: Vec<(String, JoinHandle<Option<Conversation>>)>,
    /// The thread the answers are recorded in (a chat's); none for a conversation the
    /// run store alone keeps (an editor's).
    thread_saver: Option<ThreadSaver>,
    /// The conversation in the run store: one run, started with its first line, each
    /// agent's answer to each line one of its jobs.
    log: Log,
    /// The earlier run the conversation went on from (`/resume`): where each of its
    /// agents starts, until the conversation starts anew.
    resumed: Option<Earlier>,
    /// The lines of execute recorded for `codecrew undo`, each under `<run>-<count>`.
    recorded_lines: u32,
}

#[derive(Default)]
enum Log {
    /// Not started: no line yet.
    #[default]
    Unstarted,
    /// Started (None: not recorded).
    Started(Option<Arc<RunLog>>),
}

/// One line handed to its agents: read it as a command's [`Run`](super::Run) is read,
/// with [`Line::next`] until it ends.
pub struct Line {
    /// Who answers, in the order of the line's mentions (the events' and answers' index).
    pub labels: Vec<JobLabel>,
    /// The agents that could not be handed the line (their worker is gone).
    pub gone: Vec<String>,
    updates: Updates,
    cancel: watch::Sender<bool>,
    /// In execute: the workspace before the line, for `codecrew undo`; finished as the
    /// line ends (or is dropped, stopped).
    recording: Option<Recording>,
}

impl Line {
    /// The next event or answer, then what the thread could not keep; None once every
    /// agent has answered (or is gone) and the thread has every answer it can. Each
    /// update is already recorded when it comes. Cancel-safe.
    pub async fn next(&mut self) -> Option<Update> {
        let update = self.updates.next().await;
        if update.is_none()
            && let Some(recording) = self.recording.take()
        {
            undo_recording::finish(recording).await;
        }
        update
    }

    /// Stops the line's answers (each agent's turn ends; its CLI stays).
    pub fn stop(&self) {
        let _ = self.cancel.send(true);
    }
}

impl Drop for Line {
    /// A line stopped before its end (a chat's Ctrl-C) ends there for undo too.
    fn drop(&mut self) {
        if let Some(recording) = self.recording.take() {
            undo_recording::finish_detached(recording);
        }
    }
}

impl KeptAgents {
    /// No agent running yet; answers saved in the thread by `thread_saver`.
    pub fn new(mode: Mode, limits: Limits, thread_saver: ThreadSaver) -> KeptAgents {
        KeptAgents {
            thread_saver: Some(thread_saver),
            ..KeptAgents::unthreaded(mode, limits)
        }
    }

    /// No agent running yet, and no thread: the run store alone keeps the conversation.
    pub fn unthreaded(mode: Mode, limits: Limits) -> KeptAgents {
        KeptAgents {
            mode,
            limits,
            stage: None,
            workers: BTreeMap::new(),
            conversations: BTreeMap::new(),
            closing: Vec::new(),
            thread_saver: None,
            log: Log::Unstarted,
            resumed: None,
            recorded_lines: 0,
        }
    }

    /// The conversation is recorded in `log` (None: not recorded) from its first line,
    /// rather than in a run its first line starts: an editor's session is a run from the
    /// moment it is made, so that it can be listed and loaded before its first prompt.
    pub fn recorded_in(mut self, log: Option<Arc<RunLog>>) -> KeptAgents {
        self.log = Log::Started(log);
        self
    }

    /// Each agent of `earlier` starts from where it stood there (its session resumed, or
    /// its exchanges resent) when it first answers here.
    pub fn going_on_from(mut self, earlier: Earlier) -> KeptAgents {
        self.resumed = Some(earlier);
        self
    }

    /// The run store's record of the conversation, once started.
    pub fn log(&self) -> Option<&Arc<RunLog>> {
        match &self.log {
            Log::Started(Some(log)) => Some(log),
            _ => None,
        }
    }

    /// The conversation's run in the run store, once its first line started it.
    pub fn run_id(&self) -> Option<&str> {
        match &self.log {
            Log::Started(Some(log)) => Some(log.id()),
            _ => None,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The thread the answers are recorded in, when there is one.
    pub fn thread_saver(&self) -> Option<&ThreadSaver> {
        self.thread_saver.as_ref()
    }

    /// The model `agent` runs, when it is running (`Some(None)`: the CLI's default).
    pub fn running(&self, agent: &str) -> Option<Option<&str>> {
        self.workers
            .get(agent)
            .map(|(_, label)| label.model.as_deref())
    }

    /// `agent`'s CLI ends (what its wall held put back) and starts again, resuming, at its
    /// next line: for a setting its CLI reads only as it starts (an editor's effort). The
    /// close goes on on a task of its own; where the conversation stood is collected at
    /// the agent's next start.
    pub fn restart_agent(&mut self, agent: &str) {
        if let Some((worker, _)) = self.workers.remove(agent) {
            self.closing
                .push((agent.to_owned(), tokio::spawn(worker.close())));
        }
    }

    /// From now on in `mode`: the CLIs run in their mode's wall, so they start again,
    /// resuming, at their next line. Stopped before it ends (the future dropped), the
    /// mode is as it was; the CLIs it was closing still close.
    pub async fn set_mode(&mut self, mode: Mode) {
        if mode != self.mode {
            self.close().await;
            self.mode = mode;
        }
    }

    /// A new conversation in thread `name`: every CLI ends, nothing is resumed. Every
    /// wait comes before any change, so that stopped before it ends (the future dropped)
    /// the conversation is the one it was, its CLIs closed as by [`KeptAgents::close`].
    pub async fn restart(&mut self, name: ThreadName) -> Vec<String> {
        self.close().await;
        let errors = self.settle().await;
        self.conversations.clear();
        self.resumed = None;
        if let Some(thread_saver) = &mut self.thread_saver {
            let store = thread_saver.store().clone();
            *thread_saver = ThreadSaver::new(store, name);
        }
        errors
    }

    /// A new conversation in thread `name` going on from `earlier`: every CLI ends, and
    /// each agent of the earlier run starts again from where it stood there (its session
    /// resumed, or its exchanges resent).
    pub async fn resume(&mut self, name: ThreadName, earlier: Earlier) -> Vec<String> {
        let errors = self.restart(name).await;
        self.resumed = Some(earlier);
        errors
    }

    /// Hands `jobs` (one line) to their agents, each started first where it is not
    /// running, or started again for another model: none is asked anything when one
    /// cannot start.
    pub async fn ask(&mut self, engine: &Engine, jobs: Vec<Job>) -> Result<Line, StartError> {
        self.ask_shaped(engine, jobs, None).await
    }

    /// [`KeptAgents::ask`], each answer held to `shape` (a chat's `/schema`): checked,
    /// and asked for again in the same session while it does not fit.
    pub async fn ask_shaped(
        &mut self,
        engine: &Engine,
        jobs: Vec<Job>,
        shape: Option<AnswerShape>,
    ) -> Result<Line, StartError> {
        crate::jobs::check(engine.config(), &jobs)?;
        // Kept CLIs share the one workspace: in execute, never two writing it at once.
        if self.mode == Mode::Execute && jobs.len() > 1 {
            return Err(StartError::SharedWorkspace(jobs.len()));
        }
        if let Log::Unstarted = self.log {
            let tasks: Vec<&str> = jobs.iter().map(|job| job.task.as_str()).collect();
            let continues = self.resumed.as_ref().map(|earlier| earlier.run.clone());
            self.log = Log::Started(engine.start_log(None, self.mode, &tasks, None, continues));
        }
        let mut labels = Vec::new();
        for job in &jobs {
            labels.push(
                self.worker(engine, &job.agent, job.model.as_deref())
                    .await?,
            );
        }
        // Once every agent could start, before any is handed the line: for `codecrew undo`.
        let recording = match self.mode {
            Mode::Execute => {
                self.recorded_lines += 1;
                let run = self
                    .run_id()
                    .map_or_else(crate::runs::new_id, str::to_owned);
                let id = format!("{run}-{}", self.recorded_lines);
                undo_recording::start(engine.workspace(), id).await
            }
            Mode::Query => None,
        };
        let (updates, events, answers) = Updates::new(jobs.len(), self.thread_saver.clone());
        let (cancel, cancelled) = watch::channel(false);
        let mut line = Line {
            labels: Vec::new(),
            gone: Vec::new(),
            updates,
            cancel,
            recording,
        };
        for (job, label) in jobs.into_iter().zip(labels) {
            // The agent's place among those that run: its events and its answer say it.
            let index = line.labels.len();
            let (answer, answered) = oneshot::channel();
            let row = self.log_job(&label, &job.task);
            let stream = JobStream::new(events.clone(), index)
                .logged(KeptJob::log(row, self.thread_saver.clone()));
            let sent = self.workers.get(&job.agent).is_some_and(|(worker, _)| {
                worker.send(Task {
                    task: job.task.clone(),
                    shape: shape.clone(),
                    stream,
                    cancel: cancelled.clone(),
                    answer,
                })
            });
            if !sent {
                line.gone.push(job.agent);
                continue;
            }
            let answers = answers.clone();
            tokio::spawn(async move {
                if let Ok(report) = answered.await {
                    let _ = answers.send((index, report));
                }
            });
            line.labels.push(label);
        }
        Ok(line)
    }

    /// The next job of the conversation's run, recorded as started.
    fn log_job(&mut self, label: &JobLabel, task: &str) -> Option<JobRow> {
        let Log::Started(Some(log)) = &self.log else {
            return None;
        };
        let thread = self
            .thread_saver
            .as_ref()
            .map(|thread_saver| thread_saver.name().as_str());
        let job = log.job_started(&label.new_job(task, thread));
        Some(JobRow {
            log: log.clone(),
            job,
        })
    }

    /// The conversation ends with `exit_code`: recorded in the run store.
    pub fn finish(&mut self, exit_code: u8) {
        if let Log::Started(Some(log)) = &self.log {
            log.ended(exit_code);
        }
    }

    /// Waits for the thread's saves so far: the errors of those that failed.
    pub async fn settle(&mut self) -> Vec<String> {
        match &mut self.thread_saver {
            Some(thread_saver) => thread_saver.settle().await,
            None => Vec::new(),
        }
    }

    /// Ends every agent's CLI (what the walls held is put back), keeping where each
    /// conversation stands, and the mode's tools. Stopped before it ends (the future
    /// dropped), the CLIs still close, and where their conversations stood is kept.
    pub async fn close(&mut self) {
        // All at once: each CLI may take its grace to end.
        for (agent, (worker, _)) in std::mem::take(&mut self.workers) {
            self.closing.push((agent, tokio::spawn(worker.close())));
        }
        self.collect(None).await;
        if let Some(stage) = self.stage.take() {
            // On a task of its own, so that it ends its servers whether awaited or not.
            let _ = tokio::spawn(stage.shutdown()).await;
        }
    }

    /// Waits for the workers being closed (of `agent` only, when given), and keeps where
    /// each conversation stood. Cancel-safe: a close is forgotten only once collected.
    async fn collect(&mut self, agent: Option<&str>) {
        let mut at = 0;
        while let Some((closing, running)) = self.closing.get_mut(at) {
            if agent.is_some_and(|agent| agent != closing) {
                at += 1;
                continue;
            }
            let closed = running.await;
            let (closing, _) = self.closing.remove(at);
            if let Ok(Some(conversation)) = closed {
                self.conversations.insert(closing, conversation);
            }
        }
    }

    /// The worker of `agent` in the current mode (started if it is not running, or
    /// started again for another model); its label.
    async fn worker(
        &mut self,
        engine: &Engine,
        agent: &str,
        model: Option<&str>,
    ) -> Result<JobLabel, StartError> {
        let stale = match (self.workers.get(agent), model) {
            (Some((_, running)), Some(asked)) => running.model.as_deref() != Some(asked),
            _ => false,
        };
        if stale && let Some((worker, _)) = self.workers.remove(agent) {
            self.closing
                .push((agent.to_owned(), tokio::spawn(worker.close())));
        }
        if !self.workers.contains_key(agent) {
            // Where its last worker left the conversation, if one is still closing.
            self.collect(Some(agent)).await;
            self.start_worker(engine, agent, model).await?;
        }
        self.workers
            .get(agent)
            .map(|(_, label)| label.clone())
            // Started above, or the plan said why not.
            .ok_or_else(|| {
                StartError::Plan(PlanError::UnknownAgent {
                    agent: agent.to_owned(),
                    known: String::new(),
                })
            })
    }

    async fn start_worker(
        &mut self,
        engine: &Engine,
        agent: &str,
        model: Option<&str>,
    ) -> Result<(), StartError> {
        let stage = match &mut self.stage {
            Some(stage) => stage,
            None => self
                .stage
                .insert(engine.stage(self.mode, self.limits.clone()).await),
        };
        let job = Job {
            agent: agent.to_owned(),
            model: model.map(str::to_owned),
            // Each line is handed to the worker; the plan only needs a task to check.
            task: "(the chat's lines)".to_owned(),
        };
        let Some(mut run) = stage.plan(engine, vec![job])?.pop() else {
            return Ok(());
        };
        let kind = run.provider.kind().name();
        // Where this agent's conversation stands: its worker of another mode, else the
        // earlier run gone on from, else the thread as stored.
        let resumed = self
            .resumed
            .as_ref()
            .filter(|earlier| earlier.agents().any(|name| name == agent));
        let conversation = match (self.conversations.remove(agent), resumed) {
            (Some(conversation), _) => conversation,
            (None, Some(earlier)) => {
                if run.job.model.is_none() {
                    run.job.model = earlier.model_for(agent, kind);
                }
                Conversation::from(&earlier.continuation(agent, kind))
            }
            (None, None) => {
                let thread = match &self.thread_saver {
                    Some(thread_saver) => thread_saver
                        .store()
                        .load_to_continue(thread_saver.name(), engine.config().project_trusted)?,
                    None => None,
                };
                match thread {
                    Some(thread) => {
                        if run.job.model.is_none() {
                            run.job.model = thread.model_for(agent, kind);
                        }
                        Conversation::from(&thread.continuation(agent, kind))
                    }
                    None => Conversation::default(),
                }
            }
        };
        run.continuation = Continuation {
            session_id: conversation.session_id.clone(),
            earlier: conversation.earlier.clone(),
            session_usage: conversation.session_usage,
        };
        let label = JobLabel::of(&run);
        engine.say_left_out(std::iter::once((agent, &run.provider)));
        self.workers
            .insert(agent.to_owned(), (Worker::start(run, conversation), label));
        Ok(())
    }
}

/// One line for one agent.
struct Task {
    task: String,
    /// The shape its answer must have (a chat's `/schema` for this line).
    shape: Option<AnswerShape>,
    /// Where the line wants this agent's events (under its place on the line), and this
    /// task's log.
    stream: JobStream,
    cancel: watch::Receiver<bool>,
    answer: oneshot::Sender<JobReport>,
}

/// A running agent: its CLI kept between the lines addressed to it.
struct Worker {
    tasks: mpsc::UnboundedSender<Task>,
    running: JoinHandle<Conversation>,
}

impl Worker {
    /// Starts the agent of `run`, going on from `conversation`. Its CLI starts with the
    /// first task.
    fn start(run: JobRun, conversation: Conversation) -> Worker {
        let (tasks, mut received) = mpsc::unbounded_channel::<Task>();
        let running = tokio::spawn(async move {
            let mut conversation = conversation;
            let Some(program) = codecrew_agents::locate(&run.provider) else {
                while let Some(task) = received.recv().await {
                    let _ = task.answer.send(run.missing_cli(&task.task, &task.stream));
                }
                return conversation;
            };
            let mut transport = run.transport(&program);
            while let Some(task) = received.recv().await {
                let report = run
                    .run_task(
                        &task.task,
                        task.shape.as_ref().or(run.settings.answer.as_ref()),
                        &mut conversation,
                        &mut transport,
                        &task.stream,
                        task.cancel,
                    )
                    .await;
                let _ = task.answer.send(report);
            }
            transport.close().await;
            conversation
        });
        Worker { tasks, running }
    }

    /// Hands the agent a line; its report comes on the task's `answer`. False when the
    /// worker is gone.
    fn send(&self, task: Task) -> bool {
        self.tasks.send(task).is_ok()
    }

    /// Ends the agent's CLI (what its wall held is put back) and returns where its
    /// conversation stands.
    async fn close(self) -> Option<Conversation> {
        drop(self.tasks);
        self.running.await.ok()
    }
}
