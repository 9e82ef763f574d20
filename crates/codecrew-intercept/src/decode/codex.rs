//! Codex `exec --json`.
//!
//! One JSON object per line:
//!
//! ```text
//! {"type":"thread.started","thread_id":"…"}
//! {"type":"turn.started"}
//! {"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"…"}}
//! {"type":"item.started","item":{"id":"item_1","type":"command_execution",
//!     "command":"…","aggregated_output":"","exit_code":null,"status":"in_progress"}}
//! {"type":"item.completed","item":{…"type":"command_execution",…,"exit_code":0}}
//! {"type":"turn.completed","usage":{…}}
//! {"type":"error","message":"…"}
//! {"type":"turn.failed","error":{"message":"…"}}
//! ```
//!
//! There are no text deltas: each `agent_message` arrives complete. Items of type
//! `reasoning` carry thinking; items of type `error` carry warnings (they do not end the
//! turn). A resumed thread prints `thread.started` again with the same id.

use serde::Deserialize;
use serde_json::Value;

use super::json::{Obj, Sink, Str, parse_event};
use super::lines::{LineBuffer, LineItem};
use super::{Decoder, Event, Usage};

/// Decodes Codex's `--json` output.
#[derive(Debug, Default)]
pub struct CodexDecoder {
    lines: LineBuffer,
    state: State,
}

impl Decoder for CodexDecoder {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Event>) {
        let state = &mut self.state;
        self.lines.feed(bytes, |item| state.line(&item, false, out));
    }

    fn finish(&mut self, out: &mut Vec<Event>) {
        let state = &mut self.state;
        self.lines.finish(|item| state.line(&item, true, out));
        state.sink.end_text(out);
    }
}

#[derive(Debug, Default)]
struct State {
    sink: Sink,
    /// The last `agent_message` of the current turn: `turn.completed` reports it.
    last_message: Option<String>,
    /// Ids of command items announced by `item.started`, so that a completed item that was
    /// never started still shows its call.
    started: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct CodexLine<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow)]
    thread_id: Str<'a>,
    #[serde(borrow)]
    item: Obj<Item<'a>>,
    usage: Option<Value>,
    /// `error` events.
    #[serde(borrow)]
    message: Str<'a>,
    /// `turn.failed`.
    #[serde(borrow)]
    error: Obj<TurnError<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Item<'a> {
    #[serde(borrow)]
    id: Str<'a>,
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    /// `agent_message` and `reasoning`.
    #[serde(borrow)]
    text: Str<'a>,
    #[serde(borrow)]
    command: Str<'a>,
    #[serde(borrow)]
    aggregated_output: Str<'a>,
    exit_code: Option<i64>,
    #[serde(borrow)]
    status: Str<'a>,
    /// `error` items.
    #[serde(borrow)]
    message: Str<'a>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct TurnError<'a> {
    #[serde(borrow)]
    message: Str<'a>,
}

impl State {
    fn line(&mut self, item: &LineItem<'_>, at_end: bool, out: &mut Vec<Event>) {
        if let Some(event) = parse_event::<CodexLine>(item, at_end, &mut self.sink, out) {
            self.event(event, out);
        }
    }

    fn event(&mut self, event: CodexLine<'_>, out: &mut Vec<Event>) {
        match event.kind.as_str() {
            "thread.started" => {
                if let Some(id) = event.thread_id.get() {
                    // The model is only in Codex's config, never in its output.
                    self.sink.session(id, None, out);
                }
            }
            "turn.started" => self.last_message = None,
            "item.started" => match event.item.into_inner() {
                Some(item) => self.item_started(item, out),
                None => tracing::debug!("item.started without an item"),
            },
            "item.completed" => match event.item.into_inner() {
                Some(item) => self.item_completed(item, out),
                None => tracing::debug!("item.completed without an item"),
            },
            "turn.completed" => {
                let finished = Event::Finished {
                    text: self.last_message.take(),
                    is_error: false,
                    usage: Usage::from_codex(event.usage.as_ref()),
                    stop: None,
                };
                self.sink.push(finished, out);
            }
            "turn.failed" => {
                let message = event.error.into_inner().map(|error| error.message);
                self.sink.error(error_text(message.as_ref()), out);
                let finished = Event::Finished {
                    text: self.last_message.take(),
                    is_error: true,
                    usage: Usage::from_codex(event.usage.as_ref()),
                    stop: None,
                };
                self.sink.push(finished, out);
            }
            "error" => self.sink.error(error_text(Some(&event.message)), out),
            // item.updated (todo lists), and whatever later versions add.
            kind => tracing::debug!(kind, "skipping an event"),
        }
    }

    fn item_started(&mut self, item: Item<'_>, out: &mut Vec<Event>) {
        if item.kind.as_str() == "command_execution" {
            if let Some(id) = item.id.get() {
                self.started.push(id.to_owned());
            }
            self.command(&item, out);
        }
    }

    fn item_completed(&mut self, item: Item<'_>, out: &mut Vec<Event>) {
        match item.kind.as_str() {
            "agent_message" => {
                let text = item.text.into_string().unwrap_or_default();
                self.sink.text(&text, out);
                self.sink.end_text(out);
                self.last_message = Some(text);
            }
            "reasoning" => {
                let text = item.text.as_str();
                if !text.is_empty() {
                    self.sink.push(Event::Thinking(text.to_owned()), out);
                }
            }
            "command_execution" => {
                let id = item.id.get();
                let started = match id {
                    Some(id) => match self.started.iter().position(|seen| seen == id) {
                        Some(index) => {
                            self.started.swap_remove(index);
                            true
                        }
                        None => false,
                    },
                    None => false,
                };
                if !started {
                    self.command(&item, out);
                }
                let is_error = match item.exit_code {
                    Some(code) => code != 0,
                    // Declined or failed before running.
                    None => item.status.as_str() != "completed",
                };
                let result = Event::NativeToolResult {
                    id: item.id.into_string(),
                    output: item.aggregated_output.into_string().unwrap_or_default(),
                    is_error,
                };
                self.sink.push(result, out);
            }
            // Warnings (an unknown model slug, …), not the end of the turn.
            "error" => tracing::warn!(message = item.message.as_str(), "Codex reported a warning"),
            kind => tracing::debug!(kind, "skipping an item"),
        }
    }

