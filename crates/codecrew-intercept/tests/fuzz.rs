//! The engine's fuzzer on the stable toolchain, bounded in time: proptest feeds
//! `fuzzing::decode_and_scan` (the oracle the cargo-fuzz target in `fuzz/` uses too)
//! random bytes, and the recorded real CLI output and real models' answers cut up,
//! spliced and mutated, for `CODECREW_FUZZ_SECONDS` seconds (3 by default; CI sets 60).
//! A failure is shrunk to a minimal input, written to `target/fuzz-findings/`, and
//! belongs in `tests/fuzz-regressions/` from then on: every file there is replayed first.

// Test code may unwrap and panic (the workspace lints deny them in library code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use codecrew_intercept::fuzzing::decode_and_scan;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestError, TestRunner};

const DEFAULT_SECONDS: u64 = 3;

/// Pieces a model or a CLI writes that matter to the scanner, to splice among real lines.
const PIECES: &[&str] = &[
    "```json\n",
    "```\n",
    "~~~\n",
    "````codecrew\n",
    "{\"type\":\"tool_use\",\"name\":\"codecrew:read_file\",\"input\":{\"path\":\"a\"}}\n",
    "[{\"name\":\"codecrew__grep\",\"arguments\":\"{\\\"pattern\\\":\\\"x\\\"}\"},\n",
    "{\"name\":\"codecrew:x\",\"input\":{\"a\":{\"b\":[1,2,{\"c\":\"\\u0000\"}]}},}\n",
    "> {\"name\":\"codecrew:help\"}\n",
    "{\"type\":\"tool_use\",\"name\":\"codecrew:list_directory\",\"input\":{\"path\":\"src\"}}}\n",
    "Sure: {\"type\":\"tool_use\",\"name\":\"codecrew:help\",\"input\":{}}",
    "`{\"name\":\"codecrew:help\"}` ",
    "{\"type\":\"tool_use\",\"name\":\"read_file\"},\n",
    "{\"type\":\"tool_use\", name: \"codecrew:x\"} and more\n",
    "\r\n",
    "\u{feff}\u{202e}é字\n",
];

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every line of every recorded CLI output (`tests/fixtures/`) and real model's answer
/// (`tests/models/`), and the pieces above.
fn corpus() -> Vec<Vec<u8>> {
    let mut lines: Vec<Vec<u8>> = PIECES.iter().map(|p| p.as_bytes().to_vec()).collect();
    for top in ["tests/fixtures", "tests/models"] {
        add_lines(&manifest_dir().join(top), &mut lines);
    }
    lines
}

/// The lines of every file beneath `dir`.
fn add_lines(dir: &Path, lines: &mut Vec<Vec<u8>>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            add_lines(&path, lines);
        } else {
            let bytes = std::fs::read(&path).unwrap();
            lines.extend(bytes.split_inclusive(|b| *b == b'\n').map(<[u8]>::to_vec));
        }
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(Index, u8),
    Insert(Index, u8),
    Delete(Index),
    Truncate(Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), any::<u8>()).prop_map(|(at, bit)| Mutation::Flip(at, bit)),
        (any::<Index>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Insert(at, byte)),
        any::<Index>().prop_map(Mutation::Delete),
        any::<Index>().prop_map(Mutation::Truncate),
    ]
}

fn apply(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for mutation in mutations {
        if bytes.is_empty() {
            break;
        }
        match mutation {
            Mutation::Flip(at, bit) => {
                let at = at.index(bytes.len());
                bytes[at] ^= 1 << (bit % 8);
            }
            Mutation::Insert(at, byte) => bytes.insert(at.index(bytes.len()), *byte),
            Mutation::Delete(at) => {
                bytes.remove(at.index(bytes.len()));
            }
            Mutation::Truncate(at) => bytes.truncate(at.index(bytes.len())),
        }
    }
    bytes
}

/// The fuzzer's inputs: a selector byte, then either random bytes or real lines spliced
/// in any order and mutated.
fn input(corpus: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let random = prop::collection::vec(any::<u8>(), 0..512);
    let spliced = (
        prop::collection::vec(prop::sample::select(corpus), 1..12),
        prop::collection::vec(mutation(), 0..6),
    )
        .prop_map(|(lines, mutations)| apply(lines.concat(), &mutations));
    (any::<u8>(), prop_oneof![1 => random, 4 => spliced]).prop_map(|(selector, body)| {
        let mut data = Vec::with_capacity(body.len() + 1);
        data.push(selector);
        data.extend(body);
        data
    })
}

fn budget() -> Duration {
    let seconds = std::env::var("CODECREW_FUZZ_SECONDS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(DEFAULT_SECONDS);
    Duration::from_secs(seconds)
}

#[test]
fn earlier_findings_stay_fixed() {
    let dir = manifest_dir().join("tests/fuzz-regressions");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "bin") {
            decode_and_scan(&std::fs::read(&path).unwrap());
            replayed += 1;
        }
    }
    // The folder holds at least the seed that exercises the replay itself.
    assert!(replayed >= 1, "no regression inputs in {}", dir.display());
}

#[test]
fn decoders_and_scanner_hold_for_the_time_budget() {
    let strategy = input(corpus());
    let deadline = Instant::now() + budget();
    let mut cases = 0u64;
    while Instant::now() < deadline {
        let config = Config {
            cases: 128,
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        let result = runner.run(&strategy, |data| {
            decode_and_scan(&data);
            Ok(())
        });
        cases += 128;
        if let Err(TestError::Fail(reason, data)) = result {
            let path = save_finding(&data);
            panic!(
                "the fuzzer found an input that breaks the engine ({reason}); the minimal \
                 input is in {} — copy it to tests/fuzz-regressions/ with the fix",
                path.display()
            );
        }
    }
    eprintln!("fuzz: {cases} inputs in {:?}", budget());
}

fn save_finding(data: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-findings");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("finding-{}.bin", std::process::id()));
    std::fs::write(&path, data).unwrap();
    path
}
