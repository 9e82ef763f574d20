//! Gemini CLI `--output-format stream-json` and `--output-format json`.
//!
//! `stream-json` is one JSON object per line:
//!
//! ```text
//! {"type":"init","session_id":"…","model":"auto"}
//! {"type":"message","role":"user","content":"hello"}                  (the prompt, echoed)
//! {"type":"message","role":"assistant","content":"Hello! I am ","delta":true}   (×n)
//! {"type":"tool_use","tool_name":"list_directory","tool_id":"…","parameters":{…}}
//! {"type":"tool_result","tool_id":"…","status":"success"|"error","output":"…",
//!     "error":{"type":…,"message":…}}
//! {"type":"result","status":"success"|"error","error":{"type":…,"message":…},"stats":{…}}
//! ```
//!
//! Assistant text only comes as deltas: there is no complete-message event, so a message
//! ends when anything else follows it.
//!
//! `json` is one pretty-printed document (2-space indent, no trailing newline):
//! `{"session_id":…,"response":"<answer>","stats":{…}}`. On an error the CLI prints
//! `{"session_id":…,"error":{"type":…,"message":…,"code":…}}` instead, at the end of
//! **stderr** after its noise and stack trace; fed that stderr, this decoder skips the
//! noise and reads the document.

use serde::Deserialize;
use serde_json::Value;

use super::json::{Line, Obj, Sink, Str, classify, line_text, parse_object};
use super::lines::{LineBuffer, LineItem, MAX_LINE};
use super::{Decoder, Event, Usage, excerpt};

/// Decodes Gemini CLI's JSON output, both formats.
#[derive(Debug, Default)]
pub struct GeminiDecoder {
    lines: LineBuffer,
    state: State,
}

impl Decoder for GeminiDecoder {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Event>) {
        let state = &mut self.state;
        self.lines.feed(bytes, |item| state.line(&item, false, out));
    }

    fn finish(&mut self, out: &mut Vec<Event>) {
        let state = &mut self.state;
        self.lines.finish(|item| state.line(&item, true, out));
        if let Some(document) = state.document.take() {
            state.sink.other(
                Event::Malformed {
                    reason: "incomplete JSON document at end of output".to_owned(),
                    raw: excerpt(&document.text),
                },
                out,
            );
        }
        state.sink.end_text(out);
    }
}

#[derive(Debug, Default)]
struct State {
    sink: Sink,
    /// The assistant message being streamed.
    message: String,
    /// The last assistant message that was followed by something else.
    last_message: Option<String>,
    /// A pretty-printed document whose closing brace has not come yet.
    document: Option<Document>,
}

/// One event line, or the `json` document: both share this struct.
#[derive(Deserialize, Default)]
#[serde(default)]
struct GeminiLine<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow)]
    session_id: Str<'a>,
    #[serde(borrow)]
    model: Str<'a>,
    #[serde(borrow)]
    role: Str<'a>,
    #[serde(borrow)]
    content: Str<'a>,
    #[serde(borrow)]
    tool_name: Str<'a>,
    #[serde(borrow)]
    tool_id: Str<'a>,
    parameters: Option<Value>,
    #[serde(borrow)]
    status: Str<'a>,
    #[serde(borrow)]
    output: Str<'a>,
    #[serde(borrow)]
    error: Obj<GeminiError<'a>>,
    stats: Option<Value>,
    /// The answer, in the `json` document.
    #[serde(borrow)]
    response: Str<'a>,
    /// An `error` event's text.
    #[serde(borrow)]
    message: Str<'a>,
    #[serde(borrow)]
    severity: Str<'a>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct GeminiError<'a> {
    #[serde(borrow)]
    message: Str<'a>,
}

/// A pretty-printed document being collected line by line. Nesting is tracked outside
/// strings, so the document ends at its own closing brace whatever the indentation.
#[derive(Debug)]
struct Document {
    text: String,
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl Document {
    fn start() -> Self {
        Document {
            text: String::from("{\n"),
            depth: 1,
            in_string: false,
            escaped: false,
        }
    }

    /// Adds a line; true once the outermost object is closed.
    fn push_line(&mut self, line: &str) -> bool {
        self.text.push_str(line);
        self.text.push('\n');
        for byte in line.bytes() {
            if self.in_string {
                match byte {
                    _ if self.escaped => self.escaped = false,
                    b'\\' => self.escaped = true,
                    b'"' => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match byte {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return true;
                    }
                }
                _ => {}
            }
        }
        false
    }
}

impl State {
    fn line(&mut self, item: &LineItem<'_>, at_end: bool, out: &mut Vec<Event>) {
        let Some(line) = line_text(item, out) else {
            if self.document.take().is_some() {
                tracing::debug!("dropping a JSON document cut by an over-long line");
            }
            return;
        };
        if let Some(document) = &mut self.document {
            let closed = document.push_line(line);
            if closed {
                let text = std::mem::take(&mut document.text);
                self.document = None;
                self.parse_document(&text, out);
            } else if document.text.len() > MAX_LINE {
                let len = document.text.len();
                self.document = None;
                self.sink.other(
                    Event::Malformed {
                        reason: format!(
                            "JSON document of more than {len} bytes is longer than the {MAX_LINE} byte limit"
                        ),
                        raw: String::new(),
                    },
                    out,
                );
            }
            return;
        }
        let Line::Object(json) = classify(line) else {
            return;
        };
        if json == "{" {
            // The first line of a pretty-printed `json` document.
            self.document = Some(Document::start());
            return;
        }
        if let Some(event) = parse_object::<GeminiLine>(json, at_end, &mut self.sink, out) {
            self.event(event, out);
        }
    }

