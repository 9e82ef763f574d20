//! What a codecrew holds, written down before its CLIs start, so that it is put back even
//! when that codecrew is killed (`kill -9`, the OOM killer) and cannot.
//!
//! Each codecrew writes one folder, `$XDG_STATE_HOME/codecrew/held/<pid>-<start>/`
//! (else `~/.local/state/codecrew/held/…`; `<start>` the process's start time, so that
//! a reused pid is not taken for it), with one record per guard: the held path, how it
//! is held, and what puts it back (bytes, stamps or key values). A record goes once its
//! guard has put back what it holds, and the folder with the last one. The next codecrew
//! to start a CLI (`query`, `execute`, `mcp`, `doctor`) finds the folders of codecrews
//! that are gone and puts back what they hold ([`recover`]), before any CLI starts.
//!
//! A record says what to write where, outside any wall, so none is read that another
//! could have written: a folder or record that is a link, not the user's, or writable
//! by others is refused with a warning, as is one that cannot be read; never followed.
//! No wall grants the state folder. Folders are made 0700, records 0600 (they hold
//! copies of what was held, `.env` files included).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use codecrew_policy::process;

use super::Guard;
use super::files::read_regular;
use super::warning::{Warning, say};

/// Serialises this codecrew's writes and removals in its folder (the last record's
/// removal takes the folder with it).
static FOLDER: Mutex<()> = Mutex::new(());

/// Numbers this codecrew's records.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// Where every codecrew's folder is.
pub fn root() -> Option<PathBuf> {
    crate::wall::xdg("XDG_STATE_HOME", ".local/state", "codecrew").map(|dir| dir.join("held"))
}

/// This codecrew's folder name: its pid and start time.
fn own_name() -> Option<String> {
    let pid = std::process::id();
    let stat = process::stat(i32::try_from(pid).ok()?)?;
    Some(format!("{pid}-{}", stat.start))
}

/// Writes `guard` down in this codecrew's folder under `root`; the record's path, None
/// when it could not be (said once: the guard still puts back what it holds, unless
/// codecrew is killed).
pub fn write(root: &Path, guard: &Guard) -> Option<PathBuf> {
    match write_in(root, guard) {
        Ok(record) => Some(record),
        Err(error) => {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                say(&Warning::Unrecorded {
                    root: root.to_path_buf(),
                    error: error.to_string(),
                })
            });
            None
        }
    }
}

fn write_in(root: &Path, guard: &Guard) -> std::io::Result<PathBuf> {
    let name = own_name().ok_or_else(|| std::io::Error::other("no start time"))?;
    let bytes = serde_json::to_vec(guard)?;
    let _folder = FOLDER.lock();
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(root)?;
    // The user's own, as a reader will check.
    if let Err(why) = trusted(root, true) {
        return Err(std::io::Error::other(format!("{}: {why}", root.display())));
    }
    let dir = root.join(name);
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            trusted(&dir, true).map_err(std::io::Error::other)?;
        }
        Err(error) => return Err(error),
    }
    let record = dir.join(format!("{}.json", NEXT.fetch_add(1, Ordering::Relaxed)));
    // Made 0600, written whole, then named: a reader never sees half a record.
    let mut file = tempfile::Builder::new().prefix(".new-").tempfile_in(&dir)?;
    file.write_all(&bytes)?;
    file.persist(&record).map_err(|error| error.error)?;
    Ok(record)
}

/// Removes the record `record`, and its folder when it was the last.
pub fn remove(record: &Path) {
    let _folder = FOLDER.lock();
    if let Err(error) = std::fs::remove_file(record) {
        tracing::warn!(%error, record = %record.display(), "could not remove a journal record");
    }
    if let Some(dir) = record.parent() {
        // Fails while other records are there: the folder goes with the last one.
        let _ = std::fs::remove_dir(dir);
    }
}

/// Whether `path` may be read as codecrew's own: a real folder (or, `dir` false, a
/// regular file) that is not a link, owned by this user, writable by no one else.
fn trusted(path: &Path, dir: bool) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(path).map_err(|error| error.to_string())?;
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Err("a link".to_owned());
    }
    if dir && !kind.is_dir() || !dir && !kind.is_file() {
        return Err(if dir {
            "not a folder"
        } else {
            "not a regular file"
        }
        .to_owned());
    }
    if meta.uid() != nix::unistd::getuid().as_raw() {
        return Err("not yours".to_owned());
    }
    if meta.mode() & 0o022 != 0 {
        return Err("writable by others".to_owned());
    }
    Ok(())
}

/// Whether the codecrew named `name` (`<pid>-<start>`) still runs: the same pid, started
/// at the same time, not a zombie.
fn still_runs(pid: i32, start: u64) -> bool {
    process::stat(pid).is_some_and(|stat| stat.start == start && !stat.zombie)
}

/// Puts back what the folders under `root` of codecrews that are gone hold, saying so,
/// and removes them; refuses, with a warning, what it cannot trust.
pub fn recover(root: Option<&Path>) {
    let Some(root) = root else {
        return;
    };
    if std::fs::symlink_metadata(root).is_err() {
        return;
    }
    let _folder = FOLDER.lock();
    // The folders above need no check: whoever could replace `held` there could not
    // make what stands in its place the user's own.
    if let Err(why) = trusted(root, true) {
        say(&Warning::Refused {
            path: root.to_path_buf(),
            why,
        });
        return;
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        let Some((pid, start)) = entry.file_name().to_str().and_then(parse_name) else {
            say(&Warning::Refused {
                path: dir,
                why: "not named for a codecrew".to_owned(),
            });
            continue;
        };
        if still_runs(pid, start) {
            continue;
        }
        if let Err(why) = trusted(&dir, true) {
            say(&Warning::Refused { path: dir, why });
            continue;
        }
        recover_folder(&dir);
    }
}

/// `<pid>-<start>`.
fn parse_name(name: &str) -> Option<(i32, u64)> {
    let (pid, start) = name.split_once('-')?;
    let pid: i32 = pid.parse().ok()?;
    (pid > 0).then_some(())?;
    Some((pid, start.parse().ok()?))
}

/// Puts back what each record of the gone codecrew's folder `dir` holds, and removes
/// the folder once every record has gone.
fn recover_folder(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let record = entry.path();
        let name = entry.file_name();
        // A record it was still writing when it was killed: nothing held yet.
        if name.to_string_lossy().starts_with(".new-") && trusted(&record, false).is_ok() {
            let _ = std::fs::remove_file(&record);
            continue;
        }
        match read(&record) {
            Ok(guard) => {
                guard.restore_and_warn(true);
                let _ = std::fs::remove_file(&record);
            }
            Err(why) => say(&Warning::Refused { path: record, why }),
        }
    }
    // Stays while a refused record is in it.
    let _ = std::fs::remove_dir(dir);
}

/// The guard a record holds, checked first.
fn read(record: &Path) -> Result<Guard, String> {
    if record.extension().is_none_or(|ext| ext != "json") {
        return Err("not a record".to_owned());
    }
    trusted(record, false)?;
    let bytes = read_regular(record)
        .map_err(|error| error.to_string())?
        .ok_or_else(|| "gone".to_owned())?;
    serde_json::from_slice(&bytes).map_err(|error| format!("malformed: {error}"))
}

#[cfg(test)]
mod tests;
