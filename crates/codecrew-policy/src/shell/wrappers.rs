//! Commands that run other commands (`sudo`, `env`, `xargs`, `bash -c`, `find -exec`,
//! `flock -c`, `watch`, `perl -e`, git's `!` aliases, …): what they run is checked as if
//! it ran alone, in the directory it runs in. How each reads its options and where its
//! command starts is [`launchers`](super::launchers)' table; this is what the analysis
//! does with it.

use super::launch::{Cwd, Launch};
use super::launchers::launches;
use super::*;

/// What a command reads from its input as code, for the caller to look at its
/// redirections and the pipeline feeding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Input {
    Nothing,
    /// A shell's script (`bash -s <<EOF`, `. /dev/stdin`).
    Script,
    /// An interpreter's code (`python3 - <<EOF`), of this kind.
    Code(&'static str),
}

impl<'a> Analyser<'a> {
    /// Commands that run other commands: their inner command is deny-checked (and seen
    /// by deny and ask rules); running one always needs a question. Says what the
    /// command reads from its input as code.
    pub(super) fn wrappers(&mut self, argv: &[String], words: &[Word]) -> Input {
        if self.depth > MAX_WRAPPER_DEPTH {
            self.deny("commands are wrapped in each other too deeply to analyse");
            return Input::Nothing;
        }
        let program = base_name(&argv[0]).to_owned();
        if program == "git" {
            self.git_configuration(argv, words);
        }
        let mut input = Input::Nothing;
        for launch in launches(argv) {
            match launch {
                Launch::None => {}
                Launch::Unknown { from, why } => {
                    let source = sources(words.get(from..).unwrap_or_default());
                    self.risk(format!("{why}, so it cannot tell what `{program}` runs"));
                    if let Some(name) = deny_listed_token(&source).filter(|_| !self.speculative) {
                        self.deny(format!(
                            "{why}; `{name}`, which is on the deny list, is named after it, and \
                             codecrew does not run what it cannot read"
                        ));
                    }
                }
                Launch::Inline {
                    kind, stdin: true, ..
                } => input = Input::Code(kind),
                Launch::Inline { kind, code, .. } => {
                    self.risk(format!(
                        "`{program}` runs inline {kind} that codecrew cannot vet"
                    ));
                    self.unreadable_code(&code.join(" "), &program, kind);
                }
                Launch::Stdin => {
                    self.risk(format!(
                        "`{program}` runs commands read from its input, which codecrew cannot \
                         see"
                    ));
                    input = Input::Script;
                }
                Launch::ScriptFile(file) => self.sourced_file(&program, &file, words),
                Launch::Script {
                    text,
                    words: from,
                    cwd,
                } => {
                    self.risk(format!(
                        "`{program}` runs a script given as a string, hidden from the analysis"
                    ));
                    let script_words = words.get(from).unwrap_or_default();
                    if !script_words.iter().all(|word| word.literal) {
                        self.deny(format!(
                            "`{program}` runs a script only known at run time; codecrew does not \
                             run what it cannot read"
                        ));
                        continue;
                    }
                    let place = format!("the script `{program}` runs");
                    self.in_directory(&cwd, |this| this.reread(&text, Reread::Commands, &place));
                }
                Launch::Command {
                    start,
                    end,
                    unknown_args,
                    replace,
                    cwd,
                } => {
                    let end = end.min(argv.len());
                    let mut words = words.to_vec();
                    if let Some(replace) = replace.filter(|replace| !replace.is_empty()) {
                        // `xargs -I{} sh -c 'rm -rf {}'`: input takes the string's place.
                        for word in words.iter_mut().skip(start) {
                            if word.value.contains(&replace) {
                                word.value = word.value.replace(&replace, "*");
                                word.literal = false;
                            }
                        }
                    }
                    if let Some(inner) =
                        self.run_inner(argv, &words, start, end, unknown_args, &cwd)
                    {
                        input = inner;
                    }
                }
            }
        }
        input
    }

