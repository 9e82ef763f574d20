//! Running one CLI turn: spawn, stream stdout, drain stderr, and stop it cleanly.
//!
//! The discipline, in one place: stdin is null (or fed the prompt, then closed), the child
//! leads its own process group, stdout and stderr are drained concurrently (a noisy stderr
//! can never block the child), stderr keeps only its tail, and a timeout or a cancel
//! (Ctrl-C) kills the whole group — the CLI and anything it started.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use codecrew_policy::spawn::{Apart, Walls};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio::process::Command;
use tokio::sync::watch;

use super::child::{self, CliChild, Start};

/// How much of stderr is kept: its last bytes, for error messages.
const STDERR_TAIL: usize = 8 * 1024;
/// Read buffer for stdout.
const CHUNK: usize = 64 * 1024;
/// The most a group being stopped gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_millis(500);

/// A command to run.
#[derive(Debug, Clone, Default)]
pub struct CommandSpec {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// Variables to set on top of the inherited environment.
    pub env: Vec<(OsString, OsString)>,
    /// Inherited variables to remove.
    pub env_remove: Vec<OsString>,
    /// Bytes written to stdin before it is closed; `None` means stdin is null.
    pub stdin: Option<Vec<u8>>,
    pub cwd: Option<PathBuf>,
    /// The wall the process runs in ([`crate::wall`]); None runs it unconfined.
    pub confinement: Option<crate::wall::Confinement>,
    /// Files codecrew wrote for the command to read (a policy file named on its command
    /// line): readable inside its wall, removed when the last holder is dropped.
    pub files: Vec<std::sync::Arc<tempfile::TempPath>>,
}

impl CommandSpec {
    /// Lets the command also read `dirs` inside its wall, if it has one.
    pub fn read_also(&mut self, dirs: &[PathBuf]) {
        if let Some(confinement) = &mut self.confinement {
            confinement.wall.install.extend(dirs.iter().cloned());
        }
    }

    /// Lets the CLI, in a linked worktree codecrew made, reach its repository's git
    /// data (write it only in `execute`: the wall decides).
    pub fn with_git(&mut self, git: &codecrew_policy::sandbox::LinkedGit) {
        if let Some(confinement) = &mut self.confinement {
            confinement.wall.git = git.clone();
        }
    }

