//! Tests of the renderer: text, json and stream-json from scripted events.
use super::*;
use codecrew_core::session::{StopReason, SubEvent};
use codecrew_core::usage::JobUsage;
use codecrew_intercept::ToolCall;
use codecrew_tools::{Mode, ToolResult};
use serde_json::{Value, json};

fn label(agent: &str) -> JobLabel {
    JobLabel {
        agent: agent.to_owned(),
        provider: "claude".to_owned(),
        model: Some("haiku".to_owned()),
        mode: "query",
    }
}

fn report(agent: &str, success: bool, response: &str) -> JobReport {
    JobReport {
        agent: agent.to_owned(),
        provider: "claude".to_owned(),
        model: None,
        mode: Mode::Query,
        success,
        response: response.to_owned(),
        turns: 1,
        tool_calls: Vec::new(),
        session_id: None,
        duration_ms: 1,
        error: (!success).then(|| "boom".to_owned()),
        error_code: None,
        stop_reason: StopReason::Answered,
        usage: JobUsage {
            reported: codecrew_core::usage::Usage {
                input_tokens: Some(10),
                output_tokens: Some(2),
                cached_tokens: None,
                cost_usd: Some(0.5),
            },
            turns: 1,
            tool_calls: 0,
            native_tool_calls: 0,
            duration_ms: 1,
            sub_agents: None,
        },
        failure: None,
        data: None,
        schema_errors: Vec::new(),
    }
}

fn call() -> JobEvent {
    JobEvent::ToolCall {
        id: "c1".into(),
        call: ToolCall {
            name: "codecrew:read_file".into(),
            tool: "read_file".into(),
            input: json!({"path": "a"}),
        },
    }
}

fn ok_result() -> JobEvent {
    JobEvent::ToolResult(ToolResult {
        tool_call_id: "c1".into(),
        tool: "read_file".into(),
        status: Status::Ok,
        output: json!({}),
        error: None,
        duration_ms: 3,
        decided: None,
    })
}

fn render(
    output: RunOutput,
    raw: bool,
    agents: &[&str],
    script: &[(usize, JobEvent)],
    reports: &[JobReport],
) -> String {
    let labels = agents.iter().map(|a| label(a)).collect();
    let mut renderer = Renderer::new(output, raw, labels, Vec::new());
    renderer.start().unwrap();
    for (index, event) in script {
        renderer.event(*index, event).unwrap();
    }
    for (index, report) in reports.iter().enumerate() {
        renderer.done(index, report).unwrap();
    }
    renderer.finish(reports).unwrap();
    String::from_utf8(renderer.into_inner()).unwrap()
}

#[test]
fn one_job_streams_text_with_call_notices() {
    let script = [
        (0, JobEvent::Text("Let me look.".into())),
        (0, call()),
        (0, ok_result()),
        (0, JobEvent::Text("It says hi.".into())),
    ];
    let out = render(
        RunOutput::Text,
        false,
        &["claude"],
        &script,
        &[report("claude", true, "It says hi.")],
    );
    assert_eq!(
        out,
        "Let me look.\n→ codecrew:read_file {\"path\":\"a\"}\n  ← read_file ok (3 ms)\nIt says hi.\n"
    );
}

#[test]
fn a_palette_styles_only_codecrews_own_lines() {
    let labels = vec![label("claude"), label("gemini")];
    let mut renderer =
        Renderer::new(RunOutput::Text, false, labels, Vec::new()).with_palette(Palette::ANSI);
    renderer
        .event(0, &JobEvent::Text("plain\n".into()))
        .unwrap();
    renderer.event(0, &call()).unwrap();
    renderer.done(0, &report("claude", true, "")).unwrap();
    renderer.done(1, &report("gemini", false, "")).unwrap();
    let out = String::from_utf8(renderer.into_inner()).unwrap();
    assert_eq!(
        out,
        "\x1b[1m[claude]\x1b[0m plain\n\
         \x1b[1m[claude]\x1b[0m \x1b[2m→ codecrew:read_file {\"path\":\"a\"}\x1b[0m\n\
         \x1b[1m[gemini]\x1b[0m \x1b[1m\x1b[31m✗ boom\x1b[0m\n"
    );
}

#[test]
fn json_is_never_styled() {
    for output in [RunOutput::Json, RunOutput::StreamJson] {
        let mut renderer = Renderer::new(output, false, vec![label("claude")], Vec::new())
            .with_palette(Palette::ANSI);
        renderer.start().unwrap();
        renderer.event(0, &call()).unwrap();
        renderer.event(0, &ok_result()).unwrap();
        let reports = [report("claude", false, "x")];
        renderer.done(0, &reports[0]).unwrap();
        renderer.finish(&reports).unwrap();
        let out = renderer.into_inner();
        assert!(!out.contains(&0x1b), "{}", String::from_utf8_lossy(&out));
    }
}

