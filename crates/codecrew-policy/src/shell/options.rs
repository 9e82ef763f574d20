//! Options read the way the program reads them: short options bundled in one word
//! (`-nO<pager>`), values attached to a short option (`-ofile`) or given as the next
//! word, `--name=value`, and the unambiguous abbreviations of long options that GNU's
//! `getopt_long` and git's parse-options accept (`--compress-prog` for
//! `--compress-program`, `--out` for `--output`).
//!
//! The check is written so that what it does not know makes it ask more, never less:
//! a short option is taken to take a value only when the table says so (otherwise the
//! rest of the bundle is read as more options), a long option matches a dangerous one
//! when it is *any* prefix of it (an ambiguous abbreviation asks though the program
//! would refuse it), and every word before `--` that starts with `-` is read as options,
//! even one that is really the value of the option before it.

/// What an option does that keeps a command off the safe list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// It runs another program (`sort --compress-program`, `git grep -O`).
    Runs,
    /// It writes a file (`sort -o`, `tree -o`, `git diff --output`).
    Writes,
    /// It reads the names of the files to process from a file (`wc --files0-from`,
    /// `sha256sum -c`): names no argument shows, so no path check sees them.
    ReadsNames,
    /// It makes a walk follow symbolic links (`find -L`, `du -L`, `tree -l`).
    FollowsLinks,
    /// It sets a shell variable that later commands of the line use (`printf -v PATH`).
    Assigns,
}

impl Effect {
    pub fn describe(self) -> &'static str {
        match self {
            Effect::Runs => "runs another program",
            Effect::Writes => "writes a file",
            Effect::ReadsNames => {
                "reads the names of the files to process from a file, which no path check sees"
            }
            Effect::FollowsLinks => "makes the walk follow symbolic links",
            Effect::Assigns => "sets a shell variable that later commands use",
        }
    }
}

/// How one program reads its options, and which of them do what.
#[derive(Debug, Clone, Copy)]
pub struct Syntax<'a> {
    /// Short options that take a value (attached, or the next word).
    pub short_values: &'a str,
    /// Short options with an effect.
    pub short: &'a [(char, Effect)],
    /// Long options (without `--`) with an effect.
    pub long: &'a [(&'a str, Effect)],
    /// Whether the parser accepts unambiguous abbreviations of long options.
    pub abbreviations: bool,
    /// Whether a long option may also be written with one dash (`find -L`, `xxd -cols`):
    /// then a one-dash word is checked as a long option too.
    pub single_dash_long: bool,
}

impl Syntax<'static> {
    /// A parser with nothing dangerous and no values: the option check finds nothing.
    pub const PLAIN: Syntax<'static> = Syntax {
        short_values: "",
        short: &[],
        long: &[],
        abbreviations: true,
        single_dash_long: false,
    };
}

/// One option found on a command line, and what it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The option as written (`-nO`, `--compress-prog=sh`).
    pub written: String,
    pub effect: Effect,
}

/// Every option of `args` (the words after the program name) with an effect.
pub fn effects(args: &[String], syntax: &Syntax<'_>) -> Vec<Found> {
    let mut found = Vec::new();
    for arg in args {
        if arg == "--" {
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            if let Some(effect) = long_effect(long, syntax) {
                found.push(Found {
                    written: arg.clone(),
                    effect,
                });
            }
            continue;
        }
        let Some(bundle) = arg.strip_prefix('-') else {
            continue;
        };
        if bundle.is_empty() {
            continue;
        }
        if syntax.single_dash_long
            && let Some(effect) = long_effect(bundle, syntax)
        {
            found.push(Found {
                written: arg.clone(),
                effect,
            });
            continue;
        }
        for letter in bundle.chars() {
            if let Some((_, effect)) = syntax.short.iter().find(|(short, _)| *short == letter) {
                found.push(Found {
                    written: arg.clone(),
                    effect: *effect,
                });
                break;
            }
            if syntax.short_values.contains(letter) {
                // The rest of the word is this option's value.
                break;
            }
        }
    }
    found
}

/// The values attached to short options in a bundle (`-f.env`, `-nOless`): the rest of
/// the word after a letter that takes a value. Values given as the next word are words
/// of their own, checked like any argument.
pub fn attached_values(args: &[String], syntax: &Syntax<'_>) -> Vec<String> {
    let mut values = Vec::new();
    for arg in args {
        if arg == "--" {
            break;
        }
        if arg.starts_with("--") {
            continue;
        }
        let Some(bundle) = arg.strip_prefix('-') else {
            continue;
        };
        if syntax.single_dash_long {
            continue;
        }
        if let Some((at, letter)) = bundle
            .char_indices()
            .find(|(_, letter)| syntax.short_values.contains(*letter))
        {
            let value = &bundle[at + letter.len_utf8()..];
            if !value.is_empty() {
                values.push(value.to_owned());
            }
        }
    }
    values
}

