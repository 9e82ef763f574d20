//! What a codecrew holds, written down before its CLIs start, so that it is put back even
//! when that codecrew is killed (`kill -9`, the OOM killer) and cannot.
//!
//! Each codecrew writes one folder, `$XDG_STATE_HOME/codecrew/held/<pid>-<start>/`
//! (else `~/.local/state/codecrew/held/…`; `<start>` the process's start time, so that
//! a reused pid is not taken for it), with one record per CLI start: each of its guards'
//! held path, how it is held, and what puts it back (bytes, stamps or key values). One
//! file, not one per guard: each file made, renamed and removed is a change to the file
//! system's journal, which waits behind other writers on a busy disk (milliseconds each,
//! docs/PERFORMANCE.md). Once its guards have put back what they hold, a record is set
//! aside (renamed `.idle-<n>.json`, which no one puts back): the next CLI start that
//! holds exactly the same (its digest says so) takes it back under a record's name
//! instead of writing up to 8 MiB per held folder again, so a chat's turns write what
//! is held down only when it changed. What is set aside goes when codecrew
//! exits ([`finish`]), and the folder with the last record. The next codecrew
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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use codecrew_policy::process;
use sha2::{Digest, Sha256};

use super::Guard;
use super::files::read_regular;
use super::warning::{Warning, say};

/// Serialises this codecrew's writes and removals in its folder (the last record's
/// removal takes the folder with it), and holds the records set aside.
static FOLDER: Mutex<Vec<Idle>> = Mutex::new(Vec::new());

/// The prefix of a record set aside: what it says is no longer held.
const IDLE: &str = ".idle-";

/// The record of one CLI start's guards in this codecrew's folder, shared by them: set
/// aside when the last of them lets it go ([`set_aside`]), once all have put back what
/// they hold.
#[derive(Debug)]
pub struct Record {
    path: PathBuf,
    /// The held paths, for which at most one record is set aside.
    held: Vec<PathBuf>,
    /// SHA-256 of the record's bytes.
    digest: [u8; 32],
}

impl Drop for Record {
    fn drop(&mut self) {
        set_aside(self);
    }
}

/// A record set aside once its guard put back what it held, for a later guard that
/// would write the same bytes.
#[derive(Debug)]
struct Idle {
    file: PathBuf,
    held: Vec<PathBuf>,
    digest: [u8; 32],
    /// As it was left, so that one replaced or rewritten since is not taken back.
    stamp: (u64, u64, i64, i64),
}

fn folder() -> MutexGuard<'static, Vec<Idle>> {
    FOLDER.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What tells a file left in the folder apart from one put in its place: its inode,
/// size and modification time.
fn file_stamp(meta: &std::fs::Metadata) -> (u64, u64, i64, i64) {
    (meta.ino(), meta.size(), meta.mtime(), meta.mtime_nsec())
}

/// Numbers this codecrew's records.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// Where every codecrew's folder is.
pub fn root() -> Option<PathBuf> {
    crate::wall::xdg("XDG_STATE_HOME", ".local/state", "codecrew").map(|dir| dir.join("held"))
}

/// This codecrew's folder name: its pid and start time (read once: neither changes).
fn own_name() -> Option<&'static str> {
    static NAME: OnceLock<Option<String>> = OnceLock::new();
    NAME.get_or_init(|| {
        let pid = std::process::id();
        let stat = process::stat(i32::try_from(pid).ok()?)?;
        Some(format!("{pid}-{}", stat.start))
    })
    .as_deref()
}

