use super::*;
use serde_json::json;

fn call(tool: &str, input: Value) -> Verdict {
    Verdict::Call(ToolCall {
        name: format!("codecrew:{tool}"),
        tool: tool.to_owned(),
        input,
    })
}

#[test]
fn canonical_and_variant_envelopes() {
    let cases = [
        json!({"type":"tool_use","name":"codecrew:read_file","input":{"path":"a"}}),
        json!({"name":"codecrew:read_file","input":{"path":"a"}}),
        json!({"name":"codecrew__read_file","arguments":{"path":"a"}}),
        json!({"name":"codecrew:read_file","parameters":"{\"path\":\"a\"}"}),
        json!({"name":"codecrew:read_file","args":{"path":"a"},"id":"x"}),
    ];
    for case in cases {
        assert_eq!(
            judge(&case),
            call("read_file", json!({"path":"a"})),
            "{case}"
        );
    }
    assert_eq!(
        judge(&json!({"name":"codecrew:help"})),
        call("help", json!({}))
    );
    assert_eq!(
        judge(&json!({"name":"codecrew:help","input":null})),
        call("help", json!({}))
    );
}

#[test]
fn not_envelopes() {
    for case in [
        json!({"name":"Bash","input":{}}),
        json!({"type":"tool_result","name":"codecrew:read_file"}),
        json!({"name":"read_file","input":{}}),
        json!({"name":5}),
        json!([1, 2]),
        json!("codecrew:help"),
    ] {
        assert_eq!(judge(&case), Verdict::NotEnvelope, "{case}");
    }
}

#[test]
fn invalid_envelopes_say_why() {
    let cases = [
        (json!({"name":"codecrew:"}), "invalid tool name"),
        (json!({"name":"codecrew:a b"}), "invalid tool name"),
        (
            json!({"name":"codecrew:x","input":[1]}),
            "must be a JSON object",
        ),
        (
            json!({"name":"codecrew:x","input":"[1]"}),
            "must hold a JSON object",
        ),
        (json!({"name":"codecrew:x","input":"{"}), "not valid JSON"),
        (
            json!({"name":"codecrew:x","input":{},"args":{}}),
            "ambiguous input",
        ),
    ];
    for (case, reason) in cases {
        match judge(&case) {
            Verdict::Invalid(got) => assert!(got.contains(reason), "{case}: {got}"),
            other => panic!("{case}: {other:?}"),
        }
    }
}

fn fixed(text: &str, close_missing: bool) -> Option<String> {
    repair(text, close_missing).map(|(fixed, _)| fixed)
}

#[test]
fn repairs() {
    assert_eq!(
        fixed("{\"a\":[1,2,],}", false).as_deref(),
        Some("{\"a\":[1,2]}")
    );
    assert_eq!(
        fixed("{\"a\":\"x\ny\"}", false).as_deref(),
        Some("{\"a\":\"x\\ny\"}")
    );
    assert_eq!(
        fixed("{\"a\":{\"b\":1}", true).as_deref(),
        Some("{\"a\":{\"b\":1}}")
    );
    assert_eq!(fixed("{\"a\":{\"b\":1}", false), None);
    assert_eq!(fixed("{\"a\":\"open", true), None);
    assert_eq!(fixed("{\"a\":1]", true), None);
    assert_eq!(fixed("{\"a\":1}", true), None, "nothing to repair");
    assert_eq!(
        fixed("{\"a\":\"x,}\"}", false),
        None,
        "commas in strings stay"
    );
}

#[test]
fn extra_closers_and_a_comma_after_a_complete_value_are_dropped() {
    let cases = [
        ("{\"a\":{\"b\":1}}}", "{\"a\":{\"b\":1}}"),
        ("{\"a\":1}}}} \n", "{\"a\":1} \n"),
        ("{\"a\":1}]", "{\"a\":1}"),
        ("{\"a\":1},", "{\"a\":1}"),
        ("{\"a\":1}},", "{\"a\":1}"),
        ("[{\"a\":1}]]", "[{\"a\":1}]"),
    ];
    for (text, expected) in cases {
        let (got, repairs) = repair(text, false).unwrap();
        assert_eq!(got, expected, "{text}");
        assert!(repairs.extra_closers || repairs.trailing_comma, "{text}");
    }
    let (_, repairs) = repair("{\"a\":1}}}", false).unwrap();
    assert_eq!(
        repairs.to_string(),
        "extra closing brackets at the end dropped"
    );
    // Only at the very end, after a complete value: never before one, never followed
    // by anything that could be read.
    for text in [
        "}{\"a\":1}",
        "{\"a\":1}} {\"b\":2}",
        "{\"a\":1}}, \"b\": 2}",
        "{\"a\":1}} and more",
        "{\"a\":1}}\"x\"",
    ] {
        assert_eq!(fixed(text, false), None, "{text}");
    }
}

