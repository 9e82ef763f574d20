//! The table of known programs: which commands, with which arguments, only read.
//!
//! Of these, only git reads a configuration from the working tree that can name a
//! program to run; [`Analyser::git_repository`] checks it (see `crate::git`). The others
//! read no file that names a program, or only the user's own (`~/.jq`, `~/.magic`).

use super::*;

/// The program's name without its directory (`/bin/rm` is `rm`).
pub(super) fn base_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Options (before `--`) and the other arguments with their indexes in `args`.
pub(super) fn split_options(args: &[String]) -> (Vec<String>, Vec<(usize, String)>) {
    let mut options = Vec::new();
    let mut targets = Vec::new();
    let mut after_dashes = false;
    for (index, arg) in args.iter().enumerate() {
        if after_dashes || !arg.starts_with('-') || arg == "-" {
            targets.push((index, arg.clone()));
        } else if arg == "--" {
            after_dashes = true;
        } else {
            options.push(arg.clone());
        }
    }
    (options, targets)
}

/// find's starting points, when argv is a find with -exec.
pub(super) fn find_roots(argv: &[String]) -> Option<Vec<String>> {
    if base_name(&argv[0]) != "find" {
        return None;
    }
    let roots: Vec<String> = argv[1..]
        .iter()
        .skip_while(|arg| {
            matches!(arg.as_str(), "-H" | "-L" | "-P")
                || arg.starts_with("-O")
                || arg.starts_with("-D")
        })
        .take_while(|arg| !arg.starts_with('-') && !matches!(arg.as_str(), "(" | "!" | ","))
        .cloned()
        .collect();
    Some(if roots.is_empty() {
        vec![".".to_owned()]
    } else {
        roots
    })
}

/// The safe list: read-only commands with arguments that cannot write, run other
/// programs or reach the network. Paths they name are checked separately, and options
/// that read names from a file or follow links are risks (`Analyser::option_risks`).
pub fn safe(argv: &[String]) -> bool {
    let Some(program) = argv.first() else {
        return false;
    };
    // `./ls` or `/tmp/git` may be anything.
    if program.contains('/') {
        return false;
    }
    let args = &argv[1..];
    if program == "git" {
        return git_safe(args);
    }
    let Some(syntax) = syntaxes::syntax(program) else {
        return false;
    };
    if harmful(args, &syntax) {
        return false;
    }
    match program.as_str() {
        // A second operand is the file they write.
        "uniq" => operands_from_first(args, "fsw").len() <= 1,
        "xxd" => operands_from_first(args, "cglnos").len() <= 1,
        // An operand that is not a `+format` sets the clock.
        "date" => operands_from_first(args, "dfrs")
            .iter()
            .all(|operand| operand.starts_with('+')),
        // Any operand sets the host name.
        "hostname" => args.is_empty(),
        // Module imports in the program text read files no argument names.
        "jq" => !args
            .iter()
            .any(|arg| arg.contains("import") || arg.contains("include")),
        _ => true,
    }
}

/// Whether an option of `args` runs a program, writes or sets a shell variable.
fn harmful(args: &[String], syntax: &Syntax<'_>) -> bool {
    options::effects(args, syntax).iter().any(|found| {
        matches!(
            found.effect,
            Effect::Runs | Effect::Writes | Effect::Assigns
        )
    })
}

/// The operands of `args`, counted strictly: from the first word that is not an option
/// on, every word is one (as xxd reads them; GNU programs that would read a later word
/// as an option make this count more, never fewer). A short option ending in one of
/// `value_letters` takes the next word as its value.
fn operands_from_first<'a>(args: &'a [String], value_letters: &str) -> Vec<&'a String> {
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        if arg == "--" {
            return args[index + 1..].iter().collect();
        }
        if !arg.starts_with('-') || arg == "-" {
            return args[index..].iter().collect();
        }
        let takes_next = !arg.starts_with("--")
            && arg
                .chars()
                .last()
                .is_some_and(|last| value_letters.contains(last));
        index += if takes_next { 2 } else { 1 };
    }
    Vec::new()
}

