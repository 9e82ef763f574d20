//! The wire of the long-lived CLI protocols (Codex's app-server, the Agent Client
//! Protocol): one JSON object per line, arriving in chunks of any size.

use serde_json::Value;

/// Splits a CLI's stdout into JSON messages, keeping an unfinished line for the next chunk.
#[derive(Debug, Default)]
pub struct JsonLines {
    partial: Vec<u8>,
}

impl JsonLines {
    /// The messages of every line `bytes` completes; lines that are not JSON (a CLI's
    /// stray output) are skipped with a debug note naming `cli`.
    pub fn feed(&mut self, bytes: &[u8], cli: &str) -> Vec<Value> {
        self.partial.extend_from_slice(bytes);
        let mut messages = Vec::new();
        let mut start = 0;
        while let Some(offset) = memchr::memchr(b'\n', &self.partial[start..]) {
            let end = start + offset;
            match serde_json::from_slice::<Value>(&self.partial[start..end]) {
                Ok(message) => messages.push(message),
                Err(_) => tracing::debug!(cli, "skipped a line that is not JSON"),
            }
            start = end + 1;
        }
        self.partial.drain(..start);
        messages
    }

    /// As [`JsonLines::feed`], but only the messages whose `type` is `kind` are parsed
    /// whole and returned. Every other line is only checked (its `type` read, the rest
    /// skipped without being built), which costs a fraction of building it: Claude's
    /// stream is mostly large messages codecrew's decoder reads anyway.
    pub fn feed_of_type(&mut self, bytes: &[u8], cli: &str, kind: &str) -> Vec<Value> {
        self.partial.extend_from_slice(bytes);
        let mut messages = Vec::new();
        let mut start = 0;
        while let Some(offset) = memchr::memchr(b'\n', &self.partial[start..]) {
            let end = start + offset;
            let text = &self.partial[start..end];
            match serde_json::from_slice::<TypeOnly<'_>>(text) {
                Ok(head) if head.kind.as_deref() == Some(kind) => {
                    match serde_json::from_slice::<Value>(text) {
                        Ok(message) => messages.push(message),
                        Err(_) => tracing::debug!(cli, "skipped a line that is not JSON"),
                    }
                }
                Ok(_) => {}
                Err(_) => tracing::debug!(cli, "skipped a line that is not a JSON message"),
            }
            start = end + 1;
        }
        self.partial.drain(..start);
        messages
    }
}

/// A message's `type` alone; the rest of the line is skipped.
#[derive(serde::Deserialize)]
struct TypeOnly<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
}

/// `value` as one line of the wire.
pub fn line(value: &Value) -> Vec<u8> {
    let mut bytes = value.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

/// The JSON messages of `bytes`, one per line (tests of the protocols).
#[cfg(test)]
pub(crate) fn parse_lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_messages_of_the_type_asked_for_are_built() {
        let mut lines = JsonLines::default();
        let seen = lines.feed_of_type(
            b"{\"type\":\"assistant\",\"message\":{}}\nnot json\n{\"type\":7}\n{\"request_id\":\"a\",\"type\":\"control_request\"}\n{\"type\":\"control_",
            "test",
            "control_request",
        );
        assert_eq!(
            seen,
            [json!({"request_id": "a", "type": "control_request"})]
        );
        let rest = lines.feed_of_type(
            b"request\",\"n\":[1,{\"x\":\"\\u00e9\"}]}\n",
            "test",
            "control_request",
        );
        assert_eq!(
            rest,
            [json!({"type": "control_request", "n": [1, {"x": "\u{e9}"}]})]
        );
    }

    #[test]
    fn messages_split_across_chunks_are_joined_and_noise_is_skipped() {
        let mut lines = JsonLines::default();
        let seen = lines.feed(b"{\"a\":1}\nnot json\n{\"b\":", "test");
        assert_eq!(seen, [json!({"a": 1})]);
        assert_eq!(lines.feed(b"2}\n", "test"), [json!({"b": 2})]);
        assert_eq!(line(&json!({"c": 3})), b"{\"c\":3}\n");
    }
}
