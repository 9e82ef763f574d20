//! What codecrew makes of real models' answers (`tests/models/`, recorded; see its
//! README): each answer's calls and rejections, in order, whole and however it is cut.
//! No envelope a model wrote is dropped without a word: each is a call, a rejection, or
//! quoted (inline code), and the table says which.

// Test code may unwrap and panic (the workspace lints deny them in library code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use codecrew_intercept::{Scanner, ScannerLimits, Segment};

/// What one answer gives, in order: `call <tool> <input>` or `rejected: <reason's start>`.
const EXPECTED: &[(&str, &[&str])] = &[
    // One closing brace too many: repaired into the call (the tool's name is the model's
    // invention; the executor answers it with E_UNKNOWN_TOOL).
    ("fewshot-t0/02", &[r#"call list_files {"path":"src"}"#]),
    (
        "fewshot-t0/03",
        &[r#"call find_file_with_thunk {"path":"code.txt"}"#],
    ),
    (
        "fewshot-t0/04",
        &[r#"call create_command {"command":"cargo run","command_type":"command"}"#],
    ),
    ("fewshot-t0/05", &[r#"call list_files {"path":"src"}"#]),
    (
        "fewshot-t0/07",
        &[r#"call find_markdown_file {"path":"code.md"}"#],
    ),
    (
        "fewshot-t0/09",
        &[r#"call search_function {"function":"turn_command"}"#],
    ),
    // A fenced JSON document that is no envelope, cut off: the model's text.
    ("fewshot-t0/10", &[]),
    (
        "fewshot-t0/12",
        &[
            r#"call list_project_top_level_folder_names {"project_name":"project_top_level_folder_name"}"#,
        ],
    ),
    ("fewshot-t0/13", &[r#"call grep {"pattern":"Landlock"}"#]),
    (
        "fewshot-t0/14",
        &[r#"call read_last_entry {"entry_type":"entry"}"#],
    ),
    // Nested deeper and deeper until the token limit cut it.
    ("fewshot-t0/15", &["rejected: truncated envelope"]),
    // An untagged fence holding only `# codecrew:list_directory`.
    ("full-t0/03", &["rejected: malformed envelope JSON"]),
    // Tool names in inline code: quoted, not calls.
    ("full-t0/10", &[]),
    ("full-t0/13", &[]),
    ("short-t0/03", &[]),
    // A schema-forced answer: one bare envelope each, after a blank.
    ("grammar-t0/01", &[r#"call help {"command":"read_file"}"#]),
    (
        "grammar-t0/02",
        &[r#"call list_directory {"path":"src/*.rs"}"#],
    ),
    ("grammar-t0/03", &["rejected: truncated envelope"]),
    (
        "grammar-t0/04",
        &[r#"call list_directory {"path":"src/main.rs"}"#],
    ),
    ("grammar-t0/05", &[r#"call help {"command":"query"}"#]),
    (
        "grammar-t0/06",
        &[r#"call list_directory {"path":"src/main.rs"}"#],
    ),
    ("grammar-t0/07", &[r#"call help {"command":"query"}"#]),
    ("grammar-t0/08", &[r#"call help {"command":"read_file"}"#]),
    (
        "grammar-t0/09",
        &[r#"call list_directory {"path":"src/main.rs"}"#],
    ),
    ("grammar-t0/10", &[r#"call help {"command":"help"}"#]),
    (
        "grammar-t0/11",
        &[r#"call list_directory {"depth":1,"path":"src/main.rs"}"#],
    ),
    (
        "grammar-t0/12",
        &[r#"call list_directory {"path":"src/main.rs"}"#],
    ),
    (
        "grammar-t0/13",
        &[r#"call list_directory {"path":"src/main.rs"}"#],
    ),
    ("grammar-t0/14", &["rejected: truncated envelope"]),
    (
        "grammar-t0/15",
        &[r#"call list_directory {"path":"test_*.rs"}"#],
    ),
    ("grammar-t0/16", &[r#"call help {"command":"2+2"}"#]),
    (
        "grammar-t0/18",
        &[r#"call help {"command":"good_morning"}"#],
    ),
    ("grammar-t0/19", &[r#"call help {"command":"query"}"#]),
    ("grammar-t0/20", &[r#"call help {"command":"query"}"#]),
    // The same fenced call twice, pretty-printed over three lines.
    (
        "short-t0/13",
        &[
            r#"call list_directory {"path":"lib"}"#,
            r#"call list_directory {"path":"lib"}"#,
        ],
    ),
    // A call whose input repeats the envelope (the schema refuses it when it runs), then
    // the same again, cut off inside its fence.
    (
        "short-t0/16",
        &[
            r#"call read_file {"input":{"pattern":"2+2"},"name":"codecrew:read_file","path":"notes.txt","type":"tool_use"}"#,
            "rejected: unterminated fence: malformed envelope JSON",
        ],
    ),
    (
        "short-t0/17",
        &["rejected: unterminated fence: rejected envelope: duplicate key"],
    ),
];

fn models_dir() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/models/smollm2-135m"
    ))
}

/// The answer's calls and rejections, as the table writes them.
fn outcomes(segments: &[Segment]) -> Vec<String> {
    segments
        .iter()
        .filter_map(|segment| match segment {
            Segment::Call(call) => Some(format!("call {} {}", call.tool, call.input)),
            Segment::Rejected(rejection) => Some(format!("rejected: {}", rejection.reason)),
            Segment::Text(_) => None,
        })
        .collect()
}

fn matches(got: &[String], expected: &[&str]) -> bool {
    got.len() == expected.len()
        && got.iter().zip(expected).all(|(got, expected)| {
            if expected.starts_with("call ") {
                same_call(got, expected)
            } else {
                got.starts_with(expected)
            }
        })
}

/// `call TOOL INPUT` twice the same: the tool, and the input as a JSON value (its keys in
/// whatever order the build's serde_json keeps them).
fn same_call(got: &str, expected: &str) -> bool {
    let split = |line: &str| -> Option<(String, serde_json::Value)> {
        let mut parts = line.splitn(3, ' ');
        let (_, tool, input) = (parts.next()?, parts.next()?, parts.next()?);
        Some((tool.to_owned(), serde_json::from_str(input).ok()?))
    };
    matches!((split(got), split(expected)), (Some(a), Some(b)) if a == b)
}

fn scan_in_pieces(text: &str, size: usize) -> Vec<Segment> {
    let mut scanner = Scanner::new(ScannerLimits::default());
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(size) {
        scanner.push(&piece.iter().collect::<String>(), &mut out);
    }
    scanner.finish(&mut out);
    out
}

#[test]
fn every_recorded_answer_gives_its_calls_and_rejections_however_it_is_cut() {
    for (name, expected) in EXPECTED {
        let text = std::fs::read_to_string(models_dir().join(format!("{name}.answer.txt")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let whole = outcomes(&Scanner::scan(&text));
        assert!(
            matches(&whole, expected),
            "{name}: got {whole:#?}, expected {expected:#?}"
        );
        for size in [1, 2, 3, 7, 64] {
            assert_eq!(
                outcomes(&scan_in_pieces(&text, size)),
                whole,
                "{name} in pieces of {size}"
            );
        }
    }
}

#[test]
fn the_table_names_every_recorded_answer() {
    let mut on_disk = Vec::new();
    for folder in std::fs::read_dir(models_dir()).unwrap() {
        let folder = folder.unwrap().path();
        if !folder.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&folder).unwrap() {
            let file = file.unwrap().path();
            let stem = file
                .file_name()
                .unwrap()
                .to_string_lossy()
                .replace(".answer.txt", "");
            on_disk.push(format!(
                "{}/{stem}",
                folder.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    on_disk.sort();
    let mut named: Vec<String> = EXPECTED
        .iter()
        .map(|(name, _)| (*name).to_owned())
        .collect();
    named.sort();
    assert_eq!(on_disk, named);
}
