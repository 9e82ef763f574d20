//! `run_command`: a shell command in the workspace, in its own process group.
//!
//! The command runs as `bash -c <command>` with stdin closed, a scrubbed environment
//! (see [`scrub_env`]; `pass_env` lets named variables through) and in a session and
//! process group of its own, so a timeout can kill everything it started, background jobs
//! included, and it has no controlling terminal. In execute mode it is confined by the OS
//! sandbox (see [`crate::permission::sandbox`]). Every group is registered, so whatever a
//! command leaves running is killed when codecrew exits. Both output streams are drained concurrently (a
//! full pipe would stall the command) and each keeps its first [`MAX_STREAM_BYTES`]; the
//! rest is read and dropped. A non-zero exit is a normal result the model reads; only a
//! failure to start and a timeout are errors.

use std::ffi::OsString;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::time::sleep_until;

use super::support::{directory, optional_str, optional_u64, required_str};
use crate::permission::secrets::is_secret;
use crate::permission::{process, sandbox};
use crate::tool::path::{Access, display, resolve};
use crate::tool::{Mode, Tool, ToolContext, ToolError, ToolFuture};

#[derive(Debug)]
pub struct RunCommand;

pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// The most of each stream (stdout, stderr) a result keeps.
pub const MAX_STREAM_BYTES: usize = 1024 * 1024;
/// After the shell exits, how long processes it left in the background may keep its
/// output pipes open before they are stopped.
const EXIT_GRACE: Duration = Duration::from_secs(2);
/// After the group is killed, how long to wait for the pipes to close and the shell to
/// be reaped (only a process that left the group can hold them longer).
const KILL_GRACE: Duration = Duration::from_secs(5);
/// How much of each stream a timeout error quotes (its end, the most telling part).
const ERROR_TAIL_CHARS: usize = 8000;

impl Tool for RunCommand {
    fn name(&self) -> &str {
        "run_command"
    }

    fn description(&self) -> &str {
        "Runs a shell command with `bash -c` in the workspace (or in `cwd`, a directory \
         inside it) and returns its exit code, stdout and stderr (each cut at 1 MiB). \
         stdin is closed, so interactive commands fail; pass flags like `--yes`. A non-zero \
         exit code is reported, not an error. The command and everything it started are \
         killed after `timeout_ms` (default 120000, at most 600000). Secrets (variables \
         named *_API_KEY, *TOKEN*, *SECRET*, *PASSWORD*) are not in its environment."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The bash command line, e.g. \"cargo test 2>&1 | tail -20\""
                },
                "timeout_ms": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_TIMEOUT_MS,
                    "description": "Kill the command after this many milliseconds (default 120000, max 600000)"
                },
                "cwd": {
                    "type": "string",
                    "description": "The working directory, relative to the workspace root (default \".\")"
                }
            },
            "required": ["command"],
            "additionalProperties": false
        })
    }

    fn readonly(&self) -> bool {
        false
    }

    /// Above the longest `timeout_ms`: the tool kills the process group itself, which the
    /// executor's timeout (dropping the future) could only do less gracefully.
    fn timeout(&self) -> Duration {
        Duration::from_secs(11 * 60)
    }

    /// Timeout errors quote the output so far.
    fn max_error_chars(&self) -> usize {
        2 * ERROR_TAIL_CHARS + 1000
    }

    fn execute<'a>(&'a self, ctx: &'a ToolContext, input: Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let command = required_str(&input, "command")?;
            let timeout_ms = optional_u64(&input, "timeout_ms").unwrap_or(DEFAULT_TIMEOUT_MS);
            if !(1..=MAX_TIMEOUT_MS).contains(&timeout_ms) {
                return Err(ToolError::new(
                    "E_INVALID_INPUT",
                    format!("timeout_ms must be between 1 and {MAX_TIMEOUT_MS}, not {timeout_ms}"),
                )
                .with_suggestion("run longer jobs in the background with output to a file"));
            }
            let requested = optional_str(&input, "cwd").unwrap_or(".");
            let cwd = resolve(&ctx.workspace, requested, Access::Read)?;
            directory(&cwd, &display(&ctx.workspace, &cwd))?;
            run(command, &cwd, timeout_ms, ctx).await
        })
    }
}

/// The environment for a command: the given variables minus the secrets.
pub fn scrub_env<I, K, V>(vars: I) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (K, V)>,
    K: Into<OsString>,
    V: Into<OsString>,
{
    scrub_env_with(vars, &[])
}

