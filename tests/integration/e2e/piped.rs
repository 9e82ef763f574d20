//! A pipe into codecrew: `git diff | codecrew query "@claude review"` gives the model the
//! piped text beside the task, with every CLI and with two agents at once; `-` reads the
//! task itself; binary input is refused; a pipe nobody writes to does not hang.

use std::process::Stdio;

use super::*;
use crate::support::clis::run_with_stdin;

const DIFF: &str = "diff --git a/src/lib.rs b/src/lib.rs\n+fn piped_marker_e2e() {}\n";

impl World {
    fn codecrew_fed(&self, stdin: Stdio, feed: Option<&[u8]>, args: &[&str]) -> CliRun {
        let mut command = Command::new(env!("CARGO_BIN_EXE_codecrew"));
        self.env.apply(&mut command);
        command.args(args);
        run_with_stdin(&mut command, stdin, feed.map(<[u8]>::to_vec), TIMEOUT)
    }

    /// How many of the model's requests carry `needle` anywhere in their body.
    fn requests_with(&self, needle: &str) -> usize {
        self.server
            .model_requests()
            .iter()
            .filter(|request| request.body.to_string().contains(needle))
            .count()
    }
}

fn script() -> Script {
    Script::new().default_reply(Reply::text("Reviewed."))
}

per_cli!(piped_text_reaches_every_clis_model_beside_the_task);

fn piped_text_reaches_every_clis_model_beside_the_task(agent: &str) {
    let Some(world) = World::new(&format!("e2e-piped-{agent}"), script()) else {
        return;
    };
    let before = world.requests_with("piped_marker_e2e");
    let task = format!("@{agent} review this E2E-PIPED");
    let run = world.codecrew_fed(Stdio::piped(), Some(DIFF.as_bytes()), &["query", &task]);
    run.assert_code(0);
    assert!(run.stdout.contains("Reviewed."), "{agent}: {}", run.stdout);
    assert!(
        world.requests_with("piped_marker_e2e") > before,
        "{agent}: the piped text never reached the model"
    );
}

#[test]
fn piped_text_reaches_two_agents_at_once() {
    let Some(world) = World::new("e2e-piped-two", script()) else {
        return;
    };
    // Two agents at once: each gets it.
    let before = world.requests_with("piped_marker_e2e");
    let run = world.codecrew_fed(
        Stdio::piped(),
        Some(DIFF.as_bytes()),
        &["query", "--output", "json", "@claude @gemini review this"],
    );
    run.assert_code(0);
    assert!(world.requests_with("piped_marker_e2e") >= before + 2);
    let document: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(document["results"].as_array().unwrap().len(), 2);
}

#[test]
fn the_task_from_stdin_binary_input_and_a_silent_pipe() {
    let Some(world) = World::new("e2e-piped-rules", script()) else {
        return;
    };
    // `-`: stdin is the task, mentions included.
    let run = world.codecrew_fed(
        Stdio::piped(),
        Some(b"@claude explain piped_task_marker"),
        &["query", "--thread", "piped", "-"],
    );
    run.assert_code(0);
    assert_eq!(world.requests_with("piped_task_marker"), 1);
    // The thread records what the model was given.
    let shown = world.codecrew(&["threads", "show", "piped"]);
    assert!(
        shown.stdout.contains("piped_task_marker"),
        "{}",
        shown.stdout
    );
    // Binary: refused, the fix named, no model request.
    let before = world.server.model_requests().len();
    let run = world.codecrew_fed(
        Stdio::piped(),
        Some(b"PK\x03\x04\x00\x00binary"),
        &["query", "@claude what is this"],
    );
    run.assert_code(2);
    assert!(run.stderr.contains("stdin is not text"), "{}", run.stderr);
    assert_eq!(world.server.model_requests().len(), before);
    // A pipe whose writer stays open and silent: the run goes on without it.
    let (reader, writer) = std::io::pipe().unwrap();
    let run = world.codecrew_fed(
        Stdio::from(reader),
        None,
        &["query", "--stdin-timeout", "1s", "@claude hello E2E-SILENT"],
    );
    drop(writer);
    run.assert_code(0);
    assert!(
        run.stderr.contains("stdin gave nothing in 1 s"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("Reviewed."), "{}", run.stdout);
}
