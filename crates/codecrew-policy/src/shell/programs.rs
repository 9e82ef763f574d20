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
/// programs or reach the network. Paths they name are checked separately.
pub fn safe(argv: &[String]) -> bool {
    let Some(program) = argv.first() else {
        return false;
    };
    // `./ls` or `/tmp/git` may be anything.
    if program.contains('/') {
        return false;
    }
    let args = &argv[1..];
    let options: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .take_while(|arg| *arg != "--")
        .filter(|arg| arg.starts_with('-') && arg.len() > 1)
        .collect();
    let positional = args.iter().filter(|arg| !arg.starts_with('-')).count();
    let short_has = |letter: char| {
        options
            .iter()
            .any(|option| !option.starts_with("--") && option.contains(letter))
    };
    let long_has = |name: &str| options.iter().any(|option| option.starts_with(name));
    match program.as_str() {
        "ls" | "pwd" | "cat" | "head" | "tail" | "wc" | "echo" | "true" | "false" | "nl"
        | "tac" | "rev" | "cut" | "tr" | "column" | "basename" | "dirname" | "realpath"
        | "readlink" | "stat" | "du" | "df" | "which" | "whoami" | "id" | "uname" | "grep"
        | "egrep" | "fgrep" | "diff" | "cmp" | "comm" | "md5sum" | "sha1sum" | "sha256sum"
        | "sha512sum" | "b2sum" | "cksum" | "od" | "hexdump" | "seq" | "printf" | "test" | "["
        | "jq" | "strings" | "sleep" | "fold" | "paste" | "fmt" | "expand" | "unexpand" | "cd"
        | "wait" => true,
        "file" => !short_has('C') && !long_has("--compile"),
        "sort" => !short_has('o') && !long_has("--output") && !long_has("--compress-program"),
        "uniq" | "xxd" => positional <= 1,
        "tree" => !options.contains(&"-o"),
        "rg" => !long_has("--pre") && !short_has('z') && !long_has("--search-zip"),
        "find" => !args.iter().any(|arg| {
            matches!(
                arg.as_str(),
                "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-delete"
                    | "-fprint"
                    | "-fprint0"
                    | "-fprintf"
                    | "-fls"
            )
        }),
        "date" => !short_has('s') && !long_has("--set"),
        "hostname" => args.is_empty(),
        "git" => git_safe(args),
        _ => false,
    }
}

/// `git` with read-only subcommands, without options that change where git looks for
/// its repository or configuration, run external programs or write files.
pub(super) fn git_safe(args: &[String]) -> bool {
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        match arg.as_str() {
            "--no-pager"
            | "-P"
            | "--no-optional-locks"
            | "--literal-pathspecs"
            | "--no-replace-objects" => index += 1,
            "-C" => index += 2,
            other if other.starts_with('-') => return false,
            _ => break,
        }
    }
    let Some(subcommand) = args.get(index) else {
        return false;
    };
    let rest = &args[index + 1..];
    let forbidden = |arg: &String| {
        arg.starts_with("--output")
            || arg == "--ext-diff"
            || arg.starts_with("--exec")
            || arg.starts_with("--upload-pack")
            || arg.starts_with("--open-files-in-pager")
            || (arg.starts_with("-O") && subcommand == "grep")
    };
    if rest.iter().any(forbidden) {
        return false;
    }
    let all_options = rest.iter().all(|arg| arg.starts_with('-'));
    match subcommand.as_str() {
        "status" | "diff" | "log" | "show" | "ls-files" | "rev-parse" | "blame" | "shortlog"
        | "describe" | "grep" | "show-ref" | "ls-tree" | "cat-file" | "rev-list" | "merge-base"
        | "whatchanged" | "reflog" => {
            // `git reflog expire/delete` write.
            !(subcommand == "reflog"
                && rest
                    .first()
                    .is_some_and(|arg| arg == "expire" || arg == "delete"))
        }
        "branch" => {
            all_options
                && !rest.iter().any(|arg| {
                    matches!(
                        arg.as_str(),
                        "-d" | "-D"
                            | "-m"
                            | "-M"
                            | "-c"
                            | "-C"
                            | "-f"
                            | "-u"
                            | "--delete"
                            | "--move"
                            | "--copy"
                            | "--force"
                            | "--unset-upstream"
                            | "--edit-description"
                    ) || arg.starts_with("--set-upstream")
                })
        }
        "tag" => {
            rest.is_empty()
                || (rest.iter().any(|arg| arg == "-l" || arg == "--list")
                    && !rest.iter().any(|arg| {
                        matches!(arg.as_str(), "-d" | "-a" | "-s" | "-m" | "-f" | "--delete")
                    }))
        }
        "remote" => rest.is_empty() || (rest.len() == 1 && rest[0] == "-v"),
        _ => false,
    }
}

impl Analyser<'_> {
    /// A reading git command asks when the repository it would use names a program in its
    /// config or hooks: git would run it.
    pub(super) fn git_repository(&mut self, argv: &[String]) {
        for cwd in self.cwds.clone() {
            let mut dir = cwd;
            let mut args = argv.iter().skip(1);
            // `git -C <dir>` (the only option git_safe lets change the directory).
            while let Some(arg) = args.next() {
                match arg.as_str() {
                    "-C" => match args.next() {
                        Some(path) => dir = dir.join(path),
                        None => break,
                    },
                    other if other.starts_with('-') => {}
                    _ => break,
                }
            }
            if let Some(why) = crate::git::program_in_repository(&dir) {
                self.risk(why);
            }
        }
    }
}
