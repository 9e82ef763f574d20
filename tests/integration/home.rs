//! The home directory, and the folders above it, are not a project (issue 33): started
//! there, the commands that run tools or agents stop with exit 2 and the fix; with
//! `--allow-home` they run, and the home's credentials (named ones, and anything in a
//! hidden entry of the home) still never come back from a tool.
//!
//! `HOME` is a temporary folder, set on the child only; the user's own config is off.

use std::process::Output;

use serde_json::{Value, json};

use crate::support::World;
use crate::support::binary::{assert_exit, output_with_stdin, text, tool_result};

/// A token in each kind of place a home keeps one.
const TOKEN: &str = "gho_codecrewHomeToken42";

/// A home directory holding credentials, and a project beneath it; `codecrew` starts in
/// the home (the workspace here: what these tests are about).
fn home() -> World {
    let home = World::outside_tmp().started_in_the_home();
    // A store named like one (the GitHub CLI's), one only a hidden entry of the home
    // covers, one at the top of the home (yarn's), and a project with no secret.
    write(
        &home,
        ".config/gh/hosts.yml",
        &format!("oauth_token: {TOKEN}\n"),
    );
    write(&home, ".someapp/session.txt", &format!("session {TOKEN}\n"));
    write(&home, ".yarnrc.yml", &format!("npmAuthToken: {TOKEN}\n"));
    write(&home, "proj/README.md", "hello from the project\n");
    home
}

/// Writes `content` to `relative` in the home.
fn write(home: &World, relative: &str, content: &str) {
    let path = home.home_dir().join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// `codecrew --allow-home tools call TOOL` in `mode`: the result, and the whole stdout.
fn call(home: &World, mode: &str, tool: &str, input: Value) -> (Value, String) {
    let input = input.to_string();
    let output = home.run(&[
        "--allow-home",
        "tools",
        "call",
        tool,
        "--input",
        &input,
        "--mode",
        mode,
    ]);
    (tool_result(&output), text(&output.stdout))
}

/// The run stopped before anything ran, with exit 2 and a message naming the fix.
#[track_caller]
fn refused(output: &Output, what: &str) {
    assert_exit(output, 2);
    let stderr = text(&output.stderr);
    for fix in [
        what,
        "not a project",
        "cd into a project",
        "--workdir DIR",
        "--allow-home",
    ] {
        assert!(stderr.contains(fix), "{fix:?} missing from: {stderr}");
    }
    assert!(output.stdout.is_empty(), "{}", text(&output.stdout));
}

#[test]
fn the_commands_that_run_tools_refuse_the_home_and_what_holds_it() {
    let home = home();
    let input = json!({"path": ".config/gh/hosts.yml"}).to_string();
    let read = ["tools", "call", "read_file", "--input", input.as_str()];
    let is_home = "is your home directory";
    refused(&home.run(&["query", "hi"]), is_home);
    refused(&home.run(&["execute", "hi"]), is_home);
    refused(&home.run(&read), is_home);
    refused(&home.run(&["mcp"]), is_home);
    refused(&home.run(&["doctor", "--live"]), is_home);
    refused(&home.run(&["init"]), is_home);
    assert!(!home.home_dir().join("codecrew.toml").exists());
    let envelope = json!({"name": "codecrew:read_file", "input": {"path": ".yarnrc.yml"}});
    refused(
        &output_with_stdin(&mut home.command(&["intercept"]), &envelope.to_string()),
        is_home,
    );
    // Named with --workdir: the home (as `cd ~` would give it), a folder above it, `/`.
    let root = home.home_dir();
    let root = root.to_str().unwrap();
    let mut workdir_home = vec!["--workdir", root];
    workdir_home.extend(read);
    refused(&home.run(&workdir_home), is_home);
    let above = home.home_dir();
    let above = above.parent().unwrap().to_str().unwrap();
    let mut workdir_above = vec!["--workdir", above];
    workdir_above.extend(read);
    refused(&home.run(&workdir_above), "holds your home directory");
    let mut workdir_root = vec!["--workdir", "/"];
    workdir_root.extend(read);
    refused(&home.run(&workdir_root), "/ is the whole file system");

    // What runs no tool still runs in the home; a project beneath it is a project.
    assert_exit(&home.run(&["tools", "list"]), 0);
    assert_exit(&home.run(&["prompt", "hi"]), 0);
    let project = home.run(&[
        "--workdir",
        "proj",
        "tools",
        "call",
        "read_file",
        "--input",
        r#"{"path":"README.md"}"#,
    ]);
    assert_exit(&project, 0);
    assert!(text(&project.stdout).contains("hello from the project"));
}

#[test]
fn opted_in_no_credential_of_the_home_comes_back_from_a_tool() {
    let home = home();
    for mode in ["query", "execute"] {
        for path in [
            ".config/gh/hosts.yml",
            ".someapp/session.txt",
            ".yarnrc.yml",
        ] {
            let (result, stdout) = call(&home, mode, "read_file", json!({ "path": path }));
            assert_eq!(result["status"], "denied", "{mode} {path}: {result:#}");
            assert!(!stdout.contains(TOKEN), "{mode} {path}: {stdout}");
        }
        let (result, stdout) = call(
            &home,
            mode,
            "run_command",
            json!({"command": "cat .someapp/session.txt"}),
        );
        assert_ne!(result["status"], "ok", "{mode}: {result:#}");
        assert!(!stdout.contains(TOKEN), "{mode}: {stdout}");
        // A search over the whole home finds the project's file (the control), and no
        // credential.
        for pattern in [TOKEN, "hello from"] {
            let (result, stdout) = call(
                &home,
                mode,
                "grep",
                json!({"pattern": pattern, "output_mode": "content"}),
            );
            assert_eq!(result["status"], "ok", "{mode}: {result:#}");
            assert!(!stdout.contains(TOKEN), "{mode}: {stdout}");
            assert_eq!(
                stdout.contains("proj/README.md"),
                pattern == "hello from",
                "{mode} {pattern}: {stdout}"
            );
        }
    }
    // The control: a file of the home that is no hidden entry is read.
    let (result, stdout) = call(
        &home,
        "query",
        "read_file",
        json!({"path": "proj/README.md"}),
    );
    assert_eq!(result["status"], "ok", "{result:#}");
    assert!(stdout.contains("hello from the project"));
}

#[test]
fn opted_in_no_listing_names_a_hidden_entry_of_the_home() {
    let home = home();
    write(&home, ".ssh/id_ed25519", "key\n");
    for mode in ["query", "execute"] {
        // (a listing, whether it lists the project too)
        let listings = [
            (
                call(&home, mode, "list_directory", json!({"depth": 3})),
                true,
            ),
            (call(&home, mode, "glob", json!({"pattern": "**/*"})), true),
            (
                call(&home, mode, "glob", json!({"pattern": ".*/**"})),
                false,
            ),
        ];
        for ((result, stdout), lists_the_project) in listings {
            assert_eq!(result["status"], "ok", "{mode}: {result:#}");
            for hidden in [
                ".config",
                ".ssh",
                "id_ed25519",
                ".someapp",
                ".yarnrc",
                "hosts.yml",
            ] {
                assert!(!stdout.contains(hidden), "{mode}: {hidden} in {stdout}");
            }
            // The control: the project is listed.
            assert_eq!(
                stdout.contains("proj/README.md"),
                lists_the_project,
                "{mode}: {stdout}"
            );
        }
    }
}

#[test]
fn doctor_in_the_home_says_it_is_no_project_and_never_advises_trusting_it() {
    let home = home();
    // The user's own Claude folder, which in the home looks like a checkout's.
    write(&home, ".claude/settings.json", "{}\n");
    let output = home
        .command(&["doctor"])
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("is your home directory, not a project"),
        "{stdout}"
    );
    assert!(stdout.contains("--workdir DIR"), "{stdout}");
    assert!(stdout.contains("is not a project to trust"), "{stdout}");
    assert!(
        !stdout.contains("add its directory to trusted_projects"),
        "{stdout}"
    );
}

