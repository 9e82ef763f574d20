//! Redirections: where output goes and input comes from.

use super::*;

impl<'a> Analyser<'a> {
    pub(super) fn redirect(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        let place = match node.kind() {
            "heredoc_redirect" => "a here-document",
            "herestring_redirect" => "a here-string",
            _ => "a redirection",
        };
        self.within(place, |this| this.redirect_parts(node, src, depth));
    }

    fn redirect_parts(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
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
                // `<<'EOF'` (any quote in the marker): the body is not expanded at all.
                let expanded = !children.iter().any(|child| {
                    child.kind() == "heredoc_start"
                        && Self::text(*child, src).contains(['\'', '"', '\\'])
                });
                for child in children {
                    match child.kind() {
                        // The grammar reads `$(…)` in a body but leaves a backtick
                        // substitution in its text, which bash runs all the same: such a
                        // body is read again for its expansions, as bash expands it.
                        "heredoc_body" if expanded && Self::text(child, src).contains('`') => {
                            self.reread(
                                Self::text(child, src),
                                Reread::Expansions,
                                "a here-document",
                            );
                        }
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

    pub(super) fn redirect_to(&mut self, operator: &str, destination: &Word) {
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
}

/// Writes that go nowhere harmful.
pub(super) fn is_harmless_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/stdin" | "/dev/tty" | "/dev/zero"
    ) || path.starts_with("/dev/fd/")
}
