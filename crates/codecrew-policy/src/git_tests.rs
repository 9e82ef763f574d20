//! The repository-config check on hand-made repositories: every key that names a
//! program, the harmless ones, and every way git finds its repository. What each key
//! really makes git run is shown with the real git in tests/integration/security.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use tempfile::TempDir;

use super::*;

/// A repository as `git init` leaves it (without running git), `config` as given.
fn repo(config: &str) -> TempDir {
    let dir = TempDir::new().unwrap();
    let git = dir.path().join(".git");
    fs::create_dir_all(git.join("objects")).unwrap();
    fs::create_dir_all(git.join("refs")).unwrap();
    fs::create_dir_all(git.join("hooks")).unwrap();
    fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(git.join("config"), config).unwrap();
    dir
}

const CLEAN: &str = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n";

/// Every key of SECURITY.md's list, as a config snippet.
const PROGRAM_KEYS: &[(&str, &str)] = &[
    ("core.fsmonitor", "[core]\n\tfsmonitor = .git/evil"),
    ("core.fsmonitor", "[core]\n\tfsmonitor"),
    ("core.pager", "[core]\n\tpager = ./evil"),
    ("core.editor", "[core]\n\teditor = ./evil"),
    ("core.askpass", "[core]\n\taskPass = ./evil"),
    ("core.sshcommand", "[core]\n\tsshCommand = ./evil"),
    ("core.gitproxy", "[core]\n\tgitProxy = ./evil"),
    (
        "core.alternaterefscommand",
        "[core]\n\talternateRefsCommand = ./evil",
    ),
    ("core.worktree", "[core]\n\tworktree = /elsewhere"),
    ("diff.external", "[diff]\n\texternal = ./evil"),
    ("diff.tool", "[diff]\n\ttool = evil"),
    ("diff.evil.textconv", "[diff \"evil\"]\n\ttextconv = ./evil"),
    ("diff.evil.command", "[diff \"evil\"]\n\tcommand = ./evil"),
    (
        "merge.evil.driver",
        "[merge \"evil\"]\n\tdriver = ./evil %O %A %B",
    ),
    ("difftool.evil.cmd", "[difftool \"evil\"]\n\tcmd = ./evil"),
    (
        "mergetool.evil.path",
        "[mergetool \"evil\"]\n\tpath = ./evil",
    ),
    ("filter.lfs.clean", "[filter \"lfs\"]\n\tclean = ./evil %f"),
    (
        "filter.lfs.smudge",
        "[filter \"lfs\"]\n\tsmudge = ./evil %f",
    ),
    ("filter.lfs.process", "[filter \"lfs\"]\n\tprocess = ./evil"),
    ("credential.helper", "[credential]\n\thelper = ./evil"),
    (
        "credential.https://x.helper",
        "[credential \"https://x\"]\n\thelper = ./evil",
    ),
    ("gpg.program", "[gpg]\n\tprogram = ./evil"),
    ("gpg.ssh.program", "[gpg \"ssh\"]\n\tprogram = ./evil"),
    ("sequence.editor", "[sequence]\n\teditor = ./evil"),
    ("pager.status", "[pager]\n\tstatus = ./evil"),
    (
        "interactive.difffilter",
        "[interactive]\n\tdiffFilter = ./evil",
    ),
    ("alias.st", "[alias]\n\tst = !./evil"),
    ("include.path", "[include]\n\tpath = ../hostile.conf"),
    (
        "includeif.gitdir:/.path",
        "[includeIf \"gitdir:/\"]\n\tpath = ../hostile.conf",
    ),
    ("web.browser", "[web]\n\tbrowser = evil"),
    ("browser.evil.cmd", "[browser \"evil\"]\n\tcmd = ./evil"),
    ("man.viewer", "[man]\n\tviewer = evil"),
    (
        "remote.origin.uploadpack",
        "[remote \"origin\"]\n\tuploadpack = ./evil",
    ),
    (
        "uploadpack.packobjectshook",
        "[uploadpack]\n\tpackObjectsHook = ./evil",
    ),
    ("trace2.eventtarget", "[trace2]\n\teventTarget = /tmp/out"),
];

#[test]
fn every_key_that_names_a_program_is_found() {
    for (key, snippet) in PROGRAM_KEYS {
        let dir = repo(&format!("{CLEAN}{snippet}\n"));
        let why = program_in_repository(dir.path())
            .unwrap_or_else(|| panic!("{key} was not found in:\n{snippet}"));
        assert!(why.contains(key), "{key}: {why}");
    }
}

