//! The MCP client: starts the servers of `[mcp.<server>]` over stdio and offers each of
//! their tools as one [`Tool`], named `<server>__<tool>`.
//!
//! A server whose tool list an earlier run kept need not start with the run: [`on_call`]
//! offers its tools from that list and starts it, in the same way, at the first call of
//! one of them; a failed start is that call's error (`E_MCP_UNAVAILABLE`).
//!
//! Starting never fails the run. Every server starts concurrently and gets
//! `startup_timeout_secs` for the handshake and the (paginated) tool list; one that cannot
//! be run, exits, times out or does not speak MCP becomes a notice
//! (`mcp.files did not start: …`, quoting the end of its stderr) and the run goes on
//! without its tools.
//!
//! A server runs like the programs tools start: the scrubbed environment plus its `env`,
//! a session and process group of its own (registered, so it is killed when codecrew
//! exits), no terminal. Its stderr never reaches the user's terminal: each line goes to
//! the log at debug level (`-vv`) and the last few KiB are kept to quote when it fails.
//! It runs in the OS sandbox of the run's mode, as external tools do: on Linux with
//! Landlock it may read anything but write only in the workspace (execute mode) and
//! `/tmp`, and use the network only when its config says `network = true`. What its tools
//! may do is also governed per call by the permission policy.
//!
//! Names. A remote tool name keeps its ASCII letters, digits and `-`; any other
//! character becomes `_`, runs of `_` become one and `_` at either end is dropped, so
//! `get.weather` is offered as `<server>__get_weather` and the name never holds a second
//! `__`. A name left empty or longer than [`MAX_NAME_CHARS`], or one that clashes with an
//! earlier tool of the same server once sanitised, is left out with a notice. Calls use
//! the server's own name.
//!
//! Results. A call's MCP result becomes one JSON object (see [`shape`]): `text` (the text
//! parts joined), `content` (the other parts, binary data summarised, never inlined),
//! `structured` (`structuredContent`), and `truncated` + `note` when the result was cut
//! at [`MAX_OUTPUT_BYTES`]. `isError: true` is an `E_MCP_TOOL_ERROR` with the tool's text;
//! a server that went away is `E_MCP_UNAVAILABLE`.
//!
//! The tool list is read once: `notifications/tools/list_changed` does not change what a
//! running session offers. Servers that ask for user input (elicitation) or answer with
//! a long-running task get an `E_MCP_UNSUPPORTED` error.

use std::collections::{BTreeMap, HashMap};

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

use super::remote::offers;
pub use super::remote::{McpTool, sanitise};
pub use super::result::shape;
use crate::config::McpServerConfig;
use crate::{Mode, Tool, ToolContext, external};
use codecrew_policy::{process, sandbox};

/// The most text (and structured content) one call's result carries.
pub const MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// The longest tool name part (after `<server>__`) codecrew offers.
pub const MAX_NAME_CHARS: usize = 64;
/// The longest description offered to the model; servers may send pages of text.
pub const MAX_DESCRIPTION_CHARS: usize = 2000;
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
/// The longest error text of an MCP tool's result: a server's error is often the whole
/// explanation the model needs.
pub(super) const MAX_ERROR_CHARS: usize = 4000;
/// Extra time the executor grants beyond `timeout_secs`, which the tool enforces (and
/// reports, naming the server) first.
pub(super) const TIMEOUT_MARGIN: Duration = Duration::from_secs(5);

/// The running MCP servers of one run, their tools, and what went wrong starting them.
///
/// Dropping it closes each connection (rmcp then closes the server's stdin) and sends
/// SIGTERM to each server's process group (a server started at a call, once the last of
/// its tools is dropped too); [`McpClients::shutdown`] waits for the servers
/// to exit instead. Either way codecrew's exit sweep kills whatever is left.
#[derive(Default)]
pub struct McpClients {
    connections: Vec<Connection>,
    tools: Vec<Arc<dyn Tool>>,
    notices: Vec<String>,
    /// What each server that started listed, as it listed it.
    listings: BTreeMap<String, Vec<rmcp::model::Tool>>,
    /// The servers that start at the first call of one of their tools.
    lazy: Vec<Arc<LazyServer>>,
}

impl std::fmt::Debug for McpClients {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClients")
            .field(
                "servers",
                &self.connections.iter().map(|c| &c.name).collect::<Vec<_>>(),
            )
            .field(
                "tools",
                &self.tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
            )
            .field("notices", &self.notices)
            .finish()
    }
}

impl McpClients {
    /// The tools of every server that started, in server then tool order.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }

    /// What the user should know: servers that did not start, tools left out.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The names of the servers that started with these clients (not those started
    /// later, at a call).
    pub fn servers(&self) -> impl Iterator<Item = &str> {
        self.connections.iter().map(|c| c.name.as_str())
    }

