//! Which folders are projects: the home directory, a folder that holds it and `/` are
//! not, so they are never trusted and never a workspace without `--allow-home`.

use std::path::{Path, PathBuf};

/// The user's home directories, canonical: `$HOME`, and the password database's entry
/// when it differs ([`codecrew_policy::home::homes`], which the path classes use too).
pub fn homes() -> Vec<PathBuf> {
    codecrew_policy::home::homes().to_vec()
}

/// What a workspace is, when it is not a project: the home itself, a folder that holds
/// it, or the whole file system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotAProject {
    Home,
    Holds(PathBuf),
    Root,
}

impl NotAProject {
    /// What `workspace` (canonical) is, with `homes` the user's home directories; None
    /// for a project (anything beneath the home, or beside it).
    pub fn of(workspace: &Path, homes: &[PathBuf]) -> Option<NotAProject> {
        if homes.iter().any(|home| home == workspace) {
            return Some(NotAProject::Home);
        }
        if workspace == Path::new("/") {
            return Some(NotAProject::Root);
        }
        homes
            .iter()
            .find(|home| home.starts_with(workspace))
            .map(|home| NotAProject::Holds(home.clone()))
    }

    /// What it is, in words: "/home/u is your home directory".
    pub fn describe(&self, workspace: &Path) -> String {
        let shown = workspace.display();
        match self {
            NotAProject::Home => format!("{shown} is your home directory"),
            NotAProject::Holds(home) => {
                format!("{shown} holds your home directory ({})", home.display())
            }
            NotAProject::Root => "/ is the whole file system".to_owned(),
        }
    }
}

/// How to load the configuration a checkout ships for the CLIs, for `doctor`'s hint:
/// trust `folder`, unless it is the home directory or a folder above it.
pub fn checkout_hint(folder: &Path) -> String {
    let canonical = folder
        .canonicalize()
        .unwrap_or_else(|_| folder.to_path_buf());
    if NotAProject::of(&canonical, &homes()).is_some() {
        return "your home directory is not a project to trust: run codecrew in the \
                project (cd into it, or --workdir DIR) and trust that folder"
            .to_owned();
    }
    "if you trust this checkout, add its directory to trusted_projects in your user config"
        .to_owned()
}

/// How to load the configuration a checkout ships for the CLIs, for the note that says it
/// was left out: trust `folder`, unless it is the home directory or a folder above it,
/// which is never a project to trust.
pub fn trust_advice(folder: &Path) -> String {
    let canonical = folder
        .canonicalize()
        .unwrap_or_else(|_| folder.to_path_buf());
    if NotAProject::of(&canonical, &homes()).is_some() {
        return format!(
            "{} is not a project to trust: run codecrew in the project (cd into it, or \
             --workdir DIR) and add that folder to trusted_projects in your user config",
            folder.display()
        );
    }
    format!(
        "to load it, add {:?} to trusted_projects in your user config",
        folder.display().to_string()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_home_a_folder_above_it_and_the_root_are_not_projects() {
        let homes = [PathBuf::from("/home/u"), PathBuf::from("/var/lib/u")];
        let of = |workspace: &str| NotAProject::of(Path::new(workspace), &homes);
        assert_eq!(of("/home/u"), Some(NotAProject::Home));
        assert_eq!(of("/var/lib/u"), Some(NotAProject::Home));
        assert_eq!(
            of("/home"),
            Some(NotAProject::Holds(PathBuf::from("/home/u")))
        );
        assert_eq!(
            of("/var"),
            Some(NotAProject::Holds(PathBuf::from("/var/lib/u")))
        );
        assert_eq!(of("/"), Some(NotAProject::Root));
        assert_eq!(
            NotAProject::of(Path::new("/"), &[]),
            Some(NotAProject::Root)
        );
        for project in ["/home/u/src/app", "/home/v", "/srv/app", "/home/user"] {
            assert_eq!(of(project), None, "{project}");
        }
    }

    #[test]
    fn the_trust_note_never_advises_trusting_the_home() {
        let root = trust_advice(Path::new("/"));
        assert!(root.contains("is not a project to trust"), "{root}");
        assert!(!root.contains("add \"/\""), "{root}");
        let project = trust_advice(Path::new("/srv/app"));
        assert!(
            project.contains("add \"/srv/app\" to trusted_projects"),
            "{project}"
        );
    }
}
