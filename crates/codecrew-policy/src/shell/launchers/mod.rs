//! Programs that run another program (`sudo`, `env`, `flock`, `xargs`, `watch`, …): how
//! each reads its own options ([`getopt`](super::getopt)'s grammars, taken from the
//! programs' own option strings: util-linux 2.38, coreutils 9.1, findutils 4.9, procps
//! 4.0, sudo 1.9), where the command it runs starts, whether it hands that command to a
//! shell as one string, and the directory the command runs in.
//!
//! What a grammar does not know (an option it lacks, a value missing) is
//! [`Launch::Unknown`]: the words are read as text the analysis cannot follow, so a
//! deny-listed program named there is denied. Nothing here guesses in the lenient
//! direction.

use super::getopt::{self, Grammar, Parsed};
use super::launch::{Cwd, Launch};
use super::programs::base_name;
use super::shells;

mod grammars;

use grammars::*;

/// Every command `argv` runs (find has one per `-exec`).
pub(super) fn launches(argv: &[String]) -> Vec<Launch> {
    let program = base_name(&argv[0]);
    if program == "find" {
        return find_execs(argv);
    }
    vec![launch(program, argv)]
}

fn launch(program: &str, argv: &[String]) -> Launch {
    let args = &argv[1..];
    if let Some(launch) = shells::launch(program, argv) {
        return launch;
    }
    if let Some(launch) = super::interpreters::launch(program, args) {
        return launch;
    }
    match program {
        "sudo" => sudo(argv),
        "doas" => with(argv, &DOAS, |parsed, start| {
            if start >= argv.len() {
                shell_or_none(parsed.has('s', ""))
            } else {
                command_at(start)
            }
        }),
        "env" => env(argv),
        "nohup" | "catchsegv" | "builtin" => with(argv, &NOTHING, |_, start| command_at(start)),
        "setsid" => with(argv, &SETSID, |_, start| command_at(start)),
        "time" => with(argv, &TIME, |_, start| command_at(start)),
        "stdbuf" => with(argv, &STDBUF, |_, start| command_at(start)),
        "strace" | "ltrace" => with(argv, &TRACE, |parsed, start| {
            if parsed.has('p', "attach") {
                Launch::None
            } else {
                command_at(start)
            }
        }),
        "unbuffer" => with(argv, &UNBUFFER, |_, start| command_at(start)),
        "proxychains" | "proxychains4" => with(argv, &PROXYCHAINS, |_, start| command_at(start)),
        "fakeroot" => with(argv, &FAKEROOT, |_, start| {
            if start >= argv.len() {
                Launch::Stdin
            } else {
                command_at(start)
            }
        }),
        // Every option of theirs is `--name` or `--name=value`, up to the program.
        "valgrind" | "firejail" | "torsocks" => {
            command_at(1 + args.iter().take_while(|arg| arg.starts_with('-')).count())
        }
        "busybox" => {
            if args.first().is_some_and(|arg| !arg.starts_with('-')) {
                command_at(1)
            } else {
                Launch::None
            }
        }
        "unshare" => with(argv, &UNSHARE, |parsed, start| {
            let cwd = if let Some(dir) = parsed.value('w', "wd") {
                Cwd::Dir(dir.to_owned())
            } else if parsed.has('R', "root") {
                Cwd::Unknown
            } else {
                Cwd::Same
            };
            shell_or_command(argv, start, cwd)
        }),
        "nsenter" => with(argv, &NSENTER, |parsed, start| {
            let moves = ['w', 'W', 'r', 'a'];
            let cwd = if parsed.options.iter().any(|opt| {
                moves.iter().any(|letter| opt.name == letter.to_string())
                    || matches!(opt.name.as_str(), "wd" | "wdns" | "root" | "all")
            }) {
                Cwd::Unknown
            } else {
                Cwd::Same
            };
            shell_or_command(argv, start, cwd)
        }),
        "ionice" => with(argv, &IONICE, |parsed, start| {
            if parsed.has('p', "pid") || parsed.has('P', "pgid") || parsed.has('u', "uid") {
                Launch::None
            } else {
                command_at(start)
            }
        }),
        "nice" => nice(argv),
        "timeout" => with(argv, &TIMEOUT, |_, start| command_at(start + 1)),
        "chrt" => with(argv, &CHRT, |parsed, start| {
            if parsed.has('p', "pid") || parsed.has('m', "max") {
                Launch::None
            } else {
                command_at(start + 1)
            }
        }),
        "taskset" => with(argv, &TASKSET, |parsed, start| {
            if parsed.has('p', "pid") {
                Launch::None
            } else {
                command_at(start + 1)
            }
        }),
        "flock" => with(argv, &FLOCK, |_, start| flock(argv, start)),
        // Under a new root, whether it goes to its `/` or keeps the path, the command's
        // directory is another.
        "chroot" => with(argv, &CHROOT, |_, start| {
            if start + 1 >= argv.len() {
                Launch::Stdin
            } else {
                command_in(start + 1, Cwd::Unknown)
            }
        }),
        "setpriv" => with(argv, &SETPRIV, |parsed, start| {
            if parsed.has('d', "dump") {
                Launch::None
            } else {
                command_at(start)
            }
        }),
        "prlimit" => with(argv, &PRLIMIT, |parsed, start| {
            if parsed.has('p', "pid") || start >= argv.len() {
                Launch::None
            } else {
                command_at(start)
            }
        }),
        "watch" => with(argv, &WATCH, |parsed, start| {
            if parsed.has('x', "exec") {
                command_at(start)
            } else {
                // watch joins its words with spaces and hands them to `sh -c`.
                Launch::Script {
                    text: argv[start.min(argv.len())..].join(" "),
                    words: start..argv.len(),
                    cwd: Cwd::Same,
                }
            }
        }),
        "script" => with(argv, &SCRIPT, |parsed, _| {
            match parsed.last('c', "command") {
                Some(opt) => Launch::Script {
                    text: opt.value.clone().unwrap_or_default(),
                    words: opt.at + 1..opt.at + 2,
                    cwd: Cwd::Same,
                },
                None => Launch::Stdin,
            }
        }),
        "ssh" => ssh(argv),
        "command" => with(argv, &COMMAND, |parsed, start| {
            if parsed.has('v', "") || parsed.has('V', "") {
                Launch::None
            } else {
                command_at(start)
            }
        }),
        "exec" => with(argv, &EXEC, |_, start| command_at(start)),
        // `coproc cmd …`, `coproc NAME { …; }` (its compound body starts after the brace).
        "coproc" => {
            let opens = |at: usize| argv.get(at).is_some_and(|arg| arg == "{" || arg == "(");
            command_at(if opens(1) {
                2
            } else if opens(2) {
                3
            } else {
                1
            })
        }
        "xargs" => with(argv, &XARGS, |parsed, start| {
            if start >= argv.len() {
                // Bare xargs runs echo.
                return Launch::None;
            }
            let replace = parsed
                .options
                .iter()
                .rev()
                .find(|opt| opt.is('I', "") || opt.is('i', "replace"))
                .map(|opt| opt.value.clone().unwrap_or_else(|| "{}".to_owned()));
            Launch::Command {
                start,
                end: argv.len(),
                unknown_args: replace.is_none(),
                replace,
                cwd: Cwd::Same,
            }
        }),
        _ => Launch::None,
    }
}

