//! The MCP client: starts the servers of `[mcp.<server>]` over stdio and offers each of
//! their tools as one [`Tool`], named `<server>__<tool>`.
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
//! It is not in the OS sandbox: it is started once for a run whatever the mode, and
//! what it may do is governed per call by the permission policy.
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

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, Implementation,
};
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{Peer, RoleClient, ServiceError, ServiceExt};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::process::Command;
use tokio::task::JoinHandle;

use crate::config::McpServerConfig;
use crate::{Tool, ToolContext, ToolError, ToolFuture, external};
use codecrew_intercept::neutralise_envelopes;
use codecrew_policy::{process, sandbox};

/// The most text (and structured content) one call's result carries.
pub const MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// The longest tool name part (after `<server>__`) codecrew offers.
pub const MAX_NAME_CHARS: usize = 64;
/// The longest description offered to the model; servers may send pages of text.
pub const MAX_DESCRIPTION_CHARS: usize = 2000;
/// How much of a server's stderr is kept, to quote when it fails.
const STDERR_KEEP_BYTES: usize = 8 * 1024;
/// How much of that a message quotes.
const STDERR_QUOTE_CHARS: usize = 1500;
/// The longest stderr line read at once (a line without newline cannot grow the memory).
const STDERR_LINE_BYTES: u64 = 64 * 1024;
/// After a failed start, how long the server's stderr may take to reach its end (its
/// last words are usually the reason).
const STDERR_SETTLE: Duration = Duration::from_millis(500);
/// How long a server whose pipe closed may take to be gone, to tell "exited" from
/// "closed its stdout".
const EXIT_SETTLE: Duration = Duration::from_millis(500);
/// How long [`McpClients::shutdown`] lets a server exit after its stdin is closed; rmcp
/// then sends SIGTERM and at last SIGKILL, and codecrew kills what is left of the group.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(8);
/// The longest error text of an MCP tool's result: a server's error is often the whole
/// explanation the model needs.
const MAX_ERROR_CHARS: usize = 4000;
/// Extra time the executor grants beyond `timeout_secs`, which the tool enforces (and
/// reports, naming the server) first.
const TIMEOUT_MARGIN: Duration = Duration::from_secs(5);

/// The running MCP servers of one run, their tools, and what went wrong starting them.
///
/// Dropping it closes each connection (rmcp then closes the server's stdin) and sends
/// SIGTERM to each server's process group; [`McpClients::shutdown`] waits for the servers
/// to exit instead. Either way codecrew's exit sweep kills whatever is left.
#[derive(Default)]
pub struct McpClients {
    connections: Vec<Connection>,
    tools: Vec<Arc<dyn Tool>>,
    notices: Vec<String>,
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

    /// The names of the servers that started.
    pub fn servers(&self) -> impl Iterator<Item = &str> {
        self.connections.iter().map(|c| c.name.as_str())
    }

    /// Closes every connection and waits (a few seconds at most) for the servers to exit;
    /// whatever is left of their process groups is then killed.
    pub async fn shutdown(mut self) {
        let mut closing = tokio::task::JoinSet::new();
        for connection in std::mem::take(&mut self.connections) {
            closing.spawn(connection.close());
        }
        while closing.join_next().await.is_some() {}
    }
}

/// Starts every server of `servers` concurrently; see the module doc. `workspace` is the
/// base of relative `cwd`s and commands; `pass_env` the variables the scrub keeps.
pub async fn start(
    servers: &BTreeMap<String, McpServerConfig>,
    workspace: &Path,
    pass_env: &[String],
) -> McpClients {
    let mut starting = tokio::task::JoinSet::new();
    let mut names = HashMap::new();
    for (name, config) in servers {
        let task = starting.spawn(start_one(
            name.clone(),
            config.clone(),
            workspace.to_path_buf(),
            pass_env.to_vec(),
        ));
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
                let config = &servers[&name];
                let (tools, notices) = tools_of(&started.link, config, started.tools);
                clients.tools.extend(tools);
                clients.notices.extend(notices);
                clients.connections.push(started.connection);
            }
            Err(reason) => clients
                .notices
                .push(format!("mcp.{name} did not start: {reason}")),
        }
    }
    clients
}

