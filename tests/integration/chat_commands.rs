//! A Ctrl-C while a chat's `/command` takes its time stops the command, not the chat
//! (issue 48): on a terminal the chat controls (`support/pty.rs`), `/mode execute` closes
//! a kept `claude` that takes its grace to end; the Ctrl-C typed meanwhile brings the
//! prompt back, the mode as it was, and the CLI still ends.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::World;
use crate::support::binary::BIN;
use crate::support::pty::Terminal;

/// A kept `claude` that keeps its command line, answers each message, and once its input
/// is closed (codecrew closing it) says so in a file and does not end: codecrew waits its
/// grace, then kills it.
const SLOW_TO_CLOSE_CLAUDE: &str = r#"#!/bin/sh
trap '' TERM INT
printf '%s\n' "$@" > "$HOME/.claude/todos/argv.$$"
while IFS= read -r line; do
  case "$line" in
    *'"type":"user"'*) ;;
    *) continue ;;
  esac
  printf '%s\n' '{"type":"system","subtype":"init","session_id":"48c10be5-5dd0-4df1-a3a5-64e422fced48","model":"fake"}'
  printf '%s\n' '{"type":"assistant","message":{"content":[{"type":"text","text":"Kept answer."}]},"session_id":"48c10be5-5dd0-4df1-a3a5-64e422fced48"}'
  printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"Kept answer.","session_id":"48c10be5-5dd0-4df1-a3a5-64e422fced48"}'
done
touch "$HOME/.claude/todos/closing"
sleep 30
"#;

const LIMIT: Duration = Duration::from_secs(60);

fn waited(what: &str, limit: Duration, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "never: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_ctrl_c_during_a_slow_command_stops_the_command_not_the_chat() {
    let machine = World::with_claude(SLOW_TO_CLOSE_CLAUDE);
    let closing = machine.home_dir().join(".claude/todos/closing");
    std::fs::create_dir_all(closing.parent().unwrap()).unwrap();
    let env = machine.env.clone();
    let mut terminal = Terminal::run(&env, Path::new(BIN), &["chat"]);
    terminal.wait_for("prompt", LIMIT, |shown| shown.contains("query> "));
    terminal.type_keys(b"@claude hello\r");
    terminal.wait_for("the answer", LIMIT, |shown| {
        shown
            .split_once("Kept answer.")
            .is_some_and(|(_, after)| after.contains("query> "))
    });
    assert!(
        machine.program_runs("claude"),
        "the CLI is kept between lines"
    );

    // The mode change closes the CLI, which takes its grace (2 s); a Ctrl-C meanwhile.
    terminal.type_keys(b"/mode execute\r");
    waited("the CLI asked to close", LIMIT, || closing.exists());
    terminal.type_keys(b"\x03");
    terminal.wait_for("the command stopped and the prompt back", LIMIT, |shown| {
        shown
            .split_once("stopped /mode")
            .is_some_and(|(_, after)| after.contains("query> "))
    });
    assert!(
        terminal.wait(Duration::from_millis(200)).is_none(),
        "the chat ended:\n{}",
        terminal.text()
    );

    // The mode is as it was; the CLI it was closing is gone all the same.
    terminal.type_keys(b"/mode\r");
    terminal.wait_for("the mode", LIMIT, |shown| {
        shown
            .split_once("stopped /mode")
            .is_some_and(|(_, after)| after.contains("mode query\r\n"))
    });
    waited("the CLI closed", Duration::from_secs(20), || {
        !machine.program_runs("claude")
    });

    // And the chat goes on: the agent answers again (a CLI of its own), then it ends as
    // asked.
    terminal.type_keys(b"@claude again\r");
    terminal.wait_for("the second answer", LIMIT, |shown| {
        shown
            .rsplit_once("/mode")
            .is_some_and(|(_, after)| after.contains("Kept answer."))
    });
    // It went on from where the first CLI's conversation stood: the close the Ctrl-C
    // stopped waiting for still gave it back.
    let resumed = std::fs::read_dir(closing.parent().unwrap())
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("argv."))
        .any(|entry| {
            std::fs::read_to_string(entry.path())
                .unwrap()
                .lines()
                .any(|arg| arg == "--resume=48c10be5-5dd0-4df1-a3a5-64e422fced48")
        });
    assert!(resumed, "the second CLI did not resume the first's session");
    terminal.type_keys(b"/exit\r");
    let status = terminal.wait(LIMIT).expect("the chat ended");
    assert_eq!(status.code(), Some(0), "{}", terminal.text());
    waited(
        "the CLI ended with the chat",
        Duration::from_secs(20),
        || !machine.program_runs("claude"),
    );
}
