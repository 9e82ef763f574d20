//! Text that bash reads again: as commands (`bash -c`, `eval`, a trap handler,
//! `PROMPT_COMMAND`, a here-document fed to a shell) or for its expansions (a prompt
//! string, `BASH_ENV`, a pattern, an array subscript or arithmetic given as text).
//!
//! Every such text goes through one funnel, [`Analyser::reread`]: a fresh analyser with the
//! same deny list, the variables known so far and the same directories reads it, so what
//! bash would run from it is checked as if it stood on the line. Text only known at run
//! time cannot be read; it is denied when it names a deny-listed program
//! ([`Analyser::unreadable`]), so `--yes` never runs one hidden there.

use super::launchers;
use super::words::next_substitution;
use super::*;

/// Most substitutions tried in one text before the rest is only scanned for names.
const MAX_SUBSTITUTIONS: usize = 64;

/// How bash reads a text again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reread {
    /// As a script of commands.
    Commands,
    /// For its expansions: parameter and arithmetic expansion, command substitution.
    Expansions,
}

/// What bash, or a program it starts, does with a variable's value: run it as commands
/// (`PROMPT_COMMAND`; git and others run their pager, editor and ssh through `sh -c`), or
/// expand it (prompt strings before they are shown, `BASH_ENV` and `ENV` before the file
/// is read).
pub(super) fn code_variable(name: &str) -> Option<Reread> {
    match name {
        "PROMPT_COMMAND"
        | "GIT_SSH_COMMAND"
        | "GIT_PAGER"
        | "GIT_EDITOR"
        | "GIT_SEQUENCE_EDITOR"
        | "GIT_EXTERNAL_DIFF"
        | "PAGER"
        | "MANPAGER"
        | "EDITOR"
        | "VISUAL" => Some(Reread::Commands),
        "PS0" | "PS1" | "PS2" | "PS3" | "PS4" | "BASH_ENV" | "ENV" => Some(Reread::Expansions),
        _ => None,
    }
}

impl<'a> Analyser<'a> {
    /// Hands `text`, which bash reads again as `how` says, to an analyser with the same
    /// deny list, variables and directories; `place` says where it was found.
    pub(super) fn reread(&mut self, text: &str, how: Reread, place: &str) {
        if how == Reread::Expansions && !text.contains(['$', '`']) {
            return;
        }
        self.risk(format!("bash reads {place} again as code"));
        if self.depth >= MAX_WRAPPER_DEPTH {
            self.deny("text that bash reads again is nested too deeply to analyse");
            return;
        }
        let mut inner = Analyser::new(self.ctx, self.cwds.clone(), self.depth + 1);
        inner.cwd_unknown = self.cwd_unknown;
        inner.aliases = self.aliases.clone();
        inner.cdable_vars = self.cdable_vars;
        inner.line = self.line.clone();
        inner.speculative = self.speculative;
        inner.vars = self.vars.clone();
        inner.places = self.places.clone();
        inner.places.push(place.to_owned());
        match how {
            Reread::Commands => inner.script(text),
            Reread::Expansions => inner.expansions(text),
        }
        // What the text did to the shell it ran in (`eval 'cd ..'`, an alias defined in a
        // sourced script) holds after it; for a child shell this only widens the check.
        self.cwds.extend(inner.cwds.iter().cloned());
        self.cwds.sort();
        self.cwds.dedup();
        self.cwd_unknown |= inner.cwd_unknown;
        self.cdable_vars |= inner.cdable_vars;
        self.aliases.extend(inner.aliases.drain());
        self.out.deny.append(&mut inner.out.deny);
        self.out.hints.append(&mut inner.out.hints);
        self.out.wrapped.append(&mut inner.out.wrapped);
        self.out
            .wrapped
            .extend(inner.out.commands.into_iter().map(|command| command.words));
    }

    /// The fail-safe for text bash runs or expands but that is only known at run time
    /// (`source` is the text as written): a deny-listed program named in it is denied.
    pub(super) fn unreadable(&mut self, source: &str, place: &str) {
        self.risk(format!("{place} is only known at run time"));
        self.deny_named(deny_listed_token(source), place);
    }

    /// The fail-safe for a script a shell reads from commands' output (`source` is their
    /// text): a deny-listed program they name may be what they print.
    pub(super) fn unreadable_output(&mut self, source: &str, place: &str) {
        self.risk(format!("{place} is only known at run time"));
        self.deny_named(deny_listed_output(source), place);
    }

