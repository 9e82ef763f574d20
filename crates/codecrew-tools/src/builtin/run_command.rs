//! `run_command`: a shell command in the workspace, in its own process group.
//!
//! The command runs as `bash -c <command>` with stdin closed, a scrubbed environment
//! (see [`codecrew_policy::secrets::scrub_env`]; `pass_env` lets named variables through) and in a session and
//! process group of its own, so a timeout can kill everything it started, background jobs
//! included, and it has no controlling terminal. In execute mode it is confined by the OS
//! sandbox (see [`codecrew_policy::sandbox`]). Process handling (groups, output caps,
//! timeouts) is [`crate::child`]'s. A non-zero exit is a normal result the model
//! reads; only a failure to start and a timeout are errors.

use std::borrow::Cow;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Duration;

use serde_json::{Value, json};

use super::support::{beneath_error, directory, optional_str, optional_u64, required_str};
use crate::beneath::Beneath;
use crate::child::{self, Captured, ChildError, ChildSpec, Confinement, ERROR_TAIL_CHARS, Ending};
use crate::path::{Access, display, resolve};
use crate::{ErrorCode, Mode, Tool, ToolContext, ToolError, ToolFuture};
use codecrew_policy::sandbox;
use codecrew_policy::secrets::scrub_env_with;

#[derive(Debug)]
pub struct RunCommand;

pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
pub const MAX_TIMEOUT_MS: u64 = 600_000;
pub use crate::child::MAX_STREAM_BYTES;

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
         named *_API_KEY, *TOKEN*, *SECRET*, *PASSWORD*) are not in its environment. \
         Reading commands (ls, cat, grep, find, git status/log/diff/show, ...) run without \
         asking in a read-only sandbox that sees only the workspace and writes nothing; \
         other commands are asked about, and run with write access to the workspace once \
         the user approves."
    }

    fn summary_in(&self, mode: Mode) -> Cow<'_, str> {
        Cow::Borrowed(match mode {
            Mode::Query => {
                "runs a reading bash command (`ls`, `cat`, `grep`, `git log`…) in a read-only \
                 sandbox"
            }
            Mode::Execute => "runs a bash command in the workspace",
        })
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

    fn is_codecrews(&self) -> bool {
        true
    }

    fn query_description(&self) -> Option<&str> {
        Some(
            "Runs a reading shell command with `bash -c` in the workspace (or in `cwd`, a \
             directory inside it) and returns its exit code, stdout and stderr (each cut at \
             1 MiB). This run is read-only: only commands that run without asking are \
             allowed (e.g. `ls`, `cat`, `head`, `wc`, `grep`, `rg`, `find` without \
             `-exec`, `git status`, `git log -p -1`, `git diff`, `git show`), and they run \
             in a read-only OS sandbox that sees only the workspace and the system's \
             programs, writes nothing and has no network. Anything else (writes, \
             redirections to files, other programs, paths outside the workspace) is \
             refused; use `codecrew execute` for those. stdin is closed. The command is \
             killed after `timeout_ms` (default 120000, at most 600000).",
        )
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
                    ErrorCode::InvalidInput,
                    format!("timeout_ms must be between 1 and {MAX_TIMEOUT_MS}, not {timeout_ms}"),
                )
                .with_suggestion("run longer jobs in the background with output to a file"));
            }
            let requested = optional_str(&input, "cwd").unwrap_or(".");
            let cwd = resolve(&ctx.workspace, requested, Access::Read)?;
            let shown = display(&ctx.workspace, &cwd);
            directory(&cwd, &shown)?;
            // The command starts in the directory that was checked, held open beneath the
            // workspace: a link swapped in for it since cannot move the command elsewhere.
            // The child changes into it through the handle (`/proc/self/fd/N`, still open
            // before exec).
            let held = Beneath::open(&ctx.workspace)
                .and_then(|beneath| beneath.open_dir(&cwd))
                .map_err(|error| beneath_error(&shown, error))?;
            let through_handle = PathBuf::from(format!("/proc/self/fd/{}", held.as_raw_fd()));
            let start = if through_handle.is_dir() {
                through_handle
            } else {
                cwd
            };
            let result = run(command, &start, timeout_ms, ctx).await;
            drop(held);
            result
        })
    }
}

