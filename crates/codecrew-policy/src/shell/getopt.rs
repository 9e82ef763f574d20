//! Options read as a program that runs another program reads them: getopt's option
//! string (`"+sexnoFuw:E:hV"`: `w:` takes a value, `e::` an optional one attached to
//! it) and getopt_long's long options, with their unambiguous abbreviations.
//!
//! Every wrapper stops at its first operand (the `+` of its option string, or a parser
//! of its own that does the same): what follows is the command it runs, whose options
//! are its own. A word this reading does not know is an error, never a guess: the
//! caller fails closed on it ([`Unknown`]).

/// Whether a long option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Arity {
    /// `--fork`.
    None,
    /// `--timeout 5`, `--timeout=5`.
    Required,
    /// `--mount=/path` only; `--mount path` is the option, then an operand.
    Optional,
}

/// How one program reads its options.
#[derive(Debug, Clone, Copy)]
pub(super) struct Grammar {
    /// getopt's option string, without its leading `+`.
    pub short: &'static str,
    /// getopt_long's long options, without their dashes.
    pub long: &'static [(&'static str, Arity)],
}

/// One option as the program sees it: its short letter or its full long name, and its
/// value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Opt {
    pub name: String,
    pub value: Option<String>,
    /// The index in the arguments of the word that holds the value (or the option).
    pub at: usize,
}

impl Opt {
    /// Whether this is the option `short` (a letter) or `long` (a full name).
    pub fn is(&self, short: char, long: &str) -> bool {
        let mut buffer = [0u8; 4];
        self.name.as_str() == &*short.encode_utf8(&mut buffer) || self.name == long
    }
}

/// The options at the start of `args`, and the index in `args` of the first operand
/// (`args.len()` when there is none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Parsed {
    pub options: Vec<Opt>,
    pub operands: usize,
}

impl Parsed {
    /// The value of the last `short`/`long` option given, as the program keeps it.
    pub fn value(&self, short: char, long: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|opt| opt.is(short, long))
            .and_then(|opt| opt.value.as_deref())
    }

    /// The last `short`/`long` option given.
    pub fn last(&self, short: char, long: &str) -> Option<&Opt> {
        self.options.iter().rev().find(|opt| opt.is(short, long))
    }

    pub fn has(&self, short: char, long: &str) -> bool {
        self.options.iter().any(|opt| opt.is(short, long))
    }
}

/// A word the grammar does not know, or an option missing its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Unknown(pub String);

/// Reads the options at the start of `args` (the words after the program's name).
pub(super) fn parse(args: &[String], grammar: &Grammar) -> Result<Parsed, Unknown> {
    let mut options = Vec::new();
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        if arg == "--" {
            index += 1;
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (long, None),
            };
            let (full, arity) = long_option(name, grammar).ok_or_else(|| Unknown(arg.clone()))?;
            let value = match (arity, attached) {
                (Arity::None, Some(_)) => return Err(Unknown(arg.clone())),
                (Arity::Required, None) => {
                    index += 1;
                    Some(
                        args.get(index)
                            .cloned()
                            .ok_or_else(|| Unknown(arg.clone()))?,
                    )
                }
                (_, attached) => attached,
            };
            options.push(Opt {
                name: full.to_owned(),
                value,
                at: index,
            });
            index += 1;
            continue;
        }
        let Some(bundle) = arg.strip_prefix('-').filter(|bundle| !bundle.is_empty()) else {
            break;
        };
        for (at, letter) in bundle.char_indices() {
            let arity = short_arity(letter, grammar.short).ok_or_else(|| Unknown(arg.clone()))?;
            let rest = &bundle[at + letter.len_utf8()..];
            let value = match arity {
                Arity::None => {
                    options.push(Opt {
                        name: letter.to_string(),
                        value: None,
                        at: index,
                    });
                    continue;
                }
                Arity::Optional => (!rest.is_empty()).then(|| rest.to_owned()),
                Arity::Required if !rest.is_empty() => Some(rest.to_owned()),
                Arity::Required => {
                    index += 1;
                    Some(
                        args.get(index)
                            .cloned()
                            .ok_or_else(|| Unknown(arg.clone()))?,
                    )
                }
            };
            options.push(Opt {
                name: letter.to_string(),
                value,
                at: index,
            });
            break;
        }
        index += 1;
    }
    Ok(Parsed {
        options,
        operands: index,
    })
}

