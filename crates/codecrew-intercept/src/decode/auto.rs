//! Format detection: picks the decoder from the first non-blank line of output.
//!
//! | first line | format |
//! |---|---|
//! | JSON object of type `system`, `assistant`, `result`, `stream_event`, `user` | Claude |
//! | type `init` with `session_id`, `message` with `role`, `tool_use` with `tool_name` or `tool_id`, `tool_result` with `tool_id` | Gemini `stream-json` |
//! | exactly `{` (a pretty-printed document), or a one-line `{"response":…}` document | Gemini `json` |
//! | type `thread.*`, `turn.*`, `item.*`, or `error` with `message` | Codex |
//! | type `session.*`, `user.message`, `assistant.*` (dotted names with a `data` object) | Copilot |
//! | anything else | text |
//!
//! The bytes seen while detecting are replayed into the chosen decoder, so detection
//! changes nothing in the events.

use std::fmt;

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::json::Str;
use super::{Decoder, Event, Format, decoder};

/// How much output may come before the first line ends; past it, the output is text (no
/// CLI's first event is this long).
const MAX_FIRST_LINE: usize = 64 * 1024;

/// Buffers output until the format is known, then hands everything to that decoder.
#[derive(Default)]
pub struct AutoDecoder {
    /// Set once the format is known.
    inner: Option<(Format, Box<dyn Decoder>)>,
    pending: Vec<u8>,
    /// Where the first line not yet known to be blank starts in `pending`.
    line_start: usize,
    /// How far `pending` has been searched for a newline.
    searched: usize,
}

impl fmt::Debug for AutoDecoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AutoDecoder")
            .field("format", &self.inner.as_ref().map(|(format, _)| *format))
            .field("pending", &self.pending.len())
            .finish()
    }
}

impl AutoDecoder {
    /// The detected format, once known.
    #[cfg(test)]
    pub fn format(&self) -> Option<Format> {
        self.inner.as_ref().map(|(format, _)| *format)
    }

    /// Looks for the first complete non-blank line in `pending`.
    fn detect(&mut self) -> Option<Format> {
        loop {
            let rest = &self.pending[self.searched..];
            let Some(offset) = memchr::memchr(b'\n', rest) else {
                self.searched = self.pending.len();
                if self.pending.len() - self.line_start >= MAX_FIRST_LINE {
                    return Some(Format::Text);
                }
                return None;
            };
            let end = self.searched + offset;
            let line = &self.pending[self.line_start..end];
            self.searched = end + 1;
            if line.iter().all(u8::is_ascii_whitespace) {
                self.line_start = end + 1;
                continue;
            }
            return Some(detect_line(line));
        }
    }

    /// Builds the decoder for `format` and replays what was buffered into it.
    fn start(&mut self, format: Format, out: &mut Vec<Event>) {
        tracing::debug!(format = format.name(), "detected the output format");
        let mut inner = decoder(format);
        let pending = std::mem::take(&mut self.pending);
        inner.feed(&pending, out);
        self.inner = Some((format, inner));
    }
}

impl Decoder for AutoDecoder {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Event>) {
        if let Some((_, inner)) = &mut self.inner {
            inner.feed(bytes, out);
            return;
        }
        self.pending.extend_from_slice(bytes);
        if let Some(format) = self.detect() {
            self.start(format, out);
        }
    }

    fn finish(&mut self, out: &mut Vec<Event>) {
        if self.inner.is_none() {
            if self.pending.is_empty() {
                return;
            }
            // The first non-blank line has no newline (or there is none): judge what there is.
            let line = &self.pending[self.line_start..];
            let format = if line.iter().all(u8::is_ascii_whitespace) {
                Format::Text
            } else {
                detect_line(line)
            };
            self.start(format, out);
        }
        if let Some((_, inner)) = &mut self.inner {
            inner.finish(out);
        }
    }
}

/// Just the keys that tell the formats apart.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Probe<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    session_id: Option<IgnoredAny>,
    role: Option<IgnoredAny>,
    message: Option<IgnoredAny>,
    response: Option<IgnoredAny>,
    error: Option<IgnoredAny>,
    data: Option<IgnoredAny>,
    #[serde(rename = "sessionID")]
    opencode_session: Option<IgnoredAny>,
    tool_name: Option<IgnoredAny>,
    tool_id: Option<IgnoredAny>,
}

