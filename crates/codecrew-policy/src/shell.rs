//! What a `run_command` command line would do, read with a real bash parser.
//!
//! The parser is tree-sitter with the tree-sitter-bash grammar (pinned to the 0.25 majors,
//! which are built and tested together): a maintained, error-tolerant grammar of the whole
//! bash language, so quoting, escapes, heredocs and substitutions are seen as bash sees
//! them, not as a regular expression guesses. Every simple command of every pipeline,
//! list, subshell and group is checked; anything the analysis does not model is a *risk*
//! (the call needs a question), never a pass.
//!
//! Three outcomes per command line:
//! - **deny**: the built-in deny list (`rm -rf /` and its variants, mkfs, dd to devices,
//!   fork bombs, recursive chmod/chown of `/`, ...), also found through wrappers
//!   (`sudo`, `env`, `xargs`, `bash -c '...'`, `find -exec`). No flag or prompt overrides it.
//! - **risks**: constructs that hide what runs or where output goes — command and process
//!   substitution, `eval`, `bash -c`, wrappers, redirections to files, variable
//!   assignments (`LD_PRELOAD=...`), paths outside the workspace, sensitive files,
//!   functions, loops, anything unparsed. Allow rules do not lift these; only a prompt or
//!   `--yes` does.
//! - **commands**: each simple command's words, and whether it is on the argument-aware
//!   safe list (`ls`, `cat` of workspace files, `git diff` without `-c`/`--git-dir`, ...).
//!   A command off the list needs an allow rule (or a prompt).

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use tree_sitter::{Node, Parser};

use super::{paths, secrets};
use crate::path::{Access, display, normalise, resolve};

/// Longest command line analysed; longer ones are denied.
const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// Deepest nesting of syntax (or of `bash -c` inside `bash -c`) followed.
const MAX_DEPTH: usize = 100;
/// Deepest nesting of wrappers (`sudo env bash -c '...'`) followed.
const MAX_WRAPPER_DEPTH: usize = 8;
/// Most files one glob in a command may expand to before the analysis gives up (Ask).
const MAX_GLOB_MATCHES: usize = 512;

/// Where a command runs.
#[derive(Debug, Clone)]
pub struct ShellContext<'a> {
    /// The canonical workspace root.
    pub workspace: &'a Path,
    /// The canonical directory the command starts in (inside the workspace).
    pub cwd: &'a Path,
}

/// One simple command, as bash would run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The words after quote removal; a word only known at run time is `*`.
    pub words: Vec<String>,
    /// On the safe list with these arguments.
    pub safe: bool,
}

/// What a command line would do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// Every simple command at any level of the line.
    pub commands: Vec<SimpleCommand>,
    /// Commands run through a wrapper (`env X`, `bash -c '...'`, `find -exec X`): deny and
    /// ask rules see them, allow rules and the safe list do not.
    pub wrapped: Vec<Vec<String>>,
    /// Why the line is denied outright (the deny list).
    pub deny: Vec<String>,
    /// Why the line needs a question whatever the allow rules say.
    pub risks: Vec<String>,
}

/// Analyses `command` as `bash -c` would run it in `ctx.cwd`.
pub fn analyse(command: &str, ctx: &ShellContext<'_>) -> Analysis {
    let mut analyser = Analyser::new(ctx, vec![ctx.cwd.to_path_buf()], 0);
    analyser.script(command);
    let mut analysis = analyser.out;
    dedup(&mut analysis.risks);
    dedup(&mut analysis.deny);
    analysis
}

fn dedup(items: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    items.retain(|item| seen.insert(item.clone()));
}

/// One word after expansion, as far as it can be known before running.
#[derive(Debug, Clone, Default)]
struct Word {
    /// The value when literal; otherwise a skeleton with `*` for the unknown parts.
    value: String,
    literal: bool,
    /// Unquoted glob characters (`*`, `?`, `[`): bash expands it against the disk.
    glob: bool,
    /// An unquoted leading `~`: the home directory.
    tilde: bool,
    /// Refers to `$HOME`.
    home: bool,
    /// The unquoted literal characters, to find brace expansion.
    unquoted: String,
}

impl Word {
    fn literal(value: &str) -> Word {
        Word {
            value: value.to_owned(),
            literal: true,
            ..Word::default()
        }
    }

    fn brace(&self) -> bool {
        self.unquoted.contains('{') && (self.unquoted.contains(',') || self.unquoted.contains(".."))
    }

