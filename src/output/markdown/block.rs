//! One block of markdown (a paragraph, a heading, a list, a quote, a table) as styled
//! lines for the terminal, from pulldown-cmark's events.

use anstyle::{AnsiColor, Color, Effects, Style};
use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use unicode_width::UnicodeWidthStr;

use super::code::CodeBlock;
use super::wrap::{Line, Span, wrap};

const H1: Style = Style::new()
    .bold()
    .underline()
    .fg_color(Some(Color::Ansi(AnsiColor::Magenta)));
const H2: Style = Style::new()
    .bold()
    .fg_color(Some(Color::Ansi(AnsiColor::Magenta)));
const HEADING: Style = Style::new().bold();
const INLINE_CODE: Style = Style::new().fg_color(Some(Color::Ansi(AnsiColor::Cyan)));
const LINK: Style = Style::new()
    .underline()
    .fg_color(Some(Color::Ansi(AnsiColor::Blue)));
/// A link's address, always shown after its text.
const ADDRESS: Style = Style::new().dimmed();
const MARKER: Style = Style::new().fg_color(Some(Color::Ansi(AnsiColor::Yellow)));
const QUOTE_BAR: Style = Style::new().dimmed();
const TABLE_RULE: Style = Style::new().dimmed();

/// What encloses the text being rendered.
enum Container {
    Quote,
    /// A list item: its marker (`• `, `2. `) for its first line, spaces after.
    Item {
        marker: String,
        used: bool,
    },
}

/// A table being collected: rows of cells, each cell's spans.
struct Table {
    alignments: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span>>>,
    header_rows: usize,
}

/// Renders `markdown` (one block) to lines at most `width` wide.
pub fn render(markdown: &str, width: usize) -> Vec<Line> {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let mut renderer = Renderer {
        width,
        lines: Vec::new(),
        spans: Vec::new(),
        styles: vec![Style::new()],
        containers: Vec::new(),
        lists: Vec::new(),
        links: Vec::new(),
        code: None,
        table: None,
    };
    for event in Parser::new_ext(markdown, options) {
        renderer.event(event);
    }
    renderer.flush();
    renderer.lines
}

struct Renderer {
    width: usize,
    lines: Vec<Line>,
    /// The inline text not yet wrapped into lines.
    spans: Vec<Span>,
    /// The style of the text now, innermost last.
    styles: Vec<Style>,
    containers: Vec<Container>,
    /// Each open list: its next number (None: bullets).
    lists: Vec<Option<u64>>,
    /// Each open link's address, and where its text starts in `spans`.
    links: Vec<(String, usize)>,
    /// A code block being collected: its language and text.
    code: Option<(String, String)>,
    table: Option<Table>,
}

