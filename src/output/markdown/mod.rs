//! The model's answer rendered for a person at a terminal, as it streams: headings,
//! emphasis, lists, quotes, tables and links (their address shown, never hidden) by
//! pulldown-cmark, code blocks highlighted by syntect, everything wrapped to the
//! terminal's width.
//!
//! Markdown is read a line at a time: a line of a paragraph or a heading is shown as soon
//! as it ends; a list, a quote and a table wait for their end (a blank line, or a line
//! that is none of theirs), since a later line changes how they look; a fenced code block
//! is highlighted line by line. Every character of the model's goes out inert
//! ([`crate::output::console`]); the renderer's styles are the only escape sequences.
//!
//! Only for a terminal that styles: piped, `--raw`, `--color never` and `NO_COLOR` get
//! the model's markdown as it wrote it.
//!
//! ```
//! use codecrew::output::color::Palette;
//! use codecrew::output::markdown::Markdown;
//!
//! let mut markdown = Markdown::new(Palette::PLAIN, 80);
//! let mut shown = markdown.push("# Title\n\nSome **bold** text and [a link](https://x.example).\n");
//! shown.append(&markdown.finish());
//! assert_eq!(shown.as_str(), "Title\n\nSome bold text and a link (https://x.example).\n");
//! ```

mod block;
mod code;
mod wrap;

use crate::output::color::Palette;
use crate::output::console::Text;

use code::CodeBlock;
use wrap::{Line, Span, to_text};

/// The width used when the terminal's cannot be read.
pub const DEFAULT_WIDTH: usize = 100;

/// The terminal's width, for the renderer.
pub fn terminal_width() -> usize {
    terminal_size::terminal_size()
        .map(|(width, _)| usize::from(width.0))
        .filter(|width| *width >= 20)
        .unwrap_or(DEFAULT_WIDTH)
}

/// Markdown streaming in, rendered lines going out.
pub struct Markdown {
    palette: Palette,
    width: usize,
    /// The text after the last newline.
    partial: String,
    /// How much of `partial` is known to hold no newline.
    scanned: usize,
    /// The lines of a list, a quote or a table, until its end.
    block: Vec<String>,
    /// The fenced code block the lines are in.
    fence: Option<Fence>,
    /// A blank line since the last output (several show as one).
    blank: bool,
    shown_any: bool,
}

struct Fence {
    marker: char,
    length: usize,
    /// The fence's own indentation, taken off each line of code.
    indent: usize,
    code: CodeBlock,
}

impl Markdown {
    /// A renderer styling with `palette` (plain with [`Palette::PLAIN`]), wrapping at
    /// `width` columns.
    pub fn new(palette: Palette, width: usize) -> Markdown {
        Markdown {
            palette,
            width: width.max(20),
            partial: String::new(),
            scanned: 0,
            block: Vec::new(),
            fence: None,
            blank: false,
            shown_any: false,
        }
    }

    /// The next piece of the answer: what can be shown of it now.
    pub fn push(&mut self, piece: &str) -> Text {
        self.partial.push_str(piece);
        let mut lines = Vec::new();
        // Only what came since the last look can hold a newline; the lines found are
        // taken off in one drain (a long answer in small pieces stays linear).
        let Some(last) = self.partial[self.scanned..].rfind('\n') else {
            self.scanned = self.partial.len();
            return Text::new();
        };
        let end = self.scanned + last + 1;
        let complete: String = self.partial.drain(..end).collect();
        self.scanned = 0;
        for line in complete.split_terminator('\n') {
            self.line(line.trim_end_matches('\r'), &mut lines);
        }
        to_text(&lines, self.palette)
    }

    /// The end of a message (or text about to be interrupted by a notice): everything
    /// still held, shown.
    pub fn finish(&mut self) -> Text {
        let mut lines = Vec::new();
        let partial = std::mem::take(&mut self.partial);
        self.scanned = 0;
        if !partial.is_empty() {
            self.line(partial.trim_end_matches('\r'), &mut lines);
        }
        self.flush(&mut lines);
        self.fence = None;
        to_text(&lines, self.palette)
    }

