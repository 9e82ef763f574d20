//! `codecrew undo`: what a run of execute changed, put back ([`codecrew_core::undo`]),
//! and each file said.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use codecrew::cli::{OutputArg, UndoArgs};
use codecrew::output::console::{self, Text};
use codecrew_core::undo::{self, Action, Outcome, Status, UndoError};

use super::EXIT_USAGE;

pub async fn run(args: UndoArgs, workspace: &Path) -> anyhow::Result<ExitCode> {
    let json = args.output == OutputArg::Json;
    let code = undo_and_show(workspace.to_owned(), args.run, args.force, json).await?;
    Ok(ExitCode::from(code))
}

/// Undoes `run` (None: the newest) in `workspace` and shows how it went (as JSON when
/// `json`): the exit code, 0 when every file was put back.
pub async fn undo_and_show(
    workspace: PathBuf,
    run: Option<String>,
    force: bool,
    json: bool,
) -> anyhow::Result<u8> {
    let undone =
        tokio::task::spawn_blocking(move || undo::undo(&workspace, run.as_deref(), force)).await?;
    let outcome = match undone {
        Ok(outcome) => outcome,
        Err(error) => {
            console::error(&error);
            return Ok(match error {
                UndoError::NoSuchRun(_)
                | UndoError::NothingToUndo(_)
                | UndoError::Ambiguous(..)
                | UndoError::NoStateFolder => EXIT_USAGE,
                _ => 1,
            });
        }
    };
    if json {
        console::stdout().json_pretty(&outcome)?;
    } else {
        show(&outcome)?;
    }
    Ok(
        if outcome.status == Status::Undone && outcome.failed.is_empty() {
            0
        } else {
            1
        },
    )
}

/// The outcome for a person: each file put back on stdout, a refusal or a failure on
/// stderr with what to do.
fn show(outcome: &Outcome) -> std::io::Result<()> {
    let run = &outcome.run;
    let listed = |paths: &[String]| {
        paths
            .iter()
            .map(|path| format!("\n  {path}"))
            .collect::<String>()
    };
    match outcome.status {
        Status::ChangedSince => {
            console::error(format_args!(
                "run {run} was not undone: these files were changed since it ended:{}\n\
                 `codecrew undo {run} --force` puts them back anyway (those changes are lost)",
                listed(&outcome.changed_since)
            ));
            return Ok(());
        }
        Status::NotEnded => {
            console::error(format_args!(
                "run {run} was not undone: its end was never recorded (its codecrew was \
                 killed), so its changes cannot be told from others'. These files differ \
                 from before it:{}\n`codecrew undo {run} --force` puts all of them back",
                listed(&outcome.changed_since)
            ));
            return Ok(());
        }
        Status::Undone => {}
    }
    let mut text = Text::new();
    if outcome.files.is_empty() && outcome.failed.is_empty() {
        text.push(&format!(
            "Run {run} left every file as it found it: nothing to put back.\n"
        ));
    } else if !outcome.files.is_empty() {
        text.push(&format!("Undid run {run}:\n"));
    }
    for file in &outcome.files {
        let action = match file.action {
            Action::Restored => "restored ",
            Action::Removed => "removed  ",
            Action::Recreated => "recreated",
        };
        text.push(&format!("  {action} {}\n", file.path));
    }
    console::stdout().show(&text)?;
    for failed in &outcome.failed {
        console::error(format_args!(
            "could not put back {}: {}",
            failed.path, failed.error
        ));
    }
    Ok(())
}
