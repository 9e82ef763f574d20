//! What stands at a held path, read and put back without ever following a link: a
//! program inside the wall may have left one to lead codecrew elsewhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The most a whole folder held by a copy may weigh; past it, it is held by its stamps
/// ([`super::stamps`]).
const MAX_HELD_BYTES: u64 = 4 * 1024 * 1024;
/// The most files a whole folder held may have.
const MAX_HELD_FILES: usize = 2_000;

/// The entries beneath a held path, by name (the empty name for the path itself).
pub type Files = BTreeMap<PathBuf, Entry>;

/// The folders at or beneath a held path, by name (the empty name for the path itself):
/// what a put-back leaves standing once the folders a plant made are emptied.
pub type Folders = BTreeSet<PathBuf>;

/// One entry of a held path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Entry {
    File(#[serde(with = "super::codec::bytes")] Vec<u8>),
    /// A link (never followed), with what it points at.
    Link(#[serde(with = "super::codec::path")] PathBuf),
}

/// The regular files at or beneath `path` with their bytes (the empty name for a file)
/// but those under the top-level names `except`; none for a missing path; None when
/// there are more than the limits allow.
pub fn files(path: &Path, except: &[String]) -> Option<Files> {
    files_in(path, except, &mut Folders::new())
}

/// [`files`], adding the folders met to `folders`.
pub fn files_in(path: &Path, except: &[String], folders: &mut Folders) -> Option<Files> {
    let mut found = Files::new();
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Some(found);
    };
    if meta.file_type().is_symlink() {
        found.insert(PathBuf::new(), Entry::Link(std::fs::read_link(path).ok()?));
        return Some(found);
    }
    if !meta.is_dir() {
        found.insert(PathBuf::new(), Entry::File(read_regular(path).ok()??));
        return Some(found);
    }
    let mut total = 0;
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        folders.insert(relative.clone());
        for entry in std::fs::read_dir(path.join(&relative)).ok()?.flatten() {
            let name = relative.join(entry.file_name());
            if except.iter().any(|skip| name == Path::new(skip)) {
                continue;
            }
            let kind = entry.file_type().ok()?;
            if found.len() >= MAX_HELD_FILES {
                return None;
            }
            if kind.is_dir() {
                pending.push(name);
            } else if kind.is_symlink() {
                found.insert(
                    name.clone(),
                    Entry::Link(std::fs::read_link(path.join(&name)).ok()?),
                );
            } else if kind.is_file() {
                total += entry.metadata().ok()?.len();
                if total > MAX_HELD_BYTES {
                    return None;
                }
                found.insert(
                    name.clone(),
                    Entry::File(read_regular(&path.join(&name)).ok()??),
                );
            }
        }
    }
    Some(found)
}

/// The names of everything but folders at or beneath `path` (the empty name for the
/// path itself) but what is under the top-level names `except`, contents unread and
/// without a limit: what stands in a held folder that [`files`] cannot hold (grown past
/// its limits, or holding a FIFO), so that all that was not there before can go.
pub fn names(path: &Path, except: &[String]) -> Vec<PathBuf> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Vec::new();
    };
    if !meta.is_dir() {
        return vec![PathBuf::new()];
    }
    let mut found = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(path.join(&relative)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = relative.join(entry.file_name());
            if except.iter().any(|skip| name == Path::new(skip)) {
                continue;
            }
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => pending.push(name),
                _ => found.push(name),
            }
        }
    }
    found
}

/// Removes the folders at or beneath `path` (but under the top-level names `except`)
/// that `before` does not name and that are empty once what was put back is: a plant's
/// folders, emptied of what it planted. The deepest go first, so that a tree of them
/// goes whole; one that still holds anything stays. The names of those removed.
pub fn remove_new_folders(path: &Path, except: &[String], before: &Folders) -> Vec<PathBuf> {
    let mut new: Vec<PathBuf> = folders(path, except)
        .into_iter()
        .filter(|name| !before.contains(name))
        .collect();
    new.sort_by_key(|name| std::cmp::Reverse(name.components().count()));
    new.into_iter()
        .filter(|name| {
            let folder = if name.as_os_str().is_empty() {
                path.to_path_buf()
            } else {
                path.join(name)
            };
            std::fs::remove_dir(folder).is_ok()
        })
        .collect()
}

