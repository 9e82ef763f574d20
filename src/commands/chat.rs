//! `codecrew chat`: the conversation at the terminal. Reads a line (rustyline), runs it
//! through the agents it addresses (each a [`Worker`] that keeps its CLI), renders their
//! answers as `query` does, records each exchange in the chat's thread, and ends putting
//! back everything the CLIs' walls held.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::process::ExitCode;

use codecrew::chat::editor::{ChatHelper, LineEditor, history_file, joined};
use codecrew::chat::reader::{HangUp, Read, Reader};
use codecrew::chat::{self, Ending, Input, SlashCommand};
use codecrew::cli::{ChatArgs, RunOutput};
use codecrew::output::color::NOTICE;
use codecrew::output::console::{self, Text};
use codecrew::output::markdown::terminal_width;
use codecrew::output::render::{Renderer, failure_line};
use codecrew_config::LoadedConfig;
use codecrew_core::engine::{Engine, KeptAgents, Limits, ThreadSaver, Update};
use codecrew_core::session::JobReport;
use codecrew_core::thread::{self, ThreadName, ThreadStore};
use codecrew_core::usage::JobUsage;
use codecrew_tools::Mode;
use rustyline::{Cmd, KeyCode, KeyEvent, Modifiers};

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
    let engine = options.engine()?;
    let store = ThreadStore::in_workspace(&options.workspace);
    let name = match args.thread.clone() {
        Some(name) => name,
        None => new_thread_name()?,
    };
    let stored = match store.load_to_continue(&name, engine.config().project_trusted) {
        Ok(stored) => stored,
        Err(error) => {
            console::error(error);
            return Ok(ExitCode::from(super::EXIT_USAGE));
        }
    };
    let limits = Limits {
        max_turns: None,
        turn_timeout: args.timeout,
        answer: None,
    };
    let mut chat = Chat {
        agents: KeptAgents::new(Mode::from(args.mode), limits, ThreadSaver::new(store, name)),
        engine,
        last: Vec::new(),
        used: BTreeMap::new(),
        next_shape: None,
    };
    let mut reader = Reader::start(editor(chat.engine.config())?, history_file())?;
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

struct Chat {
    engine: Engine,
    /// The agents, each kept running once a line addressed it; the chat's thread.
    agents: KeptAgents,
    /// The agents the last task line addressed.
    last: Vec<String>,
    /// What each agent used, line by line.
    used: BTreeMap<String, Vec<JobUsage>>,
    /// The shape the next line's answers must have (`/schema`), then none.
    next_shape: Option<codecrew_core::schema::AnswerShape>,
}

impl Chat {
    fn notice(&self, line: &str) {
        console::line(&Text::styled(console::colors().stderr, NOTICE, line));
    }

    fn say_hello(&self, resumed: bool) {
        let going_on = if resumed { "going on with" } else { "new" };
        self.notice(&format!(
            "codecrew chat · {going_on} thread {} · mode {} · /help for commands, Ctrl-D to end",
            self.thread(),
            self.agents.mode().name()
        ));
    }

    /// The chat's thread (a chat always has one).
    fn thread(&self) -> &str {
        self.agents
            .thread_saver()
            .map_or("(none)", |thread_saver| thread_saver.name().as_str())
    }

