//! What a CLI keeps in a folder it must be able to write that makes it run programs
//! later, held as it was while the CLI ran.
//!
//! Some CLIs keep what they must write (their sign-in, per-project state, databases)
//! beside what makes them run a program the next time they start: `~/.claude.json`
//! holds Claude's MCP servers beside its project history, and Codex opens its databases
//! next to its `config.toml`. Landlock grants whole trees, so the wall must let such a
//! CLI write the file or folder, and cannot keep a program running inside from adding a
//! server there. A [`Guard`] notes what is held when the command starts — some keys of
//! a JSON file, or a whole file or folder — and, when the command is dropped, puts back
//! whatever changed, saying on stderr what tried.
//!
//! What is put back is written by codecrew, outside any wall, so nothing a program
//! inside left there may lead it elsewhere: links are read as links, never followed; a
//! file goes back through a new file renamed over whatever stands at its place (a link
//! swapped in is replaced, not written through); a folder on the way that became a link
//! is removed and made again.
//!
//! A folder too large to copy (4 MiB, 2,000 files) is held by its stamps (`stamps.rs`):
//! what changed or was added there is removed, since it cannot be put back. Past 200,000
//! entries it is not held, and stderr says so when the command starts. What is held is
//! written down before the CLI starts (`journal.rs`), so that the next codecrew puts it
//! back when this one is killed before it could; and a CLI started while an earlier one
//! holds the same path meets it as it was held, not as the earlier one's wall left it.
//! A record is read back only when codecrew sealed it (`seal.rs`), and only for what
//! codecrew itself holds for the CLI that ran (`targets.rs`). A folder a program in the
//! wall made in a held folder goes with what it planted there, once emptied.
//! Every warning's words are in `warning.rs`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Guarded, Hold};

mod codec;
mod files;
mod journal;
mod keys;
mod seal;
mod stamps;
mod targets;
mod warning;

use files::{
    Files, Folders, entry, files, files_in, names, put_entry, put_file, read_regular, remove_entry,
    remove_new_folders,
};
use keys::collect;
use stamps::{MAX_STAMPED, Stamps, stamp, stamps};
pub use warning::Warning;

/// Every guard of a command still running: put back at once by [`restore_all_now`] when
/// codecrew must end before its commands are dropped.
static LIVE: Mutex<Vec<Weak<Guard>>> = Mutex::new(Vec::new());

/// Who holds: the CLI that runs (its name in the registry, `claude`) and the workspace it
/// runs in, written down with what it holds, so that what it may hold is worked out
/// again when the record is read back ([`recover_abandoned`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub cli: String,
    pub workspace: PathBuf,
}

/// Notes what each of `guarded` holds now ([`Guard::new`]), written down in this
/// codecrew's journal (`journal.rs`, one record for them all, with its `holder`) before
/// the CLI starts, so that a later codecrew puts it back if this one is killed; as
/// guards [`restore_all_now`] can reach.
///
/// Where an earlier CLI of this codecrew, still running, holds the same path (a crew's
/// sub-agent, several mentions of one CLI), what changed there since is put back first:
/// the CLI about to start never meets what a program in the earlier one's wall left.
pub fn hold(guarded: &[Guarded], cli: &str, holder: &Holder) -> Vec<Arc<Guard>> {
    hold_in(guarded, cli, holder, journal::root().as_deref())
}

/// [`hold`], with the journal's folder `journal` (none: not written down).
fn hold_in(
    guarded: &[Guarded],
    cli: &str,
    holder: &Holder,
    journal: Option<&Path>,
) -> Vec<Arc<Guard>> {
    let guards: Vec<Guard> = guarded
        .iter()
        .map(|guarded| {
            for earlier in live() {
                if earlier.path == guarded.path {
                    earlier.restore_and_warn(false);
                }
            }
            Guard::new(guarded, cli)
        })
        .collect();
    if let Some(root) = journal.filter(|_| !guards.is_empty()) {
        let all: Vec<&Guard> = guards.iter().collect();
        // Shared: set aside once the last of them is put back.
        let record = journal::write(root, holder, &all).map(Arc::new);
        for guard in &guards {
            if let Ok(mut slot) = guard.journal.lock() {
                slot.clone_from(&record);
            }
        }
    }
    let guards: Vec<Arc<Guard>> = guards.into_iter().map(Arc::new).collect();
    if let Ok(mut live) = LIVE.lock() {
        live.retain(|guard| guard.strong_count() > 0);
        live.extend(guards.iter().map(Arc::downgrade));
    }
    guards
}

