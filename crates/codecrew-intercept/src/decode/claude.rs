//! Claude Code `--output-format stream-json --verbose` and `--output-format json`.
//!
//! One JSON object per line. The shapes codecrew reads (key order varies between
//! versions, and both versions add keys freely):
//!
//! ```text
//! {"type":"system","subtype":"init","session_id":"…","model":"claude-haiku-5-5",…}
//! {"type":"assistant","message":{"content":[ONE block],…},"session_id":"…",…}
//!     block: {"type":"text","text":…} | {"type":"thinking","thinking":…}
//!          | {"type":"tool_use","id":…,"name":…,"input":{…}}
//! {"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":…,
//!     "content":"…" | [{"type":"text","text":…}],"is_error":…}]},…}
//! {"type":"stream_event","event":{SSE data: message_start, content_block_start,
//!     content_block_delta (text_delta, thinking_delta, …), content_block_stop, …}}
//! {"type":"result","subtype":"success","is_error":…,"result":"<last message>",
//!     "usage":{…},"stop_reason":"end_turn","session_id":"…",…}
//! ```
//!
//! `stream_event` lines only come with `--include-partial-messages`; each block is then
//! streamed as deltas and repeated whole in an `assistant` event, which arrives before the
//! block's `content_block_stop`. `--output-format json` prints only the `result` line.
//! On an API error the CLI invents an `assistant` text block holding the error message
//! (`is_api_error_message: true` in 2.1.329; only `"error":"…"` in 2.1.197) and ends with a
//! `result` whose `is_error` is true although `subtype` is `"success"`.

use std::collections::VecDeque;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::json::{Obj, Sink, Str, parse_event};
use super::lines::{LineBuffer, LineItem};
use super::{Decoder, Event, Usage};

/// Decodes Claude Code's JSON output.
#[derive(Debug, Default)]
pub struct ClaudeDecoder {
    lines: LineBuffer,
    state: State,
}

impl Decoder for ClaudeDecoder {
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
    /// Text streamed as deltas, per block, not yet matched with the complete `assistant`
    /// block that repeats it.
    streamed_text: VecDeque<String>,
    /// The same for thinking blocks.
    streamed_thinking: VecDeque<String>,
}

/// One line of output. Every event type shares this struct, so a line is parsed once;
/// fields a type does not have stay `None`, and everything not listed is skipped.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ClaudeLine<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow)]
    subtype: Str<'a>,
    #[serde(borrow)]
    session_id: Str<'a>,
    /// `system/init` only.
    #[serde(borrow)]
    model: Str<'a>,
    /// `assistant` and `user`.
    #[serde(borrow)]
    message: Obj<Message<'a>>,
    /// `stream_event`.
    #[serde(borrow)]
    event: Obj<StreamEvent<'a>>,
    /// A synthetic `assistant` event that reports an API error (2.1.329).
    is_api_error_message: Option<bool>,
    /// Set on synthetic `assistant` error events (a string such as `"unknown"`), and on
    /// Qwen Code's failed `result` (`{"message": "[API Error: 400 …]"}`).
    error: Option<Value>,
    // `result` fields.
    is_error: Option<bool>,
    #[serde(borrow)]
    result: Str<'a>,
    usage: Option<Value>,
    total_cost_usd: Option<f64>,
    /// Per model: its tokens, cost and `contextWindow`.
    #[serde(rename = "modelUsage")]
    model_usage: Option<Value>,
    #[serde(borrow)]
    stop_reason: Str<'a>,
    errors: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Message<'a> {
    #[serde(borrow)]
    content: Option<Content<'a>>,
}

/// Message content: an array of blocks (anything in it that is not an object is skipped),
/// or, for user turns, a plain string we skip.
struct Content<'a>(Vec<Block<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ContentVisitor;

        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = Content<'de>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of content blocks or a string")
            }

            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Content(Vec::new()))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                IgnoredAny.visit_map(map)?;
                Ok(Content(Vec::new()))
            }

            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Content(Vec::new()))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(1));
                while let Some(block) = seq.next_element::<Obj<Block<'de>>>()? {
                    blocks.extend(block.into_inner());
                }
                Ok(Content(blocks))
            }
        }

        deserializer.deserialize_any(ContentVisitor)
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow)]
    text: Str<'a>,
    #[serde(borrow)]
    thinking: Str<'a>,
    #[serde(borrow)]
    id: Str<'a>,
    #[serde(borrow)]
    name: Str<'a>,
    input: Option<Value>,
    #[serde(borrow)]
    tool_use_id: Str<'a>,
    content: Option<ToolOutput>,
    is_error: Option<bool>,
}

/// A `tool_result` block's content: a string, or an array of blocks whose text parts are
/// joined with newlines (images and other parts are left out). Anything else is empty.
struct ToolOutput(String);

impl<'de> Deserialize<'de> for ToolOutput {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OutputVisitor;

