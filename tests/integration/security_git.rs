//! A hostile repository against the reading git commands: `git status` and `git diff` run
//! without asking, and git runs what the repository's own config and hooks name. Each
//! attack is tried with the real git through `codecrew tools call run_command --mode
//! execute`: without `--yes` it must be denied before git starts (the program never
//! runs), and with `--yes` the program does run (the control: the key is a real attack,
//! so the denial is not vacuous).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::World;
use crate::support::binary::{text, tool_result, tools_call_args};

/// A git repository (the workspace of a world outside `/tmp`) with one committed file,
/// and a program that leaves a marker when run.
struct Repo {
    world: World,
    root: PathBuf,
}

impl Repo {
    fn new() -> Option<Repo> {
        if !Command::new("git")
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
        {
            assert!(std::env::var_os("CI").is_none(), "CI must have git");
            eprintln!("note: skipping: git is not installed");
            return None;
        }
        let world = World::outside_tmp();
        let root = world.workspace();
        let repo = Repo { world, root };
        repo.git(&["init", "-q", "."]);
        repo.git(&["config", "user.email", "test@example.com"]);
        repo.git(&["config", "user.name", "Test"]);
        repo.write("notes.txt", "first\n");
        repo.git(&["add", "notes.txt"]);
        repo.git(&["commit", "-q", "-m", "init"]);
        // What an attacker's repository ships: a program that shows it ran (wherever git
        // starts it from: a hook runs in .git/hooks' work tree, a driver in the root).
        let evil = repo.root.join("evil.sh");
        let marker = repo.root.join("RAN");
        std::fs::write(
            &evil,
            format!(
                "#!/bin/sh\ntouch '{}'\ncat \"$1\" 2>/dev/null\nexit 0\n",
                marker.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&evil, std::fs::Permissions::from_mode(0o755)).unwrap();
        Some(repo)
    }

    fn git(&self, args: &[&str]) {
        let status = Command::new("git")
            .args(args)
            .current_dir(&self.root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    fn write(&self, relative: &str, content: &str) {
        std::fs::write(self.root.join(relative), content).unwrap();
    }

    fn evil(&self) -> String {
        self.root.join("evil.sh").display().to_string()
    }

    fn ran(&self) -> bool {
        self.root.join("RAN").exists()
    }

    fn run(&self, command: &str, yes: bool) -> Value {
        let input = json!({ "command": command }).to_string();
        let mut args = vec!["--workdir", self.root.to_str().unwrap()];
        args.extend(tools_call_args("run_command", &input, "execute", yes));
        let output = self.world.run(&args);
        let result = tool_result(&output);
        assert!(
            result["status"] == "ok" || result["status"] == "denied",
            "{result}\n{}",
            text(&output.stderr)
        );
        result
    }
}

/// One attack: `setup` plants it, `command` is the reading command that would trigger it.
#[track_caller]
fn attack(name: &str, setup: impl Fn(&Repo), command: &str) {
    let Some(repo) = Repo::new() else {
        return;
    };
    // The file git compares must look changed, so diff drivers and filters have work to
    // do (a hook's setup makes the index stale instead).
    repo.write("notes.txt", "first\nchanged\n");
    setup(&repo);

    let denied = repo.run(command, false);
    assert_eq!(denied["status"], "denied", "{name}: {denied}");
    assert!(
        denied["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("git")),
        "{name}: the denial says why: {denied}"
    );
    assert!(
        !repo.ran(),
        "{name}: the repository's program ran without asking"
    );

    let allowed = repo.run(command, true);
    assert_eq!(allowed["status"], "ok", "{name}: {allowed}");
    assert!(
        repo.ran(),
        "{name}: the control failed: git did not run the program with --yes, so the \
         denial above proves nothing: {allowed}"
    );
}

#[test]
fn a_clean_repository_reads_without_asking() {
    let Some(repo) = Repo::new() else {
        return;
    };
    repo.write("notes.txt", "first\nchanged\n");
    for command in [
        "git status",
        "git diff",
        "git log --oneline",
        "git diff --stat",
    ] {
        let result = repo.run(command, false);
        assert_eq!(result["status"], "ok", "{command}: {result}");
    }
    assert!(!repo.ran());
}

#[test]
fn core_fsmonitor_on_status() {
    attack(
        "core.fsmonitor",
        |repo| repo.git(&["config", "core.fsmonitor", &repo.evil()]),
        "git status",
    );
}

#[test]
fn diff_external_on_diff() {
    attack(
        "diff.external",
        |repo| repo.git(&["config", "diff.external", &repo.evil()]),
        "git diff",
    );
}

#[test]
fn a_textconv_driver_on_diff() {
    attack(
        "diff.<driver>.textconv",
        |repo| {
            repo.write(".gitattributes", "*.txt diff=evil\n");
            repo.git(&["config", "diff.evil.textconv", &repo.evil()]);
        },
        "git diff",
    );
}

#[test]
fn a_clean_filter_on_diff() {
    attack(
        "filter.<driver>.clean",
        |repo| {
            repo.write(".gitattributes", "*.txt filter=evil\n");
            repo.git(&["config", "filter.evil.clean", &repo.evil()]);
        },
        "git diff",
    );
}

/// Stages the change, then makes the file's stat differ from the index's, so the next
/// `git status` refreshes the index and writes it, which fires `post-index-change`.
fn stale_index(repo: &Repo) {
    repo.git(&["add", "notes.txt"]);
    let file = std::fs::File::options()
        .write(true)
        .open(repo.root.join("notes.txt"))
        .unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(120);
    file.set_modified(later).unwrap();
}

#[test]
fn a_post_index_change_hook_on_status() {
    attack(
        "hooks/post-index-change",
        |repo| {
            stale_index(repo);
            let hook = repo.root.join(".git/hooks/post-index-change");
            std::fs::copy(repo.root.join("evil.sh"), &hook).unwrap();
        },
        "git status",
    );
}

#[test]
fn a_hooks_path_with_such_a_hook_on_status() {
    attack(
        "core.hooksPath",
        |repo| {
            stale_index(repo);
            let hooks = repo.root.join("tools/hooks");
            std::fs::create_dir_all(&hooks).unwrap();
            std::fs::copy(repo.root.join("evil.sh"), hooks.join("post-index-change")).unwrap();
            repo.git(&["config", "core.hooksPath", "tools/hooks"]);
        },
        "git status",
    );
}

#[test]
fn an_included_config_on_status() {
    attack(
        "include.path",
        |repo| {
            repo.write(
                "included.conf",
                &format!("[core]\n\tfsmonitor = {}\n", repo.evil()),
            );
            repo.git(&["config", "include.path", "../included.conf"]);
        },
        "git status",
    );
}

#[test]
fn through_git_dash_c_into_a_nested_repository() {
    attack(
        "git -C <nested repo>",
        |repo| {
            let nested = repo.root.join("vendor/dep");
            std::fs::create_dir_all(&nested).unwrap();
            let git = |args: &[&str]| {
                let status = Command::new("git")
                    .args(args)
                    .current_dir(&nested)
                    .stdout(Stdio::null())
                    .status()
                    .unwrap();
                assert!(status.success());
            };
            git(&["init", "-q", "."]);
            git(&["config", "core.fsmonitor", &repo.evil()]);
        },
        "git -C vendor/dep status",
    );
}

#[test]
fn a_submodules_own_config_on_status() {
    attack(
        "submodule core.fsmonitor",
        |repo| {
            // A second repository, added as a submodule: its repository lives in
            // .git/modules/dep, with a config of its own that `git status` reads too.
            let base = repo.root.parent().unwrap();
            let dep = tempfile::TempDir::new_in(base).unwrap().keep();
            let git_in = crate::support::git::git;
            git_in(&dep, &["init", "-q", "."]);
            git_in(&dep, &["config", "user.email", "test@example.com"]);
            git_in(&dep, &["config", "user.name", "Test"]);
            std::fs::write(dep.join("lib.txt"), "lib\n").unwrap();
            git_in(&dep, &["add", "."]);
            git_in(&dep, &["commit", "-q", "-m", "lib"]);
            let url = dep.display().to_string();
            git_in(
                &repo.root,
                &[
                    "-c",
                    "protocol.file.allow=always",
                    "submodule",
                    "add",
                    "-q",
                    &url,
                    "dep",
                ],
            );
            repo.git(&["commit", "-q", "-m", "add dep"]);
            let module_config = repo.root.join(".git/modules/dep/config");
            git_in(
                &repo.root,
                &[
                    "config",
                    "-f",
                    &module_config.display().to_string(),
                    "core.fsmonitor",
                    &repo.evil(),
                ],
            );
            std::fs::write(repo.root.join("dep/lib.txt"), "changed\n").unwrap();
            let _ = std::fs::remove_dir_all(&dep);
        },
        "git status",
    );
}

/// A partial clone fetches the objects it lacks through its remote's transport, and an
/// `ext::` transport is a program (red-team finding F2).
#[test]
fn a_partial_clones_transport_on_blame() {
    attack(
        "extensions.partialClone with an ext:: remote",
        |repo| {
            let evil = repo.evil();
            repo.git(&["config", "core.repositoryformatversion", "1"]);
            repo.git(&["config", "extensions.partialClone", "origin"]);
            repo.git(&["config", "remote.origin.url", &format!("ext::{evil} %S")]);
            repo.git(&["config", "remote.origin.promisor", "true"]);
            repo.git(&["config", "remote.origin.partialclonefilter", "blob:none"]);
            repo.git(&["config", "protocol.ext.allow", "always"]);
            // The committed file's object is gone: blame must fetch it.
            let output = Command::new("git")
                .args(["rev-parse", "HEAD:notes.txt"])
                .current_dir(&repo.root)
                .output()
                .unwrap();
            let id = String::from_utf8(output.stdout).unwrap();
            let id = id.trim();
            std::fs::remove_file(
                repo.root
                    .join(format!(".git/objects/{}/{}", &id[..2], &id[2..])),
            )
            .unwrap();
        },
        "git blame notes.txt",
    );
}

/// The wall behind the config check: a nested repository that `.gitmodules` does not
/// list (only a gitlink in the outer index) is not checked, but what runs without asking
/// gets git's own configuration from the environment, above the nested one's. `plant`
/// sets up a program of the nested repository's (a script that says `marker` on stderr:
/// in the read-only sandbox it could not leave a file), `touch` changes its file so that
/// `git status` has work to do. Without asking the program must not run; approved with
/// the sandbox off (the control), git runs it.
fn nested_attack(marker: &str, plant: impl Fn(&Path, &str), touch: impl Fn(&Path)) {
    let Some(repo) = Repo::new() else {
        return;
    };
    let inner = repo.root.join("sub/inner");
    std::fs::create_dir_all(&inner).unwrap();
    std::fs::write(inner.join("file.txt"), "inner\n").unwrap();
    crate::support::git::repository_with(&inner, &["file.txt"]);
    let script = repo.root.join("nested.sh");
    std::fs::write(&script, format!("#!/bin/sh\necho {marker} >&2\ncat\n")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    plant(&inner, &script.display().to_string());
    let output = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(&inner)
        .output()
        .unwrap();
    let head = String::from_utf8(output.stdout).unwrap();
    repo.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{},sub/inner", head.trim()),
    ]);
    touch(&inner.join("file.txt"));
    let result = repo.run("git status", false);
    assert_eq!(result["status"], "ok", "{result}");
    assert_eq!(result["output"]["sandbox"], "read-only", "{result}");
    assert!(
        !result.to_string().contains(marker),
        "the nested repository's program ran: {result}"
    );
    let input = json!({"command": "git status"}).to_string();
    let mut args = vec!["--workdir", repo.root.to_str().unwrap()];
    args.extend(tools_call_args("run_command", &input, "execute", true));
    let unsandboxed = repo.world.env.clone().with("CODECREW_SANDBOX", "off");
    let output = repo
        .world
        .command_with(&unsandboxed, &args)
        .output()
        .unwrap();
    let approved = tool_result(&output);
    assert_eq!(approved["status"], "ok", "{approved}");
    assert!(
        approved.to_string().contains(marker),
        "the control failed: git never ran the program: {approved}"
    );
}

/// Its file-system monitor (red-team finding F3).
#[test]
fn a_nested_repositorys_monitor_does_not_run_without_asking() {
    nested_attack(
        "MONITOR-RAN",
        |inner, script| crate::support::git::git(inner, &["config", "core.fsmonitor", script]),
        |file| std::fs::write(file, "inner, changed\n").unwrap(),
    );
}

/// Its own filter driver, selected by its `info/attributes` (red-team finding N1): git
/// does not look into nested repositories for what runs without asking.
#[test]
fn a_nested_repositorys_filter_does_not_run_without_asking() {
    nested_attack(
        "FILTER-RAN",
        |inner, script| {
            crate::support::git::git(inner, &["config", "filter.ev.clean", script]);
            std::fs::write(inner.join(".git/info/attributes"), "* filter=ev\n").unwrap();
        },
        |file| {
            // The same size, another time stamp: git must hash the file again (through
            // the filter) to tell whether it changed.
            std::fs::write(file, "INNER\n").unwrap();
            let stamp = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
            std::fs::File::options()
                .write(true)
                .open(file)
                .unwrap()
                .set_modified(stamp)
                .unwrap();
        },
    );
}
