//! Running the built `codecrew` binary: what the topic modules' own runners share.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_codecrew");

/// `codecrew` in a world of its own under `home`: the one way the tests start the binary.
///
/// Nothing of the developer's reaches it or is changed by it: `HOME` and the XDG folders
/// (config, state, cache, data) are under `home` (the thread key, the MCP token, the held
/// files' journal, the MCP tool lists live there), no user config file is read
/// (`CODECREW_CONFIG` empty: a test that wants one sets it), no `RUST_LOG` adds lines to
/// stderr, no `CLICOLOR_FORCE` styles the output, the OS sandbox is as a user gets it
/// (`CODECREW_SANDBOX` removed), and stdin is empty. A test sets what it is about on top.
pub fn codecrew(home: &Path) -> Command {
    let mut command = Command::new(BIN);
    isolate(&mut command, home);
    command
}

/// What [`codecrew`] sets, for a command built another way (tokio's, through
/// `as_std_mut`).
pub fn isolate(command: &mut Command, home: &Path) {
    let (set, removed) = isolation(home);
    for (name, value) in set {
        command.env(name, value);
    }
    for name in removed {
        command.env_remove(name);
    }
    command.stdin(Stdio::null());
}

/// What [`isolate`] sets (the folders under `home`, no user config) and removes.
pub fn isolation(home: &Path) -> (Vec<(&'static str, std::ffi::OsString)>, [&'static str; 4]) {
    let under = |relative: &str| home.join(relative).into_os_string();
    let set = vec![
        ("HOME", home.as_os_str().to_owned()),
        ("XDG_CONFIG_HOME", under(".config")),
        ("XDG_STATE_HOME", under(".local/state")),
        ("XDG_CACHE_HOME", under(".cache")),
        ("XDG_DATA_HOME", under(".local/share")),
        ("CODECREW_CONFIG", std::ffi::OsString::new()),
    ];
    let removed = [
        "RUST_LOG",
        "CLICOLOR_FORCE",
        "CODECREW_SANDBOX",
        "CODECREW_MCP_DEPTH",
    ];
    (set, removed)
}

/// A home for a binary that outlives the function that starts it (a server a client
/// talks to): `name`'s folder under cargo's scratch folder for tests, made if missing,
/// left there (`target/` is disposable).
pub fn lasting_home(name: &std::ffi::OsStr) -> std::path::PathBuf {
    let home = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("homes")
        .join(name);
    std::fs::create_dir_all(&home).unwrap();
    home
}

/// A home folder of the test's own, for a test whose workspace is not inside one: it
/// lives as long as this value, and [`Home::codecrew`] runs the binary in it.
pub struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    pub fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// [`codecrew`] with this home.
    pub fn codecrew(&self) -> Command {
        codecrew(self.path())
    }
}

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
