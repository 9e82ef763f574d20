//! The crew in parallel: `execute --worktrees` and the commands that follow its
//! worktrees (`diff`, `apply`, `worktrees`).

use clap::{Args, Subcommand, ValueEnum};

use super::OutputArg;

pub(super) const WORKTREES_HELP: &str = "\
Examples:
  codecrew execute --worktrees --check \"cargo test\" \"@claude @codex @gemini fix the failing test\"
  codecrew diff 3f9a1c codex
  codecrew apply 3f9a1c codex
  codecrew worktrees
  codecrew worktrees rm 3f9a1c
  codecrew worktrees prune --older-than 7d

Each agent of an `execute --worktrees` run works in a git worktree of its own, on the
branch codecrew/<run>/<agent> made from HEAD (or --base), kept outside the repository in
$XDG_DATA_HOME/codecrew/worktrees (~/.local/share/codecrew/worktrees; CODECREW_WORKTREES
sets another folder). Its CLI and its tools may write that worktree and, of the
repository, only what a commit on its own branch writes. When the agents are done, what
each changed is committed on its branch and shown in a table; a worktree left unchanged is
removed at once. `codecrew apply` brings one change into the checkout; the others stay
until `codecrew worktrees rm` or `prune` removes them, which checks that the folder, the
branch and git's record of the worktree are gone.";

/// How an `execute` run's agents are kept apart.
#[derive(Debug, Args, Default)]
pub struct IsolationArgs {
    /// Each agent works in a git worktree of its own (execute; the default when several
    /// agents execute in one repository): compare them, then `codecrew apply` one
    #[arg(long, alias = "worktree")]
    pub worktrees: bool,
    /// Let several agents execute in the one workspace at once (they may overwrite each
    /// other's work)
    #[arg(long, conflicts_with = "worktrees")]
    pub shared_workspace: bool,
    /// The commit the worktrees start from [default: HEAD]
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,
    /// With changes in the checkout that HEAD does not have: refuse (the default), start
    /// from HEAD without them, or copy them into each worktree
    #[arg(long, value_enum, value_name = "WHAT")]
    pub dirty: Option<DirtyArg>,
    /// A command run in each agent's worktree when the agents are done (e.g. "cargo
    /// test"), in the sandbox run_command gets; its result is a column of the table
    #[arg(long, value_name = "COMMAND")]
    pub check: Option<String>,
    // The help text's `[:model]` is no link (clap shows this text as it is).
    #[allow(rustdoc::broken_intra_doc_links)]
    /// One more agent (@agent[:model]) ranks the changes when they are done, read-only,
    /// from their diffs and check results; its ranking is a column of the table
    #[arg(long, value_name = "@AGENT")]
    pub judge: Option<String>,
}

impl IsolationArgs {
    /// Whether a flag that only means something with worktrees was given.
    pub fn wants_worktrees(&self) -> bool {
        self.worktrees
            || self.base.is_some()
            || self.dirty.is_some()
            || self.check.is_some()
            || self.judge.is_some()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DirtyArg {
    Refuse,
    Ignore,
    CopyTracked,
    CopyAll,
}

/// `codecrew diff RUN [AGENT]`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The run (any unambiguous prefix of its id)
    pub run: String,
    /// The agent whose change to show [default: every agent of the run]
    pub agent: Option<String>,
    /// Only the files changed and their lines added and removed
    #[arg(long)]
    pub stat: bool,
}

/// `codecrew apply RUN AGENT`.
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// The run (any unambiguous prefix of its id)
    pub run: String,
    /// The agent whose change to bring in
    pub agent: String,
    /// A merge commit that keeps the agent's commits
    #[arg(long, conflicts_with_all = ["squash", "patch"])]
    pub merge: bool,
    /// One commit with the whole change
    #[arg(long, conflicts_with = "patch")]
    pub squash: bool,
    /// The change in the working tree, uncommitted (the default)
    #[arg(long)]
    pub patch: bool,
    /// Keep the run's worktrees (by default, once the change is in, every worktree of
    /// the run is removed: folder, branch and git's record)
    #[arg(long)]
    pub keep: bool,
}

/// `codecrew worktrees [rm|prune]`.
#[derive(Debug, Args)]
pub struct WorktreesArgs {
    #[command(subcommand)]
    pub command: Option<WorktreesCommand>,
    #[arg(long, value_enum, default_value_t = OutputArg::Text)]
    pub output: OutputArg,
}

#[derive(Debug, Subcommand)]
pub enum WorktreesCommand {
    /// Remove a run's worktrees (or one agent's): folder, branch and git's record
    Rm {
        /// The run (any unambiguous prefix of its id)
        run: String,
        /// Only this agent's worktree
        agent: Option<String>,
    },
    /// Remove the worktrees nobody needs: those of runs whose codecrew died before
    /// settling them, those already applied, and with --older-than the older ones
    Prune {
        /// Also every worktree made longer ago than this, e.g. 7d, 12h
        #[arg(long, value_name = "AGE", value_parser = super::parse_age)]
        older_than: Option<std::time::Duration>,
        /// Every worktree of this repository
        #[arg(long, conflicts_with = "older_than")]
        all: bool,
    },
}
