//! Code blocks highlighted by syntect, one line at a time (so a block streams as the model
//! writes it).
//!
//! The grammars and the theme are syntect's bundled ones, loaded once, at the first code
//! block. Colours go out as the 256 colours every terminal that styles has, not 24-bit.

use std::sync::OnceLock;

use anstyle::{Ansi256Color, Color, Style};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

use super::wrap::{Line, Span};

/// A theme readable on the dark backgrounds most terminals have (bat's default too).
const THEME: &str = "base16-ocean.dark";

struct Assets {
    syntaxes: SyntaxSet,
    theme: Option<Theme>,
}

fn assets() -> &'static Assets {
    static ASSETS: OnceLock<Assets> = OnceLock::new();
    ASSETS.get_or_init(|| Assets {
        syntaxes: SyntaxSet::load_defaults_newlines(),
        theme: ThemeSet::load_defaults().themes.remove(THEME),
    })
}

/// One code block being highlighted.
pub struct CodeBlock {
    /// None for a language syntect does not know (or no language): plain lines.
    highlighter: Option<HighlightLines<'static>>,
}

impl CodeBlock {
    /// A block whose fence said `info` (`rust`, `py title="x"`, or nothing).
    pub fn new(info: &str) -> CodeBlock {
        let language = info.split_whitespace().next().unwrap_or_default();
        // A block with no language never loads the grammars.
        let highlighter = (!language.is_empty()).then(assets).and_then(|assets| {
            let syntax = assets.syntaxes.find_syntax_by_token(language)?;
            Some(HighlightLines::new(syntax, assets.theme.as_ref()?))
        });
        CodeBlock { highlighter }
    }

    /// The next line of the block (without its newline), highlighted.
    pub fn line(&mut self, line: &str) -> Line {
        let plain = || vec![Span::new(CODE, line)];
        let Some(highlighter) = &mut self.highlighter else {
            return plain();
        };
        let with_newline = format!("{line}\n");
        match highlighter.highlight_line(&with_newline, &assets().syntaxes) {
            Ok(regions) => regions
                .into_iter()
                .map(|(style, text)| Span::new(to_anstyle(style), text.trim_end_matches('\n')))
                .filter(|span| !span.text.is_empty())
                .collect(),
            Err(error) => {
                tracing::debug!(%error, "highlighting stopped");
                self.highlighter = None;
                plain()
            }
        }
    }
}

/// Code without a known language.
const CODE: Style = Style::new();

fn to_anstyle(style: syntect::highlighting::Style) -> Style {
    let colour = style.foreground;
    let mut out = Style::new().fg_color(Some(Color::Ansi256(Ansi256Color(to_256(
        colour.r, colour.g, colour.b,
    )))));
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.bold();
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.italic();
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out = out.underline();
    }
    out
}

/// The nearest of xterm's 256 colours: the 6×6×6 cube or the grey ramp.
fn to_256(r: u8, g: u8, b: u8) -> u8 {
    let level = |c: u8| -> u8 {
        // The cube's levels are 0, 95, 135, 175, 215, 255.
        if c < 48 {
            0
        } else if c < 115 {
            1
        } else {
            ((u16::from(c) - 35) / 40) as u8
        }
    };
    let (lr, lg, lb) = (level(r), level(g), level(b));
    let cube = 16 + 36 * lr + 6 * lg + lb;
    let grey_like = r.abs_diff(g) < 10 && g.abs_diff(b) < 10;
    if grey_like {
        let average = (u16::from(r) + u16::from(g) + u16::from(b)) / 3;
        if average > 8 && average < 238 {
            return 232 + ((average - 8) / 10).min(23) as u8;
        }
    }
    cube
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_is_highlighted_and_the_text_kept() {
        let mut block = CodeBlock::new("rust");
        let line = block.line("fn main() { let x = \"hi\"; }");
        let text: String = line.iter().map(|span| span.text.as_str()).collect();
        assert_eq!(text, "fn main() { let x = \"hi\"; }");
        let styles: std::collections::HashSet<_> = line.iter().map(|span| span.style).collect();
        assert!(styles.len() > 1, "one colour only: {line:?}");
    }

    #[test]
    fn an_unknown_language_is_plain_and_inert() {
        let mut block = CodeBlock::new("no-such-language");
        let line = block.line("x\u{1b}]0;t\u{7}");
        assert_eq!(line, vec![Span::new(CODE, "x\u{1b}]0;t\u{7}")]);
        assert_eq!(line[0].text, "x^[]0;t^G");
    }

    #[test]
    fn colours_map_to_the_256_palette() {
        assert_eq!(to_256(0, 0, 0), 16);
        assert_eq!(to_256(255, 255, 255), 231);
        assert_eq!(to_256(255, 0, 0), 196);
        assert_eq!(to_256(128, 128, 128), 244);
    }
}
