//! `codecrew mcp` driven over stdio by real MCP clients: rmcp's client (the official Rust
//! SDK) for the protocol and the permission cases, and the real Claude Code CLI, whose model
//! (the project's fake server) calls a codecrew tool natively.

use std::io::{Read, Write};
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{CallToolResult, Tool};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::support::World;
use crate::support::binary::BIN;
use crate::support::clis::{CLI_TIMEOUT, Cli, Clis, run};
use crate::support::fake_model::{FakeModel, Reply, Rule, Script};
use crate::support::mcp::{text, try_call};

/// A world whose workspace holds a file of unique content and a secret.
fn world() -> World {
    let world = World::new();
    let dir = world.workspace();
    std::fs::write(dir.join("notes.txt"), "first line\nMCP-CONTENT-5150\n").unwrap();
    std::fs::write(dir.join(".env"), "API_TOKEN=hunter2\n").unwrap();
    world
}

type Client = RunningService<RoleClient, ()>;

/// `codecrew [global] --workdir <workspace> mcp <args>` in `world` (no user config unless
/// the world has one), connected with rmcp's client. The server lives in the world's home.
async fn connect(world: &World, global: &[&str], args: &[&str]) -> Client {
    let workspace = world.workspace();
    let mut all = global.to_vec();
    all.extend(["--workdir", workspace.to_str().unwrap(), "mcp"]);
    all.extend(args);
    let command = tokio::process::Command::from(world.command(&all));
    let (transport, _stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    ().serve(transport).await.unwrap()
}

async fn tools(client: &Client) -> Vec<Tool> {
    client.list_all_tools().await.unwrap()
}

fn names(tools: &[Tool]) -> Vec<String> {
    tools.iter().map(|tool| tool.name.to_string()).collect()
}

async fn call(client: &Client, tool: &str, input: Value) -> CallToolResult {
    try_call(client, tool, input).await.unwrap()
}

#[tokio::test]
async fn query_mode_serves_the_read_only_tools_and_execute_mode_all() {
    let world = world();
    let query = connect(&world, &[], &[]).await;
    let info = query.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "codecrew");
    let listed = tools(&query).await;
    let query_names = names(&listed);
    for tool in [
        "read_file",
        "list_directory",
        "glob",
        "grep",
        "help",
        "query_agent",
    ] {
        assert!(query_names.contains(&tool.to_owned()), "{query_names:?}");
    }
    for tool in ["write_file", "edit_file", "execute_agent"] {
        assert!(!query_names.contains(&tool.to_owned()), "{query_names:?}");
    }
    // Its reading commands, in the read-only sandbox, where the kernel holds it.
    let sandboxed = codecrew_policy::sandbox::read_only_unavailable(true).is_none();
    assert_eq!(
        query_names.contains(&"run_command".to_owned()),
        sandboxed,
        "{query_names:?}"
    );
    let read_file = listed.iter().find(|t| t.name == "read_file").unwrap();
    assert_eq!(
        read_file.annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );
    assert!(read_file.description.as_ref().unwrap().contains("line"));
    assert_eq!(read_file.input_schema["required"], json!(["path"]));
    query.cancel().await.unwrap();

    let execute = connect(&world, &[], &["--mode", "execute"]).await;
    let listed = tools(&execute).await;
    let execute_names = names(&listed);
    for tool in [
        "read_file",
        "write_file",
        "edit_file",
        "run_command",
        "query_agent",
        "execute_agent",
    ] {
        assert!(
            execute_names.contains(&tool.to_owned()),
            "{execute_names:?}"
        );
    }
    let write_file = listed.iter().find(|t| t.name == "write_file").unwrap();
    assert_eq!(
        write_file.annotations.as_ref().unwrap().read_only_hint,
        Some(false)
    );
    execute.cancel().await.unwrap();

    let plain = connect(&world, &[], &["--no-agents"]).await;
    let plain_names = names(&tools(&plain).await);
    assert!(
        !plain_names.iter().any(|n| n.ends_with("_agent")),
        "{plain_names:?}"
    );
    plain.cancel().await.unwrap();
}

