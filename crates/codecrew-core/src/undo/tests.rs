use std::fs;
use std::os::unix::fs::PermissionsExt;

use super::*;

struct Setup {
    _dir: tempfile::TempDir,
    state: PathBuf,
    workspace: PathBuf,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (state, workspace) = (root.join("state"), root.join("ws"));
    fs::create_dir_all(&workspace).unwrap();
    Setup {
        _dir: dir,
        state,
        workspace,
    }
}

impl Setup {
    fn write(&self, path: &str, text: &str) {
        let path = self.workspace.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn read(&self, path: &str) -> Option<String> {
        fs::read_to_string(self.workspace.join(path)).ok()
    }

    fn record(&self, id: &str) -> Recording {
        record_before_in(&self.state, &self.workspace, id, RecordKind::Execute).unwrap()
    }

    fn undo(&self, run: Option<&str>, force: bool) -> Outcome {
        undo_in(&self.state, &self.workspace, run, force).unwrap()
    }
}

fn actions(outcome: &Outcome) -> Vec<(String, Action)> {
    let mut files: Vec<_> = outcome
        .files
        .iter()
        .map(|file| (file.path.clone(), file.action))
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}

#[test]
fn a_run_s_writes_creations_and_deletions_are_put_back_exactly() {
    let s = setup();
    s.write("kept.txt", "kept\n");
    s.write("edited.txt", "before\r\n");
    s.write("gone/deleted.sh", "#!/bin/sh\n");
    let script = s.workspace.join("gone/deleted.sh");
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    // A .gitattributes that would convert line ends: a file is put back byte for byte.
    s.write(".gitattributes", "* text eol=lf\n");
    let recording = s.record("run1");
    s.write("edited.txt", "after\n");
    s.write("new/dir/created.txt", "new\n");
    fs::remove_dir_all(s.workspace.join("gone")).unwrap();
    recording.finish().unwrap();

    // The store is the user's alone.
    let folder = Folder::of(&s.state, &s.workspace).dir;
    for (path, expected) in [
        (s.state.join("undo"), 0o700),
        (folder.clone(), 0o700),
        (folder.join("runs/run1.json"), 0o600),
    ] {
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, expected, "{}", path.display());
    }

    let outcome = s.undo(None, false);
    assert_eq!(outcome.status, Status::Undone);
    assert_eq!(
        actions(&outcome),
        vec![
            ("edited.txt".to_owned(), Action::Restored),
            ("gone/deleted.sh".to_owned(), Action::Recreated),
            ("new/dir/created.txt".to_owned(), Action::Removed),
        ]
    );
    assert_eq!(s.read("edited.txt").as_deref(), Some("before\r\n"));
    assert_eq!(s.read("kept.txt").as_deref(), Some("kept\n"));
    assert_eq!(s.read("new/dir/created.txt"), None);
    assert!(
        !s.workspace.join("new").exists(),
        "the folders the run made go too"
    );
    let mode = fs::metadata(&script).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
    // Undone once: the run is not undone again, and there is nothing left to undo.
    assert!(matches!(
        undo_in(&s.state, &s.workspace, Some("run1"), false),
        Err(UndoError::AlreadyUndone(_))
    ));
    assert!(matches!(
        undo_in(&s.state, &s.workspace, None, false),
        Err(UndoError::NothingToUndo(_))
    ));
}

#[test]
fn a_file_changed_since_the_run_refuses_the_undo_and_force_goes_on() {
    let s = setup();
    s.write("a.txt", "one\n");
    s.write("b.txt", "one\n");
    let recording = s.record("run1");
    s.write("a.txt", "run\n");
    s.write("b.txt", "run\n");
    recording.finish().unwrap();
    s.write("b.txt", "mine\n");

    let refused = s.undo(Some("run1"), false);
    assert_eq!(refused.status, Status::ChangedSince);
    assert_eq!(refused.changed_since, vec!["b.txt".to_owned()]);
    assert!(refused.files.is_empty());
    assert_eq!(s.read("a.txt").as_deref(), Some("run\n"), "nothing touched");

    let forced = s.undo(Some("run1"), true);
    assert_eq!(forced.status, Status::Undone);
    assert_eq!(s.read("a.txt").as_deref(), Some("one\n"));
    assert_eq!(s.read("b.txt").as_deref(), Some("one\n"));
}