    /// The chat's lines, one after the other, until one of them, a signal or the
    /// terminal ends it.
    async fn talk(&mut self, reader: &mut Reader, signals: &mut Stops) -> Ending {
        let mut interrupted = false;
        loop {
            let prompt = format!("{}> ", self.agents.mode().name());
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
                Input::Slash(SlashCommand::Exit) => Some(Ending::Asked),
                Input::Slash(command) => self.slow_command(command, signals).await,
            };
            if let Some(ending) = ended {
                return ending;
            }
        }
    }

    /// Runs a /command, which may take a moment (a mode change closes the CLIs, each
    /// with its grace). A Ctrl-C stops the command, not the chat: the chat goes on at the
    /// prompt, as it was where the command had not finished (a mode not changed, a
    /// thread not begun; CLIs it was closing still close). SIGTERM or a hang-up ends the
    /// chat.
    async fn slow_command(&mut self, command: SlashCommand, signals: &mut Stops) -> Option<Ending> {
        let name = command.name().to_owned();
        tokio::select! {
            () = self.command(command) => None,
            code = signals.next() => {
                if code != EXIT_SIGINT {
                    return Some(Ending::of_signal(code));
                }
                console::line(&Text::plain(&format!("\ncodecrew: stopped /{name}")));
                None
            }
        }
    }

    /// Runs one task line: every agent it addresses is started first (none is asked
    /// anything when one cannot start), then each is handed the line. A first Ctrl-C
    /// stops the answer; a second one, SIGTERM or a hang-up ends the chat.
    async fn line(&mut self, line: &str, signals: &mut Stops) -> Option<Ending> {
        let default_agent = &self.engine.config().config.default_agent;
        let (jobs, addressed) = chat::jobs(line, &self.last, default_agent);
        // `/schema` holds this line alone.
        let shape = self.next_shape.take();
        let asked = tokio::select! {
            asked = self.agents.ask_shaped(&self.engine, jobs, shape.clone()) => asked,
            code = signals.next() => {
                if code != EXIT_SIGINT {
                    return Some(Ending::of_signal(code));
                }
                console::line(&Text::plain("\ncodecrew: stopped before the agents started"));
                return None;
            }
        };
        let mut line = match asked {
            Ok(line) => line,
            Err(error) => {
                console::error(error);
                return None;
            }
        };
        self.last = addressed;
        for agent in &line.gone {
            console::error(format_args!("@{agent} is not running any more"));
        }
        let colors = console::colors();
        let mut renderer = if shape.is_some() {
            // The answers' data, as `query --schema` prints it.
            Renderer::data(&line.labels, console::stdout().into_inner())
        } else {
            let mut renderer = Renderer::new(
                RunOutput::Text,
                false,
                line.labels.clone(),
                console::stdout().into_inner(),
            )
            .with_palette(colors.stdout);
            if colors.stdout.enabled() {
                renderer = renderer.with_markdown(terminal_width());
            }
            renderer
        };
        let mut interrupted = false;
        loop {
            let update = tokio::select! {
                // A signal first: an answer that streams fast must not hold it back.
                biased;
                code = signals.next() => {
                    if code != EXIT_SIGINT || interrupted {
                        // The answer's CLIs are stopped as the chat ends (`end`).
                        return Some(Ending::of_signal(code));
                    }
                    interrupted = true;
                    line.stop();
                    console::line(&Text::plain(
                        "\ncodecrew: stopping the answer (Ctrl-C again ends the chat)",
                    ));
                    continue;
                }
                update = line.next() => update,
            };
            let shown = match update {
                Some(Update::Event(index, event)) => renderer.event(index, &event),
                Some(Update::Answer(index, report)) => self.answered(&mut renderer, index, *report),
                Some(Update::Unsaved(error)) => {
                    console::error(format_args!("the thread was not updated: {error}"));
                    Ok(())
                }
                // Every agent answered or is gone, and the thread has what it can keep.
                None => break,
            };
            if let Err(error) = shown {
                // Nobody can read the answers any more: the chat ends (its CLIs are
                // stopped as it does).
                line.stop();
                console::error(format_args!(
                    "could not write to the terminal ({error}); ending the chat"
                ));
                return Some(Ending::Failed);
            }
        }
        None
    }

    /// Says which answers the thread could not keep.
    async fn say_unsaved(&mut self) {
        for error in self.agents.settle().await {
            console::error(format_args!("the thread was not updated: {error}"));
        }
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
        let _ = tokio::time::timeout(CLOSE_WAIT, self.agents.close()).await;
        // The CLIs' groups first, so that none writes after what is held is put back.
        Engine::stop_now(ending.code());
        self.say_unsaved().await;
        self.agents.finish(ending.code());
        self.summary();
    }

    fn answered(
        &mut self,
        renderer: &mut Renderer<console::Stdout>,
        index: usize,
        report: JobReport,
    ) -> std::io::Result<()> {
        if let (false, Some(error)) = (report.success, &report.error) {
            console::line(&failure_line(
                console::colors().stderr,
                &report.agent,
                error,
            ));
        }
        let shown = renderer.done(index, &report);
        self.used
            .entry(report.agent.clone())
            .or_default()
            .push(report.usage);
        shown
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
            self.thread(),
            self.thread(),
            self.thread()
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
