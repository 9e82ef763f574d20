//! The streaming scanner: assistant text in, [`Segment`]s out.
//!
//! It works line by line in one pass, holding back only what it must:
//! - a line whose first character makes it prose streams through at once;
//! - a line that may open or close a fence (```` ``` ```` or `~~~`) is held until it ends;
//! - a fence tagged `json`, `jsonc`, `json5`, `codecrew`, `tool_use` (or untagged) is held
//!   until it closes, then judged; a fence of any other language passes through as text;
//! - a line starting with `{` or `[` opens a bare JSON candidate, followed with a small
//!   bracket tracker until it closes at the end of a line (or turns out not to be JSON).
//!
//! Everything held is bounded by [`ScannerLimits::max_envelope_bytes`]; past it, a
//! candidate that names codecrew is rejected and the rest of it dropped, anything else is
//! given back as text. Decisions depend only on the text, never on how it was chunked.

mod lines;

use lines::{
    Fence, TrackState, Tracker, accepts, closes, excerpt, fence_open, floor_boundary, is_blank,
    starts_json,
};

use super::envelope::{self, Verdict};
use super::{Rejection, Segment};

/// Only this many bytes of a line decide what the line is. A longer line can be neither a
/// fence line nor an indented start of JSON: it is prose, or part of a block body.
const LINE_START: usize = 1024;

/// Bounds on what the scanner holds and accepts.
#[derive(Debug, Clone)]
pub struct ScannerLimits {
    /// The largest envelope text accepted; this also bounds the scanner's memory.
    pub max_envelope_bytes: usize,
    /// Calls accepted from one message; later ones are rejected with a reason.
    pub max_calls_per_message: usize,
}

impl Default for ScannerLimits {
    fn default() -> Self {
        ScannerLimits {
            max_envelope_bytes: 4 * 1024 * 1024,
            max_calls_per_message: 16,
        }
    }
}

#[derive(Debug, Default)]
enum Block {
    /// Prose between blocks.
    #[default]
    None,
    /// A fence whose body may hold envelopes, captured until it closes.
    Fence {
        fence: Fence,
        addressed: bool,
        opener: String,
        body: String,
    },
    /// A fence of another language, passed through as text.
    Foreign { fence: Fence },
    /// A fence whose over-size envelope was rejected: dropped until it closes.
    SkipFence { fence: Fence },
    /// A bare JSON value that started at a line start, captured until it closes.
    Bare { text: String, tracker: Tracker },
    /// The rest of a rejected over-size bare envelope, dropped until it closes.
    SkipBare { tracker: Tracker },
}

/// What happens to the rest of the current line.
#[derive(Debug, Clone, Copy, PartialEq)]
enum LineMode {
    /// Undecided: held in `line`.
    Start,
    /// Text, passed through.
    Stream,
    /// Dropped.
    Drop,
    /// Appended to the current fence body.
    Body,
}

/// Finds codecrew tool-call envelopes in streamed assistant text.
///
/// Feed it with [`push`](Scanner::push) in chunks of any size, call
/// [`end_message`](Scanner::end_message) where one assistant message ends (an envelope
/// never spans two), and [`finish`](Scanner::finish) at the end.
#[derive(Debug)]
pub struct Scanner {
    limits: ScannerLimits,
    block: Block,
    line_mode: LineMode,
    /// The start of the current line while its kind is undecided (≤ LINE_START + a chunk).
    line: String,
    /// Text decided but not yet handed out; flushed at the end of every push.
    pending: String,
    calls: usize,
}

impl Default for Scanner {
    fn default() -> Self {
        Scanner::new(ScannerLimits::default())
    }
}

impl Scanner {
    pub fn new(limits: ScannerLimits) -> Self {
        Scanner {
            limits,
            block: Block::None,
            line_mode: LineMode::Start,
            line: String::new(),
            pending: String::new(),
            calls: 0,
        }
    }

    /// Scans the next chunk of the message.
    pub fn push(&mut self, chunk: &str, out: &mut Vec<Segment>) {
        let mut rest = chunk;
        while !rest.is_empty() {
            match memchr::memchr(b'\n', rest.as_bytes()) {
                Some(nl) => {
                    let (line, after) = rest.split_at(nl + 1);
                    self.piece(line, true, out);
                    rest = after;
                }
                None => {
                    self.piece(rest, false, out);
                    break;
                }
            }
        }
        self.flush(out);
    }

