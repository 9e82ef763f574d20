//! What stands beneath a held folder too large to keep a copy of (opencode's installed
//! plugin packages, years of Claude's shell snapshots): each entry's stamp, not its
//! bytes, so that what changed is found, and removed, since it cannot be put back.
//!
//! A stamp is what the kernel says of the entry, read without following a link: its
//! inode, size, permissions, and its modification and change times. The change time
//! (`ctime`) is set by the kernel at every write, rename or change of permissions, and
//! no program can set it back (`utimensat` sets it to now), so a file rewritten with
//! its old size and modification time still shows; no hash of the contents is needed,
//! and reading the stamps of tens of thousands of files costs little.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::files::Folders;

/// The most entries a folder held by its stamps may have: past it, it is not held.
pub const MAX_STAMPED: usize = 200_000;

/// The stamps beneath a held path, by name (the empty name for the path itself).
pub type Stamps = BTreeMap<PathBuf, Stamp>;

/// What the kernel says of one entry (not a folder).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mode: u32,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Self {
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mode: meta.mode(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

/// The stamp of what stands at `path` now, not following it; None when nothing does,
/// or a folder does.
pub fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    (!meta.is_dir()).then(|| Stamp::of(&meta))
}

/// The stamp of every entry but folders at or beneath `path` (the empty name for the
/// path itself) but those under the top-level names `except`; empty for a missing
/// path; None past `limit` entries, or when a folder cannot be read. The folders met
/// are added to `folders`.
pub fn stamps(
    path: &Path,
    except: &[String],
    limit: usize,
    folders: &mut Folders,
) -> Option<Stamps> {
    let mut found = Stamps::new();
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Some(found);
    };
    if !meta.is_dir() {
        found.insert(PathBuf::new(), Stamp::of(&meta));
        return Some(found);
    }
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        folders.insert(relative.clone());
        for entry in std::fs::read_dir(path.join(&relative)).ok()? {
            let entry = entry.ok()?;
            let name = relative.join(entry.file_name());
            if except.iter().any(|skip| name == Path::new(skip)) {
                continue;
            }
            // Not followed: a link's own stamp.
            let meta = entry.metadata().ok()?;
            if meta.is_dir() {
                pending.push(name);
                continue;
            }
            if found.len() >= limit {
                return None;
            }
            found.insert(name, Stamp::of(&meta));
        }
    }
    Some(found)
}
