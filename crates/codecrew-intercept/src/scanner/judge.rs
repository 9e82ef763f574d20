//! Judging what the scanner held: a fence's body, a bare candidate, a held line; each
//! becomes calls, a rejection (what was wrong, and that nothing ran) or text again, within
//! the size bound.

use super::*;

impl Scanner {
    /// Past the size limit, a fence body is rejected (when it names codecrew) or given
    /// back as text, and the fence continues as a dropped or a foreign one.
    pub(super) fn check_fence_size(&mut self, eol: bool, out: &mut Vec<Segment>) {
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

    pub(super) fn judge_fence(
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

    /// A piece of a bare JSON candidate. Where the candidate stops being JSON, it is held
    /// to the end of its line when it opens like an envelope; else it is prose, and the
    /// rest of the piece (returned) goes on as prose.
    pub(super) fn bare_piece<'a>(
        &mut self,
        piece: &'a str,
        eol: bool,
        out: &mut Vec<Segment>,
    ) -> Option<&'a str> {
        let max = self.limits.max_envelope_bytes;
        let Block::Bare { text, tracker } = &mut self.block else {
            return None;
        };
        // Only the first `max` bytes are ever held; the cut falls on the same byte however
        // the text was chunked.
        let room = max.saturating_sub(text.len());
        let (fits, over) = if piece.len() > room {
            piece.split_at(floor_boundary(piece, room))
        } else {
            (piece, "")
        };
        if let Some(at) = tracker.feed(fits) {
            let closed_at = tracker.closed_at;
            let mut held = std::mem::take(text);
            held.push_str(&fits[..at]);
            let rest = &piece[at..];
            if envelope::opens_like_envelope(&held) {
                self.block = Block::Held {
                    text: held,
                    closed_at,
                };
                self.held_piece(rest, eol, out);
                return None;
            }
            // Not JSON standing on its own: prose, and the line goes on as prose.
            self.pending.push_str(&held);
            self.block = Block::None;
            self.line_mode = LineMode::Stream;
            return Some(rest);
        }
        text.push_str(fits);
        if !over.is_empty() {
            let mut tracker = tracker.clone();
            let text = std::mem::take(text);
            if claims_codecrew(&text) {
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
                self.pending.push_str(&text);
                self.pending.push_str(over);
                self.block = Block::None;
                self.line_mode = LineMode::Stream;
            }
            return None;
        }
        if eol && tracker.state == TrackState::Closed {
            let text = std::mem::take(text);
            self.block = Block::None;
            self.judge_bare(&text, out);
        }
        None
    }

    /// A piece of a held candidate's line: kept (bounded) until the line ends, then judged.
    pub(super) fn held_piece(&mut self, piece: &str, eol: bool, out: &mut Vec<Segment>) {
        let max = self.limits.max_envelope_bytes;
        let Block::Held { text, .. } = &mut self.block else {
            return;
        };
        let room = max.saturating_sub(text.len());
        if piece.len() > room {
            text.push_str(&piece[..floor_boundary(piece, room)]);
            let raw = excerpt(text);
            self.block = Block::None;
            self.reject(format!("envelope larger than {max} bytes"), raw, out);
            self.line_mode = LineMode::Drop;
            return;
        }
        text.push_str(piece);
        if eol && let Block::Held { text, closed_at } = std::mem::take(&mut self.block) {
            self.judge_held(&text, closed_at, out);
        }
    }

    /// The message ended inside a candidate.
    pub(super) fn candidate_end(&mut self, out: &mut Vec<Segment>) {
        match std::mem::take(&mut self.block) {
            Block::Bare { text, tracker } => {
                if tracker.state == TrackState::Closed {
                    self.judge_bare(&text, out);
                } else if !claims_codecrew(&text) {
                    self.pending.push_str(&text);
                } else {
                    self.reject(
                        "truncated envelope: the message ended before its JSON closed".to_owned(),
                        text.trim().to_owned(),
                        out,
                    );
                }
            }
            Block::Held { text, closed_at } => self.judge_held(&text, closed_at, out),
            Block::None
            | Block::Fence { .. }
            | Block::Foreign { .. }
            | Block::SkipFence { .. }
            | Block::SkipBare { .. } => {}
        }
    }

    /// A candidate whose JSON closed at the end of its line.
    pub(super) fn judge_bare(&mut self, text: &str, out: &mut Vec<Segment>) {
        match envelope::judge_text(text, false, false) {
            None => self.pending.push_str(text),
            Some(verdicts) => self.emit(verdicts, text.trim(), "", out),
        }
    }

    /// A held candidate, its line complete: a complete envelope that only brackets
    /// closing nothing or a comma follow is repaired into its call (the repair cannot
    /// change what it says: everything after it closes nothing); one that text follows
    /// on its line is prose (the model writing about a call, or quoting one) and stays
    /// text; one broken before it closed is judged as an envelope (its reason said).
    pub(super) fn judge_held(
        &mut self,
        text: &str,
        closed_at: Option<usize>,
        out: &mut Vec<Segment>,
    ) {
        let closes_nothing = |tail: &str| {
            tail.bytes()
                .all(|b| matches!(b, b'}' | b']' | b',' | b' ' | b'\t' | b'\r' | b'\n'))
        };
        match closed_at {
            Some(end) if !text.get(end..).is_some_and(closes_nothing) => {
                self.pending.push_str(text);
            }
            _ => match envelope::judge_text(text, false, true) {
                Some(verdicts) => self.emit(verdicts, text.trim(), "", out),
                None => self.reject(
                    "malformed envelope JSON: not a tool-call envelope".to_owned(),
                    text.trim().to_owned(),
                    out,
                ),
            },
        }
    }

    pub(super) fn emit(
        &mut self,
        verdicts: Vec<Verdict>,
        raw: &str,
        prefix: &str,
        out: &mut Vec<Segment>,
    ) {
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

    pub(super) fn reject(&mut self, reason: String, raw: String, out: &mut Vec<Segment>) {
        self.flush(out);
        out.push(Segment::Rejected(Rejection { reason, raw }));
    }
}