/// A server that answered the handshake and listed its tools.
struct Started {
    connection: Connection,
    link: Arc<ServerLink>,
    tools: Vec<rmcp::model::Tool>,
}

/// What a tool needs to reach its server.
struct ServerLink {
    name: String,
    peer: Peer<RoleClient>,
    stderr: Arc<StderrTail>,
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
    workspace: PathBuf,
    pass_env: Vec<String>,
) -> Result<Started, String> {
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
    let env = external::environment(&pass_env, &config.env);
    let program = external::program(&config.command, &workspace);
    let mut command = Command::new(&program);
    command
        .args(&config.args)
        .current_dir(&cwd)
        .env_clear()
        .envs(env);
    // A session and process group of its own (pgid = its pid), no terminal.
    sandbox::confine(&mut command, None);
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
                name: name.clone(),
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
struct StderrTail {
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
    fn quote(&self) -> Option<String> {
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

/// The tools of one server, and notices for those left out.
fn tools_of(
    link: &Arc<ServerLink>,
    config: &McpServerConfig,
    remote: Vec<rmcp::model::Tool>,
) -> (Vec<Arc<dyn Tool>>, Vec<String>) {
    let server = &link.name;
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    let mut notices = Vec::new();
    let mut taken = BTreeSet::new();
    let mut readonly_unused: BTreeSet<&str> =
        config.readonly_tools.iter().map(String::as_str).collect();
    for tool in remote {
        let remote_name = tool.name.to_string();
        let local = match sanitise(&remote_name) {
            Ok(local) => local,
            Err(why) => {
                notices.push(format!(
                    "mcp.{server}: tool {remote_name:?} is left out: {why}"
                ));
                continue;
            }
        };
        if !taken.insert(local.clone()) {
            notices.push(format!(
                "mcp.{server}: tool {remote_name:?} is left out: another of its tools is \
                 already offered as codecrew:{server}__{local}"
            ));
            continue;
        }
        // The user's word, by the server's name or the offered one; never the server's
        // own hints.
        let readonly = config
            .readonly_tools
            .iter()
            .any(|listed| *listed == remote_name || *listed == local);
        readonly_unused.remove(remote_name.as_str());
        readonly_unused.remove(local.as_str());
        let name = format!("{server}__{local}");
        let (input_schema, schema_problem) = input_schema(&tool.input_schema);
        if let Some(problem) = schema_problem {
            notices.push(format!(
                "mcp.{server}: the input schema of {remote_name:?} {problem}; codecrew:{name} \
                 accepts any object and leaves the checks to the server"
            ));
        }
        let description = description(&tool, server);
        tools.push(Arc::new(McpTool {
            name,
            remote: remote_name,
            description,
            input_schema,
            readonly,
            timeout: Duration::from_secs(config.timeout_secs),
            server: Arc::clone(link),
        }));
    }
    for unused in readonly_unused {
        notices.push(format!(
            "mcp.{server}: readonly_tools names {unused:?}, which the server does not offer"
        ));
    }
    (tools, notices)
}

/// The tool part of `<server>__<tool>` for a remote name; see the module doc.
pub fn sanitise(remote: &str) -> Result<String, String> {
    let mut local = String::with_capacity(remote.len());
    for c in remote.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if !(c == '_' && local.ends_with('_')) {
            local.push(c);
        }
    }
    let local = local.trim_matches('_');
    if local.is_empty() {
        return Err("its name has no ASCII letter or digit".to_owned());
    }
    if local.chars().count() > MAX_NAME_CHARS {
        return Err(format!(
            "its name is longer than {MAX_NAME_CHARS} characters"
        ));
    }
    Ok(local.to_owned())
}

/// The server's description (or title), trimmed and capped.
fn description(tool: &rmcp::model::Tool, server: &str) -> String {
    let text = tool
        .description
        .as_deref()
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .or_else(|| tool.title.as_deref().map(str::trim))
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
        .unwrap_or_else(|| format!("The tool {:?} of the MCP server {server}.", tool.name));
    if text.chars().count() > MAX_DESCRIPTION_CHARS {
        let cut: String = text.chars().take(MAX_DESCRIPTION_CHARS).collect();
        format!("{}…", cut.trim_end())
    } else {
        text
    }
}

/// The schema codecrew checks inputs against: the server's when it describes an object
/// and compiles, else any object (and what was wrong with it).
fn input_schema(schema: &Map<String, Value>) -> (Value, Option<&'static str>) {
    let any_object = || json!({"type": "object"});
    if schema.is_empty() {
        return (any_object(), None);
    }
    let mut schema = schema.clone();
    match schema.get("type") {
        None => {
            // Only objects can be arguments; saying so lets codecrew reject the rest.
            schema.insert("type".to_owned(), json!("object"));
        }
        Some(Value::String(kind)) if kind == "object" => {}
        Some(_) => return (any_object(), Some("does not describe an object")),
    }
    let schema = Value::Object(schema);
    if jsonschema::validator_for(&schema).is_err() {
        return (any_object(), Some("is not a valid JSON Schema"));
    }
    (schema, None)
}

/// One tool of an MCP server.
pub struct McpTool {
    /// `<server>__<tool>`.
    name: String,
    /// The server's name for it.
    remote: String,
    description: String,
    input_schema: Value,
    readonly: bool,
    timeout: Duration,
    server: Arc<ServerLink>,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.name)
            .field("remote", &self.remote)
            .field("readonly", &self.readonly)
            .finish_non_exhaustive()
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        self.input_schema.clone()
    }

    fn readonly(&self) -> bool {
        self.readonly
    }

    fn timeout(&self) -> Duration {
        self.timeout + TIMEOUT_MARGIN
    }

    fn max_error_chars(&self) -> usize {
        MAX_ERROR_CHARS
    }

    fn execute<'a>(&'a self, _ctx: &'a ToolContext, input: Value) -> ToolFuture<'a> {
        Box::pin(self.call(input))
    }
}

