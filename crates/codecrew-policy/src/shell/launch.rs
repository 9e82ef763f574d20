//! What a command runs besides itself, as [`launchers`](super::launchers), the shells'
//! and the interpreters' readings say: the vocabulary they share.

use std::ops::Range;

/// How a command runs another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Launch {
    /// It runs nothing else.
    None,
    /// It runs the command at `argv[start..end]`; `unknown_args` when more arguments
    /// arrive at run time (xargs), `replace` a string in its words that input replaces
    /// (`xargs -I{}`).
    Command {
        start: usize,
        end: usize,
        unknown_args: bool,
        replace: Option<String>,
        cwd: Cwd,
    },
    /// It hands this text, made of `argv[words]`, to a shell as its script (`bash -c`,
    /// `eval`, `flock -c`, `watch`).
    Script {
        text: String,
        words: Range<usize>,
        cwd: Cwd,
    },
    /// A shell reading its script from its input or a file descriptor (`bash -s`,
    /// `bash /dev/stdin`, `. /dev/fd/3`).
    Stdin,
    /// A shell reading its script from a file (`bash x.sh`, `source x.sh`).
    ScriptFile(String),
    /// Code for an interpreter that is not bash (`perl -e`, `awk 'BEGIN{system(…)}'`):
    /// these words hold it; `stdin` when it reads code from its input too.
    Inline {
        kind: &'static str,
        code: Vec<String>,
        stdin: bool,
    },
    /// A form this reading does not know, at `argv[from]`: `why` names it.
    Unknown { from: usize, why: String },
}

/// The directory a launched command runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Cwd {
    /// Where the launcher stands.
    Same,
    /// This directory, relative to where the launcher stands (`env -C dir`).
    Dir(String),
    /// One the analysis cannot know (a login shell's home, a chroot, a git alias's
    /// top level).
    Unknown,
}