/// The environment for a command: the given variables minus the secrets and the
/// variables that change how shells and programs start, except those named in `pass`
/// (the config's `pass_env`, exact names).
pub fn scrub_env_with<I, K, V>(vars: I, pass: &[String]) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (K, V)>,
    K: Into<OsString>,
    V: Into<OsString>,
{
    vars.into_iter()
        .map(|(key, value)| (key.into(), value.into()))
        .filter(|(key, _)| {
            let name = key.to_string_lossy();
            !(is_secret(&name) || is_start_up_hook(&name)) || pass.iter().any(|kept| *kept == name)
        })
        .collect()
}

/// Variables that make bash or the loader run code before the command does.
fn is_start_up_hook(name: &str) -> bool {
    name.starts_with("BASH_FUNC_")
        || matches!(
            name,
            "BASH_ENV"
                | "ENV"
                | "LD_PRELOAD"
                | "LD_AUDIT"
                | "PROMPT_COMMAND"
                | "SHELLOPTS"
                | "BASHOPTS"
        )
}

/// One output stream: its first MAX_STREAM_BYTES and how much there was.
#[derive(Debug, Default)]
struct Captured {
    kept: Vec<u8>,
    total: u64,
}

impl Captured {
    fn truncated(&self) -> bool {
        self.total > self.kept.len() as u64
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.kept).into_owned()
    }

    /// The end of the stream, for error messages.
    fn tail(&self) -> String {
        let text = self.text();
        let chars = text.chars().count();
        if chars <= ERROR_TAIL_CHARS {
            return text;
        }
        let skipped: String = text.chars().skip(chars - ERROR_TAIL_CHARS).collect();
        format!(
            "[… {} characters before]{skipped}",
            chars - ERROR_TAIL_CHARS
        )
    }
}

/// Reads a pipe to its end, keeping the first MAX_STREAM_BYTES. Reading goes on past the
/// cap, so the command never blocks on a full pipe.
async fn drain(pipe: Option<impl AsyncRead + Unpin>, into: &mut Captured) {
    let Some(mut pipe) = pipe else {
        return;
    };
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match pipe.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => {
                let room = MAX_STREAM_BYTES.saturating_sub(into.kept.len());
                into.kept.extend_from_slice(&buffer[..read.min(room)]);
                into.total += read as u64;
            }
        }
    }
}

/// Kills the command's process group when dropped (the call was abandoned) unless
/// disarmed after a normal end.
struct GroupKill(Option<Pid>);

impl GroupKill {
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            // ESRCH (nobody left) is the good case; nothing else can be done about others.
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    }
}

impl Drop for GroupKill {
    fn drop(&mut self) {
        self.kill();
    }
}

/// How the wait for the command ended.
enum Ending {
    /// The shell exited; `lingering` when background processes still held its pipes.
    Exited {
        status: ExitStatus,
        lingering: bool,
    },
    TimedOut,
}

