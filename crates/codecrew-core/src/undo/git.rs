//! git's plumbing over codecrew's own object store: snapshots of a workspace as trees,
//! what differs between two trees, a file's bytes in one.
//!
//! git runs with its own repository (`GIT_DIR`, under codecrew's state folder, never the
//! workspace's `.git`), its own index (`GIT_INDEX_FILE`, kept between snapshots so that
//! git's stat cache makes the second and later ones cheap) and the workspace as its work
//! tree. Nothing of the workspace, the user's or the system's git configuration can make
//! it run a program or change the bytes it stores: the environment is cleared, no system
//! or global config is read, hooks and fsmonitor are off, and the store's own
//! `info/attributes`, which outranks every `.gitattributes` of the workspace, turns off
//! every conversion (end of lines, filters, `ident`, encodings), so that a file put back
//! is byte for byte what was there. The workspace's `.gitignore` files are read: what
//! they ignore is not in a snapshot.

use std::ffi::OsString;
use std::io::{self, Read};
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::UndoError;

/// What the store's `info/attributes` says of every path: no conversion of any kind.
const NO_CONVERSIONS: &str = "* -text -eol -crlf -filter -ident -working-tree-encoding\n";

/// Folders no snapshot holds, wherever they lie, ignored or not.
pub(crate) const REGENERATED: [&str; 3] = ["node_modules", ".venv", "__pycache__"];

/// The most a snapshot's or a diff's output may be (a listing of paths): 256 MiB.
const MAX_OUTPUT: u64 = 256 << 20;

/// One workspace's private repository and index.
#[derive(Debug, Clone)]
pub(crate) struct PrivateGit {
    /// The repository (bare): the objects of every snapshot.
    git_dir: PathBuf,
    /// The index that caches the work tree's stat data between snapshots.
    index: PathBuf,
    /// The workspace.
    work_tree: PathBuf,
    /// An empty folder given as HOME, so that no `~/.gitconfig` or `~/.config/git` is read.
    home: PathBuf,
    /// Paths beneath the workspace left out of every snapshot (codecrew's own state
    /// folder, should it lie there), relative to it.
    excluded: Vec<PathBuf>,
}

/// One path that differs between two trees: each side's mode and object, None where the
/// path is absent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    pub path: PathBuf,
    pub old: Option<Entry>,
    pub new: Option<Entry>,
}

/// A tree entry: git's mode (`100644`, `100755`, `120000`, `160000`) and object id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub mode: u32,
    pub id: String,
}

impl PrivateGit {
    /// The repository in `dir` (made private), for `workspace`.
    pub fn new(dir: &Path, workspace: &Path, excluded: Vec<PathBuf>) -> PrivateGit {
        PrivateGit {
            git_dir: dir.join("git"),
            index: dir.join("index"),
            work_tree: workspace.to_owned(),
            home: dir.join("home"),
            excluded,
        }
    }

    /// Whether git can be run at all.
    pub fn installed() -> bool {
        Command::new("git")
            .arg("--version")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    }

    /// Makes the repository, once.
    pub fn init(&self) -> Result<(), UndoError> {
        let io = |source| UndoError::Io {
            path: self.git_dir.clone(),
            source,
        };
        private_dir(&self.home).map_err(io)?;
        if !self.git_dir.join("HEAD").is_file() {
            let mut init = self.bare_command();
            init.args(["init", "--quiet", "--bare", "--template="])
                .arg(&self.git_dir);
            run(init, None)?;
        }
        let info = self.git_dir.join("info");
        private_dir(&info).map_err(io)?;
        let attributes = info.join("attributes");
        if std::fs::read_to_string(&attributes).ok().as_deref() != Some(NO_CONVERSIONS) {
            std::fs::write(&attributes, NO_CONVERSIONS).map_err(io)?;
        }
        Ok(())
    }