#[tokio::test]
async fn read_file_returns_the_workspace_file() {
    let world = world();
    let client = connect(&world, &[], &[]).await;
    let result = call(&client, "read_file", json!({"path": "notes.txt"})).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert!(text(&result).contains("MCP-CONTENT-5150"), "{result:?}");
    let structured = result.structured_content.unwrap();
    assert_eq!(structured["path"], "notes.txt");
    assert!(
        structured["content"]
            .as_str()
            .unwrap()
            .contains("2\tMCP-CONTENT-5150")
    );
    // Bad input is the executor's schema error, as data.
    let bad = call(&client, "read_file", json!({"path": 3})).await;
    assert_eq!(bad.is_error, Some(true));
    assert!(text(&bad).contains("E_INVALID_INPUT"), "{}", text(&bad));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn denied_calls_are_errors_that_say_why() {
    let world = world();
    let dir = world.workspace();
    let outside = dir.parent().unwrap().join("mcp-outside.txt");
    std::fs::write(&outside, "outside\n").unwrap();
    let client = connect(&world, &[], &["--mode", "execute"]).await;
    let escaped = call(&client, "read_file", json!({"path": "../mcp-outside.txt"})).await;
    assert_eq!(escaped.is_error, Some(true));
    let message = text(&escaped);
    assert!(message.contains("E_PERMISSION_DENIED"), "{message}");
    assert!(message.contains("outside the workspace"), "{message}");
    assert!(!message.contains("outside\n"), "{message}");
    // A secret needs approval; with no terminal to ask on it is denied, naming --yes.
    let secret = call(&client, "read_file", json!({"path": ".env"})).await;
    assert_eq!(secret.is_error, Some(true));
    let message = text(&secret);
    assert!(message.contains("no terminal to ask on"), "{message}");
    assert!(message.contains("--yes"), "{message}");
    assert!(!message.contains("hunter2"), "{message}");
    assert_eq!(
        secret.structured_content.unwrap()["status"],
        "denied",
        "structured status"
    );
    // Write tools are not offered in query mode, even when called by name.
    let query = connect(&world, &[], &[]).await;
    let write = call(
        &query,
        "write_file",
        json!({"path": "x.txt", "content": "x"}),
    )
    .await;
    assert_eq!(write.is_error, Some(true));
    assert!(text(&write).contains("query mode"), "{}", text(&write));
    assert!(!dir.join("x.txt").exists());
    let _ = std::fs::remove_file(outside);
    client.cancel().await.unwrap();
    query.cancel().await.unwrap();
}

#[tokio::test]
async fn a_write_that_asks_is_denied_without_yes_and_runs_with_it() {
    let world = world();
    let dir = world.workspace();
    let workflow = ".github/workflows/ci.yml";
    let input = json!({"path": workflow, "content": "on: push\n"});
    let client = connect(&world, &[], &["--mode", "execute"]).await;
    let denied = call(&client, "write_file", input.clone()).await;
    assert_eq!(denied.is_error, Some(true), "{denied:?}");
    assert!(text(&denied).contains("--yes"), "{}", text(&denied));
    assert!(!dir.join(workflow).exists());
    client.cancel().await.unwrap();

    let client = connect(&world, &["--yes"], &["--mode", "execute"]).await;
    let written = call(&client, "write_file", input).await;
    assert_eq!(written.is_error, Some(false), "{}", text(&written));
    assert_eq!(
        std::fs::read_to_string(dir.join(workflow)).unwrap(),
        "on: push\n"
    );
    // --yes never allows what is denied.
    let escaped = call(&client, "read_file", json!({"path": "/etc/passwd"})).await;
    assert_eq!(escaped.is_error, Some(true));
    client.cancel().await.unwrap();
}

/// Speaks the protocol by hand and checks that every stdout line is a JSON-RPC message,
/// with logging turned all the way up and a warning on (both go to stderr).
#[test]
fn stdout_carries_nothing_but_the_protocol() {
    let world = world();
    let workspace = world.workspace();
    let mut child = world
        .command(&[
            "-vvv",
            "--workdir",
            workspace.to_str().unwrap(),
            "mcp",
            "--mode",
            "execute",
            // With the sandbox off nothing runs without asking: `--yes` approves the command.
            "--yes",
        ])
        .env("CODECREW_SANDBOX", "off")
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "read_file", "arguments": {"path": "notes.txt"}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"name": "run_command", "arguments": {"command": "echo to-the-model"}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "read_file", "arguments": {"path": ".env"}}}),
    ];
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let out_reader = std::thread::spawn(move || {
        // Reads until all five answers are in, then hangs up by closing stdin.
        let mut text = String::new();
        let mut buffer = [0u8; 4096];
        loop {
            let count = stdout.read(&mut buffer).unwrap();
            if count == 0 {
                break;
            }
            text.push_str(&String::from_utf8_lossy(&buffer[..count]));
            let answers = text.lines().filter(|l| l.contains("\"id\"")).count();
            if answers >= 5 {
                break;
            }
        }
        (text, stdout)
    });
    for message in &messages {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let (out, _stdout) = out_reader.join().unwrap();
    drop(stdin);
    let status = wait_for(&mut child, Duration::from_secs(20));
    let err = err_reader.join().unwrap();
    assert!(status.success(), "exit {status:?}; stderr:\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "stdout:\n{out}\nstderr:\n{err}");
    for line in &lines {
        let message: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line:?}\nstderr:\n{err}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        assert!(message.get("result").is_some(), "{line}");
    }
    // The command's own output reached the client inside a result, never as a raw line.
    assert!(
        lines.iter().all(|l| !l.starts_with("to-the-model")),
        "{out}"
    );
    assert!(out.contains("to-the-model"), "{out}");
    // The logs and the sandbox warning went to stderr.
    assert!(err.contains("CODECREW_SANDBOX=off"), "{err}");
    assert!(err.contains("tool result"), "{err}");
}

