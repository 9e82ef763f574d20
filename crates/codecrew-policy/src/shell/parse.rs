//! Walking the parse tree: scripts, statements, pipelines, lists, assignments, functions
//! and simple commands, each simple command then checked by the other parts.

use super::*;

impl<'a> Analyser<'a> {
    /// Parses and analyses a whole script.
    pub(super) fn script(&mut self, text: &str) {
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
        if self.speculative && root.has_error() {
            // Words that only may be a command (an argument of an unknown program): prose
            // that does not parse is not one, but each of its lines that parses may be (a
            // here-document left open runs its lines all the same).
            if text.contains('\n') {
                for line in text.lines().filter(|line| !line.trim().is_empty()) {
                    self.reread(line, Reread::Commands, "a line of text that does not parse");
                }
            }
            return;
        }
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

    pub(super) fn text<'s>(node: Node<'_>, src: &'s [u8]) -> &'s str {
        node.utf8_text(src).unwrap_or("")
    }

    pub(super) fn node(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        if depth > MAX_DEPTH {
            self.deny("the command is nested too deeply to analyse");
            return;
        }
        match node.kind() {
            "compound_statement" if Self::text(node, src).starts_with("((") => {
                // `(( … ))`: arithmetic, whose subscripts and quoted text bash expands.
                self.evaluated("an arithmetic command", |this| {
                    this.children(node, src, depth);
                });
            }
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
                match backtick_body(Self::text(node, src)) {
                    // Bash reads a backtick substitution's body with its backslashes
                    // taken away first (`\\`, `` \` ``, `\$`), then as a script: read it
                    // so, or `\\rm` (which runs `rm`) would be read as `\rm`.
                    Some(body) => self.reread(&body, Reread::Commands, "a command substitution"),
                    None => self.within("a command substitution", |this| {
                        this.children(node, src, depth)
                    }),
                }
            }
            "process_substitution" => {
                self.risk("process substitution `<(...)` runs a hidden command");
                self.within("a process substitution", |this| {
                    this.children(node, src, depth)
                });
            }
            "arithmetic_expansion" => {
                self.risk(
                    "arithmetic expansion `$((...))` can run commands through array subscripts",
                );
                self.evaluated("an arithmetic expansion", |this| {
                    this.children(node, src, depth);
                });
            }
            "subscript" => {
                self.evaluated("an array subscript", |this| this.children(node, src, depth));
            }
            "declaration_command" | "unset_command" => self.declaration(node, src, depth + 1),
            "regex" | "extglob_pattern" => {
                // `[[ $x =~ … ]]` and `case` patterns are expanded before they match.
                let text = Self::text(node, src);
                if holds_substitution(text) {
                    self.reread(text, Reread::Expansions, "a pattern");
                }
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
            | "test_operator" => {}
            "ERROR" => {
                self.risk("part of the command does not parse");
                self.children(node, src, depth);
                // What the grammar could not place may still be a substitution bash runs.
                let text = Self::text(node, src);
                if holds_substitution(text) {
                    self.reread(text, Reread::Expansions, "a part that does not parse");
                }
            }
            other => {
                self.risk(format!(
                    "the shell construct `{other}` ({}) is not analysed by codecrew",
                    first_line(Self::text(node, src))
                ));
                if self.test_operands(node, src, depth) {
                    return;
                }
                match place_of(node) {
                    Some(place) => self.within(place, |this| this.children(node, src, depth)),
                    None => self.children(node, src, depth),
                }
            }
        }
    }

    pub(super) fn children(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            self.node(child, src, depth + 1);
        }
    }

