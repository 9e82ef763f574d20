//! Wrappers (`sudo`, `env`, `xargs`, `bash -c`, `find -exec`, …): the command they run is
//! checked as if it ran alone.

use super::*;

impl<'a> Analyser<'a> {
    /// Commands that run other commands: their inner command is deny-checked (and seen
    /// by deny and ask rules); running one always needs a question.
    pub(super) fn wrappers(&mut self, argv: &[String], words: &[Word]) {
        if self.depth > MAX_WRAPPER_DEPTH {
            self.deny("commands are wrapped in each other too deeply to analyse");
            return;
        }
        let program = base_name(&argv[0]);
        match wrapped(argv) {
            Wrapped::None => {}
            Wrapped::Inline(kind) => {
                self.risk(format!(
                    "`{program}` runs inline {kind} that codecrew cannot vet"
                ));
            }
            Wrapped::Stdin => {
                self.risk(format!(
                    "`{program}` runs commands read from its input, which codecrew cannot see"
                ));
            }
            Wrapped::Script(script) => {
                self.risk(format!(
                    "`{program}` runs a script given as a string, hidden from the analysis"
                ));
                let literal = words.iter().all(|word| word.literal);
                if !literal {
                    self.deny(format!(
                        "`{program}` runs a script only known at run time; codecrew does not run \
                         what it cannot read"
                    ));
                    return;
                }
                self.reread(
                    &script,
                    Reread::Commands,
                    &format!("the script `{program}` runs"),
                );
            }
            Wrapped::Command {
                start,
                unknown_args,
            } => {
                self.risk(format!(
                    "`{program}` runs another command ({}), which codecrew does not vet",
                    argv.get(start).map_or("?", String::as_str)
                ));
                // `sudo FOO=1 cmd`, `coproc X=1 cmd`: the command comes after the
                // assignments, which are read as assignments.
                let start =
                    start + self.leading_assignments(words.get(start..).unwrap_or_default());
                if start >= argv.len() {
                    return;
                }
                let mut inner_argv: Vec<String> = argv[start..].to_vec();
                let mut inner_words: Vec<Word> = words.get(start..).unwrap_or_default().to_vec();
                if unknown_args {
                    // Arguments arrive at run time (xargs): an unknown target.
                    inner_argv.push("*".to_owned());
                    inner_words.push(Word {
                        value: "*".to_owned(),
                        ..Word::default()
                    });
                }
                if let Some(roots) = find_roots(argv) {
                    // find -exec rm -rf {}: the targets are below find's starting points.
                    for (value, word) in inner_argv.iter_mut().zip(inner_words.iter_mut()) {
                        if value == "{}" {
                            let root = roots.first().cloned().unwrap_or_else(|| ".".to_owned());
                            *value = root.clone();
                            *word = Word::literal(&root);
                        }
                    }
                    for root in roots.iter().skip(1) {
                        let mut again = inner_argv.clone();
                        again.push(root.clone());
                        let mut again_words = inner_words.clone();
                        again_words.push(Word::literal(root));
                        self.deny_list(&again, &again_words);
                    }
                }
                if let Some(name) = inner_words.first() {
                    self.command_name(name);
                }
                self.deny_list(&inner_argv, &inner_words);
                let nested = self.nested;
                self.nested = true;
                self.depth += 1;
                self.wrappers(&inner_argv, &inner_words);
                self.builtin_code(&inner_argv, &inner_words);
                self.depth -= 1;
                self.nested = nested;
                self.out.wrapped.push(inner_argv);
            }
        }
    }
}

impl Analyser<'_> {
    /// The `NAME=value` words `words` starts with, each read as an assignment; their count.
    fn leading_assignments(&mut self, words: &[Word]) -> usize {
        let mut count = 0;
        for word in words {
            let (name, value) = reread::split_assignment(&word.value);
            let Some(value) = value.filter(|_| is_variable_name(name)) else {
                break;
            };
            let mut value_word = word.clone();
            value_word.value = value.to_owned();
            self.assigned(name, Some(&value_word));
            count += 1;
        }
        count
    }
}

