//! What codecrew adds to making an agent's worktree, against `git worktree add` alone.
//!
//! `cargo bench --bench worktree` makes a repository of 10,000 files (100 folders of 100
//! small files, one commit), then, several times each:
//! - `git worktree add -b <branch> <path> HEAD` and its removal, as git alone does it;
//! - codecrew's [`make::make`] (the program check of the repository, the worktree on its
//!   branch, its record, its links checked, `.worktreeinclude` looked for) and
//!   [`kept::remove`] (the folder, git's record, the branch, each checked gone).
//!
//! Medians; the goal is ≤ 1.2× git's own time. Figures in docs/PERFORMANCE.md.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use codecrew_core::worktree::make::{self, Isolation};
use codecrew_core::worktree::{Repository, kept};

const FOLDERS: usize = 100;
const FILES_PER_FOLDER: usize = 100;
const RUNS: usize = 9;

type Failed = Box<dyn std::error::Error>;

fn git(dir: &Path, args: &[&str]) -> Result<(), Failed> {
    let output = Command::new("git")
        .args(["-c", "user.name=bench", "-c", "user.email=bench@localhost"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()?;
    if !output.status.success() {
        return Err(format!("git {args:?}: {}", String::from_utf8_lossy(&output.stderr)).into());
    }
    Ok(())
}

fn median(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples
        .get(samples.len() / 2)
        .copied()
        .unwrap_or_default()
        .as_secs_f64()
        * 1e3
}

fn text(path: &Path) -> Result<&str, Failed> {
    path.to_str()
        .ok_or_else(|| "a path that is not UTF-8".into())
}

fn main() -> Result<(), Failed> {
    // The worktrees go under a scratch folder of the bench's, not the user's: the bench
    // runs itself again with CODECREW_WORKTREES naming it.
    let Some(worktrees) = std::env::var_os("CODECREW_WORKTREES") else {
        let scratch = tempfile::tempdir()?;
        let status = Command::new(std::env::current_exe()?)
            .args(std::env::args_os().skip(1))
            .env("CODECREW_WORKTREES", scratch.path())
            .status()?;
        std::process::exit(status.code().unwrap_or(1));
    };
    let scratch = tempfile::tempdir_in(&worktrees)?;
    let top = scratch.path().join("repo");
    for folder in 0..FOLDERS {
        let dir = top.join(format!("dir{folder:03}"));
        std::fs::create_dir_all(&dir)?;
        for file in 0..FILES_PER_FOLDER {
            std::fs::write(
                dir.join(format!("file{file:03}.txt")),
                format!("{folder} {file}\n"),
            )?;
        }
    }
    git(&top, &["init", "-q"])?;
    git(&top, &["add", "."])?;
    git(&top, &["commit", "-qm", "ten thousand files"])?;

    let mut alone = Vec::with_capacity(RUNS);
    for run in 0..RUNS {
        let path = scratch.path().join(format!("plain{run}"));
        let branch = format!("plain/{run}");
        let started = Instant::now();
        git(
            &top,
            &[
                "worktree",
                "add",
                "--quiet",
                "-b",
                &branch,
                text(&path)?,
                "HEAD",
            ],
        )?;
        alone.push(started.elapsed());
        git(&top, &["worktree", "remove", "--force", text(&path)?])?;
        git(&top, &["branch", "-D", "-q", &branch])?;
    }

    let repo = Repository::find(&top).ok_or("no repository")?;
    let folder = repo.folder(&codecrew_core::worktree::root().ok_or("no root")?);
    let isolation = Isolation::default();
    let mut made = Vec::with_capacity(RUNS);
    let mut removed = Vec::with_capacity(RUNS);
    for run in 0..RUNS {
        let id = format!("bench{run}");
        let started = Instant::now();
        let base = make::base(&repo, &isolation)?;
        let one = make::make(&repo, &base, &id, "agent", &isolation)?;
        made.push(started.elapsed());
        let started = Instant::now();
        kept::remove(&repo, &folder, &one.record)?;
        removed.push(started.elapsed());
    }
    let (alone, made, removed) = (median(alone), median(made), median(removed));
    println!(
        "worktree of a {}-file repository (median of {RUNS}):",
        FOLDERS * FILES_PER_FOLDER
    );
    println!("  git worktree add alone      {alone:8.1} ms");
    println!(
        "  codecrew make::make         {made:8.1} ms  ({:.2}x)",
        made / alone
    );
    println!("  codecrew kept::remove       {removed:8.1} ms");
    Ok(())
}
