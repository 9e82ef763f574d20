//! The workspace as a directory handle: every open, create, rename and stat a file tool
//! makes is resolved by the kernel beneath it, at the moment of use.
//!
//! [`crate::path::resolve`] judges a path (inside the workspace, not a link out, not a
//! sensitive file under another name, ...) and returns its canonical form, every link on
//! the way already resolved. Between that check and the use, another process may swap a
//! directory on the way for a link to elsewhere. So no use goes by name from `/`: the
//! workspace root is opened as a directory, and the canonical path, relative to it, is
//! opened with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`.
//! The canonical path holds no link, so the kernel refusing one on the way means one was
//! swapped in: the call fails with `E_PATH_CHANGED`, and nothing outside is read or
//! written. Where openat2 is missing (Linux before 5.6), each component is opened with
//! `O_NOFOLLOW` from the one before, which refuses the same links.
//!
//! An atomic write creates its temporary file in the already opened target directory and
//! renames it there (`renameat`), so neither the temporary file nor the result can land
//! anywhere else.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, OpenHow, ResolveFlag, openat, openat2, renameat};
use nix::sys::stat::{Mode, SFlag, fstatat, mkdirat};
use nix::unistd::{UnlinkatFlags, unlinkat};

use codecrew_policy::paths;

/// How many names a temporary file tries before giving up (they are random).
const TEMP_ATTEMPTS: u32 = 16;

/// The workspace root, open.
#[derive(Debug)]
pub struct Beneath {
    root: OwnedFd,
    path: PathBuf,
}

/// What an open or a write beneath the workspace ran into.
#[derive(Debug, thiserror::Error)]
pub enum BeneathError {
    /// A link was met where the checked path had none: something was swapped in.
    #[error(
        "the path changed while codecrew was using it (a directory or file was swapped for a link)"
    )]
    Changed,
    /// The path is not beneath the workspace root.
    #[error("the path is not inside the workspace")]
    Outside,
    /// Not a regular file where one was wanted (a FIFO, socket, device or directory).
    #[error("not a regular file (a FIFO, socket, device or directory)")]
    NotRegular,
    /// A regular file with other hard links, one of which may be outside the workspace.
    #[error("the file has other hard links, and one may be a file outside the workspace")]
    HardLinked,
    /// A parent exists and is not a directory.
    #[error("a parent exists and is not a directory")]
    NotADirectory,
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl From<Errno> for BeneathError {
    fn from(errno: Errno) -> Self {
        match errno {
            // A link on the way (ELOOP), or resolution that would leave the root (EXDEV).
            Errno::ELOOP | Errno::EXDEV => BeneathError::Changed,
            Errno::ENOTDIR => BeneathError::NotADirectory,
            other => BeneathError::Io(io::Error::from(other)),
        }
    }
}

impl BeneathError {
    /// The io::Error kind, for the tools' not-found and permission messages.
    pub fn kind(&self) -> io::ErrorKind {
        match self {
            BeneathError::Io(error) => error.kind(),
            _ => io::ErrorKind::Other,
        }
    }
}

type Result<T> = std::result::Result<T, BeneathError>;

impl Beneath {
    /// Opens the canonical workspace `root`.
    pub fn open(root: &Path) -> Result<Beneath> {
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let root_fd = nix::fcntl::open(root, flags, Mode::empty())?;
        Ok(Beneath {
            root: root_fd,
            path: root.to_path_buf(),
        })
    }