    /// The command `argv[start..end]` a wrapper runs, checked as if it ran alone in
    /// `cwd`; what it reads from its input.
    fn run_inner(
        &mut self,
        argv: &[String],
        words: &[Word],
        start: usize,
        end: usize,
        unknown_args: bool,
        cwd: &Cwd,
    ) -> Option<Input> {
        let program = base_name(&argv[0]);
        self.risk(format!(
            "`{program}` runs another command ({}), which codecrew does not vet",
            argv.get(start).map_or("?", String::as_str)
        ));
        // `sudo FOO=1 cmd`, `coproc X=1 cmd`: the command comes after the assignments,
        // which are read as assignments.
        let start = start + self.leading_assignments(words.get(start..end).unwrap_or_default());
        if start >= end {
            return None;
        }
        let mut inner_argv: Vec<String> = argv[start..end].to_vec();
        let mut inner_words: Vec<Word> = words.get(start..end).unwrap_or_default().to_vec();
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
        let input = self.in_directory(cwd, |this| {
            if let Some(name) = inner_words.first() {
                this.command_name(name);
            }
            this.deny_list(&inner_argv, &inner_words);
            // `builtin cd ..` and `command cd ..` move the shell itself.
            if matches!(program, "builtin" | "command")
                && matches!(
                    inner_argv.first().map(|name| base_name(name)),
                    Some("cd" | "pushd" | "popd")
                )
            {
                this.change_directory(&inner_words);
            }
            let nested = this.nested;
            this.nested = true;
            this.depth += 1;
            let input = this.wrappers(&inner_argv, &inner_words);
            this.builtin_code(&inner_argv, &inner_words);
            // `timeout 5 mytool rm -rf /`: what a program codecrew does not know is handed.
            if !safe(&inner_argv) {
                this.possible_commands(&inner_argv, &inner_words);
            }
            this.depth -= 1;
            this.nested = nested;
            input
        });
        self.out.wrapped.push(inner_argv);
        Some(input)
    }

    /// Runs `walk` with the directories set to those a launched command runs in.
    /// A command run in the same directory may change it for what follows (`eval 'cd
    /// ..'`); one run elsewhere is another process, whose `cd` does not.
    pub(super) fn in_directory<R>(&mut self, cwd: &Cwd, walk: impl FnOnce(&mut Self) -> R) -> R {
        let saved = (self.cwds.clone(), self.cwd_unknown);
        match cwd {
            Cwd::Same => return walk(self),
            Cwd::Unknown => self.cwd_unknown = true,
            Cwd::Dir(dir) => self.enter(dir),
        }
        let result = walk(self);
        (self.cwds, self.cwd_unknown) = saved;
        result
    }

    /// A shell that reads a script file: the file is read as the script when it lies in
    /// the workspace; one codecrew cannot read is text only known at run time, and the
    /// line that may have written it is what the fail-safe reads.
    pub(super) fn sourced_file(&mut self, program: &str, file: &str, words: &[Word]) {
        self.risk(format!("`{program}` runs the script file {file}"));
        let place = format!("the script file {file}");
        if !words.iter().all(|word| word.literal) {
            // `source <(…)` and its kind: builtin_code reads what writes it; what it
            // does to this shell's directory is not known.
            if matches!(program, "source" | ".") {
                self.cwd_unknown = true;
            }
            return;
        }
        match self.read_script(file) {
            Some(script) => self.reread(&script, Reread::Commands, &place),
            // Words that only may be a command name no file to read (`gh pr create
            // --title 'do not run sh scripts'`).
            None if self.speculative => {}
            None => {
                // The shell that runs the file is no sign of what it holds.
                let line = self.line.clone();
                self.unreadable_output(&line, &place);
                // A file sourced into this shell may change its directory.
                if matches!(program, "source" | ".") {
                    self.cwd_unknown = true;
                }
            }
        }
    }

    /// The text of a script file in the workspace, when every directory the command may
    /// stand in names one readable file of at most [`MAX_COMMAND_BYTES`].
    pub(super) fn read_script(&self, file: &str) -> Option<String> {
        if self.cwd_unknown {
            return None;
        }
        let mut text = None;
        for cwd in &self.cwds {
            let joined = cwd.join(file);
            let resolved = resolve(self.ctx.workspace, joined.to_str()?, Access::Read).ok()?;
            let meta = std::fs::metadata(&resolved).ok()?;
            if !meta.is_file() || meta.len() > MAX_COMMAND_BYTES as u64 {
                return None;
            }
            let read = std::fs::read_to_string(&resolved).ok()?;
            if text.as_ref().is_some_and(|earlier| *earlier != read) {
                return None;
            }
            text = Some(read);
        }
        text
    }

