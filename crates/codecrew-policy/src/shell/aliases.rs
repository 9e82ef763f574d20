//! Names that stand for other text, and builtins that keep a command to run later:
//! aliases (`alias`, `BASH_ALIASES[x]=…`), hashed names (`hash -p /bin/rm x`,
//! `BASH_CMDS[x]=…`), completion commands (`complete -C`, `compgen -C`), key bindings
//! (`bind -x`), `mapfile -C` callbacks, history lines (`history -s`, `fc`).
//!
//! An alias is read twice: its text when it is defined, and the command it makes where
//! it is used (`alias x='rm -rf'; x "$PWD"` is `rm -rf "$PWD"`). bash expands aliases
//! only when `expand_aliases` is on and from the next line on; the analysis expands them
//! always, which only makes it stricter.

use super::getopt::{self, Grammar};
use super::*;

impl<'a> Analyser<'a> {
    /// `alias name=value …`.
    pub(super) fn alias_builtin(&mut self, words: &[Word]) {
        for word in words {
            if word.literal && word.value.starts_with('-') {
                continue;
            }
            let Some((name, value)) = word.value.split_once('=') else {
                if !word.literal {
                    self.unreadable(&word.source, "an alias definition");
                }
                continue;
            };
            if word.literal {
                self.define_alias(name, Some(value));
            } else {
                self.unreadable(&word.source, "an alias definition");
                self.define_alias(name, None);
            }
        }
    }

    /// Keeps `name` as standing for `text` (None: only known at run time), after reading
    /// the text as commands.
    pub(super) fn define_alias(&mut self, name: &str, text: Option<&str>) {
        self.risk(format!("it defines the alias `{name}`"));
        if let Some(text) = text {
            self.reread(text, Reread::Commands, &format!("the alias `{name}`"));
        }
        self.aliases
            .insert(name.to_owned(), text.map(str::to_owned));
    }

    /// A command whose name is an alias: the alias's text, then the rest of the command
    /// as written, read as the command bash runs.
    pub(super) fn expand_alias(&mut self, name: &str, text: Option<&str>, rest: &str) {
        self.risk(format!("it runs the alias `{name}`"));
        let Some(text) = text else {
            self.deny(format!(
                "the alias `{name}` is only known at run time; codecrew does not run commands it \
                 cannot name"
            ));
            return;
        };
        // An alias whose text ends in a blank makes bash expand the next word too.
        let mut expanded = text.to_owned();
        let mut rest = rest.to_owned();
        let mut chained = 0;
        while expanded.ends_with([' ', '\t']) && chained < MAX_WRAPPER_DEPTH {
            let trimmed = rest.trim_start();
            let next = trimmed
                .split(|c: char| c.is_whitespace() || ";|&<>()".contains(c))
                .next()
                .unwrap_or_default();
            let Some(Some(more)) = self.aliases.get(next).filter(|_| !next.is_empty()) else {
                break;
            };
            expanded.push_str(more);
            rest = trimmed[next.len()..].to_owned();
            chained += 1;
        }
        // bash does not expand an alias again inside its own text.
        let kept = self.aliases.remove(name);
        self.reread(
            &format!("{expanded}{rest}"),
            Reread::Commands,
            &format!("the alias `{name}`"),
        );
        if let Some(kept) = kept {
            self.aliases.insert(name.to_owned(), kept);
        }
    }

    /// `unalias name…`, `unalias -a`.
    pub(super) fn unalias_builtin(&mut self, argv: &[String]) {
        for name in &argv[1..] {
            if name == "-a" {
                self.aliases.clear();
            } else {
                self.aliases.remove(name);
            }
        }
    }

    /// `hash -p /bin/rm x`: `x` now runs `/bin/rm`.
    pub(super) fn hash_builtin(&mut self, argv: &[String], words: &[Word]) {
        let Ok(parsed) = getopt::parse(&argv[1..], &HASH) else {
            self.unreadable(&argv[1..].join(" "), "the arguments of `hash`");
            return;
        };
        let Some(path) = parsed.value('p', "") else {
            return;
        };
        let literal = words.iter().all(|word| word.literal);
        for name in &argv[parsed.operands + 1..] {
            let text = literal.then(|| shell_quoted(path));
            self.define_alias(name, text.as_deref());
        }
    }

    /// `complete` and `compgen`: `-C` is a command bash runs to complete a word
    /// (`compgen` at once); `-W`, `-G`, `-P`, `-S` and `-X` are expanded.
    pub(super) fn completion_builtin(&mut self, argv: &[String], words: &[Word]) {
        let program = argv[0].as_str();
        let Ok(parsed) = getopt::parse(&argv[1..], &COMPLETE) else {
            let source = words
                .iter()
                .map(|word| word.source.as_str())
                .collect::<Vec<_>>();
            self.unreadable(&source.join(" "), &format!("the arguments of `{program}`"));
            return;
        };
        if !words.iter().all(|word| word.literal) {
            let source = words
                .iter()
                .map(|word| word.source.as_str())
                .collect::<Vec<_>>();
            self.unreadable(&source.join(" "), &format!("the arguments of `{program}`"));
        }
        for opt in &parsed.options {
            let Some(value) = opt.value.as_deref() else {
                continue;
            };
            match opt.name.as_str() {
                "C" => {
                    self.risk(format!("`{program} -C` runs a command to complete words"));
                    self.reread(value, Reread::Commands, "a completion command");
                }
                "W" | "G" | "P" | "S" | "X" => {
                    self.reread(value, Reread::Expansions, "a completion word list");
                }
                _ => {}
            }
        }
    }

