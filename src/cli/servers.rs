//! The servers' flags: `codecrew mcp` (MCP on stdio or HTTP) and `codecrew acp` (the
//! Agent Client Protocol, for editors), with the help that says how to connect a client.

use std::net::SocketAddr;

use clap::Args;

use super::{ModeArg, parse_duration};

pub(super) const ACP_HELP: &str = "\
stdin and stdout carry the protocol (JSON-RPC, ACP version 1), so logs (-v) go to stderr.
An editor starts it; each session it opens is a folder (held to the same rules as the
command line: not the home folder without --allow-home). A prompt may mention agents
(@claude @gemini:flash ...); without one, the agents last addressed answer, else the
session's chosen agent. What codecrew's policy would ask at a terminal is asked in the
editor. Sessions are kept in the run store (`codecrew logs`) and can be listed and loaded.

Zed (settings.json):
  \"agent_servers\": {\"codecrew\": {\"type\": \"custom\", \"command\": \"codecrew\", \"args\": [\"acp\"]}}
JetBrains IDEs (~/.jetbrains/acp.json):
  {\"agent_servers\": {\"codecrew\": {\"command\": \"codecrew\", \"args\": [\"acp\"]}}}
Neovim, CodeCompanion (adapters.acp):
  codecrew = function() return require(\"codecompanion.adapters\").extend(\"gemini_cli\",
    { commands = { default = { \"codecrew\", \"acp\" } } }) end";

pub(super) const MCP_HELP: &str = "\
Without --http, stdin and stdout carry the MCP protocol, so logs (-v) go to stderr.
Nothing is asked on a terminal: a call that would need approval is denied with the rule or
flag that allows it; --yes allows such calls (never denied ones). The workspace is
--workdir or the directory the client starts the server in.

Tools: read_file, list_directory, glob, grep, help, the config's read-only [tools.*],
query_agent (asks another agent) and run_command for reading commands (in a read-only
sandbox, where the kernel has one); with --mode execute also write_file, edit_file, every
command under the policy, the other config tools and execute_agent. Clients prefix the
names with the server's: Claude shows mcp__codecrew__read_file.

Claude Code:
  claude mcp add codecrew -- codecrew mcp
  claude mcp add codecrew -- codecrew --workdir /path/to/project mcp --mode execute
  claude -p \"...\" --mcp-config codecrew-mcp.json --allowedTools mcp__codecrew__read_file
    with codecrew-mcp.json:
    {\"mcpServers\": {\"codecrew\": {\"command\": \"codecrew\", \"args\": [\"mcp\"]}}}

Gemini CLI, in ~/.gemini/settings.json (or .gemini/settings.json in the project):
  {\"mcpServers\": {\"codecrew\": {\"command\": \"codecrew\", \"args\": [\"mcp\"]}}}

Codex, in ~/.codex/config.toml:
  [mcp_servers.codecrew]
  command = \"codecrew\"
  args = [\"mcp\"]

query_agent and execute_agent run one agent per call, as `codecrew query`/`execute` would
(the limits of the config apply), at most --max-agent-runs at once and --agent-queue more
waiting; beyond that a call is refused (JSON-RPC error -32001). Agents started this way may
use codecrew mcp in turn; CODECREW_MCP_DEPTH counts the nesting and no agent is started
beyond depth 2.

Over HTTP (--http): MCP's Streamable HTTP transport at http://<addr>/mcp, one server for
many clients. Every request needs `Authorization: Bearer <token>`: the token is --token or
CODECREW_MCP_TOKEN, else `[mcp_server] token` of the user config, else the one stored in
~/.local/state/codecrew/mcp-token (generated, mode 0600, and shown once, on the first
start). Only loopback addresses unless --allow-remote. A browser's request (with an
Origin header) is refused unless --allow-origin names its origin. GET /health answers
\"ok\" without a token. SIGTERM or Ctrl-C: no new requests, the calls in flight get --grace
seconds, then the rest are cancelled (their CLIs stopped) before the server exits. A
client that drops its connection mid-call cancels that call.

  codecrew mcp --http                          # http://127.0.0.1:8765/mcp
  export CODECREW_MCP_TOKEN=$(cat ~/.local/state/codecrew/mcp-token)
  claude mcp add --transport http codecrew http://127.0.0.1:8765/mcp \\
    --header \"Authorization: Bearer $CODECREW_MCP_TOKEN\"
  Gemini CLI (settings.json): {\"mcpServers\": {\"codecrew\": {\"httpUrl\":
    \"http://127.0.0.1:8765/mcp\", \"trust\": true,
    \"headers\": {\"Authorization\": \"Bearer ${CODECREW_MCP_TOKEN}\"}}}}
  Codex (config.toml): [mcp_servers.codecrew] url = \"http://127.0.0.1:8765/mcp\"
    bearer_token_env_var = \"CODECREW_MCP_TOKEN\"";

#[derive(Debug, Args)]
pub struct AcpArgs {
    /// The mode a new session starts in (the editor may switch it: query reads only,
    /// execute also writes files and runs commands under the permission policy)
    #[arg(long, value_enum, default_value_t = ModeArg::Query)]
    pub mode: ModeArg,
    /// The most sessions open at once
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub max_sessions: u32,
    /// Time one CLI turn may take before its process group is killed (and how long a
    /// question may wait for the editor's answer), e.g. 90s, 10m [default: 10m]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<std::time::Duration>,
    /// Run AGENT's CLI sign-in in this terminal (`claude auth login`...) instead of
    /// serving: what an editor runs for the sign-ins it is offered
    #[arg(long, value_name = "AGENT")]
    pub sign_in: Option<String>,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Which tools are served: query the read-only ones, execute also those that write
    /// files and run commands (under the permission policy)
    #[arg(long, value_enum, default_value_t = ModeArg::Query)]
    pub mode: ModeArg,
    /// Do not serve query_agent and execute_agent (only the workspace tools)
    #[arg(long)]
    pub no_agents: bool,
    /// Serve over HTTP (MCP Streamable HTTP, endpoint /mcp) on ADDR instead of
    /// stdin/stdout [default ADDR: 127.0.0.1:8765; port 0 picks a free one]
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = "127.0.0.1:8765",
        help_heading = "HTTP"
    )]
    pub http: Option<SocketAddr>,
    /// The bearer token clients must send. Other local users can read a flag in the
    /// process list: prefer the environment variable or the user config
    #[arg(
        long,
        env = "CODECREW_MCP_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN",
        help_heading = "HTTP"
    )]
    pub token: Option<String>,
    /// Let --http listen on an address other machines can reach (the token then travels
    /// unencrypted: put the server behind TLS)
    #[arg(long, requires = "http", help_heading = "HTTP")]
    pub allow_remote: bool,
    /// A browser origin allowed to call the server, as the browser sends it (e.g.
    /// http://localhost:6274 for the MCP Inspector); repeat for several
    #[arg(
        long = "allow-origin",
        value_name = "ORIGIN",
        requires = "http",
        help_heading = "HTTP"
    )]
    pub allow_origins: Vec<String>,
    /// The most sessions (connected clients) served at once. At the limit a new client
    /// takes the place of the session idle longest (no call in flight, no stream open);
    /// it is refused only when every session is busy (after waiting 2 s for one)
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..), help_heading = "HTTP")]
    pub max_sessions: u32,
    /// The largest request body accepted, in bytes
    #[arg(long, value_name = "BYTES", default_value_t = 4 * 1024 * 1024, help_heading = "HTTP")]
    pub max_body: usize,
    /// How long calls in flight may take to finish after SIGTERM, in seconds
    #[arg(long, value_name = "SECS", default_value_t = 10, help_heading = "HTTP")]
    pub grace: u64,
    /// The most agent runs (query_agent, execute_agent) at once
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_agent_runs: u32,
    /// How many more agent runs may wait for a place; beyond, a call is refused
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub agent_queue: u32,
}
