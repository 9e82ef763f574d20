//! The registry of the CLIs codecrew knows: one line each, its name and the dialect its
//! output is in.
//!
//! Every other list of CLIs is derived from this one: the built-in agents and the
//! `provider` values of the configuration, the formats a `command` agent may print, the
//! values of `codecrew intercept --from` (the dialects, named for their CLIs); the docs
//! and the end-to-end matrix are checked against it. Adding a CLI is a line here and
//! its module in `codecrew-agents` (plus a decoder when it prints a dialect of its own).

use crate::decode::Format;

/// Declares [`CliKind`] from its rows: `Variant = "name", Dialect;`.
macro_rules! cli_kinds {
    ($($(#[$doc:meta])* $kind:ident = $name:literal, $format:ident;)+) => {
        /// A CLI codecrew knows, by the program's name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum CliKind {
            $($(#[$doc])* $kind,)+
        }

        impl CliKind {
            /// Every CLI, in the order the docs and the help list them.
            pub const ALL: [CliKind; [$(CliKind::$kind),+].len()] = [$(CliKind::$kind),+];

            /// Their names, in the same order.
            pub const NAMES: [&'static str; CliKind::ALL.len()] = [$($name),+];

            /// The CLI's name: its program, its built-in agent, its `provider` value.
            pub const fn name(self) -> &'static str {
                match self {
                    $(CliKind::$kind => $name,)+
                }
            }

            /// The dialect of its output as codecrew runs it (a CLI can print another's).
            pub const fn format(self) -> Format {
                match self {
                    $(CliKind::$kind => Format::$format,)+
                }
            }
        }
    };
}

cli_kinds! {
    /// Claude Code.
    Claude = "claude", Claude;
    /// Gemini CLI.
    Gemini = "gemini", Gemini;
    /// Codex.
    Codex = "codex", Codex;
    /// Copilot CLI.
    Copilot = "copilot", Copilot;
    /// opencode.
    Opencode = "opencode", Opencode;
    /// Qwen Code, whose stream-json is Claude Code's.
    Qwen = "qwen", Claude;
    /// llm (Simon Willison's).
    Llm = "llm", Llm;
}

impl CliKind {
    /// The CLI of that name (exactly as written; names are lower case).
    pub fn from_name(name: &str) -> Option<CliKind> {
        CliKind::ALL.into_iter().find(|kind| kind.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_in_the_order_of_all_and_read_back() {
        for (kind, name) in CliKind::ALL.into_iter().zip(CliKind::NAMES) {
            assert_eq!(kind.name(), name);
            assert_eq!(CliKind::from_name(name), Some(kind));
        }
        assert_eq!(CliKind::from_name("Claude"), None);
        assert_eq!(CliKind::from_name("command"), None);
    }

    /// The formats a CLI prints are the decoders' dialects: each dialect is printed by a
    /// CLI of the registry and named for one, and `--from` lists them in the registry's
    /// order after `auto` and `text`.
    #[test]
    fn the_dialects_are_the_formats_the_clis_print() {
        let mut dialects: Vec<Format> = Vec::new();
        for kind in CliKind::ALL {
            if !dialects.contains(&kind.format()) {
                dialects.push(kind.format());
            }
        }
        let mut expected = vec![Format::Auto, Format::Text];
        expected.extend(&dialects);
        assert_eq!(Format::ALL.to_vec(), expected);
        for dialect in dialects {
            assert!(
                CliKind::ALL
                    .iter()
                    .any(|kind| kind.format() == dialect && kind.name() == dialect.name()),
                "{dialect:?} is named for no CLI that prints it"
            );
        }
    }
}
