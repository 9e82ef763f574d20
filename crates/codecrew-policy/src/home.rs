//! A workspace that holds the user's home directory (the home itself, `/home`, `/`).
//!
//! codecrew refuses to start its tools and agents there unless the user opts in (the
//! binary's `--allow-home`). Opted in, every hidden entry directly under the home
//! (`~/.config`, `~/.ssh`, `~/.bash_history`, `~/.mozilla`, ...) is kept out as the
//! sensitive files are: that is where programs keep their sign-ins, keys and histories,
//! under names no list can foresee.
//!
//! It is a fact of the process, set once before any tool or agent starts, rather than an
//! argument: every door asks [`crate::paths::sensitive`] (the policy, the file tools'
//! walks, the read-only domain's plan and so each CLI's wall, opencode's patterns through
//! [`crate::paths::sensitive_globs`]), and none can forget to pass it.

use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

/// The home directories a workspace holds, as absolute paths and as paths relative to
/// the workspace (the frame of the relative paths the classes are asked about).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct HomeInWorkspace {
    absolute: Vec<PathBuf>,
    /// Empty when the workspace is the home.
    relative: Vec<PathBuf>,
}

impl HomeInWorkspace {
    /// Those of `homes` that `workspace` holds (both canonical).
    pub fn new(workspace: &Path, homes: &[PathBuf]) -> Self {
        let mut held = HomeInWorkspace::default();
        for home in homes {
            if let Ok(relative) = home.strip_prefix(workspace)
                && !held.absolute.contains(home)
            {
                held.absolute.push(home.clone());
                held.relative.push(relative.to_path_buf());
            }
        }
        held
    }

    /// Whether the workspace holds no home directory.
    pub fn is_empty(&self) -> bool {
        self.absolute.is_empty()
    }

    /// The hidden entry of a home that `path` (absolute, or relative to the workspace)
    /// is or lies in, as the path names it. A `..` is taken lexically (`proj/../.ssh` is
    /// in `.ssh`): unlike the classes' names, a home's hidden entry is found by its place.
    pub fn hidden_entry(&self, path: &Path) -> Option<PathBuf> {
        let mut normal = PathBuf::new();
        for component in path.components() {
            match component {
                Component::CurDir => {}
                Component::ParentDir => {
                    normal.pop();
                }
                Component::Normal(_) | Component::RootDir | Component::Prefix(_) => {
                    normal.push(component);
                }
            }
        }
        let path = normal;
        let homes = if path.is_absolute() {
            &self.absolute
        } else {
            &self.relative
        };
        homes.iter().find_map(|home| {
            let rest = path.strip_prefix(home).ok()?;
            match rest.components().next()? {
                Component::Normal(name) if name.as_encoded_bytes().starts_with(b".") => {
                    Some(home.join(name))
                }
                Component::Normal(_)
                | Component::RootDir
                | Component::Prefix(_)
                | Component::CurDir
                | Component::ParentDir => None,
            }
        })
    }

    /// The hidden entries as glob patterns over a workspace-relative path, as
    /// [`crate::paths::sensitive_globs`] (`*` matches any characters, `/` included).
    pub fn globs(&self) -> Vec<String> {
        self.relative
            .iter()
            .map(|home| match home.to_str() {
                Some("") => ".*".to_owned(),
                Some(home) => format!("{home}/.*"),
                // A home whose path is not UTF-8 cannot be written as a pattern: every
                // hidden name anywhere is then left out, which is wider, never narrower.
                None => "*/.*".to_owned(),
            })
            .collect()
    }
}

static HELD: OnceLock<HomeInWorkspace> = OnceLock::new();

/// Keeps the hidden entries of the homes that `workspace` holds out of every door, for
/// the rest of the process. Only the first call counts (one workspace per process); false
/// when an earlier call had set it otherwise.
pub fn withhold_hidden_entries(workspace: &Path, homes: &[PathBuf]) -> bool {
    let wanted = HomeInWorkspace::new(workspace, homes);
    if wanted.is_empty() {
        return HELD.get().is_none_or(|held| *held == wanted);
    }
    *HELD.get_or_init(|| wanted.clone()) == wanted
}

/// The homes whose hidden entries this process keeps out, if any.
pub fn held() -> Option<&'static HomeInWorkspace> {
    HELD.get().filter(|held| !held.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn homes() -> Vec<PathBuf> {
        vec![PathBuf::from("/home/u")]
    }

    #[test]
    fn a_workspace_that_is_the_home_holds_its_hidden_entries() {
        let held = HomeInWorkspace::new(Path::new("/home/u"), &homes());
        for path in [
            ".config/gh/hosts.yml",
            "./.bash_history",
            ".local",
            "/home/u/.mozilla/firefox/x/logins.json",
            // Named through a folder and back, as an unnormalised caller would.
            "proj/../.ssh/id_ed25519",
            "/home/u/src/../.netrc",
        ] {
            assert!(held.hidden_entry(Path::new(path)).is_some(), "{path}");
        }
        for path in [
            "src/.env.example",
            "projects/app/.git/HEAD",
            "notes.txt",
            "/home/u/src/main.rs",
            "/etc/.pwd.lock",
            "",
        ] {
            assert!(held.hidden_entry(Path::new(path)).is_none(), "{path}");
        }
        assert_eq!(held.globs(), [".*"]);
    }

    #[test]
    fn a_workspace_above_the_home_holds_them_under_its_path() {
        let held = HomeInWorkspace::new(Path::new("/"), &homes());
        assert!(
            held.hidden_entry(Path::new("home/u/.ssh/id_ed25519"))
                .is_some()
        );
        assert!(held.hidden_entry(Path::new(".config/x")).is_none());
        assert!(held.hidden_entry(Path::new("home/v/.config/x")).is_none());
        assert_eq!(held.globs(), ["home/u/.*"]);
        let above = HomeInWorkspace::new(Path::new("/home"), &homes());
        assert!(above.hidden_entry(Path::new("u/.netrc")).is_some());
    }

    #[test]
    fn a_project_in_the_home_holds_none() {
        let held = HomeInWorkspace::new(Path::new("/home/u/src/app"), &homes());
        assert!(held.is_empty());
        assert!(held.hidden_entry(Path::new(".env.example")).is_none());
        assert!(held.globs().is_empty());
    }
}