    /// `path` (absolute, inside the root, as `resolve` returned it) relative to the root;
    /// `.` for the root itself.
    fn relative(&self, path: &Path) -> Result<PathBuf> {
        let relative = path
            .strip_prefix(&self.path)
            .map_err(|_| BeneathError::Outside)?;
        if relative
            .components()
            .any(|component| !matches!(component, Component::Normal(_)))
        {
            return Err(BeneathError::Outside);
        }
        Ok(if relative.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            relative.to_path_buf()
        })
    }

    /// Opens `relative` beneath the root, following no link at all.
    fn open_relative(&self, relative: &Path, flags: OFlag, mode: Mode) -> Result<OwnedFd> {
        let flags = flags | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW;
        let how = OpenHow::new().flags(flags).mode(mode).resolve(
            ResolveFlag::RESOLVE_BENEATH
                | ResolveFlag::RESOLVE_NO_SYMLINKS
                | ResolveFlag::RESOLVE_NO_MAGICLINKS,
        );
        match openat2(&self.root, relative, how) {
            Err(Errno::ENOSYS) => self.walk(relative, flags, mode),
            // O_NOFOLLOW on a link as the last component.
            Err(Errno::ELOOP) => Err(BeneathError::Changed),
            other => Ok(other?),
        }
    }

    /// The fallback without openat2: one component at a time, never following a link.
    fn walk(&self, relative: &Path, flags: OFlag, mode: Mode) -> Result<OwnedFd> {
        let names: Vec<&std::ffi::OsStr> = relative
            .components()
            .filter_map(|component| match component {
                Component::Normal(name) => Some(name),
                _ => None,
            })
            .collect();
        let Some((last, dirs)) = names.split_last() else {
            return Ok(openat(&self.root, ".", flags, mode)?);
        };
        let mut dir = openat(
            &self.root,
            ".",
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        for name in dirs {
            let step = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
            dir = openat(&dir, *name, step, Mode::empty()).map_err(|errno| match errno {
                // O_NOFOLLOW | O_DIRECTORY on a link: ENOTDIR or ELOOP.
                Errno::ENOTDIR | Errno::ELOOP => BeneathError::Changed,
                other => BeneathError::from(other),
            })?;
        }
        Ok(openat(&dir, *last, flags, mode)?)
    }

    /// Opens the regular file at `path` for reading: no link anywhere on the way, no
    /// blocking on a FIFO, and not a file with other hard links.
    pub fn open_read(&self, path: &Path) -> Result<File> {
        let relative = self.relative(path)?;
        let fd = self.open_relative(
            &relative,
            OFlag::O_RDONLY | OFlag::O_NONBLOCK,
            Mode::empty(),
        )?;
        let file = File::from(fd);
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(BeneathError::NotRegular);
        }
        if paths::hard_linked(&meta) {
            return Err(BeneathError::HardLinked);
        }
        Ok(file)
    }

    /// Whether `path` is beneath the root now, through directories only (the last
    /// component may itself be a link, which is not followed). A listing keeps only the
    /// names that pass: one read through a directory swapped for a link is dropped.
    pub fn holds(&self, path: &Path) -> bool {
        self.relative(path)
            .and_then(|relative| self.open_relative(&relative, OFlag::O_PATH, Mode::empty()))
            .is_ok()
    }

    /// Opens the directory `dir` (as a handle to stand in, not to read), through
    /// directories only.
    pub fn open_dir(&self, dir: &Path) -> Result<OwnedFd> {
        let relative = self.relative(dir)?;
        self.open_relative(&relative, OFlag::O_PATH | OFlag::O_DIRECTORY, Mode::empty())
    }

    /// Opens the directory `dir`, creating it and any missing parent, each beneath the
    /// one before and never through a link.
    pub fn create_dirs(&self, dir: &Path) -> Result<OwnedFd> {
        let relative = self.relative(dir)?;
        let step = OFlag::O_PATH | OFlag::O_DIRECTORY;
        if let Ok(fd) = self.open_relative(&relative, step, Mode::empty()) {
            return Ok(fd);
        }
        let mut current = PathBuf::new();
        let mut fd = self.open_relative(Path::new("."), step, Mode::empty())?;
        for component in relative.components() {
            let Component::Normal(name) = component else {
                continue;
            };
            current.push(name);
            match mkdirat(&fd, name, Mode::from_bits_truncate(0o777)) {
                Ok(()) | Err(Errno::EEXIST) => {}
                Err(errno) => return Err(errno.into()),
            }
            fd = openat(
                &fd,
                name,
                step | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
                Mode::empty(),
            )
            .map_err(|errno| match errno {
                // A link or a file where a directory should be.
                Errno::ELOOP => BeneathError::Changed,
                Errno::ENOTDIR => match fstatat(&fd, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
                    Ok(stat)
                        if SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT
                            == SFlag::S_IFLNK =>
                    {
                        BeneathError::Changed
                    }
                    _ => BeneathError::NotADirectory,
                },
                other => other.into(),
            })?;
        }
        Ok(fd)
    }

    /// Replaces (or creates) the file at `target` with `bytes` atomically, through the
    /// opened directory: a temporary file created in it, then renamed over the name, so a
    /// reader never sees half a file and nothing lands outside. An existing file keeps
    /// its permissions; a link or a special file at the name is refused. Returns true when
    /// the file was created.
    pub fn write_atomic(&self, target: &Path, bytes: &[u8]) -> Result<bool> {
        let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
            return Err(BeneathError::Outside);
        };
        let dir = self.create_dirs(parent)?;
        let existing = match fstatat(&dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => {
                let kind = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT;
                if kind == SFlag::S_IFLNK {
                    return Err(BeneathError::Changed);
                }
                if kind == SFlag::S_IFDIR {
                    return Err(io::Error::from(io::ErrorKind::IsADirectory).into());
                }
                if kind != SFlag::S_IFREG {
                    return Err(BeneathError::NotRegular);
                }
                Some(stat.st_mode & 0o7777)
            }
            Err(Errno::ENOENT) => None,
            Err(errno) => return Err(errno.into()),
        };
        // O_PATH cannot create; the directory is opened again, for real, beneath its
        // already opened self.
        let dir = openat(
            &dir,
            ".",
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        let (temp_name, temp) = create_temp(&dir)?;
        let written = (|| -> Result<()> {
            let mut file = File::from(temp);
            file.write_all(bytes)?;
            if let Some(mode) = existing {
                file.set_permissions(std::fs::Permissions::from_mode(mode))?;
            }
            file.sync_all()?;
            renameat(&dir, temp_name.as_os_str(), &dir, name)?;
            Ok(())
        })();
        if written.is_err() {
            let _ = unlinkat(&dir, temp_name.as_os_str(), UnlinkatFlags::NoRemoveDir);
        }
        written.map(|()| existing.is_none())
    }
}

