//! The `codecrew` binary: parses the command line, sets up logging and the runtime, and
//! hands over to one command. Exit codes are documented in `codecrew --help`.

// Everything printed passes through one door, `output::console` (std's stdout and stderr
// are banned in clippy.toml for the same reason).
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod commands;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use codecrew::cli::{CodecrewCommand, CommandLine};
use codecrew::output::color::{ColorChoice, Colors};
use codecrew::output::console;
use codecrew_core::engine::Engine;
use codecrew_policy::process;
use codecrew_tools::Mode;

fn main() -> ExitCode {
    // First, while codecrew is still single-threaded: API keys out of the memory that
    // `/proc/<codecrew>/environ` shows to the commands it runs.
    codecrew_policy::secrets::hide_initial_secrets();
    let args: Vec<OsString> = std::env::args_os().collect();
    if starts_processes(&args) {
        // The watchdog is forked now, while codecrew is one thread with an almost empty
        // heap: the pages it shares with codecrew, copied at codecrew's next write to
        // each, are few. Forked in the middle of a run it cost a plain answer 1.7 ms.
        codecrew_policy::lifeline::start_early();
    }
    let command_line = parse(&args);
    let colors = Colors::detect(command_line.global.color, console::terminals());
    console::init(colors);
    // The lower layers print nothing themselves: their notices come out here.
    codecrew_agents::notices::set_sink(|level, text| match level {
        codecrew_agents::notices::Level::Warning => console::warn(text),
        codecrew_agents::notices::Level::Note => console::note(text),
    });
    // A panic's message may quote what it was handling (a model's text): through the door.
    std::panic::set_hook(Box::new(|info| {
        let backtrace = std::backtrace::Backtrace::capture();
        let trace = match backtrace.status() {
            std::backtrace::BacktraceStatus::Captured => format!("\n{backtrace}"),
            _ => String::new(),
        };
        console::error(format_args!(
            "internal error, please report it: {info}{trace}"
        ));
    }));
    init_logging(command_line.global.verbose);
    tracing::debug!(
        stdout = colors.stdout.enabled(),
        stderr = colors.stderr.enabled(),
        "styled output"
    );
    // A run of query or execute is one conversation per agent, waiting on its CLI's
    // pipes: the main thread serves it alone (what blocks, a tool's file work or a
    // question at the terminal, goes to the blocking pool). A worker beside it cost a
    // plain answer 0.3 ms, a second one 0.3 ms more (docs/PERFORMANCE.md, issue 52). The
    // servers (mcp, acp) and chat, which serve several at once, keep two workers.
    let mut builder = match command_line.command {
        CodecrewCommand::Query(_) | CodecrewCommand::Execute(_) => {
            tokio::runtime::Builder::new_current_thread()
        }
        _ => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(2);
            builder
        }
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            console::error(format_args!("cannot start the async runtime: {error}"));
            return ExitCode::from(1);
        }
    };
    // Orphaned tool processes come back to codecrew, and are killed when it exits.
    process::become_subreaper();
    let handles_signals = match &command_line.command {
        CodecrewCommand::Query(_)
        | CodecrewCommand::Execute(_)
        | CodecrewCommand::Chat(_)
        | CodecrewCommand::Acp(_) => true,
        // Over HTTP, a signal drains the server (see `mcp_server::http`).
        CodecrewCommand::Mcp(args) => args.http.is_some(),
        // `result --wait` says that the run goes on; `kill`, interrupted while it waits
        // for a run to stop, has nothing of its own to stop.
        CodecrewCommand::Result(_) | CodecrewCommand::Kill(_) => true,
        _ => false,
    };
    codecrew_policy::sandbox::protect_self();
    let result = runtime.block_on(async {
        tokio::select! {
            result = run(command_line, colors) => result,
            // query, execute, chat and `mcp --http` stop their agents themselves. For the
            // others (`mcp` on stdio: its agents), what runs is killed and what the CLIs'
            // walls hold put back now, before the command is dropped half-way.
            code = commands::interrupted(), if !handles_signals => {
                Engine::stop_now(code);
                Ok(ExitCode::from(code))
            }
        }
    });
    // A blocking read nobody will finish (stdin, which `mcp` reads on a thread of the
    // runtime; a question at the terminal that nobody answers) cannot hold the exit.
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    Engine::finish();
    // Last: what is left of the exit is freeing codecrew's memory, which a helper does
    // after codecrew has ended.
    codecrew_policy::teardown::hand_off();
    match result {
        Ok(code) => code,
        Err(error) => {
            if is_broken_pipe(&error) {
                // The reader went away (`codecrew ... | head`): not an error.
                return ExitCode::SUCCESS;
            }
            console::error(format_args!("{error:#}"));
            ExitCode::from(commands::EXIT_USAGE)
        }
    }
}

/// The command line, with clap's help and errors styled as `--color` says (it is looked
/// up before parsing, since a usage error ends parsing early).
fn parse(args: &[OsString]) -> CommandLine {
    // A run against its own command's branch: the whole tree costs a plain answer 0.3 ms.
    if let Some(command_line) = codecrew::cli::parse_run(args) {
        return command_line;
    }
    let choice = ColorChoice::from_args(args).unwrap_or_default();
    let mut command = CommandLine::command().color(choice.into());
    let parsed = command
        .try_get_matches_from_mut(args)
        .and_then(|mut matches| CommandLine::from_arg_matches_mut(&mut matches))
        .map_err(|error| error.format(&mut command));
    match parsed {
        Ok(command_line) => {
            // The whole command tree (every subcommand's arguments) is not needed again,
            // and the exit frees it: freeing it here was 3 to 6 % of a plain answer's
            // instructions (docs/PERFORMANCE.md, issue 52).
            std::mem::forget(command);
            command_line
        }
        Err(error) => error.exit(),
    }
}

