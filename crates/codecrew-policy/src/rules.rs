//! Policy rules: `tool` or `tool(pattern)`, as written in `[permissions]`.
//!
//! - `read_file`, `write_file(src/**)`, `read_file(secrets/**)`: file tools take a glob over
//!   the workspace-relative path (`*` stays within a directory, `**` crosses them). A rule
//!   on `read_file` covers every tool that reads files (`grep`, `glob`, `list_directory`),
//!   one on `write_file` every tool that writes them (`edit_file`).
//! - `run_command(git diff *)`: a glob over the words of one simple command, after quotes
//!   and escapes are removed. A word `*` matches any number of words (none included), other
//!   words match one word each, with `*` and `?` inside them. Claude Code's spelling
//!   `git diff:*` is accepted as `git diff *`.
//!
//! Deny and ask rules match paths without regard to case (they must not be dodged by
//! `Secrets/` on a file system that folds case); allow rules match exactly.

use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};

/// Which configuration layer a rule came from; named in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    Builtin,
    User,
    Project,
    /// Approved "always for this run" at a prompt.
    Session,
}

impl Layer {
    pub fn name(self) -> &'static str {
        match self {
            Layer::Builtin => "built-in defaults",
            Layer::User => "user config",
            Layer::Project => "project config (codecrew.toml)",
            Layer::Session => "approved for this run",
        }
    }
}

/// The tools whose rules are about paths read.
pub const READ_TOOLS: &[&str] = &["read_file", "grep", "glob", "list_directory"];
/// The tools whose rules are about paths written.
pub const WRITE_TOOLS: &[&str] = &["write_file", "edit_file"];
/// The tool whose rules are about command words.
pub const COMMAND_TOOL: &str = "run_command";

#[derive(Debug, Clone)]
enum Matcher {
    /// A bare tool name: every call of the tool.
    Any,
    Path(GlobMatcher),
    Words(Vec<String>),
}

/// One parsed rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The rule as written, for messages.
    pub text: String,
    pub layer: Layer,
    tool: String,
    matcher: Matcher,
}

/// A rule that does not parse. Configuration errors stop codecrew before it runs anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid permission rule {rule:?} in the {layer}: {message}")]
pub struct RuleError {
    pub rule: String,
    pub layer: &'static str,
    pub message: String,
}

