//! What a `run_command` command line would do, read with a real bash parser.
//!
//! The parser is tree-sitter with the tree-sitter-bash grammar (pinned to the 0.25 majors,
//! which are built and tested together): a maintained, error-tolerant grammar of the whole
//! bash language, so quoting, escapes, heredocs and substitutions are seen as bash sees
//! them, not as a regular expression guesses. Every simple command of every pipeline,
//! list, subshell and group is checked; anything the analysis does not model is a *risk*
//! (the call needs a question), never a pass.
//!
//! Three outcomes per command line:
//! - **deny**: the built-in deny list (`rm -rf /` and its variants, mkfs, dd to devices,
//!   fork bombs, recursive chmod/chown of `/`, ...), also found through wrappers
//!   (`sudo`, `env`, `xargs`, `bash -c '...'`, `find -exec`). No flag or prompt overrides it.
//! - **risks**: constructs that hide what runs or where output goes — command and process
//!   substitution, `eval`, `bash -c`, wrappers, redirections to files, variable
//!   assignments (`LD_PRELOAD=...`), paths outside the workspace, sensitive files,
//!   functions, loops, anything unparsed. Allow rules do not lift these; only a prompt or
//!   `--yes` does.
//! - **commands**: each simple command's words, and whether it is on the argument-aware
//!   safe list (`ls`, `cat` of workspace files, `git diff` without `-c`/`--git-dir`, ...).
//!   A command off the list needs an allow rule (or a prompt).
//!
//! Here: the types, [`analyse`] and the verdict it collects (risks, denials, commands).
//! The analysis, by concern: `parse.rs` walks the tree (statements, lists, assignments,
//! functions, simple commands); `words.rs` reads words and their expansions (quotes,
//! escapes, variables, globs); `redirect.rs` redirections; `arguments.rs` the paths a
//! command names and the trees it searches; `deny.rs` the built-in deny list;
//! `wrappers.rs` commands that run other commands, with `launchers/` (where each one's
//! command starts, its options read as the program reads them through `getopt.rs`),
//! `shells.rs` (where a shell gets its script), `interpreters.rs` (inline code) and
//! `possible.rs` (an unknown program's arguments read as a command it may run);
//! `reread.rs` text that bash reads again as code (`bash -c`, `eval`, trap handlers,
//! `PROMPT_COMMAND`, subscripts given as text); `input.rs` the script or code a command
//! reads from its input; `aliases.rs` aliases, hashed names and callbacks; `programs.rs`
//! the table of programs that only read, with their per-argument rules ([`safe`]).
//! `arguments.rs` follows `cd` out of the workspace and marks a directory it cannot
//! follow, where the deny list takes every relative path as possibly the workspace.
//!
//! The walk is recursive by structure: every node of the tree reaches its children, so a
//! command substitution is analysed as a command wherever the parser puts it (a parameter
//! expansion of any operator, a subscript, arithmetic, a `[[ ]]` operand, a `case`
//! pattern, a redirection target). Text the parser leaves opaque but bash reads again
//! (a `${x#pattern}`, a quoted word inside `${…}`, a trap handler, a variable name with a
//! subscript given to `unset` or `declare`) goes through one funnel,
//! `Analyser::reread`, to an analyser with the same deny list, variables and
//! directories. A deny message says where the command hid ("found in a command
//! substitution, in a parameter expansion").

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use tree_sitter::{Node, Parser};

use super::{paths, secrets};
use crate::path::{Access, display, normalise, resolve};

mod aliases;
mod arguments;
mod deny;
mod getopt;
mod input;
mod interpreters;
mod launch;
mod launchers;
mod options;
mod parse;
mod possible;
mod programs;
mod redirect;
mod reread;
mod risky_options;
mod shells;
mod syntaxes;
mod words;
mod wrappers;

use arguments::is_home_word;
use deny::{deny_listed_output, deny_listed_token, is_loader_variable};
use options::{Effect, Syntax};
pub use programs::safe;
use programs::{base_name, find_roots, split_options};
use redirect::is_harmless_device;
use reread::Reread;
use words::{expand_glob, first_line, holds_substitution};