fn detect_line(line: &[u8]) -> Format {
    let line = String::from_utf8_lossy(line);
    let line = line.trim();
    if line == "{" {
        return Format::Gemini;
    }
    // `llm prompt --json` prints one pretty-printed array.
    if line == "[" {
        return Format::Llm;
    }
    if !line.starts_with('{') {
        return Format::Text;
    }
    let Ok(probe) = serde_json::from_str::<Probe>(line) else {
        return Format::Text;
    };
    match probe.kind.as_str() {
        "system" | "assistant" | "result" | "stream_event" | "user" => Format::Claude,
        _ if probe.opencode_session.is_some() => Format::Opencode,
        "init" if probe.session_id.is_some() => Format::Gemini,
        "message" if probe.role.is_some() => Format::Gemini,
        // Gemini's own tool events; a codecrew envelope a model wrote as its whole answer
        // (`{"type":"tool_use","name":"codecrew:…"}`) has neither, and is text to scan.
        "tool_use" | "tool_result" if probe.tool_name.is_some() || probe.tool_id.is_some() => {
            Format::Gemini
        }
        "error" if probe.message.is_some() => Format::Codex,
        kind if kind.starts_with("thread.")
            || kind.starts_with("turn.")
            || kind.starts_with("item.") =>
        {
            Format::Codex
        }
        kind if probe.data.is_some()
            && (kind.starts_with("session.")
                || kind.starts_with("assistant.")
                || kind == "user.message") =>
        {
            Format::Copilot
        }
        "" if probe.response.is_some() || (probe.error.is_some() && probe.session_id.is_some()) => {
            Format::Gemini
        }
        _ => Format::Text,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::decode::decode_all;
    use crate::decode::testing::*;

    fn detect_all(bytes: &[u8]) -> (Option<Format>, Vec<Event>) {
        let mut auto = AutoDecoder::default();
        let mut out = Vec::new();
        auto.feed(bytes, &mut out);
        auto.finish(&mut out);
        (auto.format(), out)
    }

    #[test]
    fn every_fixture_is_detected_and_decoded_like_the_explicit_decoder() {
        for (dir, format, expects) in SUITES {
            for expect in *expects {
                let bytes = fixture(&format!("{dir}/{}.stdout", expect.name));
                let (detected, events) = detect_all(&bytes);
                assert_eq!(detected, expect.auto, "{dir}/{}", expect.name);
                let explicit = decode_all(expect.auto.unwrap_or(*format), &bytes);
                assert_eq!(events, explicit, "{dir}/{}", expect.name);
            }
        }
    }

    #[test]
    fn first_lines() {
        let cases = [
            (
                r#"{"type":"system","subtype":"init","session_id":"s"}"#,
                Format::Claude,
            ),
            (
                r#"{"session_id":"s","result":"x","type":"result"}"#,
                Format::Claude,
            ),
            (r#"{"type":"stream_event","event":{}}"#, Format::Claude),
            (r#"{"type":"assistant","message":{}}"#, Format::Claude),
            (r#"{"type":"user","message":{}}"#, Format::Claude),
            (
                r#"{"type":"init","session_id":"s","model":"auto"}"#,
                Format::Gemini,
            ),
            (
                r#"{"type":"message","role":"user","content":"hi"}"#,
                Format::Gemini,
            ),
            (r#"{"type":"tool_use","tool_name":"x"}"#, Format::Gemini),
            (r#"{"type":"tool_result","tool_id":"x"}"#, Format::Gemini),
            ("{", Format::Gemini),
            ("  {  ", Format::Gemini),
            (r#"{"session_id":"s","response":"hi"}"#, Format::Gemini),
            (
                r#"{"type":"thread.started","thread_id":"t"}"#,
                Format::Codex,
            ),
            (r#"{"type":"turn.started"}"#, Format::Codex),
            (r#"{"type":"item.completed","item":{}}"#, Format::Codex),
            (r#"{"type":"error","message":"boom"}"#, Format::Codex),
            // Near misses are text; so is an envelope the model wrote as its whole answer.
            (
                r#"{"type":"tool_use","name":"codecrew:list_directory","input":{}}"#,
                Format::Text,
            ),
            (
                r#"{"type":"tool_result","name":"codecrew:x"}"#,
                Format::Text,
            ),
            (r#"{"type":"init"}"#, Format::Text),
            (r#"{"type":"message","content":"hi"}"#, Format::Text),
            (r#"{"type":"error"}"#, Format::Text),
            (r#"{"type":"threads"}"#, Format::Text),
            (r#"{"answer": 42}"#, Format::Text),
            (r#"{"type":"result""#, Format::Text),
            ("{ not json", Format::Text),
            ("[1, 2]", Format::Text),
            ("Hello! I am the fake model.", Format::Text),
            ("\u{feff}é\u{fffd}", Format::Text),
        ];
        for (line, format) in cases {
            assert_eq!(detect_line(line.as_bytes()), format, "{line}");
            // With and without a newline, in one piece and byte by byte.
            let with_newline = format!("{line}\n");
            assert_eq!(
                detect_all(with_newline.as_bytes()).0,
                Some(format),
                "{line}"
            );
            assert_eq!(detect_all(line.as_bytes()).0, Some(format), "{line}");
            let mut auto = AutoDecoder::default();
            let mut out = Vec::new();
            for byte in with_newline.as_bytes() {
                auto.feed(&[*byte], &mut out);
            }
            assert_eq!(auto.format(), Some(format), "{line}, bytewise");
        }
    }

    #[test]
    fn detection_waits_for_the_first_non_blank_line() {
        let mut auto = AutoDecoder::default();
        let mut out = Vec::new();
        auto.feed(b"\n  \r\n{\"type\":\"system\",\"subty", &mut out);
        assert_eq!(auto.format(), None);
        assert_eq!(out, []);
        auto.feed(b"pe\":\"init\",\"session_id\":\"t\"}\n", &mut out);
        assert_eq!(auto.format(), Some(Format::Claude));
        assert_eq!(out, [session("t", None)]);
    }

    #[test]
    fn empty_and_blank_input() {
        assert_eq!(detect_all(b""), (None, vec![]));
        assert_eq!(
            detect_all(b"\n \n"),
            (Some(Format::Text), vec![text("\n \n"), Event::TextEnd])
        );
    }

    #[test]
    fn a_long_first_line_without_newline_is_text() {
        let long = vec![b'a'; MAX_FIRST_LINE + 1];
        let mut auto = AutoDecoder::default();
        let mut out = Vec::new();
        for chunk in long.chunks(1000) {
            auto.feed(chunk, &mut out);
        }
        assert_eq!(auto.format(), Some(Format::Text));
        auto.finish(&mut out);
        assert_eq!(
            merge_text(out),
            [text(&"a".repeat(MAX_FIRST_LINE + 1)), Event::TextEnd]
        );
    }

    #[test]
    fn garbage_is_text() {
        let (format, events) = detect_all(b"\xff\xfe\x00binary\n{\"type\":\"result\"}\n");
        assert_eq!(format, Some(Format::Text));
        assert_eq!(
            merge_text(events),
            [
                text("\u{fffd}\u{fffd}\u{0}binary\n{\"type\":\"result\"}\n"),
                Event::TextEnd
            ]
        );
    }

    /// Every line of every fixture, with the decoder it belongs to.
    fn fixture_lines() -> Vec<(Format, Vec<u8>)> {
        let mut lines = Vec::new();
        for (dir, format, expects) in SUITES {
            for expect in *expects {
                let bytes = fixture(&format!("{dir}/{}.stdout", expect.name));
                for line in bytes.split_inclusive(|byte| *byte == b'\n') {
                    lines.push((*format, line.to_vec()));
                }
            }
        }
        lines
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_keep_the_contract(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
            size in 1usize..17,
        ) {
            for format in Format::ALL {
                let whole = decode_all(format, &bytes);
                assert_contract(&whole);
                let chunked = decode_chunked(format, &bytes, size);
                proptest::prop_assert_eq!(merge_text(chunked), merge_text(whole));
            }
        }

        /// Real lines in any order, some cut short: the state machines never break the
        /// contract, and chunking never changes the events.
        #[test]
        fn shuffled_real_lines_keep_the_contract(
            picks in proptest::collection::vec((0usize..10_000, 0usize..4, 0usize..10_000), 0..40),
            size in 1usize..64,
        ) {
            let lines = fixture_lines();
            for format in [Format::Claude, Format::Gemini, Format::Codex, Format::Auto] {
                let mut input = Vec::new();
                for (pick, cut, at) in &picks {
                    let (line_format, line) = &lines[pick % lines.len()];
                    if *line_format != format && format != Format::Auto {
                        continue;
                    }
                    if *cut == 0 {
                        input.extend_from_slice(&line[..at % line.len()]);
                        input.push(b'\n');
                    } else {
                        input.extend_from_slice(line);
                    }
                }
                let whole = decode_all(format, &input);
                assert_contract(&whole);
                let chunked = decode_chunked(format, &input, size);
                proptest::prop_assert_eq!(merge_text(chunked), merge_text(whole));
            }
        }
    }
}