/// Whether `program` is one this module reads as running another command.
pub(super) fn is_launcher(argv: &[String]) -> bool {
    !matches!(launches(argv).as_slice(), [] | [Launch::None])
}

fn command_at(start: usize) -> Launch {
    command_in(start, Cwd::Same)
}

fn command_in(start: usize, cwd: Cwd) -> Launch {
    Launch::Command {
        start,
        end: usize::MAX,
        unknown_args: false,
        replace: None,
        cwd,
    }
}

/// The command at `start`, or without one the shell the program starts, which reads its
/// input (`unshare`, `nsenter`).
fn shell_or_command(argv: &[String], start: usize, cwd: Cwd) -> Launch {
    if start >= argv.len() {
        Launch::Stdin
    } else {
        command_in(start, cwd)
    }
}

fn shell_or_none(shell: bool) -> Launch {
    if shell { Launch::Stdin } else { Launch::None }
}

/// Parses `argv`'s options with `grammar`, then lets `then` say what runs from the
/// first operand (an index into argv); an option the grammar does not know fails
/// closed.
fn with(argv: &[String], grammar: &Grammar, then: impl FnOnce(&Parsed, usize) -> Launch) -> Launch {
    match getopt::parse(&argv[1..], grammar) {
        Ok(parsed) => {
            let start = parsed.operands + 1;
            then(&parsed, start)
        }
        Err(getopt::Unknown(word)) => Launch::Unknown {
            from: 1,
            why: format!(
                "`{}` is given `{word}`, which codecrew does not know",
                base_name(&argv[0])
            ),
        },
    }
}

fn sudo(argv: &[String]) -> Launch {
    with(argv, &SUDO, |parsed, start| {
        let start = start
            + argv[start.min(argv.len())..]
                .iter()
                .take_while(|arg| is_assignment(arg))
                .count();
        let lists = ['e', 'l', 'v', 'k', 'K', 'V', 'h'];
        if start >= argv.len() {
            // `sudo -s`, `sudo -i`: a shell reading its input.
            return shell_or_none(parsed.has('s', "shell") || parsed.has('i', "login"));
        }
        if parsed.options.iter().any(|opt| {
            lists.iter().any(|letter| opt.name == letter.to_string()) && opt.value.is_none()
        }) {
            return Launch::None;
        }
        let cwd = if parsed.has('i', "login") || parsed.has('R', "chroot") {
            Cwd::Unknown
        } else if let Some(dir) = parsed.value('D', "chdir") {
            Cwd::Dir(dir.to_owned())
        } else {
            Cwd::Same
        };
        command_in(start, cwd)
    })
}

