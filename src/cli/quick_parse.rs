//! `query` and `execute` parsed against a command tree of that command alone.
//!
//! clap builds the whole tree (every command's every argument, the global options copied
//! into each) before it parses: 0.3 ms of a plain answer, for a tree of which a run
//! reads one branch (docs/PERFORMANCE.md, issue 52). A command line that does not parse
//! against the one branch (help, `--version`, a mistake) is parsed again against the
//! whole tree, which gives clap's full help and errors: this path only ever decides
//! what a command line that parses means, and it means the same there.

use std::ffi::OsString;

use clap::{Args, Command, FromArgMatches};

use super::{CommandLine, GlobalArgs, RunArgs};

/// The global options that take a value, so that the word after one is no command.
const TAKING_A_VALUE: &[&str] = &["--workdir", "--color"];

/// The command a command line names: its first word that is not an option or a global
/// option's value. Read before clap parses it, so only as a guess.
pub fn command_word(args: &[OsString]) -> Option<&str> {
    let mut words = args.iter().skip(1).filter_map(|arg| arg.to_str());
    while let Some(word) = words.next() {
        if TAKING_A_VALUE.contains(&word) {
            words.next();
        } else if !word.starts_with('-') {
            return Some(word);
        }
    }
    None
}

/// The command line, when it is a `query` or an `execute` that parses; None otherwise,
/// for the whole tree to parse.
pub fn parse_run(args: &[OsString]) -> Option<CommandLine> {
    let name = match command_word(args)? {
        "query" => "query",
        "execute" => "execute",
        _ => return None,
    };
    let branch = Command::new("codecrew")
        .subcommand(RunArgs::augment_args(Command::new(name)))
        .subcommand_required(true);
    let mut command = GlobalArgs::augment_args(branch);
    let mut matches = command.try_get_matches_from_mut(args).ok()?;
    let command_line = CommandLine::from_arg_matches_mut(&mut matches).ok()?;
    // Freed by the exit, as the whole tree is (main.rs).
    std::mem::forget(command);
    Some(command_line)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn argv(words: &[&str]) -> Vec<OsString> {
        std::iter::once("codecrew")
            .chain(words.iter().copied())
            .map(OsString::from)
            .collect()
    }

    /// What the one branch makes of a command line is what the whole tree makes of it.
    #[test]
    fn a_run_parses_as_the_whole_tree_parses_it() {
        let lines: &[&[&str]] = &[
            &["query", "@claude:haiku hello"],
            &["execute", "@claude fix it", "@gemini review it"],
            &["--no-log", "query", "hello"],
            &["query", "--no-log", "-vv", "--yes", "hello"],
            &["--workdir", "/tmp/ws", "--color", "never", "query", "hi"],
            &[
                "--workdir=/tmp",
                "execute",
                "--output",
                "json",
                "--timeout",
                "90s",
                "x",
            ],
            &[
                "query",
                "--thread",
                "review",
                "--output",
                "stream-json",
                "-",
            ],
            &["query", "--schema", "file, risk int", "--raw", "x"],
            &["execute", "--worktrees", "--check", "cargo test", "@a @b x"],
            &["--audit", "--allow-home", "query", "--", "--not-a-flag"],
            &["query"],
        ];
        for words in lines {
            let args = argv(words);
            let whole = CommandLine::try_parse_from(&args)
                .unwrap_or_else(|error| panic!("{words:?}: {error}"));
            let branch = parse_run(&args).unwrap_or_else(|| panic!("{words:?} parses"));
            assert_eq!(format!("{branch:?}"), format!("{whole:?}"), "{words:?}");
        }
    }

    /// Help, the version and every mistake go to the whole tree, for its full text.
    #[test]
    fn what_does_not_parse_goes_to_the_whole_tree() {
        let lines: &[&[&str]] = &[
            &["query", "--help"],
            &["query", "-h"],
            &["--version"],
            &["query", "--output", "yaml", "x"],
            &["query", "--no-such-flag", "x"],
            &["--workdir"],
            &["chat"],
            &["prompt", "hello"],
            &["help", "query"],
            &[],
        ];
        for words in lines {
            assert!(parse_run(&argv(words)).is_none(), "{words:?}");
        }
    }

    /// The options skipped with their value are the global options that take one.
    #[test]
    fn the_options_taking_a_value_are_the_global_ones_that_do() {
        let global = GlobalArgs::augment_args(Command::new("codecrew"));
        let mut taking: Vec<String> = global
            .get_arguments()
            .filter(|arg| arg.get_action().takes_values())
            .filter_map(|arg| arg.get_long().map(|long| format!("--{long}")))
            .collect();
        taking.sort();
        let mut listed: Vec<String> = TAKING_A_VALUE.iter().map(|s| s.to_string()).collect();
        listed.sort();
        assert_eq!(listed, taking);
    }

    #[test]
    fn the_command_word_skips_options_and_their_values() {
        assert_eq!(command_word(&argv(&["-v", "query", "x"])), Some("query"));
        assert_eq!(
            command_word(&argv(&["--color", "always", "--workdir", "w", "execute"])),
            Some("execute")
        );
        assert_eq!(command_word(&argv(&["--workdir=w", "mcp"])), Some("mcp"));
        assert_eq!(command_word(&argv(&["--version"])), None);
    }
}