    /// The workspace as it is now, as a tree in the store: its object id.
    pub fn snapshot(&self) -> Result<String, UndoError> {
        let mut add = self.command();
        // Unreadable files are left as they were in the index rather than failing the
        // snapshot: the rest is still recorded.
        add.args(["add", "--all", "--ignore-errors", "--", "."]);
        // Folders of installed dependencies, made again by their tools, and large
        // enough to make the first snapshot of a folder that ignores nothing copy
        // hundreds of megabytes: left out, as a .gitignore would.
        for folder in REGENERATED {
            add.arg(format!(":(exclude,glob)**/{folder}/**"));
        }
        for excluded in &self.excluded {
            let mut spec = OsString::from(":(exclude,literal,top)");
            spec.push(excluded.as_os_str());
            add.arg(spec);
        }
        // A stale lock of a snapshot killed half-way: the folder's lock, held by the
        // caller, says nobody else uses this index now.
        let _ = std::fs::remove_file(self.index.with_extension("lock"));
        let (status, _, stderr) = output(add, None)?;
        if !status.success() {
            if !skipped_some(&stderr) {
                return Err(failed(status, &stderr));
            }
            tracing::debug!(
                "undo's snapshot left out: {}",
                String::from_utf8_lossy(&stderr).trim()
            );
        }
        let mut write = self.command();
        write.arg("write-tree");
        let tree = String::from_utf8_lossy(&run(write, None)?)
            .trim()
            .to_owned();
        object_id(&tree)
            .then_some(tree.clone())
            .ok_or_else(|| UndoError::Git(format!("write-tree gave {tree:?}, not a tree id")))
    }

    /// Every file that differs between the trees `old` and `new`.
    pub fn changes(&self, old: &str, new: &str) -> Result<Vec<Change>, UndoError> {
        let mut diff = self.command();
        diff.args(["diff-tree", "-r", "-z", "--no-renames", "--no-commit-id"])
            .arg(checked_id(old)?)
            .arg(checked_id(new)?);
        parse_diff(&run(diff, None)?)
    }

    /// A reader of the store's blobs, one git process for all of them.
    pub fn blobs(&self) -> Result<Blobs, UndoError> {
        let mut cat = self.command();
        cat.args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cat.spawn().map_err(spawn_error)?;
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(UndoError::Git("git cat-file has no pipes".into()));
        };
        Ok(Blobs {
            child,
            input,
            output: io::BufReader::new(output),
        })
    }

    /// Keeps the tree `id` in the store under `name` (`<run>/before`, `<run>/after`):
    /// what no ref names goes at the next [`PrivateGit::prune`].
    pub fn keep(&self, name: &str, id: &str) -> Result<(), UndoError> {
        let mut update = self.command();
        update
            .args(["update-ref", "--no-deref"])
            .arg(format!("refs/runs/{name}"))
            .arg(checked_id(id)?);
        run(update, None).map(drop)
    }

    /// Forgets the trees of the run `run` and removes every object no kept tree (and
    /// not the index) holds.
    pub fn prune(&self, runs: &[String]) -> Result<(), UndoError> {
        for run in runs {
            for side in ["before", "after"] {
                let mut delete = self.command();
                delete
                    .args(["update-ref", "--no-deref", "-d"])
                    .arg(format!("refs/runs/{run}/{side}"));
                // A run that never ended has no `after`.
                let _ = self::run(delete, None);
            }
        }
        let mut prune = self.command();
        prune.args(["prune", "--expire=now"]);
        run(prune, None).map(drop)
    }

    /// Whether the store holds the tree `id` (a record names trees of its store only).
    pub fn has_tree(&self, id: &str) -> Result<bool, UndoError> {
        let mut check = self.command();
        check.args(["cat-file", "-t"]).arg(checked_id(id)?);
        Ok(run(check, None).is_ok_and(|kind| kind.trim_ascii() == b"tree"))
    }

    /// git, with nothing of the user's, the system's or the workspace's configuration
    /// that could run a program or convert a file.
    fn bare_command(&self) -> Command {
        let mut command = Command::new("git");
        command.env_clear();
        if let Some(path) = std::env::var_os("PATH") {
            command.env("PATH", path);
        }
        command
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("LC_ALL", "C")
            .stdin(Stdio::null());
        for setting in [
            "core.hooksPath=/dev/null",
            "core.fsmonitor=false",
            "core.autocrlf=false",
            "core.safecrlf=false",
            "core.symlinks=true",
            "core.fileMode=true",
            "core.ignoreCase=false",
            "core.precomposeUnicode=false",
            "core.excludesFile=/dev/null",
            "core.attributesFile=/dev/null",
            "core.sparseCheckout=false",
            "gc.auto=0",
            "maintenance.auto=false",
            "submodule.recurse=false",
            "protocol.allow=never",
        ] {
            command.args(["-c", setting]);
        }
        command
    }

    /// [`PrivateGit::bare_command`] over this store, its index and the workspace.
    fn command(&self) -> Command {
        let mut command = self.bare_command();
        command
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_INDEX_FILE", &self.index)
            .env("GIT_WORK_TREE", &self.work_tree)
            .current_dir(&self.work_tree);
        command
    }
}

