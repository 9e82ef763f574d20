//! Copilot CLI `--output-format json` (JSONL).
//!
//! One JSON object per line, each with a `type` and a `data` object:
//!
//! ```text
//! {"type":"session.tools_updated","data":{"model":"claude-haiku-4-5"}}
//! {"type":"user.message","data":{"content":"…"}}                      the prompt, echoed
//! {"type":"assistant.message_delta","data":{"messageId":"m1","deltaContent":"OK from"}}
//! {"type":"assistant.message","data":{"messageId":"m1","content":"OK from fake.",
//!     "toolRequests":[{"toolCallId":"t1","name":"view","arguments":{…}}]}}
//! {"type":"tool.execution_complete","data":{"toolCallId":"t1","success":true,
//!     "result":{"content":"…"}}}                                    or "error":{"message":…}
//! {"type":"session.error","data":{"message":"Model 'x' not found …","statusCode":404}}
//! {"type":"result","sessionId":"…","exitCode":0,"usage":{…}}
//! ```
//!
//! The text streams as `message_delta`s and then arrives whole in `assistant.message`;
//! only what the deltas did not already give is emitted from the whole message, so the
//! text comes exactly once. The session id is only in the final `result` line.

use serde::Deserialize;
use serde_json::Value;

use super::json::{Obj, Sink, Str, parse_event};
use super::lines::{LineBuffer, LineItem};
use super::{Decoder, Event};

/// Decodes Copilot's `--output-format json` output.
#[derive(Debug, Default)]
pub struct CopilotDecoder {
    lines: LineBuffer,
    state: State,
}

impl Decoder for CopilotDecoder {
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
    /// The model the session runs, from `session.tools_updated` or `model.call_start`.
    model: Option<String>,
    /// The message whose deltas are streaming, and the text they gave so far.
    streaming: Option<(String, String)>,
    /// The last whole assistant message: the `result` reports it.
    last_message: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct CopilotLine<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow)]
    data: Obj<Data<'a>>,
    /// `result`.
    #[serde(rename = "sessionId", borrow)]
    session_id: Str<'a>,
    #[serde(rename = "exitCode")]
    exit_code: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Data<'a> {
    #[serde(borrow)]
    model: Str<'a>,
    #[serde(rename = "messageId", borrow)]
    message_id: Str<'a>,
    #[serde(rename = "deltaContent", borrow)]
    delta_content: Str<'a>,
    /// `assistant.message`: the whole text.
    #[serde(borrow)]
    content: Str<'a>,
    #[serde(rename = "toolRequests")]
    tool_requests: Vec<ToolRequest>,
    /// `tool.execution_*`.
    #[serde(rename = "toolCallId", borrow)]
    tool_call_id: Str<'a>,
    success: Option<bool>,
    #[serde(borrow)]
    result: Obj<Outcome<'a>>,
    /// `tool.execution_complete` (an object) and `session.error` (no: its text is
    /// `message`).
    #[serde(borrow)]
    error: Obj<Outcome<'a>>,
    /// `session.error`.
    #[serde(borrow)]
    message: Str<'a>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ToolRequest {
    #[serde(rename = "toolCallId")]
    tool_call_id: Option<String>,
    name: Option<String>,
    arguments: Option<Value>,
}

/// A native tool's result (`content`) or error (`message`).
#[derive(Deserialize, Default)]
#[serde(default)]
struct Outcome<'a> {
    #[serde(borrow)]
    content: Str<'a>,
    #[serde(borrow)]
    message: Str<'a>,
}

impl State {
    fn line(&mut self, item: &LineItem<'_>, at_end: bool, out: &mut Vec<Event>) {
        if let Some(event) = parse_event::<CopilotLine>(item, at_end, &mut self.sink, out) {
            self.event(event, out);
        }
    }

