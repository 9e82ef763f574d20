//! Resolving the paths a tool call names, confined to the workspace root.
//!
//! Every file tool goes through [`resolve`] before it touches the file system. The model
//! writes paths relative to the workspace root (absolute paths are accepted when they lie
//! inside it); whatever it writes, the result is either a path inside the root or an error
//! the model can act on.
//!
//! How confinement works: the longest prefix of the path that exists is canonicalised
//! (so every symlink in it is resolved by the OS), the rest, which does not exist yet, is
//! normalised lexically (it cannot contain symlinks), and the result must start with the
//! root. Writes add two rules: the parent must resolve inside the root, and the final
//! component must not be a symlink (writing through it would change its target, which may
//! lie anywhere).
//!
//! Sensitive and protected files are the permission layer's business
//! ([`crate`]): it asks before such a path is used. What is checked here, when the tool
//! runs, is that nothing changed since: a path that only *resolves* to a sensitive (read)
//! or protected (write) file through a link is refused — the permission layer judged the
//! name, and a link swapped in since must not smuggle another file past it — and so are
//! special files (FIFOs, devices, sockets). A path in codecrew's own state folder is
//! refused here outright, named or reached ([`crate::state_folder`]), so that every door
//! that resolves a path (the file tools, the policy, the shell analysis, a command's
//! `cwd`) refuses it alike. The last gap, between this check and the use,
//! is closed where the tools use the path: they open the canonical path this returns
//! beneath the workspace with `openat2`, refusing any link on the way
//! (`codecrew_tools::beneath`).

use std::path::{Component, Path, PathBuf};

use crate::error::{ErrorCode, ToolError};
use crate::home::HomeInWorkspace;
use crate::paths;
use crate::state_folder::StateFolder;

/// What a tool is about to do with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

const OUTSIDE_SUGGESTION: &str =
    "paths are relative to the workspace root; use a path like \"src/main.rs\" inside it";

/// Resolves `requested` against the canonical workspace `root`.
///
/// The result lies inside the root (or is the root), with every existing symlink
/// resolved. It need not exist: tools report a missing file themselves.
pub fn resolve(root: &Path, requested: &str, access: Access) -> Result<PathBuf, ToolError> {
    if requested.is_empty() {
        return Err(ToolError::new(ErrorCode::InvalidPath, "the path is empty")
            .with_suggestion("give a path relative to the workspace root, e.g. \".\""));
    }
    if requested.contains('\0') {
        return Err(ToolError::new(
            ErrorCode::InvalidPath,
            format!("the path {requested:?} contains a NUL byte"),
        ));
    }
    let joined = root.join(requested);
    let resolved = match access {
        Access::Read => confine(root, &joined, requested, access)?,
        Access::Write => {
            // `Path::file_name` is None for a path ending in `..` or for `/`; neither names
            // a file that could be written.
            let (Some(parent), Some(name)) = (joined.parent(), joined.file_name()) else {
                return Err(ToolError::new(
                    ErrorCode::InvalidPath,
                    format!("{requested:?} does not name a file"),
                ));
            };
            let target = confine(root, parent, requested, access)?.join(name);
            refuse_symlink(&target, requested)?;
            target
        }
    };
    check_policy(root, requested, &resolved, access)?;
    Ok(resolved)
}

/// Refuses what must not be used whatever the permission layer said: a path in
/// codecrew's own state folder ([`crate::state_folder`]), a path whose link leads to a
/// sensitive file (read) or a protected one (write) although its name is not one, and
/// special files.
fn check_policy(
    root: &Path,
    requested: &str,
    resolved: &Path,
    access: Access,
) -> Result<(), ToolError> {
    if let Some(folder) = StateFolder::current() {
        outside_state_folder(&folder, root, requested, resolved)?;
    }
    let named = lexical(root, requested);
    let real = resolved.strip_prefix(root).unwrap_or(resolved);
    let home = HomeInWorkspace::of(root);
    let smuggled = match access {
        Access::Read => {
            paths::sensitive(real, &home).is_some() && paths::sensitive(&named, &home).is_none()
        }
        Access::Write => {
            paths::protected(real, &home).is_some() && paths::protected(&named, &home).is_none()
        }
    };
    if smuggled {
        return Err(ToolError::new(
            ErrorCode::PermissionDenied,
            format!(
                "{requested:?} leads through a link to {}, which needs approval by its own name",
                display(root, resolved)
            ),
        )
        .with_suggestion("use the file's real path, so the user can be asked about it"));
    }
    if let Ok(meta) = std::fs::metadata(resolved)
        && let Some(kind) = paths::special(&meta)
    {
        return Err(ToolError::new(
            ErrorCode::NotAFile,
            format!("{requested:?} is {kind}; codecrew never opens special files"),
        ));
    }
    Ok(())
}

