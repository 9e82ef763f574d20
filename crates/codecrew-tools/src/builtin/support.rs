//! What the file tools share: reading input fields, turning I/O errors into
//! [`ToolError`]s, running blocking work off the async runtime, the directory walker's
//! settings and atomic writes.

use std::fs::{self, Metadata};
use std::io::{self, ErrorKind};
use std::path::Path;

use crate::beneath::{Beneath, BeneathError};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use codecrew_policy::home::HomeInWorkspace;
use ignore::WalkBuilder;
use serde_json::Value;

use crate::{ErrorCode, ToolError};

/// A required string field. The schema already demands it; this only avoids a panic
/// when a tool is called without the executor.
pub fn required_str<'a>(input: &'a Value, field: &str) -> Result<&'a str, ToolError> {
    input.get(field).and_then(Value::as_str).ok_or_else(|| {
        ToolError::new(
            ErrorCode::InvalidInput,
            format!("`{field}` must be a string"),
        )
    })
}

pub fn optional_str<'a>(input: &'a Value, field: &str) -> Option<&'a str> {
    input.get(field).and_then(Value::as_str)
}

pub fn optional_u64(input: &Value, field: &str) -> Option<u64> {
    input.get(field).and_then(Value::as_u64)
}

pub fn optional_bool(input: &Value, field: &str) -> bool {
    input.get(field).and_then(Value::as_bool).unwrap_or(false)
}

/// An I/O error about `display` (a workspace-relative path), with a stable code.
pub fn io_error(display: &str, error: &io::Error) -> ToolError {
    match error.kind() {
        ErrorKind::NotFound => not_found(display),
        ErrorKind::IsADirectory => is_a_directory(display),
        ErrorKind::NotADirectory => ToolError::new(
            ErrorCode::NotADirectory,
            format!("a component of {display:?} is not a directory"),
        ),
        _ => ToolError::new(ErrorCode::Io, format!("{display}: {error}")),
    }
}

pub fn not_found(display: &str) -> ToolError {
    ToolError::new(ErrorCode::NotFound, format!("{display:?} does not exist")).with_suggestion(
        "paths are relative to the workspace root; find files with codecrew:list_directory or codecrew:glob",
    )
}

pub fn is_a_directory(display: &str) -> ToolError {
    ToolError::new(
        ErrorCode::IsADirectory,
        format!("{display:?} is a directory"),
    )
    .with_suggestion("list it with codecrew:list_directory")
}

/// Refuses directories and special files (FIFOs, devices, sockets).
fn only_regular(meta: &Metadata, display: &str) -> Result<(), ToolError> {
    if meta.is_dir() {
        return Err(is_a_directory(display));
    }
    if !meta.is_file() {
        return Err(ToolError::new(
            ErrorCode::NotAFile,
            format!("{display:?} is not a regular file (a FIFO, socket or device)"),
        ));
    }
    Ok(())
}

/// The metadata of an existing regular file; directories and special files (FIFOs,
/// devices, sockets) are refused before anything opens them, since opening a FIFO blocks.
pub fn regular_file(path: &Path, display: &str) -> Result<Metadata, ToolError> {
    let meta = fs::metadata(path).map_err(|error| io_error(display, &error))?;
    only_regular(&meta, display)?;
    Ok(meta)
}

/// Checks that `path` is an existing directory.
pub fn directory(path: &Path, display: &str) -> Result<(), ToolError> {
    let meta = fs::metadata(path).map_err(|error| io_error(display, &error))?;
    if meta.is_dir() {
        Ok(())
    } else {
        Err(ToolError::new(
            ErrorCode::NotADirectory,
            format!("{display:?} is not a directory"),
        )
        .with_suggestion("read a file with codecrew:read_file"))
    }
}

/// A flag set when the caller stops waiting (the tool's future was dropped, e.g. on the
/// executor's timeout), so a walk on a blocking thread can stop early.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

struct CancelOnDrop(Cancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.0.store(true, Ordering::Relaxed);
    }
}

/// Runs file-system work on tokio's blocking pool so it never stalls the runtime.
pub async fn blocking<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(Cancel) -> Result<T, ToolError> + Send + 'static,
{
    let cancel = Cancel::default();
    let _guard = CancelOnDrop(cancel.clone());
    tokio::task::spawn_blocking(move || work(cancel))
        .await
        .map_err(|error| {
            ToolError::new(
                ErrorCode::Internal,
                format!("the tool's task failed: {error}"),
            )
        })?
}

/// The walker every listing and search tool uses over `dir` in the workspace `root`:
/// `.gitignore`, `.ignore` and git's excludes are respected even outside a git repository
/// (a workspace need not be one), hidden files are included, and `.git` itself is
/// skipped, as is every hidden entry of a home the workspace holds (opted in with
/// `--allow-home`): not even its name is listed, since the names under `~/.config`,
/// `~/.ssh` or `~/.mozilla` already say which accounts, keys and profiles the user has;
/// and so is codecrew's own state folder where it lies in the workspace (its records hold
/// copies of the user's files, `codecrew_policy::state_folder`).
pub fn walker(root: &Path, dir: &Path) -> WalkBuilder {
    let home = HomeInWorkspace::of(root);
    let state = codecrew_policy::state_folder::StateFolder::current();
    let mut builder = WalkBuilder::new(dir);
    builder
        .hidden(false)
        .require_git(false)
        .filter_entry(move |entry| {
            entry.file_name() != ".git"
                && home.hidden_entry(entry.path()).is_none()
                && !state
                    .as_ref()
                    .is_some_and(|state| state.holds_lexically(entry.path()))
        });
    builder
}