impl Renderer {
    fn event(&mut self, event: Event<'_>) {
        if let Some((_, code)) = &mut self.code {
            match event {
                Event::Text(text) => code.push_str(&text),
                Event::End(TagEnd::CodeBlock) => self.end_code(),
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.text(&text),
            Event::Code(code) => self.push(INLINE_CODE, &code),
            Event::InlineMath(math) | Event::DisplayMath(math) => self.push(INLINE_CODE, &math),
            Event::Html(html) | Event::InlineHtml(html) => self.text(&html),
            Event::FootnoteReference(name) => self.text(&format!("[^{name}]")),
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.text("\n"),
            Event::Rule => {
                self.flush();
                let width = self.width.saturating_sub(self.prefix_width()).max(3);
                let rule = vec![Span::new(TABLE_RULE, &"─".repeat(width))];
                let (first, _) = self.prefixes();
                let mut line = first;
                line.extend(rule);
                self.lines.push(line);
            }
            Event::TaskListMarker(done) => {
                self.push(MARKER, if done { "[x] " } else { "[ ] " });
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {}
            Tag::Heading { level, .. } => {
                self.flush();
                let style = match level {
                    HeadingLevel::H1 => H1,
                    HeadingLevel::H2 => H2,
                    _ => HEADING,
                };
                self.styles.push(style);
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                let language = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((language, String::new()));
            }
            Tag::List(start) => {
                self.flush();
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                let depth = self.lists.len().saturating_sub(1);
                let marker = match self.lists.last_mut() {
                    Some(Some(number)) => {
                        let marker = format!("{number}. ");
                        *number += 1;
                        marker
                    }
                    _ => format!("{} ", ["•", "◦", "▪"][depth % 3]),
                };
                self.containers.push(Container::Item {
                    marker,
                    used: false,
                });
            }
            Tag::Table(alignments) => {
                self.flush();
                self.table = Some(Table {
                    alignments,
                    rows: Vec::new(),
                    header_rows: 0,
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.rows.push(Vec::new());
                }
            }
            Tag::TableCell => self.spans.clear(),
            Tag::Emphasis => self.style(|style| style.italic()),
            Tag::Strong => self.style(|style| style.bold()),
            Tag::Strikethrough => self.style(|style| style.strikethrough()),
            Tag::Link { dest_url, .. } => {
                self.links.push((dest_url.to_string(), self.spans.len()));
                self.style(|style| style.underline().fg_color(LINK.get_fg_color()));
            }
            Tag::Image { dest_url, .. } => {
                self.push(MARKER, "image: ");
                self.links.push((dest_url.to_string(), self.spans.len()));
                self.style(|style| style);
            }
            Tag::FootnoteDefinition(name) => {
                self.flush();
                self.text(&format!("[^{name}]: "));
            }
            Tag::HtmlBlock
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_)
            | Tag::Superscript
            | Tag::Subscript => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock | TagEnd::FootnoteDefinition => self.flush(),
            TagEnd::Heading(_) => {
                self.flush();
                self.styles.pop();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.pop();
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
            }
            TagEnd::Item => {
                self.flush();
                self.containers.pop();
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link | TagEnd::Image => {
                self.styles.pop();
                if let Some((address, start)) = self.links.pop() {
                    self.address(&address, start);
                }
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.spans);
                if let Some(row) = self.table.as_mut().and_then(|table| table.rows.last_mut()) {
                    row.push(cell);
                }
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    table.header_rows = table.rows.len();
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.table_lines(&table);
                }
            }
            TagEnd::CodeBlock
            | TagEnd::TableRow
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_)
            | TagEnd::Superscript
            | TagEnd::Subscript => {}
        }
    }

    /// A link's address after its text, unless the text is the address: a link is never
    /// hidden under other words.
    fn address(&mut self, address: &str, start: usize) {
        let shown: String = self.spans[start.min(self.spans.len())..]
            .iter()
            .map(|span| span.text.as_str())
            .collect();
        // `<https://x>` and `[https://x](https://x)` show it already; a `mailto:` shows
        // the address without its scheme.
        let bare = address.strip_prefix("mailto:").unwrap_or(address);
        if address.is_empty() || shown == address || shown == bare {
            return;
        }
        self.push(ADDRESS, &format!(" ({address})"));
    }

