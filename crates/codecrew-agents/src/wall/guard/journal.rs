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
//! Each record is sealed with the user's key (`seal.rs`) and names who held (the CLI and
//! its workspace): one without codecrew's seal, or that names a path codecrew does not
//! hold for that CLI there (`targets.rs`), is refused whole, with a warning that names
//! it, and left for the user. No tool, command or wall reads the state folder
//! (`codecrew_policy::state_folder`). Folders are made 0700, records 0600 (they hold
//! copies of what was held, `.env` files and MCP servers' tokens included).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use codecrew_policy::process;
use sha2::{Digest, Sha256};

use super::files::read_regular;
use super::seal::{Key, key_path};
use super::warning::{Warning, say};
use super::{Guard, Holder, codec, targets};
use crate::wall::Guarded;

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

/// Where every codecrew's folder is: in codecrew's state folder, the one no tool,
/// command or wall reaches (`codecrew_policy::state_folder`).
pub fn root() -> Option<PathBuf> {
    codecrew_policy::state_folder::location().map(|dir| dir.join("held"))
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

/// One CLI start's record, as written: who held, and what.
#[derive(serde::Serialize)]
struct Written<'a> {
    cli: &'a str,
    #[serde(with = "codec::path")]
    workspace: &'a Path,
    guards: &'a [&'a Guard],
}

/// One CLI start's record, as read back.
#[derive(serde::Deserialize)]
struct Start {
    cli: String,
    #[serde(with = "codec::path")]
    workspace: PathBuf,
    guards: Vec<Guard>,
}

/// Writes `guards` (one CLI start's, by `holder`) down in this codecrew's folder under
/// `root`, in one sealed record; None when it could not be (said once: the guards still
/// put back what they hold, unless codecrew is killed).
pub fn write(root: &Path, holder: &Holder, guards: &[&Guard]) -> Option<Record> {
    let written = own_name()
        .ok_or_else(|| std::io::Error::other("no start time"))
        .and_then(|name| write_in(root, name, holder, guards));
    match written {
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

/// [`write`], in the folder `name` (this codecrew's).
fn write_in(
    root: &Path,
    name: &str,
    holder: &Holder,
    guards: &[&Guard],
) -> std::io::Result<Record> {
    let body = serde_json::to_vec(&Written {
        cli: &holder.cli,
        workspace: &holder.workspace,
        guards,
    })?;
    let key = Key::of(root).map_err(std::io::Error::other)?;
    let bytes = key.seal(name, &body);
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
/// and removes them; refuses, with a warning, what it cannot trust, what codecrew did
/// not seal, and what names a path that `held` (what codecrew holds for a holder) does
/// not hold that way. The refusals it said.
pub fn recover(root: Option<&Path>, held: &dyn Fn(&Holder) -> Vec<Guarded>) -> Vec<Warning> {
    let mut refused = Refusals::default();
    let Some(root) = root else {
        return refused.said;
    };
    if std::fs::symlink_metadata(root).is_err() {
        return refused.said;
    }
    let _folder = folder();
    // The folders above need no check: whoever could replace `held` there could not
    // make what stands in its place the user's own.
    if let Err(why) = trusted(root, true) {
        refused.say(Warning::Refused {
            path: root.to_path_buf(),
            why,
        });
        return refused.said;
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return refused.said;
    };
    // Read (or made) at the first record to read back, not before: a journal with no
    // folder of a codecrew that is gone needs no key.
    let mut key: Option<Option<Key>> = None;
    for entry in entries.flatten() {
        let dir = entry.path();
        let Some((pid, start)) = entry.file_name().to_str().and_then(parse_name) else {
            refused.say(Warning::Refused {
                path: dir,
                why: "not named for a codecrew".to_owned(),
            });
            continue;
        };
        if still_runs(pid, start) {
            continue;
        }
        if let Err(why) = trusted(&dir, true) {
            refused.say(Warning::Refused { path: dir, why });
            continue;
        }
        let key = key.get_or_insert_with(|| match Key::of(root) {
            Ok(key) => Some(key),
            Err(why) => {
                refused.say(Warning::Refused {
                    path: key_path(root).unwrap_or_else(|| root.to_path_buf()),
                    why,
                });
                None
            }
        });
        // Without its key no record can be told from a forged one: all are left.
        let Some(key) = key else {
            break;
        };
        recover_folder(&dir, key, held, &mut refused);
    }
    refused.said
}

/// The refusals said while the journal is read back.
#[derive(Default)]
struct Refusals {
    said: Vec<Warning>,
}

impl Refusals {
    fn say(&mut self, warning: Warning) {
        say(&warning);
        self.said.push(warning);
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
/// the folder once every record has gone; a record that is refused stays, and so does
/// the folder.
fn recover_folder(
    dir: &Path,
    key: &Key,
    held: &dyn Fn(&Holder) -> Vec<Guarded>,
    refused: &mut Refusals,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let folder = dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
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
        match read(&record, key, &folder).and_then(|start| allowed(start, held)) {
            Ok(guards) => {
                for guard in guards {
                    guard.restore_and_warn(true);
                }
                let _ = std::fs::remove_file(&record);
            }
            Err(Refusal::Untrusted(why)) => refused.say(Warning::Refused { path: record, why }),
            Err(Refusal::NotCodecrews(why)) => refused.say(Warning::NotPutBack { record, why }),
        }
    }
    // Stays while a refused record is in it.
    let _ = std::fs::remove_dir(dir);
}

/// Why a record is not put back.
#[derive(Debug)]
enum Refusal {
    /// The file cannot be trusted as the user's own (a link, another's, writable by
    /// others, not a record, unreadable).
    Untrusted(String),
    /// It is the user's file, but codecrew did not write what it says, or it names
    /// what codecrew does not hold.
    NotCodecrews(String),
}

/// What a record written in the folder `folder` holds, checked first: the user's own
/// file, sealed with `key`.
fn read(record: &Path, key: &Key, folder: &str) -> Result<Start, Refusal> {
    if record.extension().is_none_or(|ext| ext != "json") {
        return Err(Refusal::Untrusted("not a record".to_owned()));
    }
    trusted(record, false).map_err(Refusal::Untrusted)?;
    let bytes = read_regular(record)
        .map_err(|error| Refusal::Untrusted(error.to_string()))?
        .ok_or_else(|| Refusal::Untrusted("gone".to_owned()))?;
    let body = key.open(folder, &bytes).map_err(Refusal::NotCodecrews)?;
    serde_json::from_slice::<Start>(body)
        .map_err(|error| Refusal::NotCodecrews(format!("it is malformed: {error}")))
}

/// The guards of `start` when each names only what codecrew holds for its CLI in its
/// workspace, held that way (`held` works it out again); else why not. A record is put
/// back whole or not at all. The guards are not live: dropped, they put nothing back.
fn allowed(start: Start, held: &dyn Fn(&Holder) -> Vec<Guarded>) -> Result<Vec<Guard>, Refusal> {
    if !targets::plain_absolute(&start.workspace) {
        return Err(Refusal::NotCodecrews(format!(
            "it names the workspace {}, which is not a plain absolute path",
            start.workspace.display()
        )));
    }
    let holder = Holder {
        cli: start.cli,
        workspace: start.workspace,
    };
    let allowed = held(&holder);
    if let Some(why) = start
        .guards
        .iter()
        .find_map(|guard| targets::refused(guard, &allowed))
    {
        return Err(Refusal::NotCodecrews(why));
    }
    Ok(start.guards)
}

#[cfg(test)]
mod tests;
