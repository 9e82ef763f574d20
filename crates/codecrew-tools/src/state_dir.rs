//! `.codecrew/` in a workspace: what codecrew keeps there (threads and their locks, the
//! audit log) stays out of version control and private to the user.
//!
//! A thread quotes every file the model read, secrets the user approved included, and
//! the audit log lists every call: a `git add -A` must not commit them, and another user
//! of the machine must not read them. So the folder carries its own `.gitignore` of `*`
//! (as Python's caches and virtual environments do), which keeps it out of git without
//! the user's `.gitignore`, and the folders are made `0700`, files `0600`.
//!
//! A cloned repository can ship `.codecrew/` too: nothing in it is followed. A folder
//! that is a link (`.codecrew -> docs`), or not the user's, is refused; files are opened
//! without following a final link (`threads/x.lock -> ~/.bashrc`); a `.gitignore` that
//! does not ignore everything gets the line that does.

use std::fs::{DirBuilder, OpenOptions};
use std::io::{self, ErrorKind, Read, Write};
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

/// Makes `dir` (`.codecrew` or a folder beneath it) and the folders on the way from
/// `.codecrew`, private, with the `.gitignore` that keeps `.codecrew` out of git. A
/// folder on the way that is a link or not the user's is refused; one an earlier version
/// made readable by others is made private.
pub fn create(dir: &Path) -> io::Result<()> {
    let Some(root) = dir
        .ancestors()
        .find(|path| path.file_name() == Some(NAME.as_ref()))
    else {
        return DirBuilder::new().recursive(true).mode(0o700).create(dir);
    };
    if let Some(workspace) = root.parent() {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(workspace)?;
    }
    let below = dir.strip_prefix(root).unwrap_or(Path::new(""));
    let mut path = root.to_path_buf();
    make_private_dir(&path)?;
    for part in below.components() {
        path.push(part);
        make_private_dir(&path)?;
    }
    ignore_all(root)
}

/// Makes the folder `path` (its parent checked already), or checks the one there: a
/// real folder of the user's, made `0700`.
fn make_private_dir(path: &Path) -> io::Result<()> {
    match DirBuilder::new().mode(0o700).create(path) {
        Ok(()) => {}
        Err(error) if error.kind() == ErrorKind::AlreadyExists => {}
        Err(error) => return Err(error),
    }
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.is_dir() || meta.uid() != nix::unistd::getuid().as_raw() {
        return Err(io::Error::other(format!(
            "{} is {}: codecrew keeps its threads and audit log there and follows nothing a \
             checkout put in its place; remove it",
            path.display(),
            if meta.file_type().is_symlink() {
                "a link"
            } else if !meta.is_dir() {
                "not a folder"
            } else {
                "another user's"
            }
        )));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Opens a file beneath `.codecrew` for appending, made `0600` (also when an earlier
/// version made it readable by others); a link in its place is refused.
pub fn open_append(path: &Path) -> io::Result<std::fs::File> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(path)?;
    make_private(&file)?;
    Ok(file)
}

/// Reads a regular file beneath `.codecrew` without following a link in its place: a
/// checkout can ship `threads/x.json -> ~/other-project/.codecrew/threads/x.json`, a
/// thread of the user's that is not this workspace's, or a FIFO that would hang the read
/// (opened without blocking, then refused).
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    let flags = nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_NONBLOCK;
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits())
        .open(path)
        .map_err(|error| {
            if error.raw_os_error() == Some(nix::libc::ELOOP) {
                io::Error::other("it is a symbolic link, which codecrew does not follow here")
            } else {
                error
            }
        })?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("it is not a regular file"));
    }
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut file, &mut bytes)?;
    Ok(bytes)
}

/// Opens (or makes) a file beneath `.codecrew` to read and write, made `0600`; a link
/// in its place is refused.
pub fn open_rw(path: &Path) -> io::Result<std::fs::File> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(path)?;
    make_private(&file)?;
    Ok(file)
}