/// Whether `name` (maybe with a subscript) is a shell variable's name.
fn is_variable_name(name: &str) -> bool {
    let base = name.split('[').next().unwrap_or_default();
    !base.is_empty()
        && !base.starts_with(|c: char| c.is_ascii_digit())
        && base.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// How a command runs another.
pub(super) enum Wrapped {
    None,
    /// Another command starts at this index of argv; `unknown_args` when more arguments
    /// arrive at run time (xargs).
    Command {
        start: usize,
        unknown_args: bool,
    },
    /// A script given as one string (`bash -c`, `eval`, `su -c`).
    Script(String),
    /// Inline code for an interpreter (`python -c`), of this kind.
    Inline(&'static str),
    /// A shell reading its commands from stdin.
    Stdin,
}

/// The index after a wrapper's own options (and `skip_positional` fixed arguments);
/// `valued` options take the next word as their value.
pub(super) fn after_options(argv: &[String], valued: &[&str], skip_positional: usize) -> usize {
    let mut index = 1;
    let mut positional = 0;
    while index < argv.len() {
        let arg = argv[index].as_str();
        if arg == "--" {
            index += 1;
            break;
        }
        if arg.starts_with('-') && arg.len() > 1 {
            let takes_value = valued.contains(&arg);
            index += if takes_value { 2 } else { 1 };
            continue;
        }
        if positional < skip_positional {
            positional += 1;
            index += 1;
            continue;
        }
        break;
    }
    index
}

pub(super) fn wrapped(argv: &[String]) -> Wrapped {
    let program = base_name(&argv[0]);
    let args = &argv[1..];
    let command_at = |start: usize| Wrapped::Command {
        start,
        unknown_args: false,
    };
    match program {
        "sudo" | "doas" => command_at(after_options(
            argv,
            &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"],
            0,
        )),
        "env" => {
            if let Some(at) = args
                .iter()
                .position(|arg| arg == "-S" || arg.starts_with("--split-string"))
            {
                let rest = args[at..]
                    .iter()
                    .skip(1)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" ");
                let value = args[at]
                    .split_once('=')
                    .map(|(_, value)| value.to_owned())
                    .unwrap_or(rest);
                return Wrapped::Script(value);
            }
            let mut start = after_options(argv, &["-u", "-C", "--unset", "--chdir", "-P"], 0);
            while argv
                .get(start)
                .is_some_and(|arg| arg.contains('=') && !arg.starts_with('='))
            {
                start += 1;
            }
            if start >= argv.len() {
                Wrapped::None
            } else {
                command_at(start)
            }
        }
        "nohup" | "setsid" | "time" | "builtin" | "stdbuf" | "strace" | "ltrace" | "unbuffer"
        | "busybox" | "catchsegv" | "valgrind" | "firejail" | "proxychains" | "torsocks"
        | "fakeroot" | "unshare" | "nsenter" | "ionice" | "watch" | "script" => {
            let start = after_options(
                argv,
                &[
                    "-n", "-c", "-o", "-e", "-i", "-s", "-u", "-t", "-p", "-d", "-E",
                ],
                0,
            );
            if program == "script" {
                Wrapped::Inline("commands")
            } else {
                command_at(start)
            }
        }
        "command" => {
            if args.iter().any(|arg| arg == "-v" || arg == "-V") {
                Wrapped::None
            } else {
                command_at(after_options(argv, &[], 0))
            }
        }
        "exec" => command_at(after_options(argv, &["-a"], 0)),
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
        "nice" => command_at(after_options(argv, &["-n", "--adjustment"], 0)),
        "timeout" => command_at(after_options(
            argv,
            &["-s", "-k", "--signal", "--kill-after"],
            1,
        )),
        "chrt" | "taskset" | "flock" | "chroot" => command_at(after_options(argv, &[], 1)),
        "xargs" | "parallel" => {
            let start = after_options(
                argv,
                &[
                    "-a",
                    "-d",
                    "-E",
                    "-e",
                    "-I",
                    "-i",
                    "-L",
                    "-l",
                    "-n",
                    "-P",
                    "-s",
                    "--arg-file",
                    "--delimiter",
                    "--max-args",
                    "--max-procs",
                ],
                0,
            );
            if start >= argv.len() {
                // Bare xargs runs echo.
                Wrapped::None
            } else {
                Wrapped::Command {
                    start,
                    unknown_args: true,
                }
            }
        }
        "find" => match args
            .iter()
            .position(|arg| matches!(arg.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"))
        {
            Some(at) => command_at(at + 2),
            None => Wrapped::None,
        },
        "bash" | "sh" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "fish" | "csh" | "tcsh"
        | "rbash" | "su" | "runuser" => {
            let mut script_next = false;
            for arg in args {
                if script_next {
                    return Wrapped::Script(arg.clone());
                }
                if arg == "-c"
                    || arg == "--command"
                    || (arg.starts_with('-') && !arg.starts_with("--") && arg.contains('c'))
                {
                    script_next = true;
                    continue;
                }
                if arg.starts_with('-') {
                    continue;
                }
                // `bash script.sh`: runs a file; like any other program, it needs a rule.
                return Wrapped::None;
            }
            if script_next {
                Wrapped::Script(String::new())
            } else if matches!(program, "su" | "runuser") {
                Wrapped::Inline("a login shell")
            } else {
                Wrapped::Stdin
            }
        }
        "git" => {
            let global: Vec<&String> = args
                .iter()
                .take_while(|arg| arg.starts_with('-') || arg.as_str() == "-C")
                .collect();
            let configures = global.iter().any(|arg| {
                arg.as_str() == "-c"
                    || arg.starts_with("--config-env")
                    || arg.starts_with("--exec-path")
                    || arg.starts_with("--git-dir")
                    || arg.starts_with("--work-tree")
                    || arg.starts_with("--namespace")
            });
            if configures {
                Wrapped::Inline("configuration (`git -c`, `--git-dir`, ...) that can run programs")
            } else {
                Wrapped::None
            }
        }
        "eval" | "source" | "." => {
            if program == "eval" {
                Wrapped::Script(args.join(" "))
            } else {
                Wrapped::Inline("a script file into this shell")
            }
        }
        "python" | "python2" | "python3" | "perl" | "ruby" | "node" | "nodejs" | "deno" | "bun"
        | "php" | "lua" | "Rscript" | "osascript" | "tclsh" | "expect" | "pwsh" => {
            let inline = args.iter().any(|arg| {
                matches!(
                    arg.as_str(),
                    "-c" | "-e" | "-E" | "-r" | "--eval" | "-p" | "--print" | "-n"
                ) || (program == "python3" && arg.starts_with("-c"))
            });
            if inline {
                Wrapped::Inline("code")
            } else {
                Wrapped::None
            }
        }
        _ => Wrapped::None,
    }
}