/// Longest command line analysed; longer ones are denied.
const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// Deepest nesting of syntax (or of `bash -c` inside `bash -c`) followed.
const MAX_DEPTH: usize = 100;
/// Deepest nesting of wrappers (`sudo env bash -c '...'`) followed.
const MAX_WRAPPER_DEPTH: usize = 8;
/// Most files one glob in a command may expand to before the analysis gives up (Ask).
const MAX_GLOB_MATCHES: usize = 512;

/// Where a command runs.
#[derive(Debug, Clone)]
pub struct ShellContext<'a> {
    /// The canonical workspace root.
    pub workspace: &'a Path,
    /// The canonical directory the command starts in (inside the workspace).
    pub cwd: &'a Path,
}

/// One simple command, as bash would run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The words after quote removal; a word only known at run time is `*`.
    pub words: Vec<String>,
    /// On the safe list with these arguments.
    pub safe: bool,
}

/// What a command line would do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// Every simple command at any level of the line.
    pub commands: Vec<SimpleCommand>,
    /// Commands run through a wrapper (`env X`, `bash -c '...'`, `find -exec X`): deny and
    /// ask rules see them, allow rules and the safe list do not.
    pub wrapped: Vec<Vec<String>>,
    /// Why the line is denied outright (the deny list).
    pub deny: Vec<String>,
    /// How the line could be written so that it passes, where only its spelling is
    /// denied (`trap "rm -f $tmp" EXIT` in single quotes).
    pub hints: Vec<String>,
    /// Why the line needs a question whatever the allow rules say.
    pub risks: Vec<String>,
}

/// Analyses `command` as `bash -c` would run it in `ctx.cwd`.
pub fn analyse(command: &str, ctx: &ShellContext<'_>) -> Analysis {
    crate::state_folder::pinned(|| analyse_line(command, ctx))
}

fn analyse_line(command: &str, ctx: &ShellContext<'_>) -> Analysis {
    let mut analyser = Analyser::new(ctx, vec![ctx.cwd.to_path_buf()], 0);
    analyser.line = std::rc::Rc::from(command);
    match join_continued_lines(command) {
        Some(joined) => {
            // Where bash would not join (inside single quotes, comments, quoted here
            // documents) the joined text may read differently: ask.
            if command.contains('\'') || command.contains('#') || command.contains("<<") {
                analyser.risk(
                    "the command continues lines with a backslash where quotes, comments or \
                     here documents make it read differently; write it on one line",
                );
            }
            analyser.script(&joined);
        }
        None => analyser.script(command),
    }
    let mut analysis = analyser.out;
    dedup(&mut analysis.risks);
    dedup(&mut analysis.deny);
    dedup(&mut analysis.hints);
    analysis
}

/// The command with every line continuation removed, as bash reads it before it splits
/// words (`ca\<newline>t` is `cat`); None when it has none. A newline continues the
/// line when an odd number of backslashes stands before it (`\\<newline>` is an escaped
/// backslash, then a new command).
fn join_continued_lines(command: &str) -> Option<String> {
    if !command.contains("\\\n") {
        return None;
    }
    let mut joined = String::with_capacity(command.len());
    let mut backslashes = 0usize;
    for character in command.chars() {
        match character {
            '\\' => {
                backslashes += 1;
                joined.push(character);
            }
            '\n' if backslashes % 2 == 1 => {
                joined.pop();
                backslashes = 0;
            }
            other => {
                backslashes = 0;
                joined.push(other);
            }
        }
    }
    Some(joined)
}

fn dedup(items: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    items.retain(|item| seen.insert(item.clone()));
}

/// One word after expansion, as far as it can be known before running.
#[derive(Debug, Clone, Default)]
struct Word {
    /// The value when literal; otherwise a skeleton with `*` for the unknown parts.
    value: String,
    literal: bool,
    /// Unquoted glob characters (`*`, `?`, `[`): bash expands it against the disk.
    glob: bool,
    /// An unquoted leading `~`: the home directory.
    tilde: bool,
    /// Refers to `$HOME`.
    home: bool,
    /// The unquoted literal characters, to find brace expansion.
    unquoted: String,
    /// The word as written, for what the fail-safe reads of a word only known at run time.
    source: String,
}