impl McpTool {
    async fn call(&self, input: Value) -> Result<Value, ToolError> {
        let arguments = match input {
            Value::Object(arguments) => arguments,
            other => {
                return Err(ToolError::new(
                    "E_INVALID_INPUT",
                    format!("the input must be a JSON object, not {other}"),
                ));
            }
        };
        let params = CallToolRequestParams::new(self.remote.clone()).with_arguments(arguments);
        // Dropping the call (timeout) sends `notifications/cancelled` to the server.
        let response =
            match tokio::time::timeout(self.timeout, self.server.peer.call_tool_once(params)).await
            {
                Ok(response) => response.map_err(|error| self.service_error(error))?,
                Err(_) => {
                    return Err(ToolError::new(
                        "E_TIMEOUT",
                        format!(
                            "codecrew:{} (MCP server {}) did not answer within {} s",
                            self.name,
                            self.server.name,
                            self.timeout.as_secs()
                        ),
                    )
                    .with_suggestion(format!(
                        "try a smaller request, or raise timeout_secs of [mcp.{}]",
                        self.server.name
                    )));
                }
            };
        let result = match response {
            CallToolResponse::Complete(result) => result,
            CallToolResponse::InputRequired(_) => {
                return Err(self.unsupported("asked for user input, which codecrew cannot give"));
            }
            CallToolResponse::Task(_) => {
                return Err(
                    self.unsupported("started a long-running task, which codecrew cannot follow")
                );
            }
            _ => {
                return Err(
                    self.unsupported("answered with a kind of result codecrew does not know")
                );
            }
        };
        let wire = serde_json::to_value(&result).map_err(|error| {
            ToolError::new(
                "E_INTERNAL",
                format!("cannot read the result of codecrew:{}: {error}", self.name),
            )
        })?;
        // The tool's own words reach the model inside codecrew's message: no envelope in
        // them may read as a call.
        shape(&wire).map_err(|text| {
            ToolError::new(
                "E_MCP_TOOL_ERROR",
                format!(
                    "codecrew:{} failed: {}",
                    self.name,
                    neutralise_envelopes(&text)
                ),
            )
        })
    }

