//! Why a turn failed, and what the loop does about it: run the turn again, start the
//! session afresh, or end the job.

use std::time::Duration;

use codecrew_agents::drive::process::{Ending, Outcome, RunLimits};

use super::StopReason;
use super::turn::TurnState;

/// Why a finished turn is a failure. The message each gives is what the user and the
/// report read (`JobReport::error`), before any hint is added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum TurnFailure {
    /// The turn's timeout passed; the CLI was stopped.
    TimedOut { timeout: Duration },
    /// Ctrl-C, or the caller's cancellation.
    Cancelled,
    /// More stdout than one turn may print; the CLI was stopped.
    Flooded { limit: u64 },
    /// The CLI was killed by a signal codecrew did not send.
    Signalled { signal: i32, stderr: String },
    /// The CLI exited with a code other than 0, having reported `reported` (if anything).
    Exited {
        code: i32,
        reported: Option<String>,
        stderr: String,
    },
    /// The CLI ended its turn (exiting 0, or a kept CLI waiting for the next) reporting an
    /// error.
    Reported {
        message: Option<String>,
        stderr: String,
        exited: bool,
    },
    /// The CLI ended its turn having printed nothing at all.
    NoAnswer { stderr: String, exited: bool },
}

/// What the loop does after a failed turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Recovery {
    /// The CLI kept for the loop died mid-loop: this turn runs again in a new process that
    /// resumes the session (and per turn from then on). Once per turn.
    RetryInNewProcess,
    /// The thread's stored session is one the CLI no longer has (its data cleared, the
    /// workspace moved): the job starts once more, in a new session opened with the
    /// thread's earlier exchanges.
    StartFresh,
    /// The job ends with this failure.
    Stop,
}

/// Where the loop stood when the turn failed: what decides a [`Recovery`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Situation {
    /// The turn's number in the job (1 for the first).
    pub(super) turn: u32,
    /// Its CLI is kept for the whole loop.
    pub(super) kept: bool,
    /// The turn resumed a stored session.
    pub(super) resuming: bool,
    /// The model said nothing and called nothing this turn.
    pub(super) silent: bool,
}

impl TurnFailure {
    /// The failure of a finished turn, or None when the turn gave an answer or calls.
    pub(super) fn of(outcome: &Outcome, turn: &TurnState, limits: &RunLimits) -> Option<Self> {
        let stderr = stderr_note(&outcome.stderr_tail);
        let reported = (!turn.errors.is_empty()).then(|| turn.errors.join("; "));
        let exited = matches!(outcome.ending, Ending::Exited(_));
        match outcome.ending {
            Ending::TimedOut => Some(TurnFailure::TimedOut {
                timeout: limits.timeout,
            }),
            Ending::Cancelled => Some(TurnFailure::Cancelled),
            Ending::Flooded => Some(TurnFailure::Flooded {
                limit: limits.max_stdout_bytes,
            }),
            Ending::Signalled(signal) => Some(TurnFailure::Signalled { signal, stderr }),
            Ending::Exited(code) if code != 0 => Some(TurnFailure::Exited {
                code,
                reported,
                stderr,
            }),
            Ending::Exited(_) | Ending::TurnEnded if turn.is_error || reported.is_some() => {
                Some(TurnFailure::Reported {
                    message: reported,
                    stderr,
                    exited,
                })
            }
            Ending::Exited(_) | Ending::TurnEnded if !turn.saw_anything() => {
                Some(TurnFailure::NoAnswer { stderr, exited })
            }
            Ending::Exited(_) | Ending::TurnEnded => None,
        }
    }

    /// What the loop does about it.
    pub(super) fn recovery(&self, at: Situation) -> Recovery {
        if at.kept && self.process_died() && at.turn > 1 {
            Recovery::RetryInNewProcess
        } else if at.turn == 1 && at.resuming && self.ended_on_its_own() && at.silent {
            // Only the first turn resumes a thread's session, and the fresh start resumes
            // none, so this happens at most once.
            Recovery::StartFresh
        } else {
            Recovery::Stop
        }
    }

    /// How the job stopped, when this failure ends it.
    pub(super) fn stop_reason(&self) -> Option<StopReason> {
        (self == &TurnFailure::Cancelled).then_some(StopReason::Interrupted)
    }

    pub(super) fn timed_out(&self) -> bool {
        matches!(self, TurnFailure::TimedOut { .. })
    }

