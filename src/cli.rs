//! The command line: every command, flag and help text. The built-in `help` tool renders
//! its answers from these same definitions, so the model and the user read one text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::decode::Format;
use crate::tool::Mode;

const AFTER_HELP: &str = "\
Examples:
  codecrew query \"@claude:haiku How do I use codecrew?\"
  codecrew execute \"@claude add a --verbose flag to the CLI\"
  codecrew prompt \"Summarise README.md\" | some-llm-cli | codecrew intercept

Exit codes: 0 ok, 1 agent or tool failure, 2 usage or config error,
3 CLI not installed, 124 timeout, 130 interrupted.";

/// codecrew gives LLM command-line agents (Claude Code, Gemini CLI, Codex, Copilot, or any
/// CLI you declare) tools they do not have natively: it offers them in the prompt, catches
/// the calls the model writes as JSON, runs them and feeds the results back.
#[derive(Debug, Parser)]
#[command(name = "codecrew", version, after_help = AFTER_HELP, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// The workspace root: file tools never leave it [default: the current directory]
    #[arg(long, global = true, value_name = "DIR")]
    pub workdir: Option<PathBuf>,

    /// More logging on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides it
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Allow tool calls that would ask for approval; denied calls stay denied
    #[arg(long, global = true)]
    pub yes: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the tool-augmented prompt for a message, to feed any LLM CLI
    #[command(
        after_help = "Example:\n  codecrew prompt \"List the TODOs in src/\" | llm | codecrew intercept"
    )]
    Prompt(PromptArgs),
    /// Read an LLM CLI's output on stdin, find the codecrew tool calls in it and run them
    #[command(after_help = "Examples:\n  \
        claude -p \"$(codecrew prompt 'Read README.md')\" --output-format stream-json --verbose \\\n    \
        | codecrew intercept --from claude\n  \
        some-llm-cli < prompt.txt | codecrew intercept --dry-run --output json")]
    Intercept(InterceptArgs),
    /// List, inspect and call codecrew's tools directly
    #[command(subcommand)]
    Tools(ToolsCommand),
}

#[derive(Debug, Args)]
pub struct PromptArgs {
    /// Which tools the prompt offers: query offers read-only tools, execute all of them
    #[arg(long, value_enum, default_value_t = ModeArg::Query)]
    pub mode: ModeArg,
    /// The task for the model
    #[arg(required = true, value_name = "MESSAGE")]
    pub message: Vec<String>,
}

#[derive(Debug, Args)]
pub struct InterceptArgs {
    /// The output format on stdin
    #[arg(long, value_enum, default_value_t = FromArg::Auto)]
    pub from: FromArg,
    /// Show the calls found without running them
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FromArg {
    Auto,
    Text,
    Claude,
    Gemini,
    Codex,
}

impl From<FromArg> for Format {
    fn from(from: FromArg) -> Self {
        match from {
            FromArg::Auto => Format::Auto,
            FromArg::Text => Format::Text,
            FromArg::Claude => Format::Claude,
            FromArg::Gemini => Format::Gemini,
            FromArg::Codex => Format::Codex,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputArg {
    Text,
    Json,
}

/// The long help of the whole CLI, or of one command (`None` when there is no such command).
pub fn help_text(command: Option<&str>) -> Option<String> {
    use clap::CommandFactory;
    let mut root = Cli::command();
    match command {
        None => Some(root.render_long_help().to_string()),
        Some(name) => {
            let mut path = name.split_whitespace();
            let first = path.next()?;
            let mut current = root.find_subcommand_mut(first)?.clone();
            for next in path {
                current = current.find_subcommand_mut(next)?.clone();
            }
            let bin = format!("codecrew {name}");
            Some(current.bin_name(bin).render_long_help().to_string())
        }
    }
}

/// The names of the top-level commands.
pub fn command_names() -> Vec<String> {
    use clap::CommandFactory;
    Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect()
}
