//! Conversations that continue: the transcript a CLI that cannot resume is sent, and
//! `--thread`, which carries a conversation across invocations (`codecrew threads ...`).
//!
//! Most tests use a `command` agent: a shell script that saves every prompt it receives and
//! answers with the `TASK-...` word of its task, so a test can read exactly what codecrew
//! sent on each turn.

use std::path::PathBuf;
use std::process::{Command, Output};

/// The scripted text CLI. Each prompt is saved as `prompts/<nanoseconds>.<random>`, so the
/// files sort in the order they arrived. A task `TASK-TOOL...` makes it call codecrew's
/// `help` tool on its first two turns before answering.
const AGENT_SCRIPT: &str = r#"#!/bin/sh
dir=$(dirname "$0")
file=$(mktemp "$dir/prompts/$(date +%s%N).XXXXXX")
cat > "$file"
task=$(grep -o 'TASK-[A-Za-z0-9-]*' "$file" | tail -n 1)
case "$task" in
TASK-TOOL*)
    calls=$(cat "$dir/calls" 2>/dev/null || echo 0)
    if [ "$calls" -lt 2 ]; then
        echo $((calls + 1)) > "$dir/calls"
        printf 'Calling.\n```json\n{"type":"tool_use","name":"codecrew:help","input":{}}\n```\n'
        exit 0
    fi
    ;;
esac
printf 'ANSWER-%s\n' "$task"
"#;

/// A workspace, a user config declaring the scripted agent `@echo`, and the agent's files.
struct World {
    root: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let root = tempfile::tempdir().unwrap();
        let agent = root.path().join("agent");
        std::fs::create_dir_all(agent.join("prompts")).unwrap();
        std::fs::create_dir_all(root.path().join("ws")).unwrap();
        std::fs::write(agent.join("agent.sh"), AGENT_SCRIPT).unwrap();
        std::fs::write(
            root.path().join("user.toml"),
            format!(
                "[agents.echo]\nprovider = \"command\"\ncommand = {{ argv = [\"sh\", {:?}] }}\n",
                agent.join("agent.sh").display().to_string()
            ),
        )
        .unwrap();
        World { root }
    }

    fn workspace(&self) -> PathBuf {
        self.root.path().join("ws")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_codecrew"));
        command
            .args(args)
            .current_dir(self.workspace())
            .env("CODECREW_CONFIG", self.root.path().join("user.toml"))
            .env_remove("RUST_LOG");
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// The prompts the agent received, oldest first.
    fn prompts(&self) -> Vec<String> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.root.path().join("agent/prompts"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        files.sort();
        files
            .iter()
            .map(|file| std::fs::read_to_string(file).unwrap())
            .collect()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[track_caller]
fn assert_exit(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "\n--- stdout\n{}\n--- stderr\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// A CLI that cannot resume gets the transcript so far on every follow-up turn, and each
/// earlier prompt appears in it once.
#[test]
fn the_transcript_holds_each_earlier_turn_once() {
    let world = World::new();
    let output = world.run(&["query", "--raw", "@echo TASK-TOOL-ONCE go"]);
    assert_exit(&output, 0);
    assert_eq!(text(&output.stdout).trim(), "ANSWER-TASK-TOOL-ONCE");
    let prompts = world.prompts();
    assert_eq!(prompts.len(), 3, "{prompts:#?}");
    let last = &prompts[2];
    assert_eq!(count(last, "TASK-TOOL-ONCE go"), 1, "{last}");
    assert_eq!(count(last, "## Your previous answer"), 2, "{last}");
    assert_eq!(count(last, "codecrew ran the tool calls"), 2, "{last}");
}
