//! The streaming renderer: what it shows, when, and that nothing of the model's acts on
//! the terminal.

use super::*;

const ANSWER: &str = "# Report\n\nThe *answer*, with `code`.\n\n- one\n- two\n\n\
    | Name | Size |\n|------|-----:|\n| a | 1 |\n\n```rust\nfn main() {}\n```\nDone.\n";

fn rendered(pieces: &[&str], palette: Palette) -> String {
    let mut markdown = Markdown::new(palette, 60);
    let mut shown = Text::new();
    for piece in pieces {
        shown.append(&markdown.push(piece));
    }
    shown.append(&markdown.finish());
    shown.as_str().to_owned()
}

#[test]
fn an_answer_is_rendered_block_by_block() {
    let shown = rendered(&[ANSWER], Palette::PLAIN);
    assert_eq!(
        shown,
        "Report\n\nThe answer, with code.\n\n• one\n• two\n\n\
         Name │ Size\n─────┼─────\na    │    1\n\n  fn main() {}\nDone.\n"
    );
}

#[test]
fn any_cut_of_the_stream_renders_the_same() {
    let whole = rendered(&[ANSWER], Palette::ANSI);
    let chars: Vec<char> = ANSWER.chars().collect();
    for cut in 1..chars.len() {
        let (a, b): (String, String) =
            (chars[..cut].iter().collect(), chars[cut..].iter().collect());
        assert_eq!(rendered(&[&a, &b], Palette::ANSI), whole, "cut at {cut}");
    }
}

#[test]
fn a_line_shows_when_it_ends_and_code_streams_line_by_line() {
    let mut markdown = Markdown::new(Palette::PLAIN, 60);
    assert_eq!(markdown.push("First para").as_str(), "");
    assert_eq!(markdown.push("graph.\n").as_str(), "First paragraph.\n");
    assert_eq!(markdown.push("```python\n").as_str(), "");
    assert_eq!(markdown.push("x = 1\n").as_str(), "  x = 1\n");
    // A list waits for its end: its next line may nest under it.
    assert_eq!(markdown.push("```\n- a\n").as_str(), "");
    assert_eq!(markdown.push("  - b\n\n").as_str(), "• a\n  ◦ b\n");
}

#[test]
fn styles_are_the_renderers_and_the_models_escapes_are_shown() {
    let hostile =
        "# T\u{1b}]0;x\u{7}\n\n```rust\nlet s = \"\u{1b}[2J\";\n```\n| a\u{9b} | b |\n|---|---|\n";
    let shown = rendered(&[hostile], Palette::ANSI);
    assert!(shown.contains("T^[]0;x^G"), "{shown:?}");
    assert!(shown.contains("^[[2J"), "{shown:?}");
    assert!(shown.contains("a\\u{9b}"), "{shown:?}");
    // Every escape left is a style (SGR, `ESC [ … m`).
    for (index, _) in shown.match_indices('\u{1b}') {
        let rest = &shown[index + 1..];
        let end = rest.find('m').unwrap();
        assert!(
            rest[..end].starts_with('[')
                && rest[1..end].chars().all(|c| c.is_ascii_digit() || c == ';'),
            "{rest:?}"
        );
    }
    assert!(!shown.chars().any(|c| ('\u{80}'..='\u{9f}').contains(&c)));
}

#[test]
fn the_rust_block_is_highlighted() {
    let shown = rendered(&["```rust\nfn main() { let x = 1; }\n```\n"], Palette::ANSI);
    assert!(shown.contains("\u{1b}[38;5;"), "{shown:?}");
    let plain = rendered(
        &["```rust\nfn main() { let x = 1; }\n```\n"],
        Palette::PLAIN,
    );
    assert_eq!(plain, "  fn main() { let x = 1; }\n");
}

#[test]
fn a_line_that_renders_to_nothing_is_shown_as_it_is() {
    let shown = rendered(
        &["See [the docs][1].\n\n[1]: https://docs.example/x\n"],
        Palette::PLAIN,
    );
    assert!(shown.contains("https://docs.example/x"), "{shown:?}");
}

#[test]
fn a_huge_word_and_a_long_stream_in_small_pieces_lose_nothing() {
    let word = "x".repeat(1024 * 1024);
    let shown = rendered(&[&word, "\n"], Palette::PLAIN);
    assert_eq!(shown.chars().filter(|c| *c == 'x').count(), word.len());
    let many: String = (0..20_000).map(|n| format!("line {n}\n")).collect();
    let pieces: Vec<&str> = many
        .as_bytes()
        .chunks(7)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let shown = rendered(&pieces, Palette::PLAIN);
    assert!(shown.contains("line 19999"));
}