    fn append(&mut self, other: Word) {
        self.value.push_str(&other.value);
        self.literal &= other.literal;
        self.glob |= other.glob;
        self.home |= other.home;
        self.unquoted.push_str(&other.unquoted);
    }
}

struct Analyser<'a> {
    ctx: &'a ShellContext<'a>,
    /// Every directory the command may be in at this point (`cd` adds to it).
    cwds: Vec<PathBuf>,
    /// Literal values of variables assigned earlier in the line.
    vars: HashMap<String, String>,
    depth: usize,
    /// Inside a wrapper's script: commands go to `wrapped`.
    nested: bool,
    out: Analysis,
}

impl<'a> Analyser<'a> {
    fn new(ctx: &'a ShellContext<'a>, cwds: Vec<PathBuf>, depth: usize) -> Self {
        Analyser {
            ctx,
            cwds,
            vars: HashMap::new(),
            depth,
            nested: depth > 0,
            out: Analysis::default(),
        }
    }

    fn risk(&mut self, why: impl Into<String>) {
        self.out.risks.push(why.into());
    }

    fn deny(&mut self, why: impl Into<String>) {
        self.out.deny.push(why.into());
    }

    /// Parses and analyses a whole script.
    fn script(&mut self, text: &str) {
        if text.len() > MAX_COMMAND_BYTES {
            self.deny(format!(
                "the command is {} bytes long; codecrew analyses at most {MAX_COMMAND_BYTES}",
                text.len()
            ));
            return;
        }
        if text.contains('\0') {
            self.deny("the command contains a NUL byte");
            return;
        }
        let mut parser = Parser::new();
        if parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .is_err()
        {
            self.deny("the bash parser could not be loaded");
            return;
        }
        let Some(tree) = parser.parse(text, None) else {
            self.deny("the command could not be parsed");
            return;
        };
        let root = tree.root_node();
        if root.has_error() {
            self.risk("the command does not parse as bash, so it cannot be checked");
            if let Some(name) = deny_listed_token(text) {
                self.deny(format!(
                    "the command does not parse and mentions `{name}`, which is on the deny list"
                ));
            }
        }
        self.node(root, text.as_bytes(), 0);
    }

    fn text<'s>(node: Node<'_>, src: &'s [u8]) -> &'s str {
        node.utf8_text(src).unwrap_or("")
    }

