//! The wire of the long-lived CLI protocols (Codex's app-server, the Agent Client
//! Protocol): one JSON object per line, arriving in chunks of any size.

use serde_json::Value;

/// Splits a CLI's stdout into JSON messages, keeping an unfinished line for the next chunk.
#[derive(Debug, Default)]
pub struct JsonLines {
    partial: Vec<u8>,
}

impl JsonLines {
    /// Passes every complete line of `bytes` that is JSON to `each`; other lines (a CLI's
    /// stray output) are skipped with a debug note naming `cli`.
    pub fn feed(&mut self, bytes: &[u8], cli: &str, mut each: impl FnMut(Value)) {
        self.partial.extend_from_slice(bytes);
        let mut start = 0;
        while let Some(offset) = memchr::memchr(b'\n', &self.partial[start..]) {
            let end = start + offset;
            match serde_json::from_slice::<Value>(&self.partial[start..end]) {
                Ok(message) => each(message),
                Err(_) => tracing::debug!(cli, "skipped a line that is not JSON"),
            }
            start = end + 1;
        }
        self.partial.drain(..start);
    }
}

/// `value` as one line of the wire.
pub fn line(value: &Value) -> Vec<u8> {
    let mut bytes = value.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_split_across_chunks_are_joined_and_noise_is_skipped() {
        let mut lines = JsonLines::default();
        let mut seen = Vec::new();
        lines.feed(b"{\"a\":1}\nnot json\n{\"b\":", "test", |m| seen.push(m));
        assert_eq!(seen, [json!({"a": 1})]);
        lines.feed(b"2}\n", "test", |m| seen.push(m));
        assert_eq!(seen, [json!({"a": 1}), json!({"b": 2})]);
        assert_eq!(line(&json!({"c": 3})), b"{\"c\":3}\n");
    }
}
