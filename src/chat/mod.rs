//! `codecrew chat`: a conversation at the terminal. Each line is a task, with mentions as
//! in `query`; a line without one goes to the agents last addressed. Every agent keeps
//! its CLI between lines (the engine's [`codecrew_core::engine::KeptAgents`]) and goes on with its own conversation; the chat is
//! a thread. Lines that start with `/` are the chat's own commands ([`SlashCommand`]). The
//! lines are read on a thread of their own ([`reader`]), so that however the chat ends
//! ([`Ending`]) it ends at once.

pub mod editor;
pub mod reader;

use codecrew_core::mention::{self, Job};

/// What a line of the chat asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Nothing (an empty line).
    Empty,
    /// A task for the agents it mentions, or the last ones.
    Task(String),
    Slash(SlashCommand),
}

/// The chat's own commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCommand {
    /// `/mode [query|execute]`: show or change what the agents may do.
    Mode(Option<String>),
    /// `/agents`: the agents, and which are running.
    Agents,
    /// `/thread`: the thread the chat is recorded in.
    Thread,
    /// `/usage`: what the agents used so far.
    Usage,
    /// `/new`: a new conversation (a new thread; the CLIs start afresh).
    New,
    /// `/resume [ID]`: a new conversation going on from a run kept in the run store (the
    /// last one in this workspace without an id).
    Resume(Option<String>),
    /// `/undo [ID] [--force]`: put back what the newest run of execute here (a line of
    /// this chat in execute among them), or run ID, changed.
    Undo {
        run: Option<String>,
        force: bool,
    },
    /// `/schema SPEC`: the next line's answers held to SPEC (as `--schema`); `/schema
    /// off` drops it.
    Schema(Option<String>),
    /// `/worktrees`: the agents' worktrees kept for this repository.
    Worktrees,
    /// `/apply RUN AGENT`: one agent's change from its worktree into the checkout.
    Apply(Vec<String>),
    Help,
    Exit,
    /// A `/word` that is none of these.
    Unknown(String),
}

impl SlashCommand {
    /// The command's name, as typed after the `/`.
    pub fn name(&self) -> &str {
        match self {
            SlashCommand::Mode(_) => "mode",
            SlashCommand::Agents => "agents",
            SlashCommand::Thread => "thread",
            SlashCommand::Usage => "usage",
            SlashCommand::New => "new",
            SlashCommand::Resume(_) => "resume",
            SlashCommand::Undo { .. } => "undo",
            SlashCommand::Schema(_) => "schema",
            SlashCommand::Worktrees => "worktrees",
            SlashCommand::Apply(_) => "apply",
            SlashCommand::Help => "help",
            SlashCommand::Exit => "exit",
            SlashCommand::Unknown(name) => name,
        }
    }
}

/// The commands and what each does, for `/help` and completion.
pub const COMMANDS: &[(&str, &str)] = &[
    (
        "/mode",
        "show the mode, or change it: /mode query (read only) or /mode execute",
    ),
    ("/agents", "the agents you can address, and those running"),
    ("/thread", "the thread this chat is recorded in"),
    ("/usage", "what each agent has used so far"),
    ("/new", "start a new conversation (a new thread)"),
    (
        "/resume",
        "go on from the last run here, or /resume ID from any (`codecrew logs` lists them)",
    ),
    (
        "/undo",
        "put back what the last line or run of execute here changed; /undo ID, --force",
    ),
    (
        "/schema",
        "/schema 'file, risk int' (or JSON, @file): the next line's answers as that JSON",
    ),
    (
        "/worktrees",
        "the agents' worktrees kept here (`codecrew execute --worktrees` makes them)",
    ),
    (
        "/apply",
        "/apply RUN AGENT: that agent's change from its worktree, into the working tree",
    ),
    ("/help", "this help"),
    ("/exit", "end the chat (Ctrl-D on an empty line does too)"),
];

/// How a chat ended. Each way ends the same: the CLIs stopped, what their walls held put
/// back, the thread and the history kept; only the exit code differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Ctrl-D on an empty line, or `/exit`.
    Asked,
    /// Ctrl-C twice at the prompt or during an answer; SIGINT at the prompt.
    Interrupted,
    /// SIGTERM.
    Terminated,
    /// The terminal hung up: SIGHUP, or its reads failing as it went away.
    HungUp,
    /// The terminal could not be read.
    Failed,
}

impl Ending {
    /// The exit code: 0, 130, 143, 129, 1 (the signal's number plus 128 where one ended it).
    pub fn code(self) -> u8 {
        match self {
            Ending::Asked => 0,
            Ending::Interrupted => 130,
            Ending::Terminated => 143,
            Ending::HungUp => 129,
            Ending::Failed => 1,
        }
    }

    /// The ending a signal's exit code (130, 143, 129) says.
    pub fn of_signal(code: u8) -> Ending {
        match code {
            143 => Ending::Terminated,
            129 => Ending::HungUp,
            _ => Ending::Interrupted,
        }
    }
}

