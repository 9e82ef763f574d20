//! Opens and writes beneath the workspace, with links swapped in where the checked path
//! had none. The race against a process swapping links thousands of times is in
//! tests/integration/security_race.rs.

use std::fs;
use std::os::unix::fs::symlink;

use tempfile::TempDir;

use super::*;

fn workspace() -> (TempDir, PathBuf) {
    let dir = TempDir::new().unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

#[test]
fn reads_and_writes_inside() {
    let (_dir, root) = workspace();
    fs::create_dir(root.join("src")).unwrap();
    fs::write(root.join("src/a.txt"), "hello").unwrap();
    let beneath = Beneath::open(&root).unwrap();
    let mut text = String::new();
    io::Read::read_to_string(
        &mut beneath.open_read(&root.join("src/a.txt")).unwrap(),
        &mut text,
    )
    .unwrap();
    assert_eq!(text, "hello");
    assert!(
        beneath
            .write_atomic(&root.join("new/deep/b.txt"), b"made")
            .unwrap()
    );
    assert_eq!(
        fs::read_to_string(root.join("new/deep/b.txt")).unwrap(),
        "made"
    );
    assert!(
        !beneath
            .write_atomic(&root.join("new/deep/b.txt"), b"again")
            .unwrap()
    );
    assert_eq!(
        fs::read_to_string(root.join("new/deep/b.txt")).unwrap(),
        "again"
    );
    // No temporary file is left behind.
    let names: Vec<_> = fs::read_dir(root.join("new/deep")).unwrap().collect();
    assert_eq!(names.len(), 1);
}

#[test]
fn an_existing_file_keeps_its_mode() {
    let (_dir, root) = workspace();
    let target = root.join("run.sh");
    fs::write(&target, "#!/bin/sh\n").unwrap();
    fs::set_permissions(&target, std::fs::Permissions::from_mode(0o750)).unwrap();
    Beneath::open(&root)
        .unwrap()
        .write_atomic(&target, b"#!/bin/sh\necho\n")
        .unwrap();
    assert_eq!(
        fs::metadata(&target).unwrap().permissions().mode() & 0o777,
        0o750
    );
}

#[test]
fn a_directory_swapped_for_a_link_is_refused() {
    let (_dir, root) = workspace();
    let (_other, outside) = workspace();
    fs::write(outside.join("file"), "outside secret").unwrap();
    fs::create_dir(root.join("dir")).unwrap();
    fs::write(root.join("dir/file"), "inside").unwrap();
    let checked = root.join("dir/file");
    let beneath = Beneath::open(&root).unwrap();
    assert!(beneath.open_read(&checked).is_ok());
    // Swapped between the check and the use.
    fs::rename(root.join("dir"), root.join("old")).unwrap();
    symlink(&outside, root.join("dir")).unwrap();
    assert!(matches!(
        beneath.open_read(&checked),
        Err(BeneathError::Changed)
    ));
    assert!(matches!(
        beneath.write_atomic(&checked, b"pwned"),
        Err(BeneathError::Changed)
    ));
    assert_eq!(
        fs::read_to_string(outside.join("file")).unwrap(),
        "outside secret"
    );
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        1,
        "no temporary file outside"
    );
    assert!(!beneath.holds(&checked));
}

#[test]
fn a_file_swapped_for_a_link_is_refused() {
    let (_dir, root) = workspace();
    let (_other, outside) = workspace();
    fs::write(outside.join("secret"), "outside secret").unwrap();
    symlink(outside.join("secret"), root.join("file")).unwrap();
    let beneath = Beneath::open(&root).unwrap();
    let target = root.join("file");
    assert!(matches!(
        beneath.open_read(&target),
        Err(BeneathError::Changed)
    ));
    assert!(matches!(
        beneath.write_atomic(&target, b"pwned"),
        Err(BeneathError::Changed)
    ));
    assert_eq!(
        fs::read_to_string(outside.join("secret")).unwrap(),
        "outside secret"
    );
    // The link itself is beneath the root (listings show it), but not followed.
    assert!(beneath.holds(&target));
}

#[test]
fn special_hard_linked_and_outside_paths_are_refused() {
    let (_dir, root) = workspace();
    let beneath = Beneath::open(&root).unwrap();
    nix::unistd::mkfifo(&root.join("fifo"), Mode::from_bits_truncate(0o600)).unwrap();
    assert!(matches!(
        beneath.open_read(&root.join("fifo")),
        Err(BeneathError::NotRegular)
    ));
    fs::write(root.join("a"), "x").unwrap();
    fs::hard_link(root.join("a"), root.join("b")).unwrap();
    assert!(matches!(
        beneath.open_read(&root.join("a")),
        Err(BeneathError::HardLinked)
    ));
    assert!(matches!(
        beneath.open_read(Path::new("/etc/passwd")),
        Err(BeneathError::Outside)
    ));
    assert!(matches!(
        beneath.open_read(&root.join("../x")),
        Err(BeneathError::Outside)
    ));
    fs::write(root.join("plain"), "x").unwrap();
    assert!(matches!(
        beneath.write_atomic(&root.join("plain/child"), b"x"),
        Err(BeneathError::NotADirectory)
    ));
}

#[test]
fn the_walk_without_openat2_refuses_the_same_links() {
    let (_dir, root) = workspace();
    let (_other, outside) = workspace();
    fs::write(outside.join("file"), "outside").unwrap();
    fs::create_dir(root.join("dir")).unwrap();
    fs::write(root.join("dir/file"), "inside").unwrap();
    let beneath = Beneath::open(&root).unwrap();
    let flags = OFlag::O_RDONLY | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW;
    assert!(
        beneath
            .walk(Path::new("dir/file"), flags, Mode::empty())
            .is_ok()
    );
    fs::rename(root.join("dir"), root.join("old")).unwrap();
    symlink(&outside, root.join("dir")).unwrap();
    assert!(matches!(
        beneath.walk(Path::new("dir/file"), flags, Mode::empty()),
        Err(BeneathError::Changed)
    ));
}
