//! opencode `run --format json` (JSONL).
//!
//! One JSON object per line, each with a `type`, the `sessionID` and a `part`:
//!
//! ```text
//! {"type":"step_start","sessionID":"ses_…","part":{"type":"step-start",…}}
//! {"type":"text","sessionID":"ses_…","part":{"type":"text","text":"the whole text",…}}
//! {"type":"tool_use","sessionID":"ses_…","part":{"type":"tool","tool":"read","callID":"toolu_1",
//!     "state":{"status":"completed","input":{…},"output":"…"}}}
//! {"type":"step_finish","sessionID":"ses_…","part":{"reason":"stop","tokens":{"input":100,
//!     "output":7,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.000135}}
//! {"type":"error","sessionID":"ses_…","error":{"name":"APIError","data":{"message":"…"}}}
//! ```
//!
//! A text part arrives whole, never in deltas. A run has one step per model call (a
//! native tool call ends a step with `reason: "tool-calls"`); each `step_finish` reports
//! that call's tokens and cost, so the run's usage is their sum, reported when stdout
//! ends.

use serde::Deserialize;
use serde_json::Value;

use super::json::{Obj, Sink, Str, parse_event};
use super::lines::{LineBuffer, LineItem};
use super::{Decoder, Event, Usage};

/// Decodes opencode's `run --format json` output.
#[derive(Debug, Default)]
pub struct OpencodeDecoder {
    lines: LineBuffer,
    state: State,
}

impl Decoder for OpencodeDecoder {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Event>) {
        let state = &mut self.state;
        self.lines.feed(bytes, |item| state.line(&item, false, out));
    }

    fn finish(&mut self, out: &mut Vec<Event>) {
        let state = &mut self.state;
        self.lines.finish(|item| state.line(&item, true, out));
        state.finish(out);
    }
}

#[derive(Debug, Default)]
struct State {
    sink: Sink,
    /// Any event of a run was read (a run that printed nothing reports no end).
    started: bool,
    /// The sum of every step's tokens and cost.
    usage: Usage,
    /// The last text part: the run's answer.
    last_text: Option<String>,
    /// Why the last step ended (`stop`, `tool-calls`, `length`).
    stop: Option<String>,
    failed: bool,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Line<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(rename = "sessionID", borrow)]
    session_id: Str<'a>,
    part: Obj<Part<'a>>,
    error: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Part<'a> {
    #[serde(borrow)]
    text: Str<'a>,
    /// `tool_use`: the tool's name, the call's id and how it went.
    #[serde(borrow)]
    tool: Str<'a>,
    #[serde(rename = "callID", borrow)]
    call_id: Str<'a>,
    state: Obj<ToolState>,
    /// `step_finish`.
    #[serde(borrow)]
    reason: Str<'a>,
    tokens: Option<Value>,
    cost: Option<f64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ToolState {
    status: Option<String>,
    input: Option<Value>,
    output: Option<String>,
    error: Option<String>,
}

impl State {
    fn line(&mut self, item: &LineItem<'_>, at_end: bool, out: &mut Vec<Event>) {
        if let Some(line) = parse_event::<Line>(item, at_end, &mut self.sink, out) {
            self.event(line, out);
        }
    }

    fn event(&mut self, line: Line<'_>, out: &mut Vec<Event>) {
        self.started = true;
        if let Some(id) = line.session_id.get() {
            self.sink.session(id, None, out);
        }
        let part = line.part.into_inner().unwrap_or_default();
        match line.kind.as_str() {
            "text" => {
                if let Some(text) = part.text.into_string() {
                    self.sink.text(&text, out);
                    self.sink.end_text(out);
                    self.last_text = Some(text);
                }
            }
            "tool_use" => self.tool(part, out),
            "step_finish" => {
                if let Some(usage) = step_usage(part.tokens.as_ref(), part.cost) {
                    self.usage.add(&usage);
                }
                self.stop = part.reason.into_string();
            }
            "error" => {
                self.failed = true;
                let message = line.error.as_ref().and_then(error_message);
                self.sink
                    .error(message.unwrap_or("opencode reported an error"), out);
            }
            // step_start, reasoning parts (never the answer), and whatever later
            // versions add.
            kind => tracing::debug!(kind, "skipping an event"),
        }
    }

    /// A native tool part: the call, then its result once it completed or failed.
    fn tool(&mut self, part: Part<'_>, out: &mut Vec<Event>) {
        let id = part.call_id.into_string();
        let state = part.state.into_inner().unwrap_or_default();
        self.sink.push(
            Event::NativeTool {
                id: id.clone(),
                name: part.tool.into_string().unwrap_or_default(),
                input: state.input.unwrap_or(Value::Null),
            },
            out,
        );
        let (output, is_error) = match state.status.as_deref() {
            Some("completed") => (state.output, false),
            Some("error") => (state.error.or(state.output), true),
            _ => return,
        };
        self.sink.push(
            Event::NativeToolResult {
                id,
                output: output.unwrap_or_default(),
                is_error,
            },
            out,
        );
    }

