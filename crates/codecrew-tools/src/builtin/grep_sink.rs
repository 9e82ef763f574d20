//! What `grep` collects from one file: [`grep_searcher::Sink`]s for its three output
//! modes. A sink only gathers; the walk decides what to keep (a file found to be binary
//! is dropped whole, whatever was collected before the NUL byte).

use grep_searcher::{Searcher, Sink, SinkContext, SinkContextKind, SinkMatch};
use serde_json::{Value, json};

/// Matched and context lines are cut to this many characters.
pub const MAX_LINE_CHARS: usize = 1000;

/// One line around a match.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextLine {
    pub line_number: u64,
    pub line: String,
}

/// One matching line with its context.
#[derive(Debug, Clone, PartialEq)]
pub struct LineMatch {
    pub line_number: u64,
    pub line: String,
    pub before: Vec<ContextLine>,
    pub after: Vec<ContextLine>,
}

impl LineMatch {
    pub fn to_json(&self, path: &str, with_context: bool) -> Value {
        let mut value = json!({
            "path": path,
            "line_number": self.line_number,
            "line": self.line,
        });
        if with_context {
            let lines = |lines: &[ContextLine]| -> Vec<Value> {
                lines
                    .iter()
                    .map(|c| json!({"line_number": c.line_number, "line": c.line}))
                    .collect()
            };
            value["before"] = Value::Array(lines(&self.before));
            value["after"] = Value::Array(lines(&self.after));
        }
        value
    }
}

/// What a file yielded, by output mode.
#[derive(Debug, Default)]
pub struct FileSink {
    mode: SinkMode,
    /// Stop after this many matching lines (content and count modes).
    limit: usize,
    pub matched: bool,
    pub count: u64,
    pub matches: Vec<LineMatch>,
    pending_before: Vec<ContextLine>,
    /// Set when the searcher met a NUL byte: the file is binary and is skipped.
    pub binary: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum SinkMode {
    /// Only whether the file matches: the search stops at the first match.
    #[default]
    Files,
    Count,
    Content,
}

impl FileSink {
    pub fn new(mode: SinkMode, limit: usize) -> Self {
        FileSink {
            mode,
            limit,
            ..FileSink::default()
        }
    }
}

/// The line without its terminator, as text, cut at MAX_LINE_CHARS.
fn text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((end, _)) => format!("{} … [line truncated]", &text[..end]),
        None => text.into_owned(),
    }
}

impl Sink for FileSink {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.matched = true;
        self.count += 1;
        match self.mode {
            SinkMode::Files => Ok(false),
            SinkMode::Count => Ok(true),
            SinkMode::Content => {
                self.matches.push(LineMatch {
                    line_number: found.line_number().unwrap_or(0),
                    line: text(found.bytes()),
                    before: std::mem::take(&mut self.pending_before),
                    after: Vec::new(),
                });
                Ok(self.matches.len() < self.limit)
            }
        }
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, Self::Error> {
        let line = ContextLine {
            line_number: context.line_number().unwrap_or(0),
            line: text(context.bytes()),
        };
        // The searcher reports each line once: lines after a match belong to it, lines
        // before the next match wait for it.
        match (context.kind(), self.matches.last_mut()) {
            (SinkContextKind::After, Some(last)) => last.after.push(line),
            (SinkContextKind::Before, _) => self.pending_before.push(line),
            _ => {}
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use grep_regex::RegexMatcher;
    use grep_searcher::{BinaryDetection, SearcherBuilder};

    use super::*;

    fn search(mode: SinkMode, context: usize, haystack: &[u8]) -> FileSink {
        let matcher = RegexMatcher::new_line_matcher("hit").unwrap();
        let mut searcher = SearcherBuilder::new()
            .line_number(true)
            .before_context(context)
            .after_context(context)
            .binary_detection(BinaryDetection::quit(0))
            .build();
        let mut sink = FileSink::new(mode, 100);
        searcher
            .search_slice(&matcher, haystack, &mut sink)
            .unwrap();
        sink
    }

    #[test]
    fn context_lines_attach_to_their_match() {
        let sink = search(SinkMode::Content, 1, b"a\nhit 1\nb\nc\nd\nhit 2\r\ne\n");
        assert_eq!(sink.matches.len(), 2);
        let first = &sink.matches[0];
        assert_eq!((first.line_number, first.line.as_str()), (2, "hit 1"));
        assert_eq!(first.before[0].line, "a");
        assert_eq!(first.after[0].line, "b");
        let second = &sink.matches[1];
        assert_eq!(second.line, "hit 2");
        assert_eq!(second.before[0].line, "d");
        assert_eq!(second.after[0].line_number, 7);
    }

    #[test]
    fn modes_count_and_stop() {
        assert_eq!(search(SinkMode::Count, 0, b"hit\nhit\nno\nhit\n").count, 3);
        let files = search(SinkMode::Files, 0, b"hit\nhit\n");
        assert!(files.matched);
        assert_eq!(files.count, 1);
    }

    #[test]
    fn binary_data_is_flagged() {
        let sink = search(SinkMode::Content, 0, b"hit\n\0\x01");
        assert!(sink.binary);
        assert!(sink.matches.is_empty());
    }

    #[test]
    fn long_lines_are_cut() {
        let line = text("é".repeat(MAX_LINE_CHARS + 5).as_bytes());
        assert!(line.ends_with(" … [line truncated]"));
    }
}