/// Every guard still held.
fn live() -> Vec<Arc<Guard>> {
    LIVE.lock()
        .map(|live| live.iter().filter_map(Weak::upgrade).collect())
        .unwrap_or_default()
}

/// Puts back what every live guard holds, now: for an exit that drops nothing (a second
/// Ctrl-C ends codecrew at once), which would otherwise leave what a CLI changed there
/// in place. The CLIs' groups must be killed first, so that none writes after. The
/// journal goes with it: no CLI of this codecrew starts again ([`finish`]).
pub fn restore_all_now() {
    for guard in live() {
        guard.release();
    }
    finish();
}

/// Puts back what the journals of codecrews that were killed hold (a `kill -9`, the OOM
/// killer), saying so on stderr: before any CLI of this command starts, so that none
/// meets what a program in an earlier one's wall left (`journal.rs`). `held` says what
/// codecrew holds for a holder (its CLI, in its workspace): a record is put back only
/// where it names those paths, held that way (`targets.rs`).
pub fn recover_abandoned(held: &dyn Fn(&Holder) -> Vec<Guarded>) {
    // Each refusal was said as it was met.
    let _refused = journal::recover(journal::root().as_deref(), held);
}

/// Removes what this codecrew's journal keeps for its next CLI start (records of what
/// was held and is put back): at its exit, once no CLI of it runs.
pub fn finish() {
    journal::finish();
}

/// What is held of one path, as the command found it.
#[derive(Debug, Serialize, Deserialize)]
pub struct Guard {
    /// The CLI that ran (`claude`), for the warning.
    cli: String,
    #[serde(with = "codec::path")]
    path: PathBuf,
    /// Names under a held folder that are not held.
    except: Vec<String>,
    before: Before,
    /// The folders of a held folder when it was held: those a program in the wall adds
    /// go once emptied of what it planted.
    #[serde(with = "codec::names")]
    folders: Folders,
    /// The record of its CLI start in this codecrew's journal, shared with the start's
    /// other guards: set aside once the last of them is put back.
    #[serde(skip)]
    journal: Mutex<Option<Arc<journal::Record>>>,
    /// Whether this codecrew holds it (made by [`Guard::new`]), and so puts it back when
    /// it is dropped; one read back from a record is not, so that dropping a refused
    /// one writes nothing.
    #[serde(skip)]
    live: bool,
}

#[derive(Debug, Serialize, Deserialize)]
enum Before {
    /// Some keys of a JSON file.
    Keys {
        /// Each a path of object keys from the top; `*` for every key at its level.
        patterns: Vec<Vec<String>>,
        /// Each concrete key (its path of object keys) and its value (none for a
        /// missing file); None when the file could not be read as JSON (then nothing is
        /// put back: there is nothing to compare).
        held: Option<Vec<(Vec<String>, Value)>>,
        /// The file as it was (none when missing), put back whole if a link or anything
        /// but a regular file stands at its place afterwards.
        #[serde(with = "codec::maybe_bytes")]
        whole: Option<Vec<u8>>,
    },
    /// A file, or the files beneath a folder.
    Whole {
        held: Held,
        /// Only what was there when the command started is held: what the run adds is
        /// the CLI's own ([`Hold::Existing`]).
        keeps_new: bool,
    },
}

