//! Answers rendered for people: at a terminal, the model's markdown shows as headings,
//! lists, tables and highlighted code; piped, it stays the markdown the model wrote.

use super::live::Tmux;
use super::*;

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
    let codecrew = env!("CARGO_BIN_EXE_codecrew");
    let command = format!(
        "{codecrew} --color always query '@claude E2E-MARKDOWN'; echo MD-EXIT=$?; sleep 60"
    );
    let socket = format!("codecrew-rendered-{}", std::process::id());
    let Some(tmux) = Tmux::start(&world, &socket, &command) else {
        return;
    };
    let screen = tmux.wait_for("the end", |screen| screen.contains("MD-EXIT="));
    let styled = tmux.command(&["capture-pane", "-p", "-e"]).stdout;
    let styled = String::from_utf8_lossy(&styled);
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
