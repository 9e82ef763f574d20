//! What a shell or an interpreter reads from its input as code: the here-documents and
//! here-strings on the command, and the commands piped into it. A shell's script is read
//! as commands (`echo` and `printf '%s'` of literal words are read as what they print);
//! an interpreter's code, which codecrew does not read, is denied when it names a
//! deny-listed program.

use super::*;

impl<'a> Analyser<'a> {
    /// A shell that reads its script from its input: a here-document or here-string on it
    /// is read as that script; a pipe or a file into it is only known at run time.
    pub(super) fn stdin_script(&mut self, command: Node<'_>, src: &[u8]) {
        let (redirects, producers) = Self::inputs(command, src);
        if redirects.is_empty() && producers.is_empty() && !self.speculative {
            // The input comes from elsewhere (`exec 3<<<…; bash /dev/fd/3`): what the
            // line holds is what the fail-safe reads.
            let line = self.line.clone();
            self.unreadable_output(&line, "the script a shell reads from its input");
        }
        for redirect in redirects {
            self.script_input(redirect, src);
        }
        let place = "the script piped into a shell";
        for producer in producers {
            match self.printed(producer, src) {
                Some(script) => self.reread(&script, Reread::Commands, place),
                None => self.unreadable_output(Self::text(producer, src), place),
            }
        }
    }

    /// What `echo` or `printf '%s'` with literal words prints: the script a shell fed by
    /// them reads. None for any other command, whose output is only known at run time.
    fn printed(&mut self, producer: Node<'_>, src: &[u8]) -> Option<String> {
        if producer.kind() != "command" {
            return None;
        }
        let mut cursor = producer.walk();
        let parts: Vec<Node<'_>> = producer.named_children(&mut cursor).collect();
        if parts
            .iter()
            .any(|part| part.kind() != "command_name" && !is_word(part.kind()))
        {
            return None;
        }
        let mut words = Vec::new();
        for part in parts {
            let part = if part.kind() == "command_name" {
                part.named_child(0)?
            } else {
                part
            };
            let word = self.word(part, src, 0);
            if !word.literal {
                return None;
            }
            words.push(word.value);
        }
        let (program, args) = words.split_first()?;
        match program.as_str() {
            "echo" if args.first().is_none_or(|first| !first.starts_with('-')) => {
                Some(args.join(" "))
            }
            // `cat clean.sh | bash`: files of the workspace, read.
            "cat" if !args.is_empty() && args.iter().all(|arg| !arg.starts_with('-')) => {
                let mut script = String::new();
                for file in args {
                    script.push_str(&self.read_script(file)?);
                    script.push('\n');
                }
                Some(script)
            }
            "printf" => match args {
                [format] if !format.contains(['%', '\\']) => Some(format.clone()),
                [format, rest @ ..] if matches!(format.as_str(), "%s" | "%s\\n" | "%s\\n\\n") => {
                    Some(rest.join("\n"))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// An interpreter that reads its code from its input (`python3 - <<EOF`, `… | perl`):
    /// the here-documents, here-strings and commands feeding it, which codecrew does not
    /// read as that language, are denied when they name a deny-listed program.
    pub(super) fn stdin_code(&mut self, command: Node<'_>, src: &[u8], program: &str, kind: &str) {
        let (redirects, producers) = Self::inputs(command, src);
        let place = format!("the {kind} `{}` reads from its input", base_name(program));
        let mut texts: Vec<String> = redirects
            .iter()
            .map(|redirect| Self::text(*redirect, src).to_owned())
            .collect();
        texts.extend(
            producers
                .iter()
                .map(|producer| Self::text(*producer, src).to_owned()),
        );
        for text in texts {
            self.risk(format!("{place} is not read by codecrew"));
            if let Some(name) = deny_listed_output(&text) {
                self.deny(format!(
                    "{place} names `{name}`, which is on the deny list; codecrew does not read \
                     {kind} and does not run what it cannot read"
                ));
            }
        }
    }

    /// The redirections on `command` and the commands piped into it.
    fn inputs<'t>(command: Node<'t>, _src: &[u8]) -> (Vec<Node<'t>>, Vec<Node<'t>>) {
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
        let mut producers = Vec::new();
        if let Some(pipeline) = statement
            .parent()
            .filter(|parent| parent.kind() == "pipeline")
        {
            // `a | b <<EOF`: the grammar hangs b's redirection on the whole pipeline.
            if let Some(outer) = pipeline
                .parent()
                .filter(|parent| parent.kind() == "redirected_statement")
            {
                let mut cursor = outer.walk();
                redirects.extend(
                    outer
                        .named_children(&mut cursor)
                        .filter(|child| child.kind().ends_with("_redirect")),
                );
            }
            let mut cursor = pipeline.walk();
            producers.extend(
                pipeline
                    .named_children(&mut cursor)
                    .take_while(|child| child.id() != statement.id()),
            );
        }
        redirects.dedup_by_key(|redirect| redirect.id());
        (redirects, producers)
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
                    let body = match Self::text(body, src) {
                        "" => heredoc_text(Self::text(redirect, src)),
                        text => text.to_owned(),
                    };
                    self.reread(&body, Reread::Commands, place);
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
            // `bash < clean.sh`: a script file in the workspace is read as the script.
            "file_redirect" => {
                let text = Self::text(redirect, src);
                let file = text
                    .strip_prefix("0<")
                    .or_else(|| text.strip_prefix('<'))
                    .map(str::trim)
                    .filter(|file| !file.contains(['$', '`', '"', '\'', '\\', '*', '?', '[']));
                match file.and_then(|file| self.read_script(file)) {
                    Some(script) => self.reread(&script, Reread::Commands, place),
                    None => self.unreadable_output(text, place),
                }
            }
            _ => self.unreadable_output(Self::text(redirect, src), place),
        }
    }
}

/// A here-document's body from the redirection's text (`<<'EOF'\n…\nEOF`): the lines
/// between its first and its terminator. The grammar leaves the body node empty when
/// the body starts with a backslash (`\rm -rf /`), reading it as words instead.
fn heredoc_text(redirect: &str) -> String {
    let Some((start, body)) = redirect.split_once('\n') else {
        return String::new();
    };
    let delimiter: String = start
        .trim_start_matches('<')
        .trim_start_matches('-')
        .chars()
        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
        .collect();
    let delimiter = delimiter.trim();
    let mut lines: Vec<&str> = body.lines().collect();
    if lines
        .last()
        .is_some_and(|last| last.trim_start_matches('\t') == delimiter)
    {
        lines.pop();
    }
    lines.join("\n")
}

/// Whether a node of this kind is a word of a command.
fn is_word(kind: &str) -> bool {
    matches!(
        kind,
        "word" | "string" | "raw_string" | "concatenation" | "number" | "ansi_c_string"
    )
}
