//! The `codecrew` binary: parses the command line, sets up logging and the runtime, and
//! hands over to one command. Exit codes are documented in `codecrew --help`.

mod commands;

use std::process::ExitCode;

use clap::Parser;
use codecrew::cli::{Cli, Command};
use codecrew::permission::process;

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("codecrew: cannot start the async runtime: {error}");
            return ExitCode::from(1);
        }
    };
    // Orphaned tool processes come back to codecrew, and are killed when it exits.
    process::become_subreaper();
    codecrew::permission::sandbox::protect_self();
    let result = runtime.block_on(async {
        tokio::select! {
            result = run(cli) => result,
            code = interrupted() => Ok(ExitCode::from(code)),
        }
    });
    drop(runtime);
    process::kill_all();
    match result {
        Ok(code) => code,
        Err(error) => {
            if is_broken_pipe(&error) {
                // The reader went away (`codecrew ... | head`): not an error.
                return ExitCode::SUCCESS;
            }
            eprintln!("codecrew: {error:#}");
            ExitCode::from(commands::EXIT_USAGE)
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let workdir = commands::workspace(cli.workdir.as_deref())?;
    match cli.command {
        Command::Prompt(args) => commands::prompt::run(args),
        Command::Intercept(args) => commands::intercept::run(args, workdir, cli.yes).await,
        Command::Tools(command) => commands::tools::run(command, workdir, cli.yes).await,
    }
}

/// Resolves on Ctrl-C, SIGTERM or SIGHUP with the exit code to use (130, 143, 129); the
/// caller then drops the run (which kills the running commands' groups) and sweeps up
/// whatever is left.
async fn interrupted() -> u8 {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        return std::future::pending().await;
    };
    let code = tokio::select! {
        _ = int.recv() => 130,
        _ = term.recv() => 143,
        _ = hup.recv() => 129,
    };
    eprintln!("codecrew: interrupted; stopping the commands it started");
    code
}

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
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .init();
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