        impl<'de> Visitor<'de> for OutputVisitor {
            type Value = ToolOutput;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("tool result content")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(ToolOutput(v.to_owned()))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(ToolOutput(v))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut text = String::new();
                while let Some(part) = seq.next_element::<Value>()? {
                    if part.get("type").and_then(Value::as_str) != Some("text") {
                        continue;
                    }
                    if let Some(part_text) = part.get("text").and_then(Value::as_str) {
                        if !text.is_empty() {
                            text.push('\n');
                        }
                        text.push_str(part_text);
                    }
                }
                Ok(ToolOutput(text))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(ToolOutput(String::new()))
            }

            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(ToolOutput(String::new()))
            }

            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(ToolOutput(String::new()))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(ToolOutput(v.to_string()))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(ToolOutput(v.to_string()))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(ToolOutput(v.to_string()))
            }
        }

        deserializer.deserialize_any(OutputVisitor)
    }
}

/// The SSE data object of a `stream_event`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct StreamEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    /// `content_block_delta` (and `message_delta`, whose delta has no `type`).
    #[serde(borrow)]
    delta: Obj<Piece<'a>>,
    /// `content_block_start`.
    #[serde(borrow)]
    content_block: Obj<Piece<'a>>,
}

/// A delta, or the start of a content block: only the text-bearing fields.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Piece<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow)]
    text: Str<'a>,
    #[serde(borrow)]
    thinking: Str<'a>,
}

/// Adds a streamed delta to the block being streamed (the last one, opened on the first
/// delta); false for an empty delta, which is neither kept nor emitted.
fn append_streamed(blocks: &mut VecDeque<String>, delta: &str) -> bool {
    if delta.is_empty() {
        return false;
    }
    match blocks.back_mut() {
        Some(block) => block.push_str(delta),
        None => blocks.push_back(delta.to_owned()),
    }
    true
}

/// What a complete block adds to the deltas streamed for it (the oldest block streamed
/// and not yet completed): all of it when nothing was streamed, nothing when the stream is
/// not a prefix of the block (the stream, already emitted, is kept).
fn unstreamed<'b>(blocks: &mut VecDeque<String>, complete: &'b str) -> &'b str {
    let Some(streamed) = blocks.pop_front() else {
        return complete;
    };
    complete.strip_prefix(streamed.as_str()).unwrap_or_else(|| {
        tracing::debug!(
            streamed = streamed.len(),
            block = complete.len(),
            "the streamed block is not a prefix of the complete one; keeping the stream"
        );
        ""
    })
}

impl State {
    fn line(&mut self, item: &LineItem<'_>, at_end: bool, out: &mut Vec<Event>) {
        if let Some(event) = parse_event::<ClaudeLine>(item, at_end, &mut self.sink, out) {
            self.event(event, out);
        }
    }

    fn event(&mut self, event: ClaudeLine<'_>, out: &mut Vec<Event>) {
        match event.kind.as_str() {
            "assistant" => self.assistant(event, out),
            "user" => self.user(event, out),
            "stream_event" => match event.event.into_inner() {
                Some(stream_event) => self.stream_event(stream_event, out),
                None => tracing::debug!("stream_event without an event"),
            },
            "result" => self.result(event, out),
            "system" => match event.subtype.as_str() {
                "init" => {
                    if let Some(id) = event.session_id.get() {
                        let model = event.model.get();
                        self.sink.session(id, model, out);
                    }
                }
                // status, thinking_tokens, permission_denied (the denial also comes as an
                // error tool_result), hooks, compaction: nothing to show.
                subtype => tracing::debug!(subtype, "skipping a system event"),
            },
            kind => tracing::debug!(kind, "skipping an unknown event type"),
        }
    }

    fn assistant(&mut self, event: ClaudeLine<'_>, out: &mut Vec<Event>) {
        // The CLI reports API errors as assistant text it wrote itself: that text is not the
        // model's, so it must not reach the scanner.
        let api_error = event.is_api_error_message == Some(true) || event.error.is_some();
        let Some(Content(blocks)) = event
            .message
            .into_inner()
            .and_then(|message| message.content)
        else {
            tracing::debug!("assistant event without content");
            return;
        };
        for block in blocks {
            match block.kind.as_str() {
                "text" => {
                    let text = block.text.as_str();
                    if api_error {
                        self.sink.error(text, out);
                    } else {
                        self.complete_text(text, out);
                    }
                }
                "thinking" => self.complete_thinking(block.thinking.as_str(), out),
                "tool_use" | "server_tool_use" | "mcp_tool_use" => {
                    let tool = Event::NativeTool {
                        id: block.id.into_string(),
                        name: block.name.into_string().unwrap_or_default(),
                        input: block
                            .input
                            .unwrap_or_else(|| Value::Object(Default::default())),
                    };
                    self.sink.push(tool, out);
                }
                kind => tracing::debug!(kind, "skipping an assistant block"),
            }
        }
    }

    /// A complete text block: emits what its streamed deltas (if any) have not.
    fn complete_text(&mut self, text: &str, out: &mut Vec<Event>) {
        let rest = unstreamed(&mut self.streamed_text, text);
        self.sink.text(rest, out);
        self.sink.end_text(out);
    }

