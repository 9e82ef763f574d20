//! Where a shell gets its script: `-c` and the first operand after every option (`bash
//! -o errexit -c '…'`, `bash -c -- '…'`), its input (`bash -s x`, `bash /dev/stdin`,
//! `. /dev/fd/3`), a file (`bash x.sh`, `source x.sh`), or another program that starts one
//! (`su`, `runuser`, `sg`, `eval`).
//!
//! A shell's options are read as the shell reads them: long options first, then bundles
//! of letters after `-` or `+`, where each `o` or `O` takes the next word; `-` or `--`
//! ends them. A long option the shell's table lacks fails closed ([`Launch::Unknown`]).

use super::getopt::{self, Arity, Grammar};
use super::launch::{Cwd, Launch};

use Arity::{None as Flag, Required};

/// How `program` (a shell, or a program that starts one) runs its script; None for any
/// other program.
pub(super) fn launch(program: &str, argv: &[String]) -> Option<Launch> {
    Some(match program {
        "bash" | "sh" | "dash" | "ksh" | "ksh93" | "mksh" | "lksh" | "pdksh" | "ash" | "rbash"
        | "zsh" | "yash" | "posh" => posix_shell(program, argv, 1, Cwd::Same),
        "fish" => fish(argv),
        "csh" | "tcsh" => csh(argv),
        "su" | "runuser" => su(program, argv),
        "sg" => sg(argv),
        "eval" => Launch::Script {
            text: argv[1..].join(" "),
            words: 1..argv.len(),
            cwd: Cwd::Same,
        },
        "source" | "." => {
            let file = argv[1..].iter().find(|arg| arg.as_str() != "--");
            match file {
                Some(file) if reads_input(file) => Launch::Stdin,
                Some(file) => Launch::ScriptFile(file.clone()),
                None => Launch::None,
            }
        }
        _ => return None,
    })
}

/// Whether a script file is the shell's own input, or another descriptor a redirection
/// gives it (`/dev/stdin`, `/dev/fd/3`, `/proc/self/fd/0`).
pub(super) fn reads_input(file: &str) -> bool {
    file == "/dev/stdin"
        || file.starts_with("/dev/fd/")
        || (file.starts_with("/proc/") && file.contains("/fd/"))
}

/// The long options each shell takes before its letters; `true` when one takes a value.
fn long_option(program: &str, name: &str) -> Option<bool> {
    match (program, name) {
        ("bash" | "rbash" | "sh", "rcfile" | "init-file") => Some(true),
        (
            "bash" | "rbash" | "sh",
            "debugger" | "dump-po-strings" | "dump-strings" | "help" | "login" | "noediting"
            | "noprofile" | "norc" | "posix" | "pretty-print" | "protected" | "restricted"
            | "verbose" | "version" | "wordexp",
        ) => Some(false),
        ("zsh", "emulate") => Some(true),
        // zsh takes every option by name (`--no-rcs`, `--errexit`), as `-o name`.
        ("zsh", _) => Some(false),
        _ => None,
    }
}

/// `sh`'s kind of shell, whose options start at `argv[from]`.
fn posix_shell(program: &str, argv: &[String], from: usize, cwd: Cwd) -> Launch {
    let mut index = from;
    let mut command = false;
    let mut stdin = false;
    let mut rcfile = None;
    while let Some(arg) = argv.get(index) {
        if arg == "--" || arg == "-" {
            index += 1;
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            match long_option(program, name) {
                Some(true) => {
                    let value = attached
                        .map(str::to_owned)
                        .or_else(|| argv.get(index + 1).cloned());
                    if matches!(name, "rcfile" | "init-file") {
                        rcfile = value;
                    }
                    index += if attached.is_some() { 1 } else { 2 };
                }
                Some(false) => index += 1,
                None => {
                    return Launch::Unknown {
                        from: index,
                        why: format!("`{program}` is given `{arg}`, which codecrew does not know"),
                    };
                }
            }
            continue;
        }
        let (minus, letters) = match (arg.strip_prefix('-'), arg.strip_prefix('+')) {
            (Some(letters), _) => (true, letters),
            (None, Some(letters)) => (false, letters),
            (None, None) => break,
        };
        let mut values = 0;
        for letter in letters.chars() {
            match letter {
                'c' if minus => command = true,
                's' if minus => stdin = true,
                'o' | 'O' => values += 1,
                _ if letter.is_ascii_alphabetic() => {}
                _ => {
                    return Launch::Unknown {
                        from: index,
                        why: format!("`{program}` is given `{arg}`, which codecrew does not know"),
                    };
                }
            }
        }
        index += 1 + values;
    }
    let operand = argv.get(index);
    if command {
        return match operand {
            Some(text) => Launch::Script {
                text: text.clone(),
                words: index..index + 1,
                cwd,
            },
            // `bash -c` with nothing after it runs nothing.
            None => Launch::None,
        };
    }
    // `bash --rcfile /dev/stdin -i`: the start-up file is the shell's input.
    if rcfile.as_deref().is_some_and(reads_input) {
        return Launch::Stdin;
    }
    match operand {
        Some(file) if !stdin && reads_input(file) => Launch::Stdin,
        Some(file) if !stdin => Launch::ScriptFile(file.clone()),
        _ => Launch::Stdin,
    }
}

