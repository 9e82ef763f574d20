//! The chat's `/commands`: what each does to the chat.

use codecrew::chat::{COMMANDS, SlashCommand};
use codecrew::output::color::LABEL;
use codecrew::output::console::{self, Text};
use codecrew_core::engine::Resume;
use codecrew_tools::Mode;

use super::{Chat, new_thread_name};

impl Chat {
    /// Does what `command` asks. Stopped before it ends (a Ctrl-C drops the future), the
    /// chat is as it was: what a command changes in the chat it changes after its last
    /// wait.
    pub(super) async fn command(&mut self, command: SlashCommand) {
        match command {
            SlashCommand::Mode(None) => self.notice(&format!("mode {}", self.agents.mode().name())),
            SlashCommand::Mode(Some(name)) => {
                let mode = match name.as_str() {
                    "query" => Mode::Query,
                    "execute" => Mode::Execute,
                    other => {
                        console::error(format_args!(
                            "no mode {other:?}: /mode query (read only) or /mode execute"
                        ));
                        return;
                    }
                };
                // The CLIs run in their mode's wall: they start again, resuming.
                self.agents.set_mode(mode).await;
                self.notice(&format!("mode {}", self.agents.mode().name()));
            }
            SlashCommand::Agents => {
                let mut text = Text::new();
                for (id, agent) in &self.engine.config().config.agents {
                    let running = match self.agents.running(id) {
                        Some(model) => format!(
                            "  running{}",
                            model.map(|m| format!(" ({m})")).unwrap_or_default()
                        ),
                        None => String::new(),
                    };
                    text.push_styled(console::colors().stdout, LABEL, &format!("@{id}"))
                        .push(&format!("  {}{running}\n", agent.provider.name()));
                }
                let _ = console::stdout().show(&text);
            }
            SlashCommand::Thread => {
                if let Some(thread_saver) = self.agents.thread_saver() {
                    let name = thread_saver.name();
                    self.notice(&format!(
                        "thread {name} ({}); `codecrew threads show {name}` shows it",
                        thread_saver.store().path(name).display(),
                    ));
                }
            }
            SlashCommand::Usage => self.summary(),
            SlashCommand::New => {
                match new_thread_name() {
                    Ok(name) => {
                        for error in self.agents.restart(name).await {
                            console::error(format_args!("the thread was not updated: {error}"));
                        }
                    }
                    Err(error) => console::error(error),
                }
                self.last.clear();
                self.say_hello(false);
            }
            SlashCommand::Resume(id) => {
                let which = id.map_or(Resume::Last, Resume::Run);
                let earlier = match self.engine.earlier(&which, self.agents.run_id()) {
                    Ok(earlier) => earlier,
                    Err(error) => {
                        console::error(error);
                        return;
                    }
                };
                let name = match new_thread_name() {
                    Ok(name) => name,
                    Err(error) => {
                        console::error(error);
                        return;
                    }
                };
                let run = earlier.run.clone();
                let last: Vec<String> = earlier.agents().map(str::to_owned).collect();
                for error in self.agents.resume(name, earlier).await {
                    console::error(format_args!("the thread was not updated: {error}"));
                }
                self.last = last;
                let agents: Vec<String> = self.last.iter().map(|a| format!("@{a}")).collect();
                self.notice(&format!(
                    "going on from run {} with {} (each resumes where it stood) · thread {}",
                    run.get(..8).unwrap_or(&run),
                    agents.join(", "),
                    self.thread()
                ));
            }
            SlashCommand::Undo { run, force } => {
                let workspace = self.engine.workspace().to_owned();
                // Its refusal or failure is said; the chat goes on either way.
                let _ = crate::commands::undo::undo_and_show(workspace, run, force, false).await;
            }
            SlashCommand::Schema(None) => match &self.next_shape {
                Some(shape) => self.notice(&format!(
                    "the next line's answers are held to {}",
                    shape.schema.json()
                )),
                None => self.notice(
                    "/schema 'file, risk int' holds the next line's answers to that JSON \
                     (llm's compact form, a JSON Schema, or @file); /schema off drops it",
                ),
            },
            SlashCommand::Schema(Some(spec)) if spec == "off" => {
                self.next_shape = None;
                self.notice("no schema for the next line");
            }
            SlashCommand::Schema(Some(spec)) => {
                let dir = self.engine.workspace().to_path_buf();
                match codecrew_core::schema::AnswerSchema::from_argument(&spec, false, &dir) {
                    Ok(schema) => {
                        self.next_shape = Some(codecrew_core::schema::AnswerShape {
                            schema: std::sync::Arc::new(schema),
                            retries: codecrew_core::schema::DEFAULT_RETRIES,
                        });
                        self.notice("the next line's answers are held to the schema");
                    }
                    Err(error) => console::error(error),
                }
            }
            SlashCommand::Worktrees => {
                let args = codecrew::cli::WorktreesArgs {
                    command: None,
                    output: codecrew::cli::OutputArg::Text,
                };
                if let Err(error) =
                    crate::commands::worktrees::list_or_remove(&args, self.engine.workspace())
                {
                    console::error(error);
                }
            }
            SlashCommand::Apply(words) => {
                let [run, agent] = words.as_slice() else {
                    console::error("/apply RUN AGENT: the run's id (or its start) and the agent");
                    return;
                };
                let args = codecrew::cli::ApplyArgs {
                    run: run.clone(),
                    agent: agent.clone(),
                    merge: false,
                    squash: false,
                    patch: true,
                    keep: false,
                };
                if let Err(error) =
                    crate::commands::worktrees::apply(&args, self.engine.workspace())
                {
                    console::error(error);
                }
            }
            SlashCommand::Help => {
                let mut text = Text::plain(
                    "Each line is a task: @agent or @agent:model, then the text; a line \
                     without a mention goes to the agents last addressed. End a line with \\ \
                     (or press Alt-Enter) to go on. Tab completes.\n",
                );
                for (name, what) in COMMANDS {
                    text.push_styled(console::colors().stdout, LABEL, &format!("  {name:<8}"))
                        .push(&format!(" {what}\n"));
                }
                let _ = console::stdout().show(&text);
            }
            SlashCommand::Unknown(name) => {
                console::error(format_args!("no command /{name}; /help lists them"));
            }
            SlashCommand::Exit => {}
        }
    }
}
