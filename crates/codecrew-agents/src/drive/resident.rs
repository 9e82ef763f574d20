//! A CLI kept running for a whole tool loop: one start-up instead of one per turn.
//!
//! The same discipline as [`crate::drive::process::run`] (its own process group, stderr drained
//! into a tail, the group killed on timeout, cancel, flood and drop), but stdin stays
//! open: each turn writes the next user message, and the turn ends when the caller's
//! decoder says the CLI answered (`on_stdout` returns true), not when the process exits.
//! The timeout and the flood cap count per turn, from the moment the message is sent.

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;

use crate::drive::child::CliChild;
use tokio::sync::watch;

use crate::drive::native::{self, NativeGate, Outbox};
use crate::drive::process::{
    self, CommandSpec, Ending, GroupGuard, Outcome, RunLimits, SpawnError, tail_text,
};

/// Read buffer for stdout.
const CHUNK: usize = 64 * 1024;
/// How long a CLI whose stdin was closed may take to exit before its group is killed.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// A running CLI that answers one message after another.
pub struct Resident {
    child: CliChild,
    stdin: Option<pipe::Sender>,
    stdout: Option<pipe::Receiver>,
    stderr_tail: Arc<Mutex<Vec<u8>>>,
    /// The task draining stderr; awaited once the CLI has exited, so the tail is whole.
    stderr_task: Option<tokio::task::JoinHandle<()>>,
    group: GroupGuard,
    /// The wall's temporary directory and the command's files live as long as the
    /// process.
    _confinement: Option<crate::wall::Confinement>,
    _files: Vec<Arc<tempfile::TempPath>>,
}

impl Resident {
    /// Starts `spec` with stdin piped and kept open.
    pub fn spawn(spec: &CommandSpec) -> Result<Resident, SpawnError> {
        let (mut child, group) = process::spawn(spec, true)?;
        let stderr_tail = Arc::new(Mutex::new(Vec::new()));
        let stderr_task = child
            .stderr
            .take()
            .map(|stderr| tokio::spawn(process::drain_stderr(stderr, stderr_tail.clone())));
        Ok(Resident {
            stdin: child.stdin.take(),
            stdout: child.stdout.take(),
            child,
            stderr_tail,
            stderr_task,
            group,
            _confinement: spec.confinement.clone(),
            _files: spec.files.clone(),
        })
    }

