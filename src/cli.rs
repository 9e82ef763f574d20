//! The command line: every command, flag and help text. The built-in `help` tool renders
//! its answers from these same definitions, so the model and the user read one text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::output::color::ColorChoice;

pub use crate::output::render::RunOutput;
pub use background::{DetachArgs, KillArgs, PsArgs, ResultArgs};
use background::{KILL_HELP, PS_HELP, RESULT_HELP};
use logs::LOGS_HELP;
pub use logs::{LogsArgs, LogsCommand, LogsListArgs, LogsStatus, Since, parse_since};
use servers::{ACP_HELP, MCP_HELP};
pub use servers::{AcpArgs, McpArgs};
pub use spans::{parse_age, parse_duration};
use undo::UNDO_HELP;
pub use undo::UndoArgs;

mod background;
mod help;
mod logs;
mod quick_parse;
mod servers;
mod spans;
#[cfg(test)]
mod tests;
mod undo;
mod worktrees;
use worktrees::WORKTREES_HELP;
pub use worktrees::{
    ApplyArgs, DiffArgs, DirtyArg, IsolationArgs, WorktreesArgs, WorktreesCommand,
};

use codecrew_core::thread::ThreadName;
use codecrew_intercept::decode::Format;
use codecrew_tools::Mode;
pub use help::{CliHelp, command_names, help_text};
pub use quick_parse::{command_word, parse_run};

const AFTER_HELP: &str = "\
Examples:
  codecrew query \"@claude:haiku How do I use codecrew?\"
  codecrew execute \"@claude add a --verbose flag to the CLI\"
  codecrew query --thread review \"@claude and what about the tests?\"
  codecrew prompt \"Summarise README.md\" | some-llm-cli | codecrew intercept

Exit codes: 0 ok, 1 agent or tool failure, 2 usage or config error,
3 CLI not installed, 65 no answer fitted --schema, 124 timeout, 130 interrupted
(143 SIGTERM, 129 SIGHUP).";

/// codecrew gives LLM command-line agents (Claude Code, Gemini CLI, Codex, Copilot, or any
/// CLI you declare) tools they do not have natively: it offers them in the prompt, catches
/// the calls the model writes as JSON, runs them and feeds the results back.
#[derive(Debug, Parser)]
#[command(name = "codecrew", version, after_help = AFTER_HELP, max_term_width = 100)]
pub struct CommandLine {
    #[command(subcommand)]
    pub command: CodecrewCommand,

    #[command(flatten)]
    pub global: GlobalArgs,
}

/// The options every command takes (before or after its name).
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// The workspace root: file tools never leave it [default: the current directory]
    #[arg(long, global = true, value_name = "DIR")]
    pub workdir: Option<PathBuf>,

    /// Append one JSON line per tool call (tool, input digest, decision, status, time) to
    /// .codecrew/audit.jsonl in the workspace
    #[arg(long, global = true, env = "CODECREW_AUDIT", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub audit: bool,

    /// More logging on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides it
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Allow tool calls that would ask for approval; denied calls stay denied
    #[arg(long, global = true)]
    pub yes: bool,

    /// Run tools and agents even where the workspace is your home directory, a folder
    /// that holds it, or /; the hidden files and folders of the home (~/.config, ~/.ssh,
    /// ...) still stay out of reach
    #[arg(long, global = true)]
    pub allow_home: bool,

    /// Keep nothing of this run in the run store that `codecrew logs` reads
    /// (`[logs] enabled = false` in the user config turns it off for every run)
    #[arg(long, global = true)]
    pub no_log: bool,

    /// When to style the output: auto styles a terminal unless NO_COLOR is set
    /// (CLICOLOR_FORCE=1 styles a pipe too); JSON output is never styled
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

