//! Finding the files: the project file up to the repository root, the user file.

use pretty_assertions::assert_eq;

use super::*;

#[test]
fn the_project_file_is_found_walking_up_to_the_repository_root() {
    let repo = Repo::new();
    let deep = repo.root().join("a/b/c");
    std::fs::create_dir_all(&deep).unwrap();
    assert_eq!(find_project_file(&deep), None);

    let at_root = repo.write_project("");
    assert_eq!(find_project_file(&deep), Some(at_root.clone()));
    assert_eq!(find_project_file(&repo.root()), Some(at_root.clone()));

    let nearer = repo.root().join("a/codecrew.toml");
    std::fs::write(&nearer, "").unwrap();
    assert_eq!(find_project_file(&deep), Some(nearer));
    assert_eq!(find_project_file(&repo.root()), Some(at_root));
}

#[test]
fn the_search_stops_at_the_repository_root() {
    let repo = Repo::new();
    // A file above the repository is not this project's.
    std::fs::write(repo.dir.path().join(PROJECT_FILE), "").unwrap();
    let deep = repo.root().join("src");
    std::fs::create_dir_all(&deep).unwrap();
    assert_eq!(find_project_file(&deep), None);
    assert_eq!(find_project_file(&repo.root()), None);
}

#[test]
fn outside_a_repository_only_the_workspace_itself_is_searched() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    std::fs::create_dir(&workspace).unwrap();
    std::fs::write(dir.path().join(PROJECT_FILE), "").unwrap();
    // Only valid if no ancestor of the temp dir is a repository; skip otherwise.
    if dir.path().ancestors().any(|d| d.join(".git").exists()) {
        return;
    }
    assert_eq!(find_project_file(&workspace), None);
    let own = workspace.join(PROJECT_FILE);
    std::fs::write(&own, "").unwrap();
    assert_eq!(
        find_project_file(&workspace),
        Some(own.canonicalize().unwrap())
    );
}

#[test]
fn a_git_file_marks_a_repository_root_too() {
    // Worktrees and submodules have a `.git` file, not a directory.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("wt");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join(".git"), "gitdir: /elsewhere\n").unwrap();
    std::fs::write(dir.path().join(PROJECT_FILE), "").unwrap();
    assert_eq!(find_project_file(&root.join("src")), None);
    std::fs::write(root.join(PROJECT_FILE), "").unwrap();
    assert_eq!(
        find_project_file(&root.join("src")),
        Some(root.canonicalize().unwrap().join(PROJECT_FILE))
    );
}

fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> + use<> {
    let vars: Vec<(String, OsString)> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
        .collect();
    move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

#[test]
fn the_user_file_comes_from_codecrew_config_xdg_or_home() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.toml");
    std::fs::write(&file, "").unwrap();
    let file_str = file.to_str().unwrap();

    let explicit = env_of(&[(CONFIG_ENV, file_str), ("HOME", "/home/me")]);
    assert_eq!(user_config_path_with(explicit).unwrap(), Some(file.clone()));

    let disabled = env_of(&[(CONFIG_ENV, ""), ("HOME", "/home/me")]);
    assert_eq!(user_config_path_with(disabled).unwrap(), None);

    let missing = dir.path().join("nope.toml");
    let env = env_of(&[(CONFIG_ENV, missing.to_str().unwrap())]);
    let error = user_config_path_with(env).unwrap_err();
    assert!(matches!(error, ConfigError::MissingUserFile { .. }));
    let message = error.to_string();
    assert!(
        message.contains("nope.toml") && message.contains("hint:"),
        "{message}"
    );

    let xdg = env_of(&[("XDG_CONFIG_HOME", "/xdg"), ("HOME", "/home/me")]);
    assert_eq!(
        user_config_path_with(xdg).unwrap(),
        Some(PathBuf::from("/xdg/codecrew/config.toml"))
    );
    // A relative XDG_CONFIG_HOME is invalid by the spec and ignored.
    let relative = env_of(&[("XDG_CONFIG_HOME", "xdg"), ("HOME", "/home/me")]);
    assert_eq!(
        user_config_path_with(relative).unwrap(),
        Some(PathBuf::from("/home/me/.config/codecrew/config.toml"))
    );
    assert_eq!(user_config_path_with(env_of(&[])).unwrap(), None);
}

#[test]
fn a_missing_user_file_is_no_user_file() {
    let repo = Repo::new();
    let loaded = repo.load().unwrap();
    assert_eq!(loaded.user_file, None);
}
