//! `codecrew chat`: the conversation at the terminal. Reads a line (rustyline), runs it
//! through the agents it addresses (each a [`Worker`] that keeps its CLI), renders their
//! answers as `query` does, records each exchange in the chat's thread, and ends putting
//! back everything the CLIs' walls held.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use codecrew::chat::editor::{ChatHelper, LineEditor, history_file, joined};
use codecrew::chat::reader::{HangUp, Read, Reader};
use codecrew::chat::worker::{Request, Worker};
use codecrew::chat::{self, Command, Ending, Input};
use codecrew::cli::{ChatArgs, RunOutput};
use codecrew::config::LoadedConfig;
use codecrew::output::color::NOTICE;
use codecrew::output::console::{self, Text};
use codecrew::output::markdown::terminal_width;
use codecrew::output::render::{JobLabel, Renderer, failure_line};
use codecrew::run::crew::{Crew, ExecutorFactory};
use codecrew::run::session::{Continuation, Conversation, JobReport, Settings};
use codecrew::run::thread::{self, Exchange, ThreadName, ThreadStore};
use codecrew::run::usage::JobUsage;
use codecrew_policy::Policy;
use codecrew_tools::{Mode, Toolbox};
use rustyline::{Cmd, KeyCode, KeyEvent, Modifiers};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinSet;

use super::{EXIT_SIGHUP, EXIT_SIGINT, Signals};

mod slash;

/// How long the CLIs get, once the chat ends, to end their sessions themselves (stdin
/// closed) before they are killed: the chat is gone within two seconds however it ends.
const CLOSE_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

pub async fn run(args: ChatArgs, options: super::ToolOptions) -> anyhow::Result<ExitCode> {
    if !std::io::stdin().is_terminal() || !console::stdout_is_terminal() {
        console::error(
            "codecrew chat needs a terminal; from a script or a pipe, use `codecrew query` \
             (with --thread NAME to go on with a conversation)",
        );
        return Ok(ExitCode::from(super::EXIT_USAGE));
    }
    // From the start: a signal at any step ends the chat as it should, never the
    // process with the CLIs' held files left as they were.
    let Some(signals) = Signals::new() else {
        anyhow::bail!("codecrew chat cannot listen for signals");
    };
    let mut signals = Stops {
        signals,
        hang_up: HangUp::watch(),
    };
    let (loaded, policy) = super::config_and_policy(&options.workspace)?;
    let store = ThreadStore::in_workspace(&options.workspace);
    let name = match args.thread.clone() {
        Some(name) => name,
        None => new_thread_name()?,
    };
    let mut chat = Chat {
        store,
        name,
        mode: Mode::from(args.mode),
        stage: None,
        workers: BTreeMap::new(),
        conversations: BTreeMap::new(),
        last: Vec::new(),
        used: BTreeMap::new(),
        loaded,
        policy,
        options,
        timeout: args.timeout,
    };
    let stored = match chat
        .store
        .load_to_continue(&chat.name, chat.loaded.project_trusted)
    {
        Ok(stored) => stored,
        Err(error) => {
            console::error(error);
            return Ok(ExitCode::from(super::EXIT_USAGE));
        }
    };
    let mut reader = Reader::start(editor(&chat.loaded)?, history_file())?;
    chat.say_hello(stored.is_some());
    let ending = chat.talk(&mut reader, &mut signals).await;
    chat.end(ending, &mut reader).await;
    Ok(ExitCode::from(ending.code()))
}

/// What ends the chat from outside its lines: a signal, or the terminal hanging up with
/// no SIGHUP sent to the chat (its shell ignored it).
struct Stops {
    signals: Signals,
    hang_up: HangUp,
}

impl Stops {
    /// The next one, as a signal's exit code (130, 143, 129). Cancel-safe.
    async fn next(&mut self) -> u8 {
        tokio::select! {
            code = self.signals.next() => code,
            () = self.hang_up.wait() => {
                console::hang_up();
                EXIT_SIGHUP
            }
        }
    }
}

/// What the chat runs with in one mode: the tools (their MCP servers started in the
/// mode's sandbox) and the crew that makes the agents' executors.
struct Stage {
    toolbox: Toolbox,
    crew: Arc<Crew>,
    settings: Settings,
}

struct Chat {
    store: ThreadStore,
    name: ThreadName,
    mode: Mode,
    stage: Option<Stage>,
    /// The running agents, and the model each was started with.
    workers: BTreeMap<String, (Worker, Option<String>)>,
    /// Where each agent's conversation stood when its worker was closed (a mode change).
    conversations: BTreeMap<String, Conversation>,
    /// The agents the last task line addressed.
    last: Vec<String>,
    /// What each agent used, line by line.
    used: BTreeMap<String, Vec<JobUsage>>,
    loaded: LoadedConfig,
    policy: Arc<Policy>,
    options: super::ToolOptions,
    timeout: Option<std::time::Duration>,
}