async fn run(
    command: &str,
    cwd: &Path,
    timeout_ms: u64,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let read_only = ctx.exec.read_only(ctx.mode);
    let mut env = scrub_env_with(std::env::vars_os(), &ctx.exec.pass_env);
    let confinement = if read_only {
        // The policy lets a command through unasked only where this sandbox holds; should
        // it be missing all the same, the command does not run unconfined.
        if let Some(why) = sandbox::read_only_unavailable(ctx.exec.sandbox) {
            return Err(ToolError::new(
                ErrorCode::Sandbox,
                format!(
                    "this command would run without asking, which codecrew allows only in \
                     the read-only OS sandbox, and {why}; it did not run"
                ),
            ));
        }
        // Git reads without locks, and runs nothing a repository's configuration names.
        codecrew_policy::git::read_only_environment(&mut env);
        Some(Confinement::ReadOnly {
            workspace: ctx.workspace.clone(),
            git: ctx.exec.git.clone(),
        })
    } else {
        ctx.exec.sandbox.then(|| Confinement::Mode {
            // A linked worktree's commits write its repository's git data too.
            writable: std::iter::once(ctx.workspace.clone())
                .chain(ctx.exec.git.write.iter().cloned())
                .collect(),
            allow_network: ctx.exec.allow_network,
        })
    };
    let spec = ChildSpec {
        program: "bash".into(),
        args: vec!["-c".into(), command.into()],
        cwd: cwd.to_path_buf(),
        env,
        stdin: None,
        timeout: Duration::from_millis(timeout_ms),
        confinement,
    };
    let finished = child::run(spec).await.map_err(|error| match error {
        ChildError::Sandbox(_) => ToolError::new(
            ErrorCode::Sandbox,
            format!("{error}, so the command did not run"),
        ),
        ChildError::Spawn { .. } => ToolError::new(ErrorCode::Spawn, error.to_string())
            .with_suggestion("codecrew needs bash on the PATH to run commands"),
        ChildError::Wait(_) => ToolError::new(ErrorCode::Io, error.to_string()),
    })?;
    let duration_ms = u64::try_from(finished.duration.as_millis()).unwrap_or(u64::MAX);
    let (out, err) = (&finished.stdout, &finished.stderr);
    match finished.ending {
        Ending::TimedOut => Err(ToolError::new(
            ErrorCode::Timeout,
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
            let mut output = result(status, lingering, out, err, duration_ms);
            if read_only {
                super::refusals::describe(&mut output, err);
            }
            Ok(output)
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

    use std::time::Instant;

    use nix::sys::signal::killpg;
    use nix::unistd::Pid;

    use super::*;
    use crate::builtin::support::test_support::Workspace;
    use codecrew_policy::secrets::scrub_env;

    async fn run_ok(ws: &Workspace, input: Value) -> Value {
        ws.call(&RunCommand, input).await.unwrap()
    }

    /// The processes of group `pgid` that are still running. Zombies do not count: they
    /// are dead, waiting for a parent to reap them, and in a container whose init does
    /// not reap orphans they stay forever.
    fn live_members(pgid: i32) -> Vec<i32> {
        codecrew_policy::process::pids()
            .into_iter()
            .filter(|pid| {
                codecrew_policy::process::stat(*pid).is_some_and(|s| s.pgrp == pgid && !s.zombie)
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
        assert_eq!(error.code, ErrorCode::Timeout);
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
            ErrorCode::InvalidInput
        );
        assert_eq!(
            code(json!({"command": "true", "cwd": ".."})).await,
            ErrorCode::PathOutsideWorkspace
        );
        assert_eq!(
            code(json!({"command": "true", "cwd": "file"})).await,
            ErrorCode::NotADirectory
        );
        assert_eq!(
            code(json!({"command": "true", "cwd": "missing"})).await,
            ErrorCode::NotFound
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
