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
            self.node(body, src, depth + 1);
        }
    }

    pub(super) fn command(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
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
        if self.nested {
            self.out.wrapped.push(argv);
        } else {
            self.out.commands.push(SimpleCommand { words: argv, safe });
        }
    }
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