    /// The command line, for logs and error messages (the prompt is not in it when it
    /// goes through stdin).
    pub fn display(&self) -> String {
        std::iter::once(self.program.as_os_str())
            .chain(self.args.iter().map(OsString::as_os_str))
            .map(|arg| {
                let arg = arg.to_string_lossy();
                if arg.len() > 80 {
                    format!("{}…", arg.chars().take(80).collect::<String>())
                } else {
                    arg.into_owned()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// The process exited with this code.
    Exited(i32),
    /// The process was killed by a signal it did not get from us.
    Signalled(i32),
    /// The timeout passed; the group was killed.
    TimedOut,
    /// The run was cancelled (Ctrl-C); the group was killed.
    Cancelled,
    /// The stdout cap was passed; the group was killed.
    Flooded,
    /// A CLI kept running for the whole loop ([`crate::drive::resident`]) finished its turn and
    /// waits for the next one.
    TurnEnded,
}

/// What a run left behind.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub ending: Ending,
    /// The last bytes of stderr, lossily decoded.
    pub stderr_tail: String,
    pub stdout_bytes: u64,
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot start {program}: {source}")]
pub struct SpawnError {
    pub program: String,
    #[source]
    pub source: std::io::Error,
}

/// Limits of one run.
#[derive(Debug, Clone)]
pub struct RunLimits {
    pub timeout: Duration,
    /// Stdout bytes after which the CLI is stopped as flooding.
    pub max_stdout_bytes: u64,
}

/// Runs `spec`, calling `on_stdout` with every chunk of stdout as it arrives.
pub async fn run(
    spec: &CommandSpec,
    limits: &RunLimits,
    mut cancel: watch::Receiver<bool>,
    mut on_stdout: impl FnMut(&[u8]),
) -> Result<Outcome, SpawnError> {
    let (mut child, group) = spawn(spec, spec.stdin.is_some())?;
    if let (Some(input), Some(mut stdin)) = (spec.stdin.clone(), child.stdin.take()) {
        // Written from its own task: a CLI that prints before reading all its stdin must
        // not deadlock against us.
        tokio::spawn(async move {
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        });
    }
    let stderr_task = child.stderr.take().map(|stderr| {
        let tail = Arc::new(Mutex::new(Vec::new()));
        let task = tokio::spawn(drain_stderr(stderr, tail.clone()));
        async move {
            let _ = task.await;
            tail_text(&tail)
        }
    });

    let mut stdout = child.stdout.take();
    let mut buffer = vec![0u8; CHUNK];
    let mut stdout_bytes = 0u64;
    let deadline = tokio::time::sleep(limits.timeout);
    tokio::pin!(deadline);
    let mut stop: Option<Ending> = None;
    while let Some(out) = stdout.as_mut() {
        tokio::select! {
            read = out.read(&mut buffer) => match read {
                Ok(0) | Err(_) => stdout = None,
                Ok(read) => {
                    stdout_bytes += read as u64;
                    on_stdout(&buffer[..read]);
                    if stdout_bytes > limits.max_stdout_bytes {
                        stop = Some(Ending::Flooded);
                        break;
                    }
                }
            },
            () = &mut deadline => {
                stop = Some(Ending::TimedOut);
                break;
            }
            changed = cancel.changed() => {
                if changed.is_err() || *cancel.borrow() {
                    stop = Some(Ending::Cancelled);
                    break;
                }
            }
        }
    }
    let ending = match stop {
        Some(ending) => {
            group.stop(&mut child).await;
            ending
        }
        None => wait_for_exit(&mut child, &mut deadline, &mut cancel, &group).await,
    };
    let stderr_tail = match stderr_task {
        Some(task) => tokio::time::timeout(Duration::from_secs(2), task)
            .await
            .unwrap_or_default(),
        None => String::new(),
    };
    // Whatever the CLI left running in its group goes with it.
    group.kill_now();
    Ok(Outcome {
        ending,
        stderr_tail,
        stdout_bytes,
    })
}

/// Spawns `spec` as the leader of its own process group, stdout and stderr piped, stdin
/// piped or null: without `fork` where it can ([`super::child`]), else through tokio.
/// The guard kills the group when dropped.
pub(crate) fn spawn(spec: &CommandSpec, stdin: bool) -> Result<(CliChild, GroupGuard), SpawnError> {
    let failed = |source| SpawnError {
        program: spec.program.display().to_string(),
        source,
    };
    // A session of its own (so no controlling terminal: the CLI cannot read the keys
    // typed at a permission prompt), and the wall.
    let domain = spec
        .confinement
        .as_ref()
        .map(|confinement| confinement.wall.domain())
        .transpose()
        .map_err(|error| {
            failed(std::io::Error::other(format!(
                "cannot build its sandbox: {error}"
            )))
        })?;
    let env = environment(spec);
    let child = match child::spawnable(&spec.program, &env, spec.cwd.as_deref()) {
        Some(program) => {
            let apart = match domain {
                Some(_) => Apart::Session,
                None => Apart::Group,
            };
            let walls = domain.map(|domain| {
                let (ruleset, filter) = domain.into_parts();
                Walls { ruleset, filter }
            });
            child::spawn(
                &program,
                Start {
                    arg0: spec.program.as_os_str(),
                    args: &spec.args,
                    env,
                    cwd: spec.cwd.as_deref(),
                    stdin,
                    apart,
                    walls,
                },
            )
        }
        None => forked(spec, stdin, domain),
    }
    .map_err(failed)?;
    // Registered: what the CLI starts in its group dies with codecrew, even a killed one.
    if let Some(pgid) = child.id().and_then(|id| i32::try_from(id).ok()) {
        codecrew_policy::process::register(pgid);
    }
    let group = GroupGuard(child.id());
    Ok((child, group))
}

/// The variables `spec` runs with: codecrew's, but those it removes, with its own on top.
/// Never the token of a `codecrew mcp --http` server: with it, an agent could call the
/// server (in a mode above its own) from inside its wall.
fn environment(spec: &CommandSpec) -> Vec<(OsString, OsString)> {
    let mut env: BTreeMap<OsString, OsString> = std::env::vars_os()
        .filter(|(name, _)| {
            name != codecrew_config::MCP_TOKEN_ENV && !spec.env_remove.contains(name)
        })
        .collect();
    env.extend(spec.env.iter().cloned());
    env.into_iter().collect()
}

/// The start through tokio's `Command` (a `fork`; the walls made in the child), where
/// [`child::spawnable`] says the start without it cannot be used.
fn forked(
    spec: &CommandSpec,
    stdin: bool,
    domain: Option<codecrew_policy::sandbox::Domain>,
) -> std::io::Result<CliChild> {
    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .env_clear()
        .envs(environment(spec));
    if let Some(cwd) = &spec.cwd {
        command.current_dir(cwd);
    }
    match domain {
        Some(domain) => codecrew_policy::sandbox::confine(&mut command, domain),
        None => {
            command.process_group(0);
        }
    }
    codecrew_policy::lifeline::die_with_codecrew(&mut command);
    child::forked(command.spawn()?)
}

/// Reads stderr to its end, keeping its last [`STDERR_TAIL`] bytes in `tail`: a noisy
/// stderr can never block the child.
pub(crate) async fn drain_stderr(mut stderr: pipe::Receiver, tail: Arc<Mutex<Vec<u8>>>) {
    let mut buffer = vec![0u8; 8192];
    while let Ok(read) = stderr.read(&mut buffer).await {
        if read == 0 {
            break;
        }
        let Ok(mut tail) = tail.lock() else {
            break;
        };
        tail.extend_from_slice(&buffer[..read]);
        if tail.len() > 2 * STDERR_TAIL {
            let cut = tail.len() - STDERR_TAIL;
            tail.drain(..cut);
        }
    }
}

/// The last [`STDERR_TAIL`] bytes kept by [`drain_stderr`], lossily decoded.
pub(crate) fn tail_text(tail: &Mutex<Vec<u8>>) -> String {
    let Ok(tail) = tail.lock() else {
        return String::new();
    };
    let start = tail.len().saturating_sub(STDERR_TAIL);
    String::from_utf8_lossy(&tail[start..]).into_owned()
}

pub(crate) async fn wait_for_exit(
    child: &mut CliChild,
    deadline: &mut std::pin::Pin<&mut tokio::time::Sleep>,
    cancel: &mut watch::Receiver<bool>,
    group: &GroupGuard,
) -> Ending {
    loop {
        tokio::select! {
            status = child.wait() => {
                return match status {
                    Ok(status) => match status.code() {
                        Some(code) => Ending::Exited(code),
                        None => {
                            use std::os::unix::process::ExitStatusExt;
                            Ending::Signalled(status.signal().unwrap_or(0))
                        }
                    },
                    Err(_) => Ending::Exited(-1),
                };
            }
            () = deadline.as_mut() => {
                group.stop(child).await;
                return Ending::TimedOut;
            }
            changed = cancel.changed() => {
                if changed.is_err() || *cancel.borrow() {
                    group.stop(child).await;
                    return Ending::Cancelled;
                }
            }
        }
    }
}

/// The child's process group; killed when dropped, so that no path out of `run` (an
/// early return, a panic, a dropped future) leaves the CLI running.
pub(crate) struct GroupGuard(Option<u32>);

impl GroupGuard {
    fn pgid(&self) -> Option<nix::unistd::Pid> {
        let id = self.0?;
        i32::try_from(id).ok().map(nix::unistd::Pid::from_raw)
    }

    /// Stops the group led by `child`: SIGTERM, then SIGKILL to whatever is left once
    /// the leader has exited or after a short grace; the leader reaped. (The grace is not
    /// waited out for a CLI that ends at once: Ctrl-C is that much quicker.)
    pub(crate) async fn stop(&self, child: &mut CliChild) {
        use nix::sys::signal::{Signal, killpg};
        if let Some(pgid) = self.pgid()
            && killpg(pgid, Signal::SIGTERM).is_ok()
        {
            let _ = tokio::time::timeout(GRACE, child.wait()).await;
        }
        self.kill_now();
        let _ = child.wait().await;
    }

    pub(crate) fn kill_now(&self) {
        use nix::sys::signal::{Signal, killpg};
        if let Some(pgid) = self.pgid() {
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill_now();
        if let Some(pgid) = self.pgid() {
            codecrew_policy::process::release_if_empty(pgid.as_raw());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(script: &str) -> CommandSpec {
        CommandSpec {
            program: "bash".into(),
            args: vec!["-c".into(), script.into()],
            ..CommandSpec::default()
        }
    }

    fn limits(timeout_ms: u64) -> RunLimits {
        RunLimits {
            timeout: Duration::from_millis(timeout_ms),
            max_stdout_bytes: 1 << 20,
        }
    }

    async fn collect(spec: &CommandSpec, limits: &RunLimits) -> (Outcome, String) {
        let (_tx, rx) = watch::channel(false);
        let mut out = Vec::new();
        let outcome = run(spec, limits, rx, |b| out.extend_from_slice(b))
            .await
            .expect("spawns");
        (outcome, String::from_utf8_lossy(&out).into_owned())
    }

    #[tokio::test]
    async fn streams_stdout_keeps_stderr_tail_and_exit_code() {
        let (outcome, out) =
            collect(&spec("echo hello; echo oops >&2; exit 3"), &limits(10_000)).await;
        assert_eq!(out, "hello\n");
        assert_eq!(outcome.ending, Ending::Exited(3));
        assert_eq!(outcome.stderr_tail, "oops\n");
    }

    #[tokio::test]
    async fn stdin_is_fed_then_closed_or_null() {
        let mut fed = spec("cat");
        fed.stdin = Some(b"prompt text".to_vec());
        let (_, out) = collect(&fed, &limits(10_000)).await;
        assert_eq!(out, "prompt text");
        // With stdin null, `cat` ends at once instead of hanging.
        let (outcome, out) = collect(&spec("cat"), &limits(10_000)).await;
        assert_eq!((outcome.ending, out.as_str()), (Ending::Exited(0), ""));
    }

    #[tokio::test]
    async fn a_noisy_stderr_cannot_block_the_child() {
        let script = "head -c 3000000 /dev/zero | tr '\\0' e >&2; echo done";
        let (outcome, out) = collect(&spec(script), &limits(20_000)).await;
        assert_eq!(out, "done\n");
        assert_eq!(outcome.ending, Ending::Exited(0));
        assert_eq!(outcome.stderr_tail.len(), STDERR_TAIL);
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().expect("tempdir");
        let marker = dir.path().join("grandchild-pid");
        let script = format!("sleep 60 & echo $! > {}; sleep 60", marker.display());
        let (outcome, _) = collect(&spec(&script), &limits(300)).await;
        assert_eq!(outcome.ending, Ending::TimedOut);
        let pid: i32 = std::fs::read_to_string(&marker)
            .expect("pid")
            .trim()
            .parse()
            .expect("int");
        // The grandchild is gone (or a zombie awaiting a reaper that is not us).
        assert!(!still_alive(pid).await, "grandchild alive");
    }

    /// Whether `pid` is still running (neither gone nor a zombie) after up to 5 s:
    /// SIGKILL is delivered asynchronously, so a killed process may be on its way out.
    async fn still_alive(pid: i32) -> bool {
        let alive = || codecrew_policy::process::stat(pid).is_some_and(|stat| !stat.zombie);
        for _ in 0..100 {
            if !alive() {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        alive()
    }

    #[tokio::test]
    async fn cancel_kills_the_run() {
        let (tx, rx) = watch::channel(false);
        let spec = spec("echo started; sleep 60");
        let task = tokio::spawn(async move { run(&spec, &limits(60_000), rx, |_| {}).await });
        tokio::time::sleep(Duration::from_millis(200)).await;
        tx.send(true).expect("send");
        let outcome = task.await.expect("joins").expect("spawns");
        assert_eq!(outcome.ending, Ending::Cancelled);
    }

    #[tokio::test]
    async fn a_stopped_cli_gets_sigterm_first_and_nothing_of_its_group_survives() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (said, pid_file) = (dir.path().join("said"), dir.path().join("pid"));
        // The leader says goodbye on SIGTERM; a child of its ignores SIGTERM.
        let spec = spec(&format!(
            "trap 'echo bye > {said}; exit 0' TERM; (trap '' TERM; sleep 60) & echo $! > {pid}; \
             echo started; sleep 60 & wait",
            said = said.display(),
            pid = pid_file.display()
        ));
        let (tx, rx) = watch::channel(false);
        let task = tokio::spawn(async move { run(&spec, &limits(60_000), rx, |_| {}).await });
        while !pid_file.exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        tx.send(true).expect("send");
        let outcome = task.await.expect("joins").expect("spawns");
        assert_eq!(outcome.ending, Ending::Cancelled);
        assert_eq!(std::fs::read_to_string(&said).unwrap_or_default(), "bye\n");
        let pid = std::fs::read_to_string(&pid_file).expect("pid");
        let pid = pid.trim().parse().expect("a pid");
        assert!(
            !still_alive(pid).await,
            "the child ignoring SIGTERM survived"
        );
    }

    #[tokio::test]
    async fn a_flood_is_stopped() {
        let (outcome, _) = collect(&spec("yes flood"), &limits(20_000)).await;
        assert_eq!(outcome.ending, Ending::Flooded);
    }

    #[tokio::test]
    async fn a_missing_program_is_a_spawn_error() {
        let spec = CommandSpec {
            program: "/nonexistent/cli".into(),
            ..CommandSpec::default()
        };
        let (_tx, rx) = watch::channel(false);
        assert!(run(&spec, &limits(1000), rx, |_| {}).await.is_err());
    }
}
