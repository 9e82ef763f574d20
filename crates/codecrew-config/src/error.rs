//! What can go wrong while loading the configuration, and where.
//!
//! Every problem inside a file is a [`Diagnostic`]: the file, the 1-based line and column,
//! what is wrong, and a hint saying what to do. Nothing in loading panics; a broken file is
//! always one of these errors.

use std::fmt;
use std::ops::Range;
use std::path::PathBuf;

/// A configuration problem. `Display` gives the full, human-readable message.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A config file exists but cannot be read (permissions, not UTF-8, a directory...).
    /// (`error` is part of the message rather than a `source`, so that printing the error
    /// chain does not repeat it.)
    #[error("cannot read the config file {}: {error}\n  hint: {hint}", path.display())]
    Read {
        path: PathBuf,
        error: std::io::Error,
        hint: &'static str,
    },
    /// `CODECREW_CONFIG` names a file that does not exist.
    #[error(
        "CODECREW_CONFIG points to {}, which does not exist\n  hint: create that file, \
         point CODECREW_CONFIG to an existing file, or unset it to use the default user config",
        path.display()
    )]
    MissingUserFile { path: PathBuf },
    /// One or more problems inside config files, each with its location.
    #[error("{}", DiagnosticList(.0))]
    Invalid(Vec<Diagnostic>),
    /// An agent defined by an untrusted project wants to run a program or pass CLI flags.
    #[error(
        "agent `{agent}` is defined in {}, a project you have not trusted, and it {what}\n  \
         hint: if you trust this project, add its directory to `trusted_projects` in your user \
         config file, or define the agent in your user config instead",
        path.display()
    )]
    UntrustedAgent {
        agent: String,
        path: PathBuf,
        what: &'static str,
    },
}

impl ConfigError {
    /// The diagnostics of an [`ConfigError::Invalid`] error (empty for the others).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            ConfigError::Invalid(diagnostics) => diagnostics,
            _ => &[],
        }
    }
}

/// One problem at one place in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub hint: String,
    /// The offending source line, for display.
    pub source_line: String,
    /// How many characters of `source_line` to underline (at least 1).
    pub width: usize,
}

impl Diagnostic {
    /// A diagnostic at the byte range `span` of `text` (the whole file).
    pub fn at(
        path: impl Into<PathBuf>,
        text: &str,
        span: Range<usize>,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Diagnostic {
        let start = floor_char_boundary(text, span.start.min(text.len()));
        let end = floor_char_boundary(text, span.end.clamp(start, text.len()));
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let line = text[..start].matches('\n').count() + 1;
        let column = text[line_start..start].chars().count() + 1;
        let source_line = text[line_start..line_end].trim_end_matches('\r').to_owned();
        let width = text[start..end.min(line_end)].chars().count().max(1);
        Diagnostic {
            path: path.into(),
            line,
            column,
            message: message.into(),
            hint: hint.into(),
            source_line,
            width,
        }
    }
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    while index > 0 && !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}:{}:{}: {}",
            self.path.display(),
            self.line,
            self.column,
            self.message
        )?;
        let number = self.line.to_string();
        let pad = " ".repeat(number.len());
        writeln!(f, " {pad} |")?;
        writeln!(f, " {number} | {}", self.source_line)?;
        let before: String = self
            .source_line
            .chars()
            .take(self.column - 1)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        writeln!(f, " {pad} | {before}{}", "^".repeat(self.width))?;
        write!(f, "  hint: {}", self.hint)
    }
}

struct DiagnosticList<'a>(&'a [Diagnostic]);

impl fmt::Display for DiagnosticList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, diagnostic) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{diagnostic}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based_and_count_characters() {
        let text = "a = 1\nbé = \"x\"\n";
        let at = text.find("\"x\"").unwrap();
        let d = Diagnostic::at("f.toml", text, at..at + 3, "bad", "fix it");
        assert_eq!((d.line, d.column, d.width), (2, 6, 3));
        assert_eq!(d.source_line, "bé = \"x\"");
        let shown = d.to_string();
        assert!(shown.starts_with("f.toml:2:6: bad\n"), "{shown}");
        assert!(
            shown.contains(" 2 | bé = \"x\"\n   |      ^^^\n"),
            "{shown}"
        );
        assert!(shown.ends_with("  hint: fix it"), "{shown}");
    }

    #[test]
    fn spans_past_the_end_or_inside_a_character_do_not_panic() {
        let text = "é";
        let d = Diagnostic::at("f.toml", text, 1..99, "m", "h");
        assert_eq!((d.line, d.column), (1, 1));
        let d = Diagnostic::at("f.toml", "", std::ops::Range { start: 5, end: 2 }, "m", "h");
        assert_eq!((d.line, d.column, d.width), (1, 1, 1));
    }
}
