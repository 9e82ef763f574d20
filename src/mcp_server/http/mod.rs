//! `codecrew mcp --http`: the same server as on stdio, over MCP's Streamable HTTP
//! transport (one endpoint, `/mcp`, for POST, GET and DELETE; answers as JSON-RPC over
//! SSE; `Mcp-Session-Id` sessions), so that clients that connect to a running server (IDE
//! and desktop connectors, agents in other processes or containers, several clients at
//! once) can use the crew.
//!
//! A port is a door anything on the machine can knock on, including a web page in the
//! user's browser. So the server listens on loopback unless told otherwise, every request
//! but `/health` needs the bearer token, a browser's `Origin` is refused unless allowed,
//! and bodies, sessions, connections and agent runs are bounded (`gate`,
//! [`super::limits`]); at the session cap a new client takes the place of the session
//! idle longest (`occupancy`), so clients that leave without a word lock nobody out. rmcp's service checks the `Host` header (DNS rebinding) and the
//! protocol; hyper, on a connection of its own per client, reads the requests: a client
//! that stays silent or floods holds only its own connection.
//!
//! On SIGTERM (or Ctrl-C) the server stops accepting, refuses new requests, lets the calls
//! in flight finish within the grace period, then cancels what is left (an agent run's
//! CLI group is killed and what it held is put back) and waits for that before it exits.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::McpServer;
use super::limits::InFlight;

mod disconnect;
mod gate;
mod occupancy;
pub mod token;

pub use disconnect::abandoned;
pub use gate::{ENDPOINT, HEALTH};

/// The environment variable of the token; never passed on to the CLIs codecrew starts.
pub use codecrew_config::MCP_TOKEN_ENV as TOKEN_ENV;

/// Connections served at once: far above any set of real clients, far below the process's
/// descriptors.
const MAX_CONNECTIONS: usize = 512;
/// How long a client may take to send a request's headers.
const HEADER_DEADLINE: Duration = Duration::from_secs(10);
/// How long cancelled calls get to stop their CLIs and put back what they held.
const CLEANUP: Duration = Duration::from_secs(10);
/// How long open connections get to close once everything has stopped.
const CLOSE: Duration = Duration::from_secs(2);

/// How the HTTP server is set up (`codecrew mcp --http` and its flags).
#[derive(Debug)]
pub struct HttpSettings {
    pub addr: SocketAddr,
    /// Whether a non-loopback address may be used.
    pub allow_remote: bool,
    pub token: token::Token,
    /// Where a client finds the token, for the message of a refused request.
    pub token_hint: String,
    /// Browser origins allowed to call, as browsers send them (`http://localhost:6274`).
    pub allowed_origins: Vec<String>,
    pub max_body: usize,
    pub max_sessions: usize,
    /// How long calls in flight may take to finish after SIGTERM.
    pub grace: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(
        "{0} is not a loopback address: other machines could connect, and the token would \
         travel unencrypted. Listen on 127.0.0.1 (the default), or add --allow-remote and \
         put the server behind TLS"
    )]
    NotLoopback(SocketAddr),
    #[error("cannot listen on {addr}: {source}{}", port_hint(source))]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

fn port_hint(error: &std::io::Error) -> &'static str {
    if error.kind() == std::io::ErrorKind::AddrInUse {
        " (another program has that port; choose another with --http 127.0.0.1:<port>)"
    } else {
        ""
    }
}

/// A server bound to its address, not yet serving.
pub struct HttpServer {
    listener: TcpListener,
    settings: HttpSettings,
}

impl HttpServer {
    pub async fn bind(settings: HttpSettings) -> Result<Self, HttpError> {
        if !settings.addr.ip().is_loopback() && !settings.allow_remote {
            return Err(HttpError::NotLoopback(settings.addr));
        }
        let listener =
            TcpListener::bind(settings.addr)
                .await
                .map_err(|source| HttpError::Bind {
                    addr: settings.addr,
                    source,
                })?;
        Ok(HttpServer { listener, settings })
    }

