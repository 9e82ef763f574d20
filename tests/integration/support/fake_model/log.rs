//! The log of every request, for the tests to assert on.

use super::*;

/// Which protocol a request spoke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    Anthropic,
    Gemini,
    OpenAi,
    /// OpenAI Chat Completions (`/v1/chat/completions`).
    OpenAiChat,
    /// Any other path (answered 200 `{}` for GET/HEAD, 404 otherwise).
    Other,
}

/// One request the fake received, as tests can inspect it.
#[derive(Clone, Debug)]
pub struct LoggedRequest {
    /// 0, 1, 2 … in order of arrival.
    pub seq: usize,
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    /// Header names lower-cased; repeated headers joined with `", "`.
    pub headers: BTreeMap<String, String>,
    /// The parsed JSON body (`Null` when empty, a JSON string when not JSON).
    pub body: Value,
    pub api: Api,
    /// The model named in the body (Anthropic, OpenAI) or the path (Gemini).
    pub model: Option<String>,
    pub prompt: Option<String>,
    pub tool_result: Option<String>,
    /// `rules[N]` or a rule's name, `default`, `structured-output` (Gemini router),
    /// `count-tokens` or `unknown-path`.
    pub answered_by: String,
    /// The reply chosen (None for structured-output and unknown paths).
    pub reply: Option<Reply>,
    /// The usage the answer reported, as (input tokens, output tokens); `None` when the
    /// answer reported none (an error, a hang, a token count, an unknown path).
    pub reported_usage: Option<(u64, u64)>,
}

impl LoggedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// One line for failure messages: `#seq METHOD path?query prompt=… tool_result=… -> rule`.
    pub fn summary(&self) -> String {
        let cut = |s: &Option<String>| {
            s.as_ref()
                .map(|s| format!("{:?}", s.chars().take(80).collect::<String>()))
                .unwrap_or_else(|| "-".to_string())
        };
        format!(
            "#{} {} {}{} prompt={} tool_result={} -> {}",
            self.seq,
            self.method,
            self.path,
            self.query
                .as_ref()
                .map(|q| format!("?{q}"))
                .unwrap_or_default(),
            cut(&self.prompt),
            cut(&self.tool_result),
            self.answered_by
        )
    }

    /// The system prompt the CLI sent (Anthropic `system`, Gemini `systemInstruction`,
    /// OpenAI `instructions` or its system messages), its texts joined; empty when none.
    pub fn system(&self) -> String {
        let texts = |value: &Value| -> Vec<String> {
            match value {
                Value::String(text) => vec![text.clone()],
                Value::Array(blocks) => blocks
                    .iter()
                    .filter_map(|block| {
                        block
                            .as_str()
                            .or_else(|| block["text"].as_str())
                            .map(str::to_owned)
                    })
                    .collect(),
                _ => Vec::new(),
            }
        };
        let body = &self.body;
        let mut pieces = texts(&body["system"]);
        pieces.extend(texts(&body["systemInstruction"]["parts"]));
        pieces.extend(texts(&body["instructions"]));
        for message in body["messages"].as_array().into_iter().flatten() {
            if message["role"] == "system" || message["role"] == "developer" {
                pieces.extend(texts(&message["content"]));
            }
        }
        pieces.join("\n")
    }

    /// What the model read of this request as instructions and task: the system prompt,
    /// then the latest prompt (codecrew gives its tools section in either, by CLI).
    pub fn read_by_the_model(&self) -> String {
        format!(
            "{}\n{}",
            self.system(),
            self.prompt.as_deref().unwrap_or_default()
        )
    }

    /// True for a model call (not an unknown path, not a structured-output/router request).
    pub fn is_model_turn(&self) -> bool {
        self.api != Api::Other && self.reply.is_some()
    }
}