    fn line(&mut self, line: &str, out: &mut Vec<Line>) {
        if let Some(fence) = &mut self.fence {
            if closes(line, fence.marker, fence.length) {
                self.fence = None;
            } else {
                let code = strip_indent(line, fence.indent);
                let mut shown = vec![Span::new(anstyle::Style::new(), "  ")];
                shown.extend(fence.code.line(code));
                self.emit(vec![shown], out);
            }
            return;
        }
        if line.trim().is_empty() {
            self.flush(out);
            self.blank = true;
            return;
        }
        if let Some(fence) = opens(line) {
            self.flush(out);
            self.fence = Some(fence);
            return;
        }
        if !self.block.is_empty() {
            if continues(&self.block, line) {
                self.block.push(line.to_owned());
                return;
            }
            self.flush(out);
        }
        if starts_block(line) {
            self.block.push(line.to_owned());
        } else {
            let lines = self.render(line);
            self.emit(lines, out);
        }
    }

    /// `markdown` rendered; shown as it is where it renders to nothing (a link reference
    /// definition, `[1]: https://…`, alone): no text of the model's is lost.
    fn render(&self, markdown: &str) -> Vec<Line> {
        let lines = block::render(markdown, self.width);
        if !lines.is_empty() || markdown.trim().is_empty() {
            return lines;
        }
        markdown
            .lines()
            .map(|line| vec![Span::new(anstyle::Style::new().dimmed(), line)])
            .collect()
    }

    /// The list, quote or table collected so far, rendered.
    fn flush(&mut self, out: &mut Vec<Line>) {
        if self.block.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.block).join("\n");
        let lines = self.render(&text);
        self.emit(lines, out);
    }

    fn emit(&mut self, lines: Vec<Line>, out: &mut Vec<Line>) {
        if lines.is_empty() {
            return;
        }
        if std::mem::take(&mut self.blank) && self.shown_any {
            out.push(Vec::new());
        }
        self.shown_any = true;
        out.extend(lines);
    }
}

/// The indentation of `line` in columns (at most what matters: 4).
fn indent_of(line: &str) -> usize {
    line.chars().take_while(|c| *c == ' ').count()
}

fn strip_indent(line: &str, indent: usize) -> &str {
    let spaces = indent_of(line).min(indent);
    &line[spaces..]
}

/// A line that opens a fenced code block: up to 3 spaces, then 3 or more backticks or
/// tildes, then the info string (no backtick in it after backticks).
fn opens(line: &str) -> Option<Fence> {
    let indent = indent_of(line);
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let marker = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let length = rest.chars().take_while(|c| *c == marker).count();
    let info = &rest[length..];
    if length < 3 || (marker == '`' && info.contains('`')) {
        return None;
    }
    Some(Fence {
        marker,
        length,
        indent,
        code: CodeBlock::new(info.trim()),
    })
}

fn closes(line: &str, marker: char, length: usize) -> bool {
    let indent = indent_of(line);
    let rest = line[indent..].trim_end();
    indent <= 3 && rest.chars().all(|c| c == marker) && rest.chars().count() >= length
}

/// A line that starts a list, a quote or a table: what follows may change how it looks.
fn starts_block(line: &str) -> bool {
    is_item(line) || is_quote(line) || line.contains('|')
}

/// Whether `line` is still part of the block whose lines are `block`.
fn continues(block: &[String], line: &str) -> bool {
    let first = block.first().map(String::as_str).unwrap_or_default();
    if is_item(first) {
        is_item(line) || indent_of(line) > 0
    } else if is_quote(first) {
        is_quote(line)
    } else {
        // A table: its delimiter row second, then rows with cells.
        (block.len() == 1 && is_delimiter_row(line)) || (block.len() > 1 && line.contains('|'))
    }
}

fn is_item(line: &str) -> bool {
    let rest = line.trim_start();
    if indent_of(line) > 3 && !rest.is_empty() {
        return false;
    }
    let bullet = ["- ", "* ", "+ "].iter().any(|b| rest.starts_with(b));
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let numbered = (1..=9).contains(&digits)
        && (rest[digits..].starts_with(". ") || rest[digits..].starts_with(") "));
    bullet || numbered
}

fn is_quote(line: &str) -> bool {
    indent_of(line) <= 3 && line.trim_start().starts_with('>')
}

fn is_delimiter_row(line: &str) -> bool {
    let cells = line.trim().trim_matches('|');
    !cells.is_empty()
        && cells.contains('-')
        && cells
            .chars()
            .all(|c| matches!(c, '-' | ':' | '|' | ' ' | '\t'))
}

#[cfg(test)]
mod tests;