    pub(super) fn assignment(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        if node.kind() == "variable_assignments" {
            let mut cursor = node.walk();
            let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            for child in children {
                self.assignment(child, src, depth + 1);
            }
            return;
        }
        let name = self.assigned_name(node, src, depth);
        let value = node
            .child_by_field_name("value")
            .map(|value| self.word(value, src, depth + 1));
        self.assigned(&name, value.as_ref());
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

    /// The name an assignment sets; a subscript in it (`a[$(…)]=1`) is evaluated by bash,
    /// so it is walked like any other expression.
    fn assigned_name(&mut self, node: Node<'_>, src: &[u8], depth: usize) -> String {
        let Some(name) = node.child_by_field_name("name") else {
            return String::new();
        };
        if name.kind() == "subscript" {
            self.node(name, src, depth + 1);
        }
        Self::text(name, src).to_owned()
    }

    /// `[[ -v a[…] ]]` and `[[ x -eq y ]]`: bash evaluates these operands as a variable
    /// name with a subscript or as arithmetic, quoted or not. True when `node` was such
    /// a test, its operands walked.
    fn test_operands(&mut self, node: Node<'_>, src: &[u8], depth: usize) -> bool {
        let operator = node
            .child_by_field_name("operator")
            .or_else(|| node.child(0))
            .map(|operator| Self::text(operator, src))
            .unwrap_or_default();
        let evaluates = match node.kind() {
            "unary_expression" => operator == "-v",
            "binary_expression" => {
                matches!(operator, "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge")
            }
            _ => false,
        };
        if !evaluates {
            return false;
        }
        let mut cursor = node.walk();
        let operands: Vec<Node<'_>> = node
            .named_children(&mut cursor)
            .filter(|operand| operand.kind() != "test_operator")
            .collect();
        let place = "a test operand bash evaluates";
        for operand in operands {
            let word = self.within(place, |this| this.word(operand, src, depth + 1));
            if word.literal {
                self.reread(&word.value, Reread::Expansions, place);
            } else {
                self.unreadable(&word.source, place);
            }
        }
        true
    }

    pub(super) fn function(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
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
            self.within("the body of a function", |this| {
                this.node(body, src, depth + 1)
            });
        }
    }

    pub(super) fn command(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        let mut words: Vec<Word> = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        let mut environment = HashMap::new();
        let mut name_end = None;
        for child in children {
            match child.kind() {
                "variable_assignment" => {
                    let name = self.assigned_name(child, src, depth);
                    if let Some(value) = child.child_by_field_name("value") {
                        let value = self.word(value, src, depth + 1);
                        self.assigned(&name, Some(&value));
                        if value.literal {
                            environment.insert(name.clone(), value.value.clone());
                        }
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
                    word.source = Self::text(child, src).to_owned();
                    words.push(word);
                    name_end = Some(child.end_byte());
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
        if name.literal
            && let Some(alias) = self.aliases.get(&name.value).cloned()
        {
            let rest = name_end
                .and_then(|end| src.get(end..node.end_byte()))
                .map(|rest| String::from_utf8_lossy(rest).into_owned())
                .unwrap_or_default();
            let name = name.value.clone();
            self.expand_alias(&name, alias.as_deref(), &rest);
            return;
        }
        self.env_prefix = environment;
        self.command_name(name);
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
        let input = self.wrappers(&argv, &words);
        self.builtin_code(&argv, &words);
        match input {
            wrappers::Input::Nothing => {}
            wrappers::Input::Script => self.stdin_script(node, src),
            wrappers::Input::Code(kind) => self.stdin_code(node, src, &argv[0], kind),
        }
        let program = base_name(&argv[0]);
        if program == "cd" || program == "pushd" || program == "popd" {
            self.change_directory(&words);
        }
        let safe = safe(&argv);
        if !safe {
            self.possible_commands(&argv, &words);
        }
        // git itself lists the history only of a repository whose config names no program.
        if safe && program == "git" && !self.git_repository(&argv) {
            self.git_contents(&argv);
        }
        self.option_risks(&argv);
        self.tree_search(&argv);
        for word in &words[1..] {
            if word.literal && !word.brace() {
                self.word_paths(word, safe);
            }
        }
        self.env_prefix.clear();
        if self.nested {
            self.out.wrapped.push(argv);
        } else {
            self.out.commands.push(SimpleCommand { words: argv, safe });
        }
    }
}

impl Analyser<'_> {
    /// A command's name (also one a wrapper runs): denied when only known at run time.
    pub(super) fn command_name(&mut self, name: &Word) {
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
    }
}

/// Where a construct puts what it holds, for deny messages.
fn place_of(node: Node<'_>) -> Option<&'static str> {
    Some(match node.kind() {
        "test_command" => "a test",
        "case_statement" => "a `case` statement",
        "for_statement" | "c_style_for_statement" | "while_statement" => "a loop",
        "if_statement" | "elif_clause" | "else_clause" => "a conditional",
        _ => return None,
    })
}

/// Whether a function body calls `name`.
pub(super) fn calls_command(node: Node<'_>, src: &[u8], name: &str, depth: usize) -> bool {
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

/// The script bash runs for a backtick substitution (`` `…` ``): its body with the
/// backslashes that quote `\`, `` ` `` and `$` taken away, as bash takes them before it
/// reads the body. None for a `$(…)` substitution, read as it stands.
fn backtick_body(text: &str) -> Option<String> {
    let body = text.strip_prefix('`')?;
    let body = body.strip_suffix('`').unwrap_or(body);
    let mut script = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some(&next @ ('\\' | '`' | '$'))) => {
                script.push(next);
                chars.next();
            }
            _ => script.push(c),
        }
    }
    Some(script)
}
