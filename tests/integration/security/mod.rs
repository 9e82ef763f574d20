//! The security suite: every rule of the permission layer attacked through the real
//! binary (`codecrew tools call ... --mode execute` and `codecrew intercept`). Every
//! attack must fail closed: status denied or error, nothing written outside the
//! workspace, no secret printed, no process left behind.
//!
//! The binary runs with stdin and stderr not on a terminal, so a call that would ask is
//! denied (unless the test passes `--yes`). Environments are set on the child only; the
//! test process's own environment is never changed.

use std::collections::HashSet;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::binary::{BIN, output_with_stdin, text, tool_result, tools_call_args};
use crate::support::{AgentScript, Answer, Turn, World};
const SECRET: &str = "sk-codecrew-test-secret-7f3a9";

/// A world outside `/tmp` (which the sandbox lets commands write) whose workspace holds a
/// secret and a source file, with a folder outside the workspace, the secret in it, and
/// the secret in codecrew's environment under the names a key has.
struct Ws {
    world: World,
    /// The workspace, as the kernel resolves it.
    root: PathBuf,
    /// A folder beside the workspace, outside it.
    outside: PathBuf,
}

impl Ws {
    fn new() -> Self {
        Ws::of(World::outside_tmp())
    }

    /// The same in `world` (a world with agents of the test's).
    fn of(world: World) -> Self {
        let world = world
            .env("FAKE_API_KEY", SECRET)
            .env("GITHUB_TOKEN", SECRET)
            .env("MY_SECRET", SECRET)
            .env("SSH_AUTH_SOCK", "/tmp/agent.sock");
        let root = world.workspace().canonicalize().unwrap();
        let outside = world.path("outside");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(root.join(".env"), format!("API_KEY={SECRET}\n")).unwrap();
        std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
        Ws {
            world,
            root,
            outside,
        }
    }

    fn write(&self, relative: &str, content: &str) {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    fn exists(&self, relative: &str) -> bool {
        self.root.join(relative).symlink_metadata().is_ok()
    }

    /// `codecrew --workdir WORKSPACE ARGS` in the world.
    fn command(&self, args: &[&str]) -> Command {
        let mut all = vec!["--workdir", self.root.to_str().unwrap()];
        all.extend_from_slice(args);
        self.world.command(&all)
    }

    /// `codecrew tools call TOOL --input INPUT --mode MODE [--yes]`: the result and the
    /// whole stdout (to search for leaks).
    fn call_in(&self, mode: &str, yes: bool, tool: &str, input: Value) -> (Value, String) {
        let input = input.to_string();
        let args = tools_call_args(tool, &input, mode, yes);
        let output = self.command(&args).output().unwrap();
        (tool_result(&output), text(&output.stdout))
    }

    fn call(&self, tool: &str, input: Value) -> Value {
        self.call_in("execute", false, tool, input).0
    }

    fn call_yes(&self, tool: &str, input: Value) -> Value {
        self.call_in("execute", true, tool, input).0
    }

    fn run(&self, command: &str) -> Value {
        self.call("run_command", json!({ "command": command }))
    }

    fn run_yes(&self, command: &str) -> Value {
        self.call_yes("run_command", json!({ "command": command }))
    }

    /// `codecrew intercept` with `stdin` piped in; the JSON report and the raw stdout.
    fn intercept(&self, args: &[&str], stdin: &str) -> (Option<Value>, String) {
        let mut all = vec!["intercept"];
        all.extend_from_slice(args);
        let output = output_with_stdin(&mut self.command(&all), stdin);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        (serde_json::from_str(&stdout).ok(), stdout)
    }
}

/// The attack failed closed: denied or error, and the secret is not in the result.
#[track_caller]
fn closed(result: &Value) {
    assert!(
        result["status"] == "denied" || result["status"] == "error",
        "the attack was not stopped: {result:#}"
    );
    assert!(
        !result.to_string().contains(SECRET),
        "the secret leaked: {result:#}"
    );
}

#[track_caller]
fn denied(result: &Value) {
    assert_eq!(result["status"], "denied", "{result:#}");
    assert_eq!(result["error"]["code"], "E_PERMISSION_DENIED", "{result:#}");
    assert!(!result.to_string().contains(SECRET), "{result:#}");
}

#[track_caller]
fn ok(result: &Value) {
    assert_eq!(result["status"], "ok", "{result:#}");
}

fn envelope(tool: &str, input: Value) -> String {
    json!({"type": "tool_use", "name": format!("codecrew:{tool}"), "input": input}).to_string()
}

/// Processes whose command line holds `marker` (zombies and codecrew itself, whose
/// arguments hold the command, excluded).
fn processes_with(marker: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|stat| {
                stat.rfind(')')
                    .map(|at| stat[at + 1..].trim_start().starts_with('Z'))
            })
            .unwrap_or(true);
        let cmdline = String::from_utf8_lossy(&cmdline);
        if !zombie && cmdline.contains(marker) && !cmdline.contains(BIN) {
            found.push(pid);
        }
    }
    found
}

#[track_caller]
fn no_process_left(marker: &str) {
    let start = Instant::now();
    while !processes_with(marker).is_empty() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = processes_with(marker);
    for pid in &left {
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
    }
    assert!(left.is_empty(), "processes left behind: {left:?}");
}

fn marker(name: &str) -> String {
    format!(
        "codecrew-{name}-{}-{}",
        std::process::id(),
        Instant::now().elapsed().as_nanos()
    )
}

mod cli_process;
mod deny_depth;
mod injection;
mod options;
mod paths;
mod processes;
mod shell;
mod unattended;
