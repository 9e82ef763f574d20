use std::time::Duration;

use super::*;

/// A workspace with `files` (relative paths), canonical.
fn workspace(files: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for file in files {
        add(&root, file);
    }
    (dir, root)
}

fn add(root: &Path, file: &str) {
    let path = root.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "").unwrap();
}

fn sorted(mut reads: Reads) -> Reads {
    reads.trees.sort();
    reads.listed.sort();
    reads.files.sort();
    reads.withheld.sort();
    reads
}

/// Long enough after every change made by the test for its stamps to be trusted.
fn later() -> SystemTime {
    SystemTime::now() + Duration::from_secs(3600)
}

#[test]
fn a_clean_workspace_is_one_tree() {
    let (_dir, root) = workspace(&["src/main.rs"]);
    assert_eq!(
        plan_with_cache(&root, &Withheld::sensitive(), None),
        Reads {
            trees: vec![root.clone()],
            ..Reads::default()
        }
    );
}

#[test]
fn sensitive_files_are_left_out_and_their_neighbours_granted() {
    let (_dir, root) = workspace(&[
        "README",
        ".env",
        "src/main.rs",
        "config/app.toml",
        "config/prod.pem",
        ".ssh/id_rsa",
        "node_modules/x/.env",
    ]);
    std::fs::create_dir_all(root.join(".git/objects")).unwrap();
    let reads = sorted(plan_with_cache(&root, &Withheld::sensitive(), None));
    assert_eq!(reads.listed, [root.clone(), root.join("config")]);
    assert_eq!(
        reads.trees,
        [
            root.join(".git"),
            root.join("node_modules"),
            root.join("src")
        ]
    );
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

#[test]
fn no_size_grants_a_sensitive_file() {
    // Past the 100,000 entries an earlier plan gave up at, a secret is still left out.
    let (_dir, root) = workspace(&[".env"]);
    for dir in 0..101 {
        let dir = root.join(format!("d{dir}"));
        std::fs::create_dir(&dir).unwrap();
        for file in 0..1000 {
            std::fs::File::create(dir.join(file.to_string())).unwrap();
        }
    }
    let reads = plan_with_cache(&root, &Withheld::sensitive(), None);
    assert_eq!(reads.withheld, [PathBuf::from(".env")]);
    assert!(!reads.trees.contains(&root));
    assert_eq!(reads.trees.len(), 101);
}

#[test]
fn an_unchanged_workspace_is_planned_without_reading_a_directory() {
    let cache = tempfile::tempdir().unwrap();
    let (_dir, root) = workspace(&["a/b/c/main.rs", "a/x.rs", "docs/README", ".env"]);
    let (first, read) = plan_at(&root, &Withheld::sensitive(), Some(cache.path()), later());
    assert_eq!(read, 5);
    let (second, read) = plan_at(&root, &Withheld::sensitive(), Some(cache.path()), later());
    assert_eq!(read, 0, "every stamp held");
    assert_eq!(sorted(first), sorted(second));
}

#[test]
fn what_changed_since_the_last_plan_is_seen() {
    let cache = tempfile::tempdir().unwrap();
    let (_dir, root) = workspace(&["a/b/c/main.rs", "a/x.rs", "docs/README"]);
    let (first, _) = plan_at(&root, &Withheld::sensitive(), Some(cache.path()), later());
    assert_eq!(first.trees, std::slice::from_ref(&root));

    // A secret deep in a directory the last plan granted whole.
    add(&root, "a/b/c/.env");
    let (second, read) = plan_at(&root, &Withheld::sensitive(), Some(cache.path()), later());
    let second = sorted(second);
    assert_eq!(
        second.listed,
        [
            root.clone(),
            root.join("a"),
            root.join("a/b"),
            root.join("a/b/c")
        ]
    );
    assert_eq!(second.withheld, [PathBuf::from("a/b/c/.env")]);
    assert_eq!(
        second.files,
        [root.join("a/b/c/main.rs"), root.join("a/x.rs")]
    );
    assert_eq!(second.trees, [root.join("docs")]);
    // c changed; a, b and the root are read for the entries their grants now need.
    assert_eq!(read, 4);

    // Kept as it is next time, without a read.
    let (third, read) = plan_at(&root, &Withheld::sensitive(), Some(cache.path()), later());
    assert_eq!((sorted(third), read), (second, 0));

    // Gone again: the workspace is one tree once more.
    std::fs::remove_file(root.join("a/b/c/.env")).unwrap();
    let (fourth, _) = plan_at(&root, &Withheld::sensitive(), Some(cache.path()), later());
    assert_eq!(fourth.trees, std::slice::from_ref(&root));
}

#[test]
fn a_directorys_time_set_back_does_not_hide_a_new_secret() {
    let cache = tempfile::tempdir().unwrap();
    let (_dir, root) = workspace(&["src/main.rs"]);
    let before = std::fs::metadata(root.join("src"))
        .unwrap()
        .modified()
        .unwrap();
    plan_at(&root, &Withheld::sensitive(), Some(cache.path()), later());
    add(&root, "src/id_rsa");
    // `touch -d` puts the modification time back; the change time moves all the same.
    std::fs::File::open(root.join("src"))
        .unwrap()
        .set_modified(before)
        .unwrap();
    let (reads, _) = plan_at(&root, &Withheld::sensitive(), Some(cache.path()), later());
    assert_eq!(reads.withheld, [PathBuf::from("src/id_rsa")]);
}

#[test]
fn a_directory_changed_moments_ago_is_read_again() {
    let cache = tempfile::tempdir().unwrap();
    let (_dir, root) = workspace(&["src/main.rs"]);
    // Planned at the real time: every directory was changed within the clock's
    // granularity of the plan, so none of their stamps is kept.
    plan_with_cache(&root, &Withheld::sensitive(), Some(cache.path()));
    let (_, read) = plan_at(&root, &Withheld::sensitive(), Some(cache.path()), later());
    assert_eq!(read, 2);
}

#[test]
fn a_cache_of_another_workspace_or_garbage_is_ignored() {
    let cache = tempfile::tempdir().unwrap();
    let (_dir, root) = workspace(&[".env", "src/main.rs"]);
    plan_at(&root, &Withheld::sensitive(), Some(cache.path()), later());
    for entry in std::fs::read_dir(cache.path()).unwrap() {
        std::fs::write(entry.unwrap().path(), "{not json").unwrap();
    }
    let (reads, read) = plan_at(&root, &Withheld::sensitive(), Some(cache.path()), later());
    assert_eq!(read, 2);
    assert_eq!(reads.withheld, [PathBuf::from(".env")]);
}

#[test]
fn a_clis_own_configuration_is_withheld_with_or_without_the_sensitive_files() {
    let (_dir, root) = workspace(&[
        ".env",
        "README",
        ".claude/settings.json",
        ".mcp.json",
        "sub/.mcp.json",
    ]);
    let withheld = Withheld {
        sensitive: false,
        paths: vec![PathBuf::from(".claude"), PathBuf::from(".mcp.json")],
    };
    let reads = sorted(plan_with_cache(&root, &withheld, None));
    assert_eq!(
        reads.withheld,
        [PathBuf::from(".claude"), PathBuf::from(".mcp.json")]
    );
    assert_eq!(reads.files, [root.join(".env"), root.join("README")]);
    assert_eq!(reads.trees, [root.join("sub")], "only the workspace's own");
    let both = Withheld {
        sensitive: true,
        ..withheld
    };
    assert_eq!(plan_with_cache(&root, &both, None).withheld.len(), 3);
    // Nothing withheld: the whole workspace, nothing looked at.
    assert_eq!(
        plan_with_cache(&root, &Withheld::default(), None).trees,
        std::slice::from_ref(&root)
    );
}

#[test]
fn a_kept_plan_is_reused_whole_and_a_garbled_one_is_not() {
    let cache = tempfile::tempdir().unwrap();
    let (_dir, root) = workspace(&[".env", "src/main.rs", "README"]);
    let (first, _) = plan_at(&root, &Withheld::sensitive(), Some(cache.path()), later());
    let plans: Vec<PathBuf> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "plan"))
        .collect();
    assert_eq!(plans.len(), 1, "the plan is kept beside the listings");
    let (second, read) = plan_at(&root, &Withheld::sensitive(), Some(cache.path()), later());
    assert_eq!((sorted(second), read), (sorted(first), 0));
    for garbage in ["", "codecrew-workspace-reads\t1\t0\n", "S\tnot a number\n"] {
        std::fs::write(&plans[0], garbage).unwrap();
        let (reads, _) = plan_at(&root, &Withheld::sensitive(), Some(cache.path()), later());
        assert_eq!(reads.withheld, [PathBuf::from(".env")], "{garbage:?}");
    }
}

