//! The live view in a real terminal: two agents streaming at once under tmux, their
//! status lines while they run, their lines whole and named, nothing left behind; and a
//! CLI's own tool call asked about at that terminal.

use std::time::Instant;

use super::*;
use crate::support::clis::ci;

/// A tmux server of its own (its socket named after the test), running one command in a
/// 150×40 window with the test's environment.
pub(super) struct Tmux {
    socket: String,
}

impl Tmux {
    pub(super) fn start(world: &World, socket: &str, shell_command: &str) -> Option<Tmux> {
        Tmux::start_with(world, &world.env, socket, shell_command)
    }

    /// [`Tmux::start`] with the environment `env`.
    pub(super) fn start_with(
        world: &World,
        env: &CliEnv,
        socket: &str,
        shell_command: &str,
    ) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            assert!(!ci(), "tmux is missing; .ci/run installs it");
            eprintln!("note: skipping a terminal test: tmux is not installed");
            return None;
        }
        let mut command = Command::new("tmux");
        env.apply(&mut command);
        command
            .args(["-L", socket, "-f", "/dev/null", "new-session", "-d"])
            .args(["-x", "150", "-y", "40", "-c"])
            .arg(world.workspace())
            .arg(shell_command);
        let status = command.status().unwrap();
        assert!(status.success(), "tmux did not start");
        Some(Tmux {
            socket: socket.to_owned(),
        })
    }

    pub(super) fn capture(&self) -> String {
        let output = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// `tmux <args>` on this server (set an option, read the pane's title, ...).
    pub(super) fn command(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .unwrap()
    }

    /// The screen with everything scrolled off it.
    pub(super) fn history(&self) -> String {
        let output = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-S", "-"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Types `keys` (tmux key names: `o`, `Enter`).
    pub(super) fn send_keys(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys"])
            .args(keys)
            .status()
            .unwrap();
        assert!(status.success(), "tmux send-keys failed");
    }

    /// The screen once `done` holds of it, or a panic with the last screen.
    pub(super) fn wait_for(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        loop {
            let screen = self.capture();
            if done(&screen) {
                return screen;
            }
            assert!(
                started.elapsed() < Duration::from_secs(90),
                "waited for {what}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

#[test]
fn two_agents_stream_with_a_status_line_each_in_a_terminal() {
    let script = Script::new()
        .rule(Rule::on_prompt(
            "E2E-LIVE-A",
            Reply::text("Alpha first line.\nAlpha second line.").with_delay_ms(4000),
        ))
        .rule(Rule::on_prompt(
            "E2E-LIVE-B",
            Reply::text("Beta only line.").with_delay_ms(4000),
        ));
    let Some(world) = World::new("e2e-live", script) else {
        return;
    };
    let codecrew = env!("CARGO_BIN_EXE_codecrew");
    let command = format!(
        "{codecrew} --color never query '@claude E2E-LIVE-A' '@gemini E2E-LIVE-B'; \
         echo LIVE-EXIT=$?; sleep 60"
    );
    let Some(tmux) = Tmux::start(
        &world,
        &format!("codecrew-live-{}", std::process::id()),
        &command,
    ) else {
        return;
    };
    // While the model thinks: one status line per agent, with its turn.
    let running = tmux.wait_for("both status lines", |screen| {
        screen
            .lines()
            .any(|l| l.contains("@claude") && l.contains("turn 1"))
            && screen
                .lines()
                .any(|l| l.contains("@gemini") && l.contains("turn 1"))
    });
    assert!(!running.contains("LIVE-EXIT"), "{running}");
    // At the end: each agent's lines whole and named, the status lines gone, the usage.
    let end = tmux.wait_for("the end of the run", |screen| screen.contains("LIVE-EXIT="));
    assert!(end.contains("LIVE-EXIT=0"), "{end}");
    for line in [
        "[claude] Alpha first line.",
        "[claude] Alpha second line.",
        "[gemini] Beta only line.",
    ] {
        assert!(end.lines().any(|l| l == line), "{line:?} missing:\n{end}");
    }
    assert!(!end.lines().any(|l| l.contains("turn 1")), "{end}");
    assert!(
        end.lines()
            .any(|l| l.starts_with("@claude") && l.contains("1 turn,")),
        "{end}"
    );
    assert!(
        end.lines().any(|l| l.starts_with("total: 2 turns")),
        "{end}"
    );
}

/// A CLI's own write of a protected file is asked about once, at the terminal, with the
/// exact call and the CLI's tool named; answered "once", it runs.
#[test]
fn a_clis_own_write_is_asked_about_once_at_the_terminal() {
    let Some(world) = World::new("e2e-ask-native", Script::new()) else {
        return;
    };
    let target = world.workspace().join(".env");
    world.server.set_script(
        Script::new()
            .rule(Rule::on_any_tool_result(Reply::text("Wrote it.")))
            .rule(Rule::on_prompt(
                "E2E-ASK-NATIVE",
                Reply::text("I will update the settings.")
                    .with_tool_call("Write", json!({"file_path": target, "content": "ASKED=1"})),
            )),
    );
    let codecrew = env!("CARGO_BIN_EXE_codecrew");
    let command = format!(
        "{codecrew} --color never execute '@claude E2E-ASK-NATIVE'; echo ASK-EXIT=$?; sleep 60"
    );
    let Some(tmux) = Tmux::start(
        &world,
        &format!("codecrew-ask-{}", std::process::id()),
        &command,
    ) else {
        return;
    };
    let asked = tmux.wait_for("the question", |screen| screen.contains("Allow?"));
    assert!(
        asked.contains(
            "the model wants to use claude's own Write tool, judged as codecrew:write_file"
        ),
        "{asked}"
    );
    assert!(
        asked.contains(&format!("path: {}", target.display())),
        "{asked}"
    );
    assert!(!target.exists(), "written before the answer");
    // No status frame glued to the model's unfinished line; the question on its own.
    assert!(
        asked
            .lines()
            .any(|line| line.trim_end() == "I will update the settings."),
        "{asked}"
    );
    assert!(
        !asked.contains("· turn"),
        "a status frame was left behind:\n{asked}"
    );
    tmux.send_keys(&["o", "Enter"]);
    let end = tmux.wait_for("the end of the run", |screen| screen.contains("ASK-EXIT="));
    assert!(end.contains("ASK-EXIT=0"), "{end}");
    assert!(end.contains("Wrote it."), "{end}");
    assert_eq!(end.matches("Allow?").count(), 1, "asked once:\n{end}");
    assert!(
        !end.contains("· turn"),
        "a status frame was left behind:\n{end}"
    );
    assert!(end.contains("1 tool call (1 of the CLI's own)"), "{end}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "ASKED=1");
}