    fn current(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn style(&mut self, change: impl Fn(Style) -> Style) {
        self.styles.push(change(self.current()));
    }

    fn text(&mut self, text: &str) {
        self.push(self.current(), text);
    }

    fn push(&mut self, style: Style, text: &str) {
        self.spans.push(Span::new(style, text));
    }

    /// The prefixes of the first line and of the others, from the open containers.
    fn prefixes(&mut self) -> (Line, Line) {
        let (mut first, mut rest) = (Vec::new(), Vec::new());
        for container in &mut self.containers {
            match container {
                Container::Quote => {
                    first.push(Span::new(QUOTE_BAR, "│ "));
                    rest.push(Span::new(QUOTE_BAR, "│ "));
                }
                Container::Item { marker, used } => {
                    let blank = " ".repeat(marker.width());
                    let shown = if *used { blank.clone() } else { marker.clone() };
                    *used = true;
                    first.push(Span::new(MARKER, &shown));
                    rest.push(Span::new(Style::new(), &blank));
                }
            }
        }
        (first, rest)
    }

    fn prefix_width(&self) -> usize {
        self.containers
            .iter()
            .map(|container| match container {
                Container::Quote => 2,
                Container::Item { marker, .. } => marker.width(),
            })
            .sum()
    }

    /// The inline text so far, wrapped into lines.
    fn flush(&mut self) {
        if self.table.is_some() || self.spans.iter().all(|span| span.text.trim().is_empty()) {
            if self.table.is_none() {
                self.spans.clear();
            }
            return;
        }
        let spans = std::mem::take(&mut self.spans);
        let (first, rest) = self.prefixes();
        self.lines.extend(wrap(&spans, self.width, &first, &rest));
    }

    fn end_code(&mut self) {
        let Some((language, code)) = self.code.take() else {
            return;
        };
        let mut block = CodeBlock::new(&language);
        for line in code.strip_suffix('\n').unwrap_or(&code).split('\n') {
            let (mut prefix, _) = self.prefixes();
            prefix.push(Span::new(Style::new(), "  "));
            prefix.extend(block.line(line));
            self.lines.push(prefix);
        }
    }

    fn table_lines(&mut self, table: &Table) {
        let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|column| {
                table
                    .rows
                    .iter()
                    .filter_map(|row| row.get(column))
                    .map(|cell| super::wrap::width(cell))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for (index, row) in table.rows.iter().enumerate() {
            let header = index < table.header_rows;
            let (mut line, _) = self.prefixes();
            for (column, width) in widths.iter().enumerate() {
                if column > 0 {
                    line.push(Span::new(TABLE_RULE, " │ "));
                }
                let cell = row.get(column).cloned().unwrap_or_default();
                let pad = width.saturating_sub(super::wrap::width(&cell));
                let (before, after) = match table.alignments.get(column) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                line.push(Span::new(Style::new(), &" ".repeat(before)));
                for mut span in cell {
                    if header {
                        span.style = span.style.effects(span.style.get_effects() | Effects::BOLD);
                    }
                    line.push(span);
                }
                line.push(Span::new(Style::new(), &" ".repeat(after)));
            }
            self.lines.push(line);
            if header && index + 1 == table.header_rows {
                let (mut rule, _) = self.prefixes();
                let parts: Vec<String> = widths.iter().map(|width| "─".repeat(*width)).collect();
                rule.push(Span::new(TABLE_RULE, &parts.join("─┼─")));
                self.lines.push(rule);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(lines: &[Line]) -> Vec<String> {
        lines
            .iter()
            .map(|line| {
                line.iter()
                    .map(|span| span.text.as_str())
                    .collect::<String>()
                    .trim_end()
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn headings_emphasis_and_inline_code_are_styled_not_marked() {
        let lines = render("## Install **now** with `cargo`", 80);
        assert_eq!(plain(&lines), ["Install now with cargo"]);
        let bold_now = lines[0].iter().find(|span| span.text == "now").unwrap();
        assert!(bold_now.style.get_effects().contains(Effects::BOLD));
        let code = lines[0].iter().find(|span| span.text == "cargo").unwrap();
        assert_eq!(code.style, INLINE_CODE);
    }

    #[test]
    fn lists_nest_and_number_and_wrap_under_their_marker() {
        let lines = render(
            "1. first item with enough words to wrap\n2. second\n   - inner\n",
            24,
        );
        assert_eq!(
            plain(&lines),
            [
                "1. first item with",
                "   enough words to wrap",
                "2. second",
                "   ◦ inner"
            ]
        );
    }

    #[test]
    fn links_show_their_address() {
        let lines = render(
            "See [the docs](https://docs.example/x) and <https://a.example>.",
            80,
        );
        assert_eq!(
            plain(&lines),
            ["See the docs (https://docs.example/x) and https://a.example."]
        );
    }

    #[test]
    fn tables_line_up_their_columns() {
        let lines = render(
            "| Name | Size |\n|:-----|-----:|\n| a | 1 |\n| bbb | 22 |\n",
            80,
        );
        assert_eq!(
            plain(&lines),
            ["Name │ Size", "─────┼─────", "a    │    1", "bbb  │   22"]
        );
    }

    #[test]
    fn quotes_and_code_blocks_keep_their_shape() {
        let lines = render("> quoted\n> text\n", 80);
        assert_eq!(plain(&lines), ["│ quoted text"]);
        let lines = render("```\nlet x = 1;\n  indented\n```\n", 80);
        assert_eq!(plain(&lines), ["  let x = 1;", "    indented"]);
    }
}
