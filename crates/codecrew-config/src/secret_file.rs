//! A secret of the user's kept in a file of their state folder (`mcp --http`'s token, the
//! keys that seal threads and the journal's records): read only when no one else could
//! have written or read it, made once from the OS's random source, where only the user
//! can read it.

use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The most of a secret file that is read.
const MAX_LEN: u64 = 1024;

/// Why a secret file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SecretFileError {
    /// The file is there, but someone else may know or have chosen what it holds.
    #[error("{}: {reason}", path.display())]
    Unsafe { path: PathBuf, reason: String },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

/// The secret stored at `path`, trimmed; `None` when there is no file. A file that is a
/// link, is not a regular file, is not the user's, or that others may read or write is
/// refused: its secret could be known to, or chosen by, someone else.
pub fn read(path: &Path) -> Result<Option<String>, SecretFileError> {
    let io_error = |source| SecretFileError::Io {
        path: path.to_owned(),
        source,
    };
    let unsafe_file = |reason: &str| SecretFileError::Unsafe {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
    {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) if error.raw_os_error() == Some(nix::libc::ELOOP) => {
            return Err(unsafe_file("it is a symbolic link"));
        }
        Err(error) => return Err(io_error(error)),
    };
    private(&file, path)?;
    let mut text = String::new();
    file.take(MAX_LEN)
        .read_to_string(&mut text)
        .map_err(io_error)?;
    Ok(Some(text.trim().to_owned()))
}

/// Fails unless `file` (opened from `path`) is a regular file of the user's that no one
/// else may read or write.
fn private(file: &fs::File, path: &Path) -> Result<(), SecretFileError> {
    let unsafe_file = |reason: &str| SecretFileError::Unsafe {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    let metadata = file.metadata().map_err(|source| SecretFileError::Io {
        path: path.to_owned(),
        source,
    })?;
    if !metadata.is_file() {
        return Err(unsafe_file("it is not a regular file"));
    }
    if metadata.uid() != nix::unistd::getuid().as_raw() {
        return Err(unsafe_file("it belongs to another user"));
    }
    if metadata.permissions().mode() & 0o077 != 0 {
        return Err(unsafe_file(
            "others may read or write it (its mode must be 0600)",
        ));
    }
    Ok(())
}

/// The private file at `path`, made (0600, its folder 0700) when there is none: for what
/// the user's codecrew keeps that is not a secret of its own but is theirs alone (the
/// run store). Refused like [`read`] refuses a secret: a link, not a regular file, not
/// the user's, or readable or writable by others.
pub fn open_private(path: &Path) -> Result<fs::File, SecretFileError> {
    let io_error = |source| SecretFileError::Io {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io_error)?;
    }
    let file = match OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
    {
        Ok(file) => file,
        Err(error) if error.raw_os_error() == Some(nix::libc::ELOOP) => {
            return Err(SecretFileError::Unsafe {
                path: path.to_owned(),
                reason: "it is a symbolic link".to_owned(),
            });
        }
        Err(error) => return Err(io_error(error)),
    };
    private(&file, path)?;
    Ok(file)
}

/// A new secret of `bytes` random bytes as hex, written to `path` with mode 0600 (its
/// folder made 0700 when codecrew creates it). Fails with `AlreadyExists` when the file
/// appeared meanwhile: the caller reads that one instead.
pub fn create(path: &Path, bytes: usize) -> Result<String, SecretFileError> {
    let io_error = |source| SecretFileError::Io {
        path: path.to_owned(),
        source,
    };
    let mut random = vec![0u8; bytes];
    getrandom::fill(&mut random).map_err(|error| io_error(io::Error::other(error.to_string())))?;
    let text: String = random.iter().map(|byte| format!("{byte:02x}")).collect();
    if let Some(dir) = path.parent() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io_error)?;
    }
    // `create_new` with O_NOFOLLOW: never through a planted link, never over a file that
    // appeared since it was looked for.
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
        .map_err(io_error)?;
    file.write_all(format!("{text}\n").as_bytes())
        .map_err(io_error)?;
    Ok(text)
}

/// The secret at `path`, made when there is none yet (by this process or, racing it,
/// another codecrew: then theirs is read).
pub fn read_or_create(path: &Path, bytes: usize) -> Result<String, SecretFileError> {
    if let Some(text) = read(path)? {
        return Ok(text);
    }
    match create(path, bytes) {
        Err(SecretFileError::Io { source, .. })
            if source.kind() == io::ErrorKind::AlreadyExists =>
        {
            read(path)?.ok_or_else(|| SecretFileError::Io {
                path: path.to_owned(),
                source: io::Error::from(io::ErrorKind::NotFound),
            })
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_private_once_then_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/codecrew/key");
        let made = read_or_create(&path, 32).unwrap();
        assert_eq!(made.len(), 64);
        assert_eq!(read_or_create(&path, 32).unwrap(), made);
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let folder = fs::metadata(path.parent().unwrap()).unwrap();
        assert_eq!(folder.permissions().mode() & 0o777, 0o700);
    }

    #[test]
    fn a_file_others_could_know_or_a_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open");
        fs::write(&open, "secret\n").unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o644)).unwrap();
        let error = read(&open).unwrap_err().to_string();
        assert!(error.contains("0600"), "{error}");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&open, &link).unwrap();
        let error = read_or_create(&link, 32).unwrap_err().to_string();
        assert!(error.contains("symbolic link"), "{error}");
    }
}