    /// The tool list of each server that started with these clients, as the server sent
    /// it: what [`on_call`] offers again in a later run without starting the server.
    pub fn listings(&self) -> &BTreeMap<String, Vec<rmcp::model::Tool>> {
        &self.listings
    }

    /// Adds `other`'s servers, tools and notices to these.
    pub fn merge(&mut self, mut other: McpClients) {
        self.connections.append(&mut other.connections);
        self.tools.append(&mut other.tools);
        self.notices.append(&mut other.notices);
        self.listings.append(&mut other.listings);
        self.lazy.append(&mut other.lazy);
    }

    /// Closes every connection and waits (a few seconds at most) for the servers to exit;
    /// whatever is left of their process groups is then killed.
    pub async fn shutdown(mut self) {
        let mut closing = tokio::task::JoinSet::new();
        let started_at_a_call = self
            .lazy
            .iter()
            .filter_map(|server| server.take_connection());
        for connection in std::mem::take(&mut self.connections)
            .into_iter()
            .chain(started_at_a_call.collect::<Vec<_>>())
        {
            closing.spawn(connection.close());
        }
        while closing.join_next().await.is_some() {}
    }
}

/// Starts every server of `servers` concurrently; see the module doc. The run's `ctx`
/// gives the workspace (the base of relative `cwd`s and commands), the variables the
/// scrub keeps, the mode and whether the OS sandbox is on.
pub async fn start(servers: &BTreeMap<String, McpServerConfig>, ctx: &ToolContext) -> McpClients {
    let mut starting = tokio::task::JoinSet::new();
    let mut names = HashMap::new();
    for (name, config) in servers {
        let task = starting.spawn(start_one(name.clone(), config.clone(), ctx.clone()));
        names.insert(task.id(), name.clone());
    }
    let mut outcomes = BTreeMap::new();
    while let Some(joined) = starting.join_next_with_id().await {
        let (id, outcome) = match joined {
            Ok((id, outcome)) => (id, outcome),
            Err(error) => (
                error.id(),
                Err(format!("its start-up task failed ({error})")),
            ),
        };
        if let Some(name) = names.remove(&id) {
            outcomes.insert(name, outcome);
        }
    }
    let mut clients = McpClients::default();
    for (name, outcome) in outcomes {
        match outcome {
            Ok(started) => {
                let (offers, notices) = offers(&name, &servers[&name], &started.tools);
                for offer in offers {
                    let tool = McpTool::connected(offer, Arc::clone(&started.link));
                    clients.tools.push(Arc::new(tool));
                }
                clients.notices.extend(notices);
                clients.listings.insert(name, started.tools);
                clients.connections.push(started.connection);
            }
            Err(reason) => clients
                .notices
                .push(format!("mcp.{name} did not start: {reason}")),
        }
    }
    clients
}

/// Told the tool list of each server that lists its tools (the server's name, its list),
/// so that a later run can offer them without starting it (see [`on_call`]).
pub type ListingHook = Arc<dyn Fn(&str, &[rmcp::model::Tool]) + Send + Sync>;

/// The tools of `servers` as `listings` (an earlier run's tool lists, by server) give
/// them, each server started only at the first call of one of its tools, in the sandbox
/// of `ctx`. A server without a listing offers nothing here.
pub fn on_call(
    servers: &BTreeMap<String, McpServerConfig>,
    listings: &BTreeMap<String, Vec<rmcp::model::Tool>>,
    ctx: &ToolContext,
    on_listing: Option<&ListingHook>,
) -> McpClients {
    let mut clients = McpClients::default();
    for (name, config) in servers {
        let Some(listing) = listings.get(name) else {
            continue;
        };
        let server = Arc::new(LazyServer {
            name: name.clone(),
            config: config.clone(),
            ctx: ctx.clone(),
            on_listing: on_listing.cloned(),
            link: tokio::sync::OnceCell::new(),
            connection: Mutex::new(None),
        });
        let (offers, notices) = offers(name, config, listing);
        for offer in offers {
            clients
                .tools
                .push(Arc::new(McpTool::on_call(offer, Arc::clone(&server))));
        }
        clients.notices.extend(notices);
        clients.lazy.push(server);
    }
    clients
}

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

    fn take_connection(&self) -> Option<Connection> {
        lock(&self.connection).take()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A server that answered the handshake and listed its tools.
struct Started {
    connection: Connection,
    link: Arc<ServerLink>,
    tools: Vec<rmcp::model::Tool>,
}

/// What a tool needs to reach its server.
pub(super) struct ServerLink {
    pub(super) peer: Peer<RoleClient>,
    pub(super) stderr: Arc<StderrTail>,
}

/// One running server: the connection and its process group.
struct Connection {
    name: String,
    service: Option<RunningService<RoleClient, ClientConfig>>,
    group: Option<i32>,
}

impl Connection {
    async fn close(mut self) {
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

async fn start_one(
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