/// A regular file of the user's, `0600`, changed through its descriptor only.
fn make_private(file: &std::fs::File) -> io::Result<()> {
    let meta = file.metadata()?;
    if !meta.is_file() || meta.uid() != nix::unistd::getuid().as_raw() {
        return Err(io::Error::other(
            "not a regular file of this user's: codecrew does not write there",
        ));
    }
    if meta.mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

/// Makes `.codecrew/.gitignore` ignore everything: written when missing; one that does
/// not (a user's, or a checkout's, whose `*` a later `!` line may take back) gets the `*`
/// line added last.
fn ignore_all(root: &Path) -> io::Result<()> {
    let path = root.join(".gitignore");
    let mut file = open_rw(&path)?;
    let mut said = String::new();
    file.read_to_string(&mut said)?;
    // Git takes the last line that matches: a `*` followed by `!threads/` or `!*` (a
    // checkout's) ignores nothing it names. Only a `*` last of all ignores everything.
    let last = said
        .lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty() && !line.starts_with('#'));
    if last == Some("*") {
        return Ok(());
    }
    let addition = if said.is_empty() || said.ends_with('\n') {
        IGNORE_ALL.to_owned()
    } else {
        format!("\n{IGNORE_ALL}")
    };
    file.write_all(addition.as_bytes())
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
        // A .gitignore that ignores less (a user's, or a checkout's empty one) keeps its
        // lines and gets the one that ignores everything.
        std::fs::write(&ignore, "threads/\n").unwrap();
        create(&threads).unwrap();
        assert_eq!(
            std::fs::read_to_string(&ignore).unwrap(),
            format!("threads/\n{IGNORE_ALL}")
        );
        create(&threads).unwrap();
        assert_eq!(
            std::fs::read_to_string(&ignore).unwrap(),
            format!("threads/\n{IGNORE_ALL}")
        );
        // A checkout's that ignores everything, then takes some or all of it back: git
        // takes the last line that matches, so the `*` goes after.
        for shipped in ["*\n!threads/\n", "*\n!*\n# done\n"] {
            std::fs::write(&ignore, shipped).unwrap();
            create(&threads).unwrap();
            assert_eq!(
                std::fs::read_to_string(&ignore).unwrap(),
                format!("{shipped}{IGNORE_ALL}")
            );
        }
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

    /// A checkout that ships `.codecrew` as links: nothing is written or changed through
    /// them.
    #[test]
    fn links_a_checkout_ships_are_never_followed() {
        let outside = tempfile::tempdir().unwrap();
        let bashrc = outside.path().join(".bashrc");
        std::fs::write(&bashrc, "echo hi\n").unwrap();
        std::fs::set_permissions(&bashrc, std::fs::Permissions::from_mode(0o644)).unwrap();

        // The folder itself a link to a tracked folder.
        let workspace = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), in_workspace(workspace.path())).unwrap();
        let error = create(&in_workspace(workspace.path()).join("threads")).unwrap_err();
        assert!(error.to_string().contains("is a link"), "{error}");
        assert!(!outside.path().join("threads").exists());
        assert!(!outside.path().join(".gitignore").exists());

        // threads/ a link.
        let workspace = tempfile::tempdir().unwrap();
        let root = in_workspace(workspace.path());
        std::fs::create_dir(&root).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("threads")).unwrap();
        assert!(create(&root.join("threads")).is_err());

        // A lock file, the audit log and the .gitignore as links to a file outside.
        let workspace = tempfile::tempdir().unwrap();
        let root = in_workspace(workspace.path());
        std::fs::create_dir_all(root.join("threads")).unwrap();
        for name in ["threads/review.lock", "audit.jsonl", ".gitignore"] {
            std::os::unix::fs::symlink(&bashrc, root.join(name)).unwrap();
        }
        assert!(open_rw(&root.join("threads/review.lock")).is_err());
        std::os::unix::fs::symlink(&bashrc, root.join("threads/review.json")).unwrap();
        let error = read(&root.join("threads/review.json")).unwrap_err();
        assert!(error.to_string().contains("symbolic link"), "{error}");
        // A FIFO in a thread's place is refused at once, not read until a writer comes.
        nix::unistd::mkfifo(
            &root.join("threads/fifo.json"),
            nix::sys::stat::Mode::S_IRWXU,
        )
        .unwrap();
        let error = read(&root.join("threads/fifo.json")).unwrap_err();
        assert!(error.to_string().contains("not a regular file"), "{error}");
        std::fs::write(root.join("threads/mine.json"), "{}").unwrap();
        assert_eq!(read(&root.join("threads/mine.json")).unwrap(), b"{}");
        assert!(open_append(&root.join("audit.jsonl")).is_err());
        assert!(create(&root.join("threads")).is_err());
        assert_eq!(std::fs::read_to_string(&bashrc).unwrap(), "echo hi\n");
        assert_eq!(std::fs::metadata(&bashrc).unwrap().mode() & 0o777, 0o644);
    }
}