#[derive(Debug, Subcommand)]
pub enum CodecrewCommand {
    /// Ask one or more agents a question; they may use codecrew's read-only tools, and run
    /// reading commands (git log, grep, ...) in a read-only sandbox
    // The worktree flags are execute's (query never writes): parsed all the same, so
    // that query can say so, but not listed in its help.
    #[command(
        after_help = RUN_EXAMPLES_QUERY,
        mut_arg("worktrees", |arg| arg.hide(true)),
        mut_arg("shared_workspace", |arg| arg.hide(true)),
        mut_arg("base", |arg| arg.hide(true)),
        mut_arg("dirty", |arg| arg.hide(true)),
        mut_arg("check", |arg| arg.hide(true)),
        mut_arg("judge", |arg| arg.hide(true)),
    )]
    Query(RunArgs),
    /// Have one or more agents do a task; they may write files and run commands,
    /// within the permission policy
    #[command(after_help = RUN_EXAMPLES_EXECUTE)]
    Execute(RunArgs),
    /// Talk with the agents at the terminal: each line is a task (mentions as in query),
    /// every agent keeps its CLI and its conversation between lines
    #[command(after_help = CHAT_HELP)]
    Chat(ChatArgs),
    /// Print the tool-augmented prompt for a message, to feed any LLM CLI
    #[command(
        after_help = "Example:\n  codecrew prompt \"List the TODOs in src/\" | llm | codecrew intercept"
    )]
    Prompt(PromptArgs),
    /// Print the JSON Schema a --schema means (llm's compact form, @FILE or JSON),
    /// checked as query and execute check it
    #[command(after_help = "Example:\n  codecrew schema 'file, risk int, why: a sentence'")]
    Schema(SchemaArgs),
    /// Read an LLM CLI's output on stdin, find the codecrew tool calls in it and run them
    #[command(after_help = "Examples:\n  \
        claude -p \"$(codecrew prompt 'Read README.md')\" --output-format stream-json --verbose \\\n    \
        | codecrew intercept --from claude\n  \
        some-llm-cli < prompt.txt | codecrew intercept --dry-run --output json")]
    Intercept(InterceptArgs),
    /// List, inspect and call codecrew's tools directly
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// Serve codecrew's tools, and other agents, over MCP (on stdin/stdout, or over HTTP
    /// with --http) for CLIs that call MCP tools natively (Claude Code, Gemini CLI, Codex)
    #[command(after_help = MCP_HELP)]
    Mcp(McpArgs),
    /// Serve the crew to an editor over the Agent Client Protocol (Zed, JetBrains IDEs,
    /// Neovim, Emacs): prompts with @mentions, every tool call and question shown there
    #[command(after_help = ACP_HELP)]
    Acp(AcpArgs),
    /// Write a commented starter codecrew.toml in the workspace
    #[command(after_help = "Then check it with:\n  codecrew agents list")]
    Init(InitArgs),
    /// Show the agents of the merged configuration
    #[command(subcommand)]
    Agents(AgentsCommand),
    /// List, show, adopt and remove the conversations kept by `--thread`
    #[command(subcommand, after_help = THREADS_HELP)]
    Threads(ThreadsCommand),
    /// List, show, search and remove the runs kept of query, execute and chat
    #[command(after_help = LOGS_HELP, args_conflicts_with_subcommands = true)]
    Logs(LogsArgs),
    /// List the runs that have not ended: those going on (--detach, or at another
    /// terminal), and those whose codecrew died (killed, the machine restarted)
    #[command(after_help = PS_HELP)]
    Ps(PsArgs),
    /// Stop a running run as Ctrl-C would: its agents' CLIs stopped, what their walls
    /// hold put back
    #[command(after_help = KILL_HELP)]
    Kill(KillArgs),
    /// Print a run's answers once it has ended; --wait waits for them
    #[command(after_help = RESULT_HELP)]
    Result(ResultArgs),
    /// Put back what a run of execute changed in the workspace, as it was before the run
    #[command(after_help = UNDO_HELP)]
    Undo(UndoArgs),
    /// Check the setup: installed CLIs and their versions, the config, the MCP servers,
    /// the OS sandbox; with --live, ask each agent a one-word question
    #[command(after_help = DOCTOR_HELP)]
    Doctor(DoctorArgs),
    /// Show what an agent of an `execute --worktrees` run changed in its worktree
    #[command(after_help = WORKTREES_HELP)]
    Diff(DiffArgs),
    /// Bring one agent's change from its worktree into the checkout
    #[command(after_help = WORKTREES_HELP)]
    Apply(ApplyArgs),
    /// List the agents' worktrees kept (size, age, run, applied or not); rm, prune
    #[command(after_help = WORKTREES_HELP)]
    Worktrees(WorktreesArgs),
    /// Print a shell completion script
    #[command(
        after_help = "Example:\n  codecrew completions bash > ~/.local/share/bash-completion/completions/codecrew"
    )]
    Completions(CompletionsArgs),
    /// Print the manual page (roff, section 1) for codecrew and every command
    #[command(after_help = "Examples:\n  \
        codecrew man > ~/.local/share/man/man1/codecrew.1 && man codecrew\n  \
        codecrew man --dir ~/.local/share/man/man1    # one page per command")]
    Man(ManArgs),
}

