//! Which paths a put-back from the journal may write: only those codecrew itself holds
//! for the CLI that ran, in the workspace it ran in, as that CLI's module says
//! (`Cli::state`, `Cli::state_for`, `Cli::project_files`), worked out again when the
//! record is read back and never taken from the record. A record that names anything
//! else (`~/.bashrc`), holds a path another way than codecrew holds it (the whole of
//! `~/.claude.json`, where only its MCP servers and trust are held), or names a file
//! beneath a held folder from the root or through `..`, is refused whole: nothing it
//! says is written, and the user is told which record and why.

use std::path::{Component, Path};

use super::{Before, Guard, Held};
use crate::wall::{Guarded, Hold};

/// Why `guard`, read back from a record, may not be put back, when it names what
/// codecrew does not hold as `allowed` says it is held.
pub fn refused(guard: &Guard, allowed: &[Guarded]) -> Option<String> {
    let path = guard.path.display();
    let Some(held) = allowed.iter().find(|held| held.path == guard.path) else {
        return Some(format!(
            "it names {path}, which codecrew never holds for {}",
            guard.cli
        ));
    };
    if !held_alike(guard, held.hold) {
        return Some(format!(
            "it holds {path} otherwise than codecrew holds it for {}",
            guard.cli
        ));
    }
    let names: Vec<&Path> = match &guard.before {
        Before::Keys { .. } => Vec::new(),
        Before::Whole { held, .. } => match held {
            Held::Copy(files) => files.keys().map(|name| name.as_path()).collect(),
            Held::Stamps(stamps) => stamps.keys().map(|name| name.as_path()).collect(),
            Held::Nothing => Vec::new(),
        },
    };
    let outside = names
        .into_iter()
        .chain(guard.folders.iter().map(|name| name.as_path()))
        .find(|name| !plain(name))?;
    Some(format!(
        "it names {} beneath {path}, which is not a name beneath it",
        outside.display()
    ))
}

/// Whether `guard` holds its path as `hold` says codecrew holds it.
fn held_alike(guard: &Guard, hold: Hold) -> bool {
    let whole =
        |keeps: bool| matches!(guard.before, Before::Whole { keeps_new, .. } if keeps_new == keeps);
    match hold {
        Hold::Keys(wanted) => {
            let Before::Keys { patterns, .. } = &guard.before else {
                return false;
            };
            guard.except.is_empty()
                && patterns.len() == wanted.len()
                && patterns.iter().zip(wanted).all(|(pattern, wanted)| {
                    pattern.len() == wanted.len()
                        && pattern
                            .iter()
                            .zip(*wanted)
                            .all(|(key, wanted)| key == wanted)
                })
        }
        Hold::Whole => whole(false) && guard.except.is_empty(),
        Hold::WholeBut(except) => {
            whole(false)
                && guard.except.len() == except.len()
                && guard
                    .except
                    .iter()
                    .zip(except)
                    .all(|(name, wanted)| name == wanted)
        }
        Hold::Existing => whole(true) && guard.except.is_empty(),
    }
}

/// Whether `name` is a name beneath a held folder: relative, with no `.` or `..` (the
/// empty name is the held path itself).
fn plain(name: &Path) -> bool {
    name.components()
        .all(|component| matches!(component, Component::Normal(_)))
}

/// Whether `path` is absolute and names every folder on its way plainly (no `.` or
/// `..`): a workspace a record may name.
pub fn plain_absolute(path: &Path) -> bool {
    path.is_absolute()
        && path
            .components()
            .all(|component| matches!(component, Component::RootDir | Component::Normal(_)))
}