    fn unsupported(&self, what: &str) -> ToolError {
        ToolError::new(
            "E_MCP_UNSUPPORTED",
            format!(
                "codecrew:{} (MCP server {}) {what}",
                self.name, self.server.name
            ),
        )
    }

    fn service_error(&self, error: ServiceError) -> ToolError {
        let server = &self.server.name;
        match error {
            ServiceError::McpError(data) => ToolError::new(
                "E_MCP_TOOL_ERROR",
                format!(
                    "the MCP server {server} refused the call of codecrew:{}: {} (JSON-RPC \
                     error {})",
                    self.name,
                    neutralise_envelopes(&data.message),
                    data.code.0
                ),
            )
            .with_suggestion(format!(
                "`codecrew tools show {}` prints the input schema",
                self.name
            )),
            ServiceError::TransportClosed
            | ServiceError::TransportSend(_)
            | ServiceError::Cancelled { .. } => {
                let stderr = self
                    .server
                    .stderr
                    .quote()
                    .map(|text| format!(" (its stderr: {})", neutralise_envelopes(&text)))
                    .unwrap_or_default();
                ToolError::new(
                    "E_MCP_UNAVAILABLE",
                    format!(
                        "the MCP server {server} is not running any more, so codecrew:{} \
                         cannot be called{stderr}",
                        self.name
                    ),
                )
                .with_suggestion(format!(
                    "do without the codecrew:{server}__* tools in this run; the server \
                     starts again with the next codecrew run"
                ))
            }
            ServiceError::Timeout { .. } => ToolError::new(
                "E_TIMEOUT",
                format!(
                    "codecrew:{} (MCP server {server}) did not answer in time",
                    self.name
                ),
            ),
            other => ToolError::new(
                "E_MCP_PROTOCOL",
                format!(
                    "the MCP server {server} answered the call of codecrew:{} in a way \
                     codecrew does not understand: {other}",
                    self.name
                ),
            ),
        }
    }
}

