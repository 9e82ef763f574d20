//! A workspace that holds the user's home directory (the home itself, `/home`, `/`).
//!
//! codecrew refuses to start its tools and agents there unless the user opts in (the
//! binary's `--allow-home`). Opted in, every hidden entry directly under the home
//! (`~/.config`, `~/.ssh`, `~/.bash_history`, `~/.mozilla`, ...) is kept out as the
//! sensitive files are: that is where programs keep their sign-ins, keys and histories,
//! under names no list can foresee.
//!
//! Which entries those are depends on the workspace (one process serves several: an
//! editor's sessions over `codecrew acp`), so it is never a fact of the process. It is
//! [`HomeInWorkspace::of`] the workspace a path is read in, and every class function
//! takes it as an argument ([`crate::paths::sensitive`], [`crate::paths::protected`],
//! their globs for opencode): a door that has no workspace at hand does not compile.
//! Only the user's home directories themselves ([`homes`]) are the process's.

use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

/// The user's home directories, canonical: `$HOME`, and the password database's entry
/// when it differs (a `HOME` changed for one shell does not move the real one). Read
/// once: they are the user's, the same for every workspace the process serves.
pub fn homes() -> &'static [PathBuf] {
    static HOMES: OnceLock<Vec<PathBuf>> = OnceLock::new();
    HOMES.get_or_init(|| {
        let from_env = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|home| home.is_absolute());
        let from_passwd = nix::unistd::User::from_uid(nix::unistd::getuid())
            .ok()
            .flatten()
            .map(|user| user.dir)
            .filter(|home| home.is_absolute());
        let mut homes: Vec<PathBuf> = Vec::new();
        for home in from_env.into_iter().chain(from_passwd) {
            if let Ok(home) = home.canonicalize()
                && !homes.contains(&home)
            {
                homes.push(home);
            }
        }
        homes
    })
}

/// The home directories a workspace holds, as absolute paths and as paths relative to
/// the workspace (the frame of the relative paths the classes are asked about).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HomeInWorkspace {
    absolute: Vec<PathBuf>,
    /// Empty when the workspace is the home.
    relative: Vec<PathBuf>,
}

impl HomeInWorkspace {
    /// The user's homes ([`homes`]) that `workspace` holds: what a path read in that
    /// workspace is classed with. A workspace not given canonical is made so (a path
    /// that cannot be is taken as given).
    pub fn of(workspace: &Path) -> Self {
        match workspace.canonicalize() {
            Ok(canonical) => HomeInWorkspace::new(&canonical, homes()),
            Err(_) => HomeInWorkspace::new(workspace, homes()),
        }
    }

    /// No home: the classes' names alone, for what is not read in any workspace (the
    /// fingerprint of the class tables) and for tests.
    pub fn none() -> Self {
        HomeInWorkspace {
            absolute: Vec::new(),
            relative: Vec::new(),
        }
    }

    /// Those of `homes` that `workspace` holds (both canonical).
    pub fn new(workspace: &Path, homes: &[PathBuf]) -> Self {
        let mut held = HomeInWorkspace::none();
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
