//! The envelope rules, one test each, and the chunking property.

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

/// Segments with adjacent texts merged, so that chunking does not matter.
fn normalise(segments: Vec<Segment>) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    for segment in segments {
        match (out.last_mut(), segment) {
            (_, Segment::Text(text)) if text.is_empty() => {}
            (Some(Segment::Text(last)), Segment::Text(text)) => last.push_str(&text),
            (_, segment) => out.push(segment),
        }
    }
    out
}

fn scan(text: &str) -> Vec<Segment> {
    normalise(Scanner::scan(text))
}

fn scan_with(limits: ScannerLimits, chunks: &[&str]) -> Vec<Segment> {
    let mut scanner = Scanner::new(limits);
    let mut out = Vec::new();
    for chunk in chunks {
        scanner.push(chunk, &mut out);
    }
    scanner.finish(&mut out);
    normalise(out)
}

fn text(t: &str) -> Segment {
    Segment::Text(t.to_owned())
}

fn call(tool: &str, input: Value) -> Segment {
    Segment::Call(ToolCall {
        name: format!("codecrew:{tool}"),
        tool: tool.to_owned(),
        input,
    })
}

fn calls(segments: &[Segment]) -> Vec<(&str, &Value)> {
    segments
        .iter()
        .filter_map(|s| match s {
            Segment::Call(c) => Some((c.tool.as_str(), &c.input)),
            _ => None,
        })
        .collect()
}

fn rejections(segments: &[Segment]) -> Vec<&str> {
    segments
        .iter()
        .filter_map(|s| match s {
            Segment::Rejected(r) => Some(r.reason.as_str()),
            _ => None,
        })
        .collect()
}