const RUN_EXAMPLES_QUERY: &str = "\
Examples:
  codecrew query \"@claude:haiku How do I use codecrew?\"
  codecrew query \"@claude @gemini compare the two error handling styles in src/\"
  codecrew query \"@codex where is the config parsed?\" \"@claude summarise README.md\"
  codecrew query --output json \"What does this project do?\"
  codecrew query --thread review \"@claude what would you change in src/cli.rs?\"
  codecrew query --thread review \"@claude show me the first change\"
  git diff | codecrew query \"@claude review this\"       # piped input beside the task
  codecrew query - < task.md                             # the task itself from stdin

Piped input (stdin that is not a terminal) is given to every task as context, marked as
input; with `-` as a task, or no task at all, it is the task. It must be text, at most
1 MiB (the rest is cut, and the model told so). A stdin that gives nothing within
--stdin-timeout (5s) is left unread, with a note; --no-stdin never reads it.

A task is @agent or @agent:model followed by text; all mentions in one argument share its
text, and each argument is its own task. Without a mention the default agent (claude) runs.
Several tasks run at the same time: each line is printed under its agent's name, and at a
terminal a status line shows each running agent (--quiet hides it and the usage summary).

Agents may consult each other: codecrew:query_agent is among every agent's tools (e.g.
\"@claude review src/, and ask @gemini for a second opinion\"), two levels deep at most.
At the end, a line per agent on stderr says what it used (tokens, cost where the CLI
reports one); --output json has it as `usage`.

