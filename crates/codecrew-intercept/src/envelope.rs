//! What counts as a tool-call envelope, and the lenient repairs allowed inside one.
//!
//! The canonical envelope is `{"type":"tool_use","name":"codecrew:<tool>","input":{...}}`:
//! - `type` may be missing; when present it must be `"tool_use"`;
//! - the name starts with `codecrew:` (canonical) or `codecrew__`;
//! - the input is under `input`, `arguments`, `parameters` or `args` (one of them), is an
//!   object or a JSON string holding one, and defaults to `{}`.
//!
//! An object typed `"tool_use"` whose name is not a codecrew tool's is not run, and says
//! why; never how to make it one (the model may be repeating what a file told it).

use serde_json::{Map, Value};

use super::strict::{self, StrictError};
use super::{PREFIX, ToolCall};

const ALT_PREFIX: &str = "codecrew__";
const INPUT_KEYS: [&str; 4] = ["input", "arguments", "parameters", "args"];

/// What a JSON value is, seen as a possible envelope.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// A valid call.
    Call(ToolCall),
    /// Addressed to codecrew, but not runnable; the reason says why.
    Invalid(String),
    /// Not an envelope at all: ordinary JSON the model wrote for the reader.
    NotEnvelope,
}

/// True when a text addresses codecrew by name, which makes a broken JSON around it an
/// envelope that failed (to be reported) rather than ordinary text.
pub fn mentions_codecrew(text: &str) -> bool {
    memchr::memmem::find(text.as_bytes(), b"codecrew:").is_some()
        || memchr::memmem::find(text.as_bytes(), ALT_PREFIX.as_bytes()).is_some()
}

/// Judges one object.
pub fn judge(value: &Value) -> Verdict {
    let Value::Object(object) = value else {
        return Verdict::NotEnvelope;
    };
    let typed_as_call =
        matches!(object.get("type"), Some(Value::String(kind)) if kind == "tool_use");
    let tool = match object.get("name") {
        Some(Value::String(name)) => name
            .strip_prefix(PREFIX)
            .or_else(|| name.strip_prefix(ALT_PREFIX))
            .map(|tool| (name, tool)),
        _ => None,
    };
    let Some((name, tool)) = tool else {
        // Typed as a call but naming no codecrew tool: a model's slip (`"read_file"`,
        // its own tool's name), told rather than left as text it never hears about. Not
        // an echo of a neutralised envelope (a tool result quoted): told to write that
        // "again", the model would be handed the call the neutralising took apart.
        let echo = matches!(
            object.get("name"),
            Some(Value::String(name)) if is_neutralised_name(name.as_bytes())
        );
        return if typed_as_call && !echo {
            Verdict::Invalid(not_a_codecrew_name(object.get("name")))
        } else {
            Verdict::NotEnvelope
        };
    };
    match object.get("type") {
        None => {}
        Some(Value::String(kind)) if kind == "tool_use" => {}
        // A tool_result or any other typed object naming a codecrew tool is an echo of
        // a call, or prose about one: never a call.
        Some(_) => return Verdict::NotEnvelope,
    }
    if !valid_tool_name(tool) {
        return Verdict::Invalid(format!(
            "invalid tool name {name:?}: expected codecrew:<tool> with letters, digits, '_', '-' or '.'"
        ));
    }
    match input_of(object) {
        Ok(input) => Verdict::Call(ToolCall {
            name: format!("{PREFIX}{tool}"),
            tool: tool.to_owned(),
            input,
        }),
        Err(reason) => Verdict::Invalid(format!("{name}: {reason}")),
    }
}

/// A codecrew name as [`crate::neutralise_envelopes`] leaves it: `codecrew`, then the
/// zero-width space that breaks it.
fn is_neutralised_name(name: &[u8]) -> bool {
    name.get(..NEUTRALISED.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(NEUTRALISED))
}

/// `codecrew` and the zero-width space (U+200B) in UTF-8.
const NEUTRALISED: &[u8] = b"codecrew\xE2\x80\x8B";

fn not_a_codecrew_name(name: Option<&Value>) -> String {
    let given = match name {
        Some(Value::String(name)) => format!("the name {name:?} is not"),
        Some(_) => "its name is not a string, so not".to_owned(),
        None => "it has no name, so not".to_owned(),
    };
    format!("a tool_use envelope, but {given} a codecrew tool's")
}