fn all_text(segments: &[Segment]) -> String {
    segments
        .iter()
        .filter_map(|s| match s {
            Segment::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

const READ: &str =
    r#"{"type":"tool_use","name":"codecrew:read_file","input":{"path":"README.md"}}"#;

#[test]
fn fenced_envelope_as_claude_sends_it() {
    let message = "Sure, calling the helper tool:\n\n```json\n{\"type\":\"tool_use\",\"name\":\"codecrew:help\",\"input\":{}}\n```\n";
    assert_eq!(
        scan(message),
        [
            text("Sure, calling the helper tool:\n\n"),
            call("help", json!({}))
        ]
    );
}

#[test]
fn the_whole_message_as_an_envelope() {
    assert_eq!(
        scan(READ),
        [call("read_file", json!({"path": "README.md"}))]
    );
    assert_eq!(
        scan(&format!("  {READ}  \n")),
        [call("read_file", json!({"path": "README.md"}))]
    );
}

#[test]
fn bare_envelope_on_its_own_lines_in_prose() {
    let message = format!("Let me look.\n{READ}\nThen I will answer.\n");
    assert_eq!(
        scan(&message),
        [
            text("Let me look.\n"),
            call("read_file", json!({"path": "README.md"})),
            text("Then I will answer.\n"),
        ]
    );
    let pretty = "Reading:\n{\n  \"type\": \"tool_use\",\n  \"name\": \"codecrew:read_file\",\n  \"input\": {\"path\": \"a\"}\n}\nDone.";
    assert_eq!(
        scan(pretty),
        [
            text("Reading:\n"),
            call("read_file", json!({"path": "a"})),
            text("Done.")
        ]
    );
}

#[test]
fn several_calls_keep_their_order() {
    let array = r#"[{"name":"codecrew:read_file","input":{"path":"a"}},{"name":"codecrew:grep","input":{"pattern":"x"}}]"#;
    let expected = vec![
        ("read_file", json!({"path": "a"})),
        ("grep", json!({"pattern": "x"})),
    ];
    for message in [
        array.to_owned(),
        format!("```json\n{array}\n```"),
        "```json\n{\"name\":\"codecrew:read_file\",\"input\":{\"path\":\"a\"}}\n{\"name\":\"codecrew:grep\",\"input\":{\"pattern\":\"x\"}}\n```\n".to_owned(),
        "{\"name\":\"codecrew:read_file\",\"input\":{\"path\":\"a\"}}\n{\"name\":\"codecrew:grep\",\"input\":{\"pattern\":\"x\"}}\n".to_owned(),
        "First:\n```json\n{\"name\":\"codecrew:read_file\",\"input\":{\"path\":\"a\"}}\n```\nSecond:\n~~~\n{\"name\":\"codecrew:grep\",\"input\":{\"pattern\":\"x\"}}\n~~~\n".to_owned(),
    ] {
        let segments = scan(&message);
        let got: Vec<(&str, Value)> = calls(&segments).into_iter().map(|(t, i)| (t, i.clone())).collect();
        assert_eq!(got, expected, "{message}");
        assert!(rejections(&segments).is_empty(), "{message}");
    }
}

#[test]
fn names_inputs_and_aliases_are_normalised() {
    for envelope in [
        r#"{"name":"codecrew__read_file","arguments":{"path":"a"}}"#,
        r#"{"type":"tool_use","name":"codecrew:read_file","parameters":"{\"path\":\"a\"}"}"#,
        r#"{"name":"codecrew:read_file","args":{"path":"a"}}"#,
    ] {
        assert_eq!(
            scan(envelope),
            [call("read_file", json!({"path": "a"}))],
            "{envelope}"
        );
    }
    assert_eq!(
        scan(r#"{"name":"codecrew:help"}"#),
        [call("help", json!({}))]
    );
}

#[test]
fn fence_tags_and_shapes() {
    for (open, close) in [
        ("```json", "```"),
        ("```JSON", "```"),
        ("```jsonc", "```"),
        ("```json5", "```"),
        ("```codecrew", "```"),
        ("```tool_use", "```"),
        ("```", "```"),
        ("~~~json", "~~~"),
        ("````json", "````"),
        ("````", "`````"),
        ("   ```json", "   ```"),
    ] {
        let message = format!("{open}\n{READ}\n{close}\n");
        assert_eq!(
            scan(&message),
            [call("read_file", json!({"path": "README.md"}))],
            "{open}"
        );
        let crlf = format!("{open}\r\n{READ}\r\n{close}\r\n");
        assert_eq!(
            scan(&crlf),
            [call("read_file", json!({"path": "README.md"}))],
            "CRLF {open}"
        );
    }
}

#[test]
fn places_that_are_never_calls() {
    // Quoted: inline code, a blockquote, a fence of another language, JSON nested in
    // other JSON, an envelope typed as something else. Text, and nothing said about it.
    for message in [
        format!("Inline: `{READ}` is how you call it.\n"),
        format!("`{READ}`\n"),
        format!("Two ticks: ``a ` {READ}`` then.\n"),
        format!("> {READ}\n"),
        format!("  > quoted: {READ}\n"),
        format!("```python\n{READ}\n```\n"),
        format!("```bash\n{READ}\n```\n"),
        format!("````markdown\n```json\n{READ}\n```\n````\n"),
        format!("{{\"example\": {READ}}}\n"),
        format!("[1, {READ}]\n"),
        r#"{"type":"tool_result","name":"codecrew:read_file","output":"x"}"#.to_owned(),
        r#"{"name":"Bash","input":{"command":"ls"}}"#.to_owned(),
    ] {
        let segments = scan(&message);
        assert!(calls(&segments).is_empty(), "{message}");
        assert!(rejections(&segments).is_empty(), "{message}: {segments:?}");
        assert_eq!(all_text(&segments), message, "text kept exactly");
    }
}

/// An envelope that shares its line with prose, before it or after it, is the model
/// writing about a call (quoting a file it read, a tool's result, the prompt): text, as
/// it stands, and nothing said back about it, so that codecrew never asks for it again.
#[test]
fn an_envelope_in_prose_is_text() {
    for message in [
        format!("Sure: {READ}\nDone.\n"),
        format!("Sure: {READ}"),
        format!("Call it like {READ} in your answer.\n"),
        format!("- {READ}\n"),
        format!("Now {READ}}}}}\r\n"),
        "Here: {\n  \"type\": \"tool_use\",\n  \"name\": \"codecrew:help\"\n}\nok\n".to_owned(),
        "Cut: {\"name\":\"codecrew:write_file\",\"input\":{\"path\":\"a".to_owned(),
        // The issue's words: a hostile file's call, quoted mid-sentence.
        "The file also says the assistant must run {\"type\":\"tool_use\",\"name\":\
         \"codecrew:write_file\",\"input\":{\"path\":\"x\",\"content\":\"y\"}} but I will \
         not do that.\n"
            .to_owned(),
        format!("{READ} and more text\n"),
        format!("{READ}. Then I answer.\n"),
        format!("{READ}{READ}\n"),
        format!("  {READ} // read it\n"),
        format!("{READ}}} extra"),
    ] {
        assert_eq!(scan(&message), [text(&message)], "{message}");
    }
}

#[test]
fn ordinary_json_after_text_stays_text() {
    for message in [
        "The config is {\"a\": 1} here.\n",
        "Set {name} to your name, {\"x\": [1, 2]}.\n",
        "{a}{b}{c} and {\"d\": 4}\n",
        "Then } and { and {{}}\n",
        "function f() {\n  return 1;\n}\n",
        "A name: {\"name\": \"read_file\"}\n",
    ] {
        assert_eq!(scan(message), [text(message)], "{message}");
    }
}

#[test]
fn extra_closing_brackets_or_a_comma_after_a_complete_envelope_are_repaired() {
    let list = r#"{"type":"tool_use","name":"codecrew:list_directory","input":{"path":"src"}}"#;
    let expected = [call("list_directory", json!({"path": "src"}))];
    // The issue's recording: one brace too many, bare, with and without a newline.
    for message in [
        format!("{list}}}"),
        format!("{list}}}\n"),
        format!("{list}}}}}}}  \n"),
        format!("{list}]"),
        format!("{list},\n"),
        format!("{list}}},\n"),
        format!("  {list}}}\r\n"),
        format!("```json\n{list}}}\n```\n"),
        format!("```\n{list}}}}},\n```\n"),
        format!("```json\n{list},\n```\n"),
    ] {
        assert_eq!(scan(&message), expected, "{message}");
        // However it is cut.
        let pieces: Vec<String> = message.chars().map(String::from).collect();
        let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
        assert_eq!(scan_with(ScannerLimits::default(), &pieces), expected);
    }
    // Prose around it is kept; the call is in its place.
    assert_eq!(
        scan(&format!("Listing.\n{list}}}}}\nDone.\n")),
        [text("Listing.\n"), expected[0].clone(), text("Done.\n")]
    );
    // Anything else after the extra brackets is not repaired: prose, and text.
    let prose = format!("{list}}} then\n");
    assert_eq!(scan(&prose), [text(&prose)]);
    let segments = scan(&format!("```json\n{list}}} then\n```\n"));
    assert!(calls(&segments).is_empty());
    assert!(rejections(&segments)[0].contains("malformed envelope JSON"));
}

#[test]
fn a_typed_call_without_a_codecrew_name_is_rejected_with_why() {
    for message in [
        r#"{"type":"tool_use","name":"Bash","input":{"command":"ls"}}"#.to_owned(),
        r#"{"type":"tool_use","name":"read_file","input":{"path":"a"}}"#.to_owned(),
        "```json\n{\"type\":\"tool_use\",\"name\":\"list_directory\",\"input\":{}}\n```\n"
            .to_owned(),
    ] {
        let segments = scan(&message);
        assert!(calls(&segments).is_empty(), "{message}");
        let reasons = rejections(&segments);
        assert_eq!(reasons.len(), 1, "{message}: {segments:?}");
        assert!(reasons[0].contains("a codecrew tool's"), "{}", reasons[0]);
        assert!(!reasons[0].contains("codecrew:"), "{}", reasons[0]);
    }
}

#[test]
fn json_that_breaks_after_opening_like_an_envelope_is_rejected() {
    for message in [
        "{\"type\":\"tool_use\", name: \"codecrew:read_file\"}\n",
        "{\"name\":\"codecrew:read_file\",\"input\":{'path':'a'}}\n",
        "{\"type\":\"tool_use\",\"name\":\"codecrew:x\",\"input\":{\"path\": src}}",
    ] {
        let segments = scan(message);
        assert!(calls(&segments).is_empty(), "{message}");
        let reasons = rejections(&segments);
        assert_eq!(reasons.len(), 1, "{message}: {segments:?}");
        assert!(
            reasons[0].contains("malformed envelope JSON"),
            "{}",
            reasons[0]
        );
        assert_eq!(all_text(&segments), "", "the whole line is the rejection");
    }
}

#[test]
fn an_echoed_tool_result_stays_quiet_text_wherever_it_stands() {
    // A tool result quoted back, its name broken by codecrew's neutralising: told to write
    // it "again", the model would be handed the call the neutralising took apart.
    let echo = "{\"type\":\"tool_use\",\"name\":\"codecrew\u{200B}:write_file\",\"input\":{\"path\":\"x\"}}";
    for message in [
        format!("{echo}\n"),
        format!("{echo} and more\n"),
        format!("{echo}}}}}\n"),
        format!("The file says: {echo}\n"),
        format!("```json\n{echo}\n```\n"),
    ] {
        assert_eq!(scan(&message), [text(&message)], "{message}");
    }
}

#[test]
fn many_candidates_on_one_line_are_a_loop_not_a_recursion() {
    let line = format!("{}\n", "{}".repeat(200_000));
    assert_eq!(scan(&line), [text(&line)]);
    let line = format!("x {}\n", "{a} ".repeat(200_000));
    assert_eq!(scan(&line), [text(&line)]);
}

#[test]
fn ordinary_json_and_bracketed_prose_stay_text() {
    for message in [
        "```json\n{\"name\": \"my-package\", \"version\": \"1.0.0\"}\n```\n",
        "{\"a\": 1}\n",
        "[1] See the note.\n[2] Another.\n",
        "{name} is a placeholder\n",
        "[link](http://example.com)\n",
        "{\n  this is not json\n}\n",
        "[ ] todo\n[x] done\n",
        "{}\n[]\n",
        "```\nplain code\n```\n",
        "{ unclosed brace\nmore prose\n",
    ] {
        let segments = scan(message);
        assert_eq!(segments, [text(message)], "{message}");
    }
}

#[test]
fn lenient_repairs_inside_envelopes() {
    let trailing = "```json\n{\"type\":\"tool_use\",\"name\":\"codecrew:read_file\",\"input\":{\"path\":\"a\",},}\n```\n";
    assert_eq!(scan(trailing), [call("read_file", json!({"path": "a"}))]);
    let bare_trailing = "{\"name\":\"codecrew:read_file\",\"input\":{\"path\":\"a\"},}\n";
    assert_eq!(
        scan(bare_trailing),
        [call("read_file", json!({"path": "a"}))]
    );
    let raw_newline = "```json\n{\"name\":\"codecrew:write_file\",\"input\":{\"path\":\"a\",\"content\":\"one\ntwo\"}}\n```\n";
    assert_eq!(
        scan(raw_newline),
        [call(
            "write_file",
            json!({"path": "a", "content": "one\ntwo"})
        )]
    );
    let missing_brace =
        "```json\n{\"name\":\"codecrew:read_file\",\"input\":{\"path\":\"a\"}\n```\n";
    assert_eq!(
        scan(missing_brace),
        [call("read_file", json!({"path": "a"}))]
    );
}

#[test]
fn truncated_envelopes_are_never_run() {
    for message in [
        "{\"name\":\"codecrew:write_file\",\"input\":{\"path\":\"a\",\"content\":\"par",
        "{\"name\":\"codecrew:write_file\",\"input\":{\"path\":\"a\"}\n",
        "```json\n{\"name\":\"codecrew:write_file\",\"input\":{\"path\":\"a\"}\n",
        "```json\n{\"name\":\"codecrew:write_file\",\"input\":{\"path\":\"a\",\"content\":\"x",
    ] {
        let segments = scan(message);
        assert!(calls(&segments).is_empty(), "{message}");
        assert_eq!(rejections(&segments).len(), 1, "{message}: {segments:?}");
    }
    // A complete envelope whose closing fence never came is not truncated.
    assert_eq!(
        scan(&format!("```json\n{READ}\n")),
        [call("read_file", json!({"path": "README.md"}))]
    );
}

#[test]
fn a_long_unfinished_line_is_judged_alike_whole_and_in_pieces() {
    // Longer than the 1 KiB that decides what a line is, opening JSON that never closes:
    // whole, it was once streamed as prose; in pieces, rejected as truncated.
    let message = format!(
        "{{\"name\":\"codecrew:write_file\",\"note\":\"{}",
        "x".repeat(1100)
    );
    let whole = scan(&message);
    let pieces: Vec<&str> = message
        .as_bytes()
        .chunks(15)
        .map(|chunk| std::str::from_utf8(chunk).unwrap())
        .collect();
    assert_eq!(scan_with(ScannerLimits::default(), &pieces), whole);
    assert!(calls(&whole).is_empty());
    assert_eq!(rejections(&whole).len(), 1, "{whole:?}");
    // Blanks before the bracket past that 1 KiB make the line prose, both ways: text.
    let indented = format!("{}{message}", " ".repeat(1100));
    let pieces: Vec<&str> = indented
        .as_bytes()
        .chunks(15)
        .map(|chunk| std::str::from_utf8(chunk).unwrap())
        .collect();
    let whole = scan(&indented);
    assert_eq!(scan_with(ScannerLimits::default(), &pieces), whole);
    assert_eq!(whole, [text(&indented)]);
}

#[test]
fn rejected_with_reasons() {
    let cases = [
        (
            r#"{"name":"codecrew:read_file","input":{"path":"a"},"input":{"path":"/etc/passwd"}}"#,
            "duplicate key",
        ),
        (
            r#"{"name":"codecrew:read_file","input":{"path":"a","path":"b"}}"#,
            "duplicate key",
        ),
        (
            r#"{"name":"codecrew:read_file","input":[1]}"#,
            "must be a JSON object",
        ),
        (
            r#"{"name":"codecrew:read_file","input":{},"args":{}}"#,
            "ambiguous input",
        ),
        (
            r#"{"name":"codecrew:no such","input":{}}"#,
            "invalid tool name",
        ),
        (
            "```json\n{\"name\":\"codecrew:read_file\" \"input\":{}}\n```",
            "malformed envelope JSON",
        ),
        (
            "```codecrew\nnot json at all\n```",
            "malformed envelope JSON",
        ),
    ];
    for (message, reason) in cases {
        let segments = scan(message);
        assert!(calls(&segments).is_empty(), "{message}");
        let got = rejections(&segments);
        assert_eq!(got.len(), 1, "{message}: {segments:?}");
        assert!(got[0].contains(reason), "{message}: {}", got[0]);
    }
    let deep = format!(
        "{{\"name\":\"codecrew:read_file\",\"input\":{{\"x\":{}1{}}}}}",
        "[".repeat(80),
        "]".repeat(80)
    );
    assert!(rejections(&scan(&deep))[0].contains("nested deeper"));
}

#[test]
fn rejections_carry_the_raw_envelope() {
    let raw = r#"{"name":"codecrew:read_file","input":[1]}"#;
    let segments = scan(&format!("Before\n{raw}\nAfter\n"));
    assert_eq!(
        segments,
        [
            text("Before\n"),
            Segment::Rejected(Rejection {
                reason: "codecrew:read_file: input must be a JSON object".to_owned(),
                raw: raw.to_owned(),
            }),
            text("After\n"),
        ]
    );
}

#[test]
fn over_size_envelopes_are_rejected_and_other_big_blocks_kept() {
    let limits = ScannerLimits {
        max_envelope_bytes: 64,
        max_calls_per_message: 16,
    };
    let big = format!(
        "{{\"name\":\"codecrew:write_file\",\"input\":{{\"content\":\"{}\"}}}}\nafter\n",
        "x".repeat(200)
    );
    let segments = scan_with(limits.clone(), &[&big]);
    assert!(calls(&segments).is_empty());
    assert!(rejections(&segments)[0].contains("larger than 64 bytes"));
    assert_eq!(all_text(&segments), "after\n");

    let fenced = format!(
        "```json\n{}\n```\nafter\n",
        big.lines().next().unwrap_or("")
    );
    let segments = scan_with(limits.clone(), &[&fenced]);
    assert!(rejections(&segments)[0].contains("larger than 64 bytes"));
    assert_eq!(all_text(&segments), "after\n");

    let data = format!(
        "```json\n{{\"data\": \"{}\"}}\n```\nafter\n",
        "y".repeat(200)
    );
    assert_eq!(scan_with(limits, &[&data]), [text(&data)]);
}

#[test]
fn too_many_calls_in_one_message() {
    let limits = ScannerLimits {
        max_envelope_bytes: 1 << 20,
        max_calls_per_message: 2,
    };
    let message = format!("{READ}\n{READ}\n{READ}\n");
    let segments = scan_with(limits, &[&message]);
    assert_eq!(calls(&segments).len(), 2);
    assert!(rejections(&segments)[0].contains("too many calls"));
}

#[test]
fn an_envelope_never_spans_two_messages() {
    let mut scanner = Scanner::default();
    let mut out = Vec::new();
    scanner.push("{\"name\":\"codecrew:read_file\",", &mut out);
    scanner.end_message(&mut out);
    scanner.push("\"input\":{}}\n", &mut out);
    scanner.finish(&mut out);
    let out = normalise(out);
    assert!(calls(&out).is_empty());
    assert_eq!(rejections(&out).len(), 1, "{out:?}");
}

#[test]
fn prose_streams_before_its_line_ends() {
    let mut scanner = Scanner::default();
    let mut out = Vec::new();
    scanner.push("Hello, wor", &mut out);
    assert_eq!(out, [text("Hello, wor")]);
    scanner.push("ld\n", &mut out);
    out.clear();
    scanner.push("```", &mut out);
    assert_eq!(out, [], "a possible fence is held");
    scanner.push("json\n", &mut out);
    scanner.push(READ, &mut out);
    scanner.push("\n```\n", &mut out);
    assert_eq!(out, [call("read_file", json!({"path": "README.md"}))]);
}

#[test]
fn garbage_never_panics() {
    let inputs = [
        "\u{0}\u{1}{[[[\"\\".repeat(1000),
        "`".repeat(5000),
        "{".repeat(100_000),
        "[\"".repeat(1000),
        "```json\n".repeat(100),
        "\u{fffd}\u{fffd}{\"name\":\"codecrew:\u{fffd}\"}".to_owned(),
    ];
    for input in inputs {
        let segments = scan(&input);
        assert!(calls(&segments).is_empty());
    }
}

// ---------------------------------------------------------------------------------------
// The chunking property: any chunking of a text gives the same segments as the whole.

fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("Some prose.\n".to_owned()),
        Just("Inline `{\"a\":1}` code\n".to_owned()),
        Just(format!("{READ}\n")),
        Just(format!("```json\n{READ}\n```\n")),
        Just(format!("~~~\n{READ}\n~~~\n")),
        Just(format!("```python\n{READ}\n```\n")),
        Just("```json\n{\"name\":\"codecrew:help\",\"input\":{},}\n```\n".to_owned()),
        Just("{\"name\":\"codecrew:help\",\"input\":{\"a\":1,\"a\":2}}\n".to_owned()),
        Just("{\"name\":\"codecrew:help\",\n \"input\": {}\n}\n".to_owned()),
        Just("[1] note\n".to_owned()),
        Just(format!("{READ}}}}}\n")),
        Just(format!("{READ},")),
        Just(format!("Sure: {READ}\n")),
        Just(format!("Sure: `{READ}` ok\n")),
        Just(format!("> {READ}\n")),
        Just(format!("{READ} and more\n")),
        Just("{\"type\":\"tool_use\", name: \"x\"}\n".to_owned()),
        Just("Here: {\n\"name\":\"codecrew:help\"\n}\n".to_owned()),
        Just("a {b} `c {d}` {\"e\": 1}\n".to_owned()),
        Just("{\"type\":\"tool_use\",\"name\":\"Bash\"}\n".to_owned()),
        Just("{ not json\n".to_owned()),
        Just("```\n".to_owned()),
        Just("``\n".to_owned()),
        Just("   \n".to_owned()),
        Just("é ü 中文 🎉\n".to_owned()),
        Just("\r\n".to_owned()),
        "[ -~\n]{0,40}",
        "[{}\\[\\]\"`~ \nx,:]{0,30}",
    ]
}

fn document() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..12).prop_map(|parts| parts.concat())
}

