//! An execute run's record for `codecrew undo` ([`crate::undo`]): started before its jobs,
//! finished with it, each off the runtime (a snapshot reads the workspace). A run goes on
//! without it: what stands in the way is said once.

use std::path::Path;

use codecrew_agents::notices;

use crate::undo::{self, RecordKind, Recording, UndoError};

/// The workspace recorded before the run `id` changes it; None (said) when it cannot be.
pub(super) async fn start(workspace: &Path, id: String) -> Option<Recording> {
    use codecrew_config::projects::{NotAProject, homes};
    // A home directory (`--allow-home`) is no project: a snapshot would copy all of it.
    if let Some(what) = NotAProject::of(workspace, &homes()) {
        notices::note(&format!(
            "`codecrew undo` is unavailable for this run: {}, not a project",
            what.describe(workspace)
        ));
        return None;
    }
    let workspace = workspace.to_owned();
    let recorded = tokio::task::spawn_blocking(move || {
        undo::record_before(&workspace, &id, RecordKind::Execute)
    })
    .await;
    match recorded {
        Ok(Ok(recording)) => Some(recording),
        Ok(Err(UndoError::GitMissing)) => {
            notices::note("`codecrew undo` is unavailable for this run: git is not installed");
            None
        }
        Ok(Err(error)) => {
            notices::warn(&format!(
                "`codecrew undo` will not be able to put back this run: {error}"
            ));
            None
        }
        Err(error) => {
            tracing::error!("recording the run for undo stopped abnormally: {error}");
            None
        }
    }
}

/// The workspace recorded as the run leaves it.
pub(super) async fn finish(recording: Recording) {
    let finished = tokio::task::spawn_blocking(move || recording.finish()).await;
    match finished {
        Ok(Ok(())) => {}
        Ok(Err(error)) => notices::warn(&format!(
            "the end of this run could not be recorded for `codecrew undo` (it will need \
             --force): {error}"
        )),
        Err(error) => tracing::error!("recording the run's end stopped abnormally: {error}"),
    }
}

/// [`finish`] without waiting for it: for a recording dropped outside an async context
/// (a chat's line stopped). Outside a runtime, it is left unfinished (undo then needs
/// --force).
pub(super) fn finish_detached(recording: Recording) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(finish(recording));
    }
}
