//! Three real CLIs given one task in `execute`: each works in a git worktree of its own
//! (its CLI started there, its wall around it), the table compares them, one is applied
//! and the others removed.

use super::*;
use crate::support::git::{git, repository_with};

const CREW: [&str; 3] = ["claude", "codex", "gemini"];

#[test]
fn three_clis_fix_one_file_apart_and_the_one_whose_check_passes_is_applied() {
    let mut script = Script::new().rule(Rule::on_prompt(FOLLOW_UP, Reply::text("Done.")));
    for cli in CREW {
        let write = envelope(
            "write_file",
            json!({"path": "app.py", "content": format!("print(\"fixed by {cli}\")\n")}),
        );
        script = script.rule(Rule::on_prompt(
            format!("E2E-WT-{cli}"),
            Reply::text(format!("Fixing.\n\n{}", fenced(&[write]))),
        ));
    }
    let Some(world) = World::new("e2e-worktrees", script) else {
        return;
    };
    let workspace = world.workspace();
    std::fs::write(workspace.join("app.py"), "print(\"bug\")\n").unwrap();
    repository_with(&workspace, &["app.py"]);
    std::fs::write(
        world.home_dir().join(".gitconfig"),
        "[user]\n\tname = Test\n\temail = test@example.com\n",
    )
    .unwrap();
    let tasks: Vec<String> = CREW
        .iter()
        .map(|cli| format!("@{cli} E2E-WT-{cli} fix app.py"))
        .collect();
    let mut args = vec!["--yes", "--worktrees", "--check", "grep -q codex app.py"];
    args.extend(tasks.iter().map(String::as_str));
    let (run, doc) = world.json("execute", &args);
    run.assert_code(0);
    // The checkout is as it was: each fix is in its agent's worktree alone.
    assert_eq!(
        std::fs::read_to_string(workspace.join("app.py")).unwrap(),
        "print(\"bug\")\n"
    );
    let worktrees = doc["worktrees"].as_array().unwrap();
    assert_eq!(worktrees.len(), 3, "{doc}");
    for (row, cli) in worktrees.iter().zip(CREW) {
        assert_eq!(row["agent"], cli, "{doc}");
        assert_eq!(row["change"]["files"], 1, "{cli}: {doc}");
        assert_eq!(row["change"]["added"], 1);
        assert_eq!(row["change"]["removed"], 1);
        assert_eq!(row["check"]["passed"], cli == "codex", "{cli}: {doc}");
        let path = Path::new(row["path"].as_str().unwrap());
        assert_eq!(
            std::fs::read_to_string(path.join("app.py")).unwrap(),
            format!("print(\"fixed by {cli}\")\n")
        );
    }
    let run_id = worktrees[0]["run"].as_str().unwrap().to_owned();

    // The one whose check passed, applied as one commit; nothing of the run is left.
    let applied = world.codecrew(&["apply", &run_id, "codex", "--squash"]);
    applied.assert_code(0);
    assert!(applied.stdout.contains("removed run"), "{}", applied.stdout);
    assert_eq!(
        std::fs::read_to_string(workspace.join("app.py")).unwrap(),
        "print(\"fixed by codex\")\n"
    );
    let log = Command::new("git")
        .args(["log", "--oneline"])
        .current_dir(&workspace)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&log.stdout).contains("@codex's change"));
    for row in worktrees {
        assert!(!Path::new(row["path"].as_str().unwrap()).exists(), "{row}");
    }
    // And one more command takes the apply back.
    let undone = world.codecrew(&["undo"]);
    undone.assert_code(0);
    assert_eq!(
        std::fs::read_to_string(workspace.join("app.py")).unwrap(),
        "print(\"bug\")\n",
        "{}",
        undone.stdout
    );
    git(&workspace, &["worktree", "prune"]);
    let branches = Command::new("git")
        .args(["branch", "--list", "codecrew/*"])
        .current_dir(&workspace)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&branches.stdout), "");
}

/// A CLI's own tools follow it into its worktree: Codex's own patch with a relative
/// path lands there, and Claude's own write to the main checkout (a path the model
/// knows or guesses) does not get through.
#[test]
fn a_clis_own_tools_write_its_worktree_and_never_the_checkout() {
    let Some(world) = World::new("e2e-worktrees-native", Script::new()) else {
        return;
    };
    let workspace = world.workspace();
    std::fs::write(workspace.join("app.py"), "print(\"bug\")\n").unwrap();
    repository_with(&workspace, &["app.py"]);
    let escaped = workspace.join("escaped.txt");
    world.server.set_script(
        Script::new()
            .rule(Rule::on_any_tool_result(Reply::text("Done.")))
            .rule(Rule::on_prompt(
                "E2E-WT-NATIVE-CODEX",
                Reply::tool(
                    "apply_patch",
                    json!("*** Begin Patch\n*** Add File: native.txt\n+NATIVE\n*** End Patch\n"),
                ),
            ))
            .rule(Rule::on_prompt(
                "E2E-WT-NATIVE-CLAUDE",
                Reply::tool("Write", json!({"file_path": escaped, "content": "ESCAPED"})),
            )),
    );
    let (run, doc) = world.json(
        "execute",
        &[
            "--yes",
            "--worktrees",
            "@codex E2E-WT-NATIVE-CODEX add a file",
            "@claude E2E-WT-NATIVE-CLAUDE write a file",
        ],
    );
    run.assert_code(0);
    assert!(
        !escaped.exists(),
        "claude's own write reached the checkout: {doc}"
    );
    let codex = &doc["worktrees"][0];
    assert_eq!(codex["agent"], "codex", "{doc}");
    let path = Path::new(codex["path"].as_str().unwrap_or_default());
    assert_eq!(
        std::fs::read_to_string(path.join("native.txt")).unwrap_or_default(),
        "NATIVE\n",
        "{doc}"
    );
    assert!(!workspace.join("native.txt").exists());
}
