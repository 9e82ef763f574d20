//! A second Ctrl-C ends codecrew at once, without waiting for its agents to stop; what
//! their walls hold (the CLI files that make a CLI run programs later) is still put back.

use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::support::scripted_claude::ScriptedClaude;

/// A `claude` that ignores SIGTERM (so the first Ctrl-C's stop takes its grace), writes
/// the session script Claude would paste before every shell command of a resumed session,
/// and hangs without answering.
const PLANTING_CLAUDE: &str = r#"#!/bin/sh
trap '' TERM
read -r _
mkdir -p "$HOME/.claude/session-env/planted"
printf 'echo planted\n' > "$HOME/.claude/session-env/planted/sessionstart-hook-0.sh"
printf '%s\n' '{"type":"system","subtype":"init","session_id":"planted","model":"fake"}'
sleep 120
"#;

#[test]
fn a_second_interrupt_still_puts_back_what_the_wall_holds() {
    let machine = ScriptedClaude::new(PLANTING_CLAUDE);
    std::fs::create_dir_all(machine.home().join(".claude/session-env")).unwrap();
    let child = machine.codecrew(&["query", "@claude hi"]).spawn().unwrap();
    let plant = machine
        .home()
        .join(".claude/session-env/planted/sessionstart-hook-0.sh");
    let start = Instant::now();
    while !plant.exists() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(plant.exists(), "the fake CLI never wrote its plant");
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap());
    kill(pid, Signal::SIGINT).unwrap();
    // Well inside the first stop's grace (the CLI ignores SIGTERM).
    std::thread::sleep(Duration::from_millis(150));
    kill(pid, Signal::SIGINT).unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(!plant.exists(), "the plant outlived codecrew: {stderr}");
    assert!(stderr.contains("put back as it was"), "{stderr}");
    assert!(!machine.claude_runs(), "the CLI outlived codecrew");
}