#[test]
fn raw_prints_only_the_answer() {
    let script = [(0, JobEvent::Text("thinking aloud".into())), (0, call())];
    let out = render(
        RunOutput::Text,
        true,
        &["claude"],
        &script,
        &[report("claude", true, "Final.")],
    );
    assert_eq!(out, "Final.\n");
}

#[test]
fn several_jobs_stream_whole_lines_under_their_names() {
    let script = [
        (1, JobEvent::Text("B starts ".into())),
        (0, JobEvent::Text("A one\nA tw".into())),
        (1, JobEvent::Text("and ends\n".into())),
        (0, JobEvent::Text("o\n".into())),
        (0, JobEvent::Text("A unended".into())),
    ];
    let out = render(
        RunOutput::Text,
        false,
        &["claude", "gemini"],
        &script,
        &[report("claude", true, "A"), report("gemini", false, "")],
    );
    assert_eq!(
        out,
        "[claude] A one\n[gemini] B starts and ends\n[claude] A two\n\
         [claude] A unended\n[gemini] ✗ boom\n"
    );
}

#[test]
fn raw_with_several_jobs_prints_each_answer_under_a_header() {
    let out = render(
        RunOutput::Text,
        true,
        &["claude", "gemini"],
        &[(0, JobEvent::Text("thinking".into()))],
        &[report("claude", true, "A"), report("gemini", false, "")],
    );
    assert_eq!(
        out,
        "━━ @claude (claude · haiku) ━━\nA\n\n━━ @gemini (claude · haiku) ━━\n✗ boom\n\n"
    );
}

#[test]
fn json_is_one_document() {
    let out = render(
        RunOutput::Json,
        false,
        &["claude"],
        &[(0, JobEvent::Text("x".into()))],
        &[report("claude", true, "x")],
    );
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["success"], true);
    assert_eq!(value["results"][0]["response"], "x");
    assert_eq!(value["results"][0]["usage"]["input_tokens"], 10);
    assert_eq!(out.lines().count(), 1);
}

#[test]
fn json_totals_the_usage_of_every_result() {
    let out = render(
        RunOutput::Json,
        false,
        &["claude", "gemini"],
        &[],
        &[report("claude", true, "x"), report("gemini", true, "y")],
    );
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        value["usage"],
        json!({"input_tokens": 20, "output_tokens": 4, "cached_tokens": null,
               "cost_usd": 1.0, "turns": 2, "tool_calls": 0, "native_tool_calls": 0,
               "duration_ms": 2})
    );
}

#[test]
fn stream_json_events_name_their_agent() {
    let script = [
        (0, JobEvent::Text("x".into())),
        (0, call()),
        (0, ok_result()),
        (
            0,
            JobEvent::TurnEnd {
                turn: 1,
                usage: Some(codecrew_core::usage::Usage {
                    output_tokens: Some(3),
                    ..Default::default()
                }),
                context_window: Some(200_000),
            },
        ),
    ];
    let out = render(
        RunOutput::StreamJson,
        false,
        &["claude"],
        &script,
        &[report("claude", true, "x")],
    );
    let types: Vec<String> = out
        .lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line).unwrap();
            assert_eq!(value["agent"], "claude");
            value["type"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(
        types,
        [
            "start",
            "text",
            "tool_call",
            "tool_result",
            "turn_end",
            "done"
        ]
    );
    let turn_end: Value = serde_json::from_str(out.lines().nth(4).unwrap()).unwrap();
    assert_eq!(turn_end["turn"], 1);
    assert_eq!(turn_end["usage"]["output_tokens"], 3);
    assert_eq!(turn_end["usage"]["input_tokens"], Value::Null);
    assert_eq!(turn_end["context_window"], 200_000);
    let done: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(done["usage"]["cost_usd"], 0.5);
}

fn sub(agent: &str, depth: u32, event: JobEvent) -> JobEvent {
    JobEvent::Sub(Box::new(codecrew_core::session::SubEvent {
        agent: agent.to_owned(),
        depth,
        event,
    }))
}