/// Reads one line of the chat.
pub fn parse(line: &str) -> Input {
    let line = line.trim();
    if line.is_empty() {
        return Input::Empty;
    }
    let Some(command) = line.strip_prefix('/') else {
        return Input::Task(line.to_owned());
    };
    let mut words = command.split_whitespace();
    let name = words.next().unwrap_or_default();
    let rest: Vec<String> = words.map(str::to_owned).collect();
    let argument = rest.first().cloned();
    if name == "undo" {
        let (flags, ids): (Vec<&String>, Vec<&String>) =
            rest.iter().partition(|word| word.starts_with('-'));
        return Input::Slash(SlashCommand::Undo {
            run: ids.first().map(|id| (*id).clone()),
            force: flags.iter().any(|flag| *flag == "--force"),
        });
    }
    Input::Slash(match name {
        "mode" => SlashCommand::Mode(argument),
        "agents" => SlashCommand::Agents,
        "thread" => SlashCommand::Thread,
        "usage" => SlashCommand::Usage,
        "new" | "clear" => SlashCommand::New,
        "resume" => SlashCommand::Resume(argument),
        "schema" => SlashCommand::Schema(
            Some(command[name.len()..].trim().to_owned()).filter(|rest| !rest.is_empty()),
        ),
        "worktrees" => SlashCommand::Worktrees,
        "apply" => SlashCommand::Apply(rest),
        "help" | "?" => SlashCommand::Help,
        "exit" | "quit" | "q" => SlashCommand::Exit,
        other => SlashCommand::Unknown(other.to_owned()),
    })
}

/// The jobs of a task line: its mentions, else the agents last addressed, else the
/// default agent; and the agents now last addressed.
pub fn jobs(line: &str, last: &[String], default_agent: &str) -> (Vec<Job>, Vec<String>) {
    let task = mention::parse_task(line);
    let agents: Vec<(String, Option<String>)> = if task.mentions.is_empty() {
        if last.is_empty() {
            vec![(default_agent.to_owned(), None)]
        } else {
            last.iter().map(|agent| (agent.clone(), None)).collect()
        }
    } else {
        task.mentions
            .into_iter()
            .map(|mention| (mention.agent, mention.model))
            .collect()
    };
    let addressed = agents.iter().map(|(agent, _)| agent.clone()).collect();
    let jobs = agents
        .into_iter()
        .map(|(agent, model)| Job {
            agent,
            model,
            task: task.text.clone(),
        })
        .collect();
    (jobs, addressed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_tasks_or_commands() {
        assert_eq!(parse("  "), Input::Empty);
        assert_eq!(parse("@claude hi"), Input::Task("@claude hi".into()));
        assert_eq!(
            parse("/mode execute"),
            Input::Slash(SlashCommand::Mode(Some("execute".into())))
        );
        assert_eq!(parse("/quit"), Input::Slash(SlashCommand::Exit));
        assert_eq!(parse("/resume"), Input::Slash(SlashCommand::Resume(None)));
        assert_eq!(
            parse("/undo"),
            Input::Slash(SlashCommand::Undo {
                run: None,
                force: false
            })
        );
        assert_eq!(
            parse("/undo --force 1a2b"),
            Input::Slash(SlashCommand::Undo {
                run: Some("1a2b".to_owned()),
                force: true
            })
        );
        assert_eq!(
            parse("/resume 1a2b3c"),
            Input::Slash(SlashCommand::Resume(Some("1a2b3c".to_owned())))
        );
        assert_eq!(
            parse("/nope"),
            Input::Slash(SlashCommand::Unknown("nope".into()))
        );
        for (line, name) in [
            ("/mode execute", "mode"),
            ("/clear", "new"),
            ("/nope", "nope"),
        ] {
            match parse(line) {
                Input::Slash(command) => assert_eq!(command.name(), name),
                other => panic!("{line}: {other:?}"),
            }
        }
    }

    #[test]
    fn each_ending_exits_with_its_own_code() {
        let codes: Vec<u8> = [
            Ending::Asked,
            Ending::Interrupted,
            Ending::Terminated,
            Ending::HungUp,
            Ending::Failed,
        ]
        .map(Ending::code)
        .into();
        assert_eq!(codes, [0, 130, 143, 129, 1]);
        for code in [130, 143, 129] {
            assert_eq!(Ending::of_signal(code).code(), code);
        }
    }

    #[test]
    fn a_line_without_a_mention_goes_to_the_agents_last_addressed() {
        let (jobs, last) = jobs("@claude @gemini:flash compare", &[], "claude");
        assert_eq!(last, ["claude", "gemini"]);
        assert_eq!(jobs[1].model.as_deref(), Some("flash"));
        assert_eq!(jobs[0].task, "compare");
        let (jobs, again) = self::jobs("and now?", &last, "claude");
        assert_eq!(again, last);
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].task, "and now?");
        let (jobs, _) = self::jobs("first line", &[], "codex");
        assert_eq!(jobs[0].agent, "codex");
    }
}
