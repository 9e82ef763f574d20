//! What the guards say on stderr, each warning's words composed here, and said
//! through one function ([`say`]).

use std::path::PathBuf;

/// Something the user must know about what is held for the CLIs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// What a program in `cli`'s wall changed under `path` was put back (or, for a
    /// folder held by its stamps, `removed`); `abandoned` when a codecrew that was
    /// killed held it, and this one put it back.
    Changed {
        cli: String,
        path: PathBuf,
        changed: Vec<String>,
        removed: bool,
        abandoned: bool,
    },
    /// A folder too large to hold even by its stamps: a program in the wall may change
    /// it for later, unseen.
    Unheld { cli: String, path: PathBuf },
    /// A journal of what a codecrew held that is not trusted, and was not read.
    Refused { path: PathBuf, why: String },
    /// A record of the journal that codecrew did not write, or that names what codecrew
    /// does not hold: nothing it says was written.
    NotPutBack { record: PathBuf, why: String },
    /// What is held could not be written down under `root`: a `kill -9` of this codecrew
    /// would leave what is planted in place.
    Unrecorded { root: PathBuf, error: String },
}

/// The most changed files a warning names.
const NAMED: usize = 5;

impl Warning {
    /// The warning's words, one line (`codecrew: warning: ` goes before them).
    pub fn text(&self) -> String {
        match self {
            Warning::Changed {
                cli,
                path,
                changed,
                removed,
                abandoned,
            } => {
                let mut named = changed
                    .iter()
                    .take(NAMED)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ");
                if changed.len() > NAMED {
                    named.push_str(&format!(" and {} more", changed.len() - NAMED));
                }
                let when = if *abandoned {
                    format!(
                        "while {cli} ran under a codecrew that was killed before it could put \
                         it back"
                    )
                } else {
                    format!("while {cli} ran")
                };
                let done = if *removed {
                    "removed, since the folder is too large to keep a copy of: reinstall \
                     what you need there"
                } else {
                    "put back as it was"
                };
                format!(
                    "{named} changed {when} ({}), which can make it run \
                     programs later; {done}",
                    path.display()
                )
            }
            Warning::Unheld { cli, path } => format!(
                "{} is too large to hold while {cli} runs (over {} \
                 files), so what a program in its wall changes there stays: make it \
                 smaller, or run {cli} outside codecrew only",
                path.display(),
                super::stamps::MAX_STAMPED
            ),
            Warning::Unrecorded { root, error } => format!(
                "cannot write down what is held for the CLIs in {} \
                 ({error}): it is put back when this command ends, but not if codecrew is \
                 killed before",
                root.display()
            ),
            Warning::Refused { path, why } => format!(
                "not reading {} ({why}): it may not be codecrew's; look \
                 at it, and remove it",
                path.display()
            ),
            Warning::NotPutBack { record, why } => format!(
                "not putting back what {} says: {why}; nothing it names was written. \
                 Look at it, and remove it",
                record.display()
            ),
        }
    }
}

/// Says `warning` where the front end puts warnings (the console, which makes a planted
/// file's name inert: it may hold anything).
pub fn say(warning: &Warning) {
    crate::notices::warn(&warning.text());
}