/// The operands of `args`: the words that are not options nor the values of options.
/// A short option's value is the rest of its bundle or, when the value letter ends the
/// bundle, the next word; a long option in `long_values` (or an abbreviation of one)
/// without `=` takes the next word. Options may follow operands (GNU permutes them);
/// `--` ends the options.
pub fn operands<'a>(
    args: &'a [String],
    syntax: &Syntax<'_>,
    long_values: &[&str],
) -> Vec<&'a String> {
    let mut operands = Vec::new();
    let mut words = args.iter();
    while let Some(arg) = words.next() {
        if arg == "--" {
            operands.extend(words);
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let takes_next = !long.contains('=')
                && long_values.iter().any(|name| {
                    if syntax.abbreviations {
                        name.starts_with(long)
                    } else {
                        *name == long
                    }
                });
            if takes_next {
                words.next();
            }
            continue;
        }
        match arg.strip_prefix('-') {
            Some(bundle) if !bundle.is_empty() => {
                let value_at = bundle
                    .char_indices()
                    .find(|(_, letter)| syntax.short_values.contains(*letter));
                if let Some((at, letter)) = value_at
                    && at + letter.len_utf8() == bundle.len()
                {
                    words.next();
                }
            }
            _ => operands.push(arg),
        }
    }
    operands
}

/// The effect of one long option written without its dashes (`name` or `name=value`).
fn long_effect(written: &str, syntax: &Syntax<'_>) -> Option<Effect> {
    let name = written.split_once('=').map_or(written, |(name, _)| name);
    if name.is_empty() {
        return None;
    }
    syntax.long.iter().find_map(|(long, effect)| {
        let matches = if syntax.abbreviations {
            long.starts_with(name)
        } else {
            *long == name
        };
        matches.then_some(*effect)
    })
}

/// Whether `args` hold one of the short options `letters` or of the long options `longs`
/// (or an abbreviation of one), read with the value rules of `syntax`.
pub fn has(args: &[String], syntax: &Syntax<'_>, letters: &str, longs: &[&str]) -> bool {
    let short: Vec<(char, Effect)> = letters.chars().map(|c| (c, Effect::Runs)).collect();
    let long: Vec<(&str, Effect)> = longs.iter().map(|l| (*l, Effect::Runs)).collect();
    let probe = Syntax {
        short: &short,
        long: &long,
        ..*syntax
    };
    !effects(args, &probe).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SORT: Syntax<'static> = Syntax {
        short_values: "kStTo",
        short: &[('o', Effect::Writes), ('T', Effect::Writes)],
        long: &[
            ("output", Effect::Writes),
            ("compress-program", Effect::Runs),
            ("files0-from", Effect::ReadsNames),
        ],
        abbreviations: true,
        single_dash_long: false,
    };

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    fn effects_of(line: &str, syntax: &Syntax<'_>) -> Vec<Effect> {
        effects(&words(line), syntax)
            .into_iter()
            .map(|found| found.effect)
            .collect()
    }

    #[test]
    fn bundles_attached_values_and_abbreviations() {
        assert_eq!(effects_of("-o out file", &SORT), [Effect::Writes]);
        assert_eq!(effects_of("-rno out file", &SORT), [Effect::Writes]);
        assert_eq!(effects_of("-ofile", &SORT), [Effect::Writes]);
        assert_eq!(effects_of("--output=x", &SORT), [Effect::Writes]);
        assert_eq!(effects_of("--out=x", &SORT), [Effect::Writes]);
        assert_eq!(effects_of("--compress-prog=sh", &SORT), [Effect::Runs]);
        assert_eq!(effects_of("--files0=list", &SORT), [Effect::ReadsNames]);
        // After options, as GNU permutes them.
        assert_eq!(
            effects_of("file -n --files0-from list", &SORT),
            [Effect::ReadsNames]
        );
    }

    #[test]
    fn values_hide_nothing_and_hold_no_options() {
        // `-k` takes a value: `-ko` is the key "o", not `-o`.
        assert_eq!(effects_of("-ko file", &SORT), []);
        assert_eq!(effects_of("-t, -k2 file", &SORT), []);
        // A letter the table does not know to take a value is read as an option.
        assert_eq!(effects_of("-xo", &SORT), [Effect::Writes]);
        // After `--` nothing is an option.
        assert_eq!(effects_of("-- -o", &SORT), []);
        assert_eq!(effects_of("--numeric-sort - file", &SORT), []);
    }

    #[test]
    fn attached_values_are_found() {
        let grep = Syntax {
            ..Syntax {
                short_values: "ef",
                ..Syntax::PLAIN
            }
        };
        let values = |line: &str| attached_values(&words(line), &grep);
        assert_eq!(values("-f.env x"), [".env"]);
        assert_eq!(values("-nif../secret x"), ["../secret"]);
        assert_eq!(values("-f .env x"), Vec::<String>::new());
        assert_eq!(values("--file=x -- -fy"), Vec::<String>::new());
    }

    #[test]
    fn exact_long_options_where_the_parser_takes_no_abbreviations() {
        let rg = Syntax {
            long: &[("pre", Effect::Runs)],
            abbreviations: false,
            ..Syntax::PLAIN
        };
        assert_eq!(effects_of("--pre=sh x", &rg), [Effect::Runs]);
        assert_eq!(effects_of("--pr=sh x", &rg), []);
        let find = Syntax {
            long: &[("follow", Effect::FollowsLinks)],
            short: &[('L', Effect::FollowsLinks)],
            abbreviations: false,
            single_dash_long: true,
            ..Syntax::PLAIN
        };
        assert_eq!(effects_of("-L .", &find), [Effect::FollowsLinks]);
        assert_eq!(effects_of(". -follow", &find), [Effect::FollowsLinks]);
        assert_eq!(effects_of(". -name x", &find), []);
    }
}
