//! The crew in parallel: each `execute` agent in a git worktree of its own.
//!
//! ```text
//! Repository::find(workspace)        the checkout, its HEAD, whether it is clean
//!   -> make::make(repo, run, agent)  a linked worktree on codecrew/<run>/<agent> from
//!                                    the base, outside the repository, with what
//!                                    .worktreeinclude names and [worktree] sets up
//!   -> the job runs there            its wall and its tools see the worktree alone, and
//!                                    of the repository what a commit needs (LinkedGit)
//!   -> settle::settle                the agent's work committed on its branch, compared
//!                                    (files, lines, --check, merges onto HEAD or not)
//!   -> apply / kept::remove          into the checkout, or thrown away (checked)
//! ```
//!
//! Each worktree has a record beside it (`<run>/<agent>.json`), written by codecrew
//! where no agent can write; it is read back as data (checked, never trusted to name a
//! path outside the worktrees' folder).

pub mod apply;
mod git;
pub mod kept;
pub mod make;
mod record;
mod repository;
pub mod settle;

use std::path::PathBuf;

pub use git::{Git, GitError};
pub use record::{Applied, Change, Check, Record, RecordError};
pub use repository::{Dirty, Repository, RepositoryError};

/// Where codecrew keeps the worktrees it makes: `$XDG_DATA_HOME/codecrew/worktrees`,
/// else `~/.local/share/codecrew/worktrees`. Outside every repository (a worktree inside
/// one would slow each walk of it and be seen as its files), and not in codecrew's
/// state folder, which no agent may reach.
pub fn root() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CODECREW_WORKTREES").map(PathBuf::from)
        && dir.is_absolute()
    {
        return Some(dir);
    }
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute())
    };
    let data = absolute("XDG_DATA_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".local/share")))?;
    Some(data.join("codecrew/worktrees"))
}

/// The branch an agent's worktree is on.
pub fn branch(run: &str, agent: &str) -> String {
    format!("codecrew/{run}/{agent}")
}
