//! Splitting a byte stream into lines, with a cap on line length.

use std::borrow::Cow;

/// The longest line a JSON-lines decoder keeps. A longer line is dropped and reported:
/// no CLI event is that large, and holding it would let a flooding CLI fill memory.
pub const MAX_LINE: usize = 32 * 1024 * 1024;

/// One item out of a [`LineBuffer`].
#[derive(Debug, PartialEq)]
pub enum LineItem<'a> {
    /// A complete line, without its `\n` or `\r\n`, invalid UTF-8 replaced.
    Line(Cow<'a, str>),
    /// A line longer than the cap: its first bytes and its full length.
    TooLong { head: String, len: usize },
}

/// Turns chunks of bytes into lines. Chunks may split lines anywhere, even inside a
/// multi-byte character: bytes are only decoded once their line is complete.
#[derive(Debug)]
pub struct LineBuffer {
    pending: Vec<u8>,
    max: usize,
    /// Bytes of the current line dropped because it passed `max`.
    dropped: usize,
}

impl Default for LineBuffer {
    fn default() -> Self {
        LineBuffer::with_max(MAX_LINE)
    }
}

impl LineBuffer {
    pub fn with_max(max: usize) -> Self {
        LineBuffer {
            pending: Vec::new(),
            max,
            dropped: 0,
        }
    }

    /// Feeds bytes; calls `on_line` for every line they complete.
    pub fn feed(&mut self, mut bytes: &[u8], mut on_line: impl FnMut(LineItem<'_>)) {
        while let Some(nl) = memchr::memchr(b'\n', bytes) {
            let (line, rest) = (&bytes[..nl], &bytes[nl + 1..]);
            bytes = rest;
            if self.pending.is_empty() && self.dropped == 0 {
                if line.len() > self.max {
                    on_line(too_long(line, line.len()));
                } else {
                    on_line(LineItem::Line(decode(line)));
                }
                continue;
            }
            self.push_pending(line);
            self.emit_pending(&mut on_line);
        }
        self.push_pending(bytes);
    }

    /// The stream has ended: a last line without a newline is still a line.
    pub fn finish(&mut self, mut on_line: impl FnMut(LineItem<'_>)) {
        if !self.pending.is_empty() || self.dropped > 0 {
            self.emit_pending(&mut on_line);
        }
    }

    fn push_pending(&mut self, bytes: &[u8]) {
        let room = self.max.saturating_sub(self.pending.len());
        if self.dropped == 0 && bytes.len() <= room {
            self.pending.extend_from_slice(bytes);
        } else {
            let keep = room.min(bytes.len());
            self.pending.extend_from_slice(&bytes[..keep]);
            self.dropped += bytes.len() - keep;
        }
    }

    fn emit_pending(&mut self, on_line: &mut impl FnMut(LineItem<'_>)) {
        if self.dropped > 0 {
            let len = self.pending.len() + self.dropped;
            on_line(too_long(&self.pending, len));
        } else {
            on_line(LineItem::Line(decode(&self.pending)));
        }
        self.pending.clear();
        self.dropped = 0;
    }
}

fn decode(line: &[u8]) -> Cow<'_, str> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    String::from_utf8_lossy(line)
}

fn too_long(line: &[u8], len: usize) -> LineItem<'static> {
    let head = &line[..line.len().min(120)];
    LineItem::TooLong {
        head: String::from_utf8_lossy(head).into_owned(),
        len,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(max: usize, chunks: &[&[u8]]) -> Vec<String> {
        let mut buffer = LineBuffer::with_max(max);
        let mut out = Vec::new();
        let mut push = |item: LineItem<'_>| {
            out.push(match item {
                LineItem::Line(line) => line.into_owned(),
                LineItem::TooLong { len, .. } => format!("<too long: {len}>"),
            })
        };
        for chunk in chunks {
            buffer.feed(chunk, &mut push);
        }
        buffer.finish(&mut push);
        out
    }

    #[test]
    fn splits_lines_across_chunks_and_strips_crlf() {
        assert_eq!(
            lines(100, &[b"ab", b"c\r\nde", b"f\n", b"tail"]),
            ["abc", "def", "tail"]
        );
    }

    #[test]
    fn multibyte_character_split_between_chunks_survives() {
        let text = "é\n".as_bytes();
        assert_eq!(lines(100, &[&text[..1], &text[1..]]), ["é"]);
    }

    #[test]
    fn long_lines_are_reported_not_kept() {
        assert_eq!(
            lines(4, &[b"12", b"345678\nok\n123456789"]),
            ["<too long: 8>", "ok", "<too long: 9>"]
        );
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(lines(100, &[b"a\xffb\n"]), ["a\u{fffd}b"]);
    }
}
