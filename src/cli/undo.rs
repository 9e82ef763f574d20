//! `codecrew undo`: its flags and help.

use clap::Args;

use super::OutputArg;

pub(super) const UNDO_HELP: &str = "\
Examples:
  codecrew execute \"@claude rename the config module\"
  codecrew undo                  # the newest run of execute here, put back
  codecrew undo 3f9a1c           # that run (an id, or the start of one)
  codecrew undo 3f9a1c --force   # even over files changed since
  codecrew undo --output json

Each run of execute is recorded as it starts and as it ends: the workspace's files
(what its .gitignore files do not ignore), kept by git in codecrew's state folder, never
in the workspace's own .git. Undo puts back every file the run changed, whoever wrote it
(codecrew's tools, the CLI's own tools, a command it ran): each written as it was,
recreated (with its mode) or, made by the run, removed. It says each file it put back.

It refuses, touching nothing, when a file is no longer as the run left it (someone
changed it since: it is named), and when the run's end was never recorded (its codecrew
was killed: what differs from before the run is listed, and may be others' changes
too); --force puts the files back anyway. It writes only inside the workspace, never
through a link. Ignored files, node_modules, .venv and __pycache__ folders, files inside
nested git repositories, and changes outside the workspace are not put back. Without
git installed, runs are not recorded. In chat, /undo does the same.

What `codecrew apply` brings into the checkout is recorded the same way (as
<run>-apply-<n>, said when it applies): `codecrew undo` takes it back. After
`apply --merge` or `--squash`, the files go back and the commit stays.

Exit code 0 when every file was put back, 1 when it refused or a file could not be put
back, 2 when there is no such run to undo here.";

/// `codecrew undo`.
#[derive(Debug, Args)]
pub struct UndoArgs {
    /// The run to undo: its id, or the start of one no other run shares [default: the
    /// newest run of execute in this workspace not undone yet that changed a file]
    pub run: Option<String>,
    /// Put the files back even when some were changed since the run, or the run's end
    /// was never recorded (those changes are lost)
    #[arg(long)]
    pub force: bool,
    #[arg(long, value_enum, default_value_t = OutputArg::Text)]
    pub output: OutputArg,
}