    fn deny_named(&mut self, name: Option<String>, place: &str) {
        if let Some(name) = name {
            self.deny(format!(
                "`{name}`, which is on the deny list, is named in {place}, which is only \
                 known at run time; codecrew does not run what it cannot read"
            ));
        }
    }

    /// Reads `text` as bash expands it: each `$(`, `${` and `` ` `` is parsed from where it
    /// starts and analysed; what does not parse is scanned for deny-listed names.
    fn expansions(&mut self, text: &str) {
        if text.len() > MAX_COMMAND_BYTES {
            self.deny(format!(
                "text bash expands is {} bytes long; codecrew analyses at most \
                 {MAX_COMMAND_BYTES}",
                text.len()
            ));
            return;
        }
        let mut from = 0;
        let mut tries = 0;
        while let Some(start) = next_substitution(text, from) {
            let rest = text.get(start..).unwrap_or_default();
            tries += 1;
            if tries > MAX_SUBSTITUTIONS {
                self.unparsed_expansion(rest);
                return;
            }
            from = match self.first_substitution(rest) {
                Some(length) => start + length.max(1),
                None => {
                    // What does not parse from here is scanned, and what starts inside
                    // it is tried in turn (`${x^$(…)}` the grammar cannot read holds a
                    // `$(…)` it can).
                    self.unparsed_expansion(rest);
                    start + 1
                }
            };
        }
    }

    /// Analyses the substitution `text` starts with; its length in bytes, or None when it
    /// does not parse.
    fn first_substitution(&mut self, text: &str) -> Option<usize> {
        const PREFIX: &str = ": ";
        let script = format!("{PREFIX}{text}");
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .ok()?;
        let tree = parser.parse(&script, None)?;
        let found = substitution_at(tree.root_node(), PREFIX.len())?;
        if found.has_error() {
            return None;
        }
        self.node(found, script.as_bytes(), 0);
        Some(found.end_byte().saturating_sub(PREFIX.len()))
    }

    fn unparsed_expansion(&mut self, text: &str) {
        self.risk("text bash expands does not parse, so it cannot be checked");
        if let Some(name) = deny_listed_token(text) {
            self.deny(format!(
                "text bash expands names `{name}`, which is on the deny list, where codecrew \
                 cannot parse it"
            ));
        }
    }

    /// A variable set to `value` (also through `export`, `declare`, `env`): when bash runs
    /// or expands that variable's value ([`code_variable`], an exported function), the
    /// value is read as bash reads it. Any other value holding a command substitution is
    /// read for its expansions too: arithmetic, subscripts and `${!name}` expand a
    /// variable's value again.
    pub(super) fn assigned(&mut self, name: &str, value: Option<&Word>) {
        let Some(value) = value else {
            return;
        };
        let base = name.split('[').next().unwrap_or(name);
        let place = format!("the value of {base}");
        if let Some(function) = base.strip_prefix("BASH_FUNC_") {
            // `env 'BASH_FUNC_f%%=() { …; }' bash -c f`: bash imports the function.
            let function = function.trim_end_matches('%');
            if value.literal {
                let definition = format!("{function} {}", value.value);
                self.reread(&definition, Reread::Commands, "an exported function");
            } else {
                self.unreadable(&value.source, "an exported function");
            }
            return;
        }
        if self.special_assignment(name, base, value) {
            return;
        }
        match code_variable(base) {
            Some(how) if value.literal => self.reread(&value.value, how, &place),
            Some(_) => self.unreadable(&value.source, &place),
            None if value.literal && (value.value.contains("$(") || value.value.contains('`')) => {
                self.reread(
                    &value.value,
                    Reread::Expansions,
                    &format!("{place}, which arithmetic and `${{!…}}` expand again"),
                );
            }
            None => {}
        }
    }

