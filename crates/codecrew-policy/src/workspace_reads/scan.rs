//! One directory of the workspace, as the plan needs it: what it holds, and a stamp that
//! says whether it can have changed since.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::Withheld;
use crate::home::HomeInWorkspace;

/// Dependency and build directories, granted whole without a look: they can hold tens of
/// thousands of files, none of them the user's secrets, and walking them would cost
/// every command that runs without asking. The repository's `.git` is granted whole
/// too: git needs it (what it holds of a committed secret, the analysis checks:
/// `crate::tracked`). Not `.gradle`, which is also Gradle's user home, where its
/// `gradle.properties` holds the registries' passwords. What the plan withholds (the home
/// directory's `.cache`, in a workspace that holds the home) is withheld all the same,
/// and one that holds a path it withholds (a state folder in `target/`) is looked into.
const NOT_LOOKED_INTO: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".next",
    ".cache",
];

/// How recent a directory's last change may be for its stamp to be trusted next time.
/// A file system stamps times at the kernel's clock tick: a name added in the same tick
/// as the listing was read would leave the stamp as it was. A directory changed this
/// recently is read again next time instead (git's "racy" index entries, the same way).
const SETTLED: Duration = Duration::from_secs(2);

/// What identifies a directory's list of names: if none of these moved, no name was
/// added, removed or renamed in it. The change time cannot be set back by a program
/// (only the clock can), so `touch -d` on the directory does not hide an added file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

/// Seconds and nanoseconds as nanoseconds.
fn nanos(seconds: i64, nanos: i64) -> i128 {
    i128::from(seconds) * 1_000_000_000 + i128::from(nanos)
}

impl Stamp {
    /// The stamp of a directory, or None when it changed too recently to be trusted.
    pub fn of(meta: &std::fs::Metadata, now: SystemTime) -> Option<Stamp> {
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            mtime_ns: nanos(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: nanos(meta.ctime(), meta.ctime_nsec()),
        }
        .settled(now)
    }

    /// The stamp of a directory from its `stat` (None when it is not a directory, or
    /// changed too recently to be trusted), as [`Stamp::of`].
    pub fn of_stat(stat: &nix::sys::stat::FileStat, now: SystemTime) -> Option<Stamp> {
        if stat.st_mode & nix::libc::S_IFMT != nix::libc::S_IFDIR {
            return None;
        }
        Stamp {
            dev: stat.st_dev,
            ino: stat.st_ino,
            mtime_ns: nanos(stat.st_mtime, stat.st_mtime_nsec),
            ctime_ns: nanos(stat.st_ctime, stat.st_ctime_nsec),
        }
        .settled(now)
    }

    /// The stamp, unless its directory changed within [`SETTLED`] of `now`.
    fn settled(self, now: SystemTime) -> Option<Stamp> {
        let now_ns = now
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos() as i128);
        (now_ns - self.ctime_ns >= SETTLED.as_nanos() as i128).then_some(self)
    }

    /// The stamp as numbers (device, inode, modification and change time in ns).
    pub fn fields(&self) -> (u64, u64, i128, i128) {
        (self.dev, self.ino, self.mtime_ns, self.ctime_ns)
    }

    /// A stamp from its numbers ([`Stamp::fields`]); None when they do not fit.
    pub fn from_fields(dev: i128, ino: i128, mtime_ns: i128, ctime_ns: i128) -> Option<Stamp> {
        Some(Stamp {
            dev: u64::try_from(dev).ok()?,
            ino: u64::try_from(ino).ok()?,
            mtime_ns,
            ctime_ns,
        })
    }
}

/// One directory's entries, sorted into what the plan does with each. Names are
/// paths only so that they are kept as text (a name that is not UTF-8 keeps the
/// workspace's plan out of the cache).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listing {
    /// The directory's stamp when it was read (None: read too soon after a change).
    pub stamp: Option<Stamp>,
    /// Subdirectories to look into.
    pub subdirs: Vec<PathBuf>,
    /// Withheld entries (sensitive, or named): never granted.
    pub withheld: Vec<PathBuf>,
    /// What is granted one by one when the directory holds something sensitive: its
    /// other files, and the directories granted whole without a look. Kept only while
    /// the directory needs them (a directory with nothing sensitive beneath is one grant).
    pub entries: Option<Entries>,
}

/// The entries of a directory that are granted one by one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entries {
    pub files: Vec<PathBuf>,
    pub whole: Vec<PathBuf>,
}

/// Reads `dir` (`relative` to the workspace root, which holds `home`), sorting out what
/// `withheld` names, stamping it before the names are
/// read so that a change while reading makes the stamp stale rather than the names.
/// None when it cannot be read (it is then not granted).
pub fn read(
    dir: &Path,
    relative: &Path,
    withheld: &Withheld,
    home: &HomeInWorkspace,
    now: SystemTime,
) -> Option<Listing> {
    let stamp = std::fs::symlink_metadata(dir)
        .ok()
        .filter(std::fs::Metadata::is_dir)?;
    let mut listing = Listing {
        stamp: Stamp::of(&stamp, now),
        ..Listing::default()
    };
    let mut entries = Entries::default();
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = PathBuf::from(entry.file_name());
        if withheld.holds(&relative.join(&name), home) {
            listing.withheld.push(name);
        } else if kind.is_dir()
            && NOT_LOOKED_INTO.iter().any(|skip| name == Path::new(skip))
            && !withheld.lies_beneath(&relative.join(&name))
        {
            entries.whole.push(name);
        } else if kind.is_dir() {
            listing.subdirs.push(name);
        } else if !kind.is_symlink() {
            // A link needs no grant: the kernel checks the file it leads to.
            entries.files.push(name);
        }
    }
    // Sorted, so that two readings of the same names compare equal.
    for names in [
        &mut listing.subdirs,
        &mut listing.withheld,
        &mut entries.files,
        &mut entries.whole,
    ] {
        names.sort_unstable();
    }
    listing.entries = Some(entries);
    Some(listing)
}