impl Word {
    fn literal(value: &str) -> Word {
        Word {
            value: value.to_owned(),
            literal: true,
            ..Word::default()
        }
    }

    fn brace(&self) -> bool {
        self.unquoted.contains('{') && (self.unquoted.contains(',') || self.unquoted.contains(".."))
    }

    fn append(&mut self, other: Word) {
        self.value.push_str(&other.value);
        self.literal &= other.literal;
        self.glob |= other.glob;
        self.home |= other.home;
        self.unquoted.push_str(&other.unquoted);
        self.source.push_str(&other.source);
    }
}

struct Analyser<'a> {
    ctx: &'a ShellContext<'a>,
    /// Every directory the command may be in at this point (`cd` adds to it).
    cwds: Vec<PathBuf>,
    /// A `cd` the analysis cannot follow came before (`cd "$d"`, `popd`, a login
    /// shell's home): any directory may be the current one too.
    cwd_unknown: bool,
    /// Aliases (and `hash -p` names) defined earlier in the line: the text a command
    /// name stands for, None when only known at run time.
    aliases: HashMap<String, Option<String>>,
    /// `shopt -s cdable_vars`: `cd NAME` may go where the variable NAME says.
    cdable_vars: bool,
    /// The assignments before the command being read (`X=1 cmd`): its environment.
    env_prefix: HashMap<String, String>,
    /// The whole command line, for the fail-safe of a part that came from elsewhere in it
    /// (a script file the line itself may write).
    line: std::rc::Rc<str>,
    /// Reading text that may be a command (the arguments of a program codecrew does not
    /// know): only what is denied counts, and what does not parse is left alone.
    speculative: bool,
    /// Literal values of variables assigned earlier in the line.
    vars: HashMap<String, String>,
    depth: usize,
    /// Inside a wrapper's script: commands go to `wrapped`.
    nested: bool,
    /// Where the walk is, innermost last ("a parameter expansion"), for deny messages.
    places: Vec<String>,
    /// Inside text bash evaluates again (a parameter expansion, arithmetic, a subscript):
    /// even quoted text there has its command substitutions run.
    evaluating: usize,
    out: Analysis,
}

impl<'a> Analyser<'a> {
    fn new(ctx: &'a ShellContext<'a>, cwds: Vec<PathBuf>, depth: usize) -> Self {
        Analyser {
            ctx,
            cwds,
            cwd_unknown: false,
            aliases: HashMap::new(),
            cdable_vars: false,
            env_prefix: HashMap::new(),
            line: std::rc::Rc::from(""),
            speculative: false,
            vars: HashMap::new(),
            depth,
            nested: depth > 0,
            places: Vec::new(),
            evaluating: 0,
            out: Analysis::default(),
        }
    }

    fn risk(&mut self, why: impl Into<String>) {
        self.out.risks.push(why.into());
    }

    /// Denies the line; the message says where in it the reason was found.
    fn deny(&mut self, why: impl Into<String>) {
        let mut why = why.into();
        if !self.places.is_empty() {
            let places: Vec<&str> = self.places.iter().rev().map(String::as_str).collect();
            why.push_str(" — found in ");
            why.push_str(&places.join(", in "));
        }
        self.out.deny.push(why);
    }

    /// Runs `walk` with `place` named as where the walk is, for deny messages.
    fn within<R>(&mut self, place: &str, walk: impl FnOnce(&mut Self) -> R) -> R {
        self.places.push(place.to_owned());
        let result = walk(self);
        self.places.pop();
        result
    }

    /// Runs `walk` inside text that bash evaluates again (`place`).
    fn evaluated<R>(&mut self, place: &str, walk: impl FnOnce(&mut Self) -> R) -> R {
        self.evaluating += 1;
        let result = self.within(place, walk);
        self.evaluating -= 1;
        result
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;

#[cfg(test)]
#[path = "reread_tests.rs"]
mod reread_tests;

#[cfg(test)]
#[path = "launch_tests.rs"]
mod launch_tests;