/// Writes `guards` (one CLI start's) down in this codecrew's folder under `root`, in
/// one record; None when it could not be (said once: the guards still put back what
/// they hold, unless codecrew is killed).
pub fn write(root: &Path, guards: &[&Guard]) -> Option<Record> {
    match write_in(root, guards) {
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

fn write_in(root: &Path, guards: &[&Guard]) -> std::io::Result<Record> {
    let name = own_name().ok_or_else(|| std::io::Error::other("no start time"))?;
    let bytes = serde_json::to_vec(guards)?;
    let digest: [u8; 32] = Sha256::digest(&bytes).into();
    let mut idle = folder();
    let dir = own_folder(root, name)?;
    let path = dir.join(format!("{}.json", NEXT.fetch_add(1, Ordering::Relaxed)));
    let held: Vec<PathBuf> = guards.iter().map(|guard| guard.path.clone()).collect();
    if !take_back(&mut idle, &held, digest, &path) {
        // Made 0600, written whole, then named: a reader never sees half a record.
        let mut file = tempfile::Builder::new().prefix(".new-").tempfile_in(&dir)?;
        file.write_all(&bytes)?;
        file.persist(&path).map_err(|error| error.error)?;
    }
    Ok(Record { path, held, digest })
}

/// This codecrew's folder `name` under `root`, made when missing (0700), checked as a
/// reader will check it: the user's own.
fn own_folder(root: &Path, name: &str) -> std::io::Result<PathBuf> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(root)?;
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
    Ok(dir)
}

/// Whether the record set aside for the paths `held` in `path`'s folder, with the very
/// bytes whose digest is `digest`, was named `path` again (nothing written). One that
/// says something else, or was changed since it was set aside, is removed: it is of no
/// further use.
fn take_back(idle: &mut Vec<Idle>, held: &[PathBuf], digest: [u8; 32], path: &Path) -> bool {
    let Some(at) = idle
        .iter()
        .position(|set| set.held == held && set.file.parent() == path.parent())
    else {
        return false;
    };
    let set = idle.swap_remove(at);
    let unchanged = set.digest == digest
        && std::fs::symlink_metadata(&set.file)
            .is_ok_and(|meta| file_stamp(&meta) == set.stamp && trusted(&set.file, false).is_ok());
    if unchanged && std::fs::rename(&set.file, path).is_ok() {
        return true;
    }
    let _ = std::fs::remove_file(&set.file);
    false
}

/// Sets `record` aside once its guards have put back what they held (removes it when it
/// cannot be): what it says is held no more, and a later start holding the same takes
/// it back ([`write`]). An earlier one set aside for the same paths goes.
fn set_aside(record: &mut Record) {
    let mut idle = folder();
    let Some(dir) = record.path.parent() else {
        return;
    };
    if let Some(at) = idle
        .iter()
        .position(|set| set.held == record.held && set.file.parent() == Some(dir))
    {
        let _ = std::fs::remove_file(idle.swap_remove(at).file);
    }
    let file = record.path.file_name().map(|name| {
        let mut idle = std::ffi::OsString::from(IDLE);
        idle.push(name);
        dir.join(idle)
    });
    let kept = file.and_then(|file| {
        std::fs::rename(&record.path, &file).ok()?;
        let meta = std::fs::symlink_metadata(&file).ok()?;
        Some(Idle {
            stamp: file_stamp(&meta),
            file,
            held: std::mem::take(&mut record.held),
            digest: record.digest,
        })
    });
    match kept {
        Some(set) => idle.push(set),
        None => remove_locked(&record.path),
    }
}

/// Removes the records set aside (at codecrew's exit: no CLI of it will start again),
/// and its folder.
pub fn finish() {
    finish_where(|_| true);
}

/// Removes the records set aside that `which` names.
fn finish_where(which: impl Fn(&Path) -> bool) {
    let mut idle = folder();
    idle.retain(|set| {
        if !which(&set.file) {
            return true;
        }
        remove_locked(&set.file);
        false
    });
}

/// Removes `record`, and its folder when it was the last; the folder's lock held.
fn remove_locked(record: &Path) {
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
    let _folder = folder();
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
        // A record it was still writing when it was killed (nothing held yet), or one it
        // set aside (nothing held any more).
        let name = name.to_string_lossy();
        let inert = name.starts_with(".new-") || name.starts_with(IDLE);
        if inert && trusted(&record, false).is_ok() {
            let _ = std::fs::remove_file(&record);
            continue;
        }
        match read(&record) {
            Ok(guards) => {
                for guard in guards {
                    guard.restore_and_warn(true);
                }
                let _ = std::fs::remove_file(&record);
            }
            Err(why) => say(&Warning::Refused { path: record, why }),
        }
    }
    // Stays while a refused record is in it.
    let _ = std::fs::remove_dir(dir);
}

/// The guards a record holds, checked first.
fn read(record: &Path) -> Result<Vec<Guard>, String> {
    if record.extension().is_none_or(|ext| ext != "json") {
        return Err("not a record".to_owned());
    }
    trusted(record, false)?;
    let bytes = read_regular(record)
        .map_err(|error| error.to_string())?
        .ok_or_else(|| "gone".to_owned())?;
    serde_json::from_slice::<Records>(&bytes)
        .map(Records::into_guards)
        .map_err(|error| format!("malformed: {error}"))
}

/// A record as this codecrew writes it (one CLI start's guards), or as a codecrew before
/// it did (one guard a record): one killed before an upgrade left the latter.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Records {
    Start(Vec<Guard>),
    One(Box<Guard>),
}

impl Records {
    fn into_guards(self) -> Vec<Guard> {
        match self {
            Records::Start(guards) => guards,
            Records::One(guard) => vec![*guard],
        }
    }
}

#[cfg(test)]
mod tests;
