//! Test helpers shared by the decoder tests: the recorded fixtures, what each one must
//! decode to, and checks of the decoder contract.

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::{Decoder, Event, Format, Usage, decode_all, decoder};

/// Reads `tests/fixtures/<path>`.
pub fn fixture(path: &str) -> Vec<u8> {
    let full = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&full).unwrap_or_else(|error| panic!("cannot read {full}: {error}"))
}

pub const HELLO: &str = "Hello! I am the fake model. How can I help?";
pub const ENVELOPE: &str = "Sure, calling the helper tool:\n\n```json\n{\"type\":\"tool_use\",\"name\":\"codecrew:help\",\"input\":{}}\n```\n";
pub const REMEMBER: &str = "Got it: I will remember 42.";
pub const RECALL: &str = "You asked me to remember 42.";
pub const STDIN: &str = "I read your prompt from stdin.";
pub const DONE: &str = "The tool returned; done.";
pub const LONG: &str =
    "Line one of a longer answer.\nLine two, with **markdown**.\n- item a\n- item b\n";
pub const THOUGHT: &str = "Let me think about this carefully.";
pub const CONSIDERED: &str = "Here is my considered answer.";

/// What one fixture must give.
pub struct Expect {
    pub name: &'static str,
    /// The format auto detection picks; `None` for an empty output.
    pub auto: Option<Format>,
    /// The assistant text blocks, in order.
    pub text: &'static [&'static str],
}

