//! Scanner throughput.
//!
//! `cargo bench -p codecrew-intercept --bench scanner` prints:
//! - MB/s of the scanner alone on ~100 MB of plain text (prose with an envelope every
//!   1,000 lines), fed in 64 KiB chunks;
//! - MB/s of decoder + scanner on the same text and on ~100 MB of Claude stream-json.
//!
//! The peak memory of the whole `codecrew intercept` is the binary's own bench,
//! `cargo bench --bench memory`.
//!
//! Figures from this machine are in docs/PERFORMANCE.md.

use std::time::{Duration, Instant};

use codecrew_intercept::decode::Format;
use codecrew_intercept::{Interceptor, Scanner, ScannerLimits, Segment};

const MB: usize = 1024 * 1024;
const CHUNK: usize = 64 * 1024;
const ENVELOPE: &str =
    r#"{"type":"tool_use","name":"codecrew:read_file","input":{"path":"src/main.rs"}}"#;

fn plain_text(size: usize) -> String {
    let mut text = String::with_capacity(size + 1024);
    let mut line = 0usize;
    while text.len() < size {
        line += 1;
        if line.is_multiple_of(1000) {
            text.push_str("Let me read the file.\n```json\n");
            text.push_str(ENVELOPE);
            text.push_str("\n```\n");
        } else {
            text.push_str("The quick brown fox jumps over the lazy dog; codecrew scans this line ");
            text.push_str(&format!("{line}.\n"));
        }
    }
    text
}

fn claude_stream(size: usize) -> String {
    let mut out = String::with_capacity(size + 4096);
    out.push_str(r#"{"type":"system","subtype":"init","session_id":"bench","model":"claude-haiku-5-5","tools":[]}"#);
    out.push('\n');
    let block = plain_text(2000);
    let text = serde_json::to_string(&block).unwrap_or_default();
    let mut n = 0usize;
    while out.len() < size {
        n += 1;
        out.push_str(&format!(
            r#"{{"type":"assistant","message":{{"id":"msg_{n}","type":"message","role":"assistant","model":"claude-haiku-5-5","content":[{{"type":"text","text":{text}}}],"stop_reason":null,"usage":{{"input_tokens":5,"output_tokens":1}}}},"parent_tool_use_id":null,"session_id":"bench","uuid":"u{n}"}}"#
        ));
        out.push('\n');
    }
    out.push_str(r#"{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"bench","num_turns":1}"#);
    out.push('\n');
    out
}

fn best_of(runs: usize, mut f: impl FnMut() -> usize) -> (Duration, usize) {
    let mut best = Duration::MAX;
    let mut found = 0;
    for _ in 0..runs {
        let start = Instant::now();
        found = f();
        best = best.min(start.elapsed());
    }
    (best, found)
}

fn scan_plain(text: &str) -> usize {
    let mut scanner = Scanner::new(ScannerLimits::default());
    let mut out = Vec::new();
    let mut calls = 0;
    for chunk in text.as_bytes().chunks(CHUNK) {
        // Chunks are cut on bytes; the bench text is ASCII, so every cut is a boundary.
        let chunk = std::str::from_utf8(chunk).unwrap_or("");
        scanner.push(chunk, &mut out);
        calls += out
            .iter()
            .filter(|s| matches!(s, Segment::Call(_) | Segment::Rejected(_)))
            .count();
        out.clear();
    }
    scanner.finish(&mut out);
    calls
}

fn intercept(format: Format, bytes: &[u8]) -> usize {
    let mut interceptor = Interceptor::new(format, ScannerLimits::default());
    let mut out = Vec::new();
    let mut items = 0;
    for chunk in bytes.chunks(CHUNK) {
        interceptor.feed(chunk, &mut out);
        items += out.len();
        out.clear();
    }
    interceptor.finish(&mut out);
    items + out.len()
}

fn rate(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / MB as f64 / time.as_secs_f64()
}

fn main() {
    let size = 100 * MB;
    println!("codecrew scanner benchmark (best of 3, 64 KiB chunks)\n");

    let text = plain_text(size);
    let (time, calls) = best_of(3, || scan_plain(&text));
    println!(
        "plain text      {:>6.1} MB  scanner only      {:>8.1} MB/s  ({calls} envelopes; 16 run, the rest over the per-message cap)",
        text.len() as f64 / MB as f64,
        rate(text.len(), time)
    );
    let (time, _) = best_of(3, || intercept(Format::Text, text.as_bytes()));
    println!(
        "plain text      {:>6.1} MB  decoder + scanner {:>8.1} MB/s",
        text.len() as f64 / MB as f64,
        rate(text.len(), time)
    );

    let stream = claude_stream(size);
    let (time, _) = best_of(3, || intercept(Format::Claude, stream.as_bytes()));
    println!(
        "claude stream   {:>6.1} MB  decoder + scanner {:>8.1} MB/s",
        stream.len() as f64 / MB as f64,
        rate(stream.len(), time)
    );
}
