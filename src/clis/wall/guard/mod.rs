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

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;

use super::{Guarded, Hold};

mod files;
mod keys;

use files::{Files, files, names, put_entry, put_file, read_regular, remove_entry};
use keys::collect;

/// Every guard of a command still running: put back at once by [`restore_all_now`] when
/// codecrew must end before its commands are dropped.
static LIVE: Mutex<Vec<Weak<Guard>>> = Mutex::new(Vec::new());

/// Notes what `guarded` holds now ([`Guard::new`]), as a guard [`restore_all_now`] can
/// reach.
pub fn hold(guarded: &Guarded, cli: &str) -> Arc<Guard> {
    let guard = Arc::new(Guard::new(guarded, cli));
    if let Ok(mut live) = LIVE.lock() {
        live.retain(|guard| guard.strong_count() > 0);
        live.push(Arc::downgrade(&guard));
    }
    guard
}

/// Puts back what every live guard holds, now: for an exit that drops nothing (a second
/// Ctrl-C ends codecrew at once), which would otherwise leave what a CLI changed there
/// in place. The CLIs' groups must be killed first, so that none writes after.
pub fn restore_all_now() {
    let live: Vec<Arc<Guard>> = LIVE
        .lock()
        .map(|live| live.iter().filter_map(Weak::upgrade).collect())
        .unwrap_or_default();
    for guard in live {
        guard.restore_and_warn();
    }
}

/// What is held of one path, as the command found it.
#[derive(Debug)]
pub struct Guard {
    /// The CLI that ran (`claude`), for the warning.
    cli: String,
    path: PathBuf,
    /// Names under a held folder that are not held.
    except: &'static [&'static str],
    before: Before,
}

#[derive(Debug)]
enum Before {
    /// Each concrete key (its path of object keys) and its value (none for a missing
    /// file); None when the file could not be read as JSON (then nothing is put back:
    /// there is nothing to compare).
    Keys(
        &'static [&'static [&'static str]],
        Option<Vec<(Vec<String>, Value)>>,
        /// The file as it was (none when missing), put back whole if a link or anything
        /// but a regular file stands at its place afterwards.
        Option<Vec<u8>>,
    ),
    /// The files beneath the path (the path itself for a file: the empty name), with
    /// their bytes, and the names left out; None when it was too large to hold.
    Whole(Option<Files>),
}

impl Guard {
    /// Notes what `guarded` holds now, for the run of `cli` about to start.
    pub fn new(guarded: &Guarded, cli: &str) -> Self {
        let path = guarded.path.clone();
        let before = match guarded.hold {
            Hold::Keys(keys) => {
                let bytes = read_regular(&path);
                let held = match &bytes {
                    // A file made during the run gets no guarded key either.
                    Ok(None) => Some(Vec::new()),
                    Err(_) => None,
                    Ok(Some(bytes)) => serde_json::from_slice(bytes)
                        .ok()
                        .map(|json: Value| collect(&json, keys)),
                };
                Before::Keys(keys, held, bytes.ok().flatten())
            }
            Hold::Whole => Before::Whole(files(&path, &[])),
            Hold::WholeBut(except) => Before::Whole(files(&path, except)),
        };
        if matches!(before, Before::Whole(None)) {
            tracing::debug!(path = %path.display(), "too large to hold for the run");
        }
        let except = match guarded.hold {
            Hold::WholeBut(except) => except,
            Hold::Keys(_) | Hold::Whole => &[],
        };
        Guard {
            cli: cli.to_owned(),
            path,
            except,
            before,
        }
    }

    /// Puts back what changed since [`Guard::new`]; the names of what did (keys joined
    /// with dots, or files relative to the path).
    pub fn restore(&self) -> Vec<String> {
        match &self.before {
            Before::Keys(keys, Some(before), whole) => {
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
                self.restore_keys(keys, before)
            }
            Before::Whole(Some(before)) => self.restore_files(before),
            Before::Keys(_, None, _) | Before::Whole(None) => Vec::new(),
        }
    }

    fn restore_keys(
        &self,
        keys: &'static [&'static [&'static str]],
        before: &[(Vec<String>, Value)],
    ) -> Vec<String> {
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
        let Some(after) = files(&self.path, self.except) else {
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
        changed
    }
}

impl Guard {
    /// Puts a held folder back that cannot be read as a whole any more (flooded past the
    /// limits, or holding a FIFO): everything that was not there before goes, and
    /// everything that was is written again. Never left as it is, which would keep
    /// whatever was planted beside the flood.
    fn restore_unreadable(&self, before: &Files) -> Vec<String> {
        let mut changed = vec![self.path.display().to_string()];
        for name in names(&self.path, self.except) {
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
        changed
    }

    /// [`Guard::restore`], saying on stderr what changed.
    fn restore_and_warn(&self) {
        let changed = self.restore();
        if !changed.is_empty() {
            let mut named = changed
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if changed.len() > 5 {
                named.push_str(&format!(" and {} more", changed.len() - 5));
            }
            crate::output::console::warn(format_args!(
                "{named} changed while {} ran ({}), which can make it run programs later; put \
                 back as it was",
                self.cli,
                self.path.display()
            ));
        }
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
        self.restore_and_warn();
    }
}

#[cfg(test)]
mod tests;
