//! Loading, discovery, merging and every error message. No test touches the process
//! environment: the loader gets its inputs explicitly.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use tempfile::TempDir;

use super::layer::FileKind;
use super::load::parse;
use super::starter::STARTER;
use super::*;

/// A temporary repository: `root/.git`, a workspace below it, and a user file beside it.
struct Repo {
    dir: TempDir,
}

impl Repo {
    fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("repo")).unwrap();
        std::fs::create_dir(dir.path().join("repo/.git")).unwrap();
        Repo { dir }
    }

    /// The repository root (canonical, as the loader reports paths).
    fn root(&self) -> PathBuf {
        self.dir.path().join("repo").canonicalize().unwrap()
    }

    fn user_file(&self) -> PathBuf {
        self.dir.path().join("user.toml")
    }

    fn write_user(&self, text: &str) -> PathBuf {
        let path = self.user_file();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Writes `codecrew.toml` in the repository root.
    fn write_project(&self, text: &str) -> PathBuf {
        let path = self.root().join(PROJECT_FILE);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn load(&self) -> Result<LoadedConfig, ConfigError> {
        let user = self.user_file();
        load_from(&self.root(), Some(&user))
    }

    /// The error of loading `text` as the user file.
    fn user_error(&self, text: &str) -> (PathBuf, String) {
        let path = self.write_user(text);
        let error = self.load().unwrap_err();
        (path, error.to_string())
    }

    /// The error of loading `text` as the project file.
    fn project_error(&self, text: &str) -> (PathBuf, String) {
        let path = self.write_project(text);
        let error = self.load().unwrap_err();
        (path, error.to_string())
    }
}

/// Asserts that `message` reports `path:line:column` and contains every fragment.
#[track_caller]
fn assert_reported(message: &str, path: &Path, line: usize, column: usize, fragments: &[&str]) {
    let location = format!("{}:{line}:{column}: ", path.display());
    assert!(
        message.contains(&location),
        "expected {location:?} in:\n{message}"
    );
    assert!(message.contains("hint: "), "no hint in:\n{message}");
    for fragment in fragments {
        assert!(
            message.contains(fragment),
            "expected {fragment:?} in:\n{message}"
        );
    }
}

mod docs;
mod errors;
mod files;
mod merging;
mod names;
mod robustness;
mod starter;
mod tools;
