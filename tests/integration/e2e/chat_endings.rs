//! However a chat ends — its terminal closed (SIGHUP), SIGTERM, SIGINT at the prompt,
//! Ctrl-D — and whether at the prompt or during an answer, it ends within two seconds:
//! its kept Claude stopped (its process group gone), what Claude's wall held put back
//! (the session script a trusted hook planted is gone the moment codecrew is), the
//! thread kept, and the exit code saying how it ended. The chat runs on a real terminal
//! it controls (`support/pty.rs`), closed from the master's side as a window is. The
//! same for `codecrew execute` at a terminal that closes.

use std::path::PathBuf;
use std::time::Instant;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::interrupt::processes_in;
use super::*;
use crate::support::pty::Terminal;

/// How a test ends the chat.
#[derive(Clone, Copy, Debug)]
enum End {
    /// The terminal closed.
    HangUp,
    Signal(Signal),
    /// Ctrl-D on an empty line.
    CtrlD,
}

/// A world whose script answers `E2E-END-ONE` and never answers `E2E-END-SLOW`, in a
/// trusted project whose Claude hook (at Claude's start and at each prompt) plants a
/// session script in Claude's `session-env/`, which Claude's wall holds whole; the
/// environment that trusts it, and the plant.
fn planting(test: &str) -> Option<(World, CliEnv, PathBuf)> {
    let script = Script::new()
        .rule(Rule::on_prompt("E2E-END-ONE", Reply::text("Answer one.")))
        .rule(Rule::on_prompt("E2E-END-SLOW", Reply::hang()));
    let world = World::new(test, script)?;
    let session_env = world.home.home().join(".claude/session-env");
    std::fs::create_dir_all(&session_env).unwrap();
    let plant = session_env.join("planted/sessionstart-hook-0.sh");
    let env = trusted_with_a_planting_hook(&world, &plant);
    Some((world, env, plant))
}

const LIMIT: Duration = Duration::from_secs(90);

/// A chat in execute mode with @claude, one answer in; then, during a second answer when
/// `during_answer`, ended by `end`.
fn a_chat_ended(test: &str, end: End, during_answer: bool, code: i32) {
    let Some((world, env, plant)) = planting(test) else {
        return;
    };
    let terminal = Terminal::run(
        &env,
        Path::new(env!("CARGO_BIN_EXE_codecrew")),
        &["chat", "--mode", "execute", "--thread", "ends"],
    );
    chat_then_end(&world, terminal, &plant, end, during_answer, code);
}

/// The chat on `terminal`: one answer in; then, during a second answer when
/// `during_answer`, ended by `end`.
fn chat_then_end(
    world: &World,
    mut terminal: Terminal,
    plant: &Path,
    end: End,
    during_answer: bool,
    code: i32,
) {
    terminal.wait_for("prompt", LIMIT, |shown| shown.contains("execute> "));
    terminal.type_keys(b"@claude first E2E-END-ONE\r");
    terminal.wait_for("answer and prompt", LIMIT, |shown| {
        shown
            .split_once("Answer one.")
            .is_some_and(|(_, after)| after.contains("execute> "))
    });
    assert!(
        plant.exists(),
        "the hook planted nothing:\n{}",
        terminal.text()
    );
    if during_answer {
        terminal.type_keys(b"slow E2E-END-SLOW\r");
        wait_for_the_slow_request(world);
    }
    ends_cleanly(world, terminal, end, plant, code);
    let thread = world.codecrew(&["threads", "show", "ends"]);
    thread.assert_code(0);
    assert!(thread.stdout.contains("Answer one."), "{}", thread.stdout);
}

/// `codecrew execute` at a terminal, ended by `end` while Claude waits for its answer.
fn a_run_at_a_terminal_ended(test: &str, end: End, code: i32) {
    let Some((world, env, plant)) = planting(test) else {
        return;
    };
    let terminal = Terminal::run(
        &env,
        Path::new(env!("CARGO_BIN_EXE_codecrew")),
        &["execute", "@claude E2E-END-SLOW"],
    );
    wait_for_the_slow_request(&world);
    assert!(plant.exists(), "the hook planted nothing");
    ends_cleanly(&world, terminal, end, &plant, code);
}

