//! Styled text broken into lines that fit the terminal.

use anstyle::Style;
use unicode_width::UnicodeWidthStr;

use crate::output::color::Palette;
use crate::output::console::{Text, inert};

/// A piece of text in one style. Its text is already inert, so its width is the width it
/// takes on the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub style: Style,
    pub text: String,
}

impl Span {
    /// `text` (made inert) in `style`.
    pub fn new(style: Style, text: &str) -> Span {
        Span {
            style,
            text: inert(text).into_owned(),
        }
    }

    pub fn width(&self) -> usize {
        self.text.width()
    }
}

/// One line on the terminal.
pub type Line = Vec<Span>;

/// The width of a line.
pub fn width(line: &[Span]) -> usize {
    line.iter().map(Span::width).sum()
}

/// `spans` as lines at most `width` wide (a word wider than that gets a line of its own,
/// cut where it must be), the first starting with `first`, the others with `rest`. A
/// span holding `\n` breaks the line there.
pub fn wrap(spans: &[Span], width: usize, first: &[Span], rest: &[Span]) -> Vec<Line> {
    let indent = self::width(rest);
    let mut lines = Vec::new();
    let mut line: Line = first.to_vec();
    let mut used = self::width(first);
    // No word on the line yet: whitespace is dropped there.
    let mut fresh = true;
    // Whitespace waits: it is written only if a word follows on the same line.
    let mut space: Option<Span> = None;
    for (style, piece) in words(spans) {
        if piece == "\n" {
            lines.push(std::mem::replace(&mut line, rest.to_vec()));
            (used, fresh, space) = (indent, true, None);
            continue;
        }
        if piece.chars().all(char::is_whitespace) {
            if !fresh {
                space = Some(Span {
                    style,
                    text: " ".to_owned(),
                });
            }
            continue;
        }
        let spacing = space.as_ref().map_or(0, Span::width);
        if !fresh && used + spacing + piece.width() > width {
            lines.push(std::mem::replace(&mut line, rest.to_vec()));
            (used, space) = (indent, None);
        }
        if let Some(space) = space.take() {
            used += space.width();
            line.push(space);
        }
        // A word wider than a whole line is cut to fit (its width counted down as it is
        // cut, not measured again: a word of a megabyte stays linear).
        let mut piece = piece.as_str();
        let mut piece_width = piece.width();
        while used + piece_width > width && piece_width > width.saturating_sub(indent) {
            let (cut, cut_width) = cut_at(piece, width.saturating_sub(used).max(1));
            line.push(Span {
                style,
                text: piece[..cut].to_owned(),
            });
            lines.push(std::mem::replace(&mut line, rest.to_vec()));
            used = indent;
            piece = &piece[cut..];
            piece_width = piece_width.saturating_sub(cut_width);
        }
        used += piece_width;
        line.push(Span {
            style,
            text: piece.to_owned(),
        });
        fresh = false;
    }
    if !fresh || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// The words and the runs of whitespace of `spans`, each with its style; a `\n` alone.
fn words(spans: &[Span]) -> Vec<(Style, String)> {
    let mut words = Vec::new();
    for span in spans {
        let mut current = String::new();
        let mut in_space = false;
        for c in span.text.chars() {
            if c == '\n' {
                if !current.is_empty() {
                    words.push((span.style, std::mem::take(&mut current)));
                }
                words.push((span.style, "\n".to_owned()));
                continue;
            }
            let space = c.is_whitespace();
            if space != in_space && !current.is_empty() {
                words.push((span.style, std::mem::take(&mut current)));
            }
            in_space = space;
            current.push(c);
        }
        if !current.is_empty() {
            words.push((span.style, current));
        }
    }
    words
}

/// The byte index where `text` is cut to be at most `columns` wide (at least one
/// character), and the width before it.
fn cut_at(text: &str, columns: usize) -> (usize, usize) {
    let mut used = 0;
    for (index, c) in text.char_indices() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > columns && index > 0 {
            return (index, used);
        }
        used += w;
    }
    (text.len(), used)
}

/// Lines as text for the terminal, each ended by a newline.
pub fn to_text(lines: &[Line], palette: Palette) -> Text {
    let mut text = Text::new();
    for line in lines {
        let mut end = line.len();
        // No trailing blanks.
        while end > 0 && line[end - 1].text.trim().is_empty() && line[end - 1].style == Style::new()
        {
            end -= 1;
        }
        // Neighbours in one style go out as one run: fewer escapes for the terminal.
        let mut run: Option<(Style, String)> = None;
        for span in &line[..end] {
            match &mut run {
                Some((style, text)) if *style == span.style => text.push_str(&span.text),
                _ => {
                    if let Some((style, run)) = run.replace((span.style, span.text.clone())) {
                        text.push_styled(palette, style, &run);
                    }
                }
            }
        }
        if let Some((style, run)) = run {
            text.push_styled(palette, style, &run);
        }
        text.push("\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> Span {
        Span::new(Style::new(), text)
    }

    fn strings(lines: &[Line]) -> Vec<String> {
        lines
            .iter()
            .map(|line| line.iter().map(|span| span.text.as_str()).collect())
            .collect()
    }

    #[test]
    fn words_wrap_at_the_width_with_the_prefixes() {
        let lines = wrap(
            &[plain("one two three four five six")],
            12,
            &[plain("• ")],
            &[plain("  ")],
        );
        assert_eq!(strings(&lines), ["• one two", "  three four", "  five six"]);
        for line in &lines {
            assert!(width(line) <= 12);
        }
    }

    #[test]
    fn styles_stay_with_their_words_and_newlines_break() {
        let bold = Style::new().bold();
        let lines = wrap(
            &[plain("a "), Span::new(bold, "bold words"), plain("\nnext")],
            80,
            &[],
            &[],
        );
        assert_eq!(strings(&lines), ["a bold words", "next"]);
        assert_eq!(lines[0][2].style, bold);
    }

    #[test]
    fn a_word_longer_than_the_line_is_cut() {
        let lines = wrap(
            &[plain("x https://example.com/a/very/long/path")],
            12,
            &[],
            &[],
        );
        assert!(lines.iter().all(|line| width(line) <= 12), "{lines:?}");
        assert_eq!(
            strings(&lines).concat().replace(' ', ""),
            "xhttps://example.com/a/very/long/path"
        );
    }
}