/// Runs `command`, its stdout (at most `limit`, else [`MAX_OUTPUT`]) if it succeeds.
fn run(command: Command, limit: Option<u64>) -> Result<Vec<u8>, UndoError> {
    let (status, output, stderr) = output(command, limit)?;
    if !status.success() {
        return Err(failed(status, &stderr));
    }
    Ok(output)
}

fn failed(status: std::process::ExitStatus, stderr: &[u8]) -> UndoError {
    let said = String::from_utf8_lossy(stderr);
    UndoError::Git(format!("git failed ({status}): {}", said.trim()))
}

/// Runs `command`: its exit status, its stdout (at most `limit`, else [`MAX_OUTPUT`])
/// and the start of its stderr.
fn output(
    mut command: Command,
    limit: Option<u64>,
) -> Result<(std::process::ExitStatus, Vec<u8>, Vec<u8>), UndoError> {
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().map_err(spawn_error)?;
    // stderr drained beside stdout, so that a chatty git cannot block on a full pipe.
    let stderr = child.stderr.take().map(|stderr| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = stderr.take(64 * 1024).read_to_end(&mut text);
            text
        })
    });
    let mut output = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        let limit = limit.unwrap_or(MAX_OUTPUT);
        stdout
            .take(limit)
            .read_to_end(&mut output)
            .map_err(|error| UndoError::Git(format!("cannot read git's output: {error}")))?;
    }
    let status = child
        .wait()
        .map_err(|error| UndoError::Git(format!("git did not end: {error}")))?;
    let stderr = stderr
        .and_then(|thread| thread.join().ok())
        .unwrap_or_default();
    Ok((status, output, stderr))
}

/// Whether a `git add --ignore-errors` that failed added all it could: each line it
/// said names a file it skipped (an unreadable file, a nested repository with no
/// commit), the summary perhaps last. Anything else (the index locked, the store
/// broken) means the index may not be the workspace's, and the snapshot must not be
/// taken from it.
fn skipped_some(stderr: &[u8]) -> bool {
    let said = String::from_utf8_lossy(stderr);
    let mut lines = said
        .lines()
        .filter(|line| !line.trim().is_empty())
        .peekable();
    let mut skipped = false;
    while let Some(line) = lines.next() {
        let last = lines.peek().is_none();
        match line {
            "fatal: adding files failed" if last => return skipped,
            _ if line.starts_with("error: ") && !line.contains("index.lock") => skipped = true,
            _ if line.starts_with("warning: ") => {}
            _ => return false,
        }
    }
    skipped
}

fn spawn_error(error: io::Error) -> UndoError {
    if error.kind() == io::ErrorKind::NotFound {
        UndoError::GitMissing
    } else {
        UndoError::Git(format!("cannot start git: {error}"))
    }
}

/// `git cat-file --batch`, asked one blob at a time (it answers each at once).
pub(crate) struct Blobs {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: io::BufReader<std::process::ChildStdout>,
}

