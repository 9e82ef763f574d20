//! Options of safe-listed programs that make a command read what no argument names:
//! lists of file names read from a file (`wc --files0-from`, `sha256sum -c`, `strings
//! @file`), walks that follow links out of the workspace (`find -L`, `du -L`, `diff -r`),
//! values attached to an option (`grep -f.env`), and git commands that print or search
//! file contents when the repository holds a sensitive file. Each is a risk: it asks, and
//! no allow rule lifts it.

use super::*;
use arguments::{link_out, tree_holds_secrets};
use programs::GitLine;

impl Analyser<'_> {
    /// The risks of one safe-listed command's options (see the module docs).
    pub(super) fn option_risks(&mut self, argv: &[String]) {
        let program = base_name(&argv[0]);
        let (syntax, args) = if program == "git" {
            let line = GitLine::read(&argv[1..]);
            let Some(subcommand) = line.subcommand else {
                return;
            };
            let Some(syntax) = syntaxes::git_syntax(subcommand) else {
                return;
            };
            (syntax, line.rest)
        } else {
            let Some(syntax) = syntaxes::syntax(program) else {
                return;
            };
            (syntax, &argv[1..])
        };
        let mut follows = false;
        for found in options::effects(args, &syntax) {
            match found.effect {
                Effect::ReadsNames => self.risk(format!(
                    "`{program} {}` {}",
                    found.written,
                    found.effect.describe()
                )),
                Effect::FollowsLinks => follows = true,
                Effect::Runs | Effect::Writes | Effect::Assigns => {}
            }
        }
        if follows {
            self.linked_walk(program, argv);
        }
        // binutils reads more arguments from `@file`, even after `--`.
        if program == "strings"
            && let Some(file) = args.iter().find(|arg| arg.starts_with('@'))
        {
            self.risk(format!(
                "`strings {file}` reads more arguments (file names among them) from a file"
            ));
        }
        for value in options::attached_values(args, &syntax) {
            self.path_argument(&value, true);
        }
    }

    /// A walk that follows symbolic links (`find -L`, `du -L`, `ls -LR`, `tree -l`,
    /// `grep -R`, `rg -L`) asks when a tree it walks holds a link out of the workspace.
    fn linked_walk(&mut self, program: &str, argv: &[String]) {
        let roots = find_roots(argv).unwrap_or_else(|| {
            let operands: Vec<String> = argv[1..]
                .iter()
                .filter(|arg| !arg.starts_with('-'))
                .cloned()
                .collect();
            if operands.is_empty() {
                vec![".".to_owned()]
            } else {
                operands
            }
        });
        for root in roots {
            for cwd in self.cwds.clone() {
                let start = cwd.join(&root);
                if let Some(link) = link_out(self.ctx.workspace, &start) {
                    self.risk(format!(
                        "`{program}` follows symbolic links here, and {root} holds {link}"
                    ));
                }
            }
        }
    }

    /// A reading git command that prints or searches file contents asks when the
    /// repository holds a sensitive file anywhere git can print it from; `git grep
    /// --untracked`/`--no-index` when the tree holds one. Only for a repository whose
    /// config names no program ([`Analyser::git_repository`]): the check runs git.
    pub(super) fn git_contents(&mut self, argv: &[String]) {
        let line = GitLine::read(&argv[1..]);
        let (Some(subcommand), rest) = (line.subcommand, line.rest) else {
            return;
        };
        let Some(syntax) = syntaxes::git_syntax(subcommand) else {
            return;
        };
        if subcommand == "grep" && options::has(rest, &syntax, "", &["untracked", "no-index"]) {
            for cwd in self.cwds.clone() {
                if let Some(found) = tree_holds_secrets(self.ctx.workspace, &cwd, false) {
                    self.risk(format!(
                        "`git grep` searches files git does not track here, among them {found}"
                    ));
                }
            }
        }
        if subcommand == "remote" {
            for dir in line.directories(&self.cwds) {
                if let Some(why) = crate::git::remote_with_credentials(&dir) {
                    self.risk(format!("`git remote` prints remote URLs, and {why}"));
                }
            }
            return;
        }
        // `git diff --no-index a b` compares two trees of the file system, through links.
        if subcommand == "diff" && options::has(rest, &syntax, "", &["no-index"]) {
            for operand in rest.iter().filter(|arg| !arg.starts_with('-')) {
                for cwd in self.cwds.clone() {
                    let start = cwd.join(operand);
                    if let Some(found) = tree_holds_secrets(self.ctx.workspace, &start, true) {
                        self.risk(format!(
                            "`git diff --no-index` reads {operand}, which holds {found}"
                        ));
                    }
                }
            }
            // It reads the files, not the repository.
            return;
        }
        if options::has(
            rest,
            &syntax,
            "",
            &["recurse-submodules", "submodule", "ignore-submodules"],
        ) {
            self.risk(format!(
                "`git {subcommand}` looks into submodules, whose history codecrew does not check \
                 for secrets"
            ));
        }
        if !prints_contents(subcommand, rest, &syntax) {
            return;
        }
        for dir in line.directories(&self.cwds) {
            if let Some(why) = crate::tracked::sensitive_in_history(&dir) {
                self.risk(format!(
                    "`git {subcommand}` can print file contents from the repository, and {why}, \
                     which may hold secrets"
                ));
            } else if let Some(name) = crate::tracked::unreached_object(&dir, &object_names(rest)) {
                self.risk(format!(
                    "`git {subcommand}` names the object {name}, which no branch, tag or reflog \
                     reaches, so codecrew cannot tell which file it holds"
                ));
            }
        }
    }
}

/// The object ids (or abbreviations) among a git command's arguments: the hex part of
/// `abc1234`, `abc1234:path`, `abc1234^`, `a1b2..c3d4`.
fn object_names(args: &[String]) -> Vec<&str> {
    args.iter()
        .filter(|arg| !arg.starts_with('-'))
        .flat_map(|arg| arg.split(".."))
        .map(|part| part.trim_start_matches('.'))
        .map(|part| part.split([':', '^', '~', '@']).next().unwrap_or(""))
        .filter(|name| {
            (4..=64).contains(&name.len()) && name.chars().all(|c| c.is_ascii_hexdigit())
        })
        .collect()
}

/// Whether a reading git subcommand prints or searches file contents with these options.
fn prints_contents(subcommand: &str, args: &[String], syntax: &Syntax<'_>) -> bool {
    let patch = || {
        options::has(
            args,
            syntax,
            syntaxes::GIT_PATCH_SHORT,
            syntaxes::GIT_PATCH_LONG,
        )
    };
    match subcommand {
        "grep" => true,
        // A patch unless only names and numbers were asked for.
        "show" | "diff" => {
            patch()
                || !options::has(
                    args,
                    syntax,
                    "s",
                    &[
                        "stat",
                        "numstat",
                        "shortstat",
                        "dirstat",
                        "name-only",
                        "name-status",
                        "summary",
                        "compact-summary",
                        "raw",
                        "quiet",
                        "no-patch",
                    ],
                )
        }
        "log" | "whatchanged" | "reflog" | "shortlog" => patch(),
        // `status -v` shows the staged diff.
        "status" => options::has(args, syntax, "v", &["verbose"]),
        // Only the type, the size or whether it exists.
        "cat-file" => !options::has(args, syntax, "tse", &[]),
        _ => false,
    }
}
