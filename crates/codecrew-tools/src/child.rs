//! A program a tool starts (`run_command`'s shell, an external tool): spawned in a
//! session and process group of its own with a scrubbed environment, optionally confined
//! by the OS sandbox, fed its stdin, its output drained and capped, and killed with
//! everything it started on timeout or when the call is abandoned.
//!
//! Every group is registered, so whatever a program leaves running is killed when
//! codecrew exits. Both output streams are drained concurrently (a full pipe would stall
//! the program) and each keeps its first [`MAX_STREAM_BYTES`]; the rest is read and
//! dropped.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::time::sleep_until;

use codecrew_policy::{process, sandbox};

/// The most of each stream (stdout, stderr) a result keeps.
pub const MAX_STREAM_BYTES: usize = 1024 * 1024;
/// After the program exits, how long processes it left in the background may keep its
/// output pipes open before they are stopped.
const EXIT_GRACE: Duration = Duration::from_secs(2);
/// After the group is killed, how long to wait for the pipes to close and the program to
/// be reaped (only a process that left the group can hold them longer).
const KILL_GRACE: Duration = Duration::from_secs(5);
/// How much of a stream an error message quotes (its end, the most telling part).
pub const ERROR_TAIL_CHARS: usize = 8000;

/// What to run, and how.
#[derive(Debug)]
pub struct ChildSpec {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    /// The whole environment (the caller scrubs it).
    pub env: Vec<(OsString, OsString)>,
    /// Written to the program's stdin, which is then closed; `None`: stdin is closed.
    pub stdin: Option<Vec<u8>>,
    pub timeout: Duration,
    /// The OS sandbox, or `None` to run unconfined.
    pub confinement: Option<Confinement>,
}

/// The OS sandbox a program runs in (see [`codecrew_policy::sandbox`]).
#[derive(Debug, Clone)]
pub enum Confinement {
    /// The mode's: it may read and execute anything, and write only in `writable` (the
    /// workspace, in execute, and a linked worktree's git data) and `/tmp`.
    Mode {
        writable: Vec<PathBuf>,
        allow_network: bool,
    },
    /// The read-only domain of a command that runs without asking: it reads only
    /// beneath the workspace (with a linked worktree's repository) and the system's
    /// directories, and writes nothing.
    ReadOnly {
        workspace: PathBuf,
        git: sandbox::LinkedGit,
    },
}

/// How the wait for the program ended.
#[derive(Debug)]
pub enum Ending {
    /// The program exited; `lingering` when background processes still held its pipes
    /// (they were stopped).
    Exited {
        status: ExitStatus,
        lingering: bool,
    },
    TimedOut,
}

/// A program that ran.
#[derive(Debug)]
pub struct Finished {
    pub ending: Ending,
    pub stdout: Captured,
    pub stderr: Captured,
    pub duration: Duration,
}

/// Why a program could not run.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    #[error("the OS sandbox could not be set up: {0}")]
    Sandbox(String),
    #[error("could not start {program}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("waiting for the program failed: {0}")]
    Wait(std::io::Error),
}

/// One output stream: its first MAX_STREAM_BYTES and how much there was.
#[derive(Debug, Default)]
pub struct Captured {
    pub kept: Vec<u8>,
    pub total: u64,
}

impl Captured {
    pub fn truncated(&self) -> bool {
        self.total > self.kept.len() as u64
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.kept).into_owned()
    }

    /// The end of the stream, for error messages. The program's words go to the model
    /// inside codecrew's own message, which is not neutralised as a whole (it names tools
    /// the model should be able to copy), so any envelope in them is broken here.
    pub fn tail(&self) -> String {
        let text = codecrew_intercept::neutralise_envelopes(&self.text());
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

/// Runs `spec` to its end, its timeout, or until the returned future is dropped (which
/// kills the group).
pub async fn run(spec: ChildSpec) -> Result<Finished, ChildError> {
    let started = Instant::now();
    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(key, value)| (key, value)))
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let domain = match &spec.confinement {
        Some(Confinement::Mode {
            writable,
            allow_network,
        }) => sandbox::ruleset(writable.iter().map(PathBuf::as_path), *allow_network)
            .map(sandbox::Domain::from)
            .map_err(|error| error.to_string()),
        Some(Confinement::ReadOnly { workspace, git }) => {
            sandbox::read_only_domain(workspace, git).map_err(|error| error.to_string())
        }
        None => Ok(sandbox::Domain::default()),
    }
    .map_err(ChildError::Sandbox)?;
    // Its own session and group (pgid = its pid), so killpg reaches every process it
    // starts; then the sandbox, if any.
    sandbox::confine(&mut command, domain);
    codecrew_policy::lifeline::die_with_codecrew(&mut command);
    let mut child = command.spawn().map_err(|source| ChildError::Spawn {
        program: spec.program.to_string_lossy().into_owned(),
        source,
    })?;
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    if let Some(pgid) = pgid {
        process::register(pgid);
    }
    let mut group = GroupKill(pgid.map(Pid::from_raw));
    let feed = feed(child.stdin.take(), spec.stdin);
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let mut out = Captured::default();
    let mut err = Captured::default();
    let deadline = tokio::time::Instant::now() + spec.timeout;

    let ending = {
        let mut drains = Box::pin(async {
            tokio::join!(feed, drain(stdout, &mut out), drain(stderr, &mut err));
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
                    Err(error) => break Err(ChildError::Wait(error)),
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
        // Reap the killed program; it died with SIGKILL, so this is immediate.
        let _ = tokio::time::timeout(KILL_GRACE, child.wait()).await;
    } else {
        // A normal end: processes the program left running on purpose (with their
        // output redirected) are its business.
        group.0 = None;
    }
    if let Some(pgid) = pgid {
        // Still registered while something of it runs: killed when codecrew exits.
        process::release_if_empty(pgid);
    }
    Ok(Finished {
        ending: ending?,
        stdout: out,
        stderr: err,
        duration: started.elapsed(),
    })
}

/// Writes the input and closes stdin. A program that exits without reading it all
/// (EPIPE) is not an error here: its exit status tells.
async fn feed(stdin: Option<tokio::process::ChildStdin>, input: Option<Vec<u8>>) {
    if let (Some(mut stdin), Some(input)) = (stdin, input) {
        let _ = stdin.write_all(&input).await;
        let _ = stdin.shutdown().await;
    }
}

/// Reads a pipe to its end, keeping the first MAX_STREAM_BYTES. Reading goes on past the
/// cap, so the program never blocks on a full pipe.
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

/// Kills the program's process group when dropped (the call was abandoned) unless
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