/// Whether a format string makes git verify signatures (it runs `gpg.program`).
fn verifies_signatures(arg: &str) -> bool {
    arg.contains("%G") || arg.contains("%(signature")
}

/// `git` with read-only subcommands, without options that change where git looks for
/// its repository or configuration, run external programs or write files.
pub(super) fn git_safe(args: &[String]) -> bool {
    let line = GitLine::read(args);
    let Some(subcommand) = line.subcommand else {
        return false;
    };
    if !line.known_globals {
        return false;
    }
    let rest = line.rest;
    let Some(syntax) = syntaxes::git_syntax(subcommand) else {
        return false;
    };
    // `--help` shows a manual page through a viewer the configuration may name.
    let help = |arg: &String| arg.len() > 3 && "--help".starts_with(arg.as_str());
    if harmful(rest, &syntax) || rest.iter().any(|arg| verifies_signatures(arg) || help(arg)) {
        return false;
    }
    let all_options = rest.iter().all(|arg| arg.starts_with('-'));
    match subcommand {
        // `git reflog expire/delete` write.
        "reflog" => !rest
            .first()
            .is_some_and(|arg| arg == "expire" || arg == "delete"),
        // Listing only: a name operand creates, renames or deletes.
        "branch" => all_options,
        "tag" => rest.is_empty() || options::has(rest, &syntax, "l", &["list"]),
        "remote" => rest.is_empty() || (rest.len() == 1 && rest[0] == "-v"),
        _ => true,
    }
}

/// A `git` command line (the words after `git`) as git reads it: its global options,
/// the subcommand and the subcommand's arguments. The one reading of git's global
/// options that the safe list, the repository checks and the option checks share.
pub(super) struct GitLine<'a> {
    /// The directories of its `-C` options, in order (each relative to the one before).
    pub dirs: Vec<&'a str>,
    /// Whether every global option is one the safe list allows (`-C`, `-P`,
    /// `--no-pager`, ...): the others change where git looks or what it runs.
    pub known_globals: bool,
    pub subcommand: Option<&'a str>,
    pub rest: &'a [String],
}

impl<'a> GitLine<'a> {
    pub(super) fn read(args: &'a [String]) -> GitLine<'a> {
        let mut line = GitLine {
            dirs: Vec::new(),
            known_globals: true,
            subcommand: None,
            rest: &[],
        };
        let mut index = 0;
        while let Some(arg) = args.get(index) {
            match arg.as_str() {
                "--no-pager"
                | "-P"
                | "--no-optional-locks"
                | "--literal-pathspecs"
                | "--no-replace-objects" => {}
                "-C" => {
                    index += 1;
                    match args.get(index) {
                        Some(dir) => line.dirs.push(dir),
                        None => line.known_globals = false,
                    }
                }
                other if other.starts_with('-') => line.known_globals = false,
                subcommand => {
                    line.subcommand = Some(subcommand);
                    line.rest = &args[index + 1..];
                    break;
                }
            }
            index += 1;
        }
        line
    }

    /// The directories git runs in, from each place the command line may be.
    pub(super) fn directories(&self, cwds: &[PathBuf]) -> Vec<PathBuf> {
        cwds.iter()
            .map(|cwd| {
                self.dirs
                    .iter()
                    .fold(cwd.clone(), |dir, next| dir.join(next))
            })
            .collect()
    }
}

impl Analyser<'_> {
    /// A reading git command asks when the repository it would use names a program in its
    /// config or hooks: git would run it. True when one does.
    pub(super) fn git_repository(&mut self, argv: &[String]) -> bool {
        let mut names_a_program = false;
        for dir in GitLine::read(&argv[1..]).directories(&self.cwds) {
            if let Some(why) = crate::git::program_in_repository(&dir) {
                self.risk(why);
                names_a_program = true;
            }
        }
        names_a_program
    }
}
