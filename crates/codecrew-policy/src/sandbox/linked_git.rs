//! The git data a linked worktree needs from outside its own folder.
//!
//! A worktree that `git worktree add` made keeps its files in its folder, but its
//! repository lives in the main checkout's git folder (the *common* folder): objects,
//! refs, config, hooks, and a folder of its own under `worktrees/<name>` (its `HEAD`, its
//! index). Git run inside the worktree must read the common folder, and a commit writes
//! objects, the worktree's branch and its reflog there.
//!
//! So an agent that works in a worktree codecrew made gets exactly that and no more: it
//! may read the common folder, and write its objects, the refs and reflogs of the run's
//! branches and its own `worktrees/<name>` folder. Never `hooks/`, `config`, another
//! worktree's folder or the main checkout's files, which would run or change code outside
//! its folder. The paths come from what codecrew recorded when it made the worktree, never
//! from the worktree's `.git` file, which the agent may rewrite.

use std::path::PathBuf;

/// What git in a linked worktree may touch outside it (empty for any other workspace).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkedGit {
    /// Read (and list): the repository's common git folder.
    pub read: Vec<PathBuf>,
    /// Read and write: what a commit on the worktree's own branch writes.
    pub write: Vec<PathBuf>,
}

impl LinkedGit {
    /// What a commit in the worktree whose git folder is `common/worktrees/<name>`
    /// writes, its branch under `refs/heads/<branch_folder>/`: objects, that folder of
    /// refs and of reflogs (made here when missing, since the wall can only grant what
    /// exists), and the worktree's own folder.
    pub fn for_worktree(common: PathBuf, name: &str, branch_folder: &str) -> LinkedGit {
        let refs = common.join("refs/heads").join(branch_folder);
        let logs = common.join("logs/refs/heads").join(branch_folder);
        for folder in [&refs, &logs] {
            let _ = std::fs::create_dir_all(folder);
        }
        LinkedGit {
            write: vec![
                common.join("objects"),
                refs,
                logs,
                common.join("worktrees").join(name),
            ],
            read: vec![common],
        }
    }

    pub fn is_empty(&self) -> bool {
        self.read.is_empty() && self.write.is_empty()
    }
}