#[test]
fn gradles_user_home_is_looked_into_for_its_passwords() {
    let (_dir, root) = workspace(&[".gradle/gradle.properties", ".gradle/caches/x.bin"]);
    let reads = sorted(plan_with_cache(&root, &Withheld::sensitive(), None));
    assert_eq!(reads.withheld, [PathBuf::from(".gradle/gradle.properties")]);
    assert_eq!(reads.trees, [root.join(".gradle/caches")]);
    assert_eq!(reads.listed, [root.clone(), root.join(".gradle")]);
}

/// A state folder inside the workspace (`XDG_STATE_HOME=./.state`, or under `target/`):
/// withheld from every plan, the one of a CLI that may read the sensitive files
/// included; one that holds the workspace grants nothing.
#[test]
fn codecrews_state_folder_is_withheld_wherever_it_lies() {
    let (_dir, root) = workspace(&[
        "src/main.rs",
        ".state/codecrew/held/1-1/0.json",
        ".state/other/x",
        "target/state/codecrew/journal-key",
        "target/debug/app",
    ]);
    for (folder, listed, withheld) in [
        (".state/codecrew", ".state", ".state/codecrew"),
        (
            "target/state/codecrew",
            "target/state",
            "target/state/codecrew",
        ),
    ] {
        let state = StateFolder::at(&root.join(folder));
        for wanted in [Withheld::sensitive(), Withheld::default()] {
            let plan = wanted.and_state_folder(Some(&state), &root).unwrap();
            let reads = sorted(plan_with_cache(&root, &plan, None));
            assert!(reads.listed.contains(&root.join(listed)), "{reads:?}");
            assert!(
                reads.withheld.contains(&PathBuf::from(withheld)),
                "{reads:?}"
            );
            let granted = |path: &Path| {
                reads
                    .trees
                    .iter()
                    .chain(&reads.files)
                    .any(|grant| path.starts_with(grant))
            };
            assert!(!granted(&root.join(folder).join("held")), "{reads:?}");
            assert!(
                !granted(&root.join(folder).join("journal-key")),
                "{reads:?}"
            );
            assert!(granted(&root.join("src/main.rs")), "{reads:?}");
        }
    }
    let above = StateFolder::at(root.parent().unwrap());
    assert_eq!(
        Withheld::sensitive().and_state_folder(Some(&above), &root),
        None
    );
    let elsewhere = StateFolder::at(Path::new("/nonexistent/state/codecrew"));
    assert_eq!(
        Withheld::sensitive().and_state_folder(Some(&elsewhere), &root),
        Some(Withheld::sensitive())
    );
}
