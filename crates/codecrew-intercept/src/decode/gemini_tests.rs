//! Tests of the Gemini decoder, on the recorded fixtures and on hand-made lines.
use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::decode::testing::*;
use crate::decode::{Format, decode_all};

fn decode(path: &str) -> Vec<Event> {
    without_usage(decode_all(Format::Gemini, &fixture(path)))
}

#[test]
fn every_fixture_keeps_the_contract() {
    check_suite("gemini", Format::Gemini, GEMINI);
}

#[test]
fn plain_stream_json_skips_the_echoed_prompt() {
    assert_eq!(
        decode("gemini/a_plain_stream_json.stdout"),
        [
            session("f2bb9fc7-833d-4fa9-bc24-9597163f18dc", Some("auto")),
            text("Hello! I am "),
            text("the fake mod"),
            text("el. How can "),
            text("I help?"),
            Event::TextEnd,
            finished(Some(HELLO), false, None),
        ]
    );
    let events = decode("gemini/a_plain_explicit_model.stdout");
    assert_eq!(
        events[0],
        session(
            "049bfbaf-48d1-46c2-a862-37d45b24478f",
            Some("gemini-2.5-flash")
        )
    );
}

#[test]
fn usage_is_the_results_stats() {
    let events = decode_all(
        Format::Gemini,
        &fixture("gemini/a_plain_stream_json.stdout"),
    );
    let Some(Event::Finished {
        usage: Some(usage), ..
    }) = events.last()
    else {
        panic!("{events:#?}");
    };
    assert_eq!(
        *usage,
        Usage {
            input_tokens: Some(8529),
            output_tokens: Some(23),
            cached_tokens: Some(0),
            cost_usd: None,
        }
    );
    // The `json` document's per-model stats give the same totals.
    let events = decode_all(Format::Gemini, &fixture("gemini/a_plain_json.stdout"));
    let Some(Event::Finished {
        usage: Some(document),
        ..
    }) = events.last()
    else {
        panic!("{events:#?}");
    };
    assert_eq!(document.input_tokens, Some(731 + 7798));
    assert_eq!(document.output_tokens, Some(13 + 10));
}

#[test]
fn json_block_split_over_deltas() {
    let events = decode("gemini/b_json_block_stream_json.stdout");
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::Text(_)))
            .count(),
        9
    );
    assert_eq!(text_blocks(&events), [ENVELOPE]);
}

#[test]
fn json_document() {
    assert_eq!(
        decode("gemini/b_json_block_json.stdout"),
        [
            session(
                "87c21735-4f48-46fb-a5e8-b04f0dfa4880",
                Some("gemini-3.8-flash")
            ),
            text(ENVELOPE),
            Event::TextEnd,
            finished(Some(ENVELOPE), false, None),
        ]
    );
    // The same document on one line.
    assert_eq!(
        decode_all(
            Format::Gemini,
            br#"{"session_id":"s","response":"hi","stats":{"models":{}}}"#
        ),
        [
            session("s", None),
            text("hi"),
            Event::TextEnd,
            Event::Finished {
                text: Some("hi".into()),
                is_error: false,
                usage: None,
                stop: None
            },
        ]
    );
}

#[test]
fn json_error_document_at_the_end_of_stderr() {
    let expected = [
        session("20e822a3-4368-42ac-ac5b-736005cd1bee", None),
        Event::Error(
            r#"{"error":{"code":400,"message":"scripted failure from fake server","status":"INVALID_ARGUMENT"}}"#
                .into(),
        ),
        Event::Finished {
            text: None,
            is_error: true,
            usage: None,
            stop: None,
        },
    ];
    let stderr = fixture("gemini/g_api_error_400_json.stderr");
    assert_eq!(decode_all(Format::Gemini, &stderr), expected);
    assert_eq!(decode_chunked(Format::Gemini, &stderr, 1), expected);
    // Just the document, as codecrew would cut it out of stderr.
    let text = String::from_utf8(stderr).unwrap();
    let start = text.rfind("\n{\n").unwrap() + 1;
    assert_eq!(
        decode_all(Format::Auto, &text.as_bytes()[start..]),
        expected
    );
}

