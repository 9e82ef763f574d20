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
use super::{Decoder, Event};

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
    /// Set on synthetic `assistant` error events (a string such as `"unknown"`).
    error: Option<IgnoredAny>,
    // `result` fields.
    is_error: Option<bool>,
    #[serde(borrow)]
    result: Str<'a>,
    usage: Option<Value>,
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
                    .unwrap_or_else(|| format!("Claude Code reported an error ({subtype})")),
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
        let finished = Event::Finished {
            text,
            is_error,
            usage: event.usage,
            stop: event.stop_reason.into_string(),
        };
        self.sink.push(finished, out);
    }
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

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::decode::testing::*;
    use crate::decode::{Format, decode_all};

    fn decode(path: &str) -> Vec<Event> {
        without_usage(decode_all(Format::Claude, &fixture(path)))
    }

    fn decode_str(input: &str) -> Vec<Event> {
        decode_all(Format::Claude, input.as_bytes())
    }

    const MODEL: Option<&str> = Some("claude-haiku-5-5");
    const MODEL_197: Option<&str> = Some("claude-haiku-4-5-20251001");

    #[test]
    fn every_fixture_keeps_the_contract() {
        check_suite("claude", Format::Claude, CLAUDE);
        check_suite("claude-2.1.197", Format::Claude, CLAUDE);
    }

    #[test]
    fn plain_stream_json() {
        assert_eq!(
            decode("claude/a_plain_stream_json.stdout"),
            [
                session("2627f1c1-3f9c-462c-9fcc-1b8461e9d78e", MODEL),
                text(HELLO),
                Event::TextEnd,
                finished(Some(HELLO), false, Some("end_turn")),
            ]
        );
        assert_eq!(
            decode("claude-2.1.197/a_plain_stream_json.stdout"),
            [
                session("9e5c739f-0675-428d-bd62-672d02842725", MODEL_197),
                text(HELLO),
                Event::TextEnd,
                finished(Some(HELLO), false, Some("end_turn")),
            ]
        );
    }

    #[test]
    fn usage_is_the_results_usage() {
        let events = decode_all(
            Format::Claude,
            &fixture("claude/a_plain_stream_json.stdout"),
        );
        let Some(Event::Finished {
            usage: Some(usage), ..
        }) = events.last()
        else {
            panic!("{events:#?}");
        };
        assert_eq!(usage["input_tokens"], 5055);
        assert_eq!(usage["output_tokens"], 18);
    }

    #[test]
    fn json_output_is_one_result_whose_text_is_the_answer() {
        // The envelope reaches the scanner whole, exactly once.
        assert_eq!(
            decode("claude/b_json_block_json.stdout"),
            [
                session("0deda5c3-c488-4154-a273-a4e29811275d", None),
                text(ENVELOPE),
                Event::TextEnd,
                finished(Some(ENVELOPE), false, Some("end_turn")),
            ]
        );
    }

    #[test]
    fn json_block_in_stream_json_is_text_once() {
        let events = decode("claude/b_json_block_stream_json.stdout");
        assert_eq!(text_blocks(&events), [ENVELOPE]);
        assert_eq!(
            events.last(),
            Some(&finished(Some(ENVELOPE), false, Some("end_turn")))
        );
    }

    #[test]
    fn partial_messages_stream_deltas_and_skip_the_repeated_block() {
        assert_eq!(
            decode("claude/a_plain_partial_messages.stdout"),
            [
                session("6c44634d-5dd0-4df1-a3a5-64e422fced4e", MODEL),
                text("Hello! I am "),
                text("the fake mod"),
                text("el. How can "),
                text("I help?"),
                Event::TextEnd,
                finished(Some(HELLO), false, Some("end_turn")),
            ]
        );
        let events = decode("claude-2.1.197/f_long_multichunk.stdout");
        assert_eq!(
            events
                .iter()
                .filter(|e| matches!(e, Event::Text(_)))
                .count(),
            16
        );
        assert_eq!(text_blocks(&events), [LONG]);
    }

    #[test]
    fn thinking_is_never_text() {
        assert_eq!(
            decode("claude/f_thinking_block.stdout"),
            [
                session("5defdfd6-4a84-427a-a7dc-e4c790c9edf3", MODEL),
                Event::Thinking(THOUGHT.into()),
                text(CONSIDERED),
                Event::TextEnd,
                finished(Some(CONSIDERED), false, Some("end_turn")),
            ]
        );
        assert_eq!(
            decode("claude/f_thinking_block_partial.stdout"),
            [
                session("3a9402ca-1472-42f2-9849-3f1b060f9fd3", MODEL),
                Event::Thinking("Let me think".into()),
                Event::Thinking(" about this ".into()),
                Event::Thinking("carefully.".into()),
                text("Here is my c"),
                text("onsidered an"),
                text("swer."),
                Event::TextEnd,
                finished(Some(CONSIDERED), false, Some("end_turn")),
            ]
        );
    }

    #[test]
    fn tool_allowed() {
        assert_eq!(
            decode("claude/e_tool_bash_readonly_auto.stdout"),
            [
                session("5bf706ea-6824-441c-b596-42bc3f2ec7f2", MODEL),
                text("I'll run that command."),
                Event::TextEnd,
                tool(
                    "toolu_fake_a5cf3ac2e619426b8518a929",
                    "Bash",
                    json!({"command": "echo fake-tool-output", "description": "Echo a test string"})
                ),
                tool_result(
                    "toolu_fake_a5cf3ac2e619426b8518a929",
                    "fake-tool-output",
                    false
                ),
                text(DONE),
                Event::TextEnd,
                finished(Some(DONE), false, Some("end_turn")),
            ]
        );
    }

    #[test]
    fn tool_denied() {
        let denial = "mkdir in '<cwd>/fake-dir-from-tool' needs approval. The path is inside the working directories for this session ('<cwd>'), and Claude Code asks before a shell command creates, changes or removes files there.";
        assert_eq!(
            decode("claude/e_tool_bash_denied.stdout"),
            [
                session("0828f78e-e78d-4d58-80f4-37b42ce698d1", MODEL),
                text("Creating a directory."),
                Event::TextEnd,
                tool(
                    "toolu_fake_b65b7470a30c4c3296437e9b",
                    "Bash",
                    json!({"command": "mkdir -p fake-dir-from-tool", "description": "Create a directory"})
                ),
                tool_result("toolu_fake_b65b7470a30c4c3296437e9b", denial, true),
                text(DONE),
                Event::TextEnd,
                finished(Some(DONE), false, Some("end_turn")),
            ]
        );
        let events = decode("claude/e_tool_unknown_name.stdout");
        assert!(events.contains(&tool_result(
            "toolu_fake_f4f1ce69aefb4f888f3db2a3",
            "<tool_use_error>Error: No such tool available: codecrew_help</tool_use_error>",
            true
        )));
    }

    #[test]
    fn api_errors_are_errors_not_text() {
        let message = "API Error: 400 scripted failure from fake server";
        // 2.1.329 flags the synthetic message with `is_api_error_message`.
        assert_eq!(
            decode("claude/g_api_error_400.stdout"),
            [
                session("f23a7d70-4b29-4a92-995c-dbd2b4a6431b", MODEL),
                Event::Error(message.into()),
                finished(Some(message), true, Some("stop_sequence")),
            ]
        );
        // 2.1.197 only sets `error`.
        assert_eq!(
            decode("claude-2.1.197/g_api_error_400.stdout"),
            [
                session("19fb4642-1066-469f-b2be-fcecd635e4f9", MODEL_197),
                Event::Error(message.into()),
                finished(Some(message), true, Some("stop_sequence")),
            ]
        );
        let events = decode("claude/g_api_error_529.stdout");
        assert!(
            matches!(&events[..], [Event::Session { .. }, Event::Error(e), Event::Finished { is_error: true, .. }]
                if e.starts_with("API Error: 529 Overloaded")),
            "{events:#?}"
        );
    }

    #[test]
    fn resume_keeps_the_session() {
        let first = decode("claude/c_turn1_stream_json.stdout");
        let second = decode("claude/c_turn2_resume_stream_json.stdout");
        assert_eq!(
            first[0],
            session("50015417-4070-47b9-bb87-d818f6bcace0", MODEL)
        );
        assert_eq!(first[0], second[0]);
        assert_eq!(text_blocks(&second), [RECALL]);
    }

    #[test]
    fn result_error_without_text_names_the_errors() {
        let events = decode_str(
            r#"{"type":"result","subtype":"error_max_turns","is_error":true,"errors":["Reached maximum number of turns (1)"],"session_id":"s"}
"#,
        );
        assert_eq!(
            events,
            [
                session("s", None),
                Event::Error("Reached maximum number of turns (1)".into()),
                Event::Finished {
                    text: None,
                    is_error: true,
                    usage: None,
                    stop: None
                },
            ]
        );
        // Without `is_error`, an error subtype still counts.
        let events = decode_str(r#"{"type":"result","subtype":"error_during_execution"}"#);
        assert_eq!(
            events,
            [
                Event::Error("Claude Code reported an error (error_during_execution)".into()),
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
    fn streamed_text_that_disagrees_with_the_block_is_kept_once() {
        let input = [
            r#"{"type":"stream_event","event":{"type":"message_start","message":{}}}"#,
            r#"{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}}"#,
            r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Goodbye"}]}}"#,
            r#"{"type":"stream_event","event":{"type":"content_block_stop","index":0}}"#,
        ]
        .join("\n");
        assert_eq!(decode_str(&input), [text("Hello"), Event::TextEnd]);
    }

    #[test]
    fn missed_deltas_are_completed_from_the_block() {
        // The stop before the complete block (the other possible order) and a block
        // longer than its deltas.
        let input = [
            r#"{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}}"#,
            r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}}"#,
            r#"{"type":"stream_event","event":{"type":"content_block_stop","index":0}}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Hello"}]}}"#,
            r#"{"type":"result","is_error":false,"result":"Hello"}"#,
        ]
        .join("\n");
        assert_eq!(
            decode_str(&input),
            [
                text("Hel"),
                Event::TextEnd,
                text("lo"),
                Event::TextEnd,
                Event::Finished {
                    text: Some("Hello".into()),
                    is_error: false,
                    usage: None,
                    stop: None
                },
            ]
        );
    }

    #[test]
    fn tool_result_content_blocks_and_odd_shapes() {
        let input = [
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a"},{"type":"image","source":{}},{"type":"text","text":"b"}]}]}}"#,
            // A replayed prompt as a string, and a text block: neither is a tool result.
            r#"{"type":"user","message":{"role":"user","content":"hello"}}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted]"}]}}"#,
            // `message` is a string in system/permission_denied.
            r#"{"type":"system","subtype":"permission_denied","message":"needs approval"}"#,
            r#"{"type":"assistant","message":"not an object"}"#,
            r#"{"type":"assistant","message":{"content":["odd", 3, {"type":"tool_use","id":"t2","name":"Read"}]}}"#,
        ]
        .join("\n");
        assert_eq!(
            decode_str(&input),
            [
                tool_result("t1", "a\nb", false),
                tool("t2", "Read", json!({})),
            ]
        );
    }

    #[test]
    fn invalid_utf8_inside_text_is_replaced() {
        let input = b"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]}}\n";
        assert_eq!(
            decode_all(Format::Claude, input),
            [text("a\u{fffd}b"), Event::TextEnd]
        );
    }

    #[test]
    fn garbage() {
        check_garbage(Format::Claude);
    }
}
