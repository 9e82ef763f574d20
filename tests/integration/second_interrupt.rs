//! A second Ctrl-C ends codecrew at once, without waiting for its agents to stop; what
//! their walls hold (the CLI files that make a CLI run programs later) is still put back.
//! So does `codecrew mcp` on stdio on SIGTERM or SIGHUP, while its client keeps the pipe
//! open and an agent it runs is planting, and `codecrew acp` when its editor goes away.

use std::io::Write;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::support::World;

/// A `claude` that ignores SIGTERM (so the first Ctrl-C's stop takes its grace), writes
/// the session script Claude would paste before every shell command of a resumed session,
/// and hangs without answering.
const PLANTING_CLAUDE: &str = r#"#!/bin/sh
trap '' TERM
read -r _
mkdir -p "$HOME/.claude/session-env/planted"
printf 'echo planted\n' > "$HOME/.claude/session-env/planted/sessionstart-hook-0.sh"
printf '%s\n' '{"type":"system","subtype":"init","session_id":"planted","model":"fake"}'
sleep 120
"#;

/// The file the planting `claude` writes, once it has written it.
fn planted(machine: &World) -> std::path::PathBuf {
    let plant = machine
        .home_dir()
        .join(".claude/session-env/planted/sessionstart-hook-0.sh");
    let start = Instant::now();
    while !plant.exists() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(plant.exists(), "the fake CLI never wrote its plant");
    plant
}

#[test]
fn a_second_interrupt_still_puts_back_what_the_wall_holds() {
    let machine = World::with_claude(PLANTING_CLAUDE);
    std::fs::create_dir_all(machine.home_dir().join(".claude/session-env")).unwrap();
    let child = machine.command(&["query", "@claude hi"]).spawn().unwrap();
    let plant = planted(&machine);
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap());
    kill(pid, Signal::SIGINT).unwrap();
    // Well inside the first stop's grace (the CLI ignores SIGTERM).
    std::thread::sleep(Duration::from_millis(150));
    kill(pid, Signal::SIGINT).unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(!plant.exists(), "the plant outlived codecrew: {stderr}");
    assert!(stderr.contains("put back as it was"), "{stderr}");
    assert!(!machine.program_runs("claude"), "the CLI outlived codecrew");
    assert_ended(&machine, "query", 130);
}

/// The run store has the run of `command`, recorded as ended with `code`: the end that
/// could not wait still wrote it (else `ps` would call it dead).
fn assert_ended(machine: &World, command: &str, code: i64) {
    let output = machine
        .command(&["logs", "--output", "json"])
        .output()
        .unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let run = &listed["runs"][0];
    assert_eq!(run["command"], command, "{listed:#}");
    assert_eq!(run["exit_code"], code, "{listed:#}");
    assert_eq!(run["status"], "failed", "{listed:#}");
}

/// `codecrew mcp` on stdio, running `query_agent` for a `claude` that plants and hangs,
/// gets `signal` while its client still holds stdin open: it exits `code` within two
/// seconds, the plant put back and the CLI gone.
fn mcp_ends_on(signal: Signal, code: i32) {
    let machine = World::with_claude(PLANTING_CLAUDE);
    std::fs::create_dir_all(machine.home_dir().join(".claude/session-env")).unwrap();
    let mut child = machine
        .command(&["mcp"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let messages = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "query_agent", "arguments": {"task": "@claude hi"}}}),
    ];
    for message in &messages {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let plant = planted(&machine);
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap());
    let signalled = Instant::now();
    kill(pid, signal).unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if signalled.elapsed() > Duration::from_secs(10) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = signalled.elapsed();
    let planted_left = plant.exists();
    let _ = child.kill();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let status = status.unwrap_or_else(|| panic!("codecrew mcp did not end: {stderr}"));
    assert_eq!(status.code(), Some(code), "{stderr}");
    assert!(took < Duration::from_secs(2), "it took {took:?}: {stderr}");
    assert!(!planted_left, "the plant outlived codecrew: {stderr}");
    assert!(!machine.program_runs("claude"), "the CLI outlived codecrew");
    drop(stdin);
    assert_ended(&machine, "mcp", i64::from(code));
}

#[test]
fn sigterm_ends_mcp_on_stdio_with_what_its_agents_held_put_back() {
    mcp_ends_on(Signal::SIGTERM, 143);
}

#[test]
fn sighup_ends_mcp_on_stdio_with_what_its_agents_held_put_back() {
    mcp_ends_on(Signal::SIGHUP, 129);
}

/// `codecrew acp` whose editor goes away mid-prompt (its stdin closed, as when the
/// editor is killed) ends every session: the CLI stopped, what its wall held put back,
/// the session's run ended; before that, a malformed message got a JSON-RPC error and
/// the server went on serving.
#[test]
fn an_editor_gone_mid_prompt_leaves_no_process_and_nothing_held() {
    use std::io::{BufRead, BufReader};
    let machine = World::with_claude(PLANTING_CLAUDE);
    std::fs::create_dir_all(machine.home_dir().join(".claude/session-env")).unwrap();
    let mut child = machine
        .command(&["acp"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |message: &str| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    let mut reply = || -> serde_json::Value {
        let line = lines.next().unwrap().unwrap();
        serde_json::from_str(&line).unwrap()
    };
    send("{this is not json");
    let error = reply();
    assert_eq!(error["error"]["code"], -32700, "{error}");
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
    );
    assert_eq!(reply()["result"]["protocolVersion"], 1);
    let new = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": machine.workspace(), "mcpServers": []}});
    send(&new.to_string());
    let made = reply();
    let session = made["result"]["sessionId"].as_str().unwrap().to_owned();
    let prompt = serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "@claude hi"}]}});
    send(&prompt.to_string());
    let plant = planted(&machine);
    // The editor goes away.
    drop(stdin);
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "codecrew acp did not end"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    assert!(!plant.exists(), "the plant outlived the session");
    assert!(
        !machine.program_runs("claude"),
        "the CLI outlived the session"
    );
    let output = machine
        .command(&["logs", "--output", "json"])
        .output()
        .unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(listed["runs"][0]["command"], "acp", "{listed:#}");
    assert_eq!(listed["runs"][0]["id"], session.as_str());
    assert_ne!(listed["runs"][0]["status"], "not_finished", "{listed:#}");
}