impl Chat {
    fn notice(&self, line: &str) {
        console::line(&Text::styled(console::colors().stderr, NOTICE, line));
    }

    fn say_hello(&self, resumed: bool) {
        let going_on = if resumed { "going on with" } else { "new" };
        self.notice(&format!(
            "codecrew chat · {going_on} thread {} · mode {} · /help for commands, Ctrl-D to end",
            self.name,
            self.mode.name()
        ));
    }

    /// The chat's lines, one after the other, until one of them, a signal or the
    /// terminal ends it.
    async fn talk(&mut self, reader: &mut Reader, signals: &mut Stops) -> Ending {
        let mut interrupted = false;
        loop {
            let prompt = format!("{}> ", self.mode.name());
            let read = tokio::select! {
                // The terminal is raw at the prompt, so a Ctrl-C typed there is a key
                // (below): a SIGINT came from elsewhere, and ends the chat as the others do.
                code = signals.next() => return Ending::of_signal(code),
                read = reader.read(&prompt) => read,
            };
            let line = match read {
                Read::Line(line) => line,
                Read::Interrupted if !interrupted => {
                    interrupted = true;
                    self.notice("Ctrl-C again, or Ctrl-D, ends the chat");
                    continue;
                }
                Read::Interrupted => return Ending::Interrupted,
                Read::Eof => return Ending::Asked,
                Read::HungUp => return Ending::HungUp,
                Read::Failed(error) => {
                    console::error(format_args!("the line editor stopped: {error}"));
                    return Ending::Failed;
                }
            };
            interrupted = false;
            let ended = match chat::parse(&joined(&line)) {
                Input::Empty => None,
                Input::Task(task) => self.line(&task, signals).await,
                Input::Command(Command::Exit) => Some(Ending::Asked),
                // A command may close the CLIs (a mode change), which takes a moment.
                Input::Command(command) => tokio::select! {
                    () = self.command(command) => None,
                    code = signals.next() => Some(Ending::of_signal(code)),
                },
            };
            if let Some(ending) = ended {
                return ending;
            }
        }
    }

    /// Runs one task line: every agent it addresses is started first (none is asked
    /// anything when one cannot start), then each is handed the line. A first Ctrl-C
    /// stops the answer; a second one, SIGTERM or a hang-up ends the chat.
    async fn line(&mut self, line: &str, signals: &mut Stops) -> Option<Ending> {
        let (jobs, addressed) = chat::jobs(line, &self.last, &self.loaded.config.default_agent);
        if let Err(error) = codecrew::run::jobs::check(&self.loaded, &jobs) {
            console::error(error);
            return None;
        }
        let started = tokio::select! {
            started = self.start_workers(&jobs) => started,
            code = signals.next() => {
                if code != EXIT_SIGINT {
                    return Some(Ending::of_signal(code));
                }
                console::line(&Text::plain("\ncodecrew: stopped before the agents started"));
                return None;
            }
        };
        let started = match started {
            Ok(started) => started,
            Err(error) => {
                console::error(error);
                return None;
            }
        };
        self.last = addressed;
        let (events_tx, mut events) = mpsc::unbounded_channel();
        let (answers_tx, mut answers) = mpsc::unbounded_channel();
        let (cancel_tx, cancel) = watch::channel(false);
        let mut labels = Vec::new();
        let mut tasks = Vec::new();
        for (job, label) in jobs.into_iter().zip(started) {
            // The agent's place among those that run: its events and its answer say it.
            let index = labels.len();
            let (answer, answered) = oneshot::channel();
            let sent = self.workers.get(&job.agent).is_some_and(|(worker, _)| {
                worker.send(Request {
                    task: job.task.clone(),
                    events: events_tx.clone(),
                    index,
                    cancel: cancel.clone(),
                    answer,
                })
            });
            if !sent {
                console::error(format_args!("@{} is not running any more", job.agent));
                continue;
            }
            let answers_tx = answers_tx.clone();
            tokio::spawn(async move {
                if let Ok(report) = answered.await {
                    let _ = answers_tx.send((index, report));
                }
            });
            labels.push(label);
            tasks.push(job.task);
        }
        drop((events_tx, answers_tx));
        let colors = console::colors();
        let mut renderer = Renderer::new(
            RunOutput::Text,
            false,
            labels,
            console::stdout().into_inner(),
        )
        .with_palette(colors.stdout);
        if colors.stdout.enabled() {
            renderer = renderer.with_markdown(terminal_width());
        }
        let mut interrupted = false;
        let mut waiting = tasks.len();
        while waiting > 0 {
            tokio::select! {
                // A signal first: an answer that streams fast must not hold it back.
                biased;
                code = signals.next() => {
                    if code != EXIT_SIGINT || interrupted {
                        // The answer's CLIs are stopped as the chat ends (`end`).
                        return Some(Ending::of_signal(code));
                    }
                    interrupted = true;
                    let _ = cancel_tx.send(true);
                    console::line(&Text::plain(
                        "\ncodecrew: stopping the answer (Ctrl-C again ends the chat)",
                    ));
                }
                Some((index, event)) = events.recv() => {
                    let _ = renderer.event(index, &event);
                }
                answer = answers.recv() => match answer {
                    Some((index, report)) => {
                        waiting -= 1;
                        self.answered(&mut renderer, index, &tasks, report);
                    }
                    // Every agent answered or is gone: nothing more will come.
                    None => break,
                },
            }
        }
        None
    }