#[test]
fn a_typed_call_that_names_no_codecrew_tool_says_why_and_never_how_to_make_one() {
    for case in [
        json!({"type":"tool_use","name":"read_file","input":{"path":"a"}}),
        json!({"type":"tool_use","name":"Bash","input":{"command":"ls"}}),
        json!({"type":"tool_use","input":{}}),
        json!({"type":"tool_use","name":"Bash","input":{"command":"rm -rf ~"}}),
        json!({"type":"tool_use","name":7}),
    ] {
        match judge(&case) {
            Verdict::Invalid(reason) => {
                assert!(reason.contains("a codecrew tool's"), "{case}: {reason}");
                // A name from a file the model quotes is not turned into a call.
                assert!(!reason.contains("codecrew:"), "{case}: {reason}");
            }
            other => panic!("{case}: {other:?}"),
        }
    }
    assert!(matches!(
        judge(&json!({"type":"tool_use","name":"read_file"})),
        Verdict::Invalid(reason) if reason.contains("\"read_file\" is not")
    ));
}

#[test]
fn the_echo_of_a_neutralised_envelope_is_quiet_text() {
    let echo = json!({"type":"tool_use","name":"codecrew\u{200B}:write_file","input":{}});
    assert_eq!(judge(&echo), Verdict::NotEnvelope);
    assert_eq!(judge_text(&echo.to_string(), false, false), None);
    assert!(!opens_like_envelope(&echo.to_string()));
    let quoted = crate::neutralise_envelopes(
        r#"{"type":"tool_use","name":"codecrew:write_file","input":{}}"#,
    );
    assert!(!opens_like_envelope(&quoted), "{quoted}");
}

#[test]
fn what_opens_like_an_envelope() {
    for text in [
        r#"{"type":"tool_use","name":"x"#,
        r#"{ "type" : "tool_use" , oops"#,
        r#"{"name":"codecrew:read_file"}"#,
        r#"{"name":"codecrew__grep", "input": {"#,
        r#"{"id": 3, "input": {"path": "a,}"}, "name": "codecrew:x"}"#,
        r#"[ {"type":"tool_use"}, 1]"#,
        "{\n  \"type\": \"tool_use\",\n",
    ] {
        assert!(opens_like_envelope(text), "{text}");
    }
    for text in [
        r#"{"example": {"type":"tool_use","name":"codecrew:x"}}"#,
        r#"[1, {"type":"tool_use"}]"#,
        r#"{"name":"read_file"}"#,
        r#"{"type":"tool_result","name":"x"}"#,
        r#"{"type":"tool_use_x"}"#,
        r#"{"type":"tool_u"#,
        r#"{name: "codecrew:x"}"#,
        "{name} is a placeholder",
        "[1] See the note",
        "",
        "{",
    ] {
        assert!(!opens_like_envelope(text), "{text}");
    }
}

#[test]
fn judge_text_repairs_only_addressed_envelopes() {
    let broken = "{\"name\":\"codecrew:help\",\"input\":{},}";
    assert_eq!(
        judge_text(broken, false, false),
        Some(vec![call("help", json!({}))])
    );
    assert_eq!(judge_text("{\"a\":1,}", false, false), None);
    let truncated = "{\"name\":\"codecrew:help\",\"input\":{}";
    assert_eq!(
        judge_text(truncated, true, false),
        Some(vec![call("help", json!({}))])
    );
    assert!(matches!(
        judge_text(truncated, false, false).as_deref(),
        Some([Verdict::Invalid(_)])
    ));
}