fn env(argv: &[String]) -> Launch {
    with(argv, &ENV, |parsed, start| {
        let start = start
            + argv[start.min(argv.len())..]
                .iter()
                .take_while(|arg| is_assignment(arg))
                .count();
        let cwd = match parsed.value('C', "chdir") {
            Some(dir) => Cwd::Dir(dir.to_owned()),
            None => Cwd::Same,
        };
        if let Some(split) = parsed.last('S', "split-string") {
            // `env -S 'rm -rf .'` splits the string into words, ahead of the rest.
            let mut text = split.value.clone().unwrap_or_default();
            for arg in argv.iter().skip(start) {
                text.push(' ');
                text.push_str(arg);
            }
            return Launch::Script {
                text,
                words: split.at + 1..argv.len(),
                cwd,
            };
        }
        if start >= argv.len() {
            Launch::None
        } else {
            command_in(start, cwd)
        }
    })
}

/// The index after env's options and assignments: where its command starts.
pub(super) fn env_command_start(argv: &[String]) -> usize {
    match getopt::parse(&argv[1..], &ENV) {
        Ok(parsed) => parsed.operands + 1,
        Err(_) => argv.len(),
    }
}

/// `nice -5 cmd`, `nice --5 cmd` (the old adjustment), `nice -n 5 cmd`.
fn nice(argv: &[String]) -> Launch {
    let legacy = argv.get(1).is_some_and(|arg| {
        let digits = arg
            .strip_prefix("--")
            .or_else(|| arg.strip_prefix('-'))
            .unwrap_or_default();
        !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
    });
    if legacy {
        let rest: Vec<String> = std::iter::once(argv[0].clone())
            .chain(argv[2..].iter().cloned())
            .collect();
        return match with(&rest, &NICE, |_, start| command_at(start)) {
            Launch::Command { start, .. } => command_at(start + 1),
            other => other,
        };
    }
    with(argv, &NICE, |_, start| command_at(start))
}

/// `flock [options] FILE command…`, `flock [options] FILE -c STRING`, `flock FD`.
fn flock(argv: &[String], start: usize) -> Launch {
    let after = start + 1;
    match argv.get(after).map(String::as_str) {
        None => Launch::None,
        Some("-c" | "--command") => match argv.get(after + 1) {
            Some(text) => Launch::Script {
                text: text.clone(),
                words: after + 1..after + 2,
                cwd: Cwd::Same,
            },
            None => Launch::None,
        },
        Some(_) => command_at(after),
    }
}

/// `ssh [options] host [command…]`: the command words, joined, run by the remote
/// shell; `-o ProxyCommand=…` and its kind by a local one.
fn ssh(argv: &[String]) -> Launch {
    with(argv, &SSH, |parsed, start| {
        for opt in &parsed.options {
            let Some(value) = opt.value.as_deref().filter(|_| opt.name == "o") else {
                continue;
            };
            let (key, command) = value
                .split_once(['=', ' '])
                .map_or((value, ""), |(key, rest)| {
                    (key, rest.trim_start_matches(['=', ' ']))
                });
            let key = key.to_ascii_lowercase();
            if matches!(
                key.as_str(),
                "proxycommand" | "localcommand" | "knownhostscommand" | "remotecommand"
            ) {
                return Launch::Script {
                    text: command.to_owned(),
                    words: opt.at + 1..opt.at + 2,
                    cwd: Cwd::Same,
                };
            }
        }
        if start + 1 >= argv.len() {
            Launch::None
        } else {
            Launch::Script {
                text: argv[start + 1..].join(" "),
                words: start + 1..argv.len(),
                cwd: Cwd::Unknown,
            }
        }
    })
}

/// find's `-exec`, `-execdir`, `-ok` and `-okdir`, each to its `;` or `+`.
fn find_execs(argv: &[String]) -> Vec<Launch> {
    let mut launches = Vec::new();
    let mut index = 1;
    while index < argv.len() {
        if matches!(
            argv[index].as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        ) {
            let start = index + 1;
            let end = argv[start..]
                .iter()
                .position(|arg| arg == ";" || arg == "+")
                .map_or(argv.len(), |at| start + at);
            launches.push(Launch::Command {
                start,
                end,
                unknown_args: false,
                replace: None,
                cwd: Cwd::Same,
            });
            index = end;
        }
        index += 1;
    }
    if launches.is_empty() {
        launches.push(Launch::None);
    }
    launches
}

/// `NAME=value`, as env and sudo take an assignment before the command.
pub(super) fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}