/// Opted in and in `execute`, a CLI's wall writes the workspace: the home's hidden
/// entries stay out of it. A program inside Claude's wall (a hook, a misjudged command)
/// appended to `~/.bashrc`, made `~/.profile`, and planted a record in codecrew's own
/// journal (`~/.local/state/codecrew/held`), which the next codecrew would have written
/// out from outside any wall. A file of a project in the home is still written (the
/// control).
#[test]
fn opted_in_a_clis_wall_writes_no_hidden_entry_of_the_home() {
    use codecrew_policy::sandbox::{Support, support};
    if support() == Support::Unsupported {
        eprintln!("skipped: this kernel has no Landlock");
        return;
    }
    let home = home();
    write(&home, ".bashrc", "# rc\n");
    let home = home.program(
        "claude",
        "#!/bin/sh\n\
         echo 'echo planted' >> \"$HOME/.bashrc\"\n\
         echo 'echo planted' > \"$HOME/.profile\"\n\
         mkdir -p \"$HOME/.local/state/codecrew/held/1-1\"\n\
         echo '{}' > \"$HOME/.local/state/codecrew/held/1-1/0.json\"\n\
         echo control > \"$HOME/proj/out.txt\"\n\
         echo '{\"type\":\"result\",\"subtype\":\"success\",\"result\":\"ok\",\"is_error\":false}'\n",
    );
    let path = format!("{}:/usr/bin:/bin", home.path("bin").display());
    let output = home
        .command(&["--allow-home", "execute", "@claude hi"])
        .env("PATH", path)
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(
        std::fs::read_to_string(home.home_dir().join("proj/out.txt"))
            .ok()
            .as_deref(),
        Some("control\n"),
        "the CLI did not run: {stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(home.home_dir().join(".bashrc")).unwrap(),
        "# rc\n"
    );
    assert!(!home.home_dir().join(".profile").exists(), "{stderr}");
    assert!(
        !home
            .home_dir()
            .join(".local/state/codecrew/held/1-1")
            .exists(),
        "{stderr}"
    );
}