fn valid_tool_name(tool: &str) -> bool {
    !tool.is_empty()
        && tool.len() <= 128
        && tool
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn input_of(object: &Map<String, Value>) -> Result<Value, String> {
    let present: Vec<&str> = INPUT_KEYS
        .into_iter()
        .filter(|key| object.contains_key(*key))
        .collect();
    let value = match present.as_slice() {
        [] => return Ok(Value::Object(Map::new())),
        [key] => &object[*key],
        keys => {
            return Err(format!(
                "ambiguous input: {} are all given; use only \"input\"",
                keys.join(", ")
            ));
        }
    };
    match value {
        Value::Object(_) => Ok(value.clone()),
        Value::Null => Ok(Value::Object(Map::new())),
        Value::String(text) if text.trim().is_empty() => Ok(Value::Object(Map::new())),
        Value::String(text) => match strict::parse_value(text) {
            Ok(inner @ Value::Object(_)) => Ok(inner),
            Ok(_) => Err("input given as a string must hold a JSON object".to_owned()),
            Err(error) => Err(format!(
                "input given as a string is not valid JSON: {error}"
            )),
        },
        _ => Err("input must be a JSON object".to_owned()),
    }
}

/// Judges the JSON text of one candidate (a fence body or a bare block).
///
/// Returns `None` when the text is ordinary JSON or not JSON and names no codecrew tool:
/// it then stays text. Otherwise every value becomes a call or a rejection, in order.
/// A repaired envelope is said in the debug log, with what was repaired.
pub fn judge_text(text: &str, fenced_and_closed: bool, addressed: bool) -> Option<Vec<Verdict>> {
    let addressed = addressed || mentions_codecrew(text);
    match strict::parse_values(text) {
        Ok(values) => judge_values(&values),
        Err(_) if !addressed => None,
        Err(error @ (StrictError::DuplicateKey(_) | StrictError::TooDeep(_))) => {
            Some(vec![Verdict::Invalid(format!(
                "rejected envelope: {error}"
            ))])
        }
        Err(error) => {
            let repaired = repair(text, fenced_and_closed).and_then(|(fixed, repairs)| {
                let verdicts = judge_values(&strict::parse_values(&fixed).ok()?)?;
                Some((verdicts, repairs))
            });
            match repaired {
                Some((verdicts, repairs))
                    if verdicts
                        .iter()
                        .all(|v| matches!(v, Verdict::Call(_) | Verdict::Invalid(_))) =>
                {
                    let calls: Vec<&str> = verdicts
                        .iter()
                        .filter_map(|verdict| match verdict {
                            Verdict::Call(call) => Some(call.name.as_str()),
                            Verdict::Invalid(_) | Verdict::NotEnvelope => None,
                        })
                        .collect();
                    tracing::debug!(?calls, %repairs, "accepted an envelope after repairing it");
                    Some(verdicts)
                }
                _ => Some(vec![Verdict::Invalid(format!(
                    "malformed envelope JSON: {error}"
                ))]),
            }
        }
    }
}

fn judge_values(values: &[Value]) -> Option<Vec<Verdict>> {
    let mut verdicts = Vec::new();
    for value in values {
        match value {
            Value::Array(items) if !items.is_empty() => {
                let inner: Vec<Verdict> = items.iter().map(judge).collect();
                if inner.contains(&Verdict::NotEnvelope) {
                    // An array that is not all envelopes is ordinary JSON; an envelope
                    // nested in it is not a call.
                    verdicts.push(Verdict::NotEnvelope);
                } else {
                    verdicts.extend(inner);
                }
            }
            _ => verdicts.push(judge(value)),
        }
    }
    if verdicts.iter().all(|v| *v == Verdict::NotEnvelope) {
        return None;
    }
    Some(
        verdicts
            .into_iter()
            .map(|verdict| match verdict {
                Verdict::NotEnvelope => Verdict::Invalid(
                    "not a tool-call envelope, in a block that holds envelopes".to_owned(),
                ),
                other => other,
            })
            .collect(),
    )
}

/// What [`repair`] changed, for the debug log.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Repairs {
    /// A comma before a closing bracket, or after the last value, dropped.
    pub trailing_comma: bool,
    /// A raw newline, tab or other control character in a string escaped.
    pub control_character: bool,
    /// Closing brackets added at a closing fence.
    pub closed_at_fence: bool,
    /// Closing brackets after the last complete value, closing nothing, dropped.
    pub extra_closers: bool,
}

impl std::fmt::Display for Repairs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = [
            (self.trailing_comma, "a trailing comma dropped"),
            (
                self.control_character,
                "a control character in a string escaped",
            ),
            (
                self.closed_at_fence,
                "missing closing brackets added at the fence",
            ),
            (
                self.extra_closers,
                "extra closing brackets at the end dropped",
            ),
        ];
        let said: Vec<&str> = names
            .iter()
            .filter(|(done, _)| *done)
            .map(|(_, name)| *name)
            .collect();
        f.write_str(&said.join(", "))
    }
}