#[test]
fn tools() {
    assert_eq!(
        decode("gemini/e_tool_list_directory.stdout"),
        [
            session("00019531-01a9-4d05-81a2-0ba3e458ccf6", Some("auto")),
            text("Listing it."),
            Event::TextEnd,
            tool(
                "list_directory__list_directory_1795239866285_0",
                "list_directory",
                json!({"dir_path": "."})
            ),
            tool_result(
                "list_directory__list_directory_1795239866285_0",
                "Directory is empty.",
                false
            ),
            text("The tool ret"),
            text("urned; done."),
            Event::TextEnd,
            finished(Some(DONE), false, None),
        ]
    );
    let events = decode("gemini/e_tool_shell_default_mode.stdout");
    assert!(events.contains(&tool_result(
        "run_shell_command__run_shell_command_1795239868304_0",
        "Tool \"run_shell_command\" not found. Did you mean one of: \"update_topic\", \"grep_search\", \"invoke_agent\"?",
        true
    )));
    let events = decode("gemini/e_tool_shell_yolo.stdout");
    assert!(events.contains(&tool_result(
        "run_shell_command__run_shell_command_1795239870317_0",
        "fake-tool-output",
        false
    )));
}

#[test]
fn api_error() {
    assert_eq!(
        decode("gemini/g_api_error_400.stdout"),
        [
            session("4a19d396-7e02-48d8-9969-12d95d4bdd87", Some("auto")),
            Event::Error(
                r#"[API Error: {"error":{"code":400,"message":"scripted failure from fake server","status":"INVALID_ARGUMENT"}}]"#
                    .into()
            ),
            finished(None, true, None),
        ]
    );
}

#[test]
fn resume_keeps_the_session() {
    let first = decode("gemini/c_turn1_stream_json.stdout");
    let second = decode("gemini/c_turn2_resume_id_stream_json.stdout");
    let third = decode("gemini/c_turn3_resume_latest_json.stdout");
    assert_eq!(
        first[0],
        session("bf7f4f47-1b2e-4459-84ab-26a6007acb47", Some("auto"))
    );
    assert_eq!(first[0], second[0]);
    assert!(
        matches!(&third[0], Event::Session { id, .. } if id == "bf7f4f47-1b2e-4459-84ab-26a6007acb47")
    );
}

#[test]
fn error_events_and_documents_cut_short() {
    let input = concat!(
        r#"{"type":"message","role":"assistant","content":"Hi","delta":true}"#,
        "\n",
        r#"{"type":"error","severity":"warning","message":"loop detected"}"#,
        "\n",
        r#"{"type":"error","severity":"error","message":"quota"}"#,
        "\n{\n  \"session_id\": \"s\",\n  \"response\": \"cut"
    );
    assert_eq!(
        decode_all(Format::Gemini, input.as_bytes()),
        [
            text("Hi"),
            Event::TextEnd,
            Event::Error("quota".into()),
            Event::Malformed {
                reason: "incomplete JSON document at end of output".into(),
                raw: "{\n  \"session_id\": \"s\",\n  \"response\": \"cut\n".into(),
            },
        ]
    );
    // Braces inside strings do not end the document early.
    let input = "{\n  \"response\": \"} { ]\\\" }\",\n  \"session_id\": \"s\"\n}";
    let events = decode_all(Format::Gemini, input.as_bytes());
    assert_eq!(text_blocks(&events), ["} { ]\" }"]);
}

#[test]
fn garbage() {
    check_garbage(Format::Gemini);
    // A document that is not JSON.
    let events = decode_all(Format::Gemini, b"{\n  oops\n}\n");
    assert!(
        matches!(&events[..], [Event::Malformed { reason, .. }] if reason.starts_with("invalid JSON document")),
        "{events:#?}"
    );
}