Agents: claude, gemini, codex, copilot, opencode, qwen and llm run those CLIs with your
login or API key (@opencode:anthropic/claude-haiku-4-5 names opencode's provider/model).
Copilot without a GitHub login, against a local model (bring your own key):
  COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:11434/v1 \\
  COPILOT_PROVIDER_TYPE=openai COPILOT_MODEL=qwen3 codecrew query \"@copilot explain src/\"
README.md says how to run opencode, Qwen Code and llm offline against a local model.";

const RUN_EXAMPLES_EXECUTE: &str = "\
Examples:
  codecrew execute \"@claude add a --verbose flag to src/main.rs\"
  codecrew execute --yes \"@codex:gpt-5.5 fix the failing test\"
  codecrew execute --thread login \"@claude now add a test for it\"

Tasks and mentions work as in `codecrew query`. codecrew:execute_agent (have another agent
do a task) asks first unless `execute_agent` is allowed in [permissions].";

const CHAT_HELP: &str = "\
Examples:
  codecrew chat
  codecrew chat --thread review          # go on with the thread `review`
  codecrew chat --mode execute           # agents may write and run commands (asked first)

In the chat, each line is a task: `@claude what does src/main.rs do?`. A line without a
mention goes to the agents last addressed. Each agent keeps its CLI running between lines,
so a follow-up starts nothing, and goes on with its own conversation. A line that ends
with `\\` (or Alt-Enter) goes on to the next; Tab completes @agents and /commands.

Commands: /mode [query|execute], /agents, /thread, /usage, /new, /help, /exit.
Ctrl-C stops the running answer; at the prompt, a second Ctrl-C or Ctrl-D on an empty line
ends the chat. The chat is a thread (.codecrew/threads/): `codecrew threads show NAME`
shows it, `--thread NAME` goes on with it. History: ~/.local/state/codecrew/chat_history.
Without a terminal, use `codecrew query`.";

const THREADS_HELP: &str = "\
Examples:
  codecrew query --thread login \"@claude:haiku where is the login form handled?\"
  codecrew execute --thread login \"@claude fix the bug you found\"
  codecrew threads list
  codecrew threads show login
  codecrew threads adopt login
  codecrew threads rm login

A thread is kept in .codecrew/threads/<name>.json in the workspace. Each agent continues
its own part of it: Claude, Gemini and Codex resume their CLI session, other CLIs get the
earlier tasks and answers at the start of the prompt.

codecrew seals each thread it writes with a key of yours (~/.local/state/codecrew/
thread-key). A thread without your seal (one that came with a checkout, or written before
codecrew sealed threads) is not continued unless you trust the project: read it with
`threads show`, then `threads adopt NAME` if you want to go on with it.";

/// `codecrew chat`.
#[derive(Debug, Args)]
pub struct ChatArgs {
    /// Go on with the thread NAME (else a new thread, named for the time it starts)
    #[arg(long, value_name = "NAME", value_parser = parse_thread_name)]
    pub thread: Option<ThreadName>,
    /// What the agents may do at the start (/mode changes it)
    #[arg(long, value_enum, default_value_t = ModeArg::Query)]
    pub mode: ModeArg,
    /// Time one CLI turn may take before its process group is killed, e.g. 90s, 10m
    /// [default: 10m]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<std::time::Duration>,
}

/// Flags shared by `query` and `execute`.
#[derive(Debug, Args)]
pub struct RunArgs {
    // The help text's `[:model]` is no link (clap shows this text as it is).
    #[allow(rustdoc::broken_intra_doc_links)]
    /// Tasks: "@agent[:model] text"; each argument is one task. `-`, or none with a
    /// pipe on stdin: the task is read from stdin
    #[arg(value_name = "TASK")]
    pub tasks: Vec<String>,
    /// Never read stdin, even when it is a pipe
    #[arg(long)]
    pub no_stdin: bool,
    /// How long a piped stdin may give nothing before codecrew goes on without it,
    /// e.g. 30s, 10m (for a slow command before the pipe) [default: 5s]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub stdin_timeout: Option<std::time::Duration>,
    /// How to print the answers
    #[arg(long, value_enum, default_value_t = RunOutput::Text)]
    pub output: RunOutput,
    /// Print only the final answer (text output)
    #[arg(long)]
    pub raw: bool,
    /// Print no status on stderr: no live status lines, no usage summary at the end
    /// (errors are still printed)
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Model turns per task before codecrew stops; 1 returns the tool results themselves
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    pub max_turns: Option<u32>,
    /// Time one CLI turn may take before its process group is killed (exit 124),
    /// e.g. 90s, 10m [default: 10m]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<std::time::Duration>,
    /// Continue the conversation NAME across invocations (created by its first run): each
    /// agent resumes its CLI session, or gets the earlier tasks and answers. Names: letters,
    /// digits, '-', '_', '.', at most 64, not starting with '.'; see `codecrew threads`
    #[arg(long, value_name = "NAME", value_parser = parse_thread_name)]
    pub thread: Option<ThreadName>,
    /// Go on from the last run in this workspace that an agent answered: each agent
    /// resumes its CLI session there (a task with no mention goes to that run's agents)
    #[arg(short = 'c', long = "continue", conflicts_with_all = ["thread", "resume"])]
    pub continue_last: bool,
    /// Go on from the run ID (any unambiguous prefix, as `codecrew logs` shows it), as
    /// -c does from the last one
    #[arg(long, value_name = "ID", conflicts_with = "thread")]
    pub resume: Option<String>,
    /// The shape every answer must have, for scripts: a JSON Schema, @FILE, or llm's
    /// compact form ('file, risk int, why: a sentence'; types str int float bool). Text
    /// output is then the JSON document alone (one JSON line per agent with several);
    /// an answer that never fits exits 65. `codecrew schema` shows what one means
    #[arg(long, value_name = "SCHEMA", conflicts_with = "schema_multi")]
    pub schema: Option<String>,
    /// As --schema, for a list of such objects: the answer is {"items": [...]}
    #[arg(long, value_name = "SCHEMA")]
    pub schema_multi: Option<String>,
    /// How often an answer that does not fit the schema is asked again, in the same
    /// session with what was wrong [default: 2]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=10))]
    pub schema_retries: Option<u32>,
    #[command(flatten)]
    pub isolation: IsolationArgs,
    #[command(flatten)]
    pub background: DetachArgs,
}

impl RunArgs {
    /// The shape `--schema` or `--schema-multi` gives the answers (an `@file` read from
    /// the current directory), or why it is refused (a usage error, before any CLI
    /// starts).
    pub fn answer_shape(
        &self,
    ) -> Result<Option<codecrew_core::schema::AnswerShape>, codecrew_core::schema::SchemaError>
    {
        use codecrew_core::schema::{AnswerSchema, AnswerShape, DEFAULT_RETRIES};
        let (argument, multi) = match (&self.schema, &self.schema_multi) {
            (Some(schema), _) => (schema, false),
            (None, Some(schema)) => (schema, true),
            (None, None) => return Ok(None),
        };
        let dir = std::env::current_dir().unwrap_or_default();
        let schema = AnswerSchema::from_argument(argument, multi, &dir)?;
        Ok(Some(AnswerShape {
            schema: std::sync::Arc::new(schema),
            retries: self.schema_retries.unwrap_or(DEFAULT_RETRIES),
        }))
    }

    /// The earlier run the flags go on from, if any.
    pub fn resume(&self) -> Option<codecrew_core::engine::Resume> {
        use codecrew_core::engine::Resume;
        match (&self.resume, self.continue_last) {
            (Some(id), _) => Some(Resume::Run(id.clone())),
            (None, true) => Some(Resume::Last),
            (None, false) => None,
        }
    }
}

fn parse_thread_name(text: &str) -> Result<ThreadName, String> {
    ThreadName::parse(text).map_err(|error| error.to_string())
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// A JSON Schema, @FILE, or llm's compact form ('name, risk int, why: a sentence')
    #[arg(value_name = "SCHEMA")]
    pub schema: String,
    /// As --schema-multi: a list of such objects, {"items": [...]}
    #[arg(long)]
    pub multi: bool,
}

#[derive(Debug, Args)]
pub struct PromptArgs {
    /// Which tools the prompt offers: query offers read-only tools, execute all of them
    #[arg(long, value_enum, default_value_t = ModeArg::Query)]
    pub mode: ModeArg,
    /// Each tool on one line, for a model with a small context window (an agent's
    /// `prompt = "compact"`)
    #[arg(long)]
    pub compact: bool,
    /// The task for the model
    #[arg(required = true, value_name = "MESSAGE")]
    pub message: Vec<String>,
}

#[derive(Debug, Args)]
pub struct InterceptArgs {
    /// The output format on stdin (every decoder codecrew has; auto detects it from the
    /// first line)
    #[arg(long, value_name = "FORMAT", value_parser = format_parser(), default_value = "auto")]
    pub from: Format,
    /// Show the calls found without running them, each checked as the executor would
    /// before running it (its schema, the mode): which would be refused, and why
    #[arg(long)]
    pub dry_run: bool,
    /// How to print what was found and what the calls returned
    #[arg(long, value_enum, default_value_t = OutputArg::Text)]
    pub output: OutputArg,
    /// Which tools may run: query allows read-only tools only
    #[arg(long, value_enum, default_value_t = ModeArg::Query)]
    pub mode: ModeArg,
}

#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// List the tools a mode offers
    List {
        #[arg(long, value_enum, default_value_t = ModeArg::Execute)]
        mode: ModeArg,
        #[arg(long, value_enum, default_value_t = OutputArg::Text)]
        output: OutputArg,
    },
    /// Show a tool's description and input schema
    Show {
        /// The tool's name, with or without the codecrew: prefix
        name: String,
    },
    /// Call a tool directly and print its result as JSON (exit 0 when ok, 1 otherwise)
    #[command(
        after_help = "Example:\n  codecrew tools call read_file --input '{\"path\":\"README.md\",\"limit\":20}'"
    )]
    Call {
        /// The tool's name, with or without the codecrew: prefix
        name: String,
        /// The input as a JSON object
        #[arg(long, default_value = "{}")]
        input: String,
        #[arg(long, value_enum, default_value_t = ModeArg::Query)]
        mode: ModeArg,
    },
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Overwrite an existing codecrew.toml
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// List the agents (id, provider, model, default, where defined) and the config files read
    List {
        #[arg(long, value_enum, default_value_t = OutputArg::Text)]
        output: OutputArg,
    },
}