/// What a rule is matched against.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// A workspace-relative path (`.` for the root) used by `tool`.
    Path { tool: &'a str, path: &'a str },
    /// The words of one simple command run by run_command.
    Command(&'a [String]),
    /// A call of a tool with neither paths nor commands.
    Call { tool: &'a str },
}

impl Rule {
    /// Parses `tool` or `tool(pattern)`; `case_insensitive` for deny and ask rules.
    pub fn parse(text: &str, layer: Layer, case_insensitive: bool) -> Result<Rule, RuleError> {
        let error = |message: &str| RuleError {
            rule: text.to_owned(),
            layer: layer.name(),
            message: message.to_owned(),
        };
        let trimmed = text.trim();
        let trimmed = trimmed.strip_prefix("codecrew:").unwrap_or(trimmed);
        let (tool, pattern) = match trimmed.find('(') {
            None => (trimmed, None),
            Some(open) => {
                let Some(inner) = trimmed[open + 1..].strip_suffix(')') else {
                    return Err(error(
                        "a pattern must end with `)`, e.g. `write_file(src/**)`",
                    ));
                };
                (trimmed[..open].trim(), Some(inner.trim()))
            }
        };
        if tool.is_empty()
            || !tool
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
        {
            return Err(error(
                "the tool name must be letters, digits, `_`, `-` or `.`",
            ));
        }
        let matcher = match pattern {
            None => Matcher::Any,
            Some("") => return Err(error("the pattern is empty; write the bare tool name")),
            Some(pattern) if tool == COMMAND_TOOL => Matcher::Words(command_words(pattern)),
            Some(pattern) if READ_TOOLS.contains(&tool) || WRITE_TOOLS.contains(&tool) => {
                let pattern = pattern.trim_start_matches("./");
                let glob = GlobBuilder::new(pattern)
                    .literal_separator(true)
                    .case_insensitive(case_insensitive)
                    .backslash_escape(true)
                    .build()
                    .map_err(|e| error(&format!("bad glob: {e}")))?;
                Matcher::Path(glob.compile_matcher())
            }
            Some(_) => {
                return Err(error(
                    "patterns are supported for file tools (paths) and run_command (words); \
                     other tools take the bare name",
                ));
            }
        };
        Ok(Rule {
            text: trimmed.to_owned(),
            layer,
            tool: tool.to_owned(),
            matcher,
        })
    }

    /// Whether the rule speaks about calls of `tool` at all.
    fn covers(&self, tool: &str) -> bool {
        self.tool == tool
            || (self.tool == "read_file" && READ_TOOLS.contains(&tool))
            || (self.tool == "write_file" && WRITE_TOOLS.contains(&tool))
    }

    pub fn matches(&self, subject: Subject<'_>) -> bool {
        match subject {
            Subject::Path { tool, path } => {
                self.covers(tool)
                    && match &self.matcher {
                        Matcher::Any => true,
                        Matcher::Path(glob) => {
                            glob.is_match(Path::new(path))
                                // A directory named by a read tool is covered by a rule
                                // about what is inside it (`secrets/**` covers `secrets`).
                                || (READ_TOOLS.contains(&tool)
                                    && glob.is_match(Path::new(path).join("x")))
                        }
                        Matcher::Words(_) => false,
                    }
            }
            Subject::Command(words) => {
                self.tool == COMMAND_TOOL
                    && match &self.matcher {
                        Matcher::Any => true,
                        Matcher::Words(pattern) => words_match(pattern, words),
                        Matcher::Path(_) => false,
                    }
            }
            Subject::Call { tool } => self.covers(tool) && matches!(self.matcher, Matcher::Any),
        }
    }
}

/// The words of a command pattern; `git diff:*` is `git diff *`.
fn command_words(pattern: &str) -> Vec<String> {
    let pattern = match pattern.strip_suffix(":*") {
        Some(head) => format!("{head} *"),
        None => pattern.to_owned(),
    };
    pattern.split_whitespace().map(str::to_owned).collect()
}

/// Matches a word pattern against words; a pattern word `*` takes any number of words.
fn words_match(pattern: &[String], words: &[String]) -> bool {
    match pattern.split_first() {
        None => words.is_empty(),
        Some((first, rest)) if first == "*" => {
            (0..=words.len()).any(|skip| words_match(rest, &words[skip..]))
        }
        Some((first, rest)) => match words.split_first() {
            Some((word, others)) => wildcard(first, word) && words_match(rest, others),
            None => false,
        },
    }
}

/// `*` (any characters) and `?` (one character) within one word.
pub fn wildcard(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let (mut p, mut t) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while t < text.len() {
        if p < pattern.len() && (pattern[p] == '?' || pattern[p] == text[t]) {
            p += 1;
            t += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some(p);
            mark = t;
            p += 1;
        } else if let Some(at) = star {
            p = at + 1;
            mark += 1;
            t = mark;
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

/// A rule that would allow this command, to suggest: the command and, when its second word
/// is a subcommand (not an option or a path), that word too; then `*`.
pub fn suggest_command_rule(words: &[String]) -> String {
    let mut kept: Vec<&str> = Vec::new();
    if let Some(first) = words.first() {
        kept.push(first);
    }
    if let Some(second) = words.get(1)
        && !second.starts_with('-')
        && !second.contains('/')
        && !second.contains('.')
        && second
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        kept.push(second);
    }
    format!("run_command({} *)", kept.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    fn rule(text: &str) -> Rule {
        Rule::parse(text, Layer::User, false).unwrap()
    }

    #[test]
    fn command_rules_match_words() {
        let git_diff = rule("run_command(git diff *)");
        assert!(git_diff.matches(Subject::Command(&words("git diff"))));
        assert!(git_diff.matches(Subject::Command(&words("git diff --stat src"))));
        assert!(!git_diff.matches(Subject::Command(&words("git push"))));
        assert!(!git_diff.matches(Subject::Command(&words("git"))));
        let exact = rule("run_command(cargo test)");
        assert!(exact.matches(Subject::Command(&words("cargo test"))));
        assert!(!exact.matches(Subject::Command(&words("cargo test --all"))));
        let claude = rule("run_command(npm run:*)");
        assert!(claude.matches(Subject::Command(&words("npm run build"))));
        let inner = rule("run_command(cargo t*)");
        assert!(inner.matches(Subject::Command(&words("cargo test"))));
        assert!(!inner.matches(Subject::Command(&words("cargo build"))));
        let any = rule("run_command");
        assert!(any.matches(Subject::Command(&words("anything at all"))));
    }

    #[test]
    fn path_rules_are_globs_over_workspace_paths() {
        let src = rule("write_file(src/**)");
        let path = |tool, path| Subject::Path { tool, path };
        assert!(src.matches(path("write_file", "src/a/b.rs")));
        assert!(src.matches(path("edit_file", "src/lib.rs")));
        assert!(!src.matches(path("write_file", "tests/a.rs")));
        assert!(!src.matches(path("read_file", "src/lib.rs")));
        let one = rule("read_file(docs/*.md)");
        assert!(one.matches(path("read_file", "docs/a.md")));
        assert!(!one.matches(path("read_file", "docs/sub/a.md")));
        assert!(one.matches(path("grep", "docs/a.md")));
        let secrets = Rule::parse("read_file(secrets/**)", Layer::Project, true).unwrap();
        assert!(secrets.matches(path("read_file", "Secrets/KEY.txt")));
        assert!(secrets.matches(path("grep", "secrets")));
        assert!(secrets.matches(path("list_directory", "SECRETS")));
    }

    #[test]
    fn bad_rules_are_errors() {
        for text in [
            "",
            "read_file(",
            "read_file()",
            "help(x)",
            "rm -rf",
            "write_file(src/[)",
        ] {
            assert!(
                Rule::parse(text, Layer::User, false).is_err(),
                "{text:?} should not parse"
            );
        }
        assert_eq!(rule("codecrew:read_file").text, "read_file");
    }

    #[test]
    fn wildcards() {
        assert!(wildcard("a*c", "abbbc"));
        assert!(wildcard("*", ""));
        assert!(wildcard("?", "x"));
        assert!(!wildcard("?", ""));
        assert!(!wildcard("a*c", "abd"));
    }

    #[test]
    fn suggestions_name_the_subcommand() {
        assert_eq!(
            suggest_command_rule(&words("cargo test --all")),
            "run_command(cargo test *)"
        );
        assert_eq!(
            suggest_command_rule(&words("python script.py")),
            "run_command(python *)"
        );
        assert_eq!(suggest_command_rule(&words("make")), "run_command(make *)");
    }
}