fn wait_for(child: &mut std::process::Child, timeout: Duration) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            panic!("codecrew mcp did not exit within {timeout:?} after stdin closed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// [`world`] with `@echo` in its user config: a cheap `command` agent that prints its
/// nesting depth.
fn world_with_echo() -> World {
    world().shell_agent(
        "echo",
        "cat >/dev/null; echo hello from echo at depth $CODECREW_MCP_DEPTH\n",
        "",
    )
}

#[tokio::test]
async fn query_agent_runs_one_job_and_returns_its_answer_and_summary() {
    let world = world_with_echo();
    let client = connect(&world, &[], &[]).await;
    let listed = tools(&client).await;
    let query_agent = listed.iter().find(|t| t.name == "query_agent").unwrap();
    let description = query_agent.description.as_deref().unwrap();
    assert!(description.contains("@echo"), "{description}");
    let result = call(&client, "query_agent", json!({"task": "@echo hi"})).await;
    let answer = text(&result);
    assert_eq!(result.is_error, Some(false), "{answer}");
    // The agent was started one level deeper than this server.
    assert!(answer.contains("hello from echo at depth 1"), "{answer}");
    assert!(answer.contains("@echo"), "{answer}");
    assert!(answer.contains("success"), "{answer}");
    let summary = result.structured_content.unwrap();
    assert_eq!(summary["agent"], "echo");
    assert_eq!(summary["mode"], "query");
    assert_eq!(summary["turns"], 1);
    assert_eq!(summary["success"], true);
    // The `agent` field instead of a mention; unknown agents and two agents are refused.
    let by_field = call(
        &client,
        "query_agent",
        json!({"task": "hi", "agent": "echo"}),
    )
    .await;
    assert!(
        text(&by_field).contains("hello from echo"),
        "{}",
        text(&by_field)
    );
    let unknown = call(&client, "query_agent", json!({"task": "@nobody hi"})).await;
    assert_eq!(unknown.is_error, Some(true));
    assert!(
        text(&unknown).contains("unknown agent @nobody"),
        "{}",
        text(&unknown)
    );
    let two = call(&client, "query_agent", json!({"task": "@echo @claude hi"})).await;
    assert_eq!(two.is_error, Some(true));
    assert!(text(&two).contains("once per agent"), "{}", text(&two));
    // execute_agent belongs to execute mode.
    let execute = call(&client, "execute_agent", json!({"task": "@echo hi"})).await;
    assert_eq!(execute.is_error, Some(true));
    assert!(
        text(&execute).contains("--mode execute"),
        "{}",
        text(&execute)
    );
    client.cancel().await.unwrap();
}

/// `query_agent`'s `schema`: the answer checked (asked again when it does not fit), its
/// document in `data`; a schema that names a file is refused (no policy judged it).
#[tokio::test]
async fn query_agent_holds_the_answer_to_its_schema() {
    let world = world().shell_agent(
        "shaped",
        "if grep -q 'does not fit the JSON Schema' ; then echo '{\"file\": \"a.rs\", \"risk\": 2}'; \
         else echo '{\"file\": \"a.rs\", \"risk\": \"low\"}'; fi\n",
        "",
    );
    let client = connect(&world, &[], &[]).await;
    let result = call(
        &client,
        "query_agent",
        json!({"task": "@shaped which file?", "schema": "file, risk int"}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let summary = result.structured_content.unwrap();
    assert_eq!(
        summary["data"],
        json!({"file": "a.rs", "risk": 2}),
        "{summary}"
    );
    assert_eq!(summary["turns"], 2);
    let refused = call(
        &client,
        "query_agent",
        json!({"task": "@shaped hi", "schema": "@/etc/passwd"}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused).contains("cannot name a file"),
        "{}",
        text(&refused)
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn delegation_stops_at_the_maximum_depth() {
    let world = world_with_echo().env("CODECREW_MCP_DEPTH", "2");
    let client = connect(&world, &[], &["--mode", "execute"]).await;
    let listed = names(&tools(&client).await);
    assert!(listed.contains(&"read_file".to_owned()), "{listed:?}");
    assert!(!listed.iter().any(|n| n.ends_with("_agent")), "{listed:?}");
    let refused = call(&client, "query_agent", json!({"task": "@echo hi"})).await;
    assert_eq!(refused.is_error, Some(true));
    let message = text(&refused);
    assert!(message.contains("CODECREW_MCP_DEPTH=2"), "{message}");
    assert!(!message.contains("hello from echo"), "{message}");
    client.cancel().await.unwrap();
}

/// The real Claude Code CLI as the MCP client: it starts `codecrew mcp` from an
/// `--mcp-config`, its model (the fake) calls `mcp__codecrew__read_file` natively, and the
/// file's content travels back to the model as the tool result. Claude defers MCP tools by
/// default (the model sees their names and loads schemas with ToolSearch); with
/// `ENABLE_TOOL_SEARCH=false` it sends them in `tools` with codecrew's schemas. Both ways
/// are checked.
#[test]
fn claude_calls_a_codecrew_tool_natively() {
    let Some(clis) = Clis::require("mcp_server::claude_calls_a_codecrew_tool_natively") else {
        return;
    };
    for tool_search in [true, false] {
        // Under cargo's scratch folder, where the CLIs run as they do for every test.
        let world = World::outside_tmp();
        let run = ClaudeRun::start(&clis, &world, tool_search);
        let requests = run.server.model_requests();
        let log: Vec<String> = run.server.requests().iter().map(|r| r.summary()).collect();
        let first = requests[0].body.to_string();
        // What the model is offered: codecrew's query-mode tools, not its write tools.
        assert!(first.contains("mcp__codecrew__read_file"), "{log:#?}");
        assert!(first.contains("mcp__codecrew__query_agent"), "{log:#?}");
        assert!(!first.contains("mcp__codecrew__write_file"), "{log:#?}");
        if !tool_search {
            let offered = requests[0].body["tools"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == "mcp__codecrew__read_file")
                .cloned()
                .unwrap_or_else(|| panic!("read_file not in tools: {log:#?}"));
            assert_eq!(
                offered["input_schema"]["required"],
                json!(["path"]),
                "{offered}"
            );
            assert!(
                offered["description"].as_str().unwrap().contains("line"),
                "{offered}"
            );
        }
        let answered = requests
            .iter()
            .find(|r| r.answered_by == "answer")
            .unwrap_or_else(|| panic!("no request carried the file's content: {log:#?}"));
        // codecrew's read_file answered (its output shape), not Claude's own Read.
        let tool_result = answered.tool_result.as_deref().unwrap();
        assert!(tool_result.contains("MCP-NATIVE-8086"), "{tool_result}");
        assert!(
            tool_result.contains("\"lines_returned\":1"),
            "{tool_result}"
        );
        let output = &run.output;
        let result = output.events("result").pop().unwrap();
        assert_eq!(result["is_error"], false, "{result}");
        assert_eq!(result["result"], CLAUDE_ANSWER, "{result}");
        assert_eq!(result["permission_denials"], json!([]), "{result}");
        // Claude's own record of the round trip: the tool_result it sent carries the file.
        let tool_results: Vec<Value> = output
            .events("user")
            .into_iter()
            .filter(|e| e["message"]["content"][0]["type"] == "tool_result")
            .collect();
        assert_eq!(tool_results.len(), 1, "{}", output.stdout);
        // Claude leaves `is_error` out of a successful MCP result.
        assert_ne!(tool_results[0]["message"]["content"][0]["is_error"], true);
        assert!(tool_results[0].to_string().contains("MCP-NATIVE-8086"));
    }
}

const CLAUDE_ANSWER: &str = "The notes say the launch code is MCP-NATIVE-8086.";

/// One `claude -p "read notes.txt"` with codecrew as its MCP server, against a fake model
/// that calls `mcp__codecrew__read_file` and answers once it sees the file's content.
struct ClaudeRun {
    server: FakeModel,
    output: crate::support::clis::CliRun,
}

impl ClaudeRun {
    /// Claude runs in `world`'s home and workspace, where codecrew serves.
    fn start(clis: &Clis, world: &World, tool_search: bool) -> ClaudeRun {
        let workspace = world.workspace();
        std::fs::write(
            workspace.join("notes.txt"),
            "The launch code is MCP-NATIVE-8086.\n",
        )
        .unwrap();
        let script = Script::new()
            .rule(
                Rule::on_tool_result("MCP-NATIVE-8086", Reply::text(CLAUDE_ANSWER)).named("answer"),
            )
            .rule(
                Rule::on_prompt(
                    "read notes.txt",
                    Reply::text("Reading it through codecrew.")
                        .with_tool_call("mcp__codecrew__read_file", json!({"path": "notes.txt"})),
                )
                .named("call"),
            );
        let server = FakeModel::start(script);
        let mcp_config = world.path("mcp.json");
        let servers = json!({"mcpServers": {"codecrew": {
            "command": BIN,
            "args": ["--workdir", workspace, "mcp"],
            "env": {"CODECREW_CONFIG": ""}
        }}});
        std::fs::write(&mcp_config, servers.to_string()).unwrap();
        let mut env = clis.env_for(Cli::Claude, &world.home, &server.url());
        if !tool_search {
            env = env.with("ENABLE_TOOL_SEARCH", "false");
        }
        let mut command = clis.command(Cli::Claude, &env);
        command
            .args(["-p", "read notes.txt", "--mcp-config"])
            .arg(&mcp_config)
            .args([
                // Only this config's servers, whatever the HOME holds.
                "--strict-mcp-config",
                "--allowedTools",
                "mcp__codecrew__read_file",
                "--output-format",
                "stream-json",
                "--verbose",
            ]);
        let output = run(&mut command, CLI_TIMEOUT);
        output.assert_code(0);
        let init = output
            .events("system")
            .into_iter()
            .find(|e| e["subtype"] == "init")
            .unwrap_or_else(|| panic!("no init event:\n{}", output.stdout));
        assert!(
            init["mcp_servers"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["name"] == "codecrew" && s["status"] == "connected"),
            "codecrew mcp did not connect: {}\n--- stderr\n{}",
            init["mcp_servers"],
            output.stderr
        );
        ClaudeRun { server, output }
    }
}

/// The MCP door to the read-only sandbox: a query-mode server runs reading commands and
/// refuses the rest, `--yes` or not; what it runs cannot open the workspace's secrets.
#[tokio::test]
async fn a_query_mode_server_runs_only_reading_commands() {
    if codecrew_policy::sandbox::read_only_unavailable(true).is_some() {
        return;
    }
    let world = world();
    let dir = world.workspace();
    let query = connect(&world, &[], &["--yes"]).await;
    let read = call(&query, "run_command", json!({"command": "cat notes.txt"})).await;
    assert_eq!(read.is_error, Some(false), "{read:?}");
    assert!(text(&read).contains("MCP-CONTENT-5150"));
    for command in [
        "touch made.txt",
        "cat .env",
        "echo x > notes.txt",
        "head .e?v",
    ] {
        let refused = call(&query, "run_command", json!({ "command": command })).await;
        assert_eq!(refused.is_error, Some(true), "{command}: {refused:?}");
        assert!(!text(&refused).contains("hunter2"), "{command}");
    }
    assert!(!dir.join("made.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "first line\nMCP-CONTENT-5150\n"
    );
    query.cancel().await.unwrap();
}

/// A served run is kept in the run store: one job for the client, by the name it gave,
/// with each call it made; the run ends as the server does.
#[tokio::test]
async fn the_clients_calls_are_kept_as_one_run() {
    let world = world();
    let client = connect(&world, &[], &[]).await;
    let read = call(&client, "read_file", json!({"path": "notes.txt"})).await;
    assert_eq!(read.is_error, Some(false));
    let denied = call(&client, "read_file", json!({"path": ".env"})).await;
    assert_eq!(denied.is_error, Some(true));
    client.cancel().await.unwrap();

    let logs = || {
        let output = world.run(&["logs", "--output", "json"]);
        serde_json::from_slice::<Value>(&output.stdout).unwrap()["runs"]
            .as_array()
            .unwrap()
            .clone()
    };
    let start = std::time::Instant::now();
    let run = loop {
        let runs = logs();
        if let Some(run) = runs.iter().find(|run| run["status"] == "ok") {
            break run.clone();
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "never ended: {runs:#?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(run["command"], "mcp");
    assert_eq!(run["agents"], json!(["rmcp"]));
    let output = world.run(&[
        "logs",
        "show",
        run["id"].as_str().unwrap(),
        "--output",
        "json",
    ]);
    let shown: Value = serde_json::from_slice(&output.stdout).unwrap();
    let job = &shown["jobs"][0];
    assert_eq!(job["cli"], "mcp-client");
    assert_eq!(job["stop_reason"], "served");
    let calls = job["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2, "{shown:#}");
    assert_eq!(calls[0]["input"]["path"], "notes.txt");
    assert!(calls[0]["output"].to_string().contains("MCP-CONTENT-5150"));
    assert_eq!(calls[1]["status"], "denied");
    // Query mode never asks: the policy refused it.
    assert_eq!(calls[1]["decided_by"], "policy");
}