    /// The CLI's process is gone (it exited or was killed by a signal of its own).
    fn process_died(&self) -> bool {
        match self {
            TurnFailure::Exited { .. } | TurnFailure::Signalled { .. } => true,
            TurnFailure::Reported { exited, .. } | TurnFailure::NoAnswer { exited, .. } => *exited,
            TurnFailure::TimedOut { .. } | TurnFailure::Cancelled | TurnFailure::Flooded { .. } => {
                false
            }
        }
    }

    /// The CLI ended the turn itself (exited, or waits for the next), not stopped by
    /// codecrew or a signal.
    fn ended_on_its_own(&self) -> bool {
        matches!(
            self,
            TurnFailure::Exited { .. }
                | TurnFailure::Reported { .. }
                | TurnFailure::NoAnswer { .. }
        )
    }
}

impl std::fmt::Display for TurnFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TurnFailure::TimedOut { timeout } => write!(
                f,
                "the CLI did not finish its turn within {} s and was stopped",
                timeout.as_secs()
            ),
            TurnFailure::Cancelled => f.write_str("interrupted"),
            TurnFailure::Flooded { limit } => write!(
                f,
                "the CLI printed more than {limit} bytes in one turn and was stopped"
            ),
            TurnFailure::Signalled { signal, stderr } => {
                write!(f, "the CLI was killed by signal {signal}{stderr}")
            }
            TurnFailure::Exited {
                code,
                reported: Some(message),
                stderr,
            } => write!(f, "{message} (exit code {code}{stderr})"),
            TurnFailure::Exited {
                code,
                reported: None,
                stderr,
            } => write!(f, "the CLI exited with code {code}{stderr}"),
            TurnFailure::Reported {
                message: Some(message),
                ..
            } => f.write_str(message),
            TurnFailure::Reported {
                message: None,
                stderr,
                ..
            } => write!(f, "the CLI reported an error{stderr}"),
            TurnFailure::NoAnswer { stderr, .. } => {
                write!(f, "the CLI printed no answer{stderr}")
            }
        }
    }
}

/// What model servers say when a prompt is larger than the model's context window, lower
/// case: llama-cpp-python (llm's local models: "Requested tokens (2350) exceed context
/// window of 512"), llama.cpp's server, OpenAI's API and the servers that copy it,
/// Anthropic's and Gemini's.
const CONTEXT_EXCEEDED: &[&str] = &[
    "exceed context window",
    "exceeds the context window",
    "exceeds the available context size",
    "maximum context length",
    "context_length_exceeded",
    "context length exceeded",
    "prompt is too long",
    "exceeds the maximum number of tokens",
];

/// Whether what a failed turn's CLI said (its reported errors, its stderr) is its model
/// refusing a prompt larger than its context window.
pub(super) fn says_context_exceeded(said: &str) -> bool {
    let said = said.to_lowercase();
    CONTEXT_EXCEEDED.iter().any(|words| said.contains(words))
}

