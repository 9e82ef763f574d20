//! codecrew's own state folder (`$XDG_STATE_HOME/codecrew`, else
//! `~/.local/state/codecrew`): the journal of what it holds for the CLIs, with copies of
//! what it holds (`~/.claude.json`'s MCP servers and their tokens among them), the keys
//! that seal those records and the user's threads, the run store, `mcp --http`'s token,
//! the chat's history.
//!
//! What lies there is codecrew's alone, wherever the folder lies: a per-project shell or
//! container may set `XDG_STATE_HOME` inside the project, where every tool would
//! otherwise reach it. So no file tool reads or writes beneath it ([`crate::path`]), no
//! walk of `grep`, `glob` or `list_directory` names it, a command that names a path in it
//! is denied, and neither the read-only domain nor a CLI's wall grants it
//! ([`crate::workspace_reads`]).
//!
//! It is found by its place, not by its name: the folder as the environment names it,
//! and where that leads on the disk (links on the way followed), both asked afresh at
//! each use, since a folder made later may lie through a link made since. Components
//! are compared without regard to ASCII case, as the path classes are, since some file
//! systems fold it.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

/// Where codecrew keeps its state: `$XDG_STATE_HOME/codecrew` when that variable is an
/// absolute path, else `~/.local/state/codecrew`; None without either.
pub fn location() -> Option<PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute())
    };
    let base = absolute("XDG_STATE_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".local/state")))?;
    Some(base.join("codecrew"))
}

/// codecrew's state folder, as named and as it lies on the disk now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateFolder {
    /// As the environment names it, normalised (`..` taken lexically).
    named: PathBuf,
    /// Where that leads: its longest existing part resolved, the rest as named.
    real: PathBuf,
}

thread_local! {
    /// The state folder found once for a check that asks many times ([`pinned`]).
    static PINNED: std::cell::RefCell<Option<Option<StateFolder>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `check` with the state folder found once at its start: a check that asks about
/// every word of a command line (the shell analysis) would otherwise resolve the folder's
/// path, a few `readlink`s, for each. The disk is asked afresh at the next check.
pub fn pinned<R>(check: impl FnOnce() -> R) -> R {
    struct Unpin(bool);
    impl Drop for Unpin {
        fn drop(&mut self) {
            if self.0 {
                PINNED.with(|pinned| *pinned.borrow_mut() = None);
            }
        }
    }
    let outermost = PINNED.with(|pinned| {
        let mut pinned = pinned.borrow_mut();
        let outermost = pinned.is_none();
        if outermost {
            *pinned = Some(StateFolder::found());
        }
        outermost
    });
    let _unpin = Unpin(outermost);
    check()
}

impl StateFolder {
    /// The state folder of this process's environment ([`location`]), as it lies on the
    /// disk now (or as [`pinned`] found it, inside a pinned check).
    pub fn current() -> Option<StateFolder> {
        PINNED
            .with(|pinned| pinned.borrow().clone())
            .unwrap_or_else(StateFolder::found)
    }

    fn found() -> Option<StateFolder> {
        location().map(|named| StateFolder::at(&named))
    }

    /// The state folder at `named` (absolute).
    pub fn at(named: &Path) -> StateFolder {
        let named = normalise(named);
        StateFolder {
            real: resolved(&named),
            named,
        }
    }

    /// Where the folder lies on the disk (its longest existing part resolved).
    pub fn path(&self) -> &Path {
        &self.real
    }

    /// Whether the absolute `path` is the state folder or lies beneath it, as written
    /// (`..` taken lexically) or where it leads.
    pub fn holds(&self, path: &Path) -> bool {
        let lexical = normalise(path);
        self.holds_lexically(&lexical) || self.holds_lexically(&resolved(&lexical))
    }

    /// [`StateFolder::holds`] for a path that holds no link (an entry a walk met beneath
    /// a canonical root): no look at the disk.
    pub fn holds_lexically(&self, path: &Path) -> bool {
        beneath(path, &self.named).is_some() || beneath(path, &self.real).is_some()
    }

    /// The state folder relative to the canonical `workspace`, when it lies inside it
    /// (empty when it is the workspace itself).
    pub fn within(&self, workspace: &Path) -> Option<PathBuf> {
        beneath(&self.real, workspace).or_else(|| beneath(&self.named, workspace))
    }

    /// Why a tool may not use `shown`, a path in the state folder.
    pub fn refusal(&self, shown: &str) -> String {
        format!(
            "{shown} is in codecrew's own state folder ({}), which holds its records, keys, \
             run store and the copies of the files it holds for the agent CLIs; no tool or \
             command reads or writes it",
            self.named.display()
        )
    }
}

/// What to do instead, for the model and the user, when a tool is refused the folder.
pub const SUGGESTION: &str = "leave codecrew's state folder alone; if it should not lie \
                              inside the project, set XDG_STATE_HOME to a folder outside it";

/// `path` with `.` dropped and `..` taken lexically.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) | Component::Normal(_) => {
                out.push(component);
            }
        }
    }
    out
}