impl Beneath {
    /// Puts a regular file with `bytes` and the permission bits `mode` at `target`,
    /// whatever non-directory stands at the name now (a link there is replaced, never
    /// followed): a temporary file in the opened directory renamed over the name. The
    /// directories on the way are made, never through a link. For `codecrew undo`, which
    /// puts back a file as it was, not as the file tools' writes that keep a file's mode;
    /// not flushed to the disk one by one: the caller flushes once for all it puts.
    pub fn put_file(&self, target: &Path, bytes: &[u8], mode: u32) -> Result<()> {
        let (dir, name) = self.replaceable(target)?;
        let (temp_name, temp) = create_temp(&dir)?;
        let written = (|| -> Result<()> {
            let mut file = File::from(temp);
            file.write_all(bytes)?;
            file.set_permissions(std::fs::Permissions::from_mode(mode & 0o7777))?;
            renameat(&dir, temp_name.as_os_str(), &dir, name.as_os_str())?;
            Ok(())
        })();
        if written.is_err() {
            let _ = unlinkat(&dir, temp_name.as_os_str(), UnlinkatFlags::NoRemoveDir);
        }
        written
    }

    /// Puts a symbolic link to `link` at `target`, as [`Beneath::put_file`] puts a file.
    /// The link is made, never followed.
    pub fn put_symlink(&self, target: &Path, link: &std::ffi::OsStr) -> Result<()> {
        let (dir, name) = self.replaceable(target)?;
        let mut made = None;
        for _ in 0..TEMP_ATTEMPTS {
            let temp = OsString::from(format!(".codecrew-{:016x}.tmp", random()));
            match nix::unistd::symlinkat(link, &dir, temp.as_os_str()) {
                Ok(()) => {
                    made = Some(temp);
                    break;
                }
                Err(Errno::EEXIST) => continue,
                Err(errno) => return Err(errno.into()),
            }
        }
        let Some(temp) = made else {
            return Err(io::Error::from(io::ErrorKind::AlreadyExists).into());
        };
        renameat(&dir, temp.as_os_str(), &dir, name.as_os_str()).map_err(|errno| {
            let _ = unlinkat(&dir, temp.as_os_str(), UnlinkatFlags::NoRemoveDir);
            BeneathError::from(errno)
        })
    }

