//! The chat's `/commands` that make sense in an editor: offered as the session's slash
//! commands (`available_commands_update`), and run by codecrew when a prompt starts
//! with one. The chat's others are the editor's own business there (a new session, the
//! history, closing), and a `/word` codecrew does not know is a task for the agents.

use std::collections::BTreeMap;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, SessionId,
    SessionNotification, SessionUpdate, UnstructuredCommandInput,
};

use crate::chat::{self, Input, SlashCommand};
use codecrew_config::Config;
use codecrew_core::usage::JobUsage;

/// A command codecrew runs for the editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorCommand {
    /// `/mode [query|execute]`: show or change the mode.
    Mode(Option<String>),
    /// `/agents`: the agents, and those running.
    Agents,
    /// `/usage`: what each agent used in this session.
    Usage,
    /// `/help`.
    Help,
}

/// What a prompt that starts with `/` is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slash {
    Run(EditorCommand),
    /// One of the chat's commands that the editor does itself: what to tell the user.
    EditorsOwn(&'static str),
}

/// The slash commands the editor offers, as it lists them.
pub fn available() -> Vec<AvailableCommand> {
    vec![
        AvailableCommand::new(
            "mode",
            "Show the mode, or change it: /mode query (read only) or /mode execute",
        )
        .input(AvailableCommandInput::Unstructured(
            UnstructuredCommandInput::new("query or execute"),
        )),
        AvailableCommand::new("agents", "The agents you can address, and those running"),
        AvailableCommand::new("usage", "What each agent has used in this session"),
        AvailableCommand::new("help", "How to address the agents, and these commands"),
    ]
}

/// Tells the editor the session's slash commands. Sent after the answer that made the
/// session known (new, load, resume): JetBrains waits for that answer and hangs on an
/// update about a session it does not know yet.
pub fn announce(connection: &ConnectionTo<Client>, session: SessionId) {
    let update = SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(available()));
    let _ = connection.send_notification(SessionNotification::new(session, update));
}

/// The command `prompt` runs, when it is one of the chat's (the chat's own reading).
pub fn parse(prompt: &str) -> Option<Slash> {
    let Input::Slash(command) = chat::parse(prompt) else {
        return None;
    };
    Some(match command {
        SlashCommand::Mode(mode) => Slash::Run(EditorCommand::Mode(mode)),
        SlashCommand::Agents => Slash::Run(EditorCommand::Agents),
        SlashCommand::Usage => Slash::Run(EditorCommand::Usage),
        SlashCommand::Help => Slash::Run(EditorCommand::Help),
        SlashCommand::New => {
            Slash::EditorsOwn("a new conversation is a new session: open one in the editor")
        }
        SlashCommand::Resume(_) => Slash::EditorsOwn(
            "the editor's history lists the earlier sessions: open one there to go on from it",
        ),
        SlashCommand::Thread => Slash::EditorsOwn(
            "an editor's session is kept as a run: `codecrew logs` lists it, under the session's id",
        ),
        SlashCommand::Exit => Slash::EditorsOwn("close the session in the editor"),
        SlashCommand::Undo { .. } => Slash::EditorsOwn(
            "run `codecrew undo` in a terminal in this folder: it puts back what the last \
             prompt in execute changed",
        ),
        SlashCommand::Schema(_) => Slash::EditorsOwn(
            "answers held to a schema are the terminal's: `codecrew query --schema` or chat's /schema",
        ),
        SlashCommand::Worktrees | SlashCommand::Apply(_) => Slash::EditorsOwn(
            "the agents' worktrees are the terminal's: `codecrew worktrees`, `codecrew apply RUN AGENT`",
        ),
        // Not codecrew's: the agents' (a path, a CLI's own command).
        SlashCommand::Unknown(_) => return None,
    })
}

/// `/agents`: each agent of the config, its CLI, and whether it runs (with which model),
/// `running` telling which do.
pub fn agents<'a>(config: &Config, running: impl Fn(&str) -> Option<Option<&'a str>>) -> String {
    let mut text = String::new();
    for (id, agent) in &config.agents {
        let state = match running(id) {
            Some(Some(model)) => format!(", running ({model})"),
            Some(None) => ", running".to_owned(),
            None => String::new(),
        };
        text.push_str(&format!("- **@{id}**: {}{state}\n", agent.provider.name()));
    }
    text
}

/// `/usage`: what each agent used in the session.
pub fn usage(spent: &BTreeMap<String, JobUsage>) -> String {
    if spent.is_empty() {
        return "Nothing used yet: no agent has answered in this session.\n".to_owned();
    }
    spent
        .iter()
        .map(|(agent, used)| format!("- **@{agent}**: {}\n", used.summary()))
        .collect()
}

/// `/help`.
pub fn help() -> String {
    let mut text = "A prompt is a task: @agent or @agent:model, then the text (several \
                    mentions ask several agents); a prompt without a mention goes to the \
                    agents last addressed, else the session's chosen agent. The session's \
                    options choose the agent, its model and the mode.\n\n"
        .to_owned();
    for command in available() {
        text.push_str(&format!("- `/{}`: {}\n", command.name, command.description));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_is_a_command_only_when_it_is_one_of_the_chats() {
        assert_eq!(
            parse("/mode execute"),
            Some(Slash::Run(EditorCommand::Mode(Some("execute".to_owned()))))
        );
        assert_eq!(parse("  /usage"), Some(Slash::Run(EditorCommand::Usage)));
        assert!(matches!(parse("/new"), Some(Slash::EditorsOwn(_))));
        assert_eq!(parse("/etc/hosts: what is in it?"), None);
        assert_eq!(parse("@claude /mode"), None);
        // Every command offered is one codecrew runs.
        for command in available() {
            assert!(
                matches!(parse(&format!("/{}", command.name)), Some(Slash::Run(_))),
                "{}",
                command.name
            );
        }
    }
}
