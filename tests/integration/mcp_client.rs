//! The MCP client against real MCP servers: `@modelcontextprotocol/server-everything` and
//! `@modelcontextprotocol/server-filesystem`, pinned in tests/clis/package.json and
//! installed by `.ci/install-clis` next to the agent CLIs. They run with `node` (never
//! `npx`: the tests have no network).
//!
//! The first half drives the library (`Toolbox`, `ToolExecutor`); the second runs the
//! binary (`codecrew tools list|call`) with a scratch user config declaring the servers
//! (a project's `[mcp.*]` would be ignored unless trusted). Like the real-CLI tests they
//! are skipped with a note when the install is missing, and fail under CI.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use codecrew::config::{Config, McpServerConfig};
use codecrew_tools::executor::CallRequest;
use codecrew_tools::{Mode, Status, ToolCatalog, ToolContext, ToolExecutor, ToolResult, Toolbox};
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::support::binary::{BIN, text, tool_result, tools_call_args};
use crate::support::clis::Clis;

/// The installed servers and the `node` that runs them.
struct Servers {
    node: PathBuf,
    everything: PathBuf,
    filesystem: PathBuf,
}

impl Servers {
    /// The servers of the `.clis` install, or `None` (after a note) when it is missing
    /// outside CI; see [`Clis::require`].
    fn require(test: &str) -> Option<Servers> {
        let clis = Clis::require(test)?;
        let shim = |name: &str| {
            let path = clis.bin_dir().join(name);
            assert!(
                path.exists(),
                "{test}: {} is missing; run .ci/install-clis (tests/clis/package.json pins \
                 the MCP servers)",
                path.display()
            );
            path
        };
        let node = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|dir| dir.join("node"))
            .find(|node| node.is_file())
            .unwrap_or_else(|| panic!("{test}: node is not on PATH; the MCP servers need it"));
        Some(Servers {
            node,
            everything: shim("mcp-server-everything"),
            filesystem: shim("mcp-server-filesystem"),
        })
    }

    fn server(&self, entry: &Path, args: &[&str], readonly: &[&str]) -> McpServerConfig {
        let mut all = vec![entry.to_string_lossy().into_owned()];
        all.extend(args.iter().map(|arg| (*arg).to_owned()));
        McpServerConfig {
            command: self.node.to_string_lossy().into_owned(),
            args: all,
            env: BTreeMap::new(),
            cwd: None,
            readonly_tools: readonly.iter().map(|name| (*name).to_owned()).collect(),
            startup_timeout_secs: 30,
            timeout_secs: 30,
            network: false,
        }
    }

    /// `[mcp.everything]`, `echo` declared read-only.
    fn everything(&self) -> McpServerConfig {
        self.server(&self.everything, &["stdio"], &["echo"])
    }

    /// `[mcp.files]` over the workspace (the server's cwd), its reads declared read-only.
    fn files(&self, readonly: &[&str]) -> McpServerConfig {
        self.server(&self.filesystem, &["."], readonly)
    }

    /// The same servers as a user config file.
    fn toml(&self, servers: &BTreeMap<&str, McpServerConfig>) -> String {
        let mut text = String::new();
        for (name, server) in servers {
            text.push_str(&format!(
                "[mcp.{name}]\ncommand = {}\nargs = {}\nreadonly_tools = {}\n\n",
                json!(server.command),
                json!(server.args),
                json!(server.readonly_tools)
            ));
        }
        text
    }
}

/// A workspace (with `notes.txt`) and a user config beside it. The servers run in the
/// workspace, which is how the leak checks find them.
struct Ws {
    _dir: TempDir,
    root: PathBuf,
    user_config: PathBuf,
}

impl Ws {
    fn new() -> Ws {
        let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
        std::fs::create_dir_all(base).unwrap();
        let dir = tempfile::Builder::new()
            .prefix("mcp-client-")
            .tempdir_in(base)
            .unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        let root = root.canonicalize().unwrap();
        std::fs::write(root.join("notes.txt"), "first line\nsecond line\n").unwrap();
        let user_config = dir.path().join("user.toml");
        std::fs::write(&user_config, "").unwrap();
        Ws {
            _dir: dir,
            root,
            user_config,
        }
    }

    fn config(servers: BTreeMap<&str, McpServerConfig>) -> Config {
        Config {
            mcp: servers
                .into_iter()
                .map(|(name, server)| (name.to_owned(), server))
                .collect(),
            ..Config::default()
        }
    }