    /// Removes the non-directory at `target` (a link itself, never what it leads to).
    /// False when there was nothing there.
    pub fn remove_file(&self, target: &Path) -> Result<bool> {
        let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
            return Err(BeneathError::Outside);
        };
        let dir = match self.open_dir(parent) {
            Ok(dir) => dir,
            Err(BeneathError::Io(error)) if error.kind() == io::ErrorKind::NotFound => {
                return Ok(false);
            }
            Err(error) => return Err(error),
        };
        match unlinkat(&dir, name, UnlinkatFlags::NoRemoveDir) {
            Ok(()) => Ok(true),
            Err(Errno::ENOENT) => Ok(false),
            Err(errno) => Err(errno.into()),
        }
    }

    /// Removes the directory `dir` if it is empty; false when it is not (or is gone).
    pub fn remove_empty_dir(&self, dir: &Path) -> Result<bool> {
        let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
            return Err(BeneathError::Outside);
        };
        let parent = self.open_dir(parent)?;
        match unlinkat(&parent, name, UnlinkatFlags::RemoveDir) {
            Ok(()) => Ok(true),
            Err(Errno::ENOENT | Errno::ENOTEMPTY | Errno::EEXIST | Errno::ENOTDIR) => Ok(false),
            Err(errno) => Err(errno.into()),
        }
    }

    /// The directory of `target`, made beneath the root and opened to write in, and the
    /// name in it; refused when a directory stands at the name.
    fn replaceable(&self, target: &Path) -> Result<(OwnedFd, OsString)> {
        let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
            return Err(BeneathError::Outside);
        };
        let dir = self.create_dirs(parent)?;
        if let Ok(stat) = fstatat(&dir, name, AtFlags::AT_SYMLINK_NOFOLLOW)
            && SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR
        {
            return Err(io::Error::from(io::ErrorKind::IsADirectory).into());
        }
        let dir = openat(
            &dir,
            ".",
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        Ok((dir, name.to_owned()))
    }
}

/// A new `.codecrew-<random>.tmp` in `dir`, created exclusively (never through a link),
/// mode 0o666 minus the umask like any new file.
fn create_temp(dir: &impl AsFd) -> Result<(OsString, OwnedFd)> {
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    for _ in 0..TEMP_ATTEMPTS {
        let name = OsString::from(format!(".codecrew-{:016x}.tmp", random()));
        match openat(
            dir,
            name.as_os_str(),
            flags,
            Mode::from_bits_truncate(0o666),
        ) {
            Ok(fd) => return Ok((name, fd)),
            Err(Errno::EEXIST) => continue,
            Err(errno) => return Err(errno.into()),
        }
    }
    Err(BeneathError::Io(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free name for a temporary file",
    )))
}

/// 64 random bits for a temporary name (std's hasher keys come from the OS's randomness).
fn random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos()),
    );
    hasher.finish()
}

#[cfg(test)]
#[path = "beneath_tests.rs"]
mod tests;