const fn expect(name: &'static str, auto: Option<Format>, text: &'static [&'static str]) -> Expect {
    Expect { name, auto, text }
}

const C: Option<Format> = Some(Format::Claude);
const G: Option<Format> = Some(Format::Gemini);
const X: Option<Format> = Some(Format::Codex);
const T: Option<Format> = Some(Format::Text);

/// Every Claude fixture; both versions recorded the same scenarios.
pub const CLAUDE: &[Expect] = &[
    expect("a_plain_json", C, &[HELLO]),
    expect("a_plain_partial_messages", C, &[HELLO]),
    expect("a_plain_stream_json", C, &[HELLO]),
    expect("a_plain_text", T, &[]),
    expect("b_json_block_json", C, &[ENVELOPE]),
    expect("b_json_block_stream_json", C, &[ENVELOPE]),
    expect("c_fixed_session_id", C, &[HELLO]),
    expect("c_turn1_stream_json", C, &[REMEMBER]),
    expect("c_turn2_resume_stream_json", C, &[RECALL]),
    expect("c_turn3_continue_json", C, &[RECALL]),
    expect("d_stdin_stream_json", C, &[STDIN]),
    expect("d_stdin_text", T, &[]),
    expect("e_tool_bash_allowed", C, &["Creating a directory.", DONE]),
    expect("e_tool_bash_bypass_as_root", None, &[]),
    expect(
        "e_tool_bash_bypass_is_sandbox",
        C,
        &["Creating a directory.", DONE],
    ),
    expect("e_tool_bash_denied", C, &["Creating a directory.", DONE]),
    expect(
        "e_tool_bash_readonly_auto",
        C,
        &["I'll run that command.", DONE],
    ),
    expect(
        "e_tool_unknown_name",
        C,
        &["Calling a tool that does not exist.", DONE],
    ),
    expect("f_long_multichunk", C, &[LONG]),
    expect("f_thinking_block", C, &[CONSIDERED]),
    expect("f_thinking_block_partial", C, &[CONSIDERED]),
    expect("g_api_error_400", C, &[]),
    expect("g_api_error_529", C, &[]),
    expect("h_stream_json_input", C, &[HELLO]),
    expect("i_system_prompt_flags", C, &[HELLO]),
    expect("j_claude_md_in_cwd", C, &[HELLO]),
    expect("k_stream_json_no_verbose", None, &[]),
];

pub const GEMINI: &[Expect] = &[
    expect("a_plain_explicit_model", G, &[HELLO]),
    expect("a_plain_json", G, &[HELLO]),
    expect("a_plain_stream_json", G, &[HELLO]),
    expect("a_plain_text", T, &[]),
    expect("b_json_block_json", G, &[ENVELOPE]),
    expect("b_json_block_stream_json", G, &[ENVELOPE]),
    expect("c_fixed_session_id", G, &[HELLO]),
    expect("c_turn1_stream_json", G, &[REMEMBER]),
    expect("c_turn2_resume_id_stream_json", G, &[RECALL]),
    expect("c_turn3_resume_latest_json", G, &[RECALL]),
    expect("d_stdin_plus_p_json", G, &[HELLO]),
    expect("d_stdin_stream_json", G, &[STDIN]),
    expect("e_tool_list_directory", G, &["Listing it.", DONE]),
    expect("e_tool_shell_default_mode", G, &["Running it.", DONE]),
    expect("e_tool_shell_yolo", G, &["Running it.", DONE]),
    expect("g_api_error_400", G, &[]),
    expect("g_api_error_400_json", None, &[]),
];

pub const CODEX: &[Expect] = &[
    expect("a_plain_json", X, &[HELLO]),
    expect("a_plain_text", T, &[]),
    expect("b_json_block_json", X, &[ENVELOPE]),
    expect("c_turn1_json", X, &[REMEMBER]),
    expect("c_turn2_resume_id_json", X, &[RECALL]),
    expect("c_turn3_resume_last_json", X, &[RECALL]),
    expect("d_stdin_dash_json", X, &[STDIN]),
    expect("d_stdin_json", X, &[STDIN]),
    expect("e_tool_exec_full_access", X, &["Running it.", DONE]),
    expect("e_tool_exec_readonly", X, &["Running it.", DONE]),
    expect("g_api_error_400", X, &[]),
];

const P: Option<Format> = Some(Format::Copilot);
const COPILOT_OK: &str = "OK from fake server.";
const COPILOT_VIEW_SEEN: &str = r#"RESULT SEEN: [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "secret\n", "cache_control": {"type": "ephemeral"}}]"#;
const COPILOT_DENIED_SEEN: &str = r#"RESULT SEEN: [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Permission denied because no interactive user response was available. Retry in an interactive session so the user can approve it, or try an alternative that does not require this permission.", "cache_control": {"type": "ephemeral"}}]"#;
pub const COPILOT_ENVELOPE: &str = "Let me check the README.\n```json\n{\"type\":\"tool_use\",\"name\":\"codecrew:read_file\",\"input\":{\"path\":\"README.md\"}}\n```\n";

pub const COPILOT: &[Expect] = &[
    expect("a_plain_json", P, &[COPILOT_OK]),
    expect("b_resume_json", P, &[COPILOT_OK]),
    expect("c_api_error_400_json", P, &[]),
    expect("e_native_view_json", P, &[COPILOT_VIEW_SEEN]),
    expect("e_native_write_denied_json", P, &[COPILOT_DENIED_SEEN]),
    expect("f_envelope_in_deltas_json", P, &[COPILOT_ENVELOPE]),
    expect("g_api_error_500_json", P, &[]),
    expect("g_bad_model_json", P, &[]),
    expect("g_server_down_json", P, &[]),
];

const O: Option<Format> = Some(Format::Opencode);
const L: Option<Format> = Some(Format::Llm);
pub const OPENCODE_PLAIN: &str = "Plain fake answer.";
const RECORDED_ENVELOPE: &str = "Let me look.\n```json\n{\"type\":\"tool_use\",\"name\":\"codecrew:read_file\",\"input\":{\"path\":\"hello.txt\"}}\n```";

/// opencode 1.18.33, against a local Anthropic-style server.
pub const OPENCODE: &[Expect] = &[
    expect("a_plain_json", O, &[OPENCODE_PLAIN]),
    expect("b_json_block_json", O, &[RECORDED_ENVELOPE]),
    expect("e_native_read_json", O, &[OPENCODE_PLAIN]),
    expect("g_api_error_400_json", O, &[]),
];

/// Qwen Code 0.24.4 (`--output-format stream-json`), read by the Claude decoder.
pub const QWEN: &[Expect] = &[
    expect("a_plain_json", C, &[OPENCODE_PLAIN]),
    expect("b_json_block_json", C, &[RECORDED_ENVELOPE]),
    expect("e_native_read_json", C, &[OPENCODE_PLAIN]),
    expect(
        "g_api_error_400_json",
        C,
        &["[API Error: 400 fake bad request]"],
    ),
];

pub const LLM_PLAIN: &str = OPENCODE_PLAIN;

/// llm 0.36 (`prompt --json`), against a local OpenAI-style server.
pub const LLM: &[Expect] = &[
    expect("a_plain_json", L, &[LLM_PLAIN]),
    expect("b_json_block_json", L, &[RECORDED_ENVELOPE]),
];

/// Each fixture folder, the decoder for it, and its expectations.
pub const SUITES: &[(&str, Format, &[Expect])] = &[
    ("claude", Format::Claude, CLAUDE),
    ("claude-2.1.197", Format::Claude, CLAUDE),
    ("gemini", Format::Gemini, GEMINI),
    ("codex", Format::Codex, CODEX),
    ("copilot", Format::Copilot, COPILOT),
    ("opencode", Format::Opencode, OPENCODE),
    ("qwen", Format::Claude, QWEN),
    ("llm", Format::Llm, LLM),
];

/// The `.stdout` fixtures of a folder, sorted.
pub fn stdout_names(dir: &str) -> Vec<String> {
    let full = format!("{}/tests/fixtures/{dir}", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(&full)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter_map(|name| name.strip_suffix(".stdout").map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// Feeds `bytes` in chunks of `size` bytes.
pub fn decode_chunked(format: Format, bytes: &[u8], size: usize) -> Vec<Event> {
    let mut decoder = decoder(format);
    let mut out = Vec::new();
    for chunk in bytes.chunks(size) {
        decoder.feed(chunk, &mut out);
    }
    decoder.finish(&mut out);
    out
}

/// Joins adjacent `Text` events, since chunking may split text differently.
pub fn merge_text(events: Vec<Event>) -> Vec<Event> {
    let mut merged: Vec<Event> = Vec::with_capacity(events.len());
    for event in events {
        if let (Some(Event::Text(last)), Event::Text(text)) = (merged.last_mut(), &event) {
            last.push_str(text);
            continue;
        }
        merged.push(event);
    }
    merged
}

/// The text blocks: `Text` joined up to each `TextEnd`.
pub fn text_blocks(events: &[Event]) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for event in events {
        match event {
            Event::Text(text) => current.get_or_insert_with(String::new).push_str(text),
            Event::TextEnd => blocks.push(current.take().expect("TextEnd without text")),
            _ => {}
        }
    }
    assert_eq!(current, None, "text without a TextEnd at the end");
    blocks
}

/// Replaces `Finished.usage` by a marker, so that sequences stay readable.
pub fn without_usage(events: Vec<Event>) -> Vec<Event> {
    events
        .into_iter()
        // The context window is usage too (`usage_is_the_results_usage` checks it).
        .filter(|event| !matches!(event, Event::ContextWindow(_)))
        .map(|event| match event {
            Event::Finished {
                text,
                is_error,
                usage,
                stop,
            } => Event::Finished {
                text,
                is_error,
                usage: usage.map(|_| Usage::default()),
                stop,
            },
            other => other,
        })
        .collect()
}

/// The contract's rules that hold for any input.
pub fn assert_contract(events: &[Event]) {
    let mut text_open = false;
    for (index, event) in events.iter().enumerate() {
        match event {
            Event::Text(text) => {
                assert!(!text.is_empty(), "empty Text at {index}: {events:#?}");
                text_open = true;
            }
            Event::TextEnd => {
                assert!(text_open, "TextEnd without text at {index}: {events:#?}");
                text_open = false;
            }
            Event::Error(message) => {
                assert!(
                    index == 0 || events[index - 1] != Event::Error(message.clone()),
                    "the same error twice in a row at {index}: {events:#?}"
                );
            }
            _ => {}
        }
    }
    assert!(!text_open, "output ends inside a text block: {events:#?}");
}

/// Runs every check that holds for every fixture of one folder.
pub fn check_suite(dir: &str, format: Format, expects: &[Expect]) {
    let names: Vec<&str> = expects.iter().map(|expect| expect.name).collect();
    assert_eq!(
        stdout_names(dir),
        names,
        "the expectations list every fixture"
    );
    for expect in expects {
        let path = format!("{dir}/{}.stdout", expect.name);
        let bytes = fixture(&path);
        let events = decode_all(format, &bytes);
        assert_contract(&events);
        assert!(
            !events
                .iter()
                .any(|event| matches!(event, Event::Malformed { .. })),
            "{path}: {events:#?}"
        );
        if expect.auto == Some(Format::Text) {
            assert_eq!(
                events,
                [],
                "{path}: plain text is CLI noise to a JSON decoder"
            );
        }
        assert_eq!(text_blocks(&events), expect.text, "{path}");
        assert!(
            events.is_empty() || matches!(events.last(), Some(Event::Finished { .. })),
            "{path}: does not end with Finished: {events:#?}"
        );

        let whole = merge_text(events.clone());
        for size in [1, 2, 7, 64] {
            let chunked = merge_text(decode_chunked(format, &bytes, size));
            assert_eq!(chunked, whole, "{path} in chunks of {size}");
        }

        let mut auto = super::auto::AutoDecoder::default();
        let mut auto_events = Vec::new();
        auto.feed(&bytes, &mut auto_events);
        auto.finish(&mut auto_events);
        assert_eq!(auto.format(), expect.auto, "{path}: detected format");
        let detected = expect.auto.unwrap_or(format);
        assert_eq!(auto_events, decode_all(detected, &bytes), "{path}: auto");
        if detected == format {
            assert_eq!(auto_events, events, "{path}: auto");
        }
        let auto_bytewise = merge_text(decode_chunked(Format::Auto, &bytes, 1));
        assert_eq!(
            auto_bytewise,
            merge_text(auto_events),
            "{path}: auto, bytewise"
        );
    }
}

pub fn text(text: &str) -> Event {
    Event::Text(text.to_owned())
}

pub fn session(id: &str, model: Option<&str>) -> Event {
    Event::Session {
        id: id.to_owned(),
        model: model.map(str::to_owned),
    }
}

/// A `Finished` as [`without_usage`] leaves it (usage present).
pub fn finished(text: Option<&str>, is_error: bool, stop: Option<&str>) -> Event {
    Event::Finished {
        text: text.map(str::to_owned),
        is_error,
        usage: Some(Usage::default()),
        stop: stop.map(str::to_owned),
    }
}

pub fn tool(id: &str, name: &str, input: Value) -> Event {
    Event::NativeTool {
        id: Some(id.to_owned()),
        name: name.to_owned(),
        input,
    }
}

pub fn tool_result(id: &str, output: &str, is_error: bool) -> Event {
    Event::NativeToolResult {
        id: Some(id.to_owned()),
        output: output.to_owned(),
        is_error,
    }
}

/// Garbage any JSON decoder must survive: no panic, the contract kept, and nothing of it
/// taken for the assistant's text.
pub fn check_garbage(format: Format) {
    let cases: &[&[u8]] = &[
        b"\xff\xfe\x00\x01binary\x80\n\x00\x00\n",
        b"plain words, not an event\n",
        b"[1, 2, 3]\n",
        b"\n\n   \n\r\n",
        b"\xf0\x9f\x98",
    ];
    for case in cases {
        let events = decode_all(format, case);
        assert_eq!(events, [], "{format:?} on {case:?}");
        for size in [1, 3] {
            assert_eq!(
                decode_chunked(format, case, size),
                [],
                "{format:?} on {case:?}"
            );
        }
    }

    // A `{` line that is not JSON is reported, and the next line still decodes.
    let events = decode_all(format, b"{oops, not json\n");
    assert!(
        matches!(&events[..], [Event::Malformed { reason, raw }]
            if reason.starts_with("invalid JSON") && raw == "{oops, not json"),
        "{format:?}: {events:#?}"
    );

    // A line cut short by the end of output.
    let events = decode_all(format, br#"{"type":"result","is_er"#);
    assert_eq!(
        events,
        [Event::Malformed {
            reason: "incomplete JSON line at end of output".into(),
            raw: r#"{"type":"result","is_er"#.into(),
        }],
        "{format:?}"
    );

    // A line longer than the cap is dropped and reported with its length.
    let len = super::lines::MAX_LINE + 10;
    let mut long = Vec::with_capacity(len + 1);
    long.push(b'{');
    long.resize(len, b'x');
    long.push(b'\n');
    let events = decode_all(format, &long);
    assert!(
        matches!(&events[..], [Event::Malformed { reason, raw }]
            if reason.contains(&len.to_string()) && raw.len() < 300),
        "{format:?}: {events:?}"
    );

    // Valid JSON of unknown types and shapes is skipped.
    let events = decode_all(
        format,
        b"{}\n{\"type\":42}\n{\"type\":\"something_new\",\"x\":[1]}\n{\"type\":null}\n",
    );
    assert_eq!(events, [], "{format:?}");
}
