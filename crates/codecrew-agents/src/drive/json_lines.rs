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
    fn messages_split_across_chunks_are_joined_and_noise_is_skipped() {
        let mut lines = JsonLines::default();
        let seen = lines.feed(b"{\"a\":1}\nnot json\n{\"b\":", "test");
        assert_eq!(seen, [json!({"a": 1})]);
        assert_eq!(lines.feed(b"2}\n", "test"), [json!({"b": 2})]);
        assert_eq!(line(&json!({"c": 3})), b"{\"c\":3}\n");
    }
}