/// The lenient repairs, none of which can change what a complete value says:
/// - a trailing comma before `}` or `]`, or after the last value, is dropped;
/// - raw control characters inside strings are escaped;
/// - only when `close_missing` (the block ended at a closing fence, so nothing more was
///   coming), missing closing brackets are added;
/// - closing brackets after the last complete value, which close nothing (a model's
///   `…}}}`), are dropped: everything before them was read as it stands, and nothing
///   but blanks, commas and more such brackets may follow them.
///
/// Returns `None` when nothing could be repaired or the text is not repairable (a string
/// left open, mismatched brackets, a bracket that closes nothing before any value, or
/// anything else after such a bracket).
pub fn repair(text: &str, close_missing: bool) -> Option<(String, Repairs)> {
    let mut out = String::with_capacity(text.len() + 8);
    let mut stack: Vec<char> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    // A comma seen outside strings, held until we know whether a closer follows it.
    let mut held_comma: Option<usize> = None;
    let mut repairs = Repairs::default();
    // A value at the top level has closed, so a closer that closes nothing is extra.
    let mut completed = false;
    // An extra closer was dropped: only more of them, commas and blanks may follow.
    let mut in_extra = false;
    for c in text.chars() {
        if in_string {
            if escaped {
                escaped = false;
                out.push(c);
            } else if c == '\\' {
                escaped = true;
                out.push(c);
            } else if c == '"' {
                in_string = false;
                out.push(c);
            } else if (c as u32) < 0x20 {
                repairs.control_character = true;
                match c {
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    other => out.push_str(&format!("\\u{:04x}", other as u32)),
                }
            } else {
                out.push(c);
            }
            continue;
        }
        if c.is_whitespace() {
            out.push(c);
            continue;
        }
        if in_extra && !matches!(c, '}' | ']' | ',') {
            return None;
        }
        if let Some(at) = held_comma.take()
            && (c == '}' || c == ']')
        {
            out.remove(at);
            repairs.trailing_comma = true;
        }
        match c {
            '"' => in_string = true,
            '{' => stack.push('}'),
            '[' => stack.push(']'),
            '}' | ']' if stack.is_empty() && completed => {
                repairs.extra_closers = true;
                in_extra = true;
                continue;
            }
            // The guard pops: a matching closer falls through to `_` already popped.
            '}' | ']' if stack.pop() != Some(c) => return None,
            '}' | ']' if stack.is_empty() => completed = true,
            ',' => held_comma = Some(out.len()),
            _ => {}
        }
        out.push(c);
    }
    if in_string {
        return None;
    }
    if let Some(at) = held_comma {
        out.remove(at);
        repairs.trailing_comma = true;
    }
    if !stack.is_empty() {
        if !close_missing {
            return None;
        }
        while let Some(closer) = stack.pop() {
            out.push(closer);
        }
        repairs.closed_at_fence = true;
    }
    (repairs != Repairs::default()).then_some((out, repairs))
}

/// True when a candidate's JSON, whole or cut short, opens like an envelope: the first
/// object (the value itself, or an array's first item) has among its own members, as far
/// as they go, `"type": "tool_use"` or a `"name"` with a codecrew prefix, and no name
/// neutralised (the echo of a quoted tool result, which stays quiet text). A candidate
/// that does is a call or a rejection, never text left unsaid (the model meant a call);
/// one whose JSON broke before either was reached stays text.
pub fn opens_like_envelope(text: &str) -> bool {
    let mut cursor = Cursor {
        bytes: text.as_bytes(),
        at: 0,
    };
    cursor.blanks();
    if cursor.eat(b'[') {
        cursor.blanks();
    }
    if !cursor.eat(b'{') {
        return false;
    }
    let mut like = false;
    loop {
        cursor.blanks();
        let Some((key, true)) = cursor.string() else {
            return like;
        };
        cursor.blanks();
        if !cursor.eat(b':') {
            return like;
        }
        cursor.blanks();
        if cursor.peek() == Some(b'"') {
            let Some((value, closed)) = cursor.string() else {
                return like;
            };
            if key == b"name" && is_neutralised_name(value) {
                return false;
            }
            let names_codecrew =
                value.starts_with(PREFIX.as_bytes()) || value.starts_with(ALT_PREFIX.as_bytes());
            like |= (key == b"type" && value == b"tool_use" && closed)
                || (key == b"name" && names_codecrew);
            if !closed {
                return like;
            }
        } else if !cursor.skip_value() {
            return like;
        }
        cursor.blanks();
        if !cursor.eat(b',') {
            return like;
        }
    }
}

/// A position in a candidate's bytes, for [`opens_like_envelope`].
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        if found {
            self.at += 1;
        }
        found
    }

    fn blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    /// A string's raw bytes (escapes left as they are) and whether it closed; `None`
    /// when no string starts here.
    fn string(&mut self) -> Option<(&'a [u8], bool)> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.at;
        let mut escaped = false;
        while let Some(byte) = self.peek() {
            self.at += 1;
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                return Some((&self.bytes[start..self.at - 1], true));
            }
        }
        Some((&self.bytes[start..], false))
    }

    /// Past one value that is not a string (an object, an array, a number, a literal);
    /// false when it does not end in the text.
    fn skip_value(&mut self) -> bool {
        let mut depth = 0usize;
        while let Some(byte) = self.peek() {
            match byte {
                b'"' => {
                    if !matches!(self.string(), Some((_, true))) {
                        return false;
                    }
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth == 0 => return true,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        self.at += 1;
                        return true;
                    }
                }
                b',' if depth == 0 => return true,
                _ => {}
            }
            self.at += 1;
        }
        false
    }
}

#[cfg(test)]
#[path = "envelope_tests.rs"]
mod tests;
