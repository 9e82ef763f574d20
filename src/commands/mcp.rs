//! `codecrew mcp`: codecrew's tools (and other agents) served over MCP, on stdin/stdout or,
//! with `--http`, over the Streamable HTTP transport.
//!
//! On stdio, stdout belongs to the protocol: this command prints nothing there itself, and
//! logs and warnings go to stderr. Nobody can be asked on a terminal either way (stdin is
//! the transport, or the clients are elsewhere), so every executor here gets the
//! non-interactive asker.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use codecrew::cli::McpArgs;
use codecrew::mcp_server::http::token::{self, Source};
use codecrew::mcp_server::http::{ENDPOINT, HEALTH, HttpServer, HttpSettings, TOKEN_ENV};
use codecrew::mcp_server::limits::AgentLimits;
use codecrew::mcp_server::{Agents, McpServer};
use codecrew::output::console;
use codecrew_core::crew::{MAX_DEPTH, depth_from_env};
use codecrew_core::engine::Limits;
use codecrew_policy::NonInteractive;
use codecrew_tools::{Mode, ToolCatalog};
use tokio_util::sync::CancellationToken;

pub async fn run(args: McpArgs, options: super::ToolOptions) -> anyhow::Result<ExitCode> {
    let mode = Mode::from(args.mode);
    // Nobody can be asked: stdin is the transport, or the clients are elsewhere. A
    // prompt could never be answered, so Ask always becomes a denial.
    let engine = options.engine()?.asking(Arc::new(NonInteractive));
    // Everything that can be refused is checked before a port is taken or a server started.
    let http = match args.http {
        Some(addr) => {
            let token =
                token::resolve(args.token.as_deref(), engine.config().mcp_token.as_deref())?;
            let settings = HttpSettings {
                addr,
                allow_remote: args.allow_remote,
                token: token.token,
                token_hint: token_hint(&token.source),
                allowed_origins: args.allow_origins.clone(),
                max_body: args.max_body,
                max_sessions: args.max_sessions as usize,
                grace: Duration::from_secs(args.grace),
            };
            let server = HttpServer::bind(settings).await?;
            Some((server, token.source))
        }
        None => None,
    };
    // Lives as long as the server: it owns the config's MCP servers.
    let stage = engine.stage(mode, Limits::default()).await;
    let catalog = Arc::new(ToolCatalog::for_mode(stage.tools(), mode)?);
    let executor = engine.executor_over(stage.tools().clone(), catalog, mode);
    // Recorded in the run store from the first call: one job per client.
    let recorded = Arc::new(engine.served_run(mode));
    let mut server = McpServer::new(Arc::new(executor)).recorded_in(recorded.clone());
    if !args.no_agents {
        let depth = depth_from_env();
        if depth >= MAX_DEPTH {
            tracing::info!(depth, "at the maximum delegation depth: no agent tools");
        }
        let limits = AgentLimits {
            running: args.max_agent_runs as usize,
            queued: args.agent_queue as usize,
        };
        server = server.with_agents(Agents::new(stage.crew().clone(), depth, limits));
    }
    let served = match http {
        Some((http, source)) => {
            announce(&http, mode, &source, args.allow_remote);
            let hurry = CancellationToken::new();
            server.serve_http(http, stop(hurry.clone()), hurry).await;
            Ok(())
        }
        None => {
            tracing::info!(mode = mode.name(), "serving MCP on stdin/stdout");
            server.serve_stdio().await
        }
    };
    // The config's MCP servers exit cleanly (dropping them would only signal them).
    stage.shutdown().await;
    recorded.finish(u8::from(served.is_err()));
    served?;
    Ok(ExitCode::SUCCESS)
}

/// What a client that was refused is told about the token.
fn token_hint(source: &Source) -> String {
    match source {
        Source::Given => format!("it is the server's --token or {TOKEN_ENV}"),
        Source::Config => "it is `[mcp_server] token` in the user's config file".to_owned(),
        Source::Stored(path) | Source::Generated(path, _) => {
            format!("the user can read it in {}", path.display())
        }
    }
}

/// The lines a person starting the server reads: where it listens, and the token when it
/// was just generated (the only time it is shown).
fn announce(http: &HttpServer, mode: Mode, source: &Source, remote: bool) {
    let addr = http.local_addr();
    console::note(format!(
        "serving MCP ({} mode) at http://{addr}{ENDPOINT} (health: http://{addr}{HEALTH}); \
         stop with Ctrl-C",
        mode.name()
    ));
    if remote && !addr.ip().is_loopback() {
        console::warn(format!(
            "listening on {addr}, which other machines may reach: anyone who has the token \
             can use this workspace, and plain HTTP shows it to the network"
        ));
    }
    match source {
        Source::Generated(path, shown) => console::note(format!(
            "clients must send `Authorization: Bearer {}` (shown only now; kept in {})",
            shown.text(),
            path.display()
        )),
        Source::Stored(path) => console::note(format!(
            "clients must send the bearer token kept in {}",
            path.display()
        )),
        Source::Given => console::note(format!(
            "clients must send the bearer token given by --token or {TOKEN_ENV}"
        )),
        Source::Config => console::note(
            "clients must send the bearer token of `[mcp_server] token` in the user config",
        ),
    }
}

/// Resolves on the first Ctrl-C or SIGTERM (SIGHUP too: the terminal went away); a second
/// one cancels `hurry`, which cuts the grace period short.
async fn stop(hurry: CancellationToken) {
    let code = super::interrupted_quietly().await;
    console::note(format!(
        "stopping (SIG{}): no new requests; a second signal stops the calls in flight now",
        match code {
            130 => "INT",
            143 => "TERM",
            _ => "HUP",
        }
    ));
    tokio::spawn(async move {
        super::interrupted_quietly().await;
        hurry.cancel();
    });
}