    fn parse_document(&mut self, text: &str, out: &mut Vec<Event>) {
        match serde_json::from_str::<GeminiLine>(text) {
            Ok(event) => self.event(event, out),
            Err(error) => self.sink.other(
                Event::Malformed {
                    reason: format!("invalid JSON document: {error}"),
                    raw: excerpt(text),
                },
                out,
            ),
        }
    }

    fn event(&mut self, event: GeminiLine<'_>, out: &mut Vec<Event>) {
        match event.kind.as_str() {
            "message" => match event.role.as_str() {
                "assistant" => {
                    let content = event.content.as_str();
                    self.message.push_str(content);
                    self.sink.text(content, out);
                }
                // The echoed prompt: never the model's text.
                role => tracing::debug!(role, "skipping a non-assistant message"),
            },
            "init" => {
                if let Some(id) = event.session_id.get() {
                    let model = event.model.get();
                    self.sink.session(id, model, out);
                }
            }
            "tool_use" => {
                self.end_message(out);
                let tool = Event::NativeTool {
                    id: event.tool_id.into_string(),
                    name: event.tool_name.into_string().unwrap_or_default(),
                    input: event
                        .parameters
                        .unwrap_or_else(|| Value::Object(Default::default())),
                };
                self.sink.push(tool, out);
            }
            "tool_result" => {
                self.end_message(out);
                let error_message = event
                    .error
                    .into_inner()
                    .map(|error| error.message)
                    .unwrap_or_default();
                let is_error = match event.status.get() {
                    Some(status) => status != "success",
                    None => error_message.get().is_some(),
                };
                let result = Event::NativeToolResult {
                    id: event.tool_id.into_string(),
                    output: event
                        .output
                        .or(error_message)
                        .into_string()
                        .unwrap_or_default(),
                    is_error,
                };
                self.sink.push(result, out);
            }
            "result" => {
                self.end_message(out);
                let is_error = event.status.as_str() == "error";
                if is_error {
                    let message = event.error.into_inner().map(|error| error.message);
                    self.sink.error(error_text(message.as_ref()), out);
                }
                let finished = Event::Finished {
                    text: self.last_message.take(),
                    is_error,
                    usage: Usage::from_gemini(event.stats.as_ref()),
                    stop: None,
                };
                self.sink.push(finished, out);
            }
            "error" => {
                self.end_message(out);
                let message = error_text(Some(&event.message));
                if event.severity.as_str() == "warning" {
                    tracing::warn!(message, "Gemini CLI warning");
                } else {
                    self.sink.error(message, out);
                }
            }
            // The `json` document has no type.
            "" if event.response.get().is_some() || event.error.as_ref().is_some() => {
                self.document(event, out)
            }
            kind => tracing::debug!(kind, "skipping an unknown event type"),
        }
    }

    /// The `--output-format json` document: the answer, or the error report.
    fn document(&mut self, event: GeminiLine<'_>, out: &mut Vec<Event>) {
        if let Some(id) = event.session_id.get() {
            let model = event.stats.as_ref().and_then(main_model);
            self.sink.session(id, model, out);
        }
        self.end_message(out);
        if let Some(error) = event.error.into_inner() {
            self.sink.error(error_text(Some(&error.message)), out);
            let finished = Event::Finished {
                text: None,
                is_error: true,
                usage: Usage::from_gemini(event.stats.as_ref()),
                stop: None,
            };
            self.sink.push(finished, out);
            return;
        }
        let response = event.response.into_string();
        if let Some(response) = response.as_deref().filter(|_| !self.sink.any_text()) {
            self.sink.text(response, out);
        }
        let finished = Event::Finished {
            text: response,
            is_error: false,
            usage: Usage::from_gemini(event.stats.as_ref()),
            stop: None,
        };
        self.sink.push(finished, out);
    }

    /// Something other than a delta came: the streamed message, if any, is over.
    fn end_message(&mut self, out: &mut Vec<Event>) {
        if !self.message.is_empty() {
            self.last_message = Some(std::mem::take(&mut self.message));
        }
        self.sink.end_text(out);
    }
}

fn error_text<'s>(message: Option<&'s Str<'_>>) -> &'s str {
    match message.and_then(Str::get) {
        Some(message) if !message.is_empty() => message,
        _ => "Gemini CLI reported an error",
    }
}

/// The model that answered, from the `json` document's stats: the one with the `main`
/// role (the other is the `auto` router's).
fn main_model(stats: &Value) -> Option<&str> {
    let models = stats.get("models")?.as_object()?;
    models
        .iter()
        .find(|(_, model)| model.pointer("/roles/main").is_some())
        .map(|(name, _)| name.as_str())
}

#[cfg(test)]
#[path = "gemini_tests.rs"]
mod tests;