    /// The current message has ended: whatever is open is judged as it stands.
    pub fn end_message(&mut self, out: &mut Vec<Segment>) {
        if matches!(self.block, Block::Bare { .. } | Block::SkipBare { .. }) {
            self.bare_end(out);
        } else if self.line_mode == LineMode::Start && !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.whole_line(&line, out);
            if matches!(self.block, Block::Bare { .. } | Block::SkipBare { .. }) {
                self.bare_end(out);
            }
        }
        self.line.clear();
        self.line_mode = LineMode::Start;
        match std::mem::take(&mut self.block) {
            Block::Fence {
                addressed,
                opener,
                body,
                ..
            } => self.judge_fence(addressed, opener, body, None, out),
            Block::None
            | Block::Foreign { .. }
            | Block::SkipFence { .. }
            | Block::Bare { .. }
            | Block::SkipBare { .. } => {}
        }
        self.flush(out);
        self.calls = 0;
    }

    /// The stream has ended.
    pub fn finish(&mut self, out: &mut Vec<Segment>) {
        self.end_message(out);
    }

    /// Scans everything at once.
    pub fn scan(text: &str) -> Vec<Segment> {
        let mut scanner = Scanner::default();
        let mut out = Vec::new();
        scanner.push(text, &mut out);
        scanner.finish(&mut out);
        out
    }

    fn flush(&mut self, out: &mut Vec<Segment>) {
        if !self.pending.is_empty() {
            out.push(Segment::Text(std::mem::take(&mut self.pending)));
        }
    }

    /// One piece of a line; `eol` when it ends with the line's `\n`.
    fn piece(&mut self, piece: &str, eol: bool, out: &mut Vec<Segment>) {
        if matches!(self.block, Block::Bare { .. } | Block::SkipBare { .. }) {
            return self.bare_piece(piece, eol, out);
        }
        match self.line_mode {
            LineMode::Stream => self.pending.push_str(piece),
            LineMode::Drop => {}
            LineMode::Body => {
                if let Block::Fence { body, .. } = &mut self.block {
                    body.push_str(piece);
                }
                self.check_fence_size(eol, out);
            }
            LineMode::Start if self.line.is_empty() && eol => self.whole_line(piece, out),
            LineMode::Start => {
                self.line.push_str(piece);
                if eol {
                    let line = std::mem::take(&mut self.line);
                    self.whole_line(&line, out);
                } else {
                    self.decide_early(out);
                }
                return;
            }
        }
        if eol {
            self.line_mode = LineMode::Start;
        }
    }

    /// Decides what a held, unfinished line is, as soon as its start tells.
    fn decide_early(&mut self, out: &mut Vec<Segment>) {
        let line = &self.line;
        let head = line.trim_start_matches(is_blank);
        let first = head.bytes().next();
        let too_long = line.len() > LINE_START;
        let mode = match &self.block {
            Block::None => match first {
                // A bracket decides at once, by the same rule as a whole line: whether it
                // opens a candidate depends only on what precedes it, never on how much of
                // the line has arrived (a fuzzer found that chunking changed the verdict).
                Some(b'{' | b'[') if starts_json(line) => {
                    let line = std::mem::take(&mut self.line);
                    self.block = Block::Bare {
                        text: String::new(),
                        tracker: Tracker::default(),
                    };
                    return self.bare_piece(&line, false, out);
                }
                _ if too_long => LineMode::Stream,
                None => return,
                Some(c @ (b'`' | b'~')) => {
                    let run = head.bytes().take_while(|b| *b == c).count();
                    if run >= 3 || run == head.len() {
                        return;
                    }
                    LineMode::Stream
                }
                Some(_) => LineMode::Stream,
            },
            Block::Foreign { fence } | Block::SkipFence { fence } => {
                let keep = if matches!(self.block, Block::Foreign { .. }) {
                    LineMode::Stream
                } else {
                    LineMode::Drop
                };
                match first {
                    _ if too_long => keep,
                    None => return,
                    Some(c) if c == fence.ch => return,
                    Some(_) => keep,
                }
            }
            Block::Fence { fence, .. } => match first {
                _ if too_long => LineMode::Body,
                None => return,
                Some(c) if c == fence.ch => return,
                Some(_) => LineMode::Body,
            },
            Block::Bare { .. } | Block::SkipBare { .. } => return,
        };
        let line = std::mem::take(&mut self.line);
        self.line_mode = mode;
        match mode {
            LineMode::Stream => self.pending.push_str(&line),
            LineMode::Body => {
                if let Block::Fence { body, .. } = &mut self.block {
                    body.push_str(&line);
                }
                self.check_fence_size(false, out);
            }
            LineMode::Drop | LineMode::Start => {}
        }
    }

    /// A complete line (with its `\n`, unless the message ended without one).
    fn whole_line(&mut self, line: &str, out: &mut Vec<Segment>) {
        match &mut self.block {
            Block::None => {
                if let Some((fence, tag)) = fence_open(line) {
                    if accepts(&tag) {
                        self.block = Block::Fence {
                            fence,
                            addressed: tag == "codecrew" || tag == "tool_use",
                            opener: line.to_owned(),
                            body: String::new(),
                        };
                    } else {
                        self.pending.push_str(line);
                        self.block = Block::Foreign { fence };
                    }
                } else if starts_json(line) {
                    self.block = Block::Bare {
                        text: String::new(),
                        tracker: Tracker::default(),
                    };
                    self.bare_piece(line, true, out);
                } else {
                    self.pending.push_str(line);
                }
            }
            Block::Foreign { fence } => {
                if closes(line, *fence) {
                    self.block = Block::None;
                }
                self.pending.push_str(line);
            }
            Block::SkipFence { fence } => {
                if closes(line, *fence) {
                    self.block = Block::None;
                }
            }
            Block::Fence { fence, body, .. } => {
                if closes(line, *fence) {
                    if let Block::Fence {
                        addressed,
                        opener,
                        body,
                        ..
                    } = std::mem::take(&mut self.block)
                    {
                        self.judge_fence(addressed, opener, body, Some(line), out);
                    }
                } else {
                    body.push_str(line);
                    self.check_fence_size(true, out);
                }
            }
            Block::Bare { .. } | Block::SkipBare { .. } => self.bare_piece(line, true, out),
        }
    }

    /// Past the size limit, a fence body is rejected (when it names codecrew) or given
    /// back as text, and the fence continues as a dropped or a foreign one.
    fn check_fence_size(&mut self, eol: bool, out: &mut Vec<Segment>) {
        let max = self.limits.max_envelope_bytes;
        let Block::Fence { fence, body, .. } = &self.block else {
            return;
        };
        if body.len() <= max {
            return;
        }
        let fence = *fence;
        let head = &body[..floor_boundary(body, max)];
        if envelope::mentions_codecrew(head) {
            let raw = excerpt(head);
            self.block = Block::SkipFence { fence };
            self.reject(format!("envelope larger than {max} bytes"), raw, out);
            self.line_mode = if eol { LineMode::Start } else { LineMode::Drop };
        } else if let Block::Fence { opener, body, .. } = std::mem::take(&mut self.block) {
            self.pending.push_str(&opener);
            self.pending.push_str(&body);
            self.block = Block::Foreign { fence };
            self.line_mode = if eol {
                LineMode::Start
            } else {
                LineMode::Stream
            };
        }
    }

    fn judge_fence(
        &mut self,
        addressed: bool,
        opener: String,
        body: String,
        closing: Option<&str>,
        out: &mut Vec<Segment>,
    ) {
        match envelope::judge_text(&body, closing.is_some(), addressed) {
            None => {
                self.pending.push_str(&opener);
                self.pending.push_str(&body);
                if let Some(closing) = closing {
                    self.pending.push_str(closing);
                }
            }
            Some(verdicts) => {
                let unterminated = if closing.is_none() {
                    "unterminated fence: "
                } else {
                    ""
                };
                self.emit(verdicts, body.trim(), unterminated, out);
            }
        }
    }

    /// A piece of a bare JSON candidate (or of the dropped rest of a rejected one).
    fn bare_piece(&mut self, piece: &str, eol: bool, out: &mut Vec<Segment>) {
        let max = self.limits.max_envelope_bytes;
        match &mut self.block {
            Block::SkipBare { tracker } => {
                tracker.feed(piece);
                if eol && tracker.state != TrackState::Open {
                    self.block = Block::None;
                }
            }
            Block::Bare { text, tracker } => {
                // Only the first `max` bytes are ever held; the cut falls on the same byte
                // however the text was chunked.
                let room = max.saturating_sub(text.len());
                let (fits, over) = if piece.len() > room {
                    piece.split_at(floor_boundary(piece, room))
                } else {
                    (piece, "")
                };
                tracker.feed(fits);
                if tracker.state == TrackState::Aborted {
                    // Not JSON standing on its own lines: all of it is prose.
                    let held = std::mem::take(text);
                    return self.give_back(&[&held, piece], eol);
                }
                text.push_str(fits);
                if !over.is_empty() {
                    let mut tracker = tracker.clone();
                    let text = std::mem::take(text);
                    if envelope::mentions_codecrew(&text) {
                        tracker.feed(over);
                        self.block = if eol && tracker.state != TrackState::Open {
                            Block::None
                        } else {
                            Block::SkipBare { tracker }
                        };
                        self.reject(
                            format!("envelope larger than {max} bytes"),
                            excerpt(&text),
                            out,
                        );
                    } else {
                        self.give_back(&[&text, over], eol);
                    }
                    return;
                }
                if eol && tracker.state == TrackState::Closed {
                    let text = std::mem::take(text);
                    self.block = Block::None;
                    self.judge_bare(&text, out);
                }
            }
            Block::None | Block::Fence { .. } | Block::Foreign { .. } | Block::SkipFence { .. } => {
            }
        }
    }

    /// A bare candidate turned out to be prose: its text goes out, and the rest of its
    /// line streams through.
    fn give_back(&mut self, parts: &[&str], eol: bool) {
        for part in parts {
            self.pending.push_str(part);
        }
        self.block = Block::None;
        self.line_mode = if eol {
            LineMode::Start
        } else {
            LineMode::Stream
        };
    }

    /// The message ended inside a bare candidate.
    fn bare_end(&mut self, out: &mut Vec<Segment>) {
        if let Block::Bare { text, tracker } = std::mem::take(&mut self.block) {
            if tracker.state == TrackState::Closed {
                self.judge_bare(&text, out);
            } else if envelope::mentions_codecrew(&text) {
                self.reject(
                    "truncated envelope: the message ended before its JSON closed".to_owned(),
                    text.trim().to_owned(),
                    out,
                );
            } else {
                self.pending.push_str(&text);
            }
        }
    }

    fn judge_bare(&mut self, text: &str, out: &mut Vec<Segment>) {
        match envelope::judge_text(text, false, false) {
            None => self.pending.push_str(text),
            Some(verdicts) => self.emit(verdicts, text.trim(), "", out),
        }
    }

    fn emit(&mut self, verdicts: Vec<Verdict>, raw: &str, prefix: &str, out: &mut Vec<Segment>) {
        self.flush(out);
        for verdict in verdicts {
            match verdict {
                Verdict::Call(call) if self.calls < self.limits.max_calls_per_message => {
                    self.calls += 1;
                    out.push(Segment::Call(call));
                }
                Verdict::Call(call) => out.push(Segment::Rejected(Rejection {
                    reason: format!(
                        "too many calls in one message: at most {} are run, {} was not",
                        self.limits.max_calls_per_message, call.name
                    ),
                    raw: raw.to_owned(),
                })),
                Verdict::Invalid(reason) => out.push(Segment::Rejected(Rejection {
                    reason: format!("{prefix}{reason}"),
                    raw: raw.to_owned(),
                })),
                Verdict::NotEnvelope => {}
            }
        }
    }

    fn reject(&mut self, reason: String, raw: String, out: &mut Vec<Segment>) {
        self.flush(out);
        out.push(Segment::Rejected(Rejection { reason, raw }));
    }
}
