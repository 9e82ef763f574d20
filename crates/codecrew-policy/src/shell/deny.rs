//! The built-in deny list: what never runs, whatever the flags.

use super::*;

impl<'a> Analyser<'a> {
    /// The deny list, on a command's words (`words` gives what is literal).
    pub(super) fn deny_list(&mut self, argv: &[String], words: &[Word]) {
        let literal = |index: usize| {
            words
                .get(index)
                .is_none_or(|word| word.literal && !word.brace())
        };
        let home = |index: usize| {
            words
                .get(index)
                .is_some_and(|word| word.home || (word.tilde && is_home_word(&word.value)))
        };
        let program = base_name(&argv[0]);
        let args = &argv[1..];
        let (options, targets) = split_options(args);
        let short_has = |letters: &[char]| {
            options.iter().any(|option| {
                !option.starts_with("--") && option.chars().skip(1).any(|c| letters.contains(&c))
            })
        };
        match program {
            "rm" | "chmod" | "chown" | "chgrp" | "mv" | "shred" => {
                if options.iter().any(|option| option == "--no-preserve-root") {
                    self.deny(format!(
                        "`{program} --no-preserve-root` is on the deny list"
                    ));
                    return;
                }
                let recursive = matches!(program, "rm" | "chmod" | "chown" | "chgrp")
                    && (short_has(&['r', 'R']) || options.iter().any(|o| o == "--recursive"));
                for (position, target) in targets.iter() {
                    let index = position + 1;
                    // `rm -rf w*` from the workspace's parent: each file the glob
                    // matches from each directory the command may stand in.
                    let globbed = words.get(index).is_some_and(|word| word.glob)
                        && self.glob_names_a_dangerous_directory(target);
                    let rootish = if globbed {
                        true
                    } else if !literal(index) {
                        home(index)
                            || (recursive && program == "rm")
                            || (recursive && target.starts_with('/'))
                    } else if words.get(index).is_some_and(|word| word.tilde) {
                        is_home_word(target)
                    } else {
                        self.is_rootish(target)
                    };
                    let applies =
                        recursive || program == "mv" || self.is_root(target, literal(index));
                    // After a `cd` the analysis cannot follow, a relative path may name
                    // the workspace or a folder that holds it.
                    let lost = self.cwd_unknown
                        && literal(index)
                        && !target.starts_with('/')
                        && !words.get(index).is_some_and(|word| word.tilde);
                    if lost && applies && !rootish {
                        self.deny(format!(
                            "`{} {}` on {target} after a change of directory codecrew cannot \
                             follow is on the deny list (the path may name the workspace or a \
                             folder that holds it)",
                            program,
                            options.join(" ")
                        ));
                    }
                    if rootish && applies {
                        // A target only known at run time is named as written (`"$PWD"`).
                        let shown = match words.get(index) {
                            Some(word) if !literal(index) && !word.source.is_empty() => {
                                word.source.as_str()
                            }
                            _ => target.as_str(),
                        };
                        self.deny(format!(
                            "`{} {}` on {shown} is on the deny list (it would destroy the \
                             system, your home or the whole workspace)",
                            program,
                            options.join(" ")
                        ));
                    }
                }
                if program == "shred" {
                    for (_, target) in &targets {
                        if target.starts_with("/dev/") {
                            self.deny(format!("`shred {target}` overwrites a device"));
                        }
                    }
                }
            }
            "dd" => {
                for (index, arg) in args.iter().enumerate() {
                    if let Some(output) = arg.strip_prefix("of=") {
                        if !literal(index + 1) {
                            self.deny("`dd of=` a file only known at run time is on the deny list");
                        } else if output.starts_with("/dev/") && !is_harmless_device(output) {
                            self.deny(format!("`dd of={output}` writes to a device"));
                        }
                    }
                }
            }
            "find" => {
                let roots: Vec<&String> = args
                    .iter()
                    .take_while(|arg| {
                        !arg.starts_with('-') && arg.as_str() != "(" && arg.as_str() != "!"
                    })
                    .collect();
                let deletes = args.iter().any(|arg| arg == "-delete");
                let lost = self.cwd_unknown
                    && (roots.is_empty() || roots.iter().any(|root| !root.starts_with('/')));
                if deletes && lost {
                    self.deny(
                        "`find -delete` after a change of directory codecrew cannot follow is on \
                         the deny list",
                    );
                }
                if deletes && roots.iter().any(|root| self.is_rootish(root)) {
                    self.deny("`find -delete` from a system directory, your home or the workspace root is on the deny list");
                }
            }
            "kill" if args.len() >= 2 && args.iter().any(|arg| arg == "-1") => {
                self.deny("`kill -1` signals every process you own");
            }
            "shutdown" | "reboot" | "halt" | "poweroff" => {
                self.deny(format!("`{program}` is on the deny list"));
            }
            "init" | "telinit" if args.iter().any(|arg| arg == "0" || arg == "6") => {
                self.deny(format!(
                    "`{program} {}` is on the deny list",
                    args.join(" ")
                ));
            }
            "systemctl"
                if args.iter().any(|arg| {
                    matches!(arg.as_str(), "poweroff" | "reboot" | "halt" | "kexec")
                }) =>
            {
                self.deny("`systemctl poweroff/reboot/halt` is on the deny list");
            }
            _ if is_disk_tool(program) => {
                self.deny(format!(
                    "`{program}` formats or repartitions disks and is on the deny list"
                ));
            }
            _ => {}
        }
    }
}

