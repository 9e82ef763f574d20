//! Bringing one agent's change into the checkout: as a patch in the working tree (the
//! default), a merge that keeps its commits, or one squashed commit. The checkout must
//! be clean; a change that would conflict changes nothing and names the files.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use super::git::{GitError, failed};
use super::record::{Applied, Record, RecordError, now};
use super::repository::Repository;
use super::settle::merges_onto_head;

/// How a change comes into the checkout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// Its diff applied to the working tree, left uncommitted.
    #[default]
    Patch,
    /// A merge commit that keeps the agent's commits.
    Merge,
    /// One commit with the whole change.
    Squash,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Patch => "patch",
            Method::Merge => "merge",
            Method::Squash => "squash",
        }
    }
}

/// Why a change was not applied. Nothing in the checkout changed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("the checkout has changes of its own ({0}); commit or stash them first, then apply")]
    Dirty(String),
    #[error("@{agent}'s change conflicts with the checkout in: {}; nothing was changed", .files.join(", "))]
    Conflict { agent: String, files: Vec<String> },
    #[error("@{0} changed nothing: there is nothing to apply")]
    Empty(String),
    #[error("@{agent}'s change was already applied ({method})")]
    Already { agent: String, method: String },
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Record(#[from] RecordError),
}

/// Applies `record`'s branch to the checkout by `method`, and writes it down.
pub fn apply(
    repo: &Repository,
    folder: &Path,
    record: &mut Record,
    method: Method,
) -> Result<(), ApplyError> {
    if let Some(applied) = &record.applied {
        return Err(ApplyError::Already {
            agent: record.agent.clone(),
            method: applied.method.clone(),
        });
    }
    if record
        .change
        .as_ref()
        .is_some_and(|change| change.is_empty())
    {
        return Err(ApplyError::Empty(record.agent.clone()));
    }
    // Its branch and HEAD still as codecrew made them: a branch the agent made a link to
    // another ref would bring that ref's history in.
    repo.worktree_git(folder, record)?;
    let dirty = repo.dirty()?;
    if !dirty.tracked.is_empty() {
        return Err(ApplyError::Dirty(dirty.sample()));
    }
    let git = repo.git();
    match method {
        Method::Patch => {
            let patch = git
                .command(["diff", "--binary", &record.base, &record.branch])
                .output()
                .map_err(GitError::Missing)?;
            if !patch.status.success() {
                return Err(failed(&["diff"], &patch).into());
            }
            if patch.stdout.is_empty() {
                return Err(ApplyError::Empty(record.agent.clone()));
            }
            // Checked whole first: `git apply` changes nothing unless every hunk fits.
            if let Err(said) = git_apply(repo, &patch.stdout, true)? {
                return Err(ApplyError::Conflict {
                    agent: record.agent.clone(),
                    files: files_named(&said),
                });
            }
            if let Err(said) = git_apply(repo, &patch.stdout, false)? {
                return Err(GitError::Failed {
                    command: "apply".into(),
                    said,
                }
                .into());
            }
        }
        Method::Merge | Method::Squash => {
            let (clean, conflicts) = merges_onto_head(repo, &record.branch);
            if clean == Some(false) {
                return Err(ApplyError::Conflict {
                    agent: record.agent.clone(),
                    files: conflicts,
                });
            }
            let message = format!(
                "@{}'s change from codecrew run {}",
                record.agent, record.run
            );
            if method == Method::Merge {
                git.run([
                    "merge",
                    "--quiet",
                    "--no-ff",
                    "-m",
                    &message,
                    &record.branch,
                ])?;
            } else {
                git.run(["merge", "--quiet", "--squash", &record.branch])?;
                git.run(["commit", "--quiet", "-m", &message])?;
            }
        }
    }
    record.applied = Some(Applied {
        method: method.name().to_owned(),
        at: now(),
    });
    record.write(folder)?;
    Ok(())
}

/// `git apply` of `patch` in the checkout (`check`: only whether it would apply); the
/// inner error is what git said when it would not.
fn git_apply(repo: &Repository, patch: &[u8], check: bool) -> Result<Result<(), String>, GitError> {
    let mut args = vec!["apply", "--whitespace=nowarn"];
    if check {
        args.push("--check");
    }
    args.push("-");
    let mut child = repo
        .git()
        .command(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(GitError::Missing)?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(patch);
    }
    let output = child.wait_with_output().map_err(GitError::Missing)?;
    if output.status.success() {
        Ok(Ok(()))
    } else {
        Ok(Err(String::from_utf8_lossy(&output.stderr)
            .trim()
            .to_owned()))
    }
}

/// The files `git apply` named in its complaints (`error: patch failed: FILE:LINE`,
/// `error: FILE: already exists in working directory`, ...).
fn files_named(said: &str) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for line in said.lines() {
        let Some(rest) = line.strip_prefix("error: ") else {
            continue;
        };
        let file = if let Some(failed) = rest.strip_prefix("patch failed: ") {
            failed.rsplit_once(':').map_or(failed, |(file, _)| file)
        } else if let Some((file, _)) = rest.split_once(": ") {
            file
        } else {
            continue;
        };
        if !files.iter().any(|known| known == file) {
            files.push(file.to_owned());
        }
    }
    if files.is_empty() {
        files.push(said.lines().next().unwrap_or_default().to_owned());
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_git_apply_complains_of_are_named_once() {
        let said = "error: patch failed: app.py:1\nerror: app.py: patch does not apply\n\
                    error: new.txt: already exists in working directory";
        assert_eq!(files_named(said), ["app.py", "new.txt"]);
    }
}
