//! What of the workspace the read-only sandbox lets a command read: all of it but the
//! sensitive files (`.env`, keys, `.ssh/`, ... as [`crate::paths::sensitive`] names them).
//!
//! The shell analysis asks before a command *names* a sensitive file; this keeps the
//! kernel to the same rule when the analysis is wrong or a program reads what no argument
//! names (a Makefile an allow rule lets run, a pager git was talked into running): the
//! file cannot be opened. Landlock grants, it cannot refuse beneath a grant, so a
//! directory that holds a sensitive file is granted only for listing, and each of its
//! other entries gets a grant of its own; a directory that holds none is granted whole.
//! The repository's `.git` is granted whole: git needs it (what it holds of a committed
//! secret, the analysis checks: `crate::tracked`). So are dependency and build
//! directories (`node_modules`, `target`, ...), without a look, and the whole workspace
//! when it has more than [`MAX_ENTRIES`] entries to look at.

use std::path::{Path, PathBuf};

use crate::paths;

/// Dependency and build directories, granted whole without a look: they can hold tens of
/// thousands of files, none of them the user's secrets, and walking them would cost
/// every command that runs without asking.
const NOT_LOOKED_INTO: &[&str] = &[
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".gradle",
    ".next",
    ".cache",
];

/// The most entries looked at before giving up: past it, the whole workspace is granted
/// (the analysis alone then keeps sensitive files out).
const MAX_ENTRIES: usize = 100_000;

/// The grants that make up the readable workspace.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Reads {
    /// Directories granted whole: everything beneath may be read.
    pub trees: Vec<PathBuf>,
    /// Directories that hold a sensitive file: listed only.
    pub listed: Vec<PathBuf>,
    /// Files granted one by one, beside a sensitive one.
    pub files: Vec<PathBuf>,
    /// The sensitive files left out (workspace-relative), for the record.
    pub withheld: Vec<PathBuf>,
}

/// The grants for `workspace` (canonical).
pub fn plan(workspace: &Path) -> Reads {
    let mut reads = Reads::default();
    let mut seen = 0;
    if !visit(workspace, workspace, &mut reads, &mut seen) {
        reads.trees.push(workspace.to_path_buf());
    }
    if seen > MAX_ENTRIES {
        return Reads {
            trees: vec![workspace.to_path_buf()],
            ..Reads::default()
        };
    }
    reads
}

/// Plans `dir`'s grants; true when it holds something sensitive (its grants are then in
/// `reads`), false when it may be granted whole (nothing added).
fn visit(root: &Path, dir: &Path, reads: &mut Reads, seen: &mut usize) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut clean_trees = Vec::new();
    let mut clean_files = Vec::new();
    let mut dirty = false;
    let mut planned = Reads::default();
    for entry in entries.flatten() {
        *seen += 1;
        if *seen > MAX_ENTRIES {
            return false;
        }
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let relative = path.strip_prefix(root).unwrap_or(&path);
        let name = entry.file_name();
        if name == ".git" || (kind.is_dir() && NOT_LOOKED_INTO.iter().any(|skip| name == *skip)) {
            clean_trees.push(path);
            continue;
        }
        if paths::sensitive(relative).is_some() {
            dirty = true;
            planned.withheld.push(relative.to_path_buf());
            continue;
        }
        if kind.is_dir() {
            if visit(root, &path, &mut planned, seen) {
                dirty = true;
            } else {
                clean_trees.push(path);
            }
        } else if !kind.is_symlink() {
            // A link needs no grant: the kernel checks the file it leads to.
            clean_files.push(path);
        }
    }
    if !dirty {
        return false;
    }
    reads.listed.push(dir.to_path_buf());
    reads.trees.extend(clean_trees);
    reads.files.extend(clean_files);
    reads.trees.extend(planned.trees);
    reads.listed.extend(planned.listed);
    reads.files.extend(planned.files);
    reads.withheld.extend(planned.withheld);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_workspace_is_one_tree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/main.rs"), "").unwrap();
        assert_eq!(
            plan(&root),
            Reads {
                trees: vec![root.clone()],
                ..Reads::default()
            }
        );
    }

    #[test]
    fn sensitive_files_are_left_out_and_their_neighbours_granted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for file in [
            "README",
            ".env",
            "src/main.rs",
            "config/app.toml",
            "config/prod.pem",
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        std::fs::create_dir_all(root.join(".git/objects")).unwrap();
        std::fs::create_dir_all(root.join(".ssh")).unwrap();
        std::fs::write(root.join(".ssh/id_rsa"), "").unwrap();
        let mut reads = plan(&root);
        reads.trees.sort();
        reads.listed.sort();
        reads.files.sort();
        reads.withheld.sort();
        assert_eq!(reads.listed, [root.clone(), root.join("config")]);
        assert_eq!(reads.trees, [root.join(".git"), root.join("src")]);
        assert_eq!(
            reads.files,
            [root.join("README"), root.join("config/app.toml")]
        );
        assert_eq!(
            reads.withheld,
            [
                PathBuf::from(".env"),
                PathBuf::from(".ssh"),
                PathBuf::from("config/prod.pem")
            ]
        );
    }
}
