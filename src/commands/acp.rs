//! `codecrew acp`: the crew served to an editor over the Agent Client Protocol. stdout
//! carries the protocol alone: logs and warnings go to stderr. With `--sign-in AGENT`,
//! the agent's CLI sign-in instead, at the terminal an editor opened for it.

use std::process::ExitCode;
use std::sync::Arc;

use codecrew::acp_server::{self, Settings};
use codecrew::cli::{AcpArgs, CliHelp};
use codecrew::output::console;
use codecrew_agents::Provider;
use codecrew_core::engine::Limits;
use codecrew_tools::Mode;

use super::EXIT_USAGE;

pub async fn run(
    args: AcpArgs,
    options: super::ToolOptions,
    allow_home: bool,
) -> anyhow::Result<ExitCode> {
    if let Some(agent) = &args.sign_in {
        return sign_in(agent, &options.workspace).await;
    }
    let settings = Settings {
        yes: options.yes,
        audit: options.audit,
        log: options.log.clone(),
        help: Arc::new(CliHelp),
        mode: Mode::from(args.mode),
        allow_home,
        max_sessions: args.max_sessions as usize,
        limits: Limits {
            max_turns: None,
            turn_timeout: args.timeout,
            answer: None,
        },
        workspace: options.workspace.clone(),
    };
    tracing::info!("serving ACP on stdin/stdout");
    // A signal ends every session as the editor closing would: the CLIs stopped, what
    // they held put back, the runs ended.
    let code = acp_server::serve(settings, super::interrupted_quietly()).await;
    Ok(ExitCode::from(code))
}

/// Runs `agent`'s CLI sign-in on this terminal (stdin, stdout and stderr its own): the
/// CLI's exit code, which the editor reads as signed in (0) or not.
async fn sign_in(agent: &str, workspace: &std::path::Path) -> anyhow::Result<ExitCode> {
    let loaded = match codecrew_config::load(workspace) {
        Ok(loaded) => loaded,
        Err(error) => {
            console::error(error);
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    let Some(config) = loaded.config.agents.get(agent) else {
        console::error(format_args!(
            "no agent @{agent} in this workspace's config (`codecrew agents list` lists them)"
        ));
        return Ok(ExitCode::from(EXIT_USAGE));
    };
    let provider = Provider::new(agent, config.clone());
    let Some((program, args)) = provider.sign_in() else {
        console::error(format_args!(
            "@{agent}'s CLI ({}) has no sign-in codecrew knows: sign in as its documentation says",
            provider.kind().name()
        ));
        return Ok(ExitCode::from(EXIT_USAGE));
    };
    // The program as codecrew runs the CLI elsewhere: found on PATH before any folder
    // changes (a relative PATH entry never resolves inside a checkout).
    let Some(located) = codecrew_agents::locate(&provider) else {
        console::error(codecrew_agents::describe_missing(&provider));
        return Ok(ExitCode::from(3));
    };
    let words = std::iter::once(program.as_str())
        .chain(args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    console::line(&console::Text::plain(&format!(
        "codecrew: signing in to @{agent}: {words}"
    )));
    // The user's own CLI, run as they would run it on this terminal, outside any wall,
    // so never in the checkout: a CLI started in a folder reads what the folder ships
    // for it (Gemini CLI, started alone to sign in, would start the MCP servers a
    // checkout's `.gemini/settings.json` names). An empty folder of its own instead.
    let folder = tempfile::Builder::new()
        .prefix("codecrew-sign-in-")
        .tempdir()?;
    let status = tokio::process::Command::new(&located)
        .args(&args)
        .current_dir(folder.path())
        .status()
        .await;
    match status {
        Ok(status) => Ok(ExitCode::from(
            status
                .code()
                .and_then(|code| u8::try_from(code).ok())
                .unwrap_or(1),
        )),
        Err(error) => {
            console::error(format_args!(
                "cannot run {program}: {error}; {}",
                provider.install_hint()
            ));
            Ok(ExitCode::from(3))
        }
    }
}