    fn node(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        if depth > MAX_DEPTH {
            self.deny("the command is nested too deeply to analyse");
            return;
        }
        match node.kind() {
            "program" | "list" | "pipeline" | "subshell" | "compound_statement"
            | "negated_command" | "do_group" => self.children(node, src, depth),
            "redirected_statement" => {
                let mut cursor = node.walk();
                for (index, child) in node.children(&mut cursor).enumerate() {
                    let field = u32::try_from(index)
                        .ok()
                        .and_then(|index| node.field_name_for_child(index));
                    if !child.is_named() {
                        continue;
                    }
                    if field == Some("redirect") || child.kind().ends_with("_redirect") {
                        self.redirect(child, src, depth + 1);
                    } else {
                        self.node(child, src, depth + 1);
                    }
                }
            }
            "command" => self.command(node, src, depth + 1),
            "variable_assignment" | "variable_assignments" => {
                self.assignment(node, src, depth + 1);
            }
            "function_definition" => self.function(node, src, depth + 1),
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                self.redirect(node, src, depth + 1)
            }
            "command_substitution" => {
                self.risk("command substitution `$(...)` runs a command whose output becomes part of another");
                self.children(node, src, depth);
            }
            "process_substitution" => {
                self.risk("process substitution `<(...)` runs a hidden command");
                self.children(node, src, depth);
            }
            "arithmetic_expansion" => {
                self.risk(
                    "arithmetic expansion `$((...))` can run commands through array subscripts",
                );
                self.children(node, src, depth);
            }
            "word" | "string" | "raw_string" | "concatenation" | "number" | "simple_expansion"
            | "expansion" | "ansi_c_string" | "translated_string" | "brace_expression" => {
                let _ = self.word(node, src, depth + 1);
            }
            "comment"
            | "variable_name"
            | "special_variable_name"
            | "heredoc_start"
            | "heredoc_end"
            | "heredoc_content"
            | "file_descriptor"
            | "string_content"
            | "test_operator"
            | "regex"
            | "extglob_pattern" => {}
            "ERROR" => {
                self.risk("part of the command does not parse");
                self.children(node, src, depth);
            }
            other => {
                self.risk(format!(
                    "the shell construct `{other}` ({}) is not analysed by codecrew",
                    first_line(Self::text(node, src))
                ));
                self.children(node, src, depth);
            }
        }
    }

    fn children(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            self.node(child, src, depth + 1);
        }
    }

    /// A word after quote removal and the expansions that can be known statically.
    fn word(&mut self, node: Node<'_>, src: &[u8], depth: usize) -> Word {
        if depth > MAX_DEPTH {
            self.deny("the command is nested too deeply to analyse");
            return Word::default();
        }
        let text = Self::text(node, src);
        match node.kind() {
            "word" => unquoted_word(text),
            "number" => {
                let mut word = Word::literal(text);
                word.unquoted = text.to_owned();
                word
            }
            "raw_string" => {
                let inner = text
                    .strip_prefix('\'')
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or(text);
                Word::literal(inner)
            }
            "ansi_c_string" => {
                let inner = text
                    .strip_prefix("$'")
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or(text);
                Word::literal(&ansi_c(inner))
            }
            "string" => {
                let mut word = Word::literal("");
                let start = node.start_byte() + 1;
                let end = node.end_byte().saturating_sub(1).max(start);
                let mut pos = start;
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for child in children {
                    if child.start_byte() > pos {
                        let gap = src.get(pos..child.start_byte()).unwrap_or_default();
                        word.append(Word::literal(&double_quoted(&String::from_utf8_lossy(gap))));
                    }
                    let part = if child.kind() == "string_content" {
                        Word::literal(&double_quoted(Self::text(child, src)))
                    } else {
                        let mut part = self.word(child, src, depth + 1);
                        // Quoted: no globbing, no splitting.
                        part.glob = false;
                        part.unquoted.clear();
                        part
                    };
                    word.append(part);
                    pos = child.end_byte();
                }
                if end > pos {
                    let gap = src.get(pos..end).unwrap_or_default();
                    word.append(Word::literal(&double_quoted(&String::from_utf8_lossy(gap))));
                }
                word
            }
            "concatenation" => {
                let mut word = Word::literal("");
                let mut first = true;
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
                for child in children {
                    let part = if child.is_named() {
                        self.word(child, src, depth + 1)
                    } else {
                        unquoted_word(Self::text(child, src))
                    };
                    if first {
                        word.tilde = part.tilde;
                        first = false;
                    }
                    word.append(part);
                }
                word
            }
            "simple_expansion" | "expansion" => {
                let name = text
                    .trim_start_matches('$')
                    .trim_start_matches('{')
                    .trim_end_matches('}');
                if let Some(value) = self.vars.get(name) {
                    let mut word = unquoted_word(&value.clone());
                    word.tilde = false;
                    word
                } else {
                    Word {
                        value: "*".to_owned(),
                        literal: false,
                        home: name == "HOME",
                        ..Word::default()
                    }
                }
            }
            "command_substitution" | "process_substitution" | "arithmetic_expansion" => {
                self.node(node, src, depth + 1);
                Word {
                    value: "*".to_owned(),
                    literal: false,
                    ..Word::default()
                }
            }
            _ => {
                // translated_string, brace_expression and anything new: walk it for
                // substitutions, and treat its value as unknown.
                self.children(node, src, depth);
                Word {
                    value: "*".to_owned(),
                    literal: false,
                    glob: node.kind() == "brace_expression",
                    unquoted: if node.kind() == "brace_expression" {
                        "{,}".to_owned()
                    } else {
                        String::new()
                    },
                    ..Word::default()
                }
            }
        }
    }

    fn assignment(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        if node.kind() == "variable_assignments" {
            let mut cursor = node.walk();
            let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            for child in children {
                self.assignment(child, src, depth + 1);
            }
            return;
        }
        let name = node
            .child_by_field_name("name")
            .map(|name| Self::text(name, src).to_owned())
            .unwrap_or_default();
        let value = node
            .child_by_field_name("value")
            .map(|value| self.word(value, src, depth + 1));
        self.risk(format!(
            "it sets the shell variable {name}, which can change what later commands run{}",
            if is_loader_variable(&name) {
                " (a loader or shell start-up variable)"
            } else {
                ""
            }
        ));
        match value {
            Some(value) if value.literal => {
                self.vars.insert(name, value.value);
            }
            Some(_) => {
                self.vars.remove(&name);
            }
            None => {
                self.vars.insert(name, String::new());
            }
        }
    }

    fn function(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        let name = node
            .child_by_field_name("name")
            .map(|name| Self::text(name, src).to_owned())
            .unwrap_or_default();
        let calls_itself = node
            .child_by_field_name("body")
            .is_some_and(|body| calls_command(body, src, &name, 0));
        if calls_itself {
            self.deny(format!(
                "the function `{name}` calls itself: a fork bomb or unbounded recursion"
            ));
        }
        self.risk(format!("it defines the shell function `{name}`"));
        if let Some(body) = node.child_by_field_name("body") {
            self.node(body, src, depth + 1);
        }
    }

    fn redirect(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        match node.kind() {
            "file_redirect" => {
                let mut operator = String::new();
                let mut destinations = Vec::new();
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
                for child in children {
                    if !child.is_named() {
                        operator.push_str(Self::text(child, src));
                    } else if child.kind() != "file_descriptor" {
                        destinations.push(self.word(child, src, depth + 1));
                    }
                }
                for destination in destinations {
                    self.redirect_to(&operator, &destination);
                }
            }
            "heredoc_redirect" | "herestring_redirect" => {
                // The body is data; what matters is substitutions inside it, and any
                // pipeline or redirect that follows the marker.
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for child in children {
                    match child.kind() {
                        "heredoc_body" => self.children(child, src, depth),
                        _ => self.node(child, src, depth + 1),
                    }
                }
            }
            other => {
                self.risk(format!("the redirection `{other}` is not analysed"));
            }
        }
    }

    fn redirect_to(&mut self, operator: &str, destination: &Word) {
        let value = destination.value.as_str();
        let duplicate = matches!(operator, ">&" | "<&")
            && destination.literal
            && (value == "-" || (!value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())));
        if duplicate {
            return;
        }
        if !destination.literal
            && let Some(why) = paths::forbidden_system_path(value)
        {
            self.deny(why);
            return;
        }
        if !destination.literal || destination.glob || destination.tilde {
            self.risk(format!(
                "it redirects to `{value}`, a file name only known at run time"
            ));
            return;
        }
        match operator {
            "<" => self.path_argument(value, true),
            ">" | ">>" | "&>" | "&>>" | ">|" | ">&" | "<>" => {
                if is_harmless_device(value) {
                    return;
                }
                if value.starts_with("/dev/tcp/") || value.starts_with("/dev/udp/") {
                    self.risk(format!("it opens a network connection ({value})"));
                    return;
                }
                if value.starts_with("/dev/") {
                    self.deny(format!("it writes to the device {value}"));
                    return;
                }
                self.risk(format!("it redirects output to the file {value}"));
                self.path_argument(value, false);
            }
            other => self.risk(format!("the redirection `{other}` is not analysed")),
        }
    }

    fn command(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        let mut words: Vec<Word> = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "variable_assignment" => {
                    let name = child
                        .child_by_field_name("name")
                        .map(|name| Self::text(name, src).to_owned())
                        .unwrap_or_default();
                    if let Some(value) = child.child_by_field_name("value") {
                        let _ = self.word(value, src, depth + 1);
                    }
                    self.risk(format!(
                        "it sets {name} in the command's environment{}",
                        if is_loader_variable(&name) {
                            ", which changes how programs load or start"
                        } else {
                            ""
                        }
                    ));
                }
                "command_name" => {
                    let mut inner = child.walk();
                    let parts: Vec<Node<'_>> = child.named_children(&mut inner).collect();
                    let mut word = Word::literal("");
                    for (index, part) in parts.into_iter().enumerate() {
                        let part = self.word(part, src, depth + 1);
                        if index == 0 {
                            word.tilde = part.tilde;
                        }
                        word.append(part);
                    }
                    words.push(word);
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    self.redirect(child, src, depth + 1);
                }
                "comment" => {}
                _ if child.is_named() => {
                    let word = self.word(child, src, depth + 1);
                    words.push(word);
                }
                _ => {}
            }
        }
        let Some(name) = words.first() else {
            return;
        };
        if !name.literal {
            self.deny(format!(
                "the command name `{}` is only known at run time; codecrew does not run \
                 commands it cannot name",
                name.value
            ));
        } else if name.glob || name.brace() || name.tilde {
            self.deny(format!(
                "the command name `{}` is a pattern the shell expands; codecrew does not run \
                 commands it cannot name",
                name.value
            ));
        }
        for word in &words[1..] {
            if !word.literal
                && let Some(why) = paths::forbidden_system_path(&word.value)
            {
                self.deny(why);
            }
            if !word.literal {
                self.risk(format!(
                    "the argument `{}` is only known at run time",
                    word.value
                ));
            } else if word.brace() {
                self.risk(format!(
                    "the argument `{}` uses brace expansion",
                    word.value
                ));
            }
        }
        let argv: Vec<String> = words.iter().map(|word| word.value.clone()).collect();
        self.deny_list(&argv, &words);
        self.wrappers(&argv, &words);
        let program = base_name(&argv[0]);
        if program == "cd" || program == "pushd" || program == "popd" {
            self.change_directory(&words);
        }
        let safe = safe(&argv);
        self.tree_search(&argv);
        for word in &words[1..] {
            if word.literal && !word.brace() {
                self.word_paths(word, safe);
            }
        }
        if self.nested {
            self.out.wrapped.push(argv);
        } else {
            self.out.commands.push(SimpleCommand { words: argv, safe });
        }
    }

    /// Checks the paths a literal argument may name: itself, an option's value, and the
    /// files a glob expands to.
    fn word_paths(&mut self, word: &Word, safe: bool) {
        let value = word.value.as_str();
        if word.tilde {
            self.risk(format!(
                "`{value}` is in your home directory, outside the workspace"
            ));
            if let Some(rest) = value.strip_prefix('~') {
                let home = std::env::var("HOME").unwrap_or_else(|_| "/root".to_owned());
                let expanded = format!("{home}{rest}");
                self.path_argument(&expanded, safe);
            }
            return;
        }
        let candidates: Vec<&str> = if let Some(option) = value.strip_prefix('-') {
            if let Some((_, after)) = option.split_once('=') {
                vec![after]
            } else if let Some(at) = option.find('/') {
                vec![&option[at..]]
            } else {
                Vec::new()
            }
        } else {
            vec![value]
        };
        for candidate in candidates {
            if word.glob {
                self.glob_argument(candidate, safe);
            }
            self.path_argument(candidate, safe);
        }
    }

    fn glob_argument(&mut self, pattern: &str, safe: bool) {
        for cwd in self.cwds.clone() {
            match expand_glob(&cwd, pattern) {
                Some(matches) => {
                    for found in matches {
                        self.path_argument(&found.to_string_lossy(), safe);
                    }
                }
                None => self.risk(format!(
                    "the glob `{pattern}` matches more than {MAX_GLOB_MATCHES} files"
                )),
            }
        }
    }

    /// Checks one path named in a command: inside the workspace, not sensitive, not a
    /// protected file unless the command only reads (`reads_only`).
    fn path_argument(&mut self, value: &str, reads_only: bool) {
        if value.is_empty() || value == "-" || is_harmless_device(value) {
            return;
        }
        if let Some(why) = paths::forbidden_system_path(value) {
            self.deny(why);
            return;
        }
        if let Some(why) = paths::sensitive(Path::new(value)) {
            self.risk(format!("it names a sensitive file: {why}"));
        }
        if !reads_only && let Some(why) = paths::protected(Path::new(value)) {
            self.risk(format!("it may write a protected file: {why}"));
        }
        let root = self.ctx.workspace;
        for cwd in self.cwds.clone() {
            let joined = cwd.join(value);
            let Some(requested) = joined.to_str() else {
                self.risk(format!("`{value}` is not valid UTF-8"));
                continue;
            };
            match resolve(root, requested, Access::Read) {
                Ok(resolved) => {
                    let relative = display(root, &resolved);
                    if let Some(why) = paths::sensitive(Path::new(&relative)) {
                        self.risk(format!("it names a sensitive file: {why}"));
                    }
                    if !reads_only && let Some(why) = paths::protected(Path::new(&relative)) {
                        self.risk(format!("it may write a protected file: {why}"));
                    }
                    if let Ok(meta) = std::fs::symlink_metadata(&resolved)
                        && paths::hard_linked(&meta)
                    {
                        self.deny(format!(
                            "{relative} has other hard links, and one may be a file outside the \
                             workspace"
                        ));
                    }
                }
                Err(error) => self.risk(format!("`{value}`: {}", error.message)),
            }
        }
    }

    /// Recursive searches (`grep -r`, `rg`) read every file below their directories:
    /// a tree holding credentials (or, when links are followed, a link out of the
    /// workspace) makes them a risk.
    fn tree_search(&mut self, argv: &[String]) {
        let Some((dirs, follow)) = searched_trees(argv) else {
            return;
        };
        for dir in dirs {
            for cwd in self.cwds.clone() {
                let start = cwd.join(&dir);
                if let Some(found) = tree_holds_secrets(self.ctx.workspace, &start, follow) {
                    self.risk(format!(
                        "`{}` searches {dir}, which holds {found}; search named files instead",
                        argv[0]
                    ));
                }
            }
        }
    }

    fn change_directory(&mut self, words: &[Word]) {
        let target = words[1..].iter().find(|word| !word.value.starts_with('-'));
        let Some(target) = target else {
            self.risk("`cd` without a directory goes to your home directory");
            return;
        };
        if !target.literal || target.glob || target.tilde {
            self.risk(format!(
                "`cd {}` goes to a directory only known at run time",
                target.value
            ));
            return;
        }
        let mut next = self.cwds.clone();
        for cwd in self.cwds.clone() {
            let joined = cwd.join(&target.value);
            let requested = joined.to_string_lossy();
            match resolve(self.ctx.workspace, &requested, Access::Read) {
                Ok(resolved) => next.push(resolved),
                Err(error) => {
                    self.risk(format!("`cd {}`: {}", target.value, error.message));
                }
            }
        }
        next.sort();
        next.dedup();
        self.cwds = next;
    }

    /// The deny list, on a command's words (`words` gives what is literal).
    fn deny_list(&mut self, argv: &[String], words: &[Word]) {
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
                    let rootish = if !literal(index) {
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
                    if rootish && applies {
                        self.deny(format!(
                            "`{} {}` on {target} is on the deny list (it would destroy the \
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

    /// Whether a literal path is `/`, a top-level directory, a home directory, or the
    /// workspace root or one of its ancestors (`/*` and `dir/*` count as the directory).
    fn is_rootish(&self, target: &str) -> bool {
        self.cwds.iter().any(|cwd| {
            let mut lexical = normalise(cwd, target);
            let last = lexical
                .file_name()
                .map(|name| name.to_string_lossy().into_owned());
            if let Some(last) = last
                && (last.chars().all(|c| matches!(c, '*' | '?' | '.'))
                    || last.starts_with('*')
                    || last.starts_with(".*"))
            {
                lexical.pop();
            }
            let canonical = lexical.canonicalize().ok();
            [Some(lexical), canonical]
                .into_iter()
                .flatten()
                .any(|path| self.dangerous_directory(&path))
        })
    }

    fn is_root(&self, target: &str, literal: bool) -> bool {
        literal
            && self
                .cwds
                .iter()
                .any(|cwd| normalise(cwd, target) == Path::new("/"))
    }

    fn dangerous_directory(&self, path: &Path) -> bool {
        let depth = path
            .components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .count();
        let home = std::env::var_os("HOME").map(PathBuf::from);
        depth <= 1
            || self.ctx.workspace.starts_with(path)
            || home.is_some_and(|home| home == path)
            || (depth == 2 && path.starts_with("/home"))
            || (depth == 2 && path.starts_with("/usr"))
    }

    /// Commands that run other commands: their inner command is deny-checked (and seen
    /// by deny and ask rules); running one always needs a question.
    fn wrappers(&mut self, argv: &[String], words: &[Word]) {
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
                let mut inner = Analyser::new(self.ctx, self.cwds.clone(), self.depth + 1);
                inner.vars = self.vars.clone();
                inner.script(&script);
                self.out.deny.append(&mut inner.out.deny);
                self.out.wrapped.append(&mut inner.out.wrapped);
                self.out
                    .wrapped
                    .extend(inner.out.commands.into_iter().map(|command| command.words));
            }
            Wrapped::Command {
                start,
                unknown_args,
            } => {
                self.risk(format!(
                    "`{program}` runs another command ({}), which codecrew does not vet",
                    argv.get(start).map_or("?", String::as_str)
                ));
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
                self.deny_list(&inner_argv, &inner_words);
                let nested = self.nested;
                self.nested = true;
                self.depth += 1;
                self.wrappers(&inner_argv, &inner_words);
                self.depth -= 1;
                self.nested = nested;
                self.out.wrapped.push(inner_argv);
            }
        }
    }
}

/// The first line of a text, shortened, for messages.
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() > 60 {
        format!("{}…", line.chars().take(60).collect::<String>())
    } else {
        line.to_owned()
    }
}

/// A `word` node's value: backslash escapes removed, unquoted specials noted.
fn unquoted_word(text: &str) -> Word {
    let mut word = Word::literal("");
    let mut chars = text.chars().peekable();
    let mut first = true;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next()
                    && next != '\n'
                {
                    word.value.push(next);
                }
            }
            '*' | '?' | '[' => {
                word.glob = true;
                word.value.push(c);
                word.unquoted.push(c);
            }
            '~' if first => {
                word.tilde = true;
                word.value.push(c);
                word.unquoted.push(c);
            }
            '$' | '`' => {
                word.literal = false;
                word.value.push('*');
            }
            _ => {
                word.value.push(c);
                word.unquoted.push(c);
            }
        }
        first = false;
    }
    word
}