/// Replaces (or creates) `target` with `bytes` atomically, beneath the workspace `root`:
/// a temporary file in the already opened target directory, then a rename there, so a
/// reader never sees half a file and nothing lands outside (see [`crate::beneath`]). An
/// existing file keeps its permissions. Returns true when the file was created.
pub fn atomic_write(
    root: &Path,
    target: &Path,
    bytes: &[u8],
    display: &str,
) -> Result<bool, ToolError> {
    let beneath = Beneath::open(root).map_err(|error| beneath_error(display, error))?;
    beneath
        .write_atomic(target, bytes)
        .map_err(|error| beneath_error(display, error))
}

/// Opens the regular file at `path` for reading, beneath the workspace `root` (see
/// [`crate::beneath`]).
pub fn open_read(root: &Path, path: &Path, display: &str) -> Result<fs::File, ToolError> {
    Beneath::open(root)
        .and_then(|beneath| beneath.open_read(path))
        .map_err(|error| beneath_error(display, error))
}

/// What went wrong beneath the workspace, with a stable code.
pub fn beneath_error(display: &str, error: BeneathError) -> ToolError {
    match error {
        BeneathError::Changed => ToolError::new(
            ErrorCode::PathChanged,
            format!(
                "{display:?} changed while codecrew was using it (a directory or file was \
                 swapped for a link)"
            ),
        ),
        BeneathError::Outside => ToolError::new(
            ErrorCode::PathOutsideWorkspace,
            format!("{display:?} is outside the workspace"),
        ),
        BeneathError::NotRegular => ToolError::new(
            ErrorCode::NotAFile,
            format!("{display:?} is not a regular file; codecrew never opens special files"),
        ),
        BeneathError::HardLinked => ToolError::new(
            ErrorCode::PermissionDenied,
            format!(
                "{display:?} has other hard links, and one may be a file outside the workspace"
            ),
        ),
        BeneathError::NotADirectory => ToolError::new(
            ErrorCode::NotADirectory,
            format!("a parent of {display:?} exists and is not a directory"),
        ),
        BeneathError::Io(error) => io_error(display, &error),
    }
}

#[cfg(test)]
pub mod test_support {
    //! Workspaces and calls for the tools' tests.

    use std::path::PathBuf;

    use serde_json::Value;
    use tempfile::TempDir;

    use crate::{Mode, Tool, ToolContext, ToolError};

    /// A temporary workspace and a context rooted at its canonical path.
    pub struct Workspace {
        pub _dir: TempDir,
        pub ctx: ToolContext,
    }

    impl Workspace {
        pub fn new() -> Self {
            let dir = TempDir::new().unwrap();
            let root = dir.path().canonicalize().unwrap();
            Workspace {
                _dir: dir,
                ctx: ToolContext::new(root, Mode::Execute),
            }
        }

        pub fn root(&self) -> &PathBuf {
            &self.ctx.workspace
        }

        /// Writes a file (creating its directories) relative to the root.
        pub fn write(&self, relative: &str, content: impl AsRef<[u8]>) {
            let path = self.root().join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }

        pub fn read(&self, relative: &str) -> String {
            std::fs::read_to_string(self.root().join(relative)).unwrap()
        }

        pub async fn call(&self, tool: &dyn Tool, input: Value) -> Result<Value, ToolError> {
            tool.execute(&self.ctx, input).await
        }

        pub async fn error(&self, tool: &dyn Tool, input: Value) -> ToolError {
            self.call(tool, input).await.unwrap_err()
        }

        /// Makes a FIFO at `relative` with `mkfifo` (nix's `fs` feature is not enabled).
        pub fn fifo(&self, relative: &str) {
            let status = std::process::Command::new("mkfifo")
                .arg(self.root().join(relative))
                .status()
                .unwrap();
            assert!(status.success());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs::Permissions;
    use std::os::unix::fs::PermissionsExt;

    use super::test_support::Workspace;
    use super::*;

    #[test]
    fn atomic_write_creates_and_keeps_permissions() {
        let ws = Workspace::new();
        let target = ws.root().join("deep/dir/file.sh");
        assert!(atomic_write(ws.root(), &target, b"one", "deep/dir/file.sh").unwrap());
        assert_eq!(ws.read("deep/dir/file.sh"), "one");
        fs::set_permissions(&target, Permissions::from_mode(0o751)).unwrap();
        assert!(!atomic_write(ws.root(), &target, b"two", "deep/dir/file.sh").unwrap());
        assert_eq!(ws.read("deep/dir/file.sh"), "two");
        let mode = fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o751);
        // No temporary files are left behind.
        let names: Vec<_> = fs::read_dir(ws.root().join("deep/dir"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["file.sh"]);
    }

    #[test]
    fn atomic_write_refuses_directories_and_fifos() {
        let ws = Workspace::new();
        ws.write("dir/x", "");
        ws.fifo("pipe");
        ws.write("file", "");
        let code = |relative: &str| {
            atomic_write(ws.root(), &ws.root().join(relative), b"", relative)
                .unwrap_err()
                .code
        };
        assert_eq!(code("dir"), ErrorCode::IsADirectory);
        assert_eq!(code("pipe"), ErrorCode::NotAFile);
        assert_eq!(code("file/below"), ErrorCode::NotADirectory);
    }

    #[tokio::test]
    async fn blocking_runs_the_work() {
        let value = blocking(|cancel| Ok(cancel.is_cancelled())).await.unwrap();
        assert!(!value);
    }
}
