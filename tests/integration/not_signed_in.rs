//! A CLI that is not signed in: the failure says how to sign in, in codecrew's words.

use crate::support::World;

/// What Claude Code 2.1.329 prints in its kept mode without a sign-in (recorded).
const SIGNED_OUT_CLAUDE: &str = r#"#!/bin/sh
read -r _
printf '%s\n' '{"type":"system","subtype":"init","session_id":"out","model":"claude-haiku-4-5"}'
printf '%s\n' '{"type":"assistant","message":{"model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"Not logged in · Please run /login"}]},"error":"authentication_failed","session_id":"out"}'
printf '%s\n' '{"type":"result","subtype":"success","is_error":true,"result":"Not logged in · Please run /login","session_id":"out"}'
cat > /dev/null
"#;

#[test]
fn a_claude_not_signed_in_fails_saying_how_to_sign_in() {
    let machine = World::with_claude(SIGNED_OUT_CLAUDE);
    let output = machine
        .command(&["query", "@claude:haiku How do I use codecrew?"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Not logged in"), "{stderr}");
    assert!(
        stderr.contains("running `claude` once") && stderr.contains("ANTHROPIC_API_KEY"),
        "{stderr}"
    );
}