/// Splits a text at the given fractions, on character boundaries.
fn chunks_of(text: &str, cuts: &[usize]) -> Vec<String> {
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|c| {
            let mut at = c % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            at
        })
        .collect();
    points.sort_unstable();
    points.dedup();
    let mut chunks = Vec::new();
    let mut start = 0;
    for point in points {
        chunks.push(text[start..point].to_owned());
        start = point;
    }
    chunks.push(text[start..].to_owned());
    chunks
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_chunking_gives_the_same_segments(
        doc in document(),
        cuts in prop::collection::vec(any::<usize>(), 0..20),
        small in any::<bool>(),
    ) {
        let limits = ScannerLimits {
            max_envelope_bytes: if small { 48 } else { 1 << 20 },
            max_calls_per_message: 16,
        };
        let whole = scan_with(limits.clone(), &[&doc]);
        let chunks = chunks_of(&doc, &cuts);
        let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
        prop_assert_eq!(&scan_with(limits.clone(), &refs), &whole);
        // One character at a time, the hardest chunking of all.
        let chars: Vec<String> = doc.chars().map(String::from).collect();
        let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
        prop_assert_eq!(&scan_with(limits, &refs), &whole);
    }

    #[test]
    fn text_outside_envelopes_is_never_lost(doc in document()) {
        // Every text segment is a piece of the input, in order: nothing invented, prose
        // kept in order (calls and rejections take their text out, and put nothing back).
        let segments = Scanner::scan(&doc);
        let mut rest = doc.as_str();
        for segment in &segments {
            if let Segment::Text(piece) = segment {
                match rest.find(piece.as_str()) {
                    Some(at) => rest = &rest[at + piece.len()..],
                    None => prop_assert!(false, "{:?} not found in order in {:?}", piece, doc),
                }
            }
        }
    }
}
