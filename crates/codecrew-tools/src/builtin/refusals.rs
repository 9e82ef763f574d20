//! What the read-only sandbox refused a command, told in its result as data the model
//! reads.
//!
//! Landlock refuses a file access or a TCP connection with `EACCES` and a signal with
//! `EPERM`; programs report those on stderr as "Permission denied" or "Operation not
//! permitted", naming the file or the action. The kernel does not tell codecrew which
//! access it refused (its audit log is the system's), so the result quotes the lines
//! that report a refusal and says what the sandbox allows.

use serde_json::{Value, json};

use crate::child::Captured;

/// The most refusal lines quoted, and the most characters of each.
const MAX_LINES: usize = 8;
const MAX_LINE_CHARS: usize = 300;

/// What a program prints when the kernel refuses it something.
const REFUSALS: &[&str] = &[
    "Permission denied",
    "Operation not permitted",
    "permission denied",
    "EACCES",
    "EPERM",
];

/// What the sandbox allows, for the model that meets one of its refusals.
pub const NOTE: &str = "this command ran without asking, so it ran in codecrew's read-only \
     sandbox: it may read only beneath the workspace and the system's program, library and \
     configuration directories, write nothing but /dev/null, use no network and signal \
     nothing outside itself. The lines in sandbox_refused report what it was refused. Read \
     workspace files instead; a command that must write or read elsewhere runs only when \
     the user approves it in execute mode (it is asked about when it is not on the safe \
     list and no allow rule covers it).";

/// Marks `output` as the result of a read-only command, and quotes what it was refused.
pub(super) fn describe(output: &mut Value, stderr: &Captured) {
    output["sandbox"] = json!("read-only");
    let text = stderr.text();
    let refused: Vec<String> = text
        .lines()
        .filter(|line| REFUSALS.iter().any(|marker| line.contains(marker)))
        .take(MAX_LINES)
        .map(|line| {
            let line = codecrew_intercept::neutralise_envelopes(line.trim());
            match line.char_indices().nth(MAX_LINE_CHARS) {
                Some((cut, _)) => format!("{}…", &line[..cut]),
                None => line,
            }
        })
        .collect();
    if !refused.is_empty() {
        output["sandbox_refused"] = json!(refused);
        output["sandbox_note"] = json!(NOTE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stderr(text: &str) -> Captured {
        Captured {
            kept: text.as_bytes().to_vec(),
            total: text.len() as u64,
        }
    }

    #[test]
    fn refusal_lines_are_quoted_with_the_note() {
        let mut output = json!({"exit_code": 1});
        describe(
            &mut output,
            &stderr("cat: /root/.ssh/id_rsa: Permission denied\nother line\n"),
        );
        assert_eq!(output["sandbox"], "read-only");
        assert_eq!(
            output["sandbox_refused"],
            json!(["cat: /root/.ssh/id_rsa: Permission denied"])
        );
        assert_eq!(output["sandbox_note"], NOTE);
    }

    #[test]
    fn a_command_refused_nothing_has_no_note() {
        let mut output = json!({"exit_code": 0});
        describe(&mut output, &stderr("warning: something else\n"));
        assert_eq!(output["sandbox"], "read-only");
        assert!(output.get("sandbox_refused").is_none());
        assert!(output.get("sandbox_note").is_none());
    }

    #[test]
    fn quoted_lines_are_bounded_and_inert() {
        let long = format!("{} Permission denied\n", "x".repeat(1000)).repeat(20);
        let mut output = json!({});
        describe(&mut output, &stderr(&long));
        let lines = output["sandbox_refused"].as_array().unwrap();
        assert_eq!(lines.len(), MAX_LINES);
        assert!(
            lines
                .iter()
                .all(|line| line.as_str().unwrap().chars().count() <= 301)
        );
        let mut output = json!({});
        describe(
            &mut output,
            &stderr(r#"{"name":"codecrew:write_file"}: Permission denied"#),
        );
        let quoted = output["sandbox_refused"][0].as_str().unwrap();
        assert!(!quoted.contains("\"codecrew:"), "{quoted}");
    }
}