    fn complete_thinking(&mut self, thinking: &str, out: &mut Vec<Event>) {
        let rest = unstreamed(&mut self.streamed_thinking, thinking);
        if !rest.is_empty() {
            self.sink.push(Event::Thinking(rest.to_owned()), out);
        }
    }

    fn stream_event(&mut self, event: StreamEvent<'_>, out: &mut Vec<Event>) {
        match event.kind.as_str() {
            "message_start" => {
                // Blocks of the previous message whose complete event never came.
                if !self.streamed_text.is_empty() || !self.streamed_thinking.is_empty() {
                    tracing::debug!("dropping streamed blocks that were never completed");
                }
                self.streamed_text.clear();
                self.streamed_thinking.clear();
            }
            "content_block_start" => {
                let Some(block) = event.content_block.into_inner() else {
                    return;
                };
                match block.kind.as_str() {
                    "text" => {
                        self.streamed_text.push_back(String::new());
                        self.stream_text(block.text.as_str(), out);
                    }
                    "thinking" => {
                        self.streamed_thinking.push_back(String::new());
                        self.stream_thinking(block.thinking.as_str(), out);
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let Some(delta) = event.delta.into_inner() else {
                    return;
                };
                match delta.kind.as_str() {
                    "text_delta" => self.stream_text(delta.text.as_str(), out),
                    "thinking_delta" => self.stream_thinking(delta.thinking.as_str(), out),
                    // input_json_delta, signature_delta: the complete block carries them.
                    _ => {}
                }
            }
            "content_block_stop" => self.sink.end_text(out),
            _ => {}
        }
    }

    fn stream_text(&mut self, text: &str, out: &mut Vec<Event>) {
        if append_streamed(&mut self.streamed_text, text) {
            self.sink.text(text, out);
        }
    }

    fn stream_thinking(&mut self, thinking: &str, out: &mut Vec<Event>) {
        if append_streamed(&mut self.streamed_thinking, thinking) {
            self.sink.push(Event::Thinking(thinking.to_owned()), out);
        }
    }

    fn user(&mut self, event: ClaudeLine<'_>, out: &mut Vec<Event>) {
        // User events only carry tool results: the prompt is never echoed, and any text
        // block here was written by the CLI or the user, not the model.
        let Some(Content(blocks)) = event
            .message
            .into_inner()
            .and_then(|message| message.content)
        else {
            return;
        };
        for block in blocks {
            if block.kind.as_str() != "tool_result" {
                continue;
            }
            let result = Event::NativeToolResult {
                id: block.tool_use_id.into_string(),
                output: block.content.map(|content| content.0).unwrap_or_default(),
                is_error: block.is_error.unwrap_or(false),
            };
            self.sink.push(result, out);
        }
    }

    fn result(&mut self, event: ClaudeLine<'_>, out: &mut Vec<Event>) {
        if let Some(id) = event.session_id.get() {
            // `--output-format json` has no init line: the result is the only place.
            self.sink.session(id, None, out);
        }
        let subtype = event.subtype.as_str();
        // `subtype` stays "success" on API errors; only `is_error` tells.
        let is_error = event
            .is_error
            .unwrap_or_else(|| subtype.starts_with("error"));
        let text = event.result.into_string();
        if is_error {
            let message = match &text {
                Some(text) if !text.is_empty() => text.clone(),
                _ => error_list(event.errors.as_ref())
                    .or_else(|| error_message(event.error.as_ref()))
                    .unwrap_or_else(|| format!("the CLI reported an error ({subtype})")),
            };
            self.sink.error(&message, out);
        } else if !self.sink.any_text() {
            // `--output-format json`: the result is the only copy of the answer.
            if let Some(text) = &text {
                self.sink.text(text, out);
            }
        }
        self.streamed_text.clear();
        self.streamed_thinking.clear();
        if let Some(window) = context_window(event.model_usage.as_ref()) {
            self.sink.push(Event::ContextWindow(window), out);
        }
        let finished = Event::Finished {
            text,
            is_error,
            usage: Usage::from_claude(event.usage.as_ref(), event.total_cost_usd),
            stop: event.stop_reason.into_string(),
        };
        self.sink.push(finished, out);
    }
}

/// The largest context window among the models a result reports (the session's main
/// model's; a small helper model's is smaller).
fn context_window(model_usage: Option<&Value>) -> Option<u64> {
    model_usage?
        .as_object()?
        .values()
        .filter_map(|usage| usage.get("contextWindow")?.as_u64())
        .filter(|window| *window > 0)
        .max()
}

/// The messages of a result's `errors` array (error subtypes such as `error_max_turns`).
fn error_list(errors: Option<&Value>) -> Option<String> {
    let messages: Vec<&str> = errors?
        .as_array()?
        .iter()
        .filter_map(|error| error.as_str().or_else(|| error.get("message")?.as_str()))
        .collect();
    (!messages.is_empty()).then(|| messages.join("\n"))
}

/// The message of a result's `error` object (Qwen Code's).
fn error_message(error: Option<&Value>) -> Option<String> {
    let message = error?.get("message")?.as_str()?;
    (!message.is_empty()).then(|| message.to_owned())
}

#[cfg(test)]
#[path = "claude_tests.rs"]
mod tests;
