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
    /// The model's context window in tokens, when the CLI said.
    pub(super) context_window: Option<u64>,
    /// The CLI's own calls whose results have not come: the id the CLI gave each (if
    /// any) and the id codecrew gave it, oldest first.
    pub(super) native_open: Vec<(Option<String>, String)>,
}

impl TurnState {
    /// Whether the CLI said anything this turn: an end, text, a call or a rejection.
    pub(super) fn saw_anything(&self) -> bool {
        self.finished
            || !self.text.trim().is_empty()
            || !self.calls.is_empty()
            || !self.rejected.is_empty()
    }

    /// The id codecrew gave the CLI's own call whose result names `cli_id`: paired here
    /// once, so that every reader of the events has the pair by id. A CLI that gives its
    /// results no id has them answer its oldest open call; a result that names no open
    /// call gets an id of its own (it pairs with nothing).
    fn native_result_id(&mut self, cli_id: Option<&str>) -> String {
        let open = match cli_id {
            Some(cli_id) => self
                .native_open
                .iter()
                .position(|(open, _)| open.as_deref() == Some(cli_id)),
            None => (!self.native_open.is_empty()).then_some(0),
        };
        match open {
            Some(at) => self.native_open.remove(at).1,
            None => super::new_call_id(),
        }
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
            Item::Event(Event::NativeTool {
                id: cli_id,
                name,
                input,
            }) => {
                let id = super::new_call_id();
                self.native_open.push((cli_id, id.clone()));
                emit(JobEvent::NativeTool { id, name, input });
            }
            Item::Event(Event::NativeToolResult {
                id: cli_id,
                output,
                is_error,
            }) => emit(JobEvent::NativeToolResult {
                id: self.native_result_id(cli_id.as_deref()),
                output,
                is_error,
            }),
            Item::Event(Event::ContextWindow(window)) => self.context_window = Some(window),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn native(cli_id: Option<&str>, name: &str) -> Item {
        Item::Event(Event::NativeTool {
            id: cli_id.map(str::to_owned),
            name: name.to_owned(),
            input: json!({}),
        })
    }

    fn result(cli_id: Option<&str>) -> Item {
        Item::Event(Event::NativeToolResult {
            id: cli_id.map(str::to_owned),
            output: String::new(),
            is_error: false,
        })
    }

    /// The ids of the CLI's own calls and of the results, in the order they came.
    fn ids(items: Vec<Item>) -> (Vec<String>, Vec<String>) {
        let mut turn = TurnState::default();
        let (mut calls, mut results) = (Vec::new(), Vec::new());
        for item in items {
            turn.take(item, |event| match event {
                JobEvent::NativeTool { id, .. } => calls.push(id),
                JobEvent::NativeToolResult { id, .. } => results.push(id),
                _ => {}
            });
        }
        (calls, results)
    }

    #[test]
    fn a_cli_s_own_results_carry_the_id_codecrew_gave_their_call() {
        // Two calls of one tool, answered out of order by the CLI's ids.
        let (calls, results) = ids(vec![
            native(Some("toolu_a"), "Read"),
            native(Some("toolu_b"), "Read"),
            result(Some("toolu_b")),
            result(Some("toolu_a")),
        ]);
        assert_eq!(calls.len(), 2);
        assert_ne!(calls[0], calls[1]);
        assert!(calls.iter().all(|id| id.starts_with("call_")));
        assert_eq!(results, vec![calls[1].clone(), calls[0].clone()]);
    }

    #[test]
    fn results_without_an_id_answer_the_oldest_open_call_and_a_stray_one_pairs_with_none() {
        let (calls, results) = ids(vec![
            native(None, "Bash"),
            native(None, "Read"),
            result(None),
            result(Some("never_called")),
            result(None),
            result(None),
        ]);
        assert_eq!(&results[0], &calls[0]);
        assert!(!calls.contains(&results[1]));
        assert_eq!(&results[2], &calls[1]);
        // Nothing open any more: an id of its own.
        assert!(!calls.contains(&results[3]));
    }
}