async fn run(
    command: &str,
    cwd: &Path,
    timeout_ms: u64,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let started = Instant::now();
    let mut bash = Command::new("bash");
    bash.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env_clear()
        .envs(scrub_env_with(std::env::vars_os(), &ctx.exec.pass_env))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let ruleset = if ctx.mode == Mode::Execute && ctx.exec.sandbox {
        sandbox::ruleset(&ctx.workspace, ctx.exec.allow_network).map_err(|error| {
            ToolError::new(
                "E_SANDBOX",
                format!("the OS sandbox could not be set up, so the command did not run: {error}"),
            )
        })?
    } else {
        None
    };
    // Its own session and group (pgid = its pid), so killpg reaches every process it
    // starts; then the sandbox, if any.
    sandbox::confine(&mut bash, ruleset);
    let mut child = bash.spawn().map_err(|error| {
        ToolError::new("E_SPAWN", format!("could not start bash: {error}"))
            .with_suggestion("codecrew needs bash on the PATH to run commands")
    })?;
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    if let Some(pgid) = pgid {
        process::register(pgid);
    }
    let mut group = GroupKill(pgid.map(Pid::from_raw));
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let mut out = Captured::default();
    let mut err = Captured::default();
    let deadline = tokio::time::Instant::now() + Duration::from_millis(timeout_ms);

    let ending = {
        let mut drains = Box::pin(async {
            tokio::join!(drain(stdout, &mut out), drain(stderr, &mut err));
        });
        let mut status = None;
        let mut exited_at = deadline;
        let mut drained = false;
        let ending = loop {
            if let (Some(status), true) = (status, drained) {
                break Ok(Ending::Exited {
                    status,
                    lingering: false,
                });
            }
            tokio::select! {
                waited = child.wait(), if status.is_none() => match waited {
                    Ok(exit) => {
                        status = Some(exit);
                        exited_at = tokio::time::Instant::now();
                    }
                    Err(error) => break Err(ToolError::new(
                        "E_IO",
                        format!("waiting for the command failed: {error}"),
                    )),
                },
                () = &mut drains, if !drained => drained = true,
                () = sleep_until(deadline), if status.is_none() => break Ok(Ending::TimedOut),
                () = sleep_until(exited_at + EXIT_GRACE), if status.is_some() => {
                    if let Some(status) = status {
                        break Ok(Ending::Exited { status, lingering: true });
                    }
                }
            }
        };
        let stopped = matches!(
            ending,
            Ok(Ending::TimedOut
                | Ending::Exited {
                    lingering: true,
                    ..
                })
                | Err(_)
        );
        if stopped {
            group.kill();
            if !drained {
                // Whatever the killed processes wrote is still in the pipes.
                let _ = tokio::time::timeout(KILL_GRACE, &mut drains).await;
            }
        }
        ending
    };
    if matches!(ending, Ok(Ending::TimedOut) | Err(_)) {
        // Reap the killed shell; it died with SIGKILL, so this is immediate.
        let _ = tokio::time::timeout(KILL_GRACE, child.wait()).await;
    } else {
        // A normal end: processes the command left running on purpose (with their
        // output redirected) are its business.
        group.0 = None;
    }
    if let Some(pgid) = pgid {
        // Still registered while something of it runs: killed when codecrew exits.
        process::release_if_empty(pgid);
    }
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    match ending? {
        Ending::TimedOut => Err(ToolError::new(
            "E_TIMEOUT",
            format!(
                "the command did not finish within {timeout_ms} ms; it was killed with every \
                 process it started\nstdout so far:\n{}\nstderr so far:\n{}",
                out.tail(),
                err.tail()
            ),
        )
        .with_suggestion(format!(
            "raise timeout_ms (at most {MAX_TIMEOUT_MS}) or run long jobs in the background \
             with their output redirected to a file"
        ))),
        Ending::Exited { status, lingering } => {
            Ok(result(status, lingering, &out, &err, duration_ms))
        }
    }
}