/// `path` (normalised) with its longest existing part resolved by the disk, the rest
/// appended; as given when nothing of it exists.
fn resolved(path: &Path) -> PathBuf {
    let mut tail: Vec<&OsStr> = Vec::new();
    let mut current = path;
    loop {
        if let Ok(real) = current.canonicalize() {
            let mut out = real;
            out.extend(tail.iter().rev());
            return out;
        }
        match (current.parent(), current.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name);
                current = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// What of `path` lies beneath `folder` (empty for the folder itself), comparing
/// components without regard to ASCII case; None when it does not lie there.
fn beneath(path: &Path, folder: &Path) -> Option<PathBuf> {
    let mut parts = path.components();
    for wanted in folder.components() {
        let part = parts.next()?;
        if !part
            .as_os_str()
            .as_encoded_bytes()
            .eq_ignore_ascii_case(wanted.as_os_str().as_encoded_bytes())
        {
            return None;
        }
    }
    Some(parts.as_path().to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_beneath_the_folder_is_held_in_any_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let folder = StateFolder::at(&root.join("ws/.state/codecrew"));
        for path in [
            "ws/.state/codecrew",
            "ws/.state/codecrew/held/1-1/0.json",
            "ws/src/../.state/codecrew/thread-key",
            "ws/.STATE/CodeCrew/runs.db",
        ] {
            assert!(folder.holds(&root.join(path)), "{path}");
        }
        for path in ["ws/.state", "ws/.state/codecrew-other/x", "ws/src/codecrew"] {
            assert!(!folder.holds(&root.join(path)), "{path}");
        }
        assert_eq!(
            folder.within(&root.join("ws")),
            Some(PathBuf::from(".state/codecrew"))
        );
        assert_eq!(folder.within(&root.join("other")), None);
    }

    /// The folder named through a link, or a link in the workspace that leads into it:
    /// held by where it leads.
    #[test]
    fn a_link_on_the_way_is_followed_both_ways() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("ws/.state/codecrew/held")).unwrap();
        std::os::unix::fs::symlink(root.join("ws/.state"), root.join("state-link")).unwrap();
        let folder = StateFolder::at(&root.join("state-link/codecrew"));
        assert_eq!(folder.path(), root.join("ws/.state/codecrew"));
        assert!(folder.holds(&root.join("ws/.state/codecrew/held/1-1/0.json")));
        assert_eq!(
            folder.within(&root.join("ws")),
            Some(PathBuf::from(".state/codecrew"))
        );
        std::os::unix::fs::symlink(root.join("ws/.state/codecrew"), root.join("ws/docs")).unwrap();
        assert!(folder.holds(&root.join("ws/docs/held")));
        assert!(!folder.holds_lexically(&root.join("ws/docs/held")));
    }
}