    /// The workers of `jobs`, started where they are not running; their labels.
    async fn start_workers(
        &mut self,
        jobs: &[codecrew::run::mention::Job],
    ) -> anyhow::Result<Vec<JobLabel>> {
        let mut started = Vec::new();
        for job in jobs {
            started.push(self.worker(&job.agent, job.model.as_deref()).await?);
        }
        Ok(started)
    }

    /// Ends the chat, however it ended: each CLI gets a moment to end its session, then
    /// whatever is left is killed and what the walls held is put back; and, while the
    /// terminal is there, what the agents used and where the thread is. The thread
    /// already has every answer (each is recorded when it comes) and the history every
    /// line (saved as it is read).
    async fn end(&mut self, ending: Ending, reader: &mut Reader) {
        if ending == Ending::HungUp {
            console::hang_up();
        }
        reader.abandon();
        if matches!(ending, Ending::Interrupted | Ending::Terminated) {
            console::line(&Text::plain("codecrew: ending the chat"));
        }
        let _ = tokio::time::timeout(CLOSE_WAIT, self.close_workers()).await;
        // The CLIs' groups first, so that none writes after what is held is put back.
        codecrew_policy::process::kill_all();
        codecrew::clis::wall::guard::restore_all_now();
        self.summary();
    }

    fn answered(
        &mut self,
        renderer: &mut Renderer<console::Stdout>,
        index: usize,
        tasks: &[String],
        report: JobReport,
    ) {
        if let (false, Some(error)) = (report.success, &report.error) {
            console::line(&failure_line(
                console::colors().stderr,
                &report.agent,
                error,
            ));
        }
        let _ = renderer.done(index, &report);
        self.used
            .entry(report.agent.clone())
            .or_default()
            .push(report.usage);
        if report.success
            && let Some(task) = tasks.get(index)
        {
            let exchange = Exchange::from_report(task, &report, thread::now());
            let saved = self
                .store
                .update(&self.name, thread::now(), |thread| thread.record(exchange));
            if let Err(error) = saved {
                console::error(format_args!("the thread was not updated: {error}"));
            }
        }
    }

    /// The worker of `agent` in the current mode (started if it is not running, or
    /// started again for another model); its label.
    async fn worker(&mut self, agent: &str, model: Option<&str>) -> anyhow::Result<JobLabel> {
        let running_model = self.workers.get(agent).map(|(_, model)| model.clone());
        let stale = match (&running_model, model) {
            (Some(running), Some(asked)) => running.as_deref() != Some(asked),
            _ => false,
        };
        if stale
            && let Some((worker, _)) = self.workers.remove(agent)
            && let Some(conversation) = worker.close().await
        {
            self.conversations.insert(agent.to_owned(), conversation);
        }
        if !self.workers.contains_key(agent) {
            self.start_worker(agent, model).await?;
        }
        let provider = self
            .loaded
            .config
            .agents
            .get(agent)
            .map(|config| config.provider.name())
            .unwrap_or_default();
        let model = self.workers.get(agent).and_then(|(_, model)| model.clone());
        Ok(JobLabel {
            agent: agent.to_owned(),
            provider: provider.to_owned(),
            model,
            mode: self.mode.name(),
        })
    }

