//! What counts as a tool-call envelope, and the lenient repairs allowed inside one.
//!
//! The canonical envelope is `{"type":"tool_use","name":"codecrew:<tool>","input":{...}}`:
//! - `type` may be missing; when present it must be `"tool_use"`;
//! - the name starts with `codecrew:` (canonical) or `codecrew__`;
//! - the input is under `input`, `arguments`, `parameters` or `args` (one of them), is an
//!   object or a JSON string holding one, and defaults to `{}`.

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
    let Some(Value::String(name)) = object.get("name") else {
        return Verdict::NotEnvelope;
    };
    let Some(tool) = name
        .strip_prefix(PREFIX)
        .or_else(|| name.strip_prefix(ALT_PREFIX))
    else {
        return Verdict::NotEnvelope;
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
            let repaired = repair(text, fenced_and_closed)
                .and_then(|fixed| strict::parse_values(&fixed).ok())
                .and_then(|values| judge_values(&values));
            match repaired {
                Some(verdicts)
                    if verdicts
                        .iter()
                        .all(|v| matches!(v, Verdict::Call(_) | Verdict::Invalid(_))) =>
                {
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

/// The lenient repairs: a trailing comma before `}` or `]` is dropped, raw control
/// characters inside strings are escaped, and — only when `close_missing` (the block ended
/// at a closing fence, so nothing more was coming) — missing closing brackets are added.
/// Returns `None` when nothing could be repaired or the text is not repairable (a string
/// left open, mismatched brackets).
pub fn repair(text: &str, close_missing: bool) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 8);
    let mut stack: Vec<char> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    // A comma seen outside strings, held until we know whether a closer follows it.
    let mut held_comma: Option<usize> = None;
    let mut changed = false;
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
                changed = true;
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
        if let Some(at) = held_comma.take()
            && (c == '}' || c == ']')
        {
            out.remove(at);
            changed = true;
        }
        match c {
            '"' => in_string = true,
            '{' => stack.push('}'),
            '[' => stack.push(']'),
            // The guard pops: a matching closer falls through to `_` already popped.
            '}' | ']' if stack.pop() != Some(c) => return None,
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
        changed = true;
    }
    if !stack.is_empty() {
        if !close_missing {
            return None;
        }
        while let Some(closer) = stack.pop() {
            out.push(closer);
        }
        changed = true;
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(tool: &str, input: Value) -> Verdict {
        Verdict::Call(ToolCall {
            name: format!("codecrew:{tool}"),
            tool: tool.to_owned(),
            input,
        })
    }

    #[test]
    fn canonical_and_variant_envelopes() {
        let cases = [
            json!({"type":"tool_use","name":"codecrew:read_file","input":{"path":"a"}}),
            json!({"name":"codecrew:read_file","input":{"path":"a"}}),
            json!({"name":"codecrew__read_file","arguments":{"path":"a"}}),
            json!({"name":"codecrew:read_file","parameters":"{\"path\":\"a\"}"}),
            json!({"name":"codecrew:read_file","args":{"path":"a"},"id":"x"}),
        ];
        for case in cases {
            assert_eq!(
                judge(&case),
                call("read_file", json!({"path":"a"})),
                "{case}"
            );
        }
        assert_eq!(
            judge(&json!({"name":"codecrew:help"})),
            call("help", json!({}))
        );
        assert_eq!(
            judge(&json!({"name":"codecrew:help","input":null})),
            call("help", json!({}))
        );
    }

    #[test]
    fn not_envelopes() {
        for case in [
            json!({"type":"tool_use","name":"Bash","input":{}}),
            json!({"type":"tool_result","name":"codecrew:read_file"}),
            json!({"name":"read_file","input":{}}),
            json!({"name":5}),
            json!([1, 2]),
            json!("codecrew:help"),
        ] {
            assert_eq!(judge(&case), Verdict::NotEnvelope, "{case}");
        }
    }

    #[test]
    fn invalid_envelopes_say_why() {
        let cases = [
            (json!({"name":"codecrew:"}), "invalid tool name"),
            (json!({"name":"codecrew:a b"}), "invalid tool name"),
            (
                json!({"name":"codecrew:x","input":[1]}),
                "must be a JSON object",
            ),
            (
                json!({"name":"codecrew:x","input":"[1]"}),
                "must hold a JSON object",
            ),
            (json!({"name":"codecrew:x","input":"{"}), "not valid JSON"),
            (
                json!({"name":"codecrew:x","input":{},"args":{}}),
                "ambiguous input",
            ),
        ];
        for (case, reason) in cases {
            match judge(&case) {
                Verdict::Invalid(got) => assert!(got.contains(reason), "{case}: {got}"),
                other => panic!("{case}: {other:?}"),
            }
        }
    }

    #[test]
    fn repairs() {
        assert_eq!(
            repair("{\"a\":[1,2,],}", false).as_deref(),
            Some("{\"a\":[1,2]}")
        );
        assert_eq!(
            repair("{\"a\":\"x\ny\"}", false).as_deref(),
            Some("{\"a\":\"x\\ny\"}")
        );
        assert_eq!(
            repair("{\"a\":{\"b\":1}", true).as_deref(),
            Some("{\"a\":{\"b\":1}}")
        );
        assert_eq!(repair("{\"a\":{\"b\":1}", false), None);
        assert_eq!(repair("{\"a\":\"open", true), None);
        assert_eq!(repair("{\"a\":1]", true), None);
        assert_eq!(repair("{\"a\":1}", true), None, "nothing to repair");
        assert_eq!(
            repair("{\"a\":\"x,}\"}", false),
            None,
            "commas in strings stay"
        );
    }

    #[test]
    fn judge_text_repairs_only_addressed_envelopes() {
        let broken = "{\"name\":\"codecrew:help\",\"input\":{},}";
        assert_eq!(
            judge_text(broken, false, false),
            Some(vec![call("help", json!({}))])
        );
        assert_eq!(judge_text("{\"a\":1,}", false, false), None);
        let truncated = "{\"name\":\"codecrew:help\",\"input\":{}";
        assert_eq!(
            judge_text(truncated, true, false),
            Some(vec![call("help", json!({}))])
        );
        assert!(matches!(
            judge_text(truncated, false, false).as_deref(),
            Some([Verdict::Invalid(_)])
        ));
    }
}
