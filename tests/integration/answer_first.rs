//! The answer is printed as soon as it is final, before the CLI kept for the loop has
//! shut down: a real CLI takes tens of milliseconds to exit once its input is closed,
//! which the answer does not wait for (codecrew itself still waits, so that nothing it
//! started outlives it).

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_codecrew");

/// A `claude` that answers its first message in Claude's stream-json, reads on to the
/// end of its input, and then does not exit until the test lets it (a file `go` in the
/// workspace), or 30 s have passed.
const SLOW_TO_EXIT_CLAUDE: &str = r#"#!/bin/sh
read -r _
printf '%s\n' '{"type":"system","subtype":"init","session_id":"slow","model":"fake"}'
printf '%s\n' '{"type":"assistant","message":{"content":[{"type":"text","text":"Answered before the exit."}]},"session_id":"slow"}'
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"Answered before the exit.","session_id":"slow"}'
cat > /dev/null
n=0
while [ ! -e go ] && [ "$n" -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
"#;

/// Whether a process whose command line names `program` is running.
fn running(program: &Path) -> bool {
    let needle = program.as_os_str().as_encoded_bytes();
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .is_ok_and(|cmdline| cmdline.windows(needle.len()).any(|w| w == needle))
    })
}

#[test]
fn the_answer_is_out_before_the_kept_cli_has_exited() {
    let dir = tempfile::tempdir().unwrap();
    let (home, work, bin) = (
        dir.path().join("home"),
        dir.path().join("work"),
        dir.path().join("bin"),
    );
    for folder in [&home, &work, &bin] {
        std::fs::create_dir_all(folder).unwrap();
    }
    let claude = bin.join("claude");
    std::fs::write(&claude, SLOW_TO_EXIT_CLAUDE).unwrap();
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    for output in ["json", "text"] {
        let _ = std::fs::remove_file(work.join("go"));
        let mut child = Command::new(BIN)
            .args(["--workdir"])
            .arg(&work)
            .args(["query", "--output", output, "@claude hi"])
            .env_clear()
            .env("HOME", &home)
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .env("CODECREW_CONFIG", "")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next().unwrap().unwrap();
        // The CLI is still there, held by the test: the answer did not wait for it.
        assert!(running(&claude), "{output}: the CLI had already exited");
        match output {
            "json" => {
                let doc: Value = serde_json::from_str(&first).unwrap();
                assert_eq!(doc["results"][0]["response"], "Answered before the exit.");
            }
            _ => assert_eq!(first, "Answered before the exit."),
        }
        std::fs::write(work.join("go"), "").unwrap();
        let status = child.wait().unwrap();
        assert!(status.success(), "{output}: {status}");
        // codecrew waited for its CLI: nothing of it is left.
        assert!(!running(&claude), "{output}: the CLI outlived codecrew");
    }
}