    /// Sends `message` (one line of the CLI's input protocol) and reads the turn it
    /// starts, passing every chunk of stdout to `on_stdout` until it returns true (the
    /// answer is complete). What `on_stdout` puts in its second argument is sent to the
    /// CLI at once (the answer to a request the CLI made mid-turn). The outcome is
    /// [`Ending::TurnEnded`] when the CLI answered and runs on; any other ending means
    /// the process is gone (or was stopped).
    pub async fn turn(
        &mut self,
        message: &[u8],
        limits: &RunLimits,
        cancel: &mut watch::Receiver<bool>,
        gate: Option<&dyn NativeGate>,
        mut on_stdout: impl FnMut(&[u8], &mut Outbox) -> bool,
    ) -> Outcome {
        let mut stdout_bytes = 0u64;
        let deadline = tokio::time::sleep(limits.timeout);
        tokio::pin!(deadline);
        // A CLI that stopped reading, or ended, fails the write; what it printed is still
        // read to its end below (one that answers at once and exits before reading its
        // input, faster than codecrew writes, has its answer there), and a CLI that died
        // between turns is found by that end.
        let sent = match self.stdin.as_mut() {
            Some(stdin) => write_line(stdin, message).await,
            None => Err(io::Error::from(io::ErrorKind::BrokenPipe)),
        };
        let mut stop: Option<Ending> = None;
        if sent.is_err() {
            self.stdin = None;
        }
        let mut buffer = vec![0u8; CHUNK];
        let mut outbox = Outbox::default();
        while let Some(out) = self.stdout.as_mut() {
            tokio::select! {
                read = out.read(&mut buffer) => match read {
                    Ok(0) | Err(_) => self.stdout = None,
                    Ok(read) => {
                        stdout_bytes += read as u64;
                        let answered = on_stdout(&buffer[..read], &mut outbox);
                        if !outbox.is_empty() {
                            let Outbox { bytes, pending } = std::mem::take(&mut outbox);
                            let mut replies = vec![bytes];
                            // The CLI waits for these answers; the timeout and Ctrl-C
                            // still hold while the user is asked.
                            for question in pending {
                                tokio::select! {
                                    reply = native::settle(question, gate) => replies.push(reply),
                                    () = &mut deadline => {
                                        stop = Some(Ending::TimedOut);
                                        break;
                                    }
                                    () = cancelled(cancel) => {
                                        stop = Some(Ending::Cancelled);
                                        break;
                                    }
                                }
                            }
                            if stop.is_some() {
                                break;
                            }
                            for reply in replies.iter().filter(|reply| !reply.is_empty()) {
                                // A CLI that stopped reading is found by its stdout ending.
                                if let Some(stdin) = self.stdin.as_mut()
                                    && write_line(stdin, reply).await.is_err()
                                {
                                    self.stdin = None;
                                }
                            }
                        }
                        if stdout_bytes > limits.max_stdout_bytes {
                            stop = Some(Ending::Flooded);
                            break;
                        }
                        if answered {
                            stop = Some(Ending::TurnEnded);
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
            Some(Ending::TurnEnded) => Ending::TurnEnded,
            Some(ending) => {
                self.stop().await;
                ending
            }
            // stdout closed: the CLI is ending (or has ended) without an answer.
            None => {
                let ending =
                    process::wait_for_exit(&mut self.child, &mut deadline, cancel, &self.group)
                        .await;
                self.group.kill_now();
                if let Some(task) = self.stderr_task.take() {
                    let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
                }
                ending
            }
        };
        Outcome {
            ending,
            stderr_tail: tail_text(&self.stderr_tail),
            stdout_bytes,
        }
    }

    /// Ends the CLI: stdin closed (its signal that the conversation is over), a short
    /// grace to exit, then its whole group is killed.
    pub async fn close(mut self) {
        self.stdin = None;
        let _ = tokio::time::timeout(CLOSE_GRACE, self.child.wait()).await;
        self.group.kill_now();
    }

    async fn stop(&mut self) {
        self.stdin = None;
        self.stdout = None;
        self.group.stop(&mut self.child).await;
    }
}

/// Returns once the run is cancelled (or its canceller is gone).
async fn cancelled(cancel: &mut watch::Receiver<bool>) {
    while !*cancel.borrow() {
        if cancel.changed().await.is_err() {
            return;
        }
    }
}

async fn write_line(stdin: &mut pipe::Sender, message: &[u8]) -> io::Result<()> {
    stdin.write_all(message).await?;
    if !message.ends_with(b"\n") {
        stdin.write_all(b"\n").await?;
    }
    stdin.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bash(script: &str) -> CommandSpec {
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

    /// A CLI that answers each line with `answer: <line>` and `done`.
    const ECHO: &str = "while read -r line; do echo \"answer: $line\"; echo done; done";

    async fn turn(resident: &mut Resident, message: &str, timeout_ms: u64) -> (Outcome, String) {
        let (_tx, mut cancel) = watch::channel(false);
        let mut out = Vec::new();
        let outcome = resident
            .turn(
                message.as_bytes(),
                &limits(timeout_ms),
                &mut cancel,
                None,
                |bytes, _| {
                    out.extend_from_slice(bytes);
                    out.ends_with(b"done\n")
                },
            )
            .await;
        (outcome, String::from_utf8_lossy(&out).into_owned())
    }

    #[tokio::test]
    async fn one_process_answers_turn_after_turn() {
        let mut resident = Resident::spawn(&bash(ECHO)).unwrap();
        let pid = resident.child.id();
        for message in ["first", "second", "third"] {
            let (outcome, out) = turn(&mut resident, message, 10_000).await;
            assert_eq!(outcome.ending, Ending::TurnEnded);
            assert_eq!(out, format!("answer: {message}\ndone\n"));
            assert_eq!(resident.child.id(), pid);
        }
        resident.close().await;
    }

    #[tokio::test]
    async fn what_the_reader_answers_mid_turn_reaches_the_cli() {
        // Asks a question, then answers with what it was told.
        let script =
            "read -r line; echo 'question?'; read -r reply; echo \"got $reply\"; echo done";
        let mut resident = Resident::spawn(&bash(script)).unwrap();
        let (_tx, mut cancel) = watch::channel(false);
        let mut out = Vec::new();
        let outcome = resident
            .turn(
                b"start",
                &limits(10_000),
                &mut cancel,
                None,
                |bytes, outbox| {
                    out.extend_from_slice(bytes);
                    if bytes.windows(9).any(|w| w == b"question?") {
                        outbox.bytes.extend_from_slice(b"yes");
                    }
                    out.ends_with(b"done\n")
                },
            )
            .await;
        assert_eq!(outcome.ending, Ending::TurnEnded);
        assert!(String::from_utf8_lossy(&out).contains("got yes"), "{out:?}");
    }

    #[tokio::test]
    async fn a_silent_turn_times_out_and_the_group_is_killed() {
        let mut resident = Resident::spawn(&bash("read -r line; sleep 60")).unwrap();
        let (outcome, _) = turn(&mut resident, "hello", 300).await;
        assert_eq!(outcome.ending, Ending::TimedOut);
        // The next turn finds the CLI gone.
        let (outcome, _) = turn(&mut resident, "again", 300).await;
        assert_ne!(outcome.ending, Ending::TurnEnded);
    }

    #[tokio::test]
    async fn a_cli_that_dies_mid_turn_ends_with_its_exit_and_stderr() {
        let script = "read -r line; echo partial; echo 'it broke' >&2; exit 7";
        let mut resident = Resident::spawn(&bash(script)).unwrap();
        let (outcome, out) = turn(&mut resident, "hello", 10_000).await;
        assert_eq!(outcome.ending, Ending::Exited(7));
        assert_eq!(out, "partial\n");
        assert!(outcome.stderr_tail.contains("it broke"), "{outcome:?}");
    }

    /// A CLI that answers at once and exits before it reads its input: codecrew's write
    /// fails, and the answer it printed is still the turn's.
    #[tokio::test]
    async fn an_answer_printed_before_the_cli_read_its_input_is_read() {
        let mut resident = Resident::spawn(&bash("echo 'answer: at once'; echo done")).unwrap();
        // It has ended, so the write below fails (its stdin's reader is gone).
        let pid = resident.child.id().unwrap();
        while codecrew_policy::process::stat(i32::try_from(pid).unwrap())
            .is_some_and(|stat| !stat.zombie)
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let (outcome, out) = turn(&mut resident, "hello", 10_000).await;
        assert_eq!(out, "answer: at once\ndone\n");
        assert_eq!(outcome.ending, Ending::TurnEnded);
    }

    #[tokio::test]
    async fn cancel_stops_the_turn() {
        let mut resident = Resident::spawn(&bash("read -r line; sleep 60")).unwrap();
        let (tx, mut cancel) = watch::channel(false);
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let _ = tx.send(true);
            tx
        });
        let outcome = resident
            .turn(b"hello", &limits(60_000), &mut cancel, None, |_, _| false)
            .await;
        assert_eq!(outcome.ending, Ending::Cancelled);
        drop(canceller.await);
    }
}