#[test]
fn a_run_never_ended_needs_force_and_names_what_differs() {
    let s = setup();
    s.write("a.txt", "one\n");
    let recording = s.record("run1");
    s.write("a.txt", "two\n");
    s.write("c.txt", "new\n");
    // Its codecrew was killed: no end recorded, and its process does not run any more.
    drop(recording);
    let path = Folder::of(&s.state, &s.workspace)
        .dir
        .join("runs/run1.json");
    let mut record: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    record["pid"] = serde_json::json!(i32::MAX);
    fs::write(&path, record.to_string()).unwrap();

    let refused = s.undo(None, false);
    assert_eq!(refused.status, Status::NotEnded);
    assert!(!refused.ended);
    assert_eq!(
        refused.changed_since,
        vec!["a.txt".to_owned(), "c.txt".to_owned()]
    );
    let forced = s.undo(None, true);
    assert_eq!(forced.status, Status::Undone);
    assert_eq!(s.read("a.txt").as_deref(), Some("one\n"));
    assert_eq!(s.read("c.txt"), None);
}

#[test]
fn a_run_still_going_is_not_undone() {
    let s = setup();
    s.write("a.txt", "one\n");
    let _recording = s.record("run1");
    s.write("a.txt", "two\n");
    assert!(matches!(
        undo_in(&s.state, &s.workspace, Some("run1"), true),
        Err(UndoError::Going(_))
    ));
}

#[test]
fn a_folder_swapped_for_a_link_is_never_written_through() {
    let s = setup();
    let outside = s.workspace.parent().unwrap().join("outside");
    fs::create_dir_all(&outside).unwrap();
    s.write("src/a.txt", "one\n");
    let recording = s.record("run1");
    s.write("src/a.txt", "two\n");
    recording.finish().unwrap();
    // Then src/ becomes a link to a folder outside the workspace.
    fs::remove_dir_all(s.workspace.join("src")).unwrap();
    std::os::unix::fs::symlink(&outside, s.workspace.join("src")).unwrap();

    let refused = s.undo(None, false);
    assert_eq!(refused.status, Status::ChangedSince);
    assert_eq!(refused.changed_since, vec!["src/a.txt".to_owned()]);
    let forced = s.undo(None, true);
    assert_eq!(forced.failed.len(), 1, "{forced:?}");
    assert_eq!(forced.failed[0].path, "src/a.txt");
    assert!(!outside.join("a.txt").exists(), "nothing written outside");
}

#[test]
fn one_workspace_s_runs_are_not_another_s() {
    let s = setup();
    s.write("a.txt", "one\n");
    let recording = s.record("run1");
    s.write("a.txt", "two\n");
    recording.finish().unwrap();
    let other = s.workspace.parent().unwrap().join("other");
    fs::create_dir_all(&other).unwrap();
    assert!(matches!(
        undo_in(&s.state, &other, Some("run1"), true),
        Err(UndoError::NoSuchRun(_))
    ));
    // A record copied into another workspace's folder names its own workspace: refused.
    let theirs = Folder::of(&s.state, &other).dir.join("runs");
    fs::create_dir_all(&theirs).unwrap();
    let mine = Folder::of(&s.state, &s.workspace)
        .dir
        .join("runs/run1.json");
    fs::copy(mine, theirs.join("run1.json")).unwrap();
    assert!(matches!(
        undo_in(&s.state, &other, Some("run1"), true),
        Err(UndoError::BadRecord(_))
    ));
}

#[test]
fn a_record_that_does_not_parse_is_an_error_and_ids_are_names() {
    let s = setup();
    let runs = Folder::of(&s.state, &s.workspace).dir.join("runs");
    fs::create_dir_all(&runs).unwrap();
    fs::write(runs.join("bad.json"), "{\"version\": 1, \"run\": ").unwrap();
    assert!(matches!(
        undo_in(&s.state, &s.workspace, Some("bad"), false),
        Err(UndoError::BadRecord(_))
    ));
    for id in ["../x", "a/b", "", "x.json"] {
        assert!(
            record_before_in(&s.state, &s.workspace, id, RecordKind::Execute).is_err(),
            "{id}"
        );
    }
}

