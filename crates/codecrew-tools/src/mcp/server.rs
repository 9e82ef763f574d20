//! One MCP server's life: started over stdio in the run's sandbox (its handshake and tool
//! list within `startup_timeout_secs`, its stderr drained into a tail to quote), the link
//! its tools call it through, started at once ([`start_one`]) or at the first call of one
//! of its tools ([`LazyServer`]), and closed with its process group.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{Peer, RoleClient, ServiceExt};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::process::Command;
use tokio::task::JoinHandle;

use crate::config::McpServerConfig;
use crate::{Mode, ToolContext, external};
use codecrew_policy::{process, sandbox};

/// How much of a server's stderr is kept, to quote when it fails.
pub(super) const STDERR_KEEP_BYTES: usize = 8 * 1024;
/// How much of that a message quotes.
pub(super) const STDERR_QUOTE_CHARS: usize = 1500;
/// The longest stderr line read at once (a line without newline cannot grow the memory).
pub(super) const STDERR_LINE_BYTES: u64 = 64 * 1024;
/// After a failed start, how long the server's stderr may take to reach its end (its
/// last words are usually the reason).
pub(super) const STDERR_SETTLE: Duration = Duration::from_millis(500);
/// How long a server whose pipe closed may take to be gone, to tell "exited" from
/// "closed its stdout".
pub(super) const EXIT_SETTLE: Duration = Duration::from_millis(500);
/// How long [`McpClients::shutdown`] lets a server exit after its stdin is closed; rmcp
/// then sends SIGTERM and at last SIGKILL, and codecrew kills what is left of the group.
pub(super) const SHUTDOWN_GRACE: Duration = Duration::from_secs(8);

/// Told the tool list of each server that lists its tools (the server's name, its list),
/// so that a later run can offer them without starting it (see `on_call`).
pub type ListingHook = Arc<dyn Fn(&str, &[rmcp::model::Tool]) + Send + Sync>;

/// A server offered from a kept tool list: started at the first call of one of its
/// tools, once; a failed start is the answer to every call.
pub(super) struct LazyServer {
    name: String,
    config: McpServerConfig,
    ctx: ToolContext,
    on_listing: Option<ListingHook>,
    link: tokio::sync::OnceCell<Result<Arc<ServerLink>, String>>,
    connection: Mutex<Option<Connection>>,
}

impl LazyServer {
    /// `name`'s server, to start at the first call of one of its tools.
    pub(super) fn new(
        name: &str,
        config: &McpServerConfig,
        ctx: &ToolContext,
        on_listing: Option<&ListingHook>,
    ) -> LazyServer {
        LazyServer {
            name: name.to_owned(),
            config: config.clone(),
            ctx: ctx.clone(),
            on_listing: on_listing.cloned(),
            link: tokio::sync::OnceCell::new(),
            connection: Mutex::new(None),
        }
    }

    /// How long a first call may wait for the server to start.
    pub(super) fn startup(&self) -> Duration {
        Duration::from_secs(self.config.startup_timeout_secs)
    }

    /// The running server, started now if this is the first call.
    pub(super) async fn link(&self) -> Result<Arc<ServerLink>, String> {
        let started = self
            .link
            .get_or_init(|| async {
                let started =
                    start_one(self.name.clone(), self.config.clone(), self.ctx.clone()).await?;
                tracing::info!(server = %self.name, "started the MCP server for a call of one of its tools");
                if let Some(hook) = &self.on_listing {
                    hook(&self.name, &started.tools);
                }
                *lock(&self.connection) = Some(started.connection);
                Ok(started.link)
            })
            .await;
        started.clone()
    }

    pub(super) fn take_connection(&self) -> Option<Connection> {
        lock(&self.connection).take()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A server that answered the handshake and listed its tools.
pub(super) struct Started {
    pub(super) connection: Connection,
    pub(super) link: Arc<ServerLink>,
    pub(super) tools: Vec<rmcp::model::Tool>,
}

/// What a tool needs to reach its server.
pub(super) struct ServerLink {
    pub(super) peer: Peer<RoleClient>,
    pub(super) stderr: Arc<StderrTail>,
}

/// One running server: the connection and its process group.
pub(super) struct Connection {
    pub(super) name: String,
    service: Option<RunningService<RoleClient, ClientConfig>>,
    group: Option<i32>,
}

impl Connection {
    pub(super) async fn close(mut self) {
        if let Some(mut service) = self.service.take() {
            // Cancels the session; rmcp then closes the server's stdin, waits, sends
            // SIGTERM and at last SIGKILL to the server itself.
            let _ = service.close_with_timeout(SHUTDOWN_GRACE).await;
        }
        if let Some(pgid) = self.group.take() {
            // Whatever the server started is in its group.
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
            process::release_if_empty(pgid);
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // Not closed with `close`: dropping the service closes the connection in the
        // background, and SIGTERM makes sure the server does not wait for it.
        drop(self.service.take());
        if let Some(pgid) = self.group.take() {
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGTERM);
        }
    }
}

/// The client's side of the handshake: no roots, no sampling, no elicitation.
fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("codecrew", env!("CARGO_PKG_VERSION")),
    )
}