    /// Variables that define commands: `BASH_ALIASES[x]` (an alias), `BASH_CMDS[x]` (a
    /// hashed name), git's configuration from the environment (`GIT_CONFIG_VALUE_0`,
    /// `GIT_CONFIG_PARAMETERS`), the file `BASH_ENV` and `ENV` name (a script each new
    /// shell reads). True when `base` was one of them.
    fn special_assignment(&mut self, name: &str, base: &str, value: &Word) -> bool {
        let key = name
            .strip_prefix(base)
            .and_then(|rest| rest.strip_prefix('['))
            .and_then(|rest| rest.strip_suffix(']'))
            .map(|key| key.trim_matches(['\'', '"']).to_owned());
        match base {
            "BASH_ALIASES" | "BASH_CMDS" => {
                let text = value.literal.then(|| {
                    if base == "BASH_CMDS" {
                        format!("'{}'", value.value.replace('\'', r"'\''"))
                    } else {
                        value.value.clone()
                    }
                });
                match key {
                    Some(key) => {
                        if !value.literal {
                            self.unreadable(&value.source, "an alias definition");
                        }
                        self.define_alias(&key, text.as_deref());
                    }
                    None => self.unreadable(&value.source, "an alias definition"),
                }
                true
            }
            _ if base.starts_with("GIT_CONFIG_VALUE_") => {
                self.git_value(&format!("={}", value.value), value.literal, &value.source);
                true
            }
            "GIT_CONFIG_PARAMETERS" => {
                self.unreadable(&value.source, "git configuration from the environment");
                if value.literal
                    && let Some(name) = deny_listed_token(&value.value)
                {
                    self.deny(format!(
                        "`{name}`, which is on the deny list, is named in git configuration from \
                         the environment, which git may run as a command"
                    ));
                }
                true
            }
            "BASH_ENV" | "ENV" if value.literal && !value.value.contains('$') => {
                self.reread(
                    &value.value,
                    Reread::Expansions,
                    &format!("the value of {base}"),
                );
                let file = value.value.clone();
                let words = [value.clone()];
                self.sourced_file(base, &file, &words);
                true
            }
            _ => false,
        }
    }

    /// `declare`, `local`, `export`, `readonly`, `typeset`, `unset`: their assignments are
    /// walked as assignments, and their other words read as variable names.
    pub(super) fn declaration(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        let keyword = node
            .child(0)
            .map(|keyword| Self::text(keyword, src))
            .unwrap_or_default();
        self.risk(format!(
            "`{keyword}` sets or removes shell variables, which can change what later commands \
             run"
        ));
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        let mut words = Vec::new();
        for child in children {
            match child.kind() {
                "variable_assignment" => self.assignment(child, src, depth + 1),
                "variable_name" => {}
                _ => words.push(self.word(child, src, depth + 1)),
            }
        }
        self.variable_words(&words);
    }

    /// Words a builtin takes as variable names, maybe with a subscript and a value
    /// (`unset 'a[i]'`, `declare 'a[i]=v'`, `read -a name`): bash evaluates the subscript,
    /// running any command substitution in it, quoted or not.
    fn variable_words(&mut self, words: &[Word]) {
        for word in words {
            if !word.literal {
                if word.source.contains(['[', '=']) {
                    self.unreadable(&word.source, "a variable name given as text");
                }
                continue;
            }
            if word.value.starts_with('-') {
                continue;
            }
            let (name, value) = split_assignment(&word.value);
            if name.contains('[') {
                self.reread(name, Reread::Expansions, "an array subscript given as text");
            }
            if let Some(value) = value {
                let mut value_word = word.clone();
                value_word.value = value.to_owned();
                self.assigned(name, Some(&value_word));
            }
        }
    }

    /// Builtins that run or expand text they are given: `trap`, `let`, the ones that take
    /// variable names, `env NAME=value`, `source` of a file only known at run time.
    pub(super) fn builtin_code(&mut self, argv: &[String], words: &[Word]) {
        let program = argv[0].as_str();
        let args = words.get(1..).unwrap_or_default();
        // The word after an option (`printf -v NAME`), as a slice of at most one.
        let after = |flag: &str| {
            argv.iter()
                .position(|arg| arg == flag)
                .and_then(|at| words.get(at + 1..at + 2))
                .unwrap_or_default()
        };
        match program {
            "trap" => self.trap(args),
            "let" => {
                for word in args {
                    if word.literal {
                        self.reread(&word.value, Reread::Expansions, "a `let` expression");
                    } else {
                        self.unreadable(&word.source, "a `let` expression");
                    }
                }
            }
            "declare" | "typeset" | "local" | "readonly" | "export" | "unset" | "read" => {
                self.variable_words(args)
            }
            "mapfile" | "readarray" => {
                self.variable_words(args);
                self.mapfile_callback(argv, words);
            }
            "alias" => self.alias_builtin(args),
            "unalias" => self.unalias_builtin(argv),
            "hash" => self.hash_builtin(argv, words),
            "complete" | "compgen" => self.completion_builtin(argv, words),
            "bind" => self.bind_builtin(argv, words),
            "history" | "fc" => self.history_builtin(argv, words),
            "enable" if argv.iter().any(|arg| arg.starts_with("-f")) => {
                self.risk("`enable -f` loads a builtin from a shared library");
            }
            "shopt" if argv.iter().any(|arg| arg == "cdable_vars") => {
                self.cdable_vars = true;
            }
            "printf" => self.variable_words(after("-v")),
            "wait" => self.variable_words(after("-p")),
            "test" | "[" => self.variable_words(after("-v")),
            "getopts" => self.variable_words(words.get(2..3).unwrap_or_default()),
            "env" => self.env_assignments(argv, words),
            "source" | "." | "bash" | "sh" | "zsh" | "dash" | "ksh" => {
                // `source <(…)`, `bash <(…)`: the script comes from a command's output.
                let script = args
                    .iter()
                    .find(|word| !(word.literal && word.value.starts_with('-')));
                if let Some(script) = script.filter(|script| !script.literal) {
                    self.unreadable_output(&script.source, "the script file a shell reads");
                }
            }
            _ => {}
        }
    }

