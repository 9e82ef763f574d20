use std::os::unix::fs::PermissionsExt;

use super::super::{Before, Held};
use std::sync::Arc;

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
    let written = write_in(root, &[&guard]).unwrap();
    let record = written.path.clone();
    // Not put back nor set aside by this process: as if it had been killed.
    std::mem::forget(guard);
    std::mem::forget(written);
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

/// A codecrew before this one wrote one guard a record (a JSON object, not a list): one
/// killed before the upgrade is still put back.
#[test]
fn a_record_of_the_earlier_format_is_still_put_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("state/codecrew/held");
    let held = dir.path().join("session-env");
    let record = abandoned(&root, &held);
    let guards: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    let one = guards.as_array().unwrap()[0].clone();
    std::fs::write(&record, serde_json::to_vec(&one).unwrap()).unwrap();
    recover(Some(&root));
    assert_eq!(
        std::fs::read_to_string(held.join("hook.sh")).unwrap(),
        "mine"
    );
    assert!(!held.join("planted.sh").exists());
    assert!(!record.exists());
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

/// A folder held as a whole, with one file.
fn held_folder(dir: &Path) -> Guarded {
    let held = dir.join("session-env");
    std::fs::create_dir_all(&held).unwrap();
    std::fs::write(held.join("hook.sh"), "mine").unwrap();
    Guarded {
        path: held,
        hold: Hold::Whole,
    }
}

/// The record the guards of one start were written down in.
fn record_of(guards: &[Arc<Guard>]) -> PathBuf {
    guards[0]
        .journal
        .lock()
        .unwrap()
        .as_ref()
        .unwrap()
        .path
        .clone()
}

/// The names in this codecrew's folder under `root`.
fn names_in(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.join(own_name().unwrap()))
        .map(|entries| {
            entries
                .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Two CLI starts (two turns of a chat) holding a folder nothing changed in between:
/// its record is written once, and taken back for the second.
#[test]
fn a_record_is_written_once_while_what_it_holds_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("held");
    let guarded = held_folder(dir.path());
    let first = super::super::hold_in(std::slice::from_ref(&guarded), "claude", Some(&root));
    // Kept open, so that its inode cannot go to a file written later.
    let written = std::fs::File::open(record_of(&first)).unwrap();
    drop(first);
    assert!(
        names_in(&root).iter().all(|name| name.starts_with(IDLE)),
        "a record of what is put back is read by a recovery: {:?}",
        names_in(&root)
    );
    let second = super::super::hold_in(std::slice::from_ref(&guarded), "claude", Some(&root));
    let record = record_of(&second);
    let now = std::fs::symlink_metadata(&record).unwrap();
    let then = written.metadata().unwrap();
    assert_eq!(now.ino(), then.ino(), "the record was written again");
    assert_eq!(then.nlink(), 1);
    assert!(read(&record).map(std::mem::ManuallyDrop::new).is_ok());
    drop(second);
    finish_where(|file| file.starts_with(&root));
    assert!(!root.join(own_name().unwrap()).exists());
}

/// What changed between two starts is written down: the record describes what the
/// second holds, and the first one's record is gone.
#[test]
fn a_record_is_written_again_once_what_it_holds_changed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("held");
    let guarded = held_folder(dir.path());
    let first = super::super::hold_in(std::slice::from_ref(&guarded), "claude", Some(&root));
    let written = std::fs::File::open(record_of(&first)).unwrap();
    drop(first);
    // Changed between the turns, outside any wall (the user, another codecrew).
    std::fs::write(guarded.path.join("hook.sh"), "edited").unwrap();
    let second = super::super::hold_in(std::slice::from_ref(&guarded), "claude", Some(&root));
    let record = record_of(&second);
    assert_ne!(
        std::fs::symlink_metadata(&record).unwrap().ino(),
        written.metadata().unwrap().ino()
    );
    assert_eq!(written.metadata().unwrap().nlink(), 0, "the old one stays");
    // Read, not held: dropping it would put back what it says.
    let recorded = std::mem::ManuallyDrop::new(read(&record).unwrap());
    let Before::Whole {
        held: Held::Copy(files),
        ..
    } = &recorded[0].before
    else {
        panic!("not held by a copy");
    };
    assert_eq!(
        files.get(Path::new("hook.sh")),
        Some(&super::super::files::Entry::File(b"edited".to_vec()))
    );
    assert_eq!(
        names_in(&root),
        [record.file_name().unwrap().to_str().unwrap()]
    );
    drop(second);
    finish_where(|file| file.starts_with(&root));
}

/// A record set aside says what is held no more: a killed codecrew's is removed, never
/// put back over what the user changed since.
#[test]
fn a_record_set_aside_is_never_put_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("held");
    let guarded = held_folder(dir.path());
    drop(super::super::hold_in(
        std::slice::from_ref(&guarded),
        "claude",
        Some(&root),
    ));
    // Killed now: its folder as a codecrew that is gone left it.
    let gone = root.join(GONE);
    std::fs::rename(root.join(own_name().unwrap()), &gone).unwrap();
    std::fs::write(guarded.path.join("hook.sh"), "edited").unwrap();
    recover(Some(&root));
    assert_eq!(
        std::fs::read_to_string(guarded.path.join("hook.sh")).unwrap(),
        "edited"
    );
    assert!(!gone.exists());
    finish_where(|file| file.starts_with(&root));
}

/// A CLI start holding several paths makes one record (each file made is a wait on a
/// busy disk), which says what is held until the last of them is put back.
#[test]
fn one_cli_start_is_one_record_until_its_last_guard_is_put_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("held");
    let folder = held_folder(dir.path());
    let file = dir.path().join("settings.json");
    std::fs::write(&file, "{}").unwrap();
    let guarded = [
        folder,
        Guarded {
            path: file,
            hold: Hold::Whole,
        },
    ];
    let mut guards = super::super::hold_in(&guarded, "claude", Some(&root));
    let record = record_of(&guards);
    let name = record.file_name().unwrap().to_str().unwrap().to_owned();
    assert_eq!(names_in(&root), std::slice::from_ref(&name));
    let recorded = std::mem::ManuallyDrop::new(read(&record).unwrap());
    assert_eq!(recorded.len(), 2);
    drop(guards.remove(0));
    assert_eq!(
        names_in(&root),
        std::slice::from_ref(&name),
        "set aside while a guard holds"
    );
    drop(guards);
    assert_eq!(names_in(&root), [format!("{IDLE}{name}")]);
    finish_where(|file| file.starts_with(&root));
}
