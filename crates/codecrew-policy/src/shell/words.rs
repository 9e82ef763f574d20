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
        let text = Self::text(node, src);
        match node.kind() {
            "word" => unquoted_word(text),
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
            "simple_expansion" | "expansion" => {
                let name = text
                    .trim_start_matches('$')
                    .trim_start_matches('{')
                    .trim_end_matches('}');
                if let Some(value) = self.vars.get(name) {
                    let mut word = unquoted_word(&value.clone());
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
