//! Tests of the Claude decoder, on the recorded fixtures and on hand-made lines.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::decode::testing::*;
use crate::decode::{Format, decode_all};

fn decode(path: &str) -> Vec<Event> {
    without_usage(decode_all(Format::Claude, &fixture(path)))
}

fn decode_str(input: &str) -> Vec<Event> {
    decode_all(Format::Claude, input.as_bytes())
}

const MODEL: Option<&str> = Some("claude-haiku-5-5");
const MODEL_197: Option<&str> = Some("claude-haiku-4-5-20251001");

#[test]
fn every_fixture_keeps_the_contract() {
    check_suite("claude", Format::Claude, CLAUDE);
    check_suite("claude-2.1.197", Format::Claude, CLAUDE);
    // Qwen Code's stream-json is Claude's where it matters (its own `stream_event`s
    // aside), so the same decoder reads it.
    check_suite("qwen", Format::Claude, QWEN);
}

#[test]
fn plain_stream_json() {
    assert_eq!(
        decode("claude/a_plain_stream_json.stdout"),
        [
            session("2627f1c1-3f9c-462c-9fcc-1b8461e9d78e", MODEL),
            text(HELLO),
            Event::TextEnd,
            finished(Some(HELLO), false, Some("end_turn")),
        ]
    );
    assert_eq!(
        decode("claude-2.1.197/a_plain_stream_json.stdout"),
        [
            session("9e5c739f-0675-428d-bd62-672d02842725", MODEL_197),
            text(HELLO),
            Event::TextEnd,
            finished(Some(HELLO), false, Some("end_turn")),
        ]
    );
}

#[test]
fn usage_is_the_results_usage() {
    let events = decode_all(
        Format::Claude,
        &fixture("claude/a_plain_stream_json.stdout"),
    );
    let Some(Event::Finished {
        usage: Some(usage), ..
    }) = events.last()
    else {
        panic!("{events:#?}");
    };
    // The model's window, from the result's `modelUsage`, just before the end.
    assert_eq!(
        events.get(events.len() - 2),
        Some(&Event::ContextWindow(1_000_000))
    );
    assert_eq!(
        *usage,
        Usage {
            input_tokens: Some(5055),
            output_tokens: Some(18),
            cached_tokens: Some(0),
            cost_usd: Some(0.0005145),
        }
    );
}

#[test]
fn json_output_is_one_result_whose_text_is_the_answer() {
    // The envelope reaches the scanner whole, exactly once.
    assert_eq!(
        decode("claude/b_json_block_json.stdout"),
        [
            session("0deda5c3-c488-4154-a273-a4e29811275d", None),
            text(ENVELOPE),
            Event::TextEnd,
            finished(Some(ENVELOPE), false, Some("end_turn")),
        ]
    );
}

#[test]
fn json_block_in_stream_json_is_text_once() {
    let events = decode("claude/b_json_block_stream_json.stdout");
    assert_eq!(text_blocks(&events), [ENVELOPE]);
    assert_eq!(
        events.last(),
        Some(&finished(Some(ENVELOPE), false, Some("end_turn")))
    );
}

#[test]
fn partial_messages_stream_deltas_and_skip_the_repeated_block() {
    assert_eq!(
        decode("claude/a_plain_partial_messages.stdout"),
        [
            session("6c44634d-5dd0-4df1-a3a5-64e422fced4e", MODEL),
            text("Hello! I am "),
            text("the fake mod"),
            text("el. How can "),
            text("I help?"),
            Event::TextEnd,
            finished(Some(HELLO), false, Some("end_turn")),
        ]
    );
    let events = decode("claude-2.1.197/f_long_multichunk.stdout");
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::Text(_)))
            .count(),
        16
    );
    assert_eq!(text_blocks(&events), [LONG]);
}

#[test]
fn thinking_is_never_text() {
    assert_eq!(
        decode("claude/f_thinking_block.stdout"),
        [
            session("5defdfd6-4a84-427a-a7dc-e4c790c9edf3", MODEL),
            Event::Thinking(THOUGHT.into()),
            text(CONSIDERED),
            Event::TextEnd,
            finished(Some(CONSIDERED), false, Some("end_turn")),
        ]
    );
    assert_eq!(
        decode("claude/f_thinking_block_partial.stdout"),
        [
            session("3a9402ca-1472-42f2-9849-3f1b060f9fd3", MODEL),
            Event::Thinking("Let me think".into()),
            Event::Thinking(" about this ".into()),
            Event::Thinking("carefully.".into()),
            text("Here is my c"),
            text("onsidered an"),
            text("swer."),
            Event::TextEnd,
            finished(Some(CONSIDERED), false, Some("end_turn")),
        ]
    );
}

#[test]
fn tool_allowed() {
    assert_eq!(
        decode("claude/e_tool_bash_readonly_auto.stdout"),
        [
            session("5bf706ea-6824-441c-b596-42bc3f2ec7f2", MODEL),
            text("I'll run that command."),
            Event::TextEnd,
            tool(
                "toolu_fake_a5cf3ac2e619426b8518a929",
                "Bash",
                json!({"command": "echo fake-tool-output", "description": "Echo a test string"})
            ),
            tool_result(
                "toolu_fake_a5cf3ac2e619426b8518a929",
                "fake-tool-output",
                false
            ),
            text(DONE),
            Event::TextEnd,
            finished(Some(DONE), false, Some("end_turn")),
        ]
    );
}

