//! One turn of the loop: what the CLI's output amounted to, and whether it failed.

use codecrew_intercept::decode::Event;
use codecrew_intercept::{Item, Rejection, Segment, ToolCall};

use super::JobEvent;
use crate::usage::Usage;
use codecrew_agents::drive::process::{self, Ending, RunLimits};

/// Why a finished turn is a failure, if it is one.
pub(super) fn turn_failure(
    outcome: &process::Outcome,
    turn: &TurnState,
    limits: &RunLimits,
) -> Option<String> {
    let stderr = stderr_note(&outcome.stderr_tail);
    let reported = (!turn.errors.is_empty()).then(|| turn.errors.join("; "));
    match outcome.ending {
        Ending::TimedOut => Some(format!(
            "the CLI did not finish its turn within {} s and was stopped",
            limits.timeout.as_secs()
        )),
        Ending::Cancelled => Some("interrupted".to_owned()),
        Ending::Flooded => Some(format!(
            "the CLI printed more than {} bytes in one turn and was stopped",
            limits.max_stdout_bytes
        )),
        Ending::Signalled(signal) => Some(format!("the CLI was killed by signal {signal}{stderr}")),
        Ending::Exited(code) if code != 0 => Some(match reported {
            Some(message) => format!("{message} (exit code {code}{stderr})"),
            None => format!("the CLI exited with code {code}{stderr}"),
        }),
        Ending::Exited(_) | Ending::TurnEnded if turn.is_error || reported.is_some() => {
            Some(reported.unwrap_or_else(|| format!("the CLI reported an error{stderr}")))
        }
        Ending::Exited(_) | Ending::TurnEnded if !turn.saw_anything() => {
            Some(format!("the CLI printed no answer{stderr}"))
        }
        Ending::Exited(_) | Ending::TurnEnded => None,
    }
}

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

/// What one turn produced.
#[derive(Debug, Default)]
pub(super) struct TurnState {
    /// Assistant text with envelopes removed.
    pub(super) text: String,
    /// Assistant text as the model wrote it, for transcripts.
    pub(super) raw_text: String,
    pub(super) calls: Vec<ToolCall>,
    pub(super) rejected: Vec<Rejection>,
    pub(super) session: Option<String>,
    pub(super) errors: Vec<String>,
    pub(super) is_error: bool,
    pub(super) finished: bool,
    /// What the CLI reported it used, summed if it reported more than once.
    pub(super) usage: Option<Usage>,
}

impl TurnState {
    fn saw_anything(&self) -> bool {
        self.finished
            || !self.text.trim().is_empty()
            || !self.calls.is_empty()
            || !self.rejected.is_empty()
    }

    pub(super) fn take(&mut self, item: Item, mut emit: impl FnMut(JobEvent)) {
        match item {
            Item::Segment(Segment::Text(text)) => {
                self.text.push_str(&text);
                self.raw_text.push_str(&text);
                emit(JobEvent::Text(text));
            }
            Item::Segment(Segment::Call(call)) => {
                self.raw_text.push_str(&format!(
                    "\n```json\n{}\n```\n",
                    serde_json::json!({"type": "tool_use", "name": call.name, "input": call.input})
                ));
                emit(JobEvent::ToolCall(call.clone()));
                self.calls.push(call);
            }
            Item::Segment(Segment::Rejected(rejection)) => {
                emit(JobEvent::Rejected(rejection.clone()));
                self.rejected.push(rejection);
            }
            Item::MessageEnd => {
                if !self.text.is_empty() && !self.text.ends_with('\n') {
                    self.text.push('\n');
                    self.raw_text.push('\n');
                }
                emit(JobEvent::MessageEnd);
            }
            Item::Event(Event::Session { id, .. }) => self.session = Some(id),
            Item::Event(Event::Error(message)) => {
                if !self.errors.contains(&message) {
                    self.errors.push(message);
                }
            }
            Item::Event(Event::Finished {
                is_error, usage, ..
            }) => {
                self.finished = true;
                self.is_error |= is_error;
                if let Some(usage) = usage {
                    self.usage.get_or_insert_default().add(&usage);
                }
            }
            Item::Event(Event::Malformed { reason, .. }) => tracing::warn!("{reason}"),
            Item::Event(event) => tracing::debug!(?event, "CLI event"),
        }
    }
}
