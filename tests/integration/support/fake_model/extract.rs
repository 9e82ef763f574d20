//! What a request asks: its latest prompt and the tool results it carries, per protocol.

use super::*;

/// What the fake reads out of a model request to choose its answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extracted {
    /// The latest user prompt: the text of the most recent user turn that has text of its own,
    /// without the context the CLI injects (`<system-reminder>`, `<session_context>`,
    /// `<environment_context>` blocks). On a tool round trip this is the prompt that led to it.
    pub prompt: Option<String>,
    /// The text of the tool results carried by the last user turn (`None` when there are none).
    pub tool_result: Option<String>,
}

pub(super) fn join_non_empty(pieces: Vec<String>) -> Option<String> {
    let pieces: Vec<String> = pieces.into_iter().filter(|p| !p.is_empty()).collect();
    if pieces.is_empty() {
        None
    } else {
        Some(pieces.join("\n"))
    }
}

pub(super) fn starts_with_any(text: &str, prefixes: &[&str]) -> bool {
    let text = text.trim_start();
    prefixes.iter().any(|p| text.starts_with(p))
}

pub(super) const CLAUDE_CONTEXT: &[&str] = &["<system-reminder>"];
pub(super) const GEMINI_CONTEXT: &[&str] = &["<session_context>"];
pub(super) const CODEX_CONTEXT: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
];