fn result(
    status: ExitStatus,
    lingering: bool,
    out: &Captured,
    err: &Captured,
    duration_ms: u64,
) -> Value {
    use std::os::unix::process::ExitStatusExt;

    let mut output = json!({
        "exit_code": status.code(),
        "stdout": out.text(),
        "stderr": err.text(),
        "truncated": out.truncated() || err.truncated(),
        "duration_ms": duration_ms,
    });
    if let Some(signal) = status.signal() {
        output["signal"] = json!(signal);
    }
    if out.truncated() || err.truncated() {
        output["note"] = json!(format!(
            "output cut at {MAX_STREAM_BYTES} bytes per stream (stdout had {}, stderr {}); \
             redirect to a file and read parts of it",
            out.total, err.total
        ));
    }
    if lingering {
        output["background"] = json!(
            "processes left running in the background still held the output and were \
             stopped; redirect their output (e.g. `cmd > log 2>&1 &`) to keep them running"
        );
    }
    output
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tool::builtin::support::test_support::Workspace;

    async fn run_ok(ws: &Workspace, input: Value) -> Value {
        ws.call(&RunCommand, input).await.unwrap()
    }

    /// The processes of group `pgid` that are still running. Zombies do not count: they
    /// are dead, waiting for a parent to reap them, and in a container whose init does
    /// not reap orphans they stay forever.
    fn live_members(pgid: i32) -> Vec<i32> {
        crate::permission::process::pids()
            .into_iter()
            .filter(|pid| {
                crate::permission::process::stat(*pid).is_some_and(|s| s.pgrp == pgid && !s.zombie)
            })
            .collect()
    }

    #[tokio::test]
    async fn reports_exit_code_and_both_streams() {
        let ws = Workspace::new();
        let output = run_ok(&ws, json!({"command": "echo out; echo err >&2; exit 3"})).await;
        assert_eq!(output["exit_code"], 3);
        assert_eq!(output["stdout"], "out\n");
        assert_eq!(output["stderr"], "err\n");
        assert_eq!(output["truncated"], false);
        assert!(output["duration_ms"].is_u64());
        assert!(output.get("signal").is_none());
    }

    #[tokio::test]
    async fn runs_in_the_workspace_or_cwd_with_stdin_closed() {
        let ws = Workspace::new();
        ws.write("sub/file", "");
        let root = run_ok(&ws, json!({"command": "pwd; cat; echo done"})).await;
        let expected = format!("{}\ndone\n", ws.root().display());
        assert_eq!(root["stdout"], expected);
        let sub = run_ok(&ws, json!({"command": "pwd", "cwd": "sub"})).await;
        assert_eq!(
            sub["stdout"],
            format!("{}\n", ws.root().join("sub").display())
        );
    }

    #[tokio::test]
    async fn a_signal_is_reported() {
        let ws = Workspace::new();
        let output = run_ok(&ws, json!({"command": "kill -KILL $$"})).await;
        assert_eq!(output["exit_code"], Value::Null);
        assert_eq!(output["signal"], 9);
    }

    #[tokio::test]
    async fn output_is_capped_but_fully_drained() {
        let ws = Workspace::new();
        // 3 MiB on stdout and 2 MiB on stderr: if reading stopped at the cap, the writer
        // would block on the full pipe and the command would time out.
        let output = run_ok(
            &ws,
            json!({
                "command": "head -c 3145728 /dev/zero | tr '\\0' a; head -c 2097152 /dev/zero | tr '\\0' b >&2; echo end >&2",
                "timeout_ms": 60000,
            }),
        )
        .await;
        assert_eq!(output["exit_code"], 0);
        assert_eq!(output["truncated"], true);
        assert_eq!(output["stdout"].as_str().unwrap().len(), MAX_STREAM_BYTES);
        assert_eq!(output["stderr"].as_str().unwrap().len(), MAX_STREAM_BYTES);
        assert!(output["note"].as_str().unwrap().contains("3145728"));
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group() {
        let ws = Workspace::new();
        let error = ws
            .error(
                &RunCommand,
                json!({"command": "echo $$; sleep 100 & sleep 100", "timeout_ms": 500}),
            )
            .await;
        assert_eq!(error.code, "E_TIMEOUT");
        let pgid: i32 = error
            .message
            .lines()
            .skip_while(|line| *line != "stdout so far:")
            .nth(1)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Killing is immediate; reaping by the new parent of the orphaned `sleep` may
        // take a moment. Generous bound, no timing assumption.
        let gone =
            |pgid| killpg(Pid::from_raw(pgid), None).is_err() || live_members(pgid).is_empty();
        let start = Instant::now();
        while !gone(pgid) && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(
            live_members(pgid),
            Vec::<i32>::new(),
            "group {pgid} survived"
        );
        assert!(gone(pgid));
    }

    #[tokio::test]
    async fn background_processes_holding_the_output_are_stopped() {
        let ws = Workspace::new();
        let output = run_ok(
            &ws,
            json!({"command": "echo started; sleep 100 &", "timeout_ms": 60000}),
        )
        .await;
        assert_eq!(output["exit_code"], 0);
        assert_eq!(output["stdout"], "started\n");
        assert!(output["background"].is_string());
    }

    #[tokio::test]
    async fn input_errors() {
        let ws = Workspace::new();
        ws.write("file", "");
        let code = async |input: Value| ws.error(&RunCommand, input).await.code;
        assert_eq!(
            code(json!({"command": "true", "timeout_ms": MAX_TIMEOUT_MS + 1})).await,
            "E_INVALID_INPUT"
        );
        assert_eq!(
            code(json!({"command": "true", "cwd": ".."})).await,
            "E_PATH_OUTSIDE_WORKSPACE"
        );
        assert_eq!(
            code(json!({"command": "true", "cwd": "file"})).await,
            "E_NOT_A_DIRECTORY"
        );
        assert_eq!(
            code(json!({"command": "true", "cwd": "missing"})).await,
            "E_NOT_FOUND"
        );
    }

    #[test]
    fn scrub_env_drops_secrets_only() {
        let vars = [
            ("PATH", "/bin"),
            ("HOME", "/home/me"),
            ("OPENAI_API_KEY", "sk"),
            ("GITHUB_TOKEN", "t"),
            ("github_token", "t"),
            ("CI_JOB_TOKEN_FILE", "t"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
            ("DB_PASSWORD", "p"),
            ("SSH_AUTH_SOCK", "/tmp/agent"),
            ("API_KEY_HINT", "kept: the name does not end in _API_KEY"),
        ];
        let kept: Vec<String> = scrub_env(vars)
            .into_iter()
            .map(|(key, _)| key.to_string_lossy().into_owned())
            .collect();
        assert_eq!(kept, ["PATH", "HOME", "API_KEY_HINT"]);
    }

    #[test]
    fn its_timeout_outlasts_the_longest_command() {
        assert!(RunCommand.timeout() > Duration::from_millis(MAX_TIMEOUT_MS));
        assert!(!RunCommand.readonly());
    }
}
