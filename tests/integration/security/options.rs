//! The third round's four classes, each through the binary in both modes, each with a
//! control that the same kind of command runs (in the read-only sandbox) on workspace
//! files: lists of names read from a file, walks that follow links out, secrets
//! committed to the repository, options bundled in one word.

use super::*;

const MODES: [&str; 2] = ["execute", "query"];

fn run_in(ws: &Ws, mode: &str, command: &str) -> Value {
    ws.call_in(mode, false, "run_command", json!({ "command": command }))
        .0
}

#[track_caller]
fn runs(ws: &Ws, mode: &str, command: &str) -> Value {
    let result = run_in(ws, mode, command);
    ok(&result);
    assert_eq!(result["output"]["exit_code"], 0, "{mode}: {result:#}");
    result
}

fn git(ws: &Ws, args: &[&str]) {
    crate::support::git::git(&ws.root, args);
}

#[test]
fn names_read_from_a_file_ask() {
    let ws = Ws::new();
    let secret = ws.outside.join("secret.txt");
    ws.write("list", &format!("{}\0", secret.display()));
    ws.write("sums", &format!("0000  {}\n", secret.display()));
    ws.write("args", &format!("{}\n", secret.display()));
    for mode in MODES {
        for command in [
            "wc --files0-from=list",
            "wc --files0=list",
            "du --files0-from list",
            "sort --fil=list",
            "sha256sum -c sums",
            "strings @args",
            "file -f list",
        ] {
            let result = run_in(&ws, mode, command);
            denied(&result);
            assert!(!result.to_string().contains("secret.txt:"), "{result:#}");
        }
        // Control: the same programs on named workspace files.
        let result = runs(&ws, mode, "wc -c src/main.rs && sha256sum src/main.rs");
        assert!(
            result["output"]["stdout"]
                .as_str()
                .unwrap()
                .contains("13 src/main.rs")
        );
    }
}

#[test]
fn walks_that_follow_a_link_out_ask() {
    let ws = Ws::new();
    std::fs::create_dir_all(ws.root.join("tree/sub")).unwrap();
    ws.write("tree/sub/file.txt", "inside\n");
    let walks = [
        "ls -LR tree",
        "find -L tree",
        "find tree -follow -name '*.txt'",
        "du -L tree",
        "grep -R inside tree",
        "diff -r tree src",
    ];
    for mode in MODES {
        // Control: no link out, every walk runs read-only.
        for walk in walks {
            let result = run_in(&ws, mode, walk);
            ok(&result);
            assert_eq!(result["output"]["sandbox"], "read-only", "{result:#}");
        }
    }
    symlink(&ws.outside, ws.root.join("tree/sub/out")).unwrap();
    for mode in MODES {
        for walk in walks {
            let result = run_in(&ws, mode, walk);
            denied(&result);
            assert!(
                result["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("link out of the workspace"),
                "{result:#}"
            );
        }
        // Walks that do not follow links still run.
        let result = runs(&ws, mode, "ls -R tree");
        assert!(result["output"]["stdout"].as_str().unwrap().contains("out"));
    }
}

#[test]
fn a_secret_committed_to_the_repository_asks() {
    let ws = Ws::new();
    crate::support::git::repository_with(&ws.root, &["src"]);
    let printing = [
        "git log -p",
        "git show HEAD",
        "git log --all -pS API_KEY",
        "git grep API_KEY HEAD",
    ];
    // Control: a clean repository's contents print without asking.
    for mode in MODES {
        for command in printing {
            let result = run_in(&ws, mode, command);
            ok(&result);
            assert!(!result.to_string().contains(SECRET), "{result:#}");
        }
        let result = runs(&ws, mode, "git log -p");
        assert!(
            result["output"]["stdout"]
                .as_str()
                .unwrap()
                .contains("fn main")
        );
    }
    git(&ws, &["add", "-f", ".env"]);
    git(&ws, &["commit", "-qm", "oops"]);
    git(&ws, &["rm", "-q", "--cached", ".env"]);
    git(&ws, &["commit", "-qm", "removed"]);
    std::fs::remove_file(ws.root.join(".env")).unwrap();
    for mode in MODES {
        for command in printing.iter().copied().chain([
            "git show HEAD~1:.env",
            "git diff HEAD~2",
            "git cat-file -p HEAD~1:.env",
        ]) {
            let result = run_in(&ws, mode, command);
            denied(&result);
            assert!(
                result["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains(".env"),
                "{result:#}"
            );
        }
        // What prints only names and messages still runs.
        runs(&ws, mode, "git log --oneline --stat");
    }
    // Approved by the user, it runs (and shows the secret, which is the user's call).
    let result = ws.run_yes("git show HEAD~1:.env");
    ok(&result);
    assert!(result.to_string().contains(SECRET), "{result:#}");
}

#[test]
fn options_bundled_in_one_word_do_not_slip_through() {
    let ws = Ws::new();
    let ran = ws.root.join("ran");
    ws.write(
        "marker.sh",
        &format!("#!/bin/sh\ntouch {}\n", ran.display()),
    );
    let script = ws.root.join("marker.sh");
    let mut permissions = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&script, permissions).unwrap();
    crate::support::git::repository_with(&ws.root, &["src"]);
    for mode in MODES {
        for command in [
            "git grep -nOmarker.sh main",
            "git grep -iO./marker.sh main",
            "git grep --open main",
            "git -P grep --op=./marker.sh main",
            "sort --co=./marker.sh -S1 src/main.rs",
            "sort -mo made.txt src/main.rs",
            "sort src/main.rs --ou made.txt",
            "file --co -m src/main.rs",
            "uniq -- src/main.rs -made.txt",
        ] {
            let result = run_in(&ws, mode, command);
            denied(&result);
            assert!(!ran.exists(), "{mode}: `{command}` ran the program");
            assert!(
                !ws.exists("made.txt") && !ws.exists("-made.txt"),
                "{command}"
            );
        }
        // Control: the same programs with harmless bundles.
        let result = runs(&ws, mode, "git grep -ni main && sort -rn src/main.rs");
        assert!(
            result["output"]["stdout"]
                .as_str()
                .unwrap()
                .contains("fn main")
        );
    }
}

/// A secret staged once and unstaged leaves its blob in the store, reached by no commit:
/// naming it by id asks (red-team finding F7), while reached objects print.
#[test]
fn an_object_no_ref_reaches_asks() {
    let ws = Ws::new();
    crate::support::git::repository_with(&ws.root, &["src"]);
    let id = |args: &[&str]| {
        let output = Command::new("git")
            .args(args)
            .current_dir(&ws.root)
            .output()
            .unwrap();
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    };
    git(&ws, &["add", "-f", ".env"]);
    let blob = id(&["rev-parse", ":.env"]);
    git(&ws, &["rm", "-q", "--cached", ".env"]);
    let head = id(&["rev-parse", "HEAD"]);
    for mode in MODES {
        let result = run_in(&ws, mode, &format!("git cat-file -p {}", &blob[..10]));
        denied(&result);
        assert!(
            result["error"]["message"]
                .as_str()
                .unwrap()
                .contains("no branch")
        );
        let result = runs(&ws, mode, &format!("git show --stat {}", &head[..8]));
        assert!(
            result["output"]["stdout"]
                .as_str()
                .unwrap()
                .contains("first")
        );
    }
}
