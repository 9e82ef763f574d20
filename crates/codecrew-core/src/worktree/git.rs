//! Git, run by codecrew itself on the user's repository and the worktrees it made.
//!
//! What codecrew runs here is its own bookkeeping (make a worktree, commit an agent's
//! work, compare, apply), so it runs none of the programs a repository's configuration
//! could name on the way: no hooks, no file-system monitor. Output is read as bytes and
//! decoded lossily; a failure carries git's own words.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Why a git command failed: it could not start, or it said why.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("git could not start ({0}); codecrew needs git on PATH for worktrees")]
    Missing(std::io::Error),
    #[error("`git {command}` failed: {said}")]
    Failed { command: String, said: String },
}

/// Git in one folder.
#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
    /// A worktree's git folder, named explicitly (never read from its `.git` file, which
    /// the agent working there could rewrite).
    git_dir: Option<PathBuf>,
}

impl Git {
    pub fn at(dir: impl Into<PathBuf>) -> Git {
        Git {
            dir: dir.into(),
            git_dir: None,
        }
    }

    /// Git in the worktree `dir` whose git folder is `git_dir`.
    pub fn in_worktree(dir: impl Into<PathBuf>, git_dir: impl Into<PathBuf>) -> Git {
        Git {
            dir: dir.into(),
            git_dir: Some(git_dir.into()),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The command, not run: hooks and the file-system monitor off, no pager, no
    /// prompt for credentials, messages in English (they are quoted back).
    pub fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = Command::new("git");
        command
            .current_dir(&self.dir)
            .args([
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "core.fsmonitor=false",
            ])
            .args(args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_PAGER", "cat")
            .env("LC_ALL", "C")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_COMMON_DIR")
            .stdin(Stdio::null());
        if let Some(git_dir) = &self.git_dir {
            command
                .env("GIT_DIR", git_dir)
                .env("GIT_WORK_TREE", &self.dir);
        }
        command
    }

    /// Runs git; its output whatever its exit status.
    pub fn output<I, S>(&self, args: I) -> Result<Output, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.command(args).output().map_err(GitError::Missing)
    }

    /// Runs git and returns its stdout; a non-zero exit is an error with its stderr.
    pub fn run<I, S>(&self, args: I) -> Result<String, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<_> = args
            .into_iter()
            .map(|arg| arg.as_ref().to_os_string())
            .collect();
        let output = self.output(&args)?;
        if output.status.success() {
            return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
        }
        Err(failed(&args, &output))
    }

    /// Whether git exits 0 (a question: `rev-parse --verify`, `diff --quiet`).
    pub fn succeeds<I, S>(&self, args: I) -> Result<bool, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Ok(self.output(args)?.status.success())
    }
}

/// The error of a command that exited non-zero: its stderr (else stdout), trimmed.
pub fn failed(args: &[impl AsRef<OsStr>], output: &Output) -> GitError {
    let said = if output.stderr.trim_ascii().is_empty() {
        &output.stdout
    } else {
        &output.stderr
    };
    GitError::Failed {
        command: args
            .iter()
            .map(|arg| arg.as_ref().to_string_lossy())
            .collect::<Vec<_>>()
            .join(" "),
        said: String::from_utf8_lossy(said.trim_ascii()).into_owned(),
    }
}

/// Splits git's `-z` output into its entries.
pub fn entries(output: &str) -> impl Iterator<Item = &str> {
    output.split('\0').filter(|entry| !entry.is_empty())
}
