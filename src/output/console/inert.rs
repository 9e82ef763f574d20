//! Text that codecrew did not compose, made inert for a terminal.
//!
//! A terminal acts on control characters: `ESC ] 52` writes the clipboard, `ESC ] 0`
//! the window title, `ESC [ 2 J` clears the screen, `ESC ] 8` hides a link under other
//! text, a DCS string makes the terminal answer on its input, a lone carriage return
//! lets later text overwrite what was shown, and the 8-bit C1 forms (U+009B for CSI,
//! U+009D for OSC) do the same in terminals that honour them. The model's text, a CLI's
//! error, a server's message or a stored thread may carry any of them, so every one is
//! shown visibly instead of sent:
//!
//! - C0 controls as caret notation (`^[` for ESC, `^G` for BEL), as `cat -v` and `less`
//!   show them, and DEL as `^?`;
//! - C1 controls as `\u{9b}`;
//! - a carriage return as `^M`, except where it ends a line (`\r\n` is a newline).
//!
//! Newline and tab are text. Nothing else is changed: bidirectional and zero-width
//! characters are part of real text (a zero-width joiner holds an emoji together) and
//! make a terminal do nothing but draw.
//!
//! ```
//! use codecrew::output::console::inert;
//!
//! assert_eq!(inert("\u{1b}]52;c;cm0gLXJm\u{7}done"), "^[]52;c;cm0gLXJm^Gdone");
//! assert_eq!(inert("line\r\n\tnext\rover"), "line\n\tnext^Mover");
//! assert_eq!(inert("\u{9b}2J"), "\\u{9b}2J");
//! ```

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every control character but newline and tab shown visibly; a `\r` that
/// ends a line (before `\n`) is dropped. Borrowed when there is nothing to show.
pub fn inert(text: &str) -> Cow<'_, str> {
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        push_visible(&mut out, c);
    }
    Cow::Owned(out)
}

/// [`inert`] over a stream of pieces: a `\r` that ends one piece waits for the next, to
/// see whether a `\n` follows it. The result is the same however the text is cut.
///
/// ```
/// use codecrew::output::console::{Inert, inert};
///
/// let mut stream = Inert::default();
/// let mut shown = stream.push("a\u{1b}");
/// shown += &stream.push("[2Jb\r");
/// shown += &stream.push("\nc\r");
/// shown += &stream.finish();
/// assert_eq!(shown, inert("a\u{1b}[2Jb\r\nc\r"));
/// ```
#[derive(Debug, Default, Clone)]
pub struct Inert {
    held_return: bool,
}

impl Inert {
    /// The next piece, made inert; a final `\r` is held back.
    pub fn push(&mut self, piece: &str) -> String {
        let mut out = String::with_capacity(piece.len() + 2);
        if piece.is_empty() {
            return out;
        }
        let mut piece = piece;
        if std::mem::take(&mut self.held_return) && !piece.starts_with('\n') {
            push_visible(&mut out, '\r');
        }
        if let Some(rest) = piece.strip_suffix('\r') {
            self.held_return = true;
            piece = rest;
        }
        out.push_str(&inert(piece));
        out
    }

    /// The end of the stream: a `\r` still held is shown.
    pub fn finish(&mut self) -> String {
        if std::mem::take(&mut self.held_return) {
            "^M".to_owned()
        } else {
            String::new()
        }
    }
}

/// Whether a terminal would act on `c` rather than draw it.
fn acts(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

fn push_visible(out: &mut String, c: char) {
    match u32::from(c) {
        code @ 0x00..=0x1f if c != '\n' && c != '\t' => {
            out.push('^');
            // Caret notation: the control plus 0x40 (`ESC` 0x1b is `^[`).
            out.push(char::from(code as u8 + 0x40));
        }
        0x7f => out.push_str("^?"),
        code @ 0x80..=0x9f => {
            let _ = write!(out, "\\u{{{code:x}}}");
        }
        _ => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_acts_on_a_terminal_is_shown_not_sent() {
        // The clipboard, the title, a hidden link, a cleared screen, a terminal query.
        assert_eq!(
            inert("\u{1b}]52;c;ZWNobyBwd25lZA==\u{7}"),
            "^[]52;c;ZWNobyBwd25lZA==^G"
        );
        assert_eq!(inert("\u{1b}]0;root@prod\u{1b}\\"), "^[]0;root@prod^[\\");
        assert_eq!(
            inert("\u{1b}]8;;https://evil.example\u{1b}\\docs\u{1b}]8;;\u{1b}\\"),
            "^[]8;;https://evil.example^[\\docs^[]8;;^[\\"
        );
        assert_eq!(inert("\u{1b}[2J\u{1b}[H"), "^[[2J^[[H");
        assert_eq!(inert("\u{1b}P+q544e\u{1b}\\"), "^[P+q544e^[\\");
        // The 8-bit forms: CSI, OSC, DCS, ST.
        assert_eq!(
            inert("\u{9b}2J\u{9d}0;x\u{9c}\u{90}q"),
            "\\u{9b}2J\\u{9d}0;x\\u{9c}\\u{90}q"
        );
        assert_eq!(inert("a\u{7f}b\u{0}c\u{8}d"), "a^?b^@c^Hd");
    }

    #[test]
    fn text_stays_text() {
        let prose = "# Title\n\n- one\t| two |\n```rust\nfn main() {}\n```\n👩‍💻 ok — «ü»\n";
        assert!(matches!(inert(prose), Cow::Borrowed(_)));
        assert_eq!(inert(prose), prose);
        assert_eq!(inert("a\r\nb\r\n"), "a\nb\n");
    }

    #[test]
    fn a_lone_carriage_return_cannot_overwrite_a_line() {
        assert_eq!(inert("rm -rf ~\rls"), "rm -rf ~^Mls");
        assert_eq!(inert("end\r"), "end^M");
        assert_eq!(inert("\r\r\n"), "^M\n");
    }

    #[test]
    fn any_cut_of_a_stream_gives_the_same_text() {
        let text = "a\u{1b}]52;c;eA==\u{7}\r\nb\r\rc\u{9b}1m\r";
        let whole = inert(text).into_owned();
        let chars: Vec<char> = text.chars().collect();
        for cut in 0..=chars.len() {
            for second in cut..=chars.len() {
                let pieces = [
                    chars[..cut].iter().collect::<String>(),
                    chars[cut..second].iter().collect::<String>(),
                    chars[second..].iter().collect::<String>(),
                ];
                let mut stream = Inert::default();
                let mut shown: String = pieces.iter().map(|piece| stream.push(piece)).collect();
                shown.push_str(&stream.finish());
                assert_eq!(shown, whole, "cut at {cut} and {second}");
            }
        }
    }
}
