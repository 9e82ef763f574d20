//! `codecrew acp`: the crew served to an editor over the Agent Client Protocol. stdout
//! carries the protocol alone: logs and warnings go to stderr.

use std::process::ExitCode;
use std::sync::Arc;

use codecrew::acp_server::{self, Settings};
use codecrew::cli::{AcpArgs, CliHelp};
use codecrew::run::engine::Limits;
use codecrew_tools::Mode;

pub async fn run(
    args: AcpArgs,
    options: super::ToolOptions,
    allow_home: bool,
) -> anyhow::Result<ExitCode> {
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
        },
    };
    tracing::info!("serving ACP on stdin/stdout");
    // A signal ends every session as the editor closing would: the CLIs stopped, what
    // they held put back, the runs ended.
    let code = acp_server::serve(settings, super::interrupted_quietly()).await;
    Ok(ExitCode::from(code))
}