fn wait_for_the_slow_request(world: &World) {
    let asked = Instant::now();
    while !world.server.requests().iter().any(|request| {
        request
            .prompt
            .as_deref()
            .is_some_and(|p| p.contains("E2E-END-SLOW"))
    }) {
        assert!(
            asked.elapsed() < LIMIT,
            "Claude never asked for the slow answer"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Ends codecrew on `terminal` by `end`: it exits `code` within two seconds, and the
/// moment it is gone the plant is gone too, and nothing of its CLI runs.
fn ends_cleanly(world: &World, mut terminal: Terminal, end: End, plant: &Path, code: i32) {
    let workspace = world.workspace().canonicalize().unwrap();
    let groups = cli_groups(&workspace, terminal.pid());
    assert!(!groups.is_empty(), "no CLI runs in the workspace");
    let ended = Instant::now();
    match end {
        End::HangUp => terminal.hang_up(),
        End::Signal(signal) => kill(Pid::from_raw(terminal.pid()), signal).unwrap(),
        End::CtrlD => terminal.type_keys(b"\x04"),
    }
    let status = terminal.wait(Duration::from_secs(10));
    let took = ended.elapsed();
    // The moment codecrew is gone, before anything else could put it back.
    let planted_left = plant.exists();
    let alive = alive_in(&groups);
    let shown = terminal.text();
    let status = status.unwrap_or_else(|| panic!("codecrew did not end:\n{shown}"));
    assert!(!planted_left, "the plant outlived codecrew:\n{shown}");
    assert_eq!(status.code(), Some(code), "{status:?}\n{shown}");
    assert!(
        took < Duration::from_secs(2),
        "codecrew took {took:?} to end:\n{shown}"
    );
    assert_eq!(
        alive,
        Vec::<i32>::new(),
        "the CLI's processes outlived codecrew"
    );
}

/// The world's environment with a user config that trusts the workspace, whose Claude
/// settings run a hook that writes `plant`.
fn trusted_with_a_planting_hook(world: &World, plant: &Path) -> CliEnv {
    let command = format!(
        "mkdir -p '{}' && echo 'echo planted' > '{}'",
        plant.parent().unwrap().display(),
        plant.display()
    );
    let hook = json!([{"hooks": [{"type": "command", "command": command}]}]);
    let settings = world.workspace().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        json!({"hooks": {"SessionStart": hook, "UserPromptSubmit": hook}}).to_string(),
    )
    .unwrap();
    world.trusting()
}

/// The process groups of what runs in `workspace` beside codecrew (`chat`): its CLIs.
fn cli_groups(workspace: &Path, chat: i32) -> Vec<i32> {
    let mut groups: Vec<i32> = processes_in(workspace)
        .iter()
        .filter_map(|pid| pid.parse::<i32>().ok())
        .filter(|pid| *pid != chat)
        .filter_map(|pid| stat(pid).map(|(group, _)| group))
        .filter(|group| *group != chat)
        .collect();
    groups.sort_unstable();
    groups.dedup();
    groups
}

/// The processes still alive (not zombies) in `groups`.
fn alive_in(groups: &[i32]) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            stat(*pid).is_some_and(|(group, state)| groups.contains(&group) && state != 'Z')
        })
        .collect()
}

/// A process's group and state, from `/proc/<pid>/stat`.
fn stat(pid: i32) -> Option<(i32, char)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command's name in parentheses: state, parent, group.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let group = fields.nth(1)?.parse().ok()?;
    Some((group, state))
}

#[test]
fn closing_the_terminal_at_the_prompt_ends_the_chat_with_what_it_held_put_back() {
    a_chat_ended("e2e-chat-hang-up", End::HangUp, false, 129);
}

#[test]
fn closing_the_terminal_during_an_answer_ends_the_chat_too() {
    a_chat_ended("e2e-chat-hang-up-answering", End::HangUp, true, 129);
}

/// The terminal's session leader is a shell that ignores SIGHUP (and so passes none on):
/// the chat, busy with an answer and reading nothing, still sees the terminal go.
#[test]
fn closing_the_terminal_ends_the_chat_even_when_no_sighup_reaches_it() {
    let Some((world, env, plant)) = planting("e2e-chat-hang-up-no-sighup") else {
        return;
    };
    let chat = format!(
        "trap '' HUP; '{}' chat --mode execute --thread ends",
        env!("CARGO_BIN_EXE_codecrew")
    );
    let terminal = Terminal::run(&env, Path::new("sh"), &["-c", &chat]);
    chat_then_end(&world, terminal, &plant, End::HangUp, true, 129);
}

#[test]
fn sigterm_at_the_prompt_ends_the_chat_with_143() {
    a_chat_ended("e2e-chat-term", End::Signal(Signal::SIGTERM), false, 143);
}

#[test]
fn sigterm_during_an_answer_ends_the_chat_with_143() {
    a_chat_ended(
        "e2e-chat-term-answering",
        End::Signal(Signal::SIGTERM),
        true,
        143,
    );
}

#[test]
fn sigint_at_the_prompt_ends_the_chat_with_130() {
    a_chat_ended("e2e-chat-int", End::Signal(Signal::SIGINT), false, 130);
}

#[test]
fn ctrl_d_ends_the_chat_with_0_and_what_it_held_put_back() {
    a_chat_ended("e2e-chat-ctrl-d", End::CtrlD, false, 0);
}

#[test]
fn closing_the_terminal_ends_execute_with_129_and_what_it_held_put_back() {
    a_run_at_a_terminal_ended("e2e-execute-hang-up", End::HangUp, 129);
}