#[test]
fn tool_denied() {
    let denial = "mkdir in '<cwd>/fake-dir-from-tool' needs approval. The path is inside the working directories for this session ('<cwd>'), and Claude Code asks before a shell command creates, changes or removes files there.";
    assert_eq!(
        decode("claude/e_tool_bash_denied.stdout"),
        [
            session("0828f78e-e78d-4d58-80f4-37b42ce698d1", MODEL),
            text("Creating a directory."),
            Event::TextEnd,
            tool(
                "toolu_fake_b65b7470a30c4c3296437e9b",
                "Bash",
                json!({"command": "mkdir -p fake-dir-from-tool", "description": "Create a directory"})
            ),
            tool_result("toolu_fake_b65b7470a30c4c3296437e9b", denial, true),
            text(DONE),
            Event::TextEnd,
            finished(Some(DONE), false, Some("end_turn")),
        ]
    );
    let events = decode("claude/e_tool_unknown_name.stdout");
    assert!(events.contains(&tool_result(
        "toolu_fake_f4f1ce69aefb4f888f3db2a3",
        "<tool_use_error>Error: No such tool available: codecrew_help</tool_use_error>",
        true
    )));
}

#[test]
fn api_errors_are_errors_not_text() {
    let message = "API Error: 400 scripted failure from fake server";
    // 2.1.329 flags the synthetic message with `is_api_error_message`.
    assert_eq!(
        decode("claude/g_api_error_400.stdout"),
        [
            session("f23a7d70-4b29-4a92-995c-dbd2b4a6431b", MODEL),
            Event::Error(message.into()),
            finished(Some(message), true, Some("stop_sequence")),
        ]
    );
    // 2.1.197 only sets `error`.
    assert_eq!(
        decode("claude-2.1.197/g_api_error_400.stdout"),
        [
            session("19fb4642-1066-469f-b2be-fcecd635e4f9", MODEL_197),
            Event::Error(message.into()),
            finished(Some(message), true, Some("stop_sequence")),
        ]
    );
    let events = decode("claude/g_api_error_529.stdout");
    assert!(
        matches!(&events[..], [Event::Session { .. }, Event::Error(e), Event::Finished { is_error: true, .. }]
            if e.starts_with("API Error: 529 Overloaded")),
        "{events:#?}"
    );
}

#[test]
fn resume_keeps_the_session() {
    let first = decode("claude/c_turn1_stream_json.stdout");
    let second = decode("claude/c_turn2_resume_stream_json.stdout");
    assert_eq!(
        first[0],
        session("50015417-4070-47b9-bb87-d818f6bcace0", MODEL)
    );
    assert_eq!(first[0], second[0]);
    assert_eq!(text_blocks(&second), [RECALL]);
}

#[test]
fn result_error_without_text_names_the_errors() {
    let events = decode_str(
        r#"{"type":"result","subtype":"error_max_turns","is_error":true,"errors":["Reached maximum number of turns (1)"],"session_id":"s"}
"#,
    );
    assert_eq!(
        events,
        [
            session("s", None),
            Event::Error("Reached maximum number of turns (1)".into()),
            Event::Finished {
                text: None,
                is_error: true,
                usage: None,
                stop: None
            },
        ]
    );
    // Without `is_error`, an error subtype still counts.
    let events = decode_str(r#"{"type":"result","subtype":"error_during_execution"}"#);
    assert_eq!(
        events,
        [
            Event::Error("the CLI reported an error (error_during_execution)".into()),
            Event::Finished {
                text: None,
                is_error: true,
                usage: None,
                stop: None
            },
        ]
    );
}

#[test]
fn streamed_text_that_disagrees_with_the_block_is_kept_once() {
    let input = [
        r#"{"type":"stream_event","event":{"type":"message_start","message":{}}}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Goodbye"}]}}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_stop","index":0}}"#,
    ]
    .join("\n");
    assert_eq!(decode_str(&input), [text("Hello"), Event::TextEnd]);
}

#[test]
fn missed_deltas_are_completed_from_the_block() {
    // The stop before the complete block (the other possible order) and a block
    // longer than its deltas.
    let input = [
        r#"{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_stop","index":0}}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Hello"}]}}"#,
        r#"{"type":"result","is_error":false,"result":"Hello"}"#,
    ]
    .join("\n");
    assert_eq!(
        decode_str(&input),
        [
            text("Hel"),
            Event::TextEnd,
            text("lo"),
            Event::TextEnd,
            Event::Finished {
                text: Some("Hello".into()),
                is_error: false,
                usage: None,
                stop: None
            },
        ]
    );
}

#[test]
fn tool_result_content_blocks_and_odd_shapes() {
    let input = [
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a"},{"type":"image","source":{}},{"type":"text","text":"b"}]}]}}"#,
        // A replayed prompt as a string, and a text block: neither is a tool result.
        r#"{"type":"user","message":{"role":"user","content":"hello"}}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted]"}]}}"#,
        // `message` is a string in system/permission_denied.
        r#"{"type":"system","subtype":"permission_denied","message":"needs approval"}"#,
        r#"{"type":"assistant","message":"not an object"}"#,
        r#"{"type":"assistant","message":{"content":["odd", 3, {"type":"tool_use","id":"t2","name":"Read"}]}}"#,
    ]
    .join("\n");
    assert_eq!(
        decode_str(&input),
        [
            tool_result("t1", "a\nb", false),
            tool("t2", "Read", json!({})),
        ]
    );
}

#[test]
fn invalid_utf8_inside_text_is_replaced() {
    let input = b"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]}}\n";
    assert_eq!(
        decode_all(Format::Claude, input),
        [text("a\u{fffd}b"), Event::TextEnd]
    );
}

#[test]
fn garbage() {
    check_garbage(Format::Claude);
}

#[test]
fn a_qwen_api_error_is_reported_with_its_message() {
    let events = decode("qwen/g_api_error_400_json.stdout");
    assert!(
        events.contains(&Event::Error("[API Error: 400 fake bad request]".into())),
        "{events:#?}"
    );
}
