//! One turn of the loop: what the CLI's output amounted to.

use codecrew_intercept::decode::Event;
use codecrew_intercept::{Echoes, Item, Rejection, Segment, ToolCall};

use super::JobEvent;
use crate::usage::Usage;

/// What one turn produced.
#[derive(Debug, Default)]
pub(super) struct TurnState {
    /// Assistant text with envelopes removed.
    pub(super) text: String,
    /// Assistant text as the model wrote it, for transcripts.
    pub(super) raw_text: String,
    /// The calls found, each with the id it was given when it was found.
    pub(super) calls: Vec<(String, ToolCall)>,
    pub(super) rejected: Vec<Rejection>,
    pub(super) session: Option<String>,
    pub(super) errors: Vec<String>,
    pub(super) is_error: bool,
    pub(super) finished: bool,
    /// What the CLI reported it used, summed if it reported more than once.
    pub(super) usage: Option<Usage>,
}

impl TurnState {
    /// Whether the CLI said anything this turn: an end, text, a call or a rejection.
    pub(super) fn saw_anything(&self) -> bool {
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
                let id = super::new_call_id();
                emit(JobEvent::ToolCall {
                    id: id.clone(),
                    call: call.clone(),
                });
                self.calls.push((id, call));
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
            Item::Event(Event::NativeTool { id, name, input }) => {
                emit(JobEvent::NativeTool { id, name, input });
            }
            Item::Event(Event::NativeToolResult {
                id,
                output,
                is_error,
            }) => emit(JobEvent::NativeToolResult {
                id,
                output,
                is_error,
            }),
            Item::Event(Event::Malformed { reason, .. }) => tracing::warn!("{reason}"),
            Item::Event(event) => tracing::debug!(?event, "CLI event"),
        }
    }
}

/// `item` as the turn takes it: a rejected envelope that repeats one the conversation's
/// tool results held (`echoes`) is the model quoting what it read, so it is its text,
/// with nothing said back (telling it why that did not run would ask, with codecrew's
/// authority, for a call that a file wrote).
pub(super) fn quieted(item: Item, echoes: &Echoes) -> Item {
    match item {
        Item::Segment(Segment::Rejected(rejection)) if echoes.repeats(&rejection.raw) => {
            // A rejected candidate spans whole lines: its line's end goes with it.
            Item::Segment(Segment::Text(format!("{}\n", rejection.raw)))
        }
        other => other,
    }
}
