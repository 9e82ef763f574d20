//! The answer is printed as soon as it is final, before the CLI kept for the loop has
//! shut down: a real CLI takes tens of milliseconds to exit once its input is closed,
//! which the answer does not wait for (codecrew itself still waits, so that nothing it
//! started outlives it).

use std::io::{BufRead, BufReader};

use serde_json::Value;

use crate::support::World;

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

#[test]
fn the_answer_is_out_before_the_kept_cli_has_exited() {
    let machine = World::with_claude(SLOW_TO_EXIT_CLAUDE);
    let go = machine.workspace().join("go");
    for output in ["json", "text"] {
        let _ = std::fs::remove_file(&go);
        let mut child = machine
            .command(&["query", "--output", output, "@claude hi"])
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next().unwrap().unwrap();
        // The CLI is still there, held by the test: the answer did not wait for it.
        assert!(
            machine.program_runs("claude"),
            "{output}: the CLI had already exited"
        );
        match output {
            "json" => {
                let doc: Value = serde_json::from_str(&first).unwrap();
                assert_eq!(doc["results"][0]["response"], "Answered before the exit.");
            }
            _ => assert_eq!(first, "Answered before the exit."),
        }
        std::fs::write(&go, "").unwrap();
        let status = child.wait().unwrap();
        assert!(status.success(), "{output}: {status}");
        // codecrew waited for its CLI: nothing of it is left.
        assert!(
            !machine.program_runs("claude"),
            "{output}: the CLI outlived codecrew"
        );
    }
}