    fn event(&mut self, event: CopilotLine<'_>, out: &mut Vec<Event>) {
        let data = event.data.into_inner().unwrap_or_default();
        match event.kind.as_str() {
            "session.tools_updated" | "model.call_start" => {
                if let Some(model) = data.model.into_string() {
                    self.model = Some(model);
                }
            }
            "assistant.message_delta" => self.delta(data, out),
            "assistant.message" => self.message(data, out),
            "tool.execution_complete" => {
                let is_error = data.success != Some(true);
                let outcome = if is_error { data.error } else { data.result };
                let outcome = outcome.into_inner().unwrap_or_default();
                let output = outcome.content.or(outcome.message).into_string();
                let result = Event::NativeToolResult {
                    id: data.tool_call_id.into_string(),
                    output: output.unwrap_or_default(),
                    is_error,
                };
                self.sink.push(result, out);
            }
            "session.error" => {
                let message = data.message.get().filter(|m| !m.is_empty());
                self.sink
                    .error(message.unwrap_or("copilot reported an error"), out);
            }
            "result" => {
                self.sink.end_text(out);
                if let Some(id) = event.session_id.get() {
                    self.sink.session(id, self.model.as_deref(), out);
                }
                let finished = Event::Finished {
                    text: self.last_message.take(),
                    is_error: event.exit_code.is_some_and(|code| code != 0),
                    // Copilot reports premium requests and durations, no tokens.
                    usage: None,
                    stop: None,
                };
                self.sink.push(finished, out);
            }
            // session.* notices, user.message (the prompt echoed), turn and call
            // bookkeeping, tool.execution_start (its call came in toolRequests), and
            // whatever later versions add.
            kind => tracing::debug!(kind, "skipping an event"),
        }
    }

    fn delta(&mut self, data: Data<'_>, out: &mut Vec<Event>) {
        let id = data.message_id.as_str();
        let piece = data.delta_content.as_str();
        match &mut self.streaming {
            Some((streaming, text)) if streaming == id => text.push_str(piece),
            _ => {
                // A new message: the previous one ended, whole message or not.
                self.sink.end_text(out);
                self.streaming = Some((id.to_owned(), piece.to_owned()));
            }
        }
        self.sink.text(piece, out);
    }