    async fn start_worker(&mut self, agent: &str, model: Option<&str>) -> anyhow::Result<()> {
        let mode = self.mode;
        if self.stage.is_none() {
            self.stage = Some(self.stage_for(mode).await);
        }
        let Some(stage) = &self.stage else {
            return Ok(());
        };
        let job = codecrew::run::mention::Job {
            agent: agent.to_owned(),
            model: model.map(str::to_owned),
            // Each line is handed to the worker; the plan only needs a task to check.
            task: "(the chat's lines)".to_owned(),
        };
        let crew = stage.crew.clone();
        let mut runs = codecrew::run::jobs::plan(
            &self.loaded,
            vec![job],
            &stage.settings,
            crew.registry(),
            |catalog| crew.executor(mode, catalog),
        )?;
        let Some(mut run) = runs.pop() else {
            return Ok(());
        };
        let kind = run.provider.kind().name();
        // Where this agent's conversation stands: its worker of another mode, else the
        // thread as stored.
        let conversation = match self.conversations.remove(agent) {
            Some(conversation) => conversation,
            None => match self
                .store
                .load_to_continue(&self.name, self.loaded.project_trusted)
            {
                Ok(Some(thread)) => {
                    if run.job.model.is_none() {
                        run.job.model = thread.model_for(agent, kind);
                    }
                    Conversation::from(&thread.continuation(agent, kind))
                }
                Ok(None) => Conversation::default(),
                Err(error) => return Err(error.into()),
            },
        };
        run.continuation = Continuation {
            session_id: conversation.session_id.clone(),
            earlier: conversation.earlier.clone(),
            session_usage: conversation.session_usage,
        };
        let model = run
            .provider
            .model(run.job.model.as_deref())
            .map(str::to_owned);
        super::warn_left_out(
            &self.loaded,
            &self.options.workspace,
            std::iter::once((agent, &run.provider)),
        );
        self.workers
            .insert(agent.to_owned(), (Worker::start(run, conversation), model));
        Ok(())
    }

    async fn stage_for(&self, mode: Mode) -> Stage {
        let workspace = &self.options.workspace;
        let limits = &self.loaded.config.limits;
        let settings = Settings {
            turn_timeout: self.timeout.unwrap_or(limits.turn_timeout()),
            depth: codecrew::run::crew::depth_from_env(),
            ..Settings::new(mode, limits, workspace.clone())
        };
        let toolbox = super::toolbox_on_call(&self.loaded, workspace, mode).await;
        let executor_for: ExecutorFactory = {
            let (options, policy) = (self.options.clone(), self.policy.clone());
            Arc::new(move |mode, registry, catalog| {
                super::executor_for(registry, catalog, mode, &options, policy.clone())
            })
        };
        let crew = Crew::new(
            self.loaded.clone(),
            toolbox.registry(),
            settings.clone(),
            executor_for,
        );
        Stage {
            toolbox,
            crew,
            settings,
        }
    }

    /// Ends every agent's CLI (what the walls held is put back), keeping where each
    /// conversation stands, and the mode's tools.
    async fn close_workers(&mut self) {
        // All at once: each CLI may take its grace to end.
        let mut closing = JoinSet::new();
        for (agent, (worker, _)) in std::mem::take(&mut self.workers) {
            closing.spawn(async move { (agent, worker.close().await) });
        }
        while let Some(closed) = closing.join_next().await {
            if let Ok((agent, Some(conversation))) = closed {
                self.conversations.insert(agent, conversation);
            }
        }
        if let Some(stage) = self.stage.take() {
            stage.toolbox.shutdown().await;
        }
    }

    /// What each agent used, and where the chat is kept.
    fn summary(&self) {
        let palette = console::colors().stderr;
        for (agent, used) in &self.used {
            let total = JobUsage::total(used.iter());
            console::line(&Text::styled(
                palette,
                NOTICE,
                &format!("@{agent}: {}", total.summary()),
            ));
        }
        self.notice(&format!(
            "thread {}: `codecrew threads show {}`, or go on with `codecrew chat --thread {}`",
            self.name, self.name, self.name
        ));
    }
}

fn editor(loaded: &LoadedConfig) -> anyhow::Result<LineEditor> {
    let mut editor = LineEditor::new()?;
    editor.set_helper(Some(ChatHelper {
        agents: loaded.config.agents.keys().cloned().collect(),
    }));
    editor.bind_sequence(KeyEvent(KeyCode::Enter, Modifiers::ALT), Cmd::Newline);
    if let Some(path) = history_file() {
        // No history yet is no error.
        let _ = editor.load_history(&path);
    }
    Ok(editor)
}

/// `chat-20261127-131500-4242`: a new chat's thread, named for when it starts and the
/// process (two chats, or a `/new`, within one second get names of their own).
fn new_thread_name() -> anyhow::Result<ThreadName> {
    static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let stamp: String = thread::now()
        .chars()
        .filter(char::is_ascii_digit)
        .take(14)
        .collect();
    let (date, time) = stamp.split_at(stamp.len().min(8));
    let count = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let process = std::process::id();
    let name = match count {
        0 => format!("chat-{date}-{time}-{process}"),
        n => format!("chat-{date}-{time}-{process}-{n}"),
    };
    Ok(ThreadName::parse(&name)?)
}