    fn executor(&self, toolbox: &Toolbox, mode: Mode) -> ToolExecutor {
        let registry = Arc::clone(toolbox.registry());
        let catalog = Arc::new(ToolCatalog::for_mode(&registry, mode).unwrap());
        ToolExecutor::new(registry, catalog, ToolContext::new(self.root.clone(), mode))
    }

    fn codecrew(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .arg("--workdir")
            .arg(&self.root)
            .args(args)
            .env("CODECREW_CONFIG", &self.user_config)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// `codecrew tools call TOOL --input INPUT --mode MODE [--yes]`; the result and stderr.
    fn call(&self, mode: &str, yes: bool, tool: &str, input: Value) -> (Value, String) {
        let input = input.to_string();
        let args = tools_call_args(tool, &input, mode, yes);
        let output = self.codecrew(&args);
        (tool_result(&output), text(&output.stderr))
    }

    /// Live processes working in this workspace: the servers (their cwd is the
    /// workspace; codecrew's and the test's are not).
    fn servers_running(&self) -> Vec<i32> {
        codecrew_policy::process::pids()
            .into_iter()
            .filter(|pid| {
                codecrew_policy::process::stat(*pid).is_some_and(|s| !s.zombie)
                    && std::fs::read_link(format!("/proc/{pid}/cwd"))
                        .is_ok_and(|cwd| cwd == self.root)
            })
            .collect()
    }

    /// Fails (and cleans up) when a server of this workspace outlives codecrew by more
    /// than a moment.
    #[track_caller]
    fn assert_no_server_left(&self) {
        let start = Instant::now();
        while !self.servers_running().is_empty() && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let left = self.servers_running();
        for pid in &left {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        }
        assert!(left.is_empty(), "MCP servers left running: {left:?}");
    }
}

async fn call(executor: &ToolExecutor, tool: &str, input: Value) -> ToolResult {
    executor
        .call(&CallRequest {
            id: String::new(),
            tool: tool.to_owned(),
            input,
        })
        .await
}

// ---------------------------------------------------------------------------------------
// The library: Toolbox and the executor
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn both_servers_offer_their_tools() {
    let Some(servers) = Servers::require("both_servers_offer_their_tools") else {
        return;
    };
    let ws = Ws::new();
    let config = Ws::config(BTreeMap::from([
        ("everything", servers.everything()),
        (
            "files",
            servers.files(&["read_text_file", "list_directory"]),
        ),
    ]));
    let toolbox = codecrew::toolbox::start(&config, &ws.root, Mode::Execute).await;
    assert_eq!(toolbox.notices(), [] as [String; 0]);
    let registry = toolbox.registry();
    for name in [
        "read_file",
        "everything__echo",
        "everything__get-sum",
        "files__read_text_file",
        "files__list_directory",
        "files__write_file",
        "files__edit_file",
    ] {
        assert!(registry.contains(name), "{name} missing: {registry:?}");
    }
    let echo = registry.get("everything__echo").unwrap();
    assert_eq!(echo.description(), "Echoes back the input string");
    assert_eq!(echo.input_schema()["required"], json!(["message"]));
    assert!(echo.readonly(), "listed in readonly_tools");
    // The server's own readOnlyHint is not trusted: only readonly_tools count.
    assert!(!registry.get("everything__get-sum").unwrap().readonly());
    assert!(!registry.get("files__write_file").unwrap().readonly());
    assert!(
        !registry
            .get("files__list_directory_with_sizes")
            .unwrap()
            .readonly()
    );
    // Every schema the servers gave compiles.
    ToolCatalog::for_mode(registry, Mode::Execute)
        .unwrap()
        .check_schemas()
        .unwrap();
    toolbox.shutdown().await;
    ws.assert_no_server_left();
}

#[tokio::test]
async fn calls_reach_the_servers() {
    let Some(servers) = Servers::require("calls_reach_the_servers") else {
        return;
    };
    let ws = Ws::new();
    let config = Ws::config(BTreeMap::from([
        ("everything", servers.everything()),
        ("files", servers.files(&["read_text_file"])),
    ]));
    let toolbox = codecrew::toolbox::start(&config, &ws.root, Mode::Execute).await;
    let query = ws.executor(&toolbox, Mode::Query);

    let result = call(
        &query,
        "everything__echo",
        json!({"message": "hello, crew"}),
    )
    .await;
    assert_eq!(result.status, Status::Ok, "{result:?}");
    assert_eq!(result.output, json!({"text": "Echo: hello, crew"}));

    let result = call(
        &query,
        "files__read_text_file",
        json!({"path": "notes.txt"}),
    )
    .await;
    assert_eq!(result.status, Status::Ok, "{result:?}");
    assert_eq!(
        result.output,
        json!({"structured": {"content": "first line\nsecond line\n"}})
    );

    // The schema is checked before the server sees the call.
    let result = call(&query, "everything__echo", json!({"text": "no message"})).await;
    assert_eq!(result.error.unwrap().code, "E_INVALID_INPUT");

    // The tool's own error (isError) is an error result with its text.
    let result = call(
        &query,
        "files__read_text_file",
        json!({"path": "/etc/hostname"}),
    )
    .await;
    assert_eq!(result.status, Status::Error);
    let error = result.error.unwrap();
    assert_eq!(error.code, "E_MCP_TOOL_ERROR");
    assert!(
        error.message.contains("outside allowed directories"),
        "{error}"
    );

    // Query mode offers only what readonly_tools names.
    let error = call(
        &query,
        "files__write_file",
        json!({"path": "x.txt", "content": "x"}),
    )
    .await
    .error
    .unwrap();
    assert_eq!(error.code, "E_TOOL_NOT_IN_CATALOG");
    assert!(!ws.root.join("x.txt").exists());

    let execute = ws.executor(&toolbox, Mode::Execute);
    let result = call(&execute, "everything__get-sum", json!({"a": 2, "b": 40})).await;
    // Not read-only, and the executor has no asker: denied, never run.
    assert_eq!(result.status, Status::Denied, "{result:?}");
    let execute = execute.assume_yes(true);
    let result = call(&execute, "everything__get-sum", json!({"a": 2, "b": 40})).await;
    assert_eq!(result.status, Status::Ok, "{result:?}");
    assert!(
        result.output.to_string().contains("42"),
        "{}",
        result.output
    );
    let result = call(&execute, "everything__get-tiny-image", json!({})).await;
    assert_eq!(result.status, Status::Ok, "{result:?}");
    let image = &result.output["content"][0];
    assert_eq!(image["type"], "image");
    assert_eq!(image["mime_type"], "image/png");
    assert!(image.get("data").is_none(), "binary data is never inlined");
    toolbox.shutdown().await;
    ws.assert_no_server_left();
}

#[tokio::test]
async fn a_failing_server_leaves_the_others_working() {
    let Some(servers) = Servers::require("a_failing_server_leaves_the_others_working") else {
        return;
    };
    let ws = Ws::new();
    let crashing = McpServerConfig {
        command: "bash".to_owned(),
        args: vec!["-c".to_owned(), "echo 'no database' >&2; exit 2".to_owned()],
        ..servers.everything()
    };
    let missing = McpServerConfig {
        command: "no-such-mcp-server".to_owned(),
        args: Vec::new(),
        ..servers.everything()
    };
    let mut files = servers.files(&["read_text_file", "no_such_tool"]);
    // The filesystem server refuses a directory that does not exist, and says why.
    files.args[1] = "no/such/dir".to_owned();
    let config = Ws::config(BTreeMap::from([
        ("crashing", crashing),
        ("everything", servers.everything()),
        ("files", files),
        ("missing", missing),
    ]));
    let toolbox = codecrew::toolbox::start(&config, &ws.root, Mode::Execute).await;
    let notices = toolbox.notices();
    assert_eq!(notices.len(), 3, "{notices:#?}");
    assert_eq!(
        notices[0],
        "mcp.crashing did not start: it exited before the MCP handshake finished (stderr: no \
         database)"
    );
    assert!(
        notices[1].starts_with("mcp.files did not start: it exited before the MCP handshake"),
        "{}",
        notices[1]
    );
    assert!(notices[1].contains("no/such/dir"), "{}", notices[1]);
    assert!(
        notices[2].starts_with("mcp.missing did not start: cannot run no-such-mcp-server:"),
        "{}",
        notices[2]
    );
    assert!(!toolbox.registry().contains("files__read_text_file"));
    let query = ws.executor(&toolbox, Mode::Query);
    let result = call(&query, "everything__echo", json!({"message": "still here"})).await;
    assert_eq!(result.output, json!({"text": "Echo: still here"}));
    toolbox.shutdown().await;
}

#[tokio::test]
async fn a_server_that_is_gone_is_unavailable() {
    let Some(servers) = Servers::require("a_server_that_is_gone_is_unavailable") else {
        return;
    };
    let ws = Ws::new();
    let config = Ws::config(BTreeMap::from([(
        "files",
        servers.files(&["read_text_file", "nonexistent_tool"]),
    )]));
    let toolbox = codecrew::toolbox::start(&config, &ws.root, Mode::Execute).await;
    assert_eq!(
        toolbox.notices(),
        ["mcp.files: readonly_tools names \"nonexistent_tool\", which the server does not offer"]
    );
    let executor = ws.executor(&toolbox, Mode::Query);
    // The tools outlive the servers (an executor may hold them): a call then fails cleanly.
    let registry = Arc::clone(toolbox.registry());
    toolbox.shutdown().await;
    ws.assert_no_server_left();
    let result = call(
        &executor,
        "files__read_text_file",
        json!({"path": "notes.txt"}),
    )
    .await;
    let error = result.error.unwrap();
    assert_eq!(error.code, "E_MCP_UNAVAILABLE", "{error}");
    assert!(
        error
            .message
            .contains("the MCP server files is not running any more"),
        "{error}"
    );
    drop(registry);
}

// ---------------------------------------------------------------------------------------
// The binary: codecrew tools list / call
// ---------------------------------------------------------------------------------------

/// A workspace whose user config declares both servers (`everything`, `files`).
fn ws_with_servers(servers: &Servers, files_readonly: &[&str]) -> Ws {
    let ws = Ws::new();
    let text = servers.toml(&BTreeMap::from([
        ("everything", servers.everything()),
        ("files", servers.files(files_readonly)),
    ]));
    std::fs::write(&ws.user_config, text).unwrap();
    ws
}

#[test]
fn tools_list_shows_the_servers_tools() {
    let Some(servers) = Servers::require("tools_list_shows_the_servers_tools") else {
        return;
    };
    let ws = ws_with_servers(&servers, &["read_text_file"]);
    let output = ws.codecrew(&["tools", "list", "--mode", "execute", "--output", "json"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stderr, "", "no warnings");
    let tools: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for name in [
        "codecrew:everything__echo",
        "codecrew:files__read_text_file",
        "codecrew:files__write_file",
        "codecrew:read_file",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    ws.assert_no_server_left();

    // Query mode: only the built-in readers and what readonly_tools names.
    let output = ws.codecrew(&["tools", "list", "--mode", "query"]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.lines()
            .any(|line| line.starts_with("codecrew:everything__echo ")
                && line.contains(" read ")
                && line.ends_with("Echoes back the input string")),
        "{text}"
    );
    assert!(text.contains("codecrew:files__read_text_file "), "{text}");
    assert!(!text.contains("codecrew:files__write_file"), "{text}");
    assert!(!text.contains("codecrew:everything__get-sum"), "{text}");

    let output = ws.codecrew(&["tools", "show", "codecrew:files__read_text_file"]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success());
    assert!(
        text.starts_with("codecrew:files__read_text_file\n"),
        "{text}"
    );
    assert!(text.contains("Read-only: yes"), "{text}");
    ws.assert_no_server_left();
}

#[test]
fn tools_call_reads_and_echoes() {
    let Some(servers) = Servers::require("tools_call_reads_and_echoes") else {
        return;
    };
    let ws = ws_with_servers(&servers, &["read_text_file"]);
    let (result, stderr) = ws.call(
        "query",
        false,
        "files__read_text_file",
        json!({"path": "notes.txt"}),
    );
    assert_eq!(result["status"], "ok", "{result}\n{stderr}");
    assert_eq!(
        result["output"]["structured"]["content"],
        "first line\nsecond line\n"
    );
    let (result, _) = ws.call(
        "query",
        false,
        "codecrew:everything__echo",
        json!({"message": "über"}),
    );
    assert_eq!(result["output"], json!({"text": "Echo: über"}));
    ws.assert_no_server_left();
}

#[test]
fn write_tools_ask_and_run_only_when_allowed() {
    let Some(servers) = Servers::require("write_tools_ask_and_run_only_when_allowed") else {
        return;
    };
    let ws = ws_with_servers(&servers, &["read_text_file"]);
    let input = json!({"path": "made.txt", "content": "made by MCP\n"});

    let (result, _) = ws.call("query", false, "files__write_file", input.clone());
    assert_eq!(result["status"], "denied", "{result}");
    assert_eq!(result["error"]["code"], "E_TOOL_NOT_IN_CATALOG");

    // No terminal to ask on: denied, naming what would allow it.
    let (result, _) = ws.call("execute", false, "files__write_file", input.clone());
    assert_eq!(result["status"], "denied", "{result}");
    assert_eq!(result["error"]["code"], "E_PERMISSION_DENIED");
    let suggestion = result["error"]["suggestion"].as_str().unwrap();
    assert!(suggestion.contains("--yes"), "{suggestion}");
    assert!(!ws.root.join("made.txt").exists());

    let (result, _) = ws.call("execute", true, "files__write_file", input);
    assert_eq!(result["status"], "ok", "{result}");
    assert_eq!(
        std::fs::read_to_string(ws.root.join("made.txt")).unwrap(),
        "made by MCP\n"
    );
    ws.assert_no_server_left();
}

/// The sandbox holds under the policy: a server started for a query run cannot write in
/// the workspace even when its write tool is called directly, past the catalog and the
/// policy; started for an execute run, it can.
#[tokio::test]
async fn a_server_runs_in_the_sandbox_of_the_runs_mode() {
    use codecrew_policy::sandbox::{Support, support};
    let Some(servers) = Servers::require("a_server_runs_in_the_sandbox_of_the_runs_mode") else {
        return;
    };
    if support() == Support::Unsupported {
        eprintln!("skipped: this kernel has no Landlock");
        return;
    }
    let ws = Ws::new();
    let config = Ws::config(BTreeMap::from([("files", servers.files(&[]))]));
    let target = ws.root.join("made-by-server.txt");
    let input = json!({"path": target.display().to_string(), "content": "x\n"});
    for (mode, may_write) in [(Mode::Query, false), (Mode::Execute, true)] {
        let toolbox = codecrew::toolbox::start(&config, &ws.root, mode).await;
        assert_eq!(toolbox.notices(), [] as [String; 0], "{mode:?}");
        let write = toolbox.registry().get("files__write_file").unwrap().clone();
        let ctx = ToolContext::new(ws.root.clone(), Mode::Execute);
        let outcome = write.execute(&ctx, input.clone()).await;
        assert_eq!(target.exists(), may_write, "{mode:?}: {outcome:?}");
        if may_write {
            assert!(outcome.is_ok(), "{mode:?}: {outcome:?}");
        } else {
            let error = outcome.unwrap_err();
            assert_eq!(error.code, "E_MCP_TOOL_ERROR", "{error:?}");
        }
        toolbox.shutdown().await;
    }
    ws.assert_no_server_left();
}

#[test]
fn a_broken_server_is_a_warning() {
    let Some(servers) = Servers::require("a_broken_server_is_a_warning") else {
        return;
    };
    let ws = Ws::new();
    let mut text = servers.toml(&BTreeMap::from([("everything", servers.everything())]));
    text.push_str("[mcp.broken]\ncommand = \"bash\"\nargs = [\"-c\", \"echo 'bad token' >&2\"]\n");
    text.push_str("[mcp.absent]\ncommand = \"no-such-mcp-server-codecrew\"\n");
    std::fs::write(&ws.user_config, text).unwrap();
    let (result, stderr) = ws.call("query", false, "everything__echo", json!({"message": "on"}));
    assert_eq!(result["output"], json!({"text": "Echo: on"}));
    let warnings: Vec<&str> = stderr.lines().collect();
    assert_eq!(warnings.len(), 2, "{stderr}");
    assert!(
        warnings[0].starts_with(
            "codecrew: warning: mcp.absent did not start: cannot run no-such-mcp-server-codecrew"
        ),
        "{stderr}"
    );
    assert_eq!(
        warnings[1],
        "codecrew: warning: mcp.broken did not start: it exited before the MCP handshake \
         finished (stderr: bad token)"
    );
}

#[test]
fn servers_die_with_an_interrupted_codecrew() {
    let Some(servers) = Servers::require("servers_die_with_an_interrupted_codecrew") else {
        return;
    };
    let ws = ws_with_servers(&servers, &[]);
    // A call that takes long, interrupted by SIGTERM while it runs.
    let input = json!({"duration": 60, "steps": 60}).to_string();
    let mut child = Command::new(BIN)
        .arg("--workdir")
        .arg(&ws.root)
        .args([
            "tools",
            "call",
            "everything__trigger-long-running-operation",
            "--input",
            &input,
            "--mode",
            "execute",
            "--yes",
        ])
        .env("CODECREW_CONFIG", &ws.user_config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while ws.servers_running().is_empty() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !ws.servers_running().is_empty(),
        "the servers never started"
    );
    // Give the call time to reach the server.
    std::thread::sleep(Duration::from_millis(1500));
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    ws.assert_no_server_left();
}