/// Anthropic Messages: the last `role:"user"` message (roles `system` and `assistant` are
/// skipped); its `text` blocks not starting with `<system-reminder>` are the prompt, its
/// `tool_result` blocks the tool result. `content` may be a string or an array of blocks.
pub fn extract_anthropic(body: &Value) -> Extracted {
    let empty = Vec::new();
    let users: Vec<&Value> = body["messages"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter(|m| m["role"] == "user")
        .collect();
    let prompt_of = |content: &Value| -> Option<String> {
        match content {
            Value::String(s) if !starts_with_any(s, CLAUDE_CONTEXT) => Some(s.clone()),
            Value::Array(blocks) => join_non_empty(
                blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .filter(|t| !starts_with_any(t, CLAUDE_CONTEXT))
                    .map(str::to_string)
                    .collect(),
            ),
            _ => None,
        }
    };
    let tool_result = users.last().and_then(|last| {
        let blocks = last["content"].as_array()?;
        let results: Vec<&Value> = blocks
            .iter()
            .filter(|b| b["type"] == "tool_result")
            .collect();
        if results.is_empty() {
            return None;
        }
        Some(
            results
                .iter()
                .map(|b| anthropic_block_text(&b["content"]))
                .collect::<Vec<_>>()
                .join("\n"),
        )
    });
    let prompt = users.iter().rev().find_map(|m| prompt_of(&m["content"]));
    Extracted {
        prompt,
        tool_result,
    }
}

pub(super) fn anthropic_block_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|i| i["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Gemini: the last `contents` entry with role `user` (a missing role counts as user); its
/// `text` parts not starting with `<session_context>` are the prompt (thoughts are skipped), its
/// `functionResponse` parts the tool result (`response.output`, else `response.error`, else the
/// response as JSON).
pub fn extract_gemini(body: &Value) -> Extracted {
    let empty = Vec::new();
    let users: Vec<&Value> = body["contents"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter(|c| c["role"].as_str().unwrap_or("user") == "user")
        .collect();
    let parts_of = |c: &Value| c["parts"].as_array().cloned().unwrap_or_default();
    let prompt_of = |c: &Value| -> Option<String> {
        join_non_empty(
            parts_of(c)
                .iter()
                .filter(|p| p["thought"] != true)
                .filter_map(|p| p["text"].as_str())
                .filter(|t| !starts_with_any(t, GEMINI_CONTEXT))
                .map(str::to_string)
                .collect(),
        )
    };
    let tool_result = users.last().and_then(|last| {
        let results: Vec<String> = parts_of(last)
            .iter()
            .filter_map(|p| p.get("functionResponse"))
            .map(|fr| {
                let response = &fr["response"];
                response["output"]
                    .as_str()
                    .or_else(|| response["error"].as_str())
                    .map(str::to_string)
                    .unwrap_or_else(|| response.to_string())
            })
            .collect();
        (!results.is_empty()).then(|| results.join("\n"))
    });
    let prompt = users.iter().rev().find_map(|c| prompt_of(c));
    Extracted {
        prompt,
        tool_result,
    }
}

/// OpenAI Responses: the last `role:"user"` message's `input_text` parts (skipping Codex's
/// `<environment_context>` and instruction messages) are the prompt; the `function_call_output`
/// items at the end of `input` (after the last message) are the tool result.
pub fn extract_openai(body: &Value) -> Extracted {
    if let Some(s) = body["input"].as_str() {
        return Extracted {
            prompt: Some(s.to_string()),
            tool_result: None,
        };
    }
    let empty = Vec::new();
    let items = body["input"].as_array().unwrap_or(&empty);
    let is_message =
        |i: &Value| i["type"] == "message" || (i["type"].is_null() && i["role"].is_string());
    let mut outputs = Vec::new();
    for item in items.iter().rev() {
        if is_message(item) {
            break;
        }
        if matches!(
            item["type"].as_str(),
            Some("function_call_output" | "custom_tool_call_output")
        ) {
            outputs.push(openai_output_text(&item["output"]));
        }
    }
    outputs.reverse();
    let tool_result = (!outputs.is_empty()).then(|| outputs.join("\n"));
    let prompt = items
        .iter()
        .rev()
        .filter(|i| is_message(i) && i["role"] == "user")
        .find_map(|m| openai_user_text(&m["content"], "input_text", CODEX_CONTEXT));
    Extracted {
        prompt,
        tool_result,
    }
}

/// OpenAI Chat Completions: the `role:"tool"` messages after the last other message are
/// the tool results; the last `role:"user"` message's text (parts starting with
/// `<system-reminder>`, which Qwen Code injects, left out) is the prompt.
pub fn extract_openai_chat(body: &Value) -> Extracted {
    let empty = Vec::new();
    let messages = body["messages"].as_array().unwrap_or(&empty);
    let mut outputs: Vec<String> = messages
        .iter()
        .rev()
        .take_while(|m| m["role"] == "tool")
        .map(|m| openai_output_text(&m["content"]))
        .collect();
    outputs.reverse();
    let tool_result = (!outputs.is_empty()).then(|| outputs.join("\n"));
    let prompt = messages
        .iter()
        .rev()
        .filter(|m| m["role"] == "user")
        .find_map(|m| openai_user_text(&m["content"], "text", CLAUDE_CONTEXT));
    Extracted {
        prompt,
        tool_result,
    }
}

/// A user message's own text: a string, or its parts of type `part` joined, without the
/// context the CLI injects (`context` prefixes).
fn openai_user_text(content: &Value, part: &str, context: &[&str]) -> Option<String> {
    match content {
        Value::String(s) if !starts_with_any(s, context) => Some(s.clone()),
        Value::Array(parts) => join_non_empty(
            parts
                .iter()
                .filter(|p| p["type"] == part)
                .filter_map(|p| p["text"].as_str())
                .filter(|t| !starts_with_any(t, context))
                .map(str::to_string)
                .collect(),
        ),
        _ => None,
    }
}

pub(super) fn openai_output_text(output: &Value) -> String {
    match output {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// True for a Gemini structured-output request (the `auto` router): such a request must get a
/// JSON instance of its schema, never a tool call.
pub fn is_gemini_structured(body: &Value) -> bool {
    let config = &body["generationConfig"];
    config["responseMimeType"] == "application/json"
        || !config["responseJsonSchema"].is_null()
        || !config["responseSchema"].is_null()
}

/// A JSON instance of a (Gemini or JSON Schema style) schema: strings are `"fake"`, numbers 1,
/// booleans false, arrays empty, enums their first value.
pub fn schema_instance(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let kind = match &schema["type"] {
        Value::String(s) => s.to_ascii_lowercase(),
        Value::Array(kinds) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|k| *k != "null")
            .unwrap_or("null")
            .to_ascii_lowercase(),
        _ if schema["properties"].is_object() => "object".to_string(),
        _ => "string".to_string(),
    };
    match kind.as_str() {
        "object" => {
            let mut out = serde_json::Map::new();
            if let Some(props) = schema["properties"].as_object() {
                for (key, sub) in props {
                    out.insert(key.clone(), schema_instance(sub));
                }
            }
            Value::Object(out)
        }
        "integer" | "number" => json!(1),
        "boolean" => json!(false),
        "array" => json!([]),
        "null" => Value::Null,
        _ => json!("fake"),
    }
}

/// The answer to a structured-output request with no usable schema: the router's answer.
pub(super) fn router_answer(body: &Value) -> Value {
    let config = &body["generationConfig"];
    let schema = if config["responseJsonSchema"].is_object() {
        &config["responseJsonSchema"]
    } else {
        &config["responseSchema"]
    };
    if schema.is_object() {
        schema_instance(schema)
    } else {
        json!({"complexity_reasoning": "fake", "complexity_score": 1})
    }
}
