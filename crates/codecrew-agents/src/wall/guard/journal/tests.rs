use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::wall::{Guarded, Hold};

/// No process has pid 2^22 + 1 (above the kernel's pid_max limit).
const GONE: &str = "4194305-1";

/// A held folder with one file, its guard written down under `root` as a codecrew that
/// is gone would have left it, and the file then changed: the record, in its folder.
fn abandoned(root: &Path, held: &Path) -> PathBuf {
    std::fs::create_dir_all(held).unwrap();
    std::fs::write(held.join("hook.sh"), "mine").unwrap();
    let guard = Guard::new(
        &Guarded {
            path: held.to_path_buf(),
            hold: Hold::Whole,
        },
        "claude",
    );
    let record = write_in(root, &guard).unwrap();
    // Not put back by this process: as if it had been killed.
    std::mem::forget(guard);
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&record), 0o600);
    assert_eq!(mode(record.parent().unwrap()), 0o700);
    let gone = root.join(GONE);
    std::fs::rename(record.parent().unwrap(), &gone).unwrap();
    std::fs::write(held.join("hook.sh"), "evil").unwrap();
    std::fs::write(held.join("planted.sh"), "evil").unwrap();
    gone.join(record.file_name().unwrap())
}

#[test]
fn what_a_killed_codecrew_held_is_put_back_by_the_next_and_its_journal_removed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("state/codecrew/held");
    let held = dir.path().join("session-env");
    let gone = abandoned(&root, &held).parent().unwrap().to_path_buf();
    // A running codecrew's folder (this one's) is left alone.
    let mine = root.join(own_name().unwrap());
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("0.json"), "{}").unwrap();
    recover(Some(&root));
    assert_eq!(
        std::fs::read_to_string(held.join("hook.sh")).unwrap(),
        "mine"
    );
    assert!(!held.join("planted.sh").exists());
    assert!(!gone.exists(), "the journal stays");
    assert!(
        mine.join("0.json").exists(),
        "a running codecrew's journal was read"
    );
}

#[test]
fn a_journal_through_a_link_or_writable_by_others_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("held");
    let held = dir.path().join("session-env");
    let record = abandoned(&root, &held);
    let gone = record.parent().unwrap().to_path_buf();
    let name = record.file_name().unwrap();
    // The folder moved elsewhere and a link left in its place.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::rename(&gone, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &gone).unwrap();
    recover(Some(&root));
    assert_eq!(
        std::fs::read_to_string(held.join("hook.sh")).unwrap(),
        "evil"
    );
    assert!(gone.symlink_metadata().is_ok() && elsewhere.join(name).exists());

    // A real folder, but writable by the group.
    std::fs::remove_file(&gone).unwrap();
    std::fs::rename(&elsewhere, &gone).unwrap();
    std::fs::set_permissions(&gone, std::fs::Permissions::from_mode(0o770)).unwrap();
    recover(Some(&root));
    assert_eq!(
        std::fs::read_to_string(held.join("hook.sh")).unwrap(),
        "evil"
    );

    // A record writable by others, then a record that is a link.
    std::fs::set_permissions(&gone, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(&record, std::fs::Permissions::from_mode(0o666)).unwrap();
    recover(Some(&root));
    assert_eq!(
        std::fs::read_to_string(held.join("hook.sh")).unwrap(),
        "evil"
    );
    std::fs::set_permissions(&record, std::fs::Permissions::from_mode(0o600)).unwrap();
    let moved = dir.path().join("record.json");
    std::fs::rename(&record, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &record).unwrap();
    recover(Some(&root));
    assert_eq!(
        std::fs::read_to_string(held.join("hook.sh")).unwrap(),
        "evil"
    );

    // The held folder of journals itself a link.
    std::fs::remove_file(&record).unwrap();
    std::fs::rename(&moved, &record).unwrap();
    let real = dir.path().join("real-held");
    std::fs::rename(&root, &real).unwrap();
    std::os::unix::fs::symlink(&real, &root).unwrap();
    recover(Some(&root));
    assert_eq!(
        std::fs::read_to_string(held.join("hook.sh")).unwrap(),
        "evil"
    );

    // Once trusted, it is read.
    std::fs::remove_file(&root).unwrap();
    std::fs::rename(&real, &root).unwrap();
    recover(Some(&root));
    assert_eq!(
        std::fs::read_to_string(held.join("hook.sh")).unwrap(),
        "mine"
    );
}

#[test]
fn a_malformed_record_is_refused_and_left_for_the_user() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("held");
    let gone = root.join(GONE);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&gone)
        .unwrap();
    let record = gone.join("0.json");
    for text in [
        "{not json",
        r#"{"cli":"x","path":"zz","except":[],"before":{}}"#,
    ] {
        std::fs::write(&record, text).unwrap();
        std::fs::set_permissions(&record, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(
            read(&record).unwrap_err().starts_with("malformed"),
            "{text}"
        );
        recover(Some(&root));
        assert!(record.exists());
    }
}
