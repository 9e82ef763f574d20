//! Words and their expansions: quoting, escapes, `$'…'`, variables and globs, as bash
//! would read them, or a risk where the value cannot be known.

use super::*;

impl<'a> Analyser<'a> {
    /// A word after quote removal and the expansions that can be known statically.
    pub(super) fn word(&mut self, node: Node<'_>, src: &[u8], depth: usize) -> Word {
        if depth > MAX_DEPTH {
            self.deny("the command is nested too deeply to analyse");
            return Word::default();
        }
        let mut word = self.word_value(node, src, depth);
        word.source = Self::text(node, src).to_owned();
        word
    }

    fn word_value(&mut self, node: Node<'_>, src: &[u8], depth: usize) -> Word {
        let text = Self::text(node, src);
        match node.kind() {
            "word" => {
                let word = unquoted_word(text);
                // A substitution the grammar left inside a plain word (`${x:-`cmd`}`).
                if !word.literal && holds_substitution(text) {
                    self.reread(text, Reread::Expansions, "text the parser does not model");
                }
                word
            }
            "number" => {
                let mut word = Word::literal(text);
                word.unquoted = text.to_owned();
                word
            }
            "raw_string" => {
                let inner = text
                    .strip_prefix('\'')
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or(text);
                // In `"${x:-'…'}"` and arithmetic the quotes do not stop bash from
                // expanding what they hold.
                if self.evaluating > 0 && holds_substitution(inner) {
                    self.reread(inner, Reread::Expansions, "quoted text bash expands");
                }
                Word::literal(inner)
            }
            "ansi_c_string" => {
                let inner = text
                    .strip_prefix("$'")
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or(text);
                Word::literal(&ansi_c(inner))
            }
            "string" => {
                let mut word = Word::literal("");
                let start = node.start_byte() + 1;
                let end = node.end_byte().saturating_sub(1).max(start);
                let mut pos = start;
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for child in children {
                    if child.start_byte() > pos {
                        let gap = src.get(pos..child.start_byte()).unwrap_or_default();
                        word.append(Word::literal(&double_quoted(&String::from_utf8_lossy(gap))));
                    }
                    let part = if child.kind() == "string_content" {
                        Word::literal(&double_quoted(Self::text(child, src)))
                    } else {
                        let mut part = self.word(child, src, depth + 1);
                        // Quoted: no globbing, no splitting.
                        part.glob = false;
                        part.unquoted.clear();
                        part
                    };
                    word.append(part);
                    pos = child.end_byte();
                }
                if end > pos {
                    let gap = src.get(pos..end).unwrap_or_default();
                    word.append(Word::literal(&double_quoted(&String::from_utf8_lossy(gap))));
                }
                word
            }
            "concatenation" => {
                let mut word = Word::literal("");
                let mut first = true;
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
                for child in children {
                    let part = if child.is_named() {
                        self.word(child, src, depth + 1)
                    } else {
                        unquoted_word(Self::text(child, src))
                    };
                    if first {
                        word.tilde = part.tilde;
                        first = false;
                    }
                    word.append(part);
                }
                word
            }
            "expansion" => {
                let word = self.variable(text);
                // Every operator's word, pattern, offset and subscript is expanded by bash.
                self.evaluated("a parameter expansion", |this| {
                    this.expansion_parts(node, src, depth);
                });
                word
            }
            "simple_expansion" => self.variable(text),
            "command_substitution" | "process_substitution" | "arithmetic_expansion" => {
                self.node(node, src, depth + 1);
                Word {
                    value: "*".to_owned(),
                    literal: false,
                    ..Word::default()
                }
            }
            _ => {
                // translated_string, brace_expression and anything new: walk it for
                // substitutions, and treat its value as unknown.
                self.children(node, src, depth);
                Word {
                    value: "*".to_owned(),
                    literal: false,
                    glob: node.kind() == "brace_expression",
                    unquoted: if node.kind() == "brace_expression" {
                        "{,}".to_owned()
                    } else {
                        String::new()
                    },
                    ..Word::default()
                }
            }
        }
    }
}

impl Analyser<'_> {
    /// The value of `$name` or `${name}` when assigned earlier in the line; otherwise
    /// unknown (`${x:-y}` and the other operators are unknown too).
    fn variable(&self, text: &str) -> Word {
        let name = text
            .trim_start_matches('$')
            .trim_start_matches('{')
            .trim_end_matches('}');
        if let Some(value) = self.vars.get(name) {
            let mut word = unquoted_word(value);
            word.tilde = false;
            word
        } else {
            Word {
                value: "*".to_owned(),
                literal: false,
                home: name == "HOME",
                ..Word::default()
            }
        }
    }

    /// The parts of `${…}`: its word (`:-`, `:=`, …), pattern (`#`, `%`, `/`, `^`, `,`),
    /// offset and length, subscript. Patterns are opaque to the grammar (a `regex` node),
    /// so they are read again for their substitutions.
    fn expansion_parts(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        let mut cursor = node.walk();
        let parts: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        // The grammar may cut one pattern into several `regex` nodes (at a `)`): it is
        // read again whole, from its first to its last.
        let patterns: Vec<&Node<'_>> = parts.iter().filter(|part| part.kind() == "regex").collect();
        if let (Some(first), Some(last)) = (patterns.first(), patterns.last()) {
            let pattern = src
                .get(first.start_byte()..last.end_byte())
                .unwrap_or_default();
            let pattern = String::from_utf8_lossy(pattern);
            if holds_substitution(&pattern) {
                self.reread(&pattern, Reread::Expansions, "the pattern of the expansion");
            }
        }
        for part in parts {
            match part.kind() {
                "variable_name" | "special_variable_name" | "regex" => {}
                _ => {
                    self.node(part, src, depth + 1);
                    // In `"${x:-'…'}"` bash takes `'` literally but the grammar takes it
                    // for quotes and may split a substitution across them: the part is
                    // read again whole.
                    let text = Self::text(part, src);
                    if holds_kind(part, "raw_string") && holds_substitution(text) {
                        self.reread(text, Reread::Expansions, "quoted text bash expands");
                    }
                }
            }
        }
    }
}

