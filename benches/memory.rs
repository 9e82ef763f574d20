//! Peak memory of `codecrew intercept`: it must stay flat as the input grows, because
//! the decoders and the scanner stream.
//!
//! `cargo bench --bench memory` prints the peak memory (max RSS, measured with GNU time)
//! of `codecrew intercept --dry-run --output text` on 10 MB and 100 MB of plain text and
//! of Claude stream-json, each with an envelope every thousand lines. The engine's
//! throughput is `cargo bench -p codecrew-intercept --bench scanner`.
//!
//! Figures from this machine are in docs/PERFORMANCE.md.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Command, Stdio};

const MB: usize = 1024 * 1024;
const ENVELOPE: &str =
    r#"{"type":"tool_use","name":"codecrew:read_file","input":{"path":"src/main.rs"}}"#;

/// One thousand lines of prose, the last of them a fenced call.
fn prose_block() -> String {
    let mut block: String = (1..1000)
        .map(|n| format!("Line {n} of prose that codecrew streams past the scanner untouched.\n"))
        .collect();
    block.push_str(&format!(
        "Let me read the file.\n```json\n{ENVELOPE}\n```\n"
    ));
    block
}

/// Writes `size` bytes (rounded up to whole lines) of `format` to `path`.
fn write_input(path: &Path, format: &str, size: usize) -> std::io::Result<()> {
    let mut out = BufWriter::new(std::fs::File::create(path)?);
    let block = prose_block();
    let line = match format {
        "claude" => {
            let text = serde_json::to_string(&block).map_err(std::io::Error::other)?;
            format!(
                r#"{{"type":"assistant","message":{{"role":"assistant","content":[{{"type":"text","text":{text}}}]}},"session_id":"bench"}}"#
            ) + "\n"
        }
        _ => block,
    };
    if format == "claude" {
        writeln!(
            out,
            r#"{{"type":"system","subtype":"init","session_id":"bench"}}"#
        )?;
    }
    let mut written = 0;
    while written < size {
        out.write_all(line.as_bytes())?;
        written += line.len();
    }
    if format == "claude" {
        writeln!(
            out,
            r#"{{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"bench"}}"#
        )?;
    }
    out.flush()
}

/// Peak RSS in KiB of `codecrew intercept` reading `input`, via GNU time.
fn peak_rss_kib(input: &Path, format: &str) -> Option<u64> {
    let binary = env!("CARGO_BIN_EXE_codecrew");
    let output = Command::new("/usr/bin/time")
        .args([
            "-f",
            "%M",
            binary,
            "intercept",
            "--dry-run",
            "--output",
            "text",
            "--from",
            format,
        ])
        .stdin(std::fs::File::open(input).ok()?)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .ok()?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    stderr.lines().last()?.trim().parse().ok()
}

fn main() {
    println!("peak memory of `codecrew intercept --dry-run --output text` (max RSS)\n");
    let Ok(dir) = tempfile::tempdir() else {
        println!("(no temp dir: memory not measured)");
        return;
    };
    for (name, format) in [("plain text", "text"), ("claude stream", "claude")] {
        for mb in [10usize, 100] {
            let path = dir.path().join(format!("{format}-{mb}.txt"));
            let measured = write_input(&path, format, mb * MB)
                .ok()
                .and_then(|()| peak_rss_kib(&path, format));
            match measured {
                Some(kib) => println!(
                    "{name:<14} {mb:>4} MB input  {:>8.1} MiB peak",
                    kib as f64 / 1024.0
                ),
                None => {
                    println!("{name:<14} {mb:>4} MB input  (not measured: needs /usr/bin/time)")
                }
            }
        }
    }
}
