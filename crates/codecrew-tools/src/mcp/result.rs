//! An MCP call result shaped for the model: one JSON object within the output budget.

use serde_json::{Map, Value, json};

use super::limits::MAX_OUTPUT_BYTES;

/// The tool output for an MCP `CallToolResult` (its wire JSON), or the error text when
/// `isError` is true.
///
/// ```json
/// {"text": "…all text parts, joined by newlines…",
///  "content": [{"type": "image", "mime_type": "image/png", "bytes": 1234, "note": "…"},
///              {"type": "resource", "uri": "file:///…", "mime_type": "text/plain", "text": "…"},
///              {"type": "resource_link", "uri": "…", "name": "…"}],
///  "structured": {"…": "structuredContent, as the server sent it"},
///  "truncated": true, "note": "…"}
/// ```
///
/// Every key is left out when it has nothing to say, except `text` when nothing else is
/// there (`{"text": ""}`). Text that only repeats `structured` (its JSON, or one of its
/// string fields; the spec asks servers to send both) is left out, so the model does not
/// read it twice. Binary data
/// (images, audio, blobs) is summarised, not inlined: a text model cannot use base64.
/// Text, resource text and structured content share the [`MAX_OUTPUT_BYTES`] budget.
pub fn shape(result: &Value) -> Result<Value, String> {
    let mut budget = Budget {
        left: MAX_OUTPUT_BYTES,
        total: 0,
    };
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut texts = Vec::new();
    let mut others = Vec::new();
    for block in blocks {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        let field = |key: &str| block.get(key).cloned().unwrap_or(Value::Null);
        match kind {
            "text" => texts.push(block.get("text").and_then(Value::as_str).unwrap_or("")),
            "image" | "audio" => others.push(binary(kind, &field("mimeType"), &field("data"))),
            "resource" => {
                let resource = block.get("resource").cloned().unwrap_or(Value::Null);
                let get = |key: &str| resource.get(key).cloned().unwrap_or(Value::Null);
                let mut part = match resource.get("text").and_then(Value::as_str) {
                    Some(text) => json!({"type": "resource", "text": budget.take(text)}),
                    None => binary("resource", &get("mimeType"), &get("blob")),
                };
                insert_some(&mut part, "uri", get("uri"));
                insert_some(&mut part, "mime_type", get("mimeType"));
                others.push(part);
            }
            "resource_link" => {
                let mut part = json!({"type": "resource_link"});
                for (from, to) in [
                    ("uri", "uri"),
                    ("name", "name"),
                    ("title", "title"),
                    ("description", "description"),
                    ("mimeType", "mime_type"),
                    ("size", "size"),
                ] {
                    insert_some(&mut part, to, field(from));
                }
                others.push(part);
            }
            other => others.push(json!({
                "type": other,
                "note": "a kind of content codecrew does not show",
            })),
        }
    }
    let text = texts.join("\n");
    let structured = result
        .get("structuredContent")
        .filter(|value| !value.is_null());
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let message = match (text.trim(), structured) {
            ("", Some(structured)) => structured.to_string(),
            ("", None) => "the tool reported an error without a message".to_owned(),
            (text, _) => text.to_owned(),
        };
        return Err(message);
    }
    let text_repeats_structured = structured.is_some_and(|structured| repeats(&text, structured));
    let mut output = Map::new();
    if !text.is_empty() && !text_repeats_structured {
        output.insert("text".to_owned(), json!(budget.take(&text)));
    }
    if !others.is_empty() {
        output.insert("content".to_owned(), Value::Array(others));
    }
    let mut notes = Vec::new();
    if let Some(structured) = structured {
        let size = structured.to_string().len();
        if size <= budget.left {
            budget.left -= size;
            budget.total += size as u64;
            output.insert("structured".to_owned(), structured.clone());
        } else {
            budget.total += size as u64;
            notes.push(format!(
                "the structured content ({size} bytes) was left out: it does not fit the \
                 {MAX_OUTPUT_BYTES}-byte limit"
            ));
        }
    }
    if budget.total > MAX_OUTPUT_BYTES as u64 {
        notes.insert(
            0,
            format!(
                "output cut at {MAX_OUTPUT_BYTES} bytes (the tool returned {})",
                budget.total
            ),
        );
        output.insert("truncated".to_owned(), json!(true));
        output.insert("note".to_owned(), json!(notes.join("; ")));
    }
    if output.is_empty() {
        output.insert("text".to_owned(), json!(""));
    }
    Ok(Value::Object(output))
}

/// Whether `text` only repeats `structured`: its JSON, or one of its top-level string
/// fields (`read_text_file` sends the file as text and as `{"content": …}`).
pub(super) fn repeats(text: &str, structured: &Value) -> bool {
    if serde_json::from_str::<Value>(text).is_ok_and(|parsed| parsed == *structured) {
        return true;
    }
    structured.as_object().is_some_and(|fields| {
        fields
            .values()
            .any(|value| value.as_str().is_some_and(|field| field == text))
    })
}

/// What is left of the output budget, and how much the tool returned.
struct Budget {
    left: usize,
    total: u64,
}

impl Budget {
    /// `text`, cut (at a character boundary) to what is left.
    fn take(&mut self, text: &str) -> String {
        self.total += text.len() as u64;
        if text.len() <= self.left {
            self.left -= text.len();
            return text.to_owned();
        }
        let mut end = self.left;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.left = 0;
        text[..end].to_owned()
    }
}

/// A summary of base64 data: its type and decoded size, never the data.
pub(super) fn binary(kind: &str, mime_type: &Value, data: &Value) -> Value {
    let encoded = data
        .as_str()
        .map_or(0, |data| data.trim_end_matches('=').len());
    let mut part = json!({
        "type": kind,
        "bytes": encoded * 3 / 4,
        "note": "binary data, not shown",
    });
    insert_some(&mut part, "mime_type", mime_type.clone());
    part
}

pub(super) fn insert_some(object: &mut Value, key: &str, value: Value) {
    if let (Value::Object(map), false) = (object, value.is_null()) {
        map.insert(key.to_owned(), value);
    }
}