/// Whether `node` is or holds a node of `kind`.
fn holds_kind(node: Node<'_>, kind: &str) -> bool {
    if node.kind() == kind {
        return true;
    }
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
    children.into_iter().any(|child| holds_kind(child, kind))
}

/// Whether text holds what makes bash run a command when it expands it: `$(`, `` ` ``,
/// or a `${` whose parts may (an escaped `\$` or `` \` `` is not counted).
pub(super) fn holds_substitution(text: &str) -> bool {
    next_substitution(text, 0).is_some()
}

/// The byte index of the next `$(`, `${` or `` ` `` at or after `from` that a backslash
/// does not escape.
pub(super) fn next_substitution(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut index = from;
    while let Some(&byte) = bytes.get(index) {
        match byte {
            b'\\' => index += 2,
            b'`' => return Some(index),
            b'$' if matches!(bytes.get(index + 1), Some(b'(' | b'{')) => return Some(index),
            _ => index += 1,
        }
    }
    None
}

/// The first line of a text, shortened, for messages.
pub(super) fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() > 60 {
        format!("{}…", line.chars().take(60).collect::<String>())
    } else {
        line.to_owned()
    }
}

/// A `word` node's value: backslash escapes removed, unquoted specials noted.
pub(super) fn unquoted_word(text: &str) -> Word {
    let mut word = Word::literal("");
    let mut chars = text.chars().peekable();
    let mut first = true;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next()
                    && next != '\n'
                {
                    word.value.push(next);
                }
            }
            '*' | '?' | '[' => {
                word.glob = true;
                word.value.push(c);
                word.unquoted.push(c);
            }
            '~' if first => {
                word.tilde = true;
                word.value.push(c);
                word.unquoted.push(c);
            }
            '$' | '`' => {
                word.literal = false;
                word.value.push('*');
            }
            _ => {
                word.value.push(c);
                word.unquoted.push(c);
            }
        }
        first = false;
    }
    word
}

/// The content of a double-quoted string with its backslash escapes applied.
pub(super) fn double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('"' | '\\' | '$' | '`') => {
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The value of `$'...'` content (bash's ANSI-C quoting).
pub(super) fn ansi_c(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escape) = chars.next() else {
            out.push('\\');
            break;
        };
        let radix_digits =
            |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, radix: u32, max: usize| {
                let mut value = 0u32;
                let mut count = 0;
                while count < max {
                    match chars.peek().and_then(|c| c.to_digit(radix)) {
                        Some(digit) => {
                            value = value * radix + digit;
                            chars.next();
                            count += 1;
                        }
                        None => break,
                    }
                }
                (value, count)
            };
        match escape {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'e' | 'E' => out.push('\u{1b}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            'x' => {
                let (value, count) = radix_digits(&mut chars, 16, 2);
                if count == 0 {
                    out.push_str("\\x");
                } else if let Some(c) = char::from_u32(value) {
                    out.push(c);
                }
            }
            'u' | 'U' => {
                let (value, count) =
                    radix_digits(&mut chars, 16, if escape == 'u' { 4 } else { 8 });
                if count == 0 {
                    out.push('\\');
                    out.push(escape);
                } else if let Some(c) = char::from_u32(value) {
                    out.push(c);
                }
            }
            '0'..='7' => {
                let mut value = escape.to_digit(8).unwrap_or(0);
                let (more, count) = radix_digits(&mut chars, 8, 2);
                value = value * 8u32.pow(u32::try_from(count).unwrap_or(0)) + more;
                if let Some(c) = char::from_u32(value) {
                    out.push(c);
                }
            }
            'c' => {
                if let Some(next) = chars.next() {
                    out.push(char::from_u32(u32::from(next) & 0x1f).unwrap_or('?'));
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// Expands a glob the way bash would (dot files only for patterns starting with a dot),
/// relative to `cwd`; None past MAX_GLOB_MATCHES.
pub(super) fn expand_glob(cwd: &Path, pattern: &str) -> Option<Vec<PathBuf>> {
    let absolute = pattern.starts_with('/');
    let mut current = vec![if absolute {
        PathBuf::from("/")
    } else {
        cwd.to_path_buf()
    }];
    for part in pattern.split('/').filter(|part| !part.is_empty()) {
        let mut next = Vec::new();
        if !part.contains(['*', '?', '[']) {
            next = current.iter().map(|dir| dir.join(part)).collect();
        } else {
            // A pattern bash cannot match either stays a literal word, which the caller
            // checks as a path.
            let Ok(glob) = globset::GlobBuilder::new(part)
                .literal_separator(true)
                .build()
            else {
                return Some(Vec::new());
            };
            let matcher = glob.compile_matcher();
            for dir in &current {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    let name = entry.file_name();
                    let name = name.to_string_lossy();
                    if name.starts_with('.') && !part.starts_with('.') {
                        continue;
                    }
                    if matcher.is_match(name.as_ref()) {
                        next.push(dir.join(name.as_ref()));
                        if next.len() > MAX_GLOB_MATCHES {
                            return None;
                        }
                    }
                }
            }
        }
        current = next;
    }
    Some(current)
}