    fn command(&mut self, item: &Item<'_>, out: &mut Vec<Event>) {
        let tool = Event::NativeTool {
            id: item.id.get().map(str::to_owned),
            name: "command_execution".to_owned(),
            input: serde_json::json!({ "command": item.command.as_str() }),
        };
        self.sink.push(tool, out);
    }
}

fn error_text<'s>(message: Option<&'s Str<'_>>) -> &'s str {
    match message.and_then(Str::get) {
        Some(message) if !message.is_empty() => message,
        _ => "Codex reported an error",
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::decode::testing::*;
    use crate::decode::{Format, decode_all};

    fn decode(path: &str) -> Vec<Event> {
        without_usage(decode_all(Format::Codex, &fixture(path)))
    }

    #[test]
    fn every_fixture_keeps_the_contract() {
        check_suite("codex", Format::Codex, CODEX);
    }

    #[test]
    fn plain() {
        assert_eq!(
            decode("codex/a_plain_json.stdout"),
            [
                session("01a1fca2-940e-7f52-958a-ebb8a6796fbe", None),
                text(HELLO),
                Event::TextEnd,
                finished(Some(HELLO), false, None),
            ]
        );
        let events = decode_all(Format::Codex, &fixture("codex/a_plain_json.stdout"));
        let Some(Event::Finished {
            usage: Some(usage), ..
        }) = events.last()
        else {
            panic!("{events:#?}");
        };
        assert_eq!(
            *usage,
            Usage {
                input_tokens: Some(6929),
                output_tokens: Some(55),
                cached_tokens: Some(0),
                cost_usd: None,
            }
        );
    }

    #[test]
    fn json_block() {
        assert_eq!(
            text_blocks(&decode("codex/b_json_block_json.stdout")),
            [ENVELOPE]
        );
    }

    #[test]
    fn command_execution() {
        let command = json!({"command": "/bin/bash -lc 'echo fake-tool-output'"});
        assert_eq!(
            decode("codex/e_tool_exec_readonly.stdout"),
            [
                session("01a1fca2-a7c5-7f60-92c8-30752c2e8654", None),
                text("Running it."),
                Event::TextEnd,
                tool("item_1", "command_execution", command),
                tool_result("item_1", "fake-tool-output\n", false),
                text(DONE),
                Event::TextEnd,
                finished(Some(DONE), false, None),
            ]
        );
    }

    #[test]
    fn failed_or_unannounced_commands() {
        let input = concat!(
            r#"{"type":"item.completed","item":{"id":"item_3","type":"command_execution","command":"false","aggregated_output":"","exit_code":1,"status":"failed"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_4","type":"command_execution","command":"rm x","aggregated_output":"","exit_code":null,"status":"declined"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_5","type":"reasoning","text":"hmm"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_6","type":"error","message":"unknown model slug"}}"#,
            "\n",
        );
        assert_eq!(
            decode_all(Format::Codex, input.as_bytes()),
            [
                tool("item_3", "command_execution", json!({"command": "false"})),
                tool_result("item_3", "", true),
                tool("item_4", "command_execution", json!({"command": "rm x"})),
                tool_result("item_4", "", true),
                Event::Thinking("hmm".into()),
            ]
        );
    }

    #[test]
    fn error_then_failed_turn_is_one_error() {
        let message = r#"{"error": {"type": "invalid_request_error", "message": "scripted failure from fake server", "code": null}}"#;
        assert_eq!(
            decode_all(Format::Codex, &fixture("codex/g_api_error_400.stdout")),
            [
                session("01a1fca2-ad3e-7db3-953e-efd4e85348d4", None),
                Event::Error(message.into()),
                Event::Finished {
                    text: None,
                    is_error: true,
                    usage: None,
                    stop: None
                },
            ]
        );
    }

    #[test]
    fn resume_prints_the_same_thread() {
        let first = decode("codex/c_turn1_json.stdout");
        let second = decode("codex/c_turn2_resume_id_json.stdout");
        let third = decode("codex/c_turn3_resume_last_json.stdout");
        assert_eq!(
            first[0],
            session("01a1fca2-9b62-79a0-8a78-df4fb9afc335", None)
        );
        assert_eq!(first[0], second[0]);
        assert_eq!(first[0], third[0]);
        assert_eq!(text_blocks(&third), [RECALL]);
    }

    #[test]
    fn two_turns_in_one_stream() {
        let mut input = fixture("codex/c_turn1_json.stdout");
        input.extend(fixture("codex/c_turn2_resume_id_json.stdout"));
        let events = without_usage(decode_all(Format::Codex, &input));
        assert_eq!(
            events,
            [
                session("01a1fca2-9b62-79a0-8a78-df4fb9afc335", None),
                text(REMEMBER),
                Event::TextEnd,
                finished(Some(REMEMBER), false, None),
                text(RECALL),
                Event::TextEnd,
                finished(Some(RECALL), false, None),
            ]
        );
    }

    #[test]
    fn plain_exec_output_is_noise() {
        assert_eq!(decode("codex/a_plain_text.stdout"), []);
    }

    #[test]
    fn garbage() {
        check_garbage(Format::Codex);
    }
}
