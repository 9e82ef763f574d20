//! Interpreters given code inline (`perl -e`, `python3 -c`, `node -e`, an awk program
//! that calls `system`, a sed script, `vim -c '!…'`) or on their input (`python3 - <<EOF`).
//!
//! Their code is not bash, and codecrew does not read it: it is text whose meaning the
//! analysis cannot know, so the deny list treats it as it treats any other unreadable
//! part of a line. When the code names a deny-listed program (`system("rm -rf .")`), the
//! line is denied; otherwise running it asks, as any program off the safe list does.

use super::launch::Launch;

/// How `program` runs code it is given inline or on its input; None for a program that
/// is not an interpreter, or one given only a script file (which needs a rule, as any
/// other program does).
pub(super) fn launch(program: &str, args: &[String]) -> Option<Launch> {
    let everything = || args.to_vec();
    let inline = |kind: &'static str| {
        Some(Launch::Inline {
            kind,
            code: everything(),
            stdin: false,
        })
    };
    let from_input = |kind: &'static str| {
        Some(Launch::Inline {
            kind,
            code: everything(),
            stdin: true,
        })
    };
    if program.starts_with("python") || program.starts_with("pypy") {
        return python(args);
    }
    match program {
        "perl" | "ruby" | "lua" | "luajit" | "Rscript" | "R" | "osascript" | "expect" | "php"
        | "node" | "nodejs" | "bun" | "deno" | "tclsh" | "wish" | "pwsh" | "powershell" => {
            let code_letters: &[char] = match program {
                "perl" => &['e', 'E'],
                "php" => &['r', 'R', 'B', 'E', 'F'],
                "node" | "nodejs" | "bun" => &['e', 'p'],
                "expect" => &['c'],
                "pwsh" | "powershell" => &['c', 'C', 'e', 'E'],
                _ => &['e'],
            };
            let gives_code = args.iter().any(|arg| {
                matches!(
                    arg.as_str(),
                    "--eval" | "--print" | "-Command" | "-command" | "-EncodedCommand" | "eval"
                ) || arg.strip_prefix('-').is_some_and(|letters| {
                    !letters.starts_with('-') && letters.contains(code_letters)
                })
            });
            let file = args
                .iter()
                .find(|arg| !arg.starts_with('-'))
                .is_some_and(|_| !gives_code);
            if gives_code {
                inline("code")
            } else if file {
                None
            } else {
                // No code and no script: the interpreter reads its program from its input.
                from_input("code")
            }
        }
        // awk runs commands only through `system()` and pipes (`print | "cmd"`,
        // `"cmd" | getline`).
        "awk" | "gawk" | "mawk" | "nawk" | "original-awk" => {
            let runs = args
                .iter()
                .any(|arg| arg.contains("system") || arg.contains('|'));
            if runs { inline("awk program") } else { None }
        }
        // GNU sed's `e` command and `s///e` run the pattern space; `--sandbox` refuses
        // them.
        "sed" | "gsed" => {
            if args.iter().any(|arg| arg == "--sandbox") {
                None
            } else {
                inline("sed script")
            }
        }
        "vim" | "vi" | "nvim" | "ex" | "view" | "gvim" | "vimdiff" | "rvim" => {
            let commands = args.iter().any(|arg| {
                arg.starts_with('+') || matches!(arg.as_str(), "-c" | "--cmd" | "-S" | "-s")
            });
            if commands {
                inline("editor commands")
            } else {
                None
            }
        }
        "emacs" => {
            let code = args.iter().any(|arg| {
                matches!(
                    arg.trim_start_matches('-'),
                    "eval" | "execute" | "l" | "load" | "batch" | "script" | "x"
                ) || arg.starts_with("--eval=")
            });
            if code { inline("Lisp code") } else { None }
        }
        "gdb" => {
            let code = args.iter().any(|arg| {
                matches!(
                    arg.trim_start_matches('-'),
                    "ex" | "eval-command" | "x" | "command" | "batch" | "iex" | "init-eval-command"
                ) || arg.starts_with("--eval-command=")
            });
            if code {
                inline("debugger commands")
            } else {
                None
            }
        }
        "make" | "gmake" => {
            let from_stdin = args
                .windows(2)
                .any(|pair| pair[0] == "-f" && matches!(pair[1].as_str(), "-" | "/dev/stdin"))
                || args.iter().any(|arg| arg == "-f-" || arg == "--file=-");
            let eval = args
                .iter()
                .any(|arg| arg == "-E" || arg.starts_with("--eval"));
            if from_stdin {
                from_input("makefile")
            } else if eval {
                inline("makefile text")
            } else {
                None
            }
        }
        _ => None,
    }
}

/// `python -c CODE`, `python -Ic CODE`, `python -cCODE`, `python -` (code on its input),
/// `python` alone (the same); `python -m mod` and `python file.py` run files.
fn python(args: &[String]) -> Option<Launch> {
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        if arg == "-" {
            break;
        }
        if arg == "--" {
            index += 1;
            break;
        }
        if arg.starts_with("--") {
            // `--check-hash-based-pycs MODE` is the only long option with a value.
            index += if arg == "--check-hash-based-pycs" {
                2
            } else {
                1
            };
            continue;
        }
        let Some(letters) = arg.strip_prefix('-') else {
            break;
        };
        for (at, letter) in letters.char_indices() {
            match letter {
                'c' => {
                    return Some(Launch::Inline {
                        kind: "code",
                        code: args[index..].to_vec(),
                        stdin: false,
                    });
                }
                'm' => return None,
                'W' | 'X' => {
                    if at + 1 == letters.len() {
                        index += 1;
                    }
                    break;
                }
                _ => {}
            }
        }
        index += 1;
    }
    match args.get(index) {
        Some(arg) if arg != "-" => None,
        _ => Some(Launch::Inline {
            kind: "code",
            code: args.to_vec(),
            stdin: true,
        }),
    }
}
