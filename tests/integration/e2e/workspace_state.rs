//! What codecrew keeps in a workspace (threads, their locks, the audit log) stays out of
//! version control and private to the user.

use std::os::unix::fs::MetadataExt;

use super::*;
use crate::support::git::{git, repository_with};

#[test]
fn a_thread_and_the_audit_log_leave_git_status_clean_and_are_private() {
    let script = Script::new()
        .on_tool_result("", Reply::text("Read it."))
        .on_prompt(
            "E2E-STATE",
            Reply::text(fenced(&[envelope(
                "read_file",
                json!({"path": "README.md"}),
            )])),
        );
    let Some(world) = World::new("e2e-workspace-state", script) else {
        return;
    };
    let workspace = world.workspace();
    std::fs::write(workspace.join("README.md"), "# A project\n").unwrap();
    repository_with(&workspace, &["README.md"]);
    let run = world.codecrew(&["query", "--thread", "notes", "--audit", "@claude E2E-STATE"]);
    run.assert_code(0);
    let state = workspace.join(".codecrew");
    for kept in ["threads/notes.json", "threads/notes.lock", "audit.jsonl"] {
        let meta = std::fs::metadata(state.join(kept))
            .unwrap_or_else(|error| panic!("{kept}: {error}\n{}", run.stderr));
        assert_eq!(meta.mode() & 0o077, 0, "{kept} is readable by others");
    }
    for dir in [state.clone(), state.join("threads")] {
        let mode = std::fs::metadata(&dir).unwrap().mode();
        assert_eq!(mode & 0o077, 0, "{} is open to others", dir.display());
    }
    let status = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all"])
        .current_dir(&workspace)
        .output()
        .unwrap();
    assert!(status.status.success());
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.trim().is_empty(),
        "git sees codecrew's files:\n{status}"
    );
    // `git add -A` takes nothing of it either.
    git(&workspace, &["add", "-A"]);
    let staged = Command::new("git")
        .args(["diff", "--cached", "--name-only"])
        .current_dir(&workspace)
        .output()
        .unwrap();
    assert!(
        staged.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&staged.stdout)
    );
}