const FISH: Grammar = Grammar {
    short: "c:C:d:f:o:hilnNpPv",
    long: &[
        ("command", Required),
        ("init-command", Required),
        ("debug", Required),
        ("debug-output", Required),
        ("features", Required),
        ("help", Flag),
        ("interactive", Flag),
        ("login", Flag),
        ("no-execute", Flag),
        ("no-config", Flag),
        ("private", Flag),
        ("print-rusage-self", Flag),
        ("profile", Required),
        ("profile-startup", Required),
        ("version", Flag),
    ],
};

/// fish: `-c`/`--command` and `-C`/`--init-command` are scripts; read as bash, which
/// names its programs the same way.
fn fish(argv: &[String]) -> Launch {
    match getopt::parse(&argv[1..], &FISH) {
        Ok(parsed) => {
            let scripts: Vec<&str> = parsed
                .options
                .iter()
                .filter(|opt| opt.is('c', "command") || opt.is('C', "init-command"))
                .filter_map(|opt| opt.value.as_deref())
                .collect();
            if !scripts.is_empty() {
                return Launch::Script {
                    text: scripts.join("\n"),
                    words: 1..argv.len(),
                    cwd: Cwd::Same,
                };
            }
            match argv.get(parsed.operands + 1) {
                Some(file) if !reads_input(file) => Launch::ScriptFile(file.clone()),
                _ => Launch::Stdin,
            }
        }
        Err(getopt::Unknown(word)) => Launch::Unknown {
            from: 1,
            why: format!("`fish` is given `{word}`, which codecrew does not know"),
        },
    }
}

/// csh and tcsh: letters only (`-b` ends them); with `-c` the first operand is the
/// script.
fn csh(argv: &[String]) -> Launch {
    let mut index = 1;
    let mut command = false;
    while let Some(letters) = argv.get(index).and_then(|arg| arg.strip_prefix('-')) {
        index += 1;
        if letters.is_empty() || letters == "-" {
            break;
        }
        if letters.contains('c') {
            command = true;
        }
        if letters.contains('b') {
            break;
        }
    }
    match argv.get(index) {
        Some(text) if command => Launch::Script {
            text: text.clone(),
            words: index..index + 1,
            cwd: Cwd::Same,
        },
        None if command => Launch::None,
        Some(file) if !reads_input(file) => Launch::ScriptFile(file.clone()),
        _ => Launch::Stdin,
    }
}

const SU: Grammar = Grammar {
    short: "c:fg:G:lmpPs:hVw:u:",
    long: &[
        ("command", Required),
        ("session-command", Required),
        ("fast", Flag),
        ("group", Required),
        ("supp-group", Required),
        ("login", Flag),
        ("preserve-environment", Flag),
        ("pty", Flag),
        ("shell", Required),
        ("whitelist-environment", Required),
        ("user", Required),
        ("help", Flag),
        ("version", Flag),
    ],
};

/// `su [options] [-] [user [shell arguments…]]`: `-c` is a script, and what follows the
/// user goes to the shell (`su root -c '…'`); `runuser -u user [--] command` runs the
/// command itself. A login (`-`, `-l`) starts in the user's home.
fn su(program: &str, argv: &[String]) -> Launch {
    let parsed = match getopt::parse(&argv[1..], &SU) {
        Ok(parsed) if program == "runuser" || !parsed.has('u', "user") => parsed,
        Ok(_) | Err(_) => {
            return Launch::Unknown {
                from: 1,
                why: format!("`{program}` is given options codecrew does not know"),
            };
        }
    };
    let mut rest = parsed.operands + 1;
    let mut login = parsed.has('l', "login");
    if argv.get(rest).is_some_and(|arg| arg == "-") {
        login = true;
        rest += 1;
    }
    let cwd = if login { Cwd::Unknown } else { Cwd::Same };
    let script = parsed
        .last('c', "command")
        .or_else(|| parsed.last('\0', "session-command"));
    if let Some(opt) = script {
        return Launch::Script {
            text: opt.value.clone().unwrap_or_default(),
            words: opt.at + 1..opt.at + 2,
            cwd,
        };
    }
    if parsed.has('u', "user") {
        if argv.get(rest).is_some_and(|arg| arg == "--") {
            rest += 1;
        }
        return if rest < argv.len() {
            Launch::Command {
                start: rest,
                end: usize::MAX,
                unknown_args: false,
                replace: None,
                cwd,
            }
        } else {
            Launch::Stdin
        };
    }
    // The user, then the shell's own arguments.
    if rest < argv.len() {
        rest += 1;
    }
    if rest < argv.len() {
        posix_shell("sh", argv, rest, cwd)
    } else {
        Launch::Stdin
    }
}

/// `sg [-] [group [-c] command]`: the command is one string for `/bin/sh -c`.
fn sg(argv: &[String]) -> Launch {
    let mut rest = 1;
    if argv.get(rest).is_some_and(|arg| arg == "-") {
        rest += 1;
    }
    rest += 1;
    if argv.get(rest).is_some_and(|arg| arg == "-c") {
        rest += 1;
    }
    match argv.get(rest) {
        Some(text) => Launch::Script {
            text: text.clone(),
            words: rest..rest + 1,
            cwd: Cwd::Same,
        },
        None => Launch::Stdin,
    }
}
