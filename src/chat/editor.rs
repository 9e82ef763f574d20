//! The line editor of `codecrew chat` (rustyline): history kept in codecrew's state
//! folder, several lines in one task (a line that ends with `\` goes on; Alt-Enter
//! breaks the line), and completion of `@agent` mentions and the chat's `/commands`.

use std::path::PathBuf;

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Context, Helper};

use super::COMMANDS;

/// The chat's line editor.
pub type LineEditor = rustyline::Editor<ChatHelper, rustyline::history::DefaultHistory>;

/// Completes mentions and commands; knows when a task goes on past a line.
pub struct ChatHelper {
    /// The agents of the config, without `@`.
    pub agents: Vec<String>,
}

impl Completer for ChatHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        let start = before
            .rfind(char::is_whitespace)
            .map_or(0, |space| space + 1);
        let word = &before[start..];
        let pair = |text: String| Pair {
            display: text.clone(),
            replacement: format!("{text} "),
        };
        let candidates = if let Some(prefix) = word.strip_prefix('@') {
            self.agents
                .iter()
                .filter(|agent| agent.starts_with(prefix))
                .map(|agent| pair(format!("@{agent}")))
                .collect()
        } else if start == 0 && word.starts_with('/') {
            COMMANDS
                .iter()
                .filter(|(name, _)| name.starts_with(word))
                .map(|(name, _)| pair((*name).to_owned()))
                .collect()
        } else {
            Vec::new()
        };
        Ok((start, candidates))
    }
}

impl Hinter for ChatHelper {
    type Hint = String;
}

impl Highlighter for ChatHelper {}

impl Validator for ChatHelper {
    fn validate(&self, context: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        Ok(if context.input().ends_with('\\') {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Valid(None)
        })
    }
}

impl Helper for ChatHelper {}

/// A task typed over several lines, as the model should read it: a `\` that continued a
/// line is dropped.
pub fn joined(input: &str) -> String {
    input.replace("\\\n", "\n")
}

/// Where the chat's history is kept: `$XDG_STATE_HOME/codecrew/chat_history`, else
/// `~/.local/state/codecrew/chat_history`.
pub fn history_file() -> Option<PathBuf> {
    codecrew_policy::state_folder::location().map(|dir| dir.join("chat_history"))
}

#[cfg(test)]
mod tests {
    use rustyline::history::DefaultHistory;

    use super::*;

    #[test]
    fn mentions_and_commands_complete() {
        let helper = ChatHelper {
            agents: vec!["claude".into(), "codex".into(), "gemini".into()],
        };
        let history = DefaultHistory::new();
        let context = Context::new(&history);
        let (start, found) = helper.complete("ask @c", 6, &context).unwrap();
        assert_eq!(start, 4);
        let names: Vec<&str> = found.iter().map(|pair| pair.display.as_str()).collect();
        assert_eq!(names, ["@claude", "@codex"]);
        let (_, found) = helper.complete("/mo", 3, &context).unwrap();
        assert_eq!(found[0].replacement, "/mode ");
        assert!(helper.complete("plain", 5, &context).unwrap().1.is_empty());
        assert_eq!(joined("one \\\ntwo"), "one \ntwo");
    }
}
