//! The binary: codecrew tools list / call with the servers in the config, and the OS
//! sandbox the servers run in for each mode.

use super::*;
use crate::support::binary::codecrew;

/// A workspace whose user config declares both servers (`everything`, `files`).
pub(super) fn ws_with_servers(servers: &Servers, files_readonly: &[&str]) -> Ws {
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
    let ws = Ws::outside_tmp();
    let config = Ws::config(BTreeMap::from([("files", servers.files(&[]))]));
    let target = ws.root.join("made-by-server.txt");
    let input = json!({"path": target.display().to_string(), "content": "x\n"});
    for (mode, may_write) in [(Mode::Query, false), (Mode::Execute, true)] {
        let toolbox = codecrew_core::toolbox::start(
            &config,
            &ws.root,
            mode,
            std::sync::Arc::new(codecrew::cli::CliHelp),
        )
        .await;
        assert_eq!(toolbox.notices(), [] as [String; 0], "{mode:?}");
        let write = toolbox.registry().get("files__write_file").unwrap().clone();
        let ctx = ToolContext::new(ws.root.clone(), Mode::Execute);
        let outcome = write.execute(&ctx, input.clone()).await;
        assert_eq!(target.exists(), may_write, "{mode:?}: {outcome:?}");
        if may_write {
            assert!(outcome.is_ok(), "{mode:?}: {outcome:?}");
        } else {
            let error = outcome.unwrap_err();
            assert_eq!(error.code, ErrorCode::McpToolError, "{error:?}");
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
    // A direct call starts only its own server: the broken ones stay out of it.
    let (result, stderr) = ws.call("query", false, "everything__echo", json!({"message": "on"}));
    assert_eq!(result["output"], json!({"text": "Echo: on"}));
    assert_eq!(stderr, "", "{stderr}");
    // Listing starts them all: the broken ones are warnings, the others still listed.
    let output = ws.codecrew(&["tools", "list"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("codecrew:everything__echo"), "{stdout}");
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
    let mut child = codecrew(&ws.home)
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

/// `codecrew tools call` starts only the MCP server of the tool it calls: none for a
/// built-in, which then answers without waiting for every server of the config.
#[test]
fn a_direct_call_starts_only_the_server_it_needs() {
    let ws = Ws::new();
    let marker = ws.root.join("server-started");
    let text = format!(
        "[mcp.lazy]\ncommand = \"bash\"\nargs = [\"-c\", \"touch '{}'; exec sleep 10\"]\n\
         startup_timeout_secs = 1\n",
        marker.display()
    );
    std::fs::write(&ws.user_config, text).unwrap();

    let (result, stderr) = ws.call("execute", false, "read_file", json!({"path": "notes.txt"}));
    assert_eq!(result["status"], "ok", "{result}");
    assert!(!marker.exists(), "a built-in call started the MCP server");
    assert!(!stderr.contains("mcp.lazy"), "{stderr}");

    let (result, stderr) = ws.call("execute", false, "lazy__anything", json!({}));
    assert_eq!(result["status"], "error", "{result}");
    assert!(
        marker.exists(),
        "the call of its tool did not start the server"
    );
    assert!(stderr.contains("mcp.lazy did not start"), "{stderr}");
    ws.assert_no_server_left();
}

/// `intercept --dry-run` runs nothing, so it starts no server; its json report looks up
/// only the servers its calls name (here never listed before, so they start), to say
/// whether they have the tool.
#[test]
fn a_dry_run_starts_only_the_servers_its_calls_name() {
    let Some(servers) = Servers::require("a_dry_run_starts_only_the_servers_its_calls_name") else {
        return;
    };
    let ws = Ws::new();
    let mut config = servers.toml(&BTreeMap::from([("everything", servers.everything())]));
    // A server that says on stderr that it started (and fails, which makes a warning).
    config.push_str(
        "[mcp.marker]\ncommand = \"bash\"\nargs = [\"-c\", \"echo marker-started >&2\"]\n",
    );
    std::fs::write(&ws.user_config, config).unwrap();
    let dry_run = |output: &str, calls: &[(&str, Value)]| -> (String, String) {
        let model_output: String = calls
            .iter()
            .map(|(name, input)| {
                let call = json!({"type": "tool_use", "name": name, "input": input});
                format!("```json\n{call}\n```\n")
            })
            .collect();
        let done = output_with_stdin(
            codecrew(&ws.home)
                .arg("--workdir")
                .arg(&ws.root)
                .args(["intercept", "--dry-run", "--output", output])
                .env("CODECREW_CONFIG", &ws.user_config)
                .env("XDG_CACHE_HOME", ws.cache()),
            &model_output,
        );
        assert!(done.status.success(), "{}", text(&done.stderr));
        (text(&done.stdout), text(&done.stderr))
    };
    let echo = ("codecrew:everything__echo", json!({"message": "hi"}));
    let read = ("codecrew:read_file", json!({"path": "notes.txt"}));

    // Text: the calls listed, no server started (none warned about).
    let (stdout, stderr) = dry_run("text", &[echo.clone(), read.clone()]);
    assert!(
        stdout.contains("call codecrew:everything__echo"),
        "{stdout}"
    );
    // A server's tool is not checked against a schema the dry run does not have.
    assert!(!stdout.contains("would be refused"), "{stdout}");
    assert_eq!(stderr, "", "no server starts for a dry run");

    // Json: the server a call names starts to say the tool is known; the other does not.
    let (stdout, stderr) = dry_run("json", &[echo.clone(), read]);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["calls"][0]["known"], true, "{doc}");
    assert_eq!(doc["calls"][0]["refused"], Value::Null, "{doc}");
    assert_eq!(doc["calls"][1]["known"], true, "{doc}");
    assert!(!stderr.contains("marker"), "{stderr}");
    let (stdout, stderr) = dry_run("json", &[("codecrew:marker__anything", json!({}))]);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["calls"][0]["known"], false, "{doc}");
    assert!(stderr.contains("marker-started"), "{stderr}");
    ws.assert_no_server_left();
}

/// `codecrew prompt` lists the servers' tools, but starts a server only when no earlier run
/// kept its tool list for this workspace and config.
#[test]
fn prompt_shows_kept_tool_lists_without_starting_the_servers() {
    let Some(servers) =
        Servers::require("prompt_shows_kept_tool_lists_without_starting_the_servers")
    else {
        return;
    };
    let ws = Ws::new();
    // The sandbox of a query run lets a server write in /tmp only.
    let starts = tempfile::NamedTempFile::new_in("/tmp").unwrap();
    let everything = servers.everything();
    let counted = |readonly: &str| {
        format!(
            "[mcp.counted]\ncommand = \"bash\"\nargs = [\"-c\", {}]\nreadonly_tools = [{readonly:?}]\n",
            json!(format!(
                "echo start >> '{}'; exec '{}' {}",
                starts.path().display(),
                everything.command,
                everything.args.join(" ")
            ))
        )
    };
    std::fs::write(&ws.user_config, counted("echo")).unwrap();
    let count = || {
        std::fs::read_to_string(starts.path())
            .unwrap()
            .lines()
            .count()
    };
    let prompt = || {
        let output = ws.codecrew(&["prompt", "hello"]);
        assert!(output.status.success(), "{}", text(&output.stderr));
        text(&output.stdout)
    };
    // The first prompt has no list to go by: the server starts, and its list is kept.
    assert!(prompt().contains("codecrew:counted__echo"));
    assert_eq!(count(), 1);
    // The next one shows the same tools without starting it.
    assert!(prompt().contains("codecrew:counted__echo"));
    assert_eq!(count(), 1, "the kept list served the prompt");
    // Calling a tool starts the server, of course.
    let (result, _) = ws.call("query", false, "counted__echo", json!({"message": "hi"}));
    assert_eq!(result["output"], json!({"text": "Echo: hi"}));
    assert_eq!(count(), 2);
    // A changed config is a new server: its list is not the old one's.
    std::fs::write(&ws.user_config, counted("get-sum")).unwrap();
    let shown = prompt();
    assert_eq!(count(), 3);
    assert!(shown.contains("codecrew:counted__get-sum"), "{shown}");
    ws.assert_no_server_left();
}

/// A run offers the tools of a server an earlier run listed without starting it, and
/// starts it at the first call of one of its tools: once for all calls.
#[test]
fn a_listed_server_starts_at_the_first_call_of_one_of_its_tools() {
    let Some(servers) =
        Servers::require("a_listed_server_starts_at_the_first_call_of_one_of_its_tools")
    else {
        return;
    };
    let ws = Ws::new();
    // The sandbox of a query run lets a server write in /tmp only.
    let starts = tempfile::NamedTempFile::new_in("/tmp").unwrap();
    let everything = servers.everything();
    let config = format!(
        "[mcp.counted]\ncommand = \"bash\"\nargs = [\"-c\", {}]\nreadonly_tools = [\"echo\"]\n",
        json!(format!(
            "echo start >> '{}'; exec '{}' {}",
            starts.path().display(),
            everything.command,
            everything.args.join(" ")
        ))
    );
    std::fs::write(&ws.user_config, config).unwrap();
    let count = || {
        std::fs::read_to_string(starts.path())
            .unwrap()
            .lines()
            .count()
    };
    let intercept = |calls: &[(&str, Value)]| -> Value {
        let model_output: String = calls
            .iter()
            .map(|(name, input)| {
                let call = json!({"type": "tool_use", "name": name, "input": input});
                format!("```json\n{call}\n```\n")
            })
            .collect();
        let done = output_with_stdin(
            codecrew(&ws.home)
                .arg("--workdir")
                .arg(&ws.root)
                .args(["intercept", "--output", "json"])
                .env("CODECREW_CONFIG", &ws.user_config)
                .env("XDG_CACHE_HOME", ws.cache()),
            &model_output,
        );
        serde_json::from_slice(&done.stdout).unwrap()
    };
    // `tools list` starts every server, and keeps its list.
    let output = ws.codecrew(&["tools", "list"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(count(), 1);

    // A run that calls none of its tools does not start it.
    let report = intercept(&[("codecrew:read_file", json!({"path": "notes.txt"}))]);
    assert_eq!(report["results"][0]["status"], "ok", "{report}");
    assert_eq!(count(), 1, "not started for a run that does not call it");

    // Two calls: one start, both answered.
    let report = intercept(&[
        ("codecrew:counted__echo", json!({"message": "one"})),
        ("codecrew:counted__echo", json!({"message": "two"})),
    ]);
    assert_eq!(
        report["results"][0]["output"],
        json!({"text": "Echo: one"}),
        "{report}"
    );
    assert_eq!(
        report["results"][1]["output"],
        json!({"text": "Echo: two"}),
        "{report}"
    );
    assert_eq!(count(), 2, "one start for both calls");
    ws.assert_no_server_left();
}