    /// The address it listens on (its port chosen by the OS when asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().unwrap_or(self.settings.addr)
    }

    /// Serves `server` until `stop` resolves, then drains (see the module's comment).
    pub async fn serve(
        self,
        server: McpServer,
        stop: impl Future<Output = ()>,
        hurry: CancellationToken,
    ) {
        let HttpServer { listener, settings } = self;
        let in_flight = server.in_flight();
        let stopping = CancellationToken::new();
        // No SSE "priming" event (an empty `data:` line, for resumption, which needs an
        // event store this server does not keep): Gemini CLI 0.61 parses it as JSON, fails,
        // and drops the server with its tools.
        let mut config = StreamableHttpServerConfig::default()
            .with_sse_retry(None)
            .with_cancellation_token(stopping.clone())
            .with_max_request_body_bytes(settings.max_body)
            .with_allowed_origins(settings.allowed_origins.clone())
            .enforce_origin_validation();
        if settings.allow_remote {
            // Clients name the machine as they reach it; the token and the Origin check
            // stand in for the Host check here.
            config = config.disable_allowed_hosts();
        }
        let mut manager = LocalSessionManager::default();
        // The sessions' request streams prime too, unless told not to.
        manager.session_config.sse_retry = None;
        let sessions = Arc::new(manager);
        let answers = Arc::new(InFlight::default());
        let mcp = StreamableHttpService::new(move || Ok(server.clone()), sessions.clone(), config);
        let gate = Arc::new(gate::Gate {
            token: settings.token,
            token_hint: settings.token_hint,
            origins: settings.allowed_origins,
            max_body: settings.max_body,
            max_sessions: settings.max_sessions,
            sessions,
            occupancy: Arc::default(),
            opening: tokio::sync::Mutex::new(()),
            draining: AtomicBool::new(false),
            answers: answers.clone(),
            mcp,
        });
        let connections = Arc::new(Semaphore::new(MAX_CONNECTIONS));
        let graceful = GracefulShutdown::new();
        tokio::pin!(stop);
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let (stream, peer) = match accepted {
                        Ok(accepted) => accepted,
                        Err(error) => {
                            // Out of descriptors, most often: wait for connections to close.
                            tracing::warn!("cannot accept a connection: {error}");
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            continue;
                        }
                    };
                    // Small JSON-RPC messages, each awaited by its client: send them now.
                    if let Err(error) = stream.set_nodelay(true) {
                        tracing::debug!(%peer, "cannot set TCP_NODELAY: {error}");
                    }
                    let Ok(permit) = connections.clone().try_acquire_owned() else {
                        tracing::warn!(%peer, "refused a connection: at the connection limit");
                        continue;
                    };
                    let gate = gate.clone();
                    let connection = http1::Builder::new()
                        .timer(TokioTimer::new())
                        .header_read_timeout(HEADER_DEADLINE)
                        .serve_connection(
                            TokioIo::new(stream),
                            service_fn(move |request| gate.clone().handle(request, peer)),
                        );
                    let connection = graceful.watch(connection);
                    tokio::spawn(async move {
                        if let Err(error) = connection.await {
                            tracing::debug!(%peer, "connection ended: {error}");
                        }
                        drop(permit);
                    });
                }
                () = &mut stop => break,
            }
        }
        drop(listener);
        gate.drain();
        let pending = in_flight.count();
        if pending > 0 {
            crate::output::console::note(format!(
                "stopping: {pending} call(s) in flight get {}s to finish",
                settings.grace.as_secs()
            ));
        }
        // The calls finish, then their answers leave (ending the streams earlier would
        // lose an answer already given).
        let drained = async {
            in_flight.idle().await;
            answers.idle().await;
        };
        let finished = tokio::select! {
            finished = tokio::time::timeout(settings.grace, drained) => finished.is_ok(),
            () = hurry.cancelled() => false,
        };
        if !finished && in_flight.count() > 0 {
            crate::output::console::note(format!(
                "stopping the {} call(s) still running",
                in_flight.count()
            ));
        }
        // Ends every session and SSE stream, and cancels the calls still running.
        stopping.cancel();
        if tokio::time::timeout(CLEANUP, in_flight.idle())
            .await
            .is_err()
        {
            tracing::warn!(
                left = in_flight.count(),
                "calls did not stop in time; exiting anyway"
            );
        }
        if tokio::time::timeout(CLOSE, graceful.shutdown())
            .await
            .is_err()
        {
            tracing::debug!("connections still open at exit");
        }
    }
}