    /// Inline code of an interpreter that names a deny-listed program: denied, since
    /// codecrew cannot read what the code does with it.
    fn unreadable_code(&mut self, source: &str, program: &str, kind: &str) {
        if let Some(name) = deny_listed_output(source) {
            self.deny(format!(
                "the inline {kind} `{program}` runs names `{name}`, which is on the deny list; \
                 codecrew does not read {kind} and does not run what it cannot read"
            ));
        }
    }

    /// `git -c name=value`, `--config-env=name=VAR`: git runs a `!` alias, a pager, an
    /// editor, an ssh command, a diff or merge driver … from its configuration, through a
    /// shell, at the top of the work tree. Every value is read as such a script.
    fn git_configuration(&mut self, argv: &[String], words: &[Word]) {
        let mut configures = false;
        let mut index = 1;
        while let Some(arg) = argv.get(index) {
            if !arg.starts_with('-') || arg == "--" {
                break;
            }
            let (pair, consumed) = match arg.as_str() {
                "-c" => (
                    argv.get(index + 1).map(|value| (value.clone(), index + 1)),
                    2,
                ),
                "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" => {
                    configures |= arg != "-C";
                    (None, 2)
                }
                _ => {
                    if let Some(config) = arg.strip_prefix("--config-env=") {
                        configures = true;
                        let value = config.split_once('=').map(|(key, variable)| {
                            let value = self
                                .env_prefix
                                .get(variable)
                                .or_else(|| self.vars.get(variable))
                                .cloned()
                                .unwrap_or_default();
                            (format!("{key}={value}"), index)
                        });
                        (value, 1)
                    } else {
                        configures |= arg.starts_with("--exec-path")
                            || arg.starts_with("--git-dir")
                            || arg.starts_with("--work-tree")
                            || arg.starts_with("--namespace");
                        (None, 1)
                    }
                }
            };
            if let Some((pair, at)) = pair {
                configures = true;
                let literal = words.get(at).is_none_or(|word| word.literal);
                self.git_value(
                    &pair,
                    literal,
                    words.get(at).map_or("", |word| &word.source),
                );
            }
            index += consumed;
        }
        if configures {
            self.risk(
                "`git` is given configuration (`git -c`, `--git-dir`, ...) that can run programs",
            );
        }
        // `git config alias.x '!…'` writes an alias the next `git x` runs.
        if argv.get(index).is_some_and(|sub| sub == "config") {
            let operands: Vec<usize> = (index + 1..argv.len())
                .filter(|at| {
                    !argv[*at].starts_with('-')
                        && !matches!(argv[*at].as_str(), "set" | "get" | "unset")
                })
                .collect();
            for at in operands.iter().skip(1) {
                let literal = words.get(*at).is_none_or(|word| word.literal);
                let source = words
                    .get(*at)
                    .map_or("", |word| word.source.as_str())
                    .to_owned();
                self.git_value(&format!("={}", argv[*at]), literal, &source);
            }
        }
    }

    /// One `name=value` of git's configuration: a `!` alias or a program git runs.
    pub(super) fn git_value(&mut self, pair: &str, literal: bool, source: &str) {
        let place = "a git configuration value, which git may run as a command";
        if !literal {
            self.unreadable(source, place);
            return;
        }
        let value = pair.split_once('=').map_or("", |(_, value)| value);
        let script = value.strip_prefix('!').unwrap_or(value);
        if script.trim().is_empty() {
            return;
        }
        self.in_directory(&Cwd::Unknown, |this| {
            this.reread(script, Reread::Commands, place);
        });
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

/// The words as written, joined: what the fail-safe reads.
fn sources(words: &[Word]) -> String {
    words
        .iter()
        .map(|word| {
            if word.source.is_empty() {
                word.value.as_str()
            } else {
                word.source.as_str()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `name` (maybe with a subscript) is a shell variable's name.
fn is_variable_name(name: &str) -> bool {
    let base = name.split('[').next().unwrap_or_default();
    !base.is_empty()
        && !base.starts_with(|c: char| c.is_ascii_digit())
        && base.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}
