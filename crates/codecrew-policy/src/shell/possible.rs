//! The arguments of a program codecrew does not know, read as a command it may run.
//!
//! No table lists every program that runs its arguments (`cargo run -- …`, `nix-shell
//! --run '…'`, `tmux new '…'`, `docker exec c …`, `prlimit`, `cpulimit`, …). So for a
//! program off the safe list that [`launchers`](super::launchers) does not know, each
//! run of words that starts with a deny-listed program, a shell or a launcher, and each
//! argument that reads as a script, is checked as a command that program may run.
//! Only what the deny list finds there counts: the program needs a question anyway,
//! and words that do not parse as a command (prose) are left alone.

use super::launchers::is_launcher;
use super::*;

/// Programs known to run none of their arguments, beyond the safe list.
const INERT: &[&str] = &[
    "echo",
    "printf",
    "true",
    "false",
    "test",
    "[",
    ":",
    "cd",
    "pushd",
    "popd",
    "export",
    "declare",
    "local",
    "readonly",
    "typeset",
    "unset",
    "read",
    "mapfile",
    "readarray",
    "shopt",
    "set",
    "let",
    "exit",
    "return",
    "shift",
    "alias",
    "unalias",
    "hash",
    "type",
    "which",
    "help",
    "man",
    "info",
    "trap",
    "complete",
    "compgen",
    "bind",
    "history",
    "fc",
    "git",
    "mkdir",
    "touch",
    "cp",
    "ln",
    "install",
    "tee",
    "printenv",
    "basename",
];

impl<'a> Analyser<'a> {
    /// Reads the arguments of `argv`, a program off the safe list, as commands it may run.
    pub(super) fn possible_commands(&mut self, argv: &[String], words: &[Word]) {
        let program = base_name(&argv[0]);
        if INERT.contains(&program) || is_launcher(argv) {
            return;
        }
        let place = format!("the arguments of `{program}`, which it may run as a command");
        for start in 1..argv.len() {
            let Some(word) = words.get(start).filter(|word| word.literal) else {
                continue;
            };
            let name = base_name(&word.value);
            if deny::names_a_program_it_checks(name) || is_launcher(&argv[start..]) {
                let inner_argv = &argv[start..];
                let inner_words = &words[start..];
                self.speculate(&place, |this| {
                    this.deny_list(inner_argv, inner_words);
                    this.wrappers(inner_argv, inner_words);
                });
            }
            if word.value.contains(char::is_whitespace) {
                let text = word.value.clone();
                self.speculate(&place, |this| {
                    this.reread(
                        &text,
                        Reread::Commands,
                        "an argument that reads as a script",
                    );
                });
            }
        }
    }

    /// Runs `walk` over words that only may be a command: what it denies counts, the
    /// rest of what it finds does not.
    fn speculate(&mut self, place: &str, walk: impl FnOnce(&mut Self)) {
        let risks = self.out.risks.len();
        let wrapped = self.out.wrapped.len();
        let commands = self.out.commands.len();
        let (speculative, nested) = (self.speculative, self.nested);
        let directories = (self.cwds.clone(), self.cwd_unknown, self.cdable_vars);
        let aliases = self.aliases.clone();
        self.speculative = true;
        self.nested = true;
        self.within(place, walk);
        self.speculative = speculative;
        self.nested = nested;
        (self.cwds, self.cwd_unknown, self.cdable_vars) = directories;
        self.aliases = aliases;
        self.out.risks.truncate(risks);
        self.out.wrapped.truncate(wrapped);
        self.out.commands.truncate(commands);
    }
}