/// `; stderr: a | b`: the last lines of what the CLI said on stderr, for a message.
fn stderr_note(tail: &str) -> String {
    let tail = tail.trim();
    if tail.is_empty() {
        String::new()
    } else {
        let lines: Vec<&str> = tail.lines().rev().take(5).collect();
        let lines: Vec<&str> = lines.into_iter().rev().collect();
        format!("; stderr: {}", lines.join(" | "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(ending: Ending, stderr: &str) -> Outcome {
        Outcome {
            ending,
            stderr_tail: stderr.to_owned(),
            stdout_bytes: 0,
        }
    }

    fn limits() -> RunLimits {
        RunLimits {
            timeout: Duration::from_secs(30),
            max_stdout_bytes: 1024,
        }
    }

    fn answered() -> TurnState {
        TurnState {
            text: "an answer".to_owned(),
            finished: true,
            ..TurnState::default()
        }
    }

    fn failure(ending: Ending, stderr: &str, turn: &TurnState) -> Option<TurnFailure> {
        TurnFailure::of(&outcome(ending, stderr), turn, &limits())
    }

    #[test]
    fn a_turn_that_answered_and_ended_is_no_failure() {
        assert_eq!(failure(Ending::Exited(0), "", &answered()), None);
        assert_eq!(failure(Ending::TurnEnded, "noise", &answered()), None);
    }

    #[test]
    fn each_failure_says_what_happened_in_the_words_users_read() {
        let silent = TurnState::default();
        let cases = [
            (
                failure(Ending::TimedOut, "", &answered()),
                "the CLI did not finish its turn within 30 s and was stopped",
            ),
            (failure(Ending::Cancelled, "", &answered()), "interrupted"),
            (
                failure(Ending::Flooded, "", &answered()),
                "the CLI printed more than 1024 bytes in one turn and was stopped",
            ),
            (
                failure(Ending::Signalled(9), "a\nb\n", &answered()),
                "the CLI was killed by signal 9; stderr: a | b",
            ),
            (
                failure(Ending::Exited(2), "", &silent),
                "the CLI exited with code 2",
            ),
            (
                failure(Ending::TurnEnded, "", &silent),
                "the CLI printed no answer",
            ),
        ];
        for (failure, said) in cases {
            assert_eq!(failure.map(|f| f.to_string()).as_deref(), Some(said));
        }
        let reported = TurnState {
            errors: vec!["rate limited".to_owned(), "again".to_owned()],
            ..answered()
        };
        assert_eq!(
            failure(Ending::Exited(1), "x", &reported).map(|f| f.to_string()),
            Some("rate limited; again (exit code 1; stderr: x)".to_owned())
        );
        assert_eq!(
            failure(Ending::Exited(0), "", &reported).map(|f| f.to_string()),
            Some("rate limited; again".to_owned())
        );
        let flagged = TurnState {
            is_error: true,
            ..answered()
        };
        assert_eq!(
            failure(Ending::TurnEnded, "", &flagged).map(|f| f.to_string()),
            Some("the CLI reported an error".to_owned())
        );
    }

    #[test]
    fn only_a_dead_kept_cli_after_the_first_turn_runs_its_turn_again() {
        let at = |turn, kept| Situation {
            turn,
            kept,
            resuming: false,
            silent: true,
        };
        let silent = TurnState::default();
        let died = failure(Ending::Exited(1), "", &silent).unwrap();
        assert_eq!(died.recovery(at(2, true)), Recovery::RetryInNewProcess);
        assert_eq!(died.recovery(at(1, true)), Recovery::Stop);
        assert_eq!(died.recovery(at(2, false)), Recovery::Stop);
        let killed = failure(Ending::Signalled(9), "", &silent).unwrap();
        assert_eq!(killed.recovery(at(3, true)), Recovery::RetryInNewProcess);
        // Waiting for its next turn, the kept CLI is alive: its error is the answer.
        let waiting = failure(Ending::TurnEnded, "", &silent).unwrap();
        assert_eq!(waiting.recovery(at(2, true)), Recovery::Stop);
        for stopped in [Ending::TimedOut, Ending::Cancelled, Ending::Flooded] {
            let failure = failure(stopped, "", &silent).unwrap();
            assert_eq!(failure.recovery(at(2, true)), Recovery::Stop);
        }
    }

    #[test]
    fn a_prompt_too_large_for_the_context_window_is_told_from_other_failures() {
        for said in [
            "Error: Requested tokens (2350) exceed context window of 512",
            "This model's maximum context length is 4097 tokens. However, your messages \
             resulted in 5000 tokens",
            "{\"error\":{\"code\":\"context_length_exceeded\"}}",
            "prompt is too long: 210000 tokens > 200000 maximum",
            "The input token count (1200000) exceeds the maximum number of tokens allowed \
             (1048576).",
            "the request exceeds the available context size, try increasing it",
        ] {
            assert!(says_context_exceeded(said), "{said}");
        }
        for said in [
            "rate limited",
            "the CLI exited with code 1",
            "token expired",
        ] {
            assert!(!says_context_exceeded(said), "{said}");
        }
    }

    #[test]
    fn a_lost_stored_session_starts_fresh_once_on_the_first_turn() {
        let at = |turn, resuming, silent| Situation {
            turn,
            kept: false,
            resuming,
            silent,
        };
        let silent = TurnState::default();
        let lost = failure(Ending::Exited(1), "no such session", &silent).unwrap();
        assert_eq!(lost.recovery(at(1, true, true)), Recovery::StartFresh);
        assert_eq!(lost.recovery(at(1, false, true)), Recovery::Stop);
        assert_eq!(lost.recovery(at(2, true, true)), Recovery::Stop);
        assert_eq!(lost.recovery(at(1, true, false)), Recovery::Stop);
        let timed_out = failure(Ending::TimedOut, "", &silent).unwrap();
        assert_eq!(timed_out.recovery(at(1, true, true)), Recovery::Stop);
        assert!(timed_out.timed_out());
        let cancelled = failure(Ending::Cancelled, "", &silent).unwrap();
        assert_eq!(cancelled.stop_reason(), Some(StopReason::Interrupted));
        assert_eq!(timed_out.stop_reason(), None);
    }
}