impl Analyser<'_> {
    /// Whether a glob, expanded against every directory the command may stand in,
    /// matches a directory the deny list keeps (or more files than it expands).
    fn glob_names_a_dangerous_directory(&self, pattern: &str) -> bool {
        self.cwds.iter().any(|cwd| match expand_glob(cwd, pattern) {
            Some(matches) => matches.iter().any(|found| {
                let lexical = normalise(cwd, &found.to_string_lossy());
                let canonical = found.canonicalize().ok();
                [Some(lexical), canonical]
                    .into_iter()
                    .flatten()
                    .any(|path| self.dangerous_directory(&path))
            }),
            None => true,
        })
    }
}

/// Variables that change how programs are loaded or how shells start: the start-up hooks
/// the environment scrub removes, and more.
pub(super) fn is_loader_variable(name: &str) -> bool {
    secrets::is_start_up_hook(name)
        || name.starts_with("LD_")
        || name.starts_with("DYLD_")
        || name.starts_with("BASH_")
        || matches!(
            name,
            "PATH"
                | "IFS"
                | "PS4"
                | "GLOBIGNORE"
                | "CDPATH"
                | "PYTHONPATH"
                | "PYTHONSTARTUP"
                | "NODE_OPTIONS"
                | "PERL5OPT"
                | "RUBYOPT"
                | "GIT_SSH_COMMAND"
                | "GIT_EXTERNAL_DIFF"
                | "GIT_PAGER"
                | "PAGER"
                | "EDITOR"
                | "VISUAL"
                | "GIT_CONFIG_GLOBAL"
        )
}

/// Whether the deny list reads a command of this program (`rm`, `dd`, `find`, …).
pub(super) fn names_a_program_it_checks(program: &str) -> bool {
    matches!(
        program,
        "rm" | "chmod"
            | "chown"
            | "chgrp"
            | "mv"
            | "shred"
            | "dd"
            | "find"
            | "kill"
            | "shutdown"
            | "reboot"
            | "halt"
            | "poweroff"
            | "init"
            | "telinit"
            | "systemctl"
    ) || is_disk_tool(program)
}

pub(super) fn is_disk_tool(program: &str) -> bool {
    program.starts_with("mkfs")
        || matches!(
            program,
            "mke2fs"
                | "mkswap"
                | "mkntfs"
                | "wipefs"
                | "fdisk"
                | "sfdisk"
                | "cfdisk"
                | "gdisk"
                | "sgdisk"
                | "parted"
                | "blkdiscard"
                | "dmsetup"
                | "cryptsetup"
        )
}

/// For a line that does not parse, or text bash runs that is only known at run time: a
/// deny-listed program named anywhere in it. Shells and `eval` count, since they may run
/// anything the analysis did not see.
pub(super) fn deny_listed_token(text: &str) -> Option<String> {
    deny_listed_name(text, true)
}

/// For commands whose output a shell runs (`… | bash`, `source <(…)`): a deny-listed
/// program they name may be what they print. A shell they name is no sign of that
/// (`kubectl completion bash`): the commands themselves are analysed.
pub(super) fn deny_listed_output(text: &str) -> Option<String> {
    deny_listed_name(text, false)
}

fn deny_listed_name(text: &str, shells: bool) -> Option<String> {
    // Quotes and backslashes only join what bash reads as one word (`r"m"`, `\rm`).
    let unquoted: String = text.chars().filter(|c| !"'\"\\".contains(*c)).collect();
    let tokens = unquoted
        .split(|c: char| c.is_whitespace() || ";|&(){}<>`$=!,:".contains(c))
        .filter(|token| !token.is_empty());
    for token in tokens {
        let name = base_name(token);
        if !shells && matches!(name, "eval" | "bash" | "sh") {
            continue;
        }
        if matches!(
            name,
            "rm" | "dd"
                | "chmod"
                | "chown"
                | "chgrp"
                | "shred"
                | "shutdown"
                | "reboot"
                | "halt"
                | "poweroff"
                | "kill"
                | "mv"
                | "eval"
                | "bash"
                | "sh"
        ) || is_disk_tool(name)
        {
            return Some(name.to_owned());
        }
    }
    if text.contains("(){") || text.contains("() {") {
        return Some("a function definition".to_owned());
    }
    None
}