#[test]
fn harmless_config_is_left_alone() {
    let config = format!(
        "{CLEAN}[user]\n\tname = Someone\n[core]\n\tfsmonitor = false\n\tautocrlf = input\n\
         [diff]\n\trenames = copies\n\texternal =\n[alias]\n\tst = status -sb\n\
         [remote \"origin\"]\n\turl = https://example.com/x.git\n\
         \tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n"
    );
    let dir = repo(&config);
    assert_eq!(program_in_repository(dir.path()), None);
}

#[test]
fn outside_a_repository_there_is_nothing_to_check() {
    let dir = TempDir::new().unwrap();
    // Unless a repository encloses the temp dir itself.
    if find_git_dir(dir.path()).is_none() {
        assert_eq!(program_in_repository(dir.path()), None);
    }
}

#[test]
fn the_repository_is_found_from_a_subdirectory() {
    let dir = repo(&format!("{CLEAN}[core]\n\tfsmonitor = ./x\n"));
    let sub = dir.path().join("src/deep");
    fs::create_dir_all(&sub).unwrap();
    assert!(program_in_repository(&sub).is_some());
}

#[test]
fn a_git_file_a_linked_worktree_and_a_bare_repository_are_followed() {
    // `.git` as a file: `gitdir: <elsewhere>`.
    let real = repo(&format!("{CLEAN}[diff \"x\"]\n\ttextconv = ./x\n"));
    let work = TempDir::new().unwrap();
    let gitdir = real.path().join(".git");
    fs::write(
        work.path().join(".git"),
        format!("gitdir: {}\n", gitdir.display()),
    )
    .unwrap();
    assert!(program_in_repository(work.path()).is_some());

    // A linked worktree: its own git dir names the common one, whose config counts.
    let main = repo(&format!("{CLEAN}[filter \"x\"]\n\tclean = ./x\n"));
    let linked = main.path().join(".git/worktrees/feature");
    fs::create_dir_all(&linked).unwrap();
    fs::write(linked.join("commondir"), "../..\n").unwrap();
    let tree = TempDir::new().unwrap();
    fs::write(
        tree.path().join(".git"),
        format!("gitdir: {}\n", linked.display()),
    )
    .unwrap();
    let why = program_in_repository(tree.path()).unwrap();
    assert!(why.contains("filter.x.clean"), "{why}");

    // The directory is itself a (bare) repository.
    let bare = TempDir::new().unwrap();
    fs::create_dir_all(bare.path().join("objects")).unwrap();
    fs::create_dir_all(bare.path().join("refs")).unwrap();
    fs::write(bare.path().join("HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(bare.path().join("config"), "[core]\n\tfsmonitor = ./x\n").unwrap();
    assert!(program_in_repository(bare.path()).is_some());
}

#[test]
fn hooks_a_reading_command_fires_count_and_others_do_not() {
    let dir = repo(CLEAN);
    let hooks = dir.path().join(".git/hooks");
    let write_hook = |name: &str, mode: u32| {
        let path = hooks.join(name);
        fs::write(&path, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
    };
    // Commit hooks (pre-commit, husky's) run only on commands that ask anyway.
    write_hook("pre-commit", 0o755);
    write_hook("post-index-change.sample", 0o755);
    write_hook("reference-transaction", 0o644);
    assert_eq!(program_in_repository(dir.path()), None);
    for hook in READING_HOOKS {
        write_hook(hook, 0o755);
        let why = program_in_repository(dir.path()).unwrap();
        assert!(why.contains(hook), "{why}");
        fs::remove_file(hooks.join(hook)).unwrap();
    }
}

#[test]
fn a_hooks_path_is_followed_to_its_hooks() {
    // husky's layout: only commit hooks, so `git status` stays quiet.
    let dir = repo(&format!("{CLEAN}[core]\n\thooksPath = .husky/_\n"));
    let husky = dir.path().join(".husky/_");
    fs::create_dir_all(&husky).unwrap();
    let hook = |name: &str| {
        let path = husky.join(name);
        fs::write(&path, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    };
    hook("pre-commit");
    assert_eq!(program_in_repository(dir.path()), None);
    hook("post-index-change");
    let why = program_in_repository(dir.path()).unwrap();
    assert!(why.contains(".husky/_/post-index-change"), "{why}");
}

#[test]
fn submodules_are_checked_too() {
    // `.git/modules/<name>`: where `git submodule add` keeps a submodule's repository.
    let dir = repo(CLEAN);
    let module = dir.path().join(".git/modules/libs/dep");
    fs::create_dir_all(module.join("objects")).unwrap();
    fs::create_dir_all(module.join("refs")).unwrap();
    fs::write(module.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(module.join("config"), CLEAN).unwrap();
    assert_eq!(program_in_repository(dir.path()), None);
    fs::write(
        module.join("config"),
        format!("{CLEAN}[core]\n\tfsmonitor = ./x\n"),
    )
    .unwrap();
    let why = program_in_repository(dir.path()).unwrap();
    assert!(
        why.contains("submodule") && why.contains("core.fsmonitor"),
        "{why}"
    );

    // A submodule with its own `.git` in its directory, named in `.gitmodules`.
    let dir = repo(CLEAN);
    fs::write(
        dir.path().join(".gitmodules"),
        "[submodule \"vendored\"]\n\tpath = vendor/lib\n\turl = ../lib\n",
    )
    .unwrap();
    let nested = dir.path().join("vendor/lib/.git");
    fs::create_dir_all(nested.join("objects")).unwrap();
    fs::create_dir_all(nested.join("refs")).unwrap();
    fs::write(nested.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(nested.join("config"), "[diff \"x\"]\n\ttextconv = ./x\n").unwrap();
    let why = program_in_repository(dir.path()).unwrap();
    assert!(why.contains("diff.x.textconv"), "{why}");
}

#[test]
fn config_syntax_git_accepts() {
    let text = "# comment\n[core] fsmonitor = a ; trailing\n[Diff \"My.Driver\"]\n\
                \tTextConv = \"b\" \\\n  c\n[branch.main]\n\tremote = origin\n; other\n\
                [alias]\n\tx\n";
    let keys: Vec<(String, Option<String>)> = entries(text);
    let names: Vec<&str> = keys.iter().map(|(key, _)| key.as_str()).collect();
    assert_eq!(
        names,
        [
            "core.fsmonitor",
            "diff.My.Driver.textconv",
            "branch.main.remote",
            "alias.x"
        ]
    );
    assert_eq!(keys[1].1.as_deref(), Some("\"b\"   c"));
    assert!(program_key("diff.My.Driver.textconv", Some("b")).is_some());
    assert!(program_key("alias.x", None).is_none());
}

#[test]
fn a_huge_config_asks_rather_than_being_skimmed() {
    let dir = repo(CLEAN);
    let config = dir.path().join(".git/config");
    let filler = format!("{CLEAN}{}", "# padding\n".repeat(120_000));
    fs::write(&config, filler).unwrap();
    let why = program_in_repository(Path::new(dir.path())).unwrap();
    assert!(why.contains("too large"), "{why}");
}

/// A partial clone's lazy fetch runs the remote's transport (red-team finding F2).
#[test]
fn transports_that_a_read_can_start_are_programs() {
    for (key, value) in [
        ("extensions.partialclone", "origin"),
        ("remote.origin.promisor", "true"),
        ("remote.origin.partialclonefilter", "blob:none"),
        ("remote.origin.url", "ext::sh -c evil"),
        ("remote.origin.url", "FD::3"),
        ("url.ext::sh -c evil.insteadof", "https://example.com/"),
        ("protocol.ext.allow", "always"),
        ("protocol.allow", "always"),
    ] {
        assert!(program_key(key, Some(value)).is_some(), "{key} = {value}");
    }
    for (key, value) in [
        ("remote.origin.url", "https://example.com/repo.git"),
        ("remote.origin.promisor", "false"),
        ("url.https://mirror/.insteadof", "https://example.com/"),
    ] {
        assert!(program_key(key, Some(value)).is_none(), "{key} = {value}");
    }
}

/// The read-only sandbox lets git read the user's whole configuration: what it includes
/// too (an unreadable include makes git refuse to run).
#[test]
fn the_users_config_files_include_what_they_include() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    fs::create_dir_all(home.join(".config/git")).unwrap();
    fs::write(
        home.join(".gitconfig"),
        "[include]\n\tpath = ~/.gitconfig.local\n[includeIf \"gitdir:~/work/\"]\n\tpath = work.inc\n\
         [core]\n\texcludesFile = ~/.ignore-global\n",
    )
    .unwrap();
    fs::write(
        home.join(".gitconfig.local"),
        "[include]\n\tpath = deeper.inc\n",
    )
    .unwrap();
    let files = user_config_files(Some(home), Some(&home.join(".config")));
    for expected in [
        ".gitconfig",
        ".config/git",
        ".gitconfig.local",
        "work.inc",
        ".ignore-global",
        "deeper.inc",
    ] {
        assert!(
            files.contains(&home.join(expected)),
            "{expected}: {files:?}"
        );
    }
}

/// `git remote -v` prints what an `insteadOf` rewrite puts in the URL (red-team N3).
#[test]
fn a_rewrite_that_adds_a_token_counts_as_credentials() {
    let dir = repo(CLEAN);
    assert_eq!(remote_with_credentials(dir.path()), None);
    let config = dir.path().join(".git/config");
    let mut text = fs::read_to_string(&config).unwrap();
    text.push_str(
        "[url \"https://x:ghp_token@example.com/\"]\n\tinsteadOf = https://example.com/\n",
    );
    fs::write(&config, text).unwrap();
    assert!(remote_with_credentials(dir.path()).is_some());
}