#[test]
fn sub_agents_print_whole_lines_nested_under_the_call() {
    let script = [
        (0, JobEvent::Text("Asking.".into())),
        (0, sub("gemini", 1, JobEvent::Text("half of ".into()))),
        (0, sub("codex", 1, JobEvent::Text("codex line\n".into()))),
        (0, sub("gemini", 1, JobEvent::Text("a line\nrest".into()))),
        (0, sub("gemini", 1, JobEvent::MessageEnd)),
        (
            0,
            sub(
                "gemini",
                1,
                sub("claude", 2, JobEvent::Text("deep\n".into())),
            ),
        ),
        (0, sub("codex", 1, call())),
    ];
    let out = render(
        RunOutput::Text,
        false,
        &["claude"],
        &script,
        &[report("claude", true, "")],
    );
    assert_eq!(
        out,
        "Asking.\n  │ @codex: codex line\n  │ @gemini: half of a line\n  │ @gemini: rest\n\
         \x20 │   │ @gemini → @claude: deep\n  │ @codex: → codecrew:read_file {\"path\":\"a\"}\n"
    );
}

#[test]
fn sub_agent_events_name_their_parent_and_depth_in_stream_json() {
    let script = [(
        0,
        sub("gemini", 1, sub("codex", 2, JobEvent::Text("x".into()))),
    )];
    let out = render(
        RunOutput::StreamJson,
        false,
        &["claude"],
        &script,
        &[report("claude", true, "")],
    );
    let text: Value = serde_json::from_str(out.lines().nth(1).unwrap()).unwrap();
    assert_eq!(
        text,
        json!({"type": "text", "job": 0, "agent": "codex", "text": "x",
               "parent": "gemini", "depth": 2})
    );
}

/// What the model writes, cut anywhere, reaches the output inert in every text form; JSON
/// keeps it exact.
#[test]
fn the_models_text_is_inert_however_it_is_cut() {
    let hostile = "a\u{1b}]52;c;eA==\u{7}b\r\nc\rd\u{9b}2J";
    let pieces: Vec<(usize, JobEvent)> = hostile
        .chars()
        .map(|c| (0, JobEvent::Text(c.to_string())))
        .chain([(0, JobEvent::MessageEnd)])
        .collect();
    let shown = "a^[]52;c;eA==^Gb\nc^Md\\u{9b}2J";
    let live = render(
        RunOutput::Text,
        false,
        &["claude"],
        &pieces,
        &[report("claude", true, hostile)],
    );
    assert_eq!(live, format!("{shown}\n"));
    let raw = render(
        RunOutput::Text,
        true,
        &["claude"],
        &[],
        &[report("claude", true, hostile)],
    );
    assert_eq!(raw, format!("{shown}\n"));
    let mut two = pieces.clone();
    two.push((1, JobEvent::Text("\u{1b}[2Jz\n".into())));
    let many = render(
        RunOutput::Text,
        false,
        &["claude", "gemini"],
        &two,
        &[report("claude", true, hostile), report("gemini", true, "z")],
    );
    assert!(many.contains("[claude] a^[]52;c;eA==^Gb\n"), "{many}");
    assert!(many.contains("[claude] c^Md\\u{9b}2J\n"), "{many}");
    assert!(many.contains("[gemini] ^[[2Jz\n"), "{many}");
    let json = render(
        RunOutput::Json,
        false,
        &["claude"],
        &pieces,
        &[report("claude", true, hostile)],
    );
    let document: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(document["results"][0]["response"], hostile);
    assert!(!json.chars().any(|c| c.is_control() && c != '\n'), "{json}");
}

/// A failure's message (a CLI's or a server's words) and a sub-agent's lines are inert.
#[test]
fn errors_and_sub_agents_lines_are_inert() {
    let mut failed = report("claude", false, "");
    failed.error = Some("API Error \u{1b}]0;title\u{7}".into());
    let text = render(
        RunOutput::Text,
        false,
        &["claude", "gemini"],
        &[],
        &[failed, report("gemini", true, "")],
    );
    assert!(text.contains("✗ API Error ^[]0;title^G"), "{text}");
    let sub = JobEvent::Sub(Box::new(SubEvent {
        agent: "gemini".into(),
        depth: 1,
        event: JobEvent::Text("sub \u{1b}[2J line\n".into()),
    }));
    let text = render(
        RunOutput::Text,
        false,
        &["claude"],
        &[(0, sub)],
        &[report("claude", true, "")],
    );
    assert!(text.contains("@gemini: sub ^[[2J line"), "{text}");
}