#[derive(Debug, Subcommand)]
pub enum ThreadsCommand {
    /// List the threads: name, agents, exchanges, last update
    List {
        #[arg(long, value_enum, default_value_t = OutputArg::Text)]
        output: OutputArg,
    },
    /// Show a thread's exchanges, oldest first
    Show {
        /// The thread's name
        #[arg(value_parser = parse_thread_name)]
        name: ThreadName,
        #[arg(long, value_enum, default_value_t = OutputArg::Text)]
        output: OutputArg,
    },
    /// Take a thread as yours, so that `--thread` continues it: for a thread written
    /// before codecrew sealed threads, or one that came with the checkout and that you
    /// have read (`threads show`). Its agents then resume the sessions and models it names
    Adopt {
        /// The thread's name
        #[arg(value_parser = parse_thread_name)]
        name: ThreadName,
    },
    /// Remove a thread (its CLI sessions stay with the CLIs)
    Rm {
        /// The thread's name
        #[arg(value_parser = parse_thread_name)]
        name: ThreadName,
    },
}

const DOCTOR_HELP: &str = "\
Examples:
  codecrew doctor
  codecrew doctor --live              # one short question to every agent whose CLI is installed
  codecrew doctor --live claude codex
  codecrew doctor --output json

Exit code 0 when everything checked works, 1 when something does not (an invalid config, an
MCP server or external tool that cannot start, the default agent's CLI missing, a failed
live check). A CLI that is not installed is only reported, unless an agent that --live
checks or the default agent needs it.";

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Also run each agent once with a one-word question (uses the model, may cost a little)
    #[arg(long)]
    pub live: bool,
    /// The agents --live checks (default: every agent whose CLI is installed)
    #[arg(value_name = "AGENT", requires = "live")]
    pub agents: Vec<String>,
    #[arg(long, value_enum, default_value_t = OutputArg::Text)]
    pub output: OutputArg,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write one page per command (codecrew.1, codecrew-query.1, ...) into DIR instead
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    Query,
    Execute,
}

impl From<ModeArg> for Mode {
    fn from(mode: ModeArg) -> Self {
        match mode {
            ModeArg::Query => Mode::Query,
            ModeArg::Execute => Mode::Execute,
        }
    }
}

/// The values of `--from`: the decoders' own names ([`Format::ALL`]), so a decoder added to
/// the engine is a value here without another list to keep.
fn format_parser() -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Format::ALL.map(Format::name))
        .try_map(|name| name.parse::<Format>())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputArg {
    Text,
    Json,
}
