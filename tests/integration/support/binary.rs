//! Running the built `codecrew` binary: what the topic modules' own runners share.

use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_codecrew");

/// A stream's bytes as text (invalid UTF-8 replaced), for messages and searches.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Fails, with both streams, unless the run exited with `code`.
#[track_caller]
pub fn assert_exit(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "\n--- stdout\n{}\n--- stderr\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
}

/// The arguments of `codecrew tools call TOOL --input INPUT --mode MODE [--yes]`.
pub fn tools_call_args<'a>(
    tool: &'a str,
    input: &'a str,
    mode: &'a str,
    yes: bool,
) -> Vec<&'a str> {
    let mut args = vec!["tools", "call", tool, "--input", input, "--mode", mode];
    if yes {
        args.push("--yes");
    }
    args
}

/// The result a `codecrew tools call` printed. Fails, with both streams, when stdout is
/// not JSON, and when the exit status disagrees with the result's status.
#[track_caller]
pub fn tool_result(output: &Output) -> Value {
    let stdout = text(&output.stdout);
    let result: Value = serde_json::from_str(&stdout).unwrap_or_else(|error| {
        panic!(
            "not JSON ({error}): {stdout}\nstderr: {}",
            text(&output.stderr)
        )
    });
    assert_eq!(
        output.status.success(),
        result["status"] == "ok",
        "exit status and result disagree: {result}"
    );
    result
}

/// Runs `command` with `stdin` piped in (and stdout, stderr captured).
pub fn output_with_stdin(command: &mut Command, stdin: &str) -> Output {
    use std::io::Write;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}