    fn finish(&mut self, out: &mut Vec<Event>) {
        self.sink.end_text(out);
        if !self.started {
            return;
        }
        let finished = Event::Finished {
            text: self.last_text.take(),
            is_error: self.failed,
            usage: (!self.usage.is_empty()).then_some(self.usage),
            stop: self.stop.take(),
        };
        self.sink.push(finished, out);
    }
}

/// One step's tokens (`input` excludes the cache, whose reads and writes come apart;
/// `reasoning` is output the model wrote) and its cost.
fn step_usage(tokens: Option<&Value>, cost: Option<f64>) -> Option<Usage> {
    let field = |path: &[&str]| {
        let mut value = tokens?;
        for key in path {
            value = value.get(key)?;
        }
        value.as_u64()
    };
    let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    let read = field(&["cache", "read"]);
    let usage = Usage {
        input_tokens: sum(sum(field(&["input"]), read), field(&["cache", "write"])),
        output_tokens: sum(field(&["output"]), field(&["reasoning"])),
        cached_tokens: read,
        cost_usd: cost.filter(|c| c.is_finite() && *c >= 0.0),
    };
    (!usage.is_empty()).then_some(usage)
}

/// The message of an `error` event: `error.data.message`, else the error's name.
fn error_message(error: &Value) -> Option<&str> {
    error
        .pointer("/data/message")
        .and_then(Value::as_str)
        .or_else(|| error.get("message").and_then(Value::as_str))
        .or_else(|| error.get("name").and_then(Value::as_str))
        .filter(|m| !m.is_empty())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::decode::testing::*;
    use crate::decode::{Format, decode_all};

    #[test]
    fn every_fixture_keeps_the_contract() {
        check_suite("opencode", Format::Opencode, OPENCODE);
    }

    #[test]
    fn a_plain_answer_gives_its_session_text_and_usage() {
        let events = decode_all(Format::Opencode, &fixture("opencode/a_plain_json.stdout"));
        assert_eq!(
            events,
            [
                Event::Session {
                    id: "ses_dec7676a2ffe2gc9gtPLcGf7w6".into(),
                    model: None
                },
                Event::Text(OPENCODE_PLAIN.into()),
                Event::TextEnd,
                Event::Finished {
                    text: Some(OPENCODE_PLAIN.into()),
                    is_error: false,
                    usage: Some(Usage {
                        input_tokens: Some(100),
                        output_tokens: Some(7),
                        cached_tokens: Some(0),
                        cost_usd: Some(0.000135),
                    }),
                    stop: Some("stop".into()),
                },
            ]
        );
    }

    #[test]
    fn a_native_tool_is_shown_with_its_result_and_every_step_is_counted() {
        let events = decode_all(
            Format::Opencode,
            &fixture("opencode/e_native_read_json.stdout"),
        );
        let call = events
            .iter()
            .find_map(|e| match e {
                Event::NativeTool { name, input, .. } => Some((name.clone(), input.clone())),
                _ => None,
            })
            .unwrap();
        assert_eq!(call.0, "read");
        assert_eq!(call.1["filePath"], "hello.txt");
        assert!(events.iter().any(|e| matches!(
            e,
            Event::NativeToolResult { output, is_error: false, .. } if output.contains("hello file")
        )));
        let Some(Event::Finished { usage, .. }) = events.last() else {
            panic!("{events:?}")
        };
        let usage = usage.unwrap();
        assert_eq!(
            (usage.input_tokens, usage.output_tokens),
            (Some(200), Some(16))
        );
    }

    #[test]
    fn an_api_error_is_reported_with_its_message() {
        let events = decode_all(
            Format::Opencode,
            &fixture("opencode/g_api_error_400_json.stdout"),
        );
        assert!(
            events.contains(&Event::Error("fake bad request".into())),
            "{events:?}"
        );
        assert!(matches!(
            events.last(),
            Some(Event::Finished { is_error: true, .. })
        ));
    }

    #[test]
    fn cached_tokens_count_as_input_and_reasoning_as_output() {
        let tokens = serde_json::json!({"input": 10, "output": 5, "reasoning": 2,
                                        "cache": {"read": 100, "write": 3}});
        assert_eq!(
            step_usage(Some(&tokens), Some(f64::NAN)),
            Some(Usage {
                input_tokens: Some(113),
                output_tokens: Some(7),
                cached_tokens: Some(100),
                cost_usd: None,
            })
        );
        assert_eq!(step_usage(None, None), None);
    }

    #[test]
    fn nothing_printed_reports_no_end() {
        assert_eq!(decode_all(Format::Opencode, b""), []);
    }
}
