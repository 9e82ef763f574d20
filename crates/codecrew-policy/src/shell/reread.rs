//! Text that bash reads again: as commands (`bash -c`, `eval`, a trap handler,
//! `PROMPT_COMMAND`, a here-document fed to a shell) or for its expansions (a prompt
//! string, `BASH_ENV`, a pattern, an array subscript or arithmetic given as text).
//!
//! Every such text goes through one funnel, [`Analyser::reread`]: a fresh analyser with the
//! same deny list, the variables known so far and the same directories reads it, so what
//! bash would run from it is checked as if it stood on the line. Text only known at run
//! time cannot be read; it is denied when it names a deny-listed program
//! ([`Analyser::unreadable`]), so `--yes` never runs one hidden there.

use super::words::next_substitution;
use super::wrappers::after_options;
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
        inner.vars = self.vars.clone();
        inner.places = self.places.clone();
        inner.places.push(place.to_owned());
        match how {
            Reread::Commands => inner.script(text),
            Reread::Expansions => inner.expansions(text),
        }
        self.out.deny.append(&mut inner.out.deny);
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
            "declare" | "typeset" | "local" | "readonly" | "export" | "unset" | "read"
            | "mapfile" | "readarray" => self.variable_words(args),
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
            self.unreadable(&handler.source, "a trap handler");
        } else if handler.value != "-" {
            self.reread(&handler.value, Reread::Commands, "a trap handler");
        }
    }

    /// `env NAME=value … command`: the assignments, as if made in the shell.
    fn env_assignments(&mut self, argv: &[String], words: &[Word]) {
        let start = after_options(argv, &["-u", "-C", "--unset", "--chdir", "-P"], 0);
        for (arg, word) in argv.iter().zip(words).skip(start) {
            let Some((name, value)) = arg.split_once('=') else {
                break;
            };
            let mut value_word = word.clone();
            value_word.value = value.to_owned();
            self.assigned(name, Some(&value_word));
        }
    }

    /// A shell that reads its script from its input: a here-document or here-string on it
    /// is read as that script; a pipe or a file into it is only known at run time.
    pub(super) fn stdin_script(&mut self, command: Node<'_>, src: &[u8]) {
        let statement = match command.parent() {
            Some(parent) if parent.kind() == "redirected_statement" => parent,
            _ => command,
        };
        let mut redirects = Vec::new();
        for holder in [statement, command] {
            let mut cursor = holder.walk();
            redirects.extend(
                holder
                    .named_children(&mut cursor)
                    .filter(|child| child.kind().ends_with("_redirect")),
            );
        }
        redirects.dedup_by_key(|redirect| redirect.id());
        for redirect in redirects {
            self.script_input(redirect, src);
        }
        if let Some(pipeline) = statement
            .parent()
            .filter(|parent| parent.kind() == "pipeline")
        {
            let mut cursor = pipeline.walk();
            let earlier: Vec<Node<'_>> = pipeline
                .named_children(&mut cursor)
                .take_while(|child| child.id() != statement.id())
                .collect();
            for producer in earlier {
                self.unreadable_output(Self::text(producer, src), "the script piped into a shell");
            }
        }
    }

    fn script_input(&mut self, redirect: Node<'_>, src: &[u8]) {
        let place = "the script a shell reads from its input";
        match redirect.kind() {
            "heredoc_redirect" => {
                let mut cursor = redirect.walk();
                let body = redirect
                    .named_children(&mut cursor)
                    .find(|child| child.kind() == "heredoc_body");
                if let Some(body) = body {
                    self.reread(Self::text(body, src), Reread::Commands, place);
                }
            }
            "herestring_redirect" => {
                let mut cursor = redirect.walk();
                let text = redirect.named_children(&mut cursor).last();
                if let Some(text) = text {
                    let word = self.word(text, src, 0);
                    if word.literal {
                        self.reread(&word.value, Reread::Commands, place);
                    } else {
                        self.unreadable(&word.source, place);
                    }
                }
            }
            _ => self.unreadable_output(Self::text(redirect, src), place),
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
