//! `codecrew diff`, `codecrew apply` and `codecrew worktrees [rm|prune]`: what the agents
//! of an `execute --worktrees` run left in their worktrees ([`codecrew_core::worktree`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use codecrew::cli::{ApplyArgs, DiffArgs, OutputArg, WorktreesArgs, WorktreesCommand};
use codecrew::output::color::{LABEL, NOTICE};
use codecrew::output::console::{self, Text};
use codecrew_core::undo::{self, RecordKind};
use codecrew_core::worktree::apply::{self, Method};
use codecrew_core::worktree::kept::{self, Kept};
use codecrew_core::worktree::{self, Repository};
use serde_json::json;

use super::EXIT_USAGE;

/// The repository of `workspace` and its worktrees' folder; None (said) outside one.
fn repository(workspace: &Path) -> Option<(Repository, PathBuf)> {
    let Some(repo) = Repository::find(workspace) else {
        console::error(format_args!(
            "{} is not in a git repository: codecrew keeps agents' worktrees per repository",
            workspace.display()
        ));
        return None;
    };
    let Some(root) = worktree::root() else {
        console::error("neither XDG_DATA_HOME nor HOME is set: there are no worktrees");
        return None;
    };
    let folder = repo.folder(&root);
    Some((repo, folder))
}

/// The worktrees of `run` (a prefix) and, when given, `agent`: an error (said) when none
/// or when the prefix names several runs.
fn chosen(folder: &Path, run: &str, agent: Option<&str>) -> Option<Vec<Kept>> {
    let mut found = kept::of_run(folder, run);
    let mut runs: Vec<&str> = found.iter().map(|kept| kept.record.run.as_str()).collect();
    runs.dedup();
    if runs.len() > 1 {
        console::error(format_args!(
            "{run:?} names more than one run ({}); give more of its id",
            runs.join(", ")
        ));
        return None;
    }
    if let Some(agent) = agent {
        let agent = agent.trim_start_matches('@');
        found.retain(|kept| kept.record.agent == agent);
    }
    if found.is_empty() {
        console::error(format_args!(
            "no worktree of run {run:?}{} here; `codecrew worktrees` lists them",
            agent
                .map(|a| format!(" for @{}", a.trim_start_matches('@')))
                .unwrap_or_default()
        ));
        return None;
    }
    Some(found)
}