/// How the files of a held path are held.
#[derive(Debug, Serialize, Deserialize)]
enum Held {
    /// Their bytes (the empty name for the path itself): what changes is put back.
    Copy(#[serde(with = "codec::by_path")] Files),
    /// Past the limits of a copy, their stamps: what changes is removed.
    Stamps(#[serde(with = "codec::by_path")] Stamps),
    /// Past even those: not held, which the warning at the start said.
    Nothing,
}

impl Guard {
    /// Notes what `guarded` holds now, for the run of `cli` about to start. A folder
    /// too large to copy is held by its stamps; one too large even for those is not
    /// held, and stderr says so now, naming it.
    pub fn new(guarded: &Guarded, cli: &str) -> Self {
        let path = guarded.path.clone();
        let mut folders = Folders::new();
        let except: Vec<String> = match guarded.hold {
            Hold::WholeBut(except) => except.iter().map(|name| (*name).to_owned()).collect(),
            Hold::Keys(_) | Hold::Whole | Hold::Existing => Vec::new(),
        };
        let before = match guarded.hold {
            Hold::Keys(patterns) => {
                let patterns: Vec<Vec<String>> = patterns
                    .iter()
                    .map(|pattern| pattern.iter().map(|key| (*key).to_owned()).collect())
                    .collect();
                let bytes = read_regular(&path);
                let held = match &bytes {
                    // A file made during the run gets no guarded key either.
                    Ok(None) => Some(Vec::new()),
                    Err(_) => None,
                    Ok(Some(bytes)) => serde_json::from_slice(bytes)
                        .ok()
                        .map(|json: Value| collect(&json, &patterns)),
                };
                Before::Keys {
                    patterns,
                    held,
                    whole: bytes.ok().flatten(),
                }
            }
            Hold::Whole | Hold::WholeBut(_) | Hold::Existing => {
                let held = match files_in(&path, &except, &mut folders) {
                    Some(files) => Held::Copy(files),
                    None => {
                        // Met again by the walk of the stamps, to its end.
                        folders.clear();
                        match stamps(&path, &except, MAX_STAMPED, &mut folders) {
                            Some(stamps) => Held::Stamps(stamps),
                            None => {
                                warning::say(&Warning::Unheld {
                                    cli: cli.to_owned(),
                                    path: path.clone(),
                                });
                                Held::Nothing
                            }
                        }
                    }
                };
                Before::Whole {
                    held,
                    keeps_new: matches!(guarded.hold, Hold::Existing),
                }
            }
        };
        Guard {
            cli: cli.to_owned(),
            path,
            except,
            before,
            folders,
            journal: Mutex::new(None),
            live: true,
        }
    }

    /// Puts back what changed since [`Guard::new`] (removes it, for a folder held by
    /// its stamps); the names of what did (keys joined with dots, or files).
    pub fn restore(&self) -> Vec<String> {
        match &self.before {
            Before::Keys {
                patterns,
                held: Some(before),
                whole,
            } => {
                // Something other than a regular file at its place: the file goes back
                // whole, over it.
                let irregular = std::fs::symlink_metadata(&self.path)
                    .is_ok_and(|meta| !meta.file_type().is_file());
                if irregular {
                    let put_back = match whole {
                        Some(bytes) => put_file(&self.path, Path::new(""), bytes),
                        None => remove_entry(&self.path),
                    };
                    if let Err(error) = put_back {
                        tracing::warn!(file = %self.path.display(), %error, "could not put the file back");
                    }
                    return vec![self.path.display().to_string()];
                }
                self.restore_keys(patterns, before)
            }
            Before::Whole {
                held: Held::Copy(before),
                keeps_new: false,
            } => self.restore_files(before),
            Before::Whole {
                held: Held::Copy(before),
                keeps_new: true,
            } => self.restore_existing(before),
            Before::Whole {
                held: Held::Stamps(before),
                keeps_new,
            } => self.remove_changed(before, *keeps_new),
            Before::Keys { held: None, .. }
            | Before::Whole {
                held: Held::Nothing,
                ..
            } => Vec::new(),
        }
    }

    fn restore_keys(&self, keys: &[Vec<String>], before: &[(Vec<String>, Value)]) -> Vec<String> {
        let Some(mut json) = keys::read(&self.path) else {
            return Vec::new();
        };
        let after = collect(&json, keys);
        let mut changed = Vec::new();
        for (path, value) in &after {
            let earlier = before.iter().find(|(key, _)| key == path);
            if earlier.map(|(_, value)| value) != Some(value) {
                match earlier {
                    Some((_, value)) => keys::set(&mut json, path, value.clone()),
                    None => keys::remove(&mut json, path),
                }
                changed.push(path.join("."));
            }
        }
        for (path, value) in before {
            if !after.iter().any(|(key, _)| key == path) {
                keys::set(&mut json, path, value.clone());
                changed.push(path.join("."));
            }
        }
        if !changed.is_empty()
            && let Err(error) = keys::write(&self.path, &json)
        {
            tracing::warn!(file = %self.path.display(), %error, "could not put the guarded keys back");
        }
        changed
    }

    fn restore_files(&self, before: &Files) -> Vec<String> {
        let Some(after) = files(&self.path, &self.except) else {
            return self.restore_unreadable(before);
        };
        let mut changed = Vec::new();
        // What was added or changed first (a link in the place of the held folder goes
        // with it), then what is missing.
        for (name, entry) in &after {
            if before.get(name) != Some(entry) {
                let file = self.file(name);
                let put_back = match before.get(name) {
                    Some(entry) => put_entry(&self.path, name, entry),
                    None => remove_entry(&file),
                };
                if let Err(error) = put_back {
                    tracing::warn!(file = %file.display(), %error, "could not put the file back");
                }
                changed.push(file.display().to_string());
            }
        }
        for (name, entry) in before {
            if !after.contains_key(name) {
                let file = self.file(name);
                if let Err(error) = put_entry(&self.path, name, entry) {
                    tracing::warn!(file = %file.display(), %error, "could not put the file back");
                }
                changed.push(file.display().to_string());
            }
        }
        self.remove_new_folders();
        changed
    }

    /// Removes the folders a program in the wall made in a held folder, now empty of
    /// what it planted there (what it planted is named already).
    fn remove_new_folders(&self) {
        for name in remove_new_folders(&self.path, &self.except, &self.folders) {
            let folder = self.file(&name);
            tracing::debug!(folder = %folder.display(), "removed a folder the run made");
        }
    }
}

impl Guard {
    /// Puts a held folder back that cannot be read as a whole any more (flooded past the
    /// limits, or holding a FIFO): everything that was not there before goes, and
    /// everything that was is written again. Never left as it is, which would keep
    /// whatever was planted beside the flood.
    fn restore_unreadable(&self, before: &Files) -> Vec<String> {
        let mut changed = vec![self.path.display().to_string()];
        for name in names(&self.path, &self.except) {
            if !before.contains_key(&name) {
                let file = self.file(&name);
                if let Err(error) = remove_entry(&file) {
                    tracing::warn!(file = %file.display(), %error, "could not remove");
                }
                changed.push(file.display().to_string());
            }
        }
        for (name, entry) in before {
            if let Err(error) = put_entry(&self.path, name, entry) {
                let file = self.file(name);
                tracing::warn!(file = %file.display(), %error, "could not put the file back");
            }
        }
        self.remove_new_folders();
        changed
    }

    /// Puts back what was there when the command started of the files held, leaving what
    /// the run added (the CLI's own).
    fn restore_existing(&self, before: &Files) -> Vec<String> {
        let mut changed = Vec::new();
        for (name, held) in before {
            let file = self.file(name);
            if entry(&file).as_ref() != Some(held) {
                if let Err(error) = put_entry(&self.path, name, held) {
                    tracing::warn!(file = %file.display(), %error, "could not put the file back");
                }
                changed.push(file.display().to_string());
            }
        }
        changed
    }

    /// Removes what changed in a folder held by its stamps, and what was added unless
    /// the run's additions are the CLI's own (`keeps_new`): its bytes were not kept, so
    /// it cannot be put back. What went missing is named too.
    fn remove_changed(&self, before: &Stamps, keeps_new: bool) -> Vec<String> {
        let mut changed = Vec::new();
        let now: Vec<PathBuf> = if keeps_new {
            before.keys().cloned().collect()
        } else {
            names(&self.path, &self.except)
        };
        for name in now {
            let file = self.file(&name);
            let stamp = stamp(&file);
            if stamp.is_some() && before.get(&name) != stamp.as_ref() {
                if let Err(error) = remove_entry(&file) {
                    tracing::warn!(file = %file.display(), %error, "could not remove");
                }
                changed.push(file.display().to_string());
            }
        }
        for name in before.keys() {
            let file = self.file(name);
            if std::fs::symlink_metadata(&file).is_err()
                && !changed.contains(&file.display().to_string())
            {
                changed.push(file.display().to_string());
            }
        }
        if !keeps_new {
            self.remove_new_folders();
        }
        changed
    }

    /// [`Guard::restore`], then its share of the journal's record let go (the last
    /// share sets it aside): put back for good.
    fn release(&self) {
        self.restore_and_warn(false);
        let record = self.journal.lock().ok().and_then(|mut slot| slot.take());
        drop(record);
    }

    /// [`Guard::restore`], saying on stderr what changed; `abandoned` for what a killed
    /// codecrew held.
    fn restore_and_warn(&self, abandoned: bool) {
        let changed = self.restore();
        if changed.is_empty() {
            return;
        }
        let removed = matches!(
            self.before,
            Before::Whole {
                held: Held::Stamps(_),
                ..
            }
        );
        warning::say(&Warning::Changed {
            cli: self.cli.clone(),
            path: self.path.clone(),
            changed,
            removed,
            abandoned,
        });
    }

    /// The file of a held folder, or the held file itself (the empty name).
    fn file(&self, name: &Path) -> PathBuf {
        if name.as_os_str().is_empty() {
            self.path.clone()
        } else {
            self.path.join(name)
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.live {
            self.release();
        }
    }
}

#[cfg(test)]
mod tests;
