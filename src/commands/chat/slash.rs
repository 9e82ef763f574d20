//! The chat's `/commands`: what each does to the chat.

use codecrew::chat::{COMMANDS, Command};
use codecrew::output::color::LABEL;
use codecrew::output::console::{self, Text};
use codecrew_tools::Mode;

use super::{Chat, new_thread_name};

impl Chat {
    pub(super) async fn command(&mut self, command: Command) {
        match command {
            Command::Mode(None) => self.notice(&format!("mode {}", self.mode.name())),
            Command::Mode(Some(name)) => {
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
                if mode != self.mode {
                    // The CLIs run in their mode's wall: they start again, resuming.
                    self.close_workers().await;
                    self.mode = mode;
                }
                self.notice(&format!("mode {}", self.mode.name()));
            }
            Command::Agents => {
                let mut text = Text::new();
                for (id, agent) in &self.loaded.config.agents {
                    let running = match self.workers.get(id) {
                        Some((_, model)) => format!(
                            "  running{}",
                            model
                                .as_deref()
                                .map(|m| format!(" ({m})"))
                                .unwrap_or_default()
                        ),
                        None => String::new(),
                    };
                    text.push_styled(console::colors().stdout, LABEL, &format!("@{id}"))
                        .push(&format!("  {}{running}\n", agent.provider.name()));
                }
                let _ = console::stdout().show(&text);
            }
            Command::Thread => self.notice(&format!(
                "thread {} ({}); `codecrew threads show {}` shows it",
                self.name,
                self.store.path(&self.name).display(),
                self.name
            )),
            Command::Usage => self.summary(),
            Command::New => {
                self.close_workers().await;
                self.conversations.clear();
                self.last.clear();
                match new_thread_name() {
                    Ok(name) => self.name = name,
                    Err(error) => console::error(error),
                }
                self.say_hello(false);
            }
            Command::Help => {
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
            Command::Unknown(name) => {
                console::error(format_args!("no command /{name}; /help lists them"));
            }
            Command::Exit => {}
        }
    }
}