/// Whether the command line names a command that runs agents or tools, which start
/// processes (and so want the watchdog, [`codecrew_policy::lifeline`]): its first word
/// that is not an option or a global option's value. Read before clap parses it: a
/// wrong guess only moves the watchdog's fork to the first process started.
fn starts_processes(args: &[OsString]) -> bool {
    const STARTING: &[&str] = &[
        "query",
        "execute",
        "chat",
        "mcp",
        "acp",
        "intercept",
        "tools",
        "doctor",
    ];
    codecrew::cli::command_word(args).is_some_and(|word| STARTING.contains(&word))
}

async fn run(command_line: CommandLine, colors: Colors) -> anyhow::Result<ExitCode> {
    let workdir = commands::workspace(command_line.global.workdir.as_deref())?;
    codecrew::home::guard(
        &command_line.command,
        &workdir,
        command_line.global.allow_home,
    )?;
    let options = commands::ToolOptions {
        workspace: workdir.clone(),
        yes: command_line.global.yes,
        audit: command_line.global.audit,
        colors,
        log: codecrew_core::engine::LogOptions {
            command: match &command_line.command {
                CodecrewCommand::Execute(_) => "execute",
                CodecrewCommand::Chat(_) => "chat",
                CodecrewCommand::Mcp(_) => "mcp",
                CodecrewCommand::Acp(_) => "acp",
                _ => "query",
            },
            enabled: !command_line.global.no_log,
        },
    };
    if matches!(
        command_line.command,
        CodecrewCommand::Query(_)
            | CodecrewCommand::Execute(_)
            | CodecrewCommand::Chat(_)
            | CodecrewCommand::Mcp(_)
            | CodecrewCommand::Acp(_)
            | CodecrewCommand::Doctor(_)
    ) {
        // Before any CLI starts: what a killed codecrew held goes back first, so that no
        // CLI meets what a program in its wall left.
        Engine::recover_abandoned();
    }
    match command_line.command {
        CodecrewCommand::Query(args) => commands::run::run(args, Mode::Query, options).await,
        CodecrewCommand::Execute(args) => commands::run::run(args, Mode::Execute, options).await,
        CodecrewCommand::Chat(args) => commands::chat::run(args, options).await,
        CodecrewCommand::Prompt(args) => commands::prompt::run(args, &options).await,
        CodecrewCommand::Schema(args) => commands::schema::run(&args),
        CodecrewCommand::Intercept(args) => commands::intercept::run(args, options).await,
        CodecrewCommand::Tools(command) => commands::tools::run(command, options).await,
        CodecrewCommand::Mcp(args) => commands::mcp::run(args, options).await,
        CodecrewCommand::Acp(args) => {
            commands::acp::run(args, options, command_line.global.allow_home).await
        }
        CodecrewCommand::Init(args) => commands::init::run(&args, &workdir),
        CodecrewCommand::Agents(command) => commands::agents::run(&command, &workdir),
        CodecrewCommand::Threads(command) => commands::threads::run(&command, &workdir),
        CodecrewCommand::Logs(args) => commands::logs::run(&args, &workdir),
        CodecrewCommand::Ps(args) => commands::background::ps(&args),
        CodecrewCommand::Kill(args) => commands::background::kill(&args).await,
        CodecrewCommand::Result(args) => commands::background::result(&args).await,
        CodecrewCommand::Undo(args) => commands::undo::run(args, &workdir).await,
        CodecrewCommand::Doctor(args) => commands::doctor::run(args, &workdir).await,
        CodecrewCommand::Diff(args) => commands::worktrees::diff(&args, &workdir),
        CodecrewCommand::Apply(args) => commands::worktrees::apply(&args, &workdir),
        CodecrewCommand::Worktrees(args) => commands::worktrees::list_or_remove(&args, &workdir),
        CodecrewCommand::Completions(args) => commands::completions::run(&args),
        CodecrewCommand::Man(args) => commands::man::run(&args),
    }
}

/// Logs go to stderr through the console, inert (a log may quote a CLI's output): so
/// without tracing's own colours, which would be shown as text.
fn init_logging(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(console::LogWriter)
        .with_target(false)
        .without_time()
        .init();
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    use std::io::ErrorKind::BrokenPipe;
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .is_some_and(|json| json.io_error_kind() == Some(BrokenPipe))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<OsString> {
        std::iter::once("codecrew")
            .chain(line.split_whitespace())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn the_commands_that_run_agents_or_tools_are_told_from_the_others() {
        for line in [
            "query @claude:haiku hello",
            "-v execute --yes @claude fix it",
            "--workdir logs chat",
            "--color never mcp",
            "--color=never tools call read_file",
            "acp",
        ] {
            assert!(starts_processes(&words(line)), "{line}");
        }
        for line in [
            "",
            "--version",
            "logs search query",
            "--workdir query logs",
            "prompt hello",
            "ps",
        ] {
            assert!(!starts_processes(&words(line)), "{line}");
        }
    }
}