    /// `bind -x 'keys: command'`: the command runs when the keys are pressed.
    pub(super) fn bind_builtin(&mut self, argv: &[String], words: &[Word]) {
        let mut index = 1;
        while let Some(arg) = argv.get(index) {
            let binding = match arg.strip_prefix("-x") {
                Some("") => {
                    index += 1;
                    argv.get(index).map(|value| (value.as_str(), index))
                }
                Some(attached) => Some((attached, index)),
                None => None,
            };
            if let Some((binding, at)) = binding {
                self.risk("`bind -x` binds keys to a command");
                if words.get(at).is_some_and(|word| !word.literal) {
                    let source = words.get(at).map_or("", |word| word.source.as_str());
                    self.unreadable(source, "a key binding's command");
                } else {
                    let command = bound_command(binding);
                    self.reread(command, Reread::Commands, "a key binding's command");
                }
            }
            index += 1;
        }
    }

    /// `mapfile -C callback`: the callback runs as a command for each chunk of lines.
    pub(super) fn mapfile_callback(&mut self, argv: &[String], words: &[Word]) {
        let Ok(parsed) = getopt::parse(&argv[1..], &MAPFILE) else {
            self.unreadable(&argv[1..].join(" "), "the arguments of `mapfile`");
            return;
        };
        if let Some(callback) = parsed.value('C', "") {
            self.risk("`mapfile -C` runs a callback as a command");
            if words.iter().all(|word| word.literal) {
                self.reread(callback, Reread::Commands, "a `mapfile` callback");
            } else {
                let source = words
                    .iter()
                    .map(|word| word.source.as_str())
                    .collect::<Vec<_>>();
                self.unreadable(&source.join(" "), "a `mapfile` callback");
            }
        }
    }

    /// `history -s line` puts a line in the history that `fc` or `!!` can run again;
    /// `fc` runs lines the analysis cannot see.
    pub(super) fn history_builtin(&mut self, argv: &[String], words: &[Word]) {
        let program = argv[0].as_str();
        if program == "history" {
            if let Some(at) = argv.iter().position(|arg| arg == "-s") {
                let line = argv[at + 1..].join(" ");
                if words.iter().all(|word| word.literal) {
                    self.reread(&line, Reread::Commands, "a history line");
                } else {
                    let source = words
                        .iter()
                        .map(|word| word.source.as_str())
                        .collect::<Vec<_>>();
                    self.unreadable(&source.join(" "), "a history line");
                }
            }
            return;
        }
        if argv[1..]
            .iter()
            .any(|arg| arg.starts_with('-') && arg.contains('l'))
        {
            return;
        }
        self.risk("`fc` runs commands from the history again");
        let line = self.line.clone();
        self.unreadable(&line, "the history `fc` runs again");
    }
}

/// The command of a `bind -x` binding: what follows the key sequence (`"\C-t"`, quoted
/// with its escapes, or a bare name) and its colon.
fn bound_command(binding: &str) -> &str {
    let rest = match binding.strip_prefix('"') {
        Some(quoted) => {
            let mut escaped = false;
            let end = quoted.char_indices().find_map(|(at, c)| {
                let closes = c == '"' && !escaped;
                escaped = c == '\\' && !escaped;
                closes.then_some(at + 1)
            });
            end.map_or("", |end| &quoted[end..])
        }
        None => binding.split_once(':').map_or("", |(_, rest)| rest),
    };
    let rest = rest.trim_start();
    rest.strip_prefix(':').unwrap_or(rest).trim()
}

/// `text` in single quotes, as bash reads it back.
fn shell_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

const HASH: Grammar = Grammar {
    short: "dlp:rt",
    long: &[],
};

const COMPLETE: Grammar = Grammar {
    short: "abcdefgjksuvpro:A:G:W:F:C:X:P:S:DEI",
    long: &[],
};

const MAPFILE: Grammar = Grammar {
    short: "d:n:O:s:tu:C:c:",
    long: &[],
};

#[cfg(test)]
mod tests {
    use super::bound_command;

    #[test]
    fn a_binding_command_follows_its_key_sequence() {
        assert_eq!(
            bound_command(r#""\C-t": sh -c "rm -rf /""#),
            r#"sh -c "rm -rf /""#
        );
        assert_eq!(bound_command(r#""\"x": ls"#), "ls");
        assert_eq!(bound_command("C-t: ls -l"), "ls -l");
        assert_eq!(bound_command(r#""\C-t" : ls"#), "ls");
    }
}