#[test]
fn ignored_files_and_the_state_folder_inside_the_workspace_are_left_alone() {
    let s = setup();
    s.write(".gitignore", "build/\n");
    s.write("a.txt", "one\n");
    let state = s.workspace.join("state");
    let recording = record_before_in(&state, &s.workspace, "run1", RecordKind::Execute).unwrap();
    s.write("build/out.o", "object\n");
    s.write("web/node_modules/pkg/index.js", "installed\n");
    s.write("a.txt", "two\n");
    recording.finish().unwrap();
    let outcome = undo_in(&state, &s.workspace, None, false).unwrap();
    assert_eq!(
        actions(&outcome),
        vec![("a.txt".to_owned(), Action::Restored)]
    );
    assert_eq!(s.read("build/out.o").as_deref(), Some("object\n"));
    assert_eq!(
        s.read("web/node_modules/pkg/index.js").as_deref(),
        Some("installed\n")
    );
    assert!(state.join("undo").is_dir());
}

#[test]
fn the_oldest_records_and_the_files_only_they_hold_are_pruned() {
    let s = setup();
    s.write("a.txt", "ONLY-IN-THE-FIRST-RUN\n");
    let first = s.record("run1");
    s.write("a.txt", "two\n");
    first.finish().unwrap();
    let second = s.record("run2");
    s.write("a.txt", "three\n");
    second.finish().unwrap();
    let folder = Folder::of(&s.state, &s.workspace);
    let git = store(&s.state, &folder);
    let blob = |text: &str| {
        let out = std::process::Command::new("git")
            .args(["hash-object", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child.stdin.take().unwrap().write_all(text.as_bytes())?;
                child.wait_with_output()
            })
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let first_blob = blob("ONLY-IN-THE-FIRST-RUN\n");
    assert!(git.blobs().unwrap().read(&first_blob).is_ok());

    // The newest record kept: the first run's goes, with what only it held.
    let pruned = folder.prune(1);
    assert_eq!(pruned, vec!["run1".to_owned()]);
    git.prune(&pruned).unwrap();
    assert!(
        git.blobs().unwrap().read(&first_blob).is_err(),
        "the first run's file is gone"
    );
    assert!(matches!(
        undo_in(&s.state, &s.workspace, Some("run1"), false),
        Err(UndoError::NoSuchRun(_))
    ));
    // The run kept is whole.
    let outcome = s.undo(Some("run2"), false);
    assert_eq!(outcome.status, Status::Undone);
    assert_eq!(s.read("a.txt").as_deref(), Some("two\n"));
}

#[test]
fn a_nested_repository_without_a_commit_does_not_stop_the_recording() {
    let s = setup();
    s.write("a.txt", "one\n");
    let recording = s.record("run1");
    s.write("a.txt", "two\n");
    // The run makes a repository of its own in a folder, and commits nothing.
    s.write("sub/x.txt", "x\n");
    let init = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(s.workspace.join("sub"))
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap();
    assert!(init.success());
    recording.finish().unwrap();
    let outcome = s.undo(None, false);
    assert_eq!(outcome.status, Status::Undone);
    assert_eq!(s.read("a.txt").as_deref(), Some("one\n"));
    assert_eq!(
        s.read("sub/x.txt").as_deref(),
        Some("x\n"),
        "a nested repository is not touched"
    );
}

#[test]
fn a_run_is_named_by_its_id_or_a_start_no_other_shares() {
    let s = setup();
    s.write("a.txt", "one\n");
    let execute = s.record("abc123");
    s.write("a.txt", "two\n");
    execute.finish().unwrap();
    let apply =
        record_before_in(&s.state, &s.workspace, "abc123-apply", RecordKind::Apply).unwrap();
    s.write("a.txt", "three\n");
    apply.finish().unwrap();
    match undo_in(&s.state, &s.workspace, Some("abc"), false) {
        Err(UndoError::Ambiguous(_, runs)) => {
            assert_eq!(runs.len(), 2, "{runs:?}");
        }
        other => panic!("{other:?}"),
    }
    // The whole id names one; the apply, newest, is undone first, then the run.
    let apply = s.undo(None, false);
    assert_eq!(
        (apply.run.as_str(), apply.kind),
        ("abc123-apply", RecordKind::Apply)
    );
    assert_eq!(s.read("a.txt").as_deref(), Some("two\n"));
    let run = s.undo(Some("abc123"), false);
    assert_eq!(run.status, Status::Undone);
    assert_eq!(s.read("a.txt").as_deref(), Some("one\n"));
}