/// A short option's arity in a getopt option string; None when it is not there.
fn short_arity(letter: char, optstring: &str) -> Option<Arity> {
    if matches!(letter, ':' | '+' | '-') {
        return None;
    }
    let at = optstring.find(letter)?;
    let after = &optstring[at + letter.len_utf8()..];
    Some(if after.starts_with("::") {
        Arity::Optional
    } else if after.starts_with(':') {
        Arity::Required
    } else {
        Arity::None
    })
}

/// The long option `name` stands for: itself, or the one option it abbreviates. An
/// ambiguous abbreviation is refused by the program, and by this reading.
fn long_option(name: &str, grammar: &Grammar) -> Option<(&'static str, Arity)> {
    if name.is_empty() {
        return None;
    }
    if let Some(exact) = grammar.long.iter().find(|(long, _)| *long == name) {
        return Some(*exact);
    }
    let mut matches = grammar
        .long
        .iter()
        .filter(|(long, _)| long.starts_with(name));
    let first = matches.next()?;
    // Two names for one option (`--nb`/`--nonblock`) differ; getopt_long refuses the
    // abbreviation when their arities differ too, which none here do.
    match matches.next() {
        None => Some(*first),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLOCK: Grammar = Grammar {
        short: "sexnoFuw:E:hV",
        long: &[
            ("shared", Arity::None),
            ("exclusive", Arity::None),
            ("timeout", Arity::Required),
            ("conflict-exit-code", Arity::Required),
            ("close", Arity::None),
        ],
    };

    const XARGS: Grammar = Grammar {
        short: "0a:E:e::i::I:l::L:n:oprP:s:tx",
        long: &[
            ("eof", Arity::Optional),
            ("replace", Arity::Optional),
            ("max-chars", Arity::Required),
            ("max-args", Arity::Required),
        ],
    };

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    fn operand(line: &str, grammar: &Grammar) -> Option<String> {
        let args = words(line);
        let parsed = parse(&args, grammar).ok()?;
        args.get(parsed.operands).cloned()
    }

    #[test]
    fn values_attached_or_next_and_bundles() {
        assert_eq!(operand("-w 5 LOCK sh", &FLOCK).as_deref(), Some("LOCK"));
        assert_eq!(operand("-w5 LOCK sh", &FLOCK).as_deref(), Some("LOCK"));
        assert_eq!(operand("-xnw 5 LOCK", &FLOCK).as_deref(), Some("LOCK"));
        assert_eq!(operand("--timeout=5 LOCK", &FLOCK).as_deref(), Some("LOCK"));
        assert_eq!(operand("--time 5 LOCK", &FLOCK).as_deref(), Some("LOCK"));
        assert_eq!(operand("-- -x", &FLOCK).as_deref(), Some("-x"));
        assert_eq!(operand("LOCK -c x", &FLOCK).as_deref(), Some("LOCK"));
    }

    #[test]
    fn optional_values_are_attached_only() {
        // `-i` takes `{}` only when attached: `-i sh` is the option, then the command.
        assert_eq!(operand("-i sh -c x", &XARGS).as_deref(), Some("sh"));
        assert_eq!(operand("-iX sh", &XARGS).as_deref(), Some("sh"));
        assert_eq!(operand("-l sh", &XARGS).as_deref(), Some("sh"));
        assert_eq!(operand("-e sh", &XARGS).as_deref(), Some("sh"));
        assert_eq!(operand("--replace sh", &XARGS).as_deref(), Some("sh"));
        assert_eq!(operand("--max-chars 100 sh", &XARGS).as_deref(), Some("sh"));
        assert_eq!(operand("-I {} sh", &XARGS).as_deref(), Some("sh"));
        assert_eq!(operand("-0P2 sh", &XARGS).as_deref(), Some("sh"));
    }

    #[test]
    fn what_the_grammar_does_not_know_is_an_error() {
        assert!(parse(&words("-Z sh"), &FLOCK).is_err());
        assert!(parse(&words("--frobnicate sh"), &FLOCK).is_err());
        // Ambiguous: --c is --close or --conflict-exit-code.
        assert!(parse(&words("--c sh"), &FLOCK).is_err());
        // A value missing at the end.
        assert!(parse(&words("-w"), &FLOCK).is_err());
        assert!(parse(&words("--close=1 x"), &FLOCK).is_err());
    }
}