    fn message(&mut self, data: Data<'_>, out: &mut Vec<Event>) {
        let content = data.content.as_str();
        let streamed = match self.streaming.take() {
            Some((id, text)) if id == data.message_id.as_str() => text,
            _ => String::new(),
        };
        // The deltas gave a prefix of the message (usually all of it): emit only the
        // rest. Whole text that disagrees with its deltas keeps what was streamed,
        // which the user has already seen and the scanner has already read.
        if let Some(rest) = content.strip_prefix(streamed.as_str()) {
            self.sink.text(rest, out);
        } else {
            tracing::debug!("a whole message that does not continue its deltas");
        }
        self.sink.end_text(out);
        if !content.is_empty() {
            self.last_message = Some(content.to_owned());
        }
        for request in data.tool_requests {
            let call = Event::NativeTool {
                id: request.tool_call_id,
                name: request.name.unwrap_or_default(),
                input: request.arguments.unwrap_or(Value::Null),
            };
            self.sink.push(call, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::super::testing::{COPILOT, COPILOT_ENVELOPE, check_suite, fixture, text_blocks};
    use super::super::{Format, decode_all};
    use super::*;

    fn decode(lines: &[Value]) -> Vec<Event> {
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        decode_all(Format::Copilot, text.as_bytes())
    }

    #[test]
    fn every_fixture_keeps_the_contract() {
        check_suite("copilot", Format::Copilot, COPILOT);
    }

    #[test]
    fn an_envelope_streamed_in_pieces_is_one_text_block() {
        let events = decode_all(
            Format::Copilot,
            &fixture("copilot/f_envelope_in_deltas_json.stdout"),
        );
        assert_eq!(text_blocks(&events), [COPILOT_ENVELOPE]);
        let Some(Event::Session { id, model }) = events
            .iter()
            .find(|event| matches!(event, Event::Session { .. }))
        else {
            panic!("no session: {events:#?}");
        };
        assert_eq!(id, "1f27d950-0486-4a2a-81fc-e616ee39fe34");
        assert_eq!(model.as_deref(), Some("claude-haiku-4-5"));
    }

    #[test]
    fn streamed_text_comes_once_and_the_session_at_the_end() {
        let events = decode(&[
            json!({"type":"session.tools_updated","data":{"model":"claude-haiku-4-5"}}),
            json!({"type":"user.message","data":{"content":"say hello"}}),
            json!({"type":"assistant.message_delta","data":{"messageId":"m1","deltaContent":"OK from"}}),
            json!({"type":"assistant.message_delta","data":{"messageId":"m1","deltaContent":" fake."}}),
            json!({"type":"assistant.message","data":{"messageId":"m1","content":"OK from fake.","toolRequests":[]}}),
            json!({"type":"result","sessionId":"s1","exitCode":0,"usage":{"premiumRequests":0}}),
        ]);
        assert_eq!(
            events,
            [
                Event::Text("OK from".into()),
                Event::Text(" fake.".into()),
                Event::TextEnd,
                Event::Session {
                    id: "s1".into(),
                    model: Some("claude-haiku-4-5".into())
                },
                Event::Finished {
                    text: Some("OK from fake.".into()),
                    is_error: false,
                    usage: None,
                    stop: None
                },
            ]
        );
    }

    #[test]
    fn a_whole_message_without_deltas_or_beyond_them_gives_the_rest() {
        let events = decode(&[
            json!({"type":"assistant.message","data":{"messageId":"m1","content":"whole"}}),
            json!({"type":"assistant.message_delta","data":{"messageId":"m2","deltaContent":"par"}}),
            json!({"type":"assistant.message","data":{"messageId":"m2","content":"partial"}}),
        ]);
        assert_eq!(
            events,
            [
                Event::Text("whole".into()),
                Event::TextEnd,
                Event::Text("par".into()),
                Event::Text("tial".into()),
                Event::TextEnd,
            ]
        );
    }

    #[test]
    fn native_tools_and_their_results() {
        let events = decode(&[
            json!({"type":"assistant.message","data":{"messageId":"m1","content":"","toolRequests":[
                {"toolCallId":"t1","name":"view","arguments":{"path":"a.txt"}}]}}),
            json!({"type":"tool.execution_complete","data":{"toolCallId":"t1","success":true,"result":{"content":"hi\n"}}}),
            json!({"type":"tool.execution_complete","data":{"toolCallId":"t2","success":false,"error":{"message":"Permission denied","code":"denied"}}}),
        ]);
        assert_eq!(
            events,
            [
                Event::NativeTool {
                    id: Some("t1".into()),
                    name: "view".into(),
                    input: json!({"path":"a.txt"})
                },
                Event::NativeToolResult {
                    id: Some("t1".into()),
                    output: "hi\n".into(),
                    is_error: false
                },
                Event::NativeToolResult {
                    id: Some("t2".into()),
                    output: "Permission denied".into(),
                    is_error: true
                },
            ]
        );
    }

    #[test]
    fn errors_end_in_a_failed_result() {
        let events = decode_all(Format::Copilot, &fixture("copilot/g_bad_model_json.stdout"));
        let errors: Vec<_> = events
            .iter()
            .filter_map(|event| match event {
                Event::Error(message) => Some(message.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(errors.len(), 1, "{events:?}");
        assert!(
            errors[0].starts_with("Model 'bad-model' not found"),
            "{errors:?}"
        );
        assert!(matches!(
            events.last(),
            Some(Event::Finished { is_error: true, .. })
        ));
    }

    #[test]
    fn the_prompt_echo_is_never_text() {
        let events = decode(&[
            json!({"type":"user.message","data":{"content":"{\"type\":\"tool_use\",\"name\":\"codecrew:help\"}"}}),
        ]);
        assert_eq!(events, []);
    }
}
