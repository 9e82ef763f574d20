//! When an agent's job in its worktree has ended: its work committed on its branch,
//! measured against the base, tried with `--check`, and whether it would merge onto the
//! checkout's HEAD. A worktree the agent left unchanged is removed at once.

use std::path::Path;
use std::time::Duration;

use codecrew_policy::sandbox::LinkedGit;
use codecrew_tools::child::{self, ChildSpec, Confinement, Ending};

use super::git::{Git, GitError, entries};
use super::kept;
use super::record::{Change, Check, Record, RecordError};
use super::repository::Repository;

/// The longest `--check` may run in one worktree.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// How `--check` runs: the command, and the sandbox settings of `run_command`.
#[derive(Debug, Clone)]
pub struct CheckSpec {
    pub command: String,
    /// Variables passed through the environment scrub (`pass_env`).
    pub pass_env: Vec<String>,
    pub allow_network: bool,
    /// Whether the OS sandbox confines it (as it does `run_command`).
    pub sandbox: bool,
}

/// Why a worktree could not be settled.
#[derive(Debug, thiserror::Error)]
pub enum SettleError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(transparent)]
    Kept(#[from] kept::KeptError),
}

/// Commits what the agent left in its worktree (at `folder`'s `record`), measures its
/// branch against the base and HEAD, runs the check, and writes it all down. An unchanged
/// worktree is removed (the record says so: `change.files == 0`).
pub async fn settle(
    repo: &Repository,
    folder: &Path,
    record: &mut Record,
    check: Option<&CheckSpec>,
    outside: &LinkedGit,
) -> Result<(), SettleError> {
    let path = record.path(folder);
    let worktree = repo.worktree_git(folder, record)?;
    let commit = commit_work(&worktree, record)?;
    let mut change = measure(&worktree, &record.base)?;
    change.commit = commit;
    if change.is_empty() {
        record.change = Some(change);
        record.write(folder)?;
        kept::remove(repo, folder, record)?;
        return Ok(());
    }
    let (merges_cleanly, conflicts) = merges_onto_head(repo, &record.branch);
    change.merges_cleanly = merges_cleanly;
    change.conflicts = conflicts;
    record.change = Some(change);
    record.write(folder)?;
    if let Some(check) = check {
        record.check = Some(run_check(check, &path, outside).await);
        record.write(folder)?;
    }
    Ok(())
}

/// `git add -A` and a commit of whatever the agent left uncommitted (ignored files stay
/// out); the commit, or None when there was nothing.
fn commit_work(worktree: &Git, record: &Record) -> Result<Option<String>, GitError> {
    let (agent, run) = (&record.agent, &record.run);
    worktree.run(["add", "-A"])?;
    // The folders linked in are the checkout's, not the agent's work (a `.gitignore` that
    // names `node_modules/` does not match the link that stands for it).
    for linked in &record.linked {
        worktree.run([
            "rm",
            "-r",
            "-q",
            "--cached",
            "--ignore-unmatch",
            "--",
            linked,
        ])?;
    }
    if worktree.succeeds(["diff", "--cached", "--quiet"])? {
        return Ok(None);
    }
    let message = format!("@{agent}'s work in codecrew run {run}");
    let mut command = worktree.command(["commit", "--quiet", "--no-verify", "-m", &message]);
    let name = format!("codecrew (@{agent})");
    command
        .env("GIT_AUTHOR_NAME", &name)
        .env("GIT_AUTHOR_EMAIL", "codecrew@localhost")
        .env("GIT_COMMITTER_NAME", &name)
        .env("GIT_COMMITTER_EMAIL", "codecrew@localhost");
    let output = command.output().map_err(GitError::Missing)?;
    if !output.status.success() {
        return Err(super::git::failed(&["commit"], &output));
    }
    Ok(Some(worktree.run(["rev-parse", "HEAD"])?.trim().to_owned()))
}

/// Files changed and lines added and removed from `base` to the worktree's HEAD (a
/// binary file counts as changed, with no lines).
fn measure(worktree: &Git, base: &str) -> Result<Change, GitError> {
    let numstat = worktree.run(["diff", "--numstat", "-z", "--no-renames", base, "HEAD"])?;
    let mut change = Change {
        files: 0,
        added: 0,
        removed: 0,
        commit: None,
        merges_cleanly: None,
        conflicts: Vec::new(),
    };
    for entry in entries(&numstat) {
        let mut fields = entry.split('\t');
        let added = fields.next().and_then(|n| n.parse::<u64>().ok());
        let removed = fields.next().and_then(|n| n.parse::<u64>().ok());
        change.files += 1;
        change.added += added.unwrap_or(0);
        change.removed += removed.unwrap_or(0);
    }
    Ok(change)
}

/// Whether `branch` merges onto the checkout's HEAD without a conflict, and the files
/// that would conflict (`git merge-tree`, which touches neither the checkout nor the
/// index). None when git cannot say (older than 2.38).
pub fn merges_onto_head(repo: &Repository, branch: &str) -> (Option<bool>, Vec<String>) {
    let output = repo.git().output([
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--no-messages",
        "-z",
        "HEAD",
        branch,
    ]);
    let Ok(output) = output else {
        return (None, Vec::new());
    };
    match output.status.code() {
        Some(0) => (Some(true), Vec::new()),
        Some(1) => {
            let said = String::from_utf8_lossy(&output.stdout);
            // The merged tree's id, then the conflicted files.
            let files = entries(&said).skip(1).map(str::to_owned).collect();
            (Some(false), files)
        }
        _ => (None, Vec::new()),
    }
}

/// Runs `--check` in the worktree, in the sandbox `run_command` gets in execute: it may
/// write the worktree (and what a commit there writes) and `/tmp`, nothing else.
pub async fn run_check(check: &CheckSpec, path: &Path, outside: &LinkedGit) -> Check {
    let env = codecrew_policy::secrets::scrub_env_with(std::env::vars_os(), &check.pass_env);
    let confinement = check.sandbox.then(|| Confinement::Mode {
        writable: std::iter::once(path.to_path_buf())
            .chain(outside.write.iter().cloned())
            .collect(),
        allow_network: check.allow_network,
    });
    let spec = ChildSpec {
        program: "bash".into(),
        args: vec!["-c".into(), check.command.clone().into()],
        cwd: path.to_path_buf(),
        env,
        stdin: None,
        timeout: CHECK_TIMEOUT,
        confinement,
    };
    let (exit_code, output) = match child::run(spec).await {
        Ok(finished) => {
            let code = match finished.ending {
                Ending::Exited { status, .. } => status.code(),
                Ending::TimedOut => None,
            };
            let mut output = finished.stdout.text();
            output.push_str(&finished.stderr.text());
            (code, output)
        }
        Err(error) => (None, error.to_string()),
    };
    let tail: String = {
        let chars: Vec<char> = output.chars().collect();
        chars[chars.len().saturating_sub(2000)..].iter().collect()
    };
    Check {
        command: check.command.clone(),
        passed: exit_code == Some(0),
        exit_code,
        output: tail,
    }
}