    /// `trap 'handler' SIGNAL…`: the handler runs later as commands.
    fn trap(&mut self, args: &[Word]) {
        let handler = args.iter().find(|word| {
            !(word.literal && matches!(word.value.as_str(), "-l" | "-p" | "-P" | "--"))
        });
        let Some(handler) = handler else {
            return;
        };
        self.risk("`trap` sets a handler that runs commands later");
        if !handler.literal {
            let denied = self.out.deny.len();
            self.unreadable(&handler.source, "a trap handler");
            if self.out.deny.len() > denied
                && let Some(single) = self.single_quotes_would_pass(&handler.source)
            {
                self.out.hints.push(format!(
                    "in double quotes a trap handler's variables are expanded when it is set \
                     and its text read again when it runs; write it in single quotes \
                     ({single}), which is read as written and passes"
                ));
            }
        } else if handler.value != "-" {
            self.reread(&handler.value, Reread::Commands, "a trap handler");
        }
    }

    /// For a handler written in double quotes (`"rm -f $tmp"`): the same text in single
    /// quotes, when read so it is not denied.
    fn single_quotes_would_pass(&self, source: &str) -> Option<String> {
        let inner = source.strip_prefix('"')?.strip_suffix('"')?;
        if inner.contains(['\'', '"', '\\', '`']) || inner.contains("$(") {
            return None;
        }
        let mut probe = Analyser::new(self.ctx, self.cwds.clone(), self.depth + 1);
        probe.cwd_unknown = self.cwd_unknown;
        probe.vars = self.vars.clone();
        probe.script(inner);
        probe.out.deny.is_empty().then(|| format!("'{inner}'"))
    }

    /// `env NAME=value … command`: the assignments, as if made in the shell.
    fn env_assignments(&mut self, argv: &[String], words: &[Word]) {
        let start = launchers::env_command_start(argv);
        for (arg, word) in argv.iter().zip(words).skip(start) {
            let Some((name, value)) = arg.split_once('=') else {
                break;
            };
            let mut value_word = word.clone();
            value_word.value = value.to_owned();
            self.assigned(name, Some(&value_word));
        }
    }
}

/// `name[subscript]=value` (or `+=`) split at the `=` after the subscript, which may hold
/// a `=` of its own (`a[$(x=1)]=2`); a subscript left open makes the whole text the name.
pub(super) fn split_assignment(text: &str) -> (&str, Option<&str>) {
    let name_end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let mut end = name_end;
    if text[name_end..].starts_with('[') {
        let mut depth = 0usize;
        end = text.len();
        for (offset, character) in text[name_end..].char_indices() {
            match character {
                '[' => depth += 1,
                ']' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = name_end + offset + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    let rest = &text[end..];
    match rest.strip_prefix('+').unwrap_or(rest).strip_prefix('=') {
        Some(value) => (&text[..end], Some(value)),
        None => (text, None),
    }
}

/// The outermost substitution or expansion that starts at byte `start` under `node`.
fn substitution_at(node: Node<'_>, start: usize) -> Option<Node<'_>> {
    if node.start_byte() == start
        && matches!(
            node.kind(),
            "command_substitution" | "expansion" | "arithmetic_expansion"
        )
    {
        return Some(node);
    }
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
    children
        .into_iter()
        .filter(|child| child.start_byte() <= start && start < child.end_byte())
        .find_map(|child| substitution_at(child, start))
}
