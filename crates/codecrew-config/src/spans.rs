//! Where things are in a TOML file: the byte span of a key or value given its path, and the
//! key path at a byte offset. Built on `toml`'s spanned document (`DeTable`), only used when
//! a problem has to be reported, so re-parsing the text each time costs nothing that matters.

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// One step of a path into a TOML document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// Which part of the entry the path ends at to point at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// The key itself (`[agents."bad id"]`, `trusted_projects = ...`).
    Key,
    /// Its value.
    Value,
}

/// The span of the entry at `path`, or of its closest existing ancestor; `0..0` when the
/// document does not parse (which does not happen for a document that deserialized).
pub(crate) fn span_of(text: &str, path: &[Seg<'_>], part: Part) -> Range<usize> {
    let Ok(document) = DeTable::parse(text) else {
        return 0..0;
    };
    let mut best = 0..0;
    let mut current: Option<&DeValue<'_>> = None;
    let root = document.get_ref();
    for (i, seg) in path.iter().enumerate() {
        let last = i + 1 == path.len();
        match *seg {
            Seg::Key(name) => {
                let table = match current {
                    None => root,
                    Some(value) => match value.as_table() {
                        Some(table) => table,
                        None => return best,
                    },
                };
                let Some((key, value)) = table.iter().find(|(key, _)| key.get_ref() == name) else {
                    return best;
                };
                best = if last && part == Part::Key {
                    key.span()
                } else {
                    value_span(key, value)
                };
                current = Some(value.get_ref());
            }
            Seg::Index(index) => {
                let Some(item) = current
                    .and_then(DeValue::as_array)
                    .and_then(|array| array.get(index))
                else {
                    return best;
                };
                best = item.span();
                current = Some(item.get_ref());
            }
        }
    }
    best
}

/// A table opened by a `[header]` has a span that may not cover the entries below it; point
/// at its key then, which is where a human looks.
fn value_span(
    key: &Spanned<std::borrow::Cow<'_, str>>,
    value: &Spanned<DeValue<'_>>,
) -> Range<usize> {
    let span = value.span();
    if span.is_empty() { key.span() } else { span }
}

/// The key path (`["agents", "claude", "tools"]`) of the entry whose key or value covers
/// `offset` most narrowly (the deeper one on a tie: a `[header]` table and its parent can
/// share a span). Empty when nothing does or the text is not valid TOML.
pub(crate) fn path_at(text: &str, offset: usize) -> Vec<String> {
    let Ok(document) = DeTable::parse(text) else {
        return Vec::new();
    };
    let mut best: Option<(usize, Vec<String>)> = None;
    let mut prefix = Vec::new();
    visit_table(document.get_ref(), offset, &mut prefix, &mut best);
    best.map(|(_, path)| path).unwrap_or_default()
}

fn visit_table(
    table: &DeTable<'_>,
    offset: usize,
    prefix: &mut Vec<String>,
    best: &mut Option<(usize, Vec<String>)>,
) {
    for (key, value) in table.iter() {
        prefix.push(key.get_ref().to_string());
        for span in [key.span(), value.span()] {
            if covers(&span, offset) {
                let width = span.len();
                let better = match best {
                    Some((best_width, best_path)) => {
                        width < *best_width
                            || (width == *best_width && prefix.len() > best_path.len())
                    }
                    None => true,
                };
                if better {
                    *best = Some((width, prefix.clone()));
                }
            }
        }
        visit_value(value.get_ref(), offset, prefix, best);
        prefix.pop();
    }
}

fn visit_value(
    value: &DeValue<'_>,
    offset: usize,
    prefix: &mut Vec<String>,
    best: &mut Option<(usize, Vec<String>)>,
) {
    if let Some(table) = value.as_table() {
        visit_table(table, offset, prefix, best);
    } else if let Some(array) = value.as_array() {
        for item in array.iter() {
            visit_value(item.get_ref(), offset, prefix, best);
        }
    }
}

fn covers(span: &Range<usize>, offset: usize) -> bool {
    span.start <= offset && (offset < span.end || (span.is_empty() && offset == span.start))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "\
default_agent = \"claude\"

[agents.mine]
provider = \"command\"
tools = [\"read_file\", \"nope\"]

[agents.mine.command]
argv = [\"llm\"]
";

    fn text_at(span: Range<usize>) -> &'static str {
        &DOC[span]
    }

    #[test]
    fn finds_keys_values_and_array_items() {
        let tools = [Seg::Key("agents"), Seg::Key("mine"), Seg::Key("tools")];
        assert_eq!(text_at(span_of(DOC, &tools, Part::Key)), "tools");
        let item = [
            Seg::Key("agents"),
            Seg::Key("mine"),
            Seg::Key("tools"),
            Seg::Index(1),
        ];
        assert_eq!(text_at(span_of(DOC, &item, Part::Value)), "\"nope\"");
        let argv = [
            Seg::Key("agents"),
            Seg::Key("mine"),
            Seg::Key("command"),
            Seg::Key("argv"),
        ];
        assert_eq!(text_at(span_of(DOC, &argv, Part::Value)), "[\"llm\"]");
        let agent = [Seg::Key("agents"), Seg::Key("mine")];
        assert_eq!(text_at(span_of(DOC, &agent, Part::Key)), "mine");
    }

    #[test]
    fn a_missing_path_falls_back_to_its_closest_ancestor() {
        let path = [Seg::Key("agents"), Seg::Key("mine"), Seg::Key("model")];
        let span = span_of(DOC, &path, Part::Value);
        assert_eq!(&DOC[span], "[agents.mine]");
        assert_eq!(span_of("not toml [", &path, Part::Value), 0..0);
    }

    #[test]
    fn path_at_names_the_innermost_entry() {
        let at = DOC.find("\"nope\"").unwrap();
        assert_eq!(path_at(DOC, at), ["agents", "mine", "tools"]);
        let at = DOC.find("\"llm\"").unwrap();
        assert_eq!(path_at(DOC, at), ["agents", "mine", "command", "argv"]);
        assert_eq!(path_at(DOC, 0), ["default_agent"]);
        assert!(path_at("x = [", 0).is_empty());
    }
}
