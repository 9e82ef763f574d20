//! Asking the user about a call: the question, the answer, and who answers.
//!
//! An [`Asker`] answers; the one that prompts on a terminal belongs to the front end that
//! owns the terminal. What is shown must be [`escape`]d: every control and invisible
//! formatting character, so a model cannot hide part of a command behind `\r`, an ANSI
//! escape or a right-to-left override. [`NonInteractive`] answers Deny; the executor then
//! names `--yes` or the rule that would allow the call.

use serde_json::Value;

use super::Reason;

/// The user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Run this call.
    Once,
    /// Run this call and calls like it for the rest of the run.
    Always,
    Deny,
}

/// One question: which call, and why it needs a yes.
#[derive(Debug, Clone)]
pub struct Question {
    /// The id of the call asked about, when it is a codecrew call (its result's
    /// `tool_call_id`); None for a CLI's own tool.
    pub call_id: Option<String>,
    pub tool: String,
    pub input: Value,
    pub reason: Reason,
}

/// Something that can answer questions about calls.
pub trait Asker: Send + Sync {
    /// Blocks until answered. Called off the async runtime.
    fn ask(&self, question: &Question) -> Answer;
    /// Whether a person is asked (false: every answer is Deny).
    fn interactive(&self) -> bool;
}

/// No terminal: every question is answered Deny.
#[derive(Debug, Default, Clone, Copy)]
pub struct NonInteractive;

impl Asker for NonInteractive {
    fn ask(&self, _question: &Question) -> Answer {
        Answer::Deny
    }

    fn interactive(&self) -> bool {
        false
    }
}

/// `o`/`once`/`y`/`yes`, `a`/`always`; anything else (an empty line included) is Deny.
pub fn parse_answer(line: &str) -> Answer {
    match line.trim().to_lowercase().as_str() {
        "o" | "once" | "y" | "yes" => Answer::Once,
        "a" | "always" => Answer::Always,
        _ => Answer::Deny,
    }
}

/// Escapes what a terminal would interpret or hide: C0 and C1 controls, DEL, and the
/// invisible formatting characters (bidirectional overrides, zero-width characters, line
/// and paragraph separators, the BOM). Backslashes are doubled so escapes are unambiguous.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{1b}' => out.push_str("\\e"),
            c if c.is_control() || is_invisible(c) => {
                out.push_str(&format!("\\u{{{:04x}}}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}

fn is_invisible(c: char) -> bool {
    matches!(
        u32::from(c),
        0x00ad
            | 0x034f
            | 0x061c
            | 0x115f
            | 0x1160
            | 0x17b4
            | 0x17b5
            | 0x180b..=0x180e
            | 0x200b..=0x200f
            | 0x2028..=0x202e
            | 0x2060..=0x206f
            | 0x3164
            | 0xfe00..=0xfe0f
            | 0xfeff
            | 0xffa0
            | 0xfff0..=0xfffb
            | 0xe0000..=0xe0fff
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn control_and_invisible_characters_are_escaped() {
        assert_eq!(escape("ls\n rm -rf /"), "ls\\n rm -rf /");
        assert_eq!(escape("a\rb"), "a\\rb");
        assert_eq!(escape("\u{1b}[2K"), "\\e[2K");
        assert_eq!(escape("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(escape("zero\u{200b}width"), "zero\\u{200b}width");
        assert_eq!(escape("del\u{7f}"), "del\\u{007f}");
        assert_eq!(escape("c1\u{9b}"), "c1\\u{009b}");
        assert_eq!(escape("back\\slash"), "back\\\\slash");
        assert_eq!(escape("plain é ü 字"), "plain é ü 字");
    }

    #[test]
    fn answers() {
        assert_eq!(parse_answer("o\n"), Answer::Once);
        assert_eq!(parse_answer("YES"), Answer::Once);
        assert_eq!(parse_answer("a"), Answer::Always);
        assert_eq!(parse_answer(""), Answer::Deny);
        assert_eq!(parse_answer("d"), Answer::Deny);
        assert_eq!(parse_answer("sure"), Answer::Deny);
        let question = Question {
            call_id: None,
            tool: "x".to_owned(),
            input: json!({}),
            reason: Reason::new("r"),
        };
        assert_eq!(NonInteractive.ask(&question), Answer::Deny);
        assert!(!NonInteractive.interactive());
    }
}
