//! Whether codecrew's human output is styled, and the few styles it uses.
//!
//! The decision is taken once at start-up, per stream, from `--color`, the environment and
//! whether the stream is a terminal: `--color always` and `--color never` decide alone; in
//! `auto` a non-empty `NO_COLOR` turns styling off (<https://no-color.org>), a non-empty
//! `CLICOLOR_FORCE` other than `0` turns it on, `TERM=dumb` turns it off, and otherwise a
//! terminal gets styling and a pipe or file does not.
//!
//! Only codecrew's own words are styled (call notices, job headers, failures, the
//! permission prompt); a model's text passes through untouched and JSON output never
//! carries a style.
//!
//! ```
//! use codecrew::output::color::{ColorChoice, ColorEnv, Palette, NOTICE};
//!
//! let env = ColorEnv::default();
//! assert!(!Palette::decide(ColorChoice::Auto, env, false).enabled());
//! let palette = Palette::decide(ColorChoice::Always, env, false);
//! assert_eq!(palette.paint(NOTICE, "→ read_file").to_string(), "\x1b[2m→ read_file\x1b[0m");
//! ```

use std::ffi::OsString;
use std::fmt;

use anstyle::{AnsiColor, Color, Style};

/// Tool calls and their results in the text output: seen, but quieter than the answer.
pub const NOTICE: Style = Style::new().dimmed();
/// A call that did not run as asked (denied, failed, rejected).
pub const WARNING: Style = Style::new().fg_color(Some(Color::Ansi(AnsiColor::Yellow)));
/// A job that failed.
pub const ERROR: Style = Style::new()
    .fg_color(Some(Color::Ansi(AnsiColor::Red)))
    .bold();
/// A line a change adds (`codecrew diff`).
pub const ADDED: Style = Style::new().fg_color(Some(Color::Ansi(AnsiColor::Green)));
/// A line a change removes.
pub const REMOVED: Style = Style::new().fg_color(Some(Color::Ansi(AnsiColor::Red)));
/// Headings and names a reader scans for: job sections, tool names, the prompt's question.
pub const LABEL: Style = Style::new().bold();

/// `--color`: when codecrew styles its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// Style output that goes to a terminal, unless NO_COLOR is set
    #[default]
    Auto,
    /// Always style, even into a pipe or a file and despite NO_COLOR
    Always,
    /// Never style
    Never,
}

impl From<ColorChoice> for clap::ColorChoice {
    fn from(choice: ColorChoice) -> Self {
        match choice {
            ColorChoice::Auto => clap::ColorChoice::Auto,
            ColorChoice::Always => clap::ColorChoice::Always,
            ColorChoice::Never => clap::ColorChoice::Never,
        }
    }
}

impl ColorChoice {
    /// The last `--color` in a raw command line, before clap has parsed it: clap needs the
    /// choice for its own help and error messages before parsing ends.
    pub fn from_args(args: &[OsString]) -> Option<ColorChoice> {
        let mut choice = None;
        let mut words = args.iter().skip(1).map(|word| word.to_str());
        while let Some(word) = words.next() {
            let value = match word {
                Some("--") => break,
                Some("--color") => words.next().flatten(),
                Some(word) => word.strip_prefix("--color="),
                None => None,
            };
            let parsed = value.and_then(|value| clap::ValueEnum::from_str(value, false).ok());
            choice = parsed.or(choice);
        }
        choice
    }
}

/// What the environment says about colour.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ColorEnv {
    /// `NO_COLOR` is set and not empty.
    pub no_color: bool,
    /// `CLICOLOR_FORCE` is set, not empty and not `0`.
    pub force: bool,
    /// `TERM=dumb`: a terminal that shows escapes as garbage.
    pub dumb_terminal: bool,
}

impl ColorEnv {
    /// The process's environment.
    pub fn from_process() -> Self {
        Self::from_vars(|name| std::env::var_os(name))
    }

    /// An environment given by a lookup function (for tests).
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> Self {
        let non_empty = |name: &str| var(name).filter(|value| !value.is_empty());
        ColorEnv {
            no_color: non_empty("NO_COLOR").is_some(),
            force: non_empty("CLICOLOR_FORCE").is_some_and(|value| value != "0"),
            dumb_terminal: var("TERM").is_some_and(|value| value == "dumb"),
        }
    }
}

/// Which of the process's streams are terminals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Terminals {
    pub stdout: bool,
    pub stderr: bool,
}

/// The palettes of the streams codecrew writes people-facing text to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Colors {
    pub stdout: Palette,
    pub stderr: Palette,
    /// The controlling terminal (`/dev/tty`), where permission prompts are asked.
    pub tty: Palette,
}

impl Colors {
    /// The decisions for this process's streams, given whether each is a terminal (the
    /// console knows: it is the door to them).
    pub fn detect(choice: ColorChoice, streams: Terminals) -> Self {
        let env = ColorEnv::from_process();
        Colors {
            stdout: Palette::decide(choice, env, streams.stdout),
            stderr: Palette::decide(choice, env, streams.stderr),
            // The prompt is only ever written to a terminal.
            tty: Palette::decide(choice, env, true),
        }
    }
}

