//! Prompt extraction on the requests the real CLIs sent (recorded).

use super::*;

/// The model requests of a fixture, without HEAD probes.
pub(super) fn bodies(name: &str) -> Vec<Value> {
    fixture(name)
        .into_iter()
        .filter(|r| r["method"] == "POST")
        .map(|r| r["body"].clone())
        .collect()
}

pub(super) fn turn(prompt: &str, tool_result: Option<&str>) -> Extracted {
    Extracted {
        prompt: Some(prompt.to_string()),
        tool_result: tool_result.map(str::to_string),
    }
}

#[test]
fn extracts_claude_prompts() {
    // 2.1.329: context in <system-reminder> blocks, role "system" messages, the last message
    // often role "system".
    let plain = bodies("claude/a_plain_stream_json");
    assert_eq!(
        plain[0]["messages"].as_array().unwrap().last().unwrap()["role"],
        "system"
    );
    assert_eq!(extract_anthropic(&plain[0]), turn("hello", None));
    // A resumed prompt arrives as a plain string after the replayed history.
    let resumed = bodies("claude/c_turn2_resume_stream_json");
    assert_eq!(
        extract_anthropic(&resumed[0]),
        turn("what number did I ask you to remember?", None)
    );
    // The tool round trip: the tool result, and the prompt that led to it.
    let tool = bodies("claude/e_tool_bash_allowed");
    assert_eq!(extract_anthropic(&tool[0]), turn("run mkdir for me", None));
    assert_eq!(
        extract_anthropic(&tool[1]),
        turn("run mkdir for me", Some("(Bash completed with no output)"))
    );
    // stream-json input and the older 2.1.197 layout (several reminders, no system messages).
    let input = bodies("claude/h_stream_json_input");
    assert_eq!(
        extract_anthropic(&input[0]).prompt.as_deref(),
        Some("hello via stream-json input")
    );
    let old = bodies("claude-2.1.197/a_plain_stream_json");
    assert_eq!(extract_anthropic(&old[0]), turn("hello", None));
}

#[test]
fn extracts_gemini_prompts_and_recognises_the_router() {
    let plain = bodies("gemini/a_plain_stream_json");
    let (router, stream) = (&plain[0], &plain[1]);
    assert!(is_gemini_structured(router));
    assert!(!is_gemini_structured(stream));
    assert_eq!(
        schema_instance(&router["generationConfig"]["responseJsonSchema"]),
        json!({"complexity_reasoning": "fake", "complexity_score": 1})
    );
    assert_eq!(extract_gemini(router), turn("hello", None));
    assert_eq!(extract_gemini(stream), turn("hello", None));
    // Yolo router: <session_context> as a separate user entry; then the functionResponse turn.
    let yolo = bodies("gemini/e_tool_shell_yolo");
    assert_eq!(extract_gemini(&yolo[0]), turn("run echo for me", None));
    assert_eq!(extract_gemini(&yolo[1]), turn("run echo for me", None));
    assert_eq!(
        extract_gemini(&yolo[2]),
        turn(
            "run echo for me",
            Some(
                "<untrusted_context>\nOutput: fake-tool-output\nProcess Group PGID: 7872\n</untrusted_context>"
            )
        )
    );
    let resumed = bodies("gemini/c_turn2_resume_id_stream_json");
    assert_eq!(
        extract_gemini(&resumed[1]),
        turn("what number did I ask you to remember?", None)
    );
    let stdin = bodies("gemini/d_stdin_plus_p_json");
    assert_eq!(
        extract_gemini(&stdin[1]),
        turn("context from stdin\n\nhello", None)
    );
}

#[test]
fn extracts_codex_prompts() {
    let plain = bodies("codex/a_plain_json");
    assert_eq!(extract_openai(&plain[0]), turn("hello", None));
    let resumed = bodies("codex/c_turn2_resume_id_json");
    assert_eq!(
        extract_openai(&resumed[0]),
        turn("what number did I ask you to remember?", None)
    );
    let tool = bodies("codex/e_tool_exec_readonly");
    assert_eq!(extract_openai(&tool[0]), turn("run echo for me", None));
    let second = extract_openai(&tool[1]);
    assert_eq!(second.prompt.as_deref(), Some("run echo for me"));
    assert!(
        second
            .tool_result
            .unwrap()
            .ends_with("Output:\nfake-tool-output\n")
    );
}

#[test]
fn recorded_prompts_match_the_recorders_view() {
    // The recording server's own summary (`view.prompt`) agrees with our extraction wherever it
    // was not a tool round trip (where it showed the tool result instead).
    for name in [
        "claude/a_plain_stream_json",
        "claude/c_turn2_resume_stream_json",
        "claude-2.1.197/a_plain_stream_json",
        "gemini/a_plain_stream_json",
        "gemini/c_turn2_resume_id_stream_json",
        "gemini/d_stdin_plus_p_json",
        "codex/a_plain_json",
        "codex/c_turn2_resume_id_json",
    ] {
        for request in fixture(name).iter().filter(|r| r["method"] == "POST") {
            let body = &request["body"];
            let extracted = match request["view"]["api"].as_str().unwrap() {
                "anthropic" => extract_anthropic(body),
                "gemini" => extract_gemini(body),
                _ => extract_openai(body),
            };
            assert_eq!(
                extracted.prompt.as_deref(),
                request["view"]["prompt"].as_str(),
                "{name} #{}",
                request["seq"]
            );
        }
    }
}
