//! `.codecrew/` in a workspace: what codecrew keeps there (threads and their locks, the
//! audit log) stays out of version control and private to the user.
//!
//! A thread quotes every file the model read, secrets the user approved included, and
//! the audit log lists every call: a `git add -A` must not commit them, and another user
//! of the machine must not read them. So the folder carries its own `.gitignore` of `*`
//! (as Python's caches and virtual environments do), which keeps it out of git without
//! the user's `.gitignore`, and the folders are made `0700`, files `0600`.

use std::fs::{DirBuilder, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The folder's name in a workspace.
pub const NAME: &str = ".codecrew";

/// What the folder's `.gitignore` says: everything in it, itself included.
const IGNORE_ALL: &str =
    "# Written by codecrew: what it keeps here stays out of version control.\n*\n";

/// `<workspace>/.codecrew`.
pub fn in_workspace(workspace: &Path) -> PathBuf {
    workspace.join(NAME)
}

/// Makes `dir` (`.codecrew` or a folder beneath it) and the folders on the way, private,
/// with the `.gitignore` that keeps `.codecrew` out of git. A `.codecrew` an earlier
/// version made readable by others is made private.
pub fn create(dir: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let Some(root) = dir
        .ancestors()
        .find(|path| path.file_name() == Some(NAME.as_ref()))
    else {
        return Ok(());
    };
    let meta = std::fs::symlink_metadata(root)?;
    if meta.is_dir() && meta.mode() & 0o077 != 0 && meta.uid() == nix_uid() {
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o700))?;
    }
    ignore_all(root)
}

/// Opens a file beneath `.codecrew` for appending, made `0600` (also when an earlier
/// version made it readable by others).
pub fn open_append(path: &Path) -> io::Result<std::fs::File> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    make_private(&file)?;
    Ok(file)
}

/// Opens (or makes) a file beneath `.codecrew` to read and write, made `0600`.
pub fn open_rw(path: &Path) -> io::Result<std::fs::File> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)?;
    make_private(&file)?;
    Ok(file)
}

fn make_private(file: &std::fs::File) -> io::Result<()> {
    let meta = file.metadata()?;
    if meta.mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

/// Writes `.codecrew/.gitignore` when it is missing; one the user wrote stays.
fn ignore_all(root: &Path) -> io::Result<()> {
    let created = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(root.join(".gitignore"));
    match created {
        Ok(mut file) => file.write_all(IGNORE_ALL.as_bytes()),
        Err(error) if error.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(error),
    }
}

fn nix_uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_is_private_and_ignored_by_git() {
        let workspace = tempfile::tempdir().unwrap();
        let threads = in_workspace(workspace.path()).join("threads");
        create(&threads).unwrap();
        for dir in [in_workspace(workspace.path()), threads.clone()] {
            let mode = std::fs::metadata(&dir).unwrap().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", dir.display());
        }
        let ignore = in_workspace(workspace.path()).join(".gitignore");
        assert_eq!(std::fs::read_to_string(&ignore).unwrap(), IGNORE_ALL);
        let file = open_append(&threads.join("log")).unwrap();
        assert_eq!(file.metadata().unwrap().mode() & 0o777, 0o600);
        // The user's own .gitignore there stays.
        std::fs::write(&ignore, "threads/\n").unwrap();
        create(&threads).unwrap();
        assert_eq!(std::fs::read_to_string(&ignore).unwrap(), "threads/\n");
    }

    #[test]
    fn what_an_earlier_version_left_open_is_made_private() {
        let workspace = tempfile::tempdir().unwrap();
        let root = in_workspace(workspace.path());
        std::fs::create_dir(&root).unwrap();
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
        let audit = root.join("audit.jsonl");
        std::fs::write(&audit, "{}\n").unwrap();
        std::fs::set_permissions(&audit, std::fs::Permissions::from_mode(0o644)).unwrap();
        create(&root).unwrap();
        open_append(&audit).unwrap();
        assert_eq!(std::fs::metadata(&root).unwrap().mode() & 0o777, 0o700);
        assert_eq!(std::fs::metadata(&audit).unwrap().mode() & 0o777, 0o600);
    }
}