/// The tool output for an MCP `CallToolResult` (its wire JSON), or the error text when
/// `isError` is true.
///
/// ```json
/// {"text": "…all text parts, joined by newlines…",
///  "content": [{"type": "image", "mime_type": "image/png", "bytes": 1234, "note": "…"},
///              {"type": "resource", "uri": "file:///…", "mime_type": "text/plain", "text": "…"},
///              {"type": "resource_link", "uri": "…", "name": "…"}],
///  "structured": {"…": "structuredContent, as the server sent it"},
///  "truncated": true, "note": "…"}
/// ```
///
/// Every key is left out when it has nothing to say, except `text` when nothing else is
/// there (`{"text": ""}`). Text that only repeats `structured` (its JSON, or one of its
/// string fields; the spec asks servers to send both) is left out, so the model does not
/// read it twice. Binary data
/// (images, audio, blobs) is summarised, not inlined: a text model cannot use base64.
/// Text, resource text and structured content share the [`MAX_OUTPUT_BYTES`] budget.
pub fn shape(result: &Value) -> Result<Value, String> {
    let mut budget = Budget {
        left: MAX_OUTPUT_BYTES,
        total: 0,
    };
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut texts = Vec::new();
    let mut others = Vec::new();
    for block in blocks {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        let field = |key: &str| block.get(key).cloned().unwrap_or(Value::Null);
        match kind {
            "text" => texts.push(block.get("text").and_then(Value::as_str).unwrap_or("")),
            "image" | "audio" => others.push(binary(kind, &field("mimeType"), &field("data"))),
            "resource" => {
                let resource = block.get("resource").cloned().unwrap_or(Value::Null);
                let get = |key: &str| resource.get(key).cloned().unwrap_or(Value::Null);
                let mut part = match resource.get("text").and_then(Value::as_str) {
                    Some(text) => json!({"type": "resource", "text": budget.take(text)}),
                    None => binary("resource", &get("mimeType"), &get("blob")),
                };
                insert_some(&mut part, "uri", get("uri"));
                insert_some(&mut part, "mime_type", get("mimeType"));
                others.push(part);
            }
            "resource_link" => {
                let mut part = json!({"type": "resource_link"});
                for (from, to) in [
                    ("uri", "uri"),
                    ("name", "name"),
                    ("title", "title"),
                    ("description", "description"),
                    ("mimeType", "mime_type"),
                    ("size", "size"),
                ] {
                    insert_some(&mut part, to, field(from));
                }
                others.push(part);
            }
            other => others.push(json!({
                "type": other,
                "note": "a kind of content codecrew does not show",
            })),
        }
    }
    let text = texts.join("\n");
    let structured = result
        .get("structuredContent")
        .filter(|value| !value.is_null());
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let message = match (text.trim(), structured) {
            ("", Some(structured)) => structured.to_string(),
            ("", None) => "the tool reported an error without a message".to_owned(),
            (text, _) => text.to_owned(),
        };
        return Err(message);
    }
    let text_repeats_structured = structured.is_some_and(|structured| repeats(&text, structured));
    let mut output = Map::new();
    if !text.is_empty() && !text_repeats_structured {
        output.insert("text".to_owned(), json!(budget.take(&text)));
    }
    if !others.is_empty() {
        output.insert("content".to_owned(), Value::Array(others));
    }
    let mut notes = Vec::new();
    if let Some(structured) = structured {
        let size = structured.to_string().len();
        if size <= budget.left {
            budget.left -= size;
            budget.total += size as u64;
            output.insert("structured".to_owned(), structured.clone());
        } else {
            budget.total += size as u64;
            notes.push(format!(
                "the structured content ({size} bytes) was left out: it does not fit the \
                 {MAX_OUTPUT_BYTES}-byte limit"
            ));
        }
    }
    if budget.total > MAX_OUTPUT_BYTES as u64 {
        notes.insert(
            0,
            format!(
                "output cut at {MAX_OUTPUT_BYTES} bytes (the tool returned {})",
                budget.total
            ),
        );
        output.insert("truncated".to_owned(), json!(true));
        output.insert("note".to_owned(), json!(notes.join("; ")));
    }
    if output.is_empty() {
        output.insert("text".to_owned(), json!(""));
    }
    Ok(Value::Object(output))
}

/// Whether `text` only repeats `structured`: its JSON, or one of its top-level string
/// fields (`read_text_file` sends the file as text and as `{"content": …}`).
fn repeats(text: &str, structured: &Value) -> bool {
    if serde_json::from_str::<Value>(text).is_ok_and(|parsed| parsed == *structured) {
        return true;
    }
    structured.as_object().is_some_and(|fields| {
        fields
            .values()
            .any(|value| value.as_str().is_some_and(|field| field == text))
    })
}

/// What is left of the output budget, and how much the tool returned.
struct Budget {
    left: usize,
    total: u64,
}

impl Budget {
    /// `text`, cut (at a character boundary) to what is left.
    fn take(&mut self, text: &str) -> String {
        self.total += text.len() as u64;
        if text.len() <= self.left {
            self.left -= text.len();
            return text.to_owned();
        }
        let mut end = self.left;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.left = 0;
        text[..end].to_owned()
    }
}

/// A summary of base64 data: its type and decoded size, never the data.
fn binary(kind: &str, mime_type: &Value, data: &Value) -> Value {
    let encoded = data
        .as_str()
        .map_or(0, |data| data.trim_end_matches('=').len());
    let mut part = json!({
        "type": kind,
        "bytes": encoded * 3 / 4,
        "note": "binary data, not shown",
    });
    insert_some(&mut part, "mime_type", mime_type.clone());
    part
}

fn insert_some(object: &mut Value, key: &str, value: Value) {
    if let (Value::Object(map), false) = (object, value.is_null()) {
        map.insert(key.to_owned(), value);
    }
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