/// The content of a double-quoted string with its backslash escapes applied.
fn double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('"' | '\\' | '$' | '`') => {
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The value of `$'...'` content (bash's ANSI-C quoting).
fn ansi_c(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escape) = chars.next() else {
            out.push('\\');
            break;
        };
        let radix_digits =
            |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, radix: u32, max: usize| {
                let mut value = 0u32;
                let mut count = 0;
                while count < max {
                    match chars.peek().and_then(|c| c.to_digit(radix)) {
                        Some(digit) => {
                            value = value * radix + digit;
                            chars.next();
                            count += 1;
                        }
                        None => break,
                    }
                }
                (value, count)
            };
        match escape {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'e' | 'E' => out.push('\u{1b}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            'x' => {
                let (value, count) = radix_digits(&mut chars, 16, 2);
                if count == 0 {
                    out.push_str("\\x");
                } else if let Some(c) = char::from_u32(value) {
                    out.push(c);
                }
            }
            'u' | 'U' => {
                let (value, count) =
                    radix_digits(&mut chars, 16, if escape == 'u' { 4 } else { 8 });
                if count == 0 {
                    out.push('\\');
                    out.push(escape);
                } else if let Some(c) = char::from_u32(value) {
                    out.push(c);
                }
            }
            '0'..='7' => {
                let mut value = escape.to_digit(8).unwrap_or(0);
                let (more, count) = radix_digits(&mut chars, 8, 2);
                value = value * 8u32.pow(u32::try_from(count).unwrap_or(0)) + more;
                if let Some(c) = char::from_u32(value) {
                    out.push(c);
                }
            }
            'c' => {
                if let Some(next) = chars.next() {
                    out.push(char::from_u32(u32::from(next) & 0x1f).unwrap_or('?'));
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether a function body calls `name`.
fn calls_command(node: Node<'_>, src: &[u8], name: &str, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    if node.kind() == "command_name" && node.utf8_text(src).is_ok_and(|text| text == name) {
        return true;
    }
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
    children
        .into_iter()
        .any(|child| calls_command(child, src, name, depth + 1))
}

/// Variables that change how programs are loaded or how shells start: the start-up hooks
/// the environment scrub removes, and more.
fn is_loader_variable(name: &str) -> bool {
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

/// Writes that go nowhere harmful.
fn is_harmless_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/stdin" | "/dev/tty" | "/dev/zero"
    ) || path.starts_with("/dev/fd/")
}

fn is_home_word(value: &str) -> bool {
    let rest = value.strip_prefix('~').unwrap_or(value);
    matches!(rest, "" | "/" | "/*" | "/." | "/.*")
        || (!rest.starts_with('/') && !rest.contains('/') && !rest.is_empty())
}

fn is_disk_tool(program: &str) -> bool {
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

/// For a line that does not parse: a deny-listed program named anywhere in it.
fn deny_listed_token(text: &str) -> Option<String> {
    let tokens = text
        .split(|c: char| c.is_whitespace() || ";|&(){}<>`$'\"\\".contains(c))
        .filter(|token| !token.is_empty());
    for token in tokens {
        let name = base_name(token);
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

/// The program's name without its directory (`/bin/rm` is `rm`).
fn base_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Options (before `--`) and the other arguments with their indexes in `args`.
fn split_options(args: &[String]) -> (Vec<String>, Vec<(usize, String)>) {
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

/// Expands a glob the way bash would (dot files only for patterns starting with a dot),
/// relative to `cwd`; None past MAX_GLOB_MATCHES.
fn expand_glob(cwd: &Path, pattern: &str) -> Option<Vec<PathBuf>> {
    let absolute = pattern.starts_with('/');
    let mut current = vec![if absolute {
        PathBuf::from("/")
    } else {
        cwd.to_path_buf()
    }];
    for part in pattern.split('/').filter(|part| !part.is_empty()) {
        let mut next = Vec::new();
        if !part.contains(['*', '?', '[']) {
            next = current.iter().map(|dir| dir.join(part)).collect();
        } else {
            // A pattern bash cannot match either stays a literal word, which the caller
            // checks as a path.
            let Ok(glob) = globset::GlobBuilder::new(part)
                .literal_separator(true)
                .build()
            else {
                return Some(Vec::new());
            };
            let matcher = glob.compile_matcher();
            for dir in &current {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    let name = entry.file_name();
                    let name = name.to_string_lossy();
                    if name.starts_with('.') && !part.starts_with('.') {
                        continue;
                    }
                    if matcher.is_match(name.as_ref()) {
                        next.push(dir.join(name.as_ref()));
                        if next.len() > MAX_GLOB_MATCHES {
                            return None;
                        }
                    }
                }
            }
        }
        current = next;
    }
    Some(current)
}

/// The directories a recursive search reads, and whether it follows links; None for
/// anything else.
fn searched_trees(argv: &[String]) -> Option<(Vec<String>, bool)> {
    let program = base_name(&argv[0]);
    let args = &argv[1..];
    let options: Vec<&String> = args.iter().filter(|arg| arg.starts_with('-')).collect();
    let positional: Vec<&String> = args.iter().filter(|arg| !arg.starts_with('-')).collect();
    let short = |letter: char| {
        options
            .iter()
            .any(|option| !option.starts_with("--") && option.contains(letter))
    };
    let long = |name: &str| options.iter().any(|option| option.starts_with(name));
    let (recursive, follow, pattern_given) = match program {
        "grep" | "egrep" | "fgrep" => (
            short('r')
                || short('R')
                || long("--recursive")
                || long("--dereference-recursive")
                || long("--directories=recurse"),
            short('R') || long("--dereference-recursive"),
            short('e') || short('f') || long("--regexp") || long("--file"),
        ),
        "rg" | "ag" | "ack" | "ack-grep" => (
            true,
            short('L') || long("--follow"),
            short('e') || short('f') || long("--regexp") || long("--file"),
        ),
        _ => return None,
    };
    if !recursive {
        return None;
    }
    let mut dirs: Vec<String> = positional
        .iter()
        .skip(usize::from(!pattern_given))
        .map(|dir| (*dir).clone())
        .collect();
    if dirs.is_empty() {
        dirs.push(".".to_owned());
    }
    Some((dirs, follow))
}

/// What in the tree below `start` a search must not read: a sensitive file, or (when
/// following links) a link leaving the workspace. Bounded: a huge tree counts as unsafe.
fn tree_holds_secrets(root: &Path, start: &Path, follow: bool) -> Option<String> {
    const MAX_ENTRIES: usize = 50_000;
    let Ok(meta) = std::fs::symlink_metadata(start) else {
        return None;
    };
    if !meta.is_dir() {
        return None;
    }
    let mut stack = vec![start.to_path_buf()];
    let mut seen = 0;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return Some(format!("more than {MAX_ENTRIES} files to check"));
            }
            let path = entry.path();
            let relative = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                if follow {
                    match path.canonicalize() {
                        Ok(target) if target.starts_with(root) => {
                            let inner = target.strip_prefix(root).unwrap_or(&target);
                            if paths::sensitive(inner).is_some() {
                                return Some(format!("a link to {}", inner.display()));
                            }
                        }
                        _ => {
                            return Some(format!(
                                "{}, a link out of the workspace",
                                relative.display()
                            ));
                        }
                    }
                }
                continue;
            }
            if kind.is_dir() {
                if entry.file_name() != ".git" {
                    stack.push(path);
                }
            } else if paths::sensitive(&relative).is_some() {
                return Some(relative.display().to_string());
            }
        }
    }
    None
}

/// How a command runs another.
enum Wrapped {
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
fn after_options(argv: &[String], valued: &[&str], skip_positional: usize) -> usize {
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

fn wrapped(argv: &[String]) -> Wrapped {
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

/// find's starting points, when argv is a find with -exec.
fn find_roots(argv: &[String]) -> Option<Vec<String>> {
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
fn git_safe(args: &[String]) -> bool {
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

#[cfg(test)]
#[path = "shell_tests.rs"]
mod tests;