pub(super) async fn start_one(
    name: String,
    config: McpServerConfig,
    ctx: ToolContext,
) -> Result<Started, String> {
    let workspace = &ctx.workspace;
    let cwd = match &config.cwd {
        Some(dir) => workspace.join(dir),
        None => workspace.clone(),
    };
    if !cwd.is_dir() {
        return Err(format!(
            "its working directory {} does not exist; fix `cwd` of [mcp.{name}] in the \
             codecrew config",
            cwd.display()
        ));
    }
    let env = external::environment(&ctx.exec.pass_env, &config.env);
    let program = external::program(&config.command, workspace);
    let mut command = Command::new(&program);
    command
        .args(&config.args)
        .current_dir(&cwd)
        .env_clear()
        .envs(env);
    // The sandbox of the run's mode, as for external tools; built before the fork.
    let ruleset = if ctx.exec.sandbox {
        let writable = (ctx.mode == Mode::Execute).then_some(workspace.as_path());
        sandbox::ruleset(writable, config.network)
            .map_err(|error| format!("the OS sandbox could not be set up: {error}"))?
    } else {
        None
    };
    // A session and process group of its own (pgid = its pid), no terminal, confined.
    sandbox::confine(&mut command, ruleset);
    codecrew_policy::lifeline::die_with_codecrew(&mut command);
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| {
            format!(
                "cannot run {}: {error}; check `command` of [mcp.{name}] in the codecrew \
                 config (a program on the PATH, or a path relative to the workspace)",
                program.display()
            )
        })?;
    let pid = transport.id().and_then(|id| i32::try_from(id).ok());
    if let Some(pgid) = pid {
        process::register(pgid);
    }
    let tail = Arc::new(StderrTail::default());
    let drain: Option<JoinHandle<()>> =
        stderr.map(|pipe| tokio::spawn(drain_stderr(name.clone(), pipe, Arc::clone(&tail))));

    let startup = Duration::from_secs(config.startup_timeout_secs);
    let handshake = async {
        let service = match client_config().serve(transport).await {
            Ok(service) => service,
            Err(error) => return Err(handshake_error(&error, pid).await),
        };
        let tools = service
            .peer()
            .list_all_tools()
            .await
            .map_err(|error| format!("listing its tools failed: {error}"))?;
        Ok::<_, String>((service, tools))
    };
    let failure = match tokio::time::timeout(startup, handshake).await {
        Ok(Ok((service, tools))) => {
            let link = Arc::new(ServerLink {
                peer: service.peer().clone(),
                stderr: tail,
            });
            return Ok(Started {
                connection: Connection {
                    name,
                    service: Some(service),
                    group: pid,
                },
                link,
                tools,
            });
        }
        Ok(Err(reason)) => reason,
        Err(_) => format!(
            "it did not answer the MCP handshake and list its tools within {} s \
             (startup_timeout_secs of [mcp.{name}])",
            config.startup_timeout_secs
        ),
    };
    if let Some(pgid) = pid {
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    }
    if let Some(drain) = drain {
        let _ = tokio::time::timeout(STDERR_SETTLE, drain).await;
    }
    if let Some(pgid) = pid {
        process::release_if_empty(pgid);
    }
    Err(match tail.quote() {
        Some(stderr) => format!("{failure} (stderr: {stderr})"),
        None => format!("{failure} (no stderr)"),
    })
}

/// Why the handshake failed, in the user's terms.
async fn handshake_error(error: &ClientInitializeError, pid: Option<i32>) -> String {
    // A closed pipe either way (EOF on its stdout, EPIPE on its stdin) usually means the
    // server is exiting; its stderr, quoted after this, says why.
    let closed = matches!(
        error,
        ClientInitializeError::ConnectionClosed(_) | ClientInitializeError::TransportError { .. }
    );
    if closed && exits_soon(pid).await {
        return "it exited before the MCP handshake finished".to_owned();
    }
    match error {
        ClientInitializeError::ConnectionClosed(_) => {
            "it closed its stdout before the MCP handshake finished".to_owned()
        }
        other => format!("the MCP handshake failed: {other}"),
    }
}

/// Whether the process is gone, or goes within [`EXIT_SETTLE`] (the pipe closes a moment
/// before the process is).
async fn exits_soon(pid: Option<i32>) -> bool {
    let Some(pid) = pid else {
        return true;
    };
    let deadline = tokio::time::Instant::now() + EXIT_SETTLE;
    loop {
        if process::stat(pid).is_none_or(|stat| stat.zombie) {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The end of a server's stderr.
#[derive(Default)]
pub(super) struct StderrTail {
    kept: Mutex<Vec<u8>>,
}

impl StderrTail {
    fn push(&self, bytes: &[u8]) {
        if let Ok(mut kept) = self.kept.lock() {
            kept.extend_from_slice(bytes);
            let excess = kept.len().saturating_sub(STDERR_KEEP_BYTES);
            kept.drain(..excess);
        }
    }

    /// The last [`STDERR_QUOTE_CHARS`] characters, on one line; `None` when empty.
    pub(super) fn quote(&self) -> Option<String> {
        let kept = self.kept.lock().ok()?;
        let text = String::from_utf8_lossy(&kept);
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let text = lines.join(" | ");
        let chars = text.chars().count();
        Some(if chars > STDERR_QUOTE_CHARS {
            let end: String = text.chars().skip(chars - STDERR_QUOTE_CHARS).collect();
            format!("…{end}")
        } else {
            text
        })
    }
}

/// Reads a server's stderr to its end: each line to the log, the end kept for messages.
async fn drain_stderr(server: String, pipe: impl AsyncRead + Unpin, tail: Arc<StderrTail>) {
    let mut reader = BufReader::new(pipe);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader)
            .take(STDERR_LINE_BYTES)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                tracing::debug!(
                    target: "codecrew::mcp",
                    "mcp.{server} stderr: {}",
                    String::from_utf8_lossy(&line).trim_end()
                );
                tail.push(&line);
            }
        }
    }
}