/// The folders at or beneath `path` (the empty name for the path itself), links not
/// followed, but those under the top-level names `except`.
fn folders(path: &Path, except: &[String]) -> Vec<PathBuf> {
    if !std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir()) {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        if let Ok(entries) = std::fs::read_dir(path.join(&relative)) {
            for entry in entries.flatten() {
                let name = relative.join(entry.file_name());
                let skipped = except.iter().any(|skip| name == Path::new(skip));
                if !skipped && entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    pending.push(name);
                }
            }
        }
        found.push(relative);
    }
    found
}

/// What stands at `path` now, not following it: a regular file's bytes or a link's
/// target; None when nothing does, or anything else (a folder, a FIFO).
pub fn entry(path: &Path) -> Option<Entry> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if meta.file_type().is_symlink() {
        return std::fs::read_link(path).ok().map(Entry::Link);
    }
    read_regular(path).ok()?.map(Entry::File)
}

/// The bytes of the regular file at `path`, opened without following a link (none when
/// it is missing; an error for a link, a FIFO or anything else).
pub fn read_regular(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path);
    let mut file = match file {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// Puts `entry` back at `name` beneath `root` (the root itself for the empty name).
pub fn put_entry(root: &Path, name: &Path, entry: &Entry) -> std::io::Result<()> {
    match entry {
        Entry::File(bytes) => put_file(root, name, bytes),
        Entry::Link(target) => {
            let place = if name.as_os_str().is_empty() {
                root.to_path_buf()
            } else {
                real_dirs(root, name)?;
                root.join(name)
            };
            remove_entry(&place)?;
            std::os::unix::fs::symlink(target, place)
        }
    }
}

/// Writes `bytes` as the file `name` beneath `root` (the root itself for the empty
/// name): every folder on the way made a real one, the file written beside its place
/// and renamed over whatever stands there.
pub fn put_file(root: &Path, name: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let place = if name.as_os_str().is_empty() {
        root.to_path_buf()
    } else {
        real_dirs(root, name)?;
        root.join(name)
    };
    let dir = place.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    // The permissions of the regular file it replaces (a link's are not looked at).
    if let Ok(meta) = std::fs::symlink_metadata(&place)
        && meta.is_file()
    {
        temp.as_file().set_permissions(meta.permissions())?;
    }
    temp.write_all(bytes)?;
    // A folder standing where the file goes cannot be renamed over: it goes first.
    if std::fs::symlink_metadata(&place).is_ok_and(|meta| meta.is_dir()) {
        std::fs::remove_dir_all(&place)?;
    }
    temp.persist(&place).map_err(|error| error.error)?;
    Ok(())
}

/// Makes `root` and every folder between it and `name`'s place real folders: a link or
/// a file standing in the way is removed, a missing folder made.
fn real_dirs(root: &Path, name: &Path) -> std::io::Result<()> {
    let mut dir = root.to_path_buf();
    let parents = name.parent().map(Path::components).into_iter().flatten();
    for part in std::iter::once(None).chain(parents.map(Some)) {
        if let Some(part) = part {
            dir.push(part);
        }
        match std::fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                std::fs::remove_file(&dir)?;
                std::fs::create_dir(&dir)?;
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(&dir)?;
            }
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// Removes what stands at `path` without following it: a file or a link; a folder stays
/// (its files were listed apart, and once they are gone [`remove_new_folders`] takes it
/// if it was not there before).
pub fn remove_entry(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => std::fs::remove_file(path),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error),
    }
}