/// With several agents, what the markdown renderer still holds when a job ends without
/// ending its message (Ctrl-C, a timeout) goes out line by line under the agent's name.
#[test]
fn held_markdown_ends_under_the_agents_name() {
    let labels = vec![label("claude"), label("gemini")];
    let mut renderer = Renderer::new(RunOutput::Text, false, labels, Vec::new()).with_markdown(80);
    renderer
        .event(0, &JobEvent::Text("- one\n- two\n".into()))
        .unwrap();
    renderer.done(0, &report("claude", true, "")).unwrap();
    let text = String::from_utf8(renderer.into_inner()).unwrap();
    assert_eq!(text, "[claude] • one\n[claude] • two\n");
}

/// Two agents, one of which calls a tool and one of which fails, rendered in every
/// format: the snapshots under `src/output/render/snapshots/` are what a user sees.
#[test]
fn every_format_renders_a_run_of_two_agents_as_the_snapshots_show() {
    let script = [
        (0, JobEvent::Text("Let me look at ".into())),
        (1, JobEvent::Text("Thinking.\n".into())),
        (0, JobEvent::Text("the file.\n".into())),
        (0, call()),
        (0, ok_result()),
        (0, JobEvent::Text("It says **hi**.\n".into())),
        (1, JobEvent::Notice("the CLI exited with code 1".into())),
    ];
    let reports = [
        report("claude", true, "It says **hi**."),
        report("codex", false, ""),
    ];
    let agents = ["claude", "codex"];
    for (name, output, raw) in [
        ("text", RunOutput::Text, false),
        ("raw", RunOutput::Text, true),
        ("json", RunOutput::Json, false),
        ("stream_json", RunOutput::StreamJson, false),
    ] {
        let rendered = render(output, raw, &agents, &script, &reports);
        insta::assert_snapshot!(format!("two_agents_{name}"), rendered);
    }
}

/// `--schema` with text output: the data alone for one agent (never its streamed text),
/// one line per agent for several, and nothing on stdout for an answer that did not fit.
#[test]
fn schema_data_is_printed_alone() {
    let data = |agents: &[&str], reports: &[JobReport]| {
        let labels: Vec<JobLabel> = agents.iter().map(|a| label(a)).collect();
        let mut renderer = Renderer::data(&labels, Vec::new());
        renderer.start().unwrap();
        renderer
            .event(0, &JobEvent::Text("```json\n".into()))
            .unwrap();
        for (index, report) in reports.iter().enumerate() {
            renderer.done(index, report).unwrap();
        }
        renderer.finish(reports).unwrap();
        String::from_utf8(renderer.into_inner()).unwrap()
    };
    let mut fits = report("claude", true, "```json\n{\"file\": \"a\"}\n```");
    fits.data = Some(json!({"file": "a"}));
    let mut misfit = report("gemini", false, "{\"file\": 3}");
    misfit.error = Some("the answer does not fit the schema: at /file: 3 is not a string".into());
    misfit.failure = Some(codecrew_core::session::Failure::SchemaMismatch);
    assert_eq!(
        data(&["claude"], std::slice::from_ref(&fits)),
        "{\"file\":\"a\"}\n"
    );
    assert_eq!(data(&["gemini"], std::slice::from_ref(&misfit)), "");
    let lines: Vec<Value> = data(&["claude", "gemini"], &[fits, misfit])
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            json!({"agent": "claude", "ok": true, "data": {"file": "a"}}),
            json!({"agent": "gemini", "ok": false,
                   "error": "the answer does not fit the schema: at /file: 3 is not a string"}),
        ]
    );
}

/// A turn asked again (an answer that did not fit `--schema`) is a `retry` event in
/// stream-json, not an `error`: the job goes on, and a script that stops at an error
/// would give up on a run that then answers.
#[test]
fn a_turn_asked_again_is_a_retry_not_an_error() {
    let script = [
        (
            0,
            JobEvent::Retry(
                "the answer does not fit the schema; asking again (1 of 2): not JSON".into(),
            ),
        ),
        (0, JobEvent::Text("{\"ok\": true}".into())),
    ];
    let reports = [report("claude", true, "{\"ok\": true}")];
    let rendered = render(RunOutput::StreamJson, false, &["claude"], &script, &reports);
    let events: Vec<serde_json::Value> = rendered
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let retry = events
        .iter()
        .find(|event| event["type"] == "retry")
        .unwrap_or_else(|| panic!("no retry event in {rendered}"));
    assert_eq!(retry["agent"], "claude");
    assert_eq!(retry["job"], 0);
    assert!(
        retry["message"].as_str().unwrap().contains("asking again"),
        "{retry}"
    );
    assert!(
        events.iter().all(|event| event["type"] != "error"),
        "{rendered}"
    );
}