pub fn diff(args: &DiffArgs, workspace: &Path) -> anyhow::Result<ExitCode> {
    let Some((repo, folder)) = repository(workspace) else {
        return Ok(ExitCode::from(EXIT_USAGE));
    };
    let Some(found) = chosen(&folder, &args.run, args.agent.as_deref()) else {
        return Ok(ExitCode::from(EXIT_USAGE));
    };
    let terminal = console::stdout_is_terminal();
    let palette = console::colors().stdout;
    let mut out = console::stdout();
    for kept in &found {
        let record = &kept.record;
        let mut git_args = vec!["diff", "--no-color", "--no-ext-diff", "--no-textconv"];
        if args.stat {
            git_args.push("--stat");
        }
        git_args.extend([record.base.as_str(), record.branch.as_str()]);
        let output = repo.git().output(&git_args)?;
        if !output.status.success() {
            console::error(format_args!(
                "@{}: {}",
                record.agent,
                String::from_utf8_lossy(&output.stderr).trim()
            ));
            continue;
        }
        if found.len() > 1 || terminal {
            let head = format!(
                "@{} ({}, from {})\n",
                record.agent,
                record.branch,
                short(&record.base)
            );
            out.show(&Text::styled(palette, LABEL, &head))?;
        }
        if !terminal {
            // A pipe gets git's bytes as they are: `codecrew diff R A | git apply` works.
            out.exact(&output.stdout)?;
            continue;
        }
        // A terminal gets the lines inert (the agent wrote them), coloured by codecrew.
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let style = if line.starts_with('+') && !line.starts_with("+++") {
                Some(codecrew::output::color::ADDED)
            } else if line.starts_with('-') && !line.starts_with("---") {
                Some(codecrew::output::color::REMOVED)
            } else if line.starts_with("@@") {
                Some(NOTICE)
            } else {
                None
            };
            let mut text = match style {
                Some(style) => Text::styled(palette, style, line),
                None => Text::plain(line),
            };
            text.push("\n");
            out.show(&text)?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

pub fn apply(args: &ApplyArgs, workspace: &Path) -> anyhow::Result<ExitCode> {
    let Some((repo, folder)) = repository(workspace) else {
        return Ok(ExitCode::from(EXIT_USAGE));
    };
    let Some(found) = chosen(&folder, &args.run, Some(&args.agent)) else {
        return Ok(ExitCode::from(EXIT_USAGE));
    };
    let method = if args.merge {
        Method::Merge
    } else if args.squash {
        Method::Squash
    } else {
        Method::Patch
    };
    let Some(mut record) = found.into_iter().next().map(|kept| kept.record) else {
        return Ok(ExitCode::from(EXIT_USAGE));
    };
    // Recorded for `codecrew undo`, as a run of execute is: what the apply brings in.
    let recording = recorded_for_undo(workspace, &record.run);
    let applied = apply::apply(&repo, &folder, &mut record, method);
    let undo_id = recording.and_then(|recording| {
        let id = recording.id().to_owned();
        match recording.finish() {
            Ok(()) => Some(id),
            Err(error) => {
                console::warn(format_args!(
                    "`codecrew undo` cannot take this apply back: {error}"
                ));
                None
            }
        }
    });
    match applied {
        Ok(()) => {
            if let Some(id) = undo_id {
                console::note(format_args!("`codecrew undo {id}` takes it back"));
            }
            let how = match method {
                Method::Patch => "into the working tree (uncommitted; `git diff` shows it)",
                Method::Merge => "as a merge commit keeping its commits",
                Method::Squash => "as one commit",
            };
            let mut out = console::stdout();
            out.show(&Text::plain(&format!(
                "applied @{}'s change from run {} {how}\n",
                record.agent, record.run
            )))?;
            if args.keep {
                return Ok(ExitCode::SUCCESS);
            }
            // The change is in: nothing of the run is left behind.
            let mut failed = false;
            for kept in kept::of_run(&folder, &record.run) {
                if let Err(error) = kept::remove(&repo, &folder, &kept.record) {
                    console::error(&error);
                    failed = true;
                }
            }
            if !failed {
                out.show(&Text::plain(&format!(
                    "removed run {}'s worktrees and branches (--keep keeps them)\n",
                    record.run
                )))?;
            }
            Ok(ExitCode::from(u8::from(failed)))
        }
        Err(error) => {
            console::error(&error);
            Ok(ExitCode::from(1))
        }
    }
}

/// The workspace recorded before an apply of `run`'s change, under an id of its own
/// (`<run>-apply-<random>`); None (said) when it cannot be.
fn recorded_for_undo(workspace: &Path, run: &str) -> Option<undo::Recording> {
    let random = codecrew_core::ids::random_hex();
    let id = format!("{run}-apply-{}", random.get(..8).unwrap_or(&random));
    match undo::record_before(workspace, &id, RecordKind::Apply) {
        Ok(recording) => Some(recording),
        Err(error) => {
            console::note(format_args!(
                "`codecrew undo` is unavailable for this apply: {error}"
            ));
            None
        }
    }
}

pub fn list_or_remove(args: &WorktreesArgs, workspace: &Path) -> anyhow::Result<ExitCode> {
    let Some((repo, folder)) = repository(workspace) else {
        return Ok(ExitCode::from(EXIT_USAGE));
    };
    let (removing, verb) = match &args.command {
        None => return list(&folder, args.output),
        Some(WorktreesCommand::Rm { run, agent }) => {
            let Some(found) = chosen(&folder, run, agent.as_deref()) else {
                return Ok(ExitCode::from(EXIT_USAGE));
            };
            (found, "removed")
        }
        Some(WorktreesCommand::Prune { older_than, all }) => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.as_secs());
            let cutoff = older_than.map_or(0, |age| now.saturating_sub(age.as_secs()));
            let old: Vec<Kept> = kept::list(&folder)
                .into_iter()
                .filter(|kept| {
                    let record = &kept.record;
                    *all || record.abandoned()
                        || record.applied.is_some()
                        || (older_than.is_some() && record.created <= cutoff)
                })
                .collect();
            (old, "pruned")
        }
    };
    let mut failed = false;
    let mut out = console::stdout();
    for kept in &removing {
        match kept::remove(&repo, &folder, &kept.record) {
            Ok(()) => out.show(&Text::plain(&format!(
                "{verb} @{}'s worktree of run {} (folder, branch {}, git's record)\n",
                kept.record.agent, kept.record.run, kept.record.branch
            )))?,
            Err(error) => {
                console::error(&error);
                failed = true;
            }
        }
    }
    if removing.is_empty() {
        out.show(&Text::plain("no worktrees to remove\n"))?;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn list(folder: &Path, output: OutputArg) -> anyhow::Result<ExitCode> {
    let found = kept::list(folder);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let mut out = console::stdout();
    if output == OutputArg::Json {
        let rows: Vec<_> = found
            .iter()
            .map(|kept| {
                json!({
                    "run": kept.record.run, "agent": kept.record.agent,
                    "path": kept.path, "branch": kept.record.branch, "base": kept.record.base,
                    "created": kept.record.created, "size_bytes": kept::size(&kept.path),
                    "change": kept.record.change, "check": kept.record.check,
                    "applied": kept.record.applied,
                    "abandoned": kept.record.abandoned(),
                })
            })
            .collect();
        out.json_line(&json!({ "worktrees": rows }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if found.is_empty() {
        out.show(&Text::plain("no worktrees kept for this repository\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table =
        String::from("RUN               AGENT       AGE      SIZE      CHANGE          APPLIED\n");
    for kept in &found {
        let record = &kept.record;
        let change = record.change.as_ref().map_or_else(
            || {
                if record.abandoned() {
                    "abandoned".to_owned()
                } else {
                    "running".to_owned()
                }
            },
            |c| format!("{} files +{} -{}", c.files, c.added, c.removed),
        );
        let applied = record.applied.as_ref().map_or("no", |a| a.method.as_str());
        table.push_str(&format!(
            "{:<17} {:<11} {:<8} {:<9} {:<15} {applied}\n",
            record.run,
            record.agent,
            age(now.saturating_sub(record.created)),
            size(kept::size(&kept.path)),
            change,
        ));
    }
    out.show(&Text::plain(&table))?;
    Ok(ExitCode::SUCCESS)
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

fn age(seconds: u64) -> String {
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3600 => format!("{}m", seconds / 60),
        3600..86400 => format!("{}h", seconds / 3600),
        _ => format!("{}d", seconds / 86400),
    }
}

fn size(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{} KiB", bytes / 1024),
        _ => format!("{} MiB", bytes / 1_048_576),
    }
}

/// Writes `text` to stdout at once (the table after an `execute --worktrees` run).
pub fn show(text: &Text) -> std::io::Result<()> {
    let mut out = console::stdout();
    out.show(text)?;
    out.flush()
}