/// Refuses `requested` (resolved to `resolved`) when it names or reaches a path in
/// codecrew's own state folder: its records, keys and copies, never, whatever the mode
/// or a flag says.
fn outside_state_folder(
    folder: &StateFolder,
    root: &Path,
    requested: &str,
    resolved: &Path,
) -> Result<(), ToolError> {
    // `resolved` is the path with its links resolved: both readings are known here, so
    // neither asks the disk again.
    if folder.holds_lexically(&normalise(root, requested)) || folder.holds_lexically(resolved) {
        return Err(ToolError::new(
            ErrorCode::PermissionDenied,
            folder.refusal(&format!("{requested:?}")),
        )
        .with_suggestion(crate::state_folder::SUGGESTION));
    }
    Ok(())
}

/// `requested` joined to the root and normalised without touching the disk: how the path
/// reads, before any symlink is followed (`..` pops a component, `.` is dropped).
pub fn normalise(root: &Path, requested: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for component in root.join(requested).components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir => out.push("/"),
            Component::Normal(name) => out.push(name),
            Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// `requested` relative to the root, normalised without touching the disk.
fn lexical(root: &Path, requested: &str) -> PathBuf {
    let out = normalise(root, requested);
    out.strip_prefix(root).map(Path::to_path_buf).unwrap_or(out)
}

/// Canonicalises the existing part of `path`, normalises the rest and checks the result
/// lies inside `root`.
fn confine(
    root: &Path,
    path: &Path,
    requested: &str,
    access: Access,
) -> Result<PathBuf, ToolError> {
    let (existing, tail, dangling) = split_existing(path);
    if dangling && access == Access::Write {
        // A link whose target does not exist cannot be checked; creating directories
        // through it would create them wherever it points.
        return Err(ToolError::new(
            ErrorCode::Symlink,
            format!("{requested:?} passes through a symbolic link whose target does not exist"),
        ));
    }
    let mut resolved = existing;
    for component in tail {
        match component {
            // The tail does not exist, so it holds no symlinks and `..` is lexical.
            Component::ParentDir => {
                resolved.pop();
            }
            Component::Normal(name) => resolved.push(name),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    if resolved.starts_with(root) {
        Ok(resolved)
    } else {
        Err(outside(requested))
    }
}

/// Splits `path` into the canonical form of its longest existing prefix and the
/// components after it; the flag says whether one of those components exists after all
/// (a dangling symlink, the only thing that exists but does not canonicalise).
fn split_existing(path: &Path) -> (PathBuf, Vec<Component<'_>>, bool) {
    let mut tail = Vec::new();
    let mut current = path;
    let mut dangling = false;
    loop {
        if let Ok(canonical) = current.canonicalize() {
            tail.reverse();
            return (canonical, tail, dangling);
        }
        dangling |= current.symlink_metadata().is_ok();
        match (current.parent(), current.components().next_back()) {
            (Some(parent), Some(last)) => {
                tail.push(last);
                current = parent;
            }
            // Nothing of the path exists, not even `/` (cannot happen on a working
            // system); keep it as given and let the prefix check decide.
            _ => return (path.to_path_buf(), Vec::new(), dangling),
        }
    }
}

fn refuse_symlink(target: &Path, requested: &str) -> Result<(), ToolError> {
    match target.symlink_metadata() {
        Ok(meta) if meta.file_type().is_symlink() => Err(ToolError::new(
            ErrorCode::Symlink,
            format!("{requested:?} is a symbolic link; codecrew does not write through links"),
        )
        .with_suggestion("write to the file the link points to instead")),
        _ => Ok(()),
    }
}

fn outside(requested: &str) -> ToolError {
    ToolError::new(
        ErrorCode::PathOutsideWorkspace,
        format!("{requested:?} is outside the workspace"),
    )
    .with_suggestion(OUTSIDE_SUGGESTION)
}

/// `path` as the model should see it: relative to the root, `.` for the root itself.
pub fn display(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
        Ok(relative) => relative.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;
    use tempfile::TempDir;

    fn workspace() -> (TempDir, PathBuf) {
        let dir = TempDir::new().unwrap();
        let root = dir.path().canonicalize().unwrap();
        (dir, root)
    }

    fn code(result: Result<PathBuf, ToolError>) -> ErrorCode {
        result.unwrap_err().code
    }

    #[test]
    fn relative_paths_join_the_root() {
        let (_dir, root) = workspace();
        fs::write(root.join("a.txt"), "x").unwrap();
        assert_eq!(
            resolve(&root, "a.txt", Access::Read).unwrap(),
            root.join("a.txt")
        );
        assert_eq!(resolve(&root, ".", Access::Read).unwrap(), root);
        assert_eq!(
            resolve(&root, "new/dir/file.rs", Access::Read).unwrap(),
            root.join("new/dir/file.rs")
        );
    }

    #[test]
    fn absolute_paths_inside_are_accepted() {
        let (_dir, root) = workspace();
        let inside = root.join("b.txt");
        let requested = inside.to_str().unwrap();
        assert_eq!(resolve(&root, requested, Access::Write).unwrap(), inside);
    }

    /// A state folder inside the workspace (`XDG_STATE_HOME=./.state`): nothing in it is
    /// used, however it is named; the folder that holds it is.
    #[test]
    fn codecrews_state_folder_is_refused_however_it_is_named() {
        let (_dir, root) = workspace();
        let folder = StateFolder::at(&root.join(".state/codecrew"));
        fs::create_dir_all(root.join(".state/codecrew/held/1-1")).unwrap();
        symlink(root.join(".state/codecrew"), root.join("docs")).unwrap();
        for requested in [
            ".state/codecrew/held/1-1/0.json",
            ".state/codecrew",
            "src/../.state/codecrew/journal-key",
            ".STATE/codecrew/runs.db",
            "docs/held/1-1/0.json",
        ] {
            let resolved = confine(&root, &root.join(requested), requested, Access::Read)
                .unwrap_or_else(|_| root.join(requested));
            let error = outside_state_folder(&folder, &root, requested, &resolved).unwrap_err();
            assert_eq!(error.code, ErrorCode::PermissionDenied, "{requested}");
            assert!(error.message.contains("state folder"), "{requested}");
        }
        for requested in [".state", "src/main.rs", "codecrew/held"] {
            assert!(
                outside_state_folder(&folder, &root, requested, &root.join(requested)).is_ok(),
                "{requested}"
            );
        }
    }

    #[test]
    fn empty_and_nul_paths_are_invalid() {
        let (_dir, root) = workspace();
        assert_eq!(
            code(resolve(&root, "", Access::Read)),
            ErrorCode::InvalidPath
        );
        assert_eq!(
            code(resolve(&root, "a\0b", Access::Read)),
            ErrorCode::InvalidPath
        );
        assert_eq!(
            code(resolve(&root, "a\0b", Access::Write)),
            ErrorCode::InvalidPath
        );
    }

    #[test]
    fn dot_dot_escapes_are_refused() {
        let (_dir, root) = workspace();
        let error = resolve(&root, "../etc/passwd", Access::Read).unwrap_err();
        assert_eq!(error.code, ErrorCode::PathOutsideWorkspace);
        assert!(error.message.contains("../etc/passwd"));
        assert!(
            error
                .suggestion
                .unwrap()
                .contains("relative to the workspace root")
        );
        // Through a directory that does not exist, still lexically outside.
        assert_eq!(
            code(resolve(&root, "nope/../../x", Access::Write)),
            ErrorCode::PathOutsideWorkspace
        );
        // `..` that stays inside is fine.
        fs::create_dir(root.join("sub")).unwrap();
        assert_eq!(
            resolve(&root, "sub/../c.txt", Access::Read).unwrap(),
            root.join("c.txt")
        );
    }

    #[test]
    fn absolute_paths_outside_are_refused() {
        let (_dir, root) = workspace();
        assert_eq!(
            code(resolve(&root, "/etc/passwd", Access::Read)),
            ErrorCode::PathOutsideWorkspace
        );
        assert_eq!(
            code(resolve(&root, "/tmp/elsewhere.txt", Access::Write)),
            ErrorCode::PathOutsideWorkspace
        );
    }

    #[test]
    fn symlinks_pointing_outside_are_refused() {
        let (_dir, root) = workspace();
        let (_other, outside_dir) = workspace();
        fs::write(outside_dir.join("secret"), "s").unwrap();
        symlink(outside_dir.join("secret"), root.join("link")).unwrap();
        symlink(&outside_dir, root.join("dirlink")).unwrap();
        assert_eq!(
            code(resolve(&root, "link", Access::Read)),
            ErrorCode::PathOutsideWorkspace
        );
        assert_eq!(
            code(resolve(&root, "dirlink/secret", Access::Read)),
            ErrorCode::PathOutsideWorkspace
        );
        assert_eq!(
            code(resolve(&root, "dirlink/new.txt", Access::Write)),
            ErrorCode::PathOutsideWorkspace
        );
    }

    #[test]
    fn writes_through_a_final_symlink_are_refused() {
        let (_dir, root) = workspace();
        fs::write(root.join("real.txt"), "r").unwrap();
        symlink(root.join("real.txt"), root.join("inner")).unwrap();
        // Reading through an inside link is fine and yields the target.
        assert_eq!(
            resolve(&root, "inner", Access::Read).unwrap(),
            root.join("real.txt")
        );
        assert_eq!(
            code(resolve(&root, "inner", Access::Write)),
            ErrorCode::Symlink
        );
        // A dangling link is refused too: writing would create its target.
        symlink(root.join("missing"), root.join("dangling")).unwrap();
        assert_eq!(
            code(resolve(&root, "dangling", Access::Write)),
            ErrorCode::Symlink
        );
        symlink("/nonexistent-dir", root.join("dirlink")).unwrap();
        assert_eq!(
            code(resolve(&root, "dirlink/file", Access::Write)),
            ErrorCode::Symlink
        );
    }

    #[test]
    fn links_that_smuggle_sensitive_or_protected_files_are_refused() {
        let (_dir, root) = workspace();
        fs::write(root.join(".env"), "K=1").unwrap();
        fs::create_dir(root.join(".git")).unwrap();
        symlink(root.join(".env"), root.join("notes")).unwrap();
        symlink(root.join(".git"), root.join("meta")).unwrap();
        assert_eq!(
            code(resolve(&root, "notes", Access::Read)),
            ErrorCode::PermissionDenied
        );
        assert_eq!(
            code(resolve(&root, "meta/config", Access::Write)),
            ErrorCode::PermissionDenied
        );
        // Named directly, the permission layer has asked; the guard lets it through.
        assert!(resolve(&root, ".env", Access::Read).is_ok());
        assert!(resolve(&root, ".git/config", Access::Write).is_ok());
    }

    #[test]
    fn special_files_are_refused() {
        let (_dir, root) = workspace();
        let status = std::process::Command::new("mkfifo")
            .arg(root.join("pipe"))
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(
            code(resolve(&root, "pipe", Access::Read)),
            ErrorCode::NotAFile
        );
    }

    #[test]
    fn writes_need_a_file_name() {
        let (_dir, root) = workspace();
        assert_eq!(
            code(resolve(&root, "..", Access::Write)),
            ErrorCode::InvalidPath
        );
    }

    #[test]
    fn display_is_relative_to_the_root() {
        let (_dir, root) = workspace();
        assert_eq!(display(&root, &root), ".");
        assert_eq!(display(&root, &root.join("src/lib.rs")), "src/lib.rs");
        assert_eq!(display(&root, Path::new("/elsewhere")), "/elsewhere");
    }
}
