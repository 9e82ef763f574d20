//! Answers rendered for people: at a terminal, the model's markdown shows as headings,
//! lists, tables and highlighted code; piped, it stays the markdown the model wrote.

use super::*;
use crate::support::clis::ci;

const ANSWER: &str = "# Release notes\n\nThe **build** is faster.\n\n- first point\n- second point\n\n\
    | Crate | Size |\n|-------|-----:|\n| core | 12 |\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\
    See [the guide](https://guide.example/x).\n";

#[test]
fn at_a_terminal_the_answer_is_rendered_and_piped_it_is_markdown() {
    let script = Script::new().on_prompt("E2E-MARKDOWN", Reply::text(ANSWER));
    let Some(world) = World::new("e2e-rendered", script) else {
        return;
    };
    // Piped: the model's own text, byte for byte.
    let piped = world.codecrew(&["query", "@claude E2E-MARKDOWN"]);
    piped.assert_code(0);
    assert_eq!(piped.stdout.trim_end(), ANSWER.trim_end());
    if Command::new("tmux").arg("-V").output().is_err() {
        assert!(!ci(), "tmux is missing; .ci/run installs it");
        return;
    }
    let socket = format!("codecrew-rendered-{}", std::process::id());
    let tmux = |args: &[&str]| {
        let mut command = Command::new("tmux");
        world.env.apply(&mut command);
        command.args(["-L", &socket, "-f", "/dev/null"]).args(args);
        command.output().unwrap()
    };
    let codecrew = env!("CARGO_BIN_EXE_codecrew");
    let command = format!(
        "{codecrew} --color always query '@claude E2E-MARKDOWN'; echo MD-EXIT=$?; sleep 60"
    );
    let workspace = world.workspace();
    let started = tmux(&[
        "new-session",
        "-d",
        "-x",
        "100",
        "-y",
        "40",
        "-c",
        workspace.to_str().unwrap(),
        &command,
    ]);
    assert!(started.status.success(), "{started:?}");
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let (screen, styled) = loop {
        let screen = String::from_utf8_lossy(&tmux(&["capture-pane", "-p"]).stdout).into_owned();
        if screen.contains("MD-EXIT=") {
            let styled = tmux(&["capture-pane", "-p", "-e"]).stdout;
            break (screen, String::from_utf8_lossy(&styled).into_owned());
        }
        assert!(std::time::Instant::now() < deadline, "{screen}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let _ = tmux(&["kill-server"]);
    assert!(screen.contains("MD-EXIT=0"), "{screen}");
    let lines: Vec<&str> = screen.lines().map(str::trim_end).collect();
    for expected in [
        "Release notes",
        "The build is faster.",
        "• first point",
        "• second point",
        "Crate │ Size",
        "core  │   12",
        "  fn main() {",
        "      println!(\"hi\");",
        "See the guide (https://guide.example/x).",
    ] {
        assert!(
            lines.contains(&expected),
            "{expected:?} not on the screen:\n{screen}"
        );
    }
    for markup in ["# Release", "**build**", "```", "|-------|", "[the guide]"] {
        assert!(!screen.contains(markup), "{markup} shown raw:\n{screen}");
    }
    // The code is highlighted: 256-colour foregrounds on its line.
    let code_line = styled
        .lines()
        .find(|line| line.contains("main"))
        .unwrap_or_default();
    assert!(
        code_line.contains("38;5;"),
        "not highlighted: {code_line:?}"
    );
}
