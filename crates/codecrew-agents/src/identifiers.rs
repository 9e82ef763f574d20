//! The shapes of the names codecrew puts on a CLI's command line for it to look up: a
//! model and a session to resume.
//!
//! Neither comes only from the user's own command line: a model can come from a
//! project's `codecrew.toml`, a mention in a task piped from a file, or a thread; a
//! session id from a thread file a checkout may ship, or from the CLI's own output. A
//! value from such a place must never be read by the CLI as an option
//! (`--resume --dangerously-skip-permissions`), so each is held to the shape the CLI
//! gives it before it is used, and the CLI modules also pass it attached to its option
//! (`--resume=<id>`) where the CLI accepts that.

use std::fmt;

/// The longest model name codecrew passes on.
const MAX_MODEL_LEN: usize = 200;
/// The longest session id codecrew passes on.
const MAX_SESSION_LEN: usize = 128;

/// The shape of one CLI's session ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionShape {
    /// A UUID in its hyphenated form (Claude Code, Gemini CLI, Qwen Code, Copilot CLI,
    /// Codex's threads).
    Uuid,
    /// A word of letters, digits, `-`, `_`, `.` and `:` starting with a letter or digit
    /// (opencode's `ses_…`, llm's conversation ids, a declared CLI's).
    Word,
}

impl SessionShape {
    /// Whether `id` has this shape.
    pub fn fits(self, id: &str) -> bool {
        match self {
            SessionShape::Uuid => is_uuid(id),
            SessionShape::Word => {
                is_word(id, MAX_SESSION_LEN, |c| matches!(c, '-' | '_' | '.' | ':'))
            }
        }
    }
}

impl fmt::Display for SessionShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SessionShape::Uuid => "a UUID",
            SessionShape::Word => {
                "letters, digits, '-', '_', '.' and ':', starting with a letter or digit"
            }
        })
    }
}

/// Whether `model` can be a model's name: letters, digits and `.` `_` `-` `:` `/` `@` `+`,
/// starting with a letter or digit (`claude-haiku-4-5`, `openrouter/openai/gpt-4o`,
/// `hf.co/org/model:Q4_K_M`), at most 200 characters. Nothing that starts with `-`,
/// holds a space or a control character.
pub fn is_model_name(model: &str) -> bool {
    is_word(model, MAX_MODEL_LEN, |c| {
        matches!(c, '.' | '_' | '-' | ':' | '/' | '@' | '+')
    })
}

/// The error for a model that is not a model's name, naming where it came from.
pub fn model_error(model: &str, from: &str) -> String {
    format!(
        "the model {model:?} ({from}) is not a model's name: use letters, digits and \
         . _ - : / @ +, starting with a letter or digit"
    )
}

fn is_word(text: &str, max_len: usize, also: impl Fn(char) -> bool) -> bool {
    let mut chars = text.chars();
    let starts_well = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
    starts_well && text.len() <= max_len && chars.all(|c| c.is_ascii_alphanumeric() || also(c))
}

/// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, hex digits of either case.
fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, len)| group.len() == len && group.chars().all(|c| c.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_of_each_shape() {
        for id in [
            "3a9402ca-1472-42f2-9849-3f1b060f9fd3",
            "01A1FCA2-A7C5-7F60-92C8-30752C2E8654",
        ] {
            assert!(SessionShape::Uuid.fits(id), "{id}");
            assert!(SessionShape::Word.fits(id), "{id}");
        }
        for id in ["ses_4f2a9c1d0e", "01j9z3k7q8", "thread.1:2"] {
            assert!(SessionShape::Word.fits(id), "{id}");
            assert!(!SessionShape::Uuid.fits(id), "{id}");
        }
        // Words, but not UUIDs.
        for id in [
            "3a9402ca-1472-42f2-9849-3f1b060f9fd",
            "3a9402ca-1472-42f2-9849-3f1b060f9fd3-",
            "g3a9402c-1472-42f2-9849-3f1b060f9fd3",
        ] {
            assert!(SessionShape::Word.fits(id), "{id:?}");
            assert!(!SessionShape::Uuid.fits(id), "{id:?}");
        }
        // Neither: options, spaces, controls, paths, too long.
        for id in [
            "",
            "--dangerously-skip-permissions",
            "-s",
            "--dangerously-bypass-approvals-and-sandbox",
            "a b",
            "a\nb",
            "a=b",
            "../x",
            &"a".repeat(MAX_SESSION_LEN + 1),
        ] {
            assert!(!SessionShape::Uuid.fits(id), "{id:?}");
            assert!(!SessionShape::Word.fits(id), "{id:?}");
        }
    }

    #[test]
    fn each_cli_gives_its_sessions_its_shape() {
        for provider in ["claude", "gemini", "qwen", "copilot", "codex"] {
            assert_eq!(
                crate::session_shape_of(provider),
                SessionShape::Uuid,
                "{provider}"
            );
        }
        for provider in ["opencode", "llm", "command", "mine"] {
            assert_eq!(
                crate::session_shape_of(provider),
                SessionShape::Word,
                "{provider}"
            );
        }
    }

    #[test]
    fn model_names() {
        for model in [
            "haiku",
            "claude-haiku-4-5",
            "gemini-2.5-pro",
            "openrouter/openai/gpt-4o",
            "hf.co/org/model:Q4_K_M",
            "anthropic/claude-3.5-sonnet@20241022",
            "gpt-4o+search",
        ] {
            assert!(is_model_name(model), "{model}");
        }
        for model in [
            "",
            "--settings=/tmp/x.json",
            "-m",
            "a b",
            "haiku\t",
            "x\u{1b}[2J",
            "a=b",
            "$(id)",
            &"m".repeat(MAX_MODEL_LEN + 1),
        ] {
            assert!(!is_model_name(model), "{model:?}");
        }
    }
}