impl Blobs {
    /// The bytes of the blob `id`.
    pub fn read(&mut self, id: &str) -> Result<Vec<u8>, UndoError> {
        use std::io::{BufRead, Write};
        let broken = |error: io::Error| UndoError::Git(format!("git cat-file: {error}"));
        writeln!(self.input, "{}", checked_id(id)?).map_err(broken)?;
        self.input.flush().map_err(broken)?;
        let mut header = String::new();
        self.output.read_line(&mut header).map_err(broken)?;
        // `<id> blob <size>`, or `<id> missing`.
        let size = match header.trim_end().split(' ').collect::<Vec<_>>().as_slice() {
            [named, "blob", size] if *named == id => size.parse::<u64>().ok(),
            _ => None,
        }
        .ok_or_else(|| UndoError::BadRecord(format!("the store has no file {id}: {header:?}")))?;
        let mut bytes = Vec::new();
        (&mut self.output)
            .take(size)
            .read_to_end(&mut bytes)
            .map_err(broken)?;
        let mut newline = [0u8; 1];
        self.output.read_exact(&mut newline).map_err(broken)?;
        if u64::try_from(bytes.len()).ok() != Some(size) || newline != *b"\n" {
            return Err(UndoError::Git("git cat-file's answer was cut short".into()));
        }
        Ok(bytes)
    }
}

impl Drop for Blobs {
    fn drop(&mut self) {
        // Its stdin closed, it ends; a git that does not is not waited for forever.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether `id` is a git object id (SHA-1 or SHA-256, lower-case hex).
pub(crate) fn object_id(id: &str) -> bool {
    matches!(id.len(), 40 | 64)
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn checked_id(id: &str) -> Result<&str, UndoError> {
    if object_id(id) {
        Ok(id)
    } else {
        Err(UndoError::BadRecord(format!(
            "{id:?} is not a git object id"
        )))
    }
}

/// `git diff-tree -r -z` output: `:<old mode> <new mode> <old id> <new id> <status>\0<path>\0`.
pub(crate) fn parse_diff(output: &[u8]) -> Result<Vec<Change>, UndoError> {
    let bad = |what: &str| UndoError::Git(format!("cannot read git diff-tree's output: {what}"));
    let mut fields = output.split(|&byte| byte == 0);
    let mut changes = Vec::new();
    while let Some(header) = fields.next() {
        if header.is_empty() {
            continue;
        }
        let header = std::str::from_utf8(header).map_err(|_| bad("a header not in ASCII"))?;
        let parts: Vec<&str> = header.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, old_id, new_id, _status] = parts.as_slice() else {
            return Err(bad(header));
        };
        let path = fields
            .next()
            .ok_or_else(|| bad("a header without its path"))?;
        let entry = |mode: &str, id: &str| -> Result<Option<Entry>, UndoError> {
            let mode = u32::from_str_radix(mode, 8).map_err(|_| bad(header))?;
            if !object_id(id) {
                return Err(bad(header));
            }
            Ok((mode != 0).then(|| Entry {
                mode,
                id: id.to_owned(),
            }))
        };
        changes.push(Change {
            path: PathBuf::from(OsString::from_vec(path.to_vec())),
            old: entry(old_mode, old_id)?,
            new: entry(new_mode, new_id)?,
        });
    }
    Ok(changes)
}

/// Makes `dir` (and its parents) private to the user: 0700.
pub(crate) fn private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_skipped_one_by_one_let_a_failed_add_be_a_snapshot() {
        let skipped =
            b"error: 'sub/' does not have a commit checked out\nfatal: adding files failed\n";
        assert!(skipped_some(skipped));
        let unreadable = b"warning: x\nerror: open(\"a\"): Permission denied\nerror: unable to index file 'a'\nfatal: adding files failed\n";
        assert!(skipped_some(unreadable));
        for broken in [
            &b"fatal: Unable to create '/s/index.lock': File exists.\n"[..],
            b"error: unable to write new index file\nfatal: something else\n",
            b"fatal: adding files failed\n",
            b"",
        ] {
            assert!(!skipped_some(broken), "{}", String::from_utf8_lossy(broken));
        }
    }
}