/// Styles text for one stream, or leaves it plain. The default is plain.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Palette {
    enabled: bool,
}

impl Palette {
    /// No styling.
    pub const PLAIN: Palette = Palette { enabled: false };
    /// ANSI styling.
    pub const ANSI: Palette = Palette { enabled: true };

    /// The palette for a stream, given the choice, the environment and whether the stream
    /// is a terminal.
    pub fn decide(choice: ColorChoice, env: ColorEnv, terminal: bool) -> Self {
        let enabled = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto if env.no_color => false,
            ColorChoice::Auto if env.force => true,
            ColorChoice::Auto => terminal && !env.dumb_terminal,
        };
        Palette { enabled }
    }

    /// Whether this palette styles at all.
    pub fn enabled(self) -> bool {
        self.enabled
    }

    /// `text` in `style`, when this palette styles; else `text` as it is.
    pub fn paint<T: fmt::Display>(self, style: Style, text: T) -> Painted<T> {
        Painted {
            style: if self.enabled { style } else { Style::new() },
            text,
        }
    }
}

/// Text with a style, as [`Palette::paint`] returns it.
#[derive(Debug, Clone, Copy)]
pub struct Painted<T> {
    style: Style,
    text: T,
}

impl<T: fmt::Display> fmt::Display for Painted<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A plain style renders as nothing, reset included.
        write!(
            f,
            "{}{}{}",
            self.style.render(),
            self.text,
            self.style.render_reset()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> ColorEnv {
        let vars: Vec<(String, OsString)> = vars
            .iter()
            .map(|(name, value)| ((*name).to_owned(), OsString::from(value)))
            .collect();
        ColorEnv::from_vars(|name| {
            vars.iter()
                .find(|(known, _)| known == name)
                .map(|(_, value)| value.clone())
        })
    }

    fn styled(choice: ColorChoice, vars: &[(&str, &str)], terminal: bool) -> bool {
        Palette::decide(choice, env(vars), terminal).enabled()
    }

    #[test]
    fn auto_styles_a_terminal_only() {
        assert!(styled(ColorChoice::Auto, &[], true));
        assert!(!styled(ColorChoice::Auto, &[], false));
        assert!(!styled(ColorChoice::Auto, &[("TERM", "dumb")], true));
    }

    #[test]
    fn no_color_turns_auto_off_unless_empty() {
        assert!(!styled(ColorChoice::Auto, &[("NO_COLOR", "1")], true));
        assert!(!styled(ColorChoice::Auto, &[("NO_COLOR", "0")], true));
        assert!(styled(ColorChoice::Auto, &[("NO_COLOR", "")], true));
        // NO_COLOR outranks CLICOLOR_FORCE.
        let both = [("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")];
        assert!(!styled(ColorChoice::Auto, &both, true));
    }

    #[test]
    fn clicolor_force_turns_auto_on_for_a_pipe() {
        assert!(styled(ColorChoice::Auto, &[("CLICOLOR_FORCE", "1")], false));
        assert!(!styled(
            ColorChoice::Auto,
            &[("CLICOLOR_FORCE", "0")],
            false
        ));
        assert!(!styled(ColorChoice::Auto, &[("CLICOLOR_FORCE", "")], false));
    }

    #[test]
    fn always_and_never_ignore_the_environment() {
        let no_color = [("NO_COLOR", "1"), ("TERM", "dumb")];
        assert!(styled(ColorChoice::Always, &no_color, false));
        assert!(!styled(
            ColorChoice::Never,
            &[("CLICOLOR_FORCE", "1")],
            true
        ));
    }

    #[test]
    fn plain_paint_adds_nothing() {
        assert_eq!(Palette::PLAIN.paint(ERROR, "x").to_string(), "x");
        assert_eq!(
            Palette::ANSI.paint(LABEL, "x").to_string(),
            "\x1b[1mx\x1b[0m"
        );
    }

    #[test]
    fn the_choice_is_found_before_parsing() {
        let args = |words: &[&str]| -> Vec<OsString> {
            std::iter::once("codecrew")
                .chain(words.iter().copied())
                .map(OsString::from)
                .collect()
        };
        assert_eq!(ColorChoice::from_args(&args(&["tools", "list"])), None);
        assert_eq!(
            ColorChoice::from_args(&args(&["--color", "never", "tools"])),
            Some(ColorChoice::Never)
        );
        assert_eq!(
            ColorChoice::from_args(&args(&["tools", "--color=always", "--color", "never"])),
            Some(ColorChoice::Never)
        );
        assert_eq!(
            ColorChoice::from_args(&args(&["query", "--", "--color=always"])),
            None
        );
        assert_eq!(ColorChoice::from_args(&args(&["--color", "pink"])), None);
    }
}
