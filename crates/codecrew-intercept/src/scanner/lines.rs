//! What a line is, byte by byte: a fence that opens or closes a block, the start of a
//! bare JSON candidate, and the [`Tracker`] that follows a candidate's brackets and
//! strings to where it closes (or turns out to be prose).

use super::LINE_START;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Fence {
    pub(super) ch: u8,
    len: usize,
}

pub(super) fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// A fence opener: three or more backticks or tildes, then an info string whose first
/// word is the tag (lower-cased). Backtick fences cannot have backticks in the info.
pub(super) fn fence_open(line: &str) -> Option<(Fence, String)> {
    if line.len() > LINE_START {
        return None;
    }
    let head = line.trim_start_matches(is_blank);
    let ch = *head.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = head.bytes().take_while(|b| *b == ch).count();
    if len < 3 {
        return None;
    }
    let info = head[len..].trim();
    if ch == b'`' && info.contains('`') {
        return None;
    }
    let tag = info
        .split(|c: char| c.is_whitespace() || c == '{' || c == ',')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    Some((Fence { ch, len }, tag))
}

pub(super) fn accepts(tag: &str) -> bool {
    matches!(
        tag,
        "" | "json" | "jsonc" | "json5" | "codecrew" | "tool_use"
    )
}

/// A closing fence: the same character, at least as many, nothing else but blanks.
pub(super) fn closes(line: &str, fence: Fence) -> bool {
    if line.len() > LINE_START {
        return false;
    }
    let head = line.trim_start_matches(is_blank);
    let run = head.bytes().take_while(|b| *b == fence.ch).count();
    run >= fence.len && head[run..].trim().is_empty()
}

pub(super) fn starts_json(line: &str) -> bool {
    let head = line.trim_start_matches(is_blank);
    line.len() - head.len() < LINE_START && matches!(head.bytes().next(), Some(b'{' | b'['))
}

pub(super) fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

pub(super) fn excerpt(text: &str) -> String {
    const MAX: usize = 1000;
    let text = text.trim();
    if text.len() <= MAX {
        return text.to_owned();
    }
    format!("{}…", &text[..floor_boundary(text, MAX)])
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) enum TrackState {
    #[default]
    Open,
    /// The value closed and only blanks followed.
    Closed,
    /// Not JSON, or something other than blanks followed the value.
    Aborted,
}

/// Follows the bracket structure of a JSON candidate, byte by byte, without parsing it:
/// enough to know where it ends and to give up early on prose that merely starts with a
/// bracket, like `[1] See the note` or `{name} is a placeholder`.
#[derive(Debug, Clone, Default)]
pub(super) struct Tracker {
    depth: usize,
    in_string: bool,
    escaped: bool,
    pub(super) state: TrackState,
    /// Bytes fed so far.
    fed: usize,
    /// Where the value closed: the length of its text, from the candidate's first byte.
    pub(super) closed_at: Option<usize>,
}

impl Tracker {
    /// Follows `text`; where the candidate stops being JSON in it (the byte that aborted
    /// it), that byte's offset in `text`. Such a byte is never inside a string, so it is
    /// ASCII or the first byte of a character: a char boundary.
    pub(super) fn feed(&mut self, text: &str) -> Option<usize> {
        for (at, &b) in text.as_bytes().iter().enumerate() {
            if self.state == TrackState::Aborted {
                return None;
            }
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            if self.state == TrackState::Closed {
                if !matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
                    return Some(self.abort(at));
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    if self.depth == 0 {
                        return Some(self.abort(at));
                    }
                    self.depth -= 1;
                    if self.depth == 0 {
                        self.state = TrackState::Closed;
                        self.closed_at = Some(self.fed + at + 1);
                    }
                }
                b' ' | b'\t' | b'\r' | b'\n' | b':' | b',' | b'-' | b'+' | b'.' | b'0'..=b'9' => {}
                // The letters of true, false, null and exponents.
                b'a' | b'e' | b'E' | b'f' | b'l' | b'n' | b'r' | b's' | b't' | b'u' => {}
                _ => return Some(self.abort(at)),
            }
        }
        self.fed += text.len();
        None
    }

    fn abort(&mut self, at: usize) -> usize {
        self.state = TrackState::Aborted;
        self.fed += at;
        at
    }
}
