//! Recorded conversations with real ACP agents, replayed through [`Acp`]: what each
//! agent's stream needs ([`Dialect`]) is checked against what it really sent.
//!
//! A recording (`tests/fixtures/acp/<cli>/<scenario>.jsonl`) is one JSON object per
//! line, `{"t_ms", "dir", "msg"}`: `out` what the recording's client sent, `in` what the
//! agent answered, `stderr` and `meta` notes. The replay plays the agent's side: its
//! answers go to codecrew's client, whose own requests take the place of the recorded
//! client's (ids are matched by order, one request in flight at a time).

use std::path::Path;

use codecrew_intercept::decode::{Event, Format, Usage};
use codecrew_intercept::{Interceptor, Item, ScannerLimits, Segment};
use serde_json::Value;

use super::*;
use crate::drive::json_lines::parse_lines;
use crate::drive::native::Verdict;

/// What codecrew's client made of a recording.
pub(super) struct Replay {
    /// Per turn, the events codecrew's client made of the agent's messages.
    pub turns: Vec<Vec<Event>>,
    /// Every line codecrew's client sent.
    pub sent: Vec<Value>,
    /// The questions codecrew was asked, as the native tool names the gate saw.
    pub asked: Vec<String>,
    /// What each question amounted to: `tool input`.
    pub judged: Vec<String>,
}

impl Replay {
    /// Turn `n` as the session loop reads it: text, codecrew calls, results.
    pub fn items(&self, n: usize) -> Vec<Item> {
        let mut interceptor = Interceptor::new(Format::Text, ScannerLimits::default());
        let mut items = Vec::new();
        interceptor.feed_events(self.turns[n].clone(), &mut items);
        interceptor.finish(&mut items);
        items
    }

    /// The answer's text in turn `n`, with codecrew's envelopes taken out.
    pub fn text(&self, n: usize) -> String {
        self.items(n)
            .into_iter()
            .filter_map(|item| match item {
                Item::Segment(Segment::Text(text)) => Some(text),
                _ => None,
            })
            .collect()
    }

    /// The codecrew calls found in turn `n`, as `tool path`.
    pub fn calls(&self, n: usize) -> Vec<String> {
        self.items(n)
            .into_iter()
            .filter_map(|item| match item {
                Item::Segment(Segment::Call(call)) => Some(format!(
                    "{} {}",
                    call.tool,
                    call.input["path"].as_str().unwrap_or_default()
                )),
                _ => None,
            })
            .collect()
    }

    /// How turn `n` ended: what it used, or why it failed.
    pub fn result(&self, n: usize) -> Result<Option<Usage>, String> {
        let turn = &self.turns[n];
        let Some(Event::Finished {
            is_error, usage, ..
        }) = turn.last()
        else {
            panic!("turn {n} did not finish: {turn:?}");
        };
        if !is_error {
            return Ok(*usage);
        }
        let why = turn.iter().rev().find_map(|event| match event {
            Event::Error(message) => Some(message.clone()),
            _ => None,
        });
        Err(why.unwrap_or_else(|| panic!("turn {n} failed without why: {turn:?}")))
    }

    /// What turn `n` used, which ended well.
    pub fn usage(&self, n: usize) -> Usage {
        match self.result(n) {
            Ok(Some(usage)) => usage,
            other => panic!("turn {n}: {other:?}"),
        }
    }

    /// What each event of turn `n` is.
    pub fn kinds(&self, n: usize) -> Vec<&'static str> {
        self.turns[n]
            .iter()
            .map(|event| match event {
                Event::Session { .. } => "session",
                Event::Text(_) => "text",
                Event::TextEnd => "text end",
                Event::Thinking(_) => "thinking",
                Event::NativeTool { .. } => "tool",
                Event::NativeToolResult { .. } => "tool result",
                Event::Finished { .. } => "finished",
                Event::ContextWindow(_) => "context window",
                Event::Error(_) => "error",
                Event::Malformed { .. } => "malformed",
            })
            .collect()
    }
}

/// Replays `tests/fixtures/acp/<name>` through a client speaking `dialect`, deciding
/// each of the agent's questions with `verdict`.
pub(super) fn replay(name: &str, dialect: Dialect, verdict: impl Fn(&str) -> Verdict) -> Replay {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/acp")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let agent = match name.split('/').next() {
        Some("opencode") => "opencode acp",
        Some(cli) => &format!("{cli} --acp"),
        None => "agent",
    };
    let mut acp = Acp::new(agent, "/ws".to_owned()).speaking(dialect);
    let mut replay = Replay {
        turns: Vec::new(),
        sent: Vec::new(),
        asked: Vec::new(),
        judged: Vec::new(),
    };
    // The id of codecrew's request in flight, which the agent's next answer is to.
    let mut in_flight: Option<Value> = None;
    let mut turn_over = true;
    let mut events = Vec::new();
    let send = |bytes: Vec<u8>, replay: &mut Replay, in_flight: &mut Option<Value>| {
        for message in parse_lines(&bytes) {
            if message.get("method").is_some() {
                *in_flight = Some(message["id"].clone());
            }
            replay.sent.push(message);
        }
    };
    // The recording's prompts, in order: codecrew's client starts its first turn where
    // the recording's client shook hands, and each later one where that client prompted
    // again after a turn's end (else codecrew already prompted on its own).
    let prompts: Vec<&str> = records
        .iter()
        .filter(|r| r["dir"] == "out" && r["msg"]["method"] == "session/prompt")
        .filter_map(|r| r["msg"]["params"]["prompt"][0]["text"].as_str())
        .collect();
    if let Some(load) = records
        .iter()
        .find(|r| r["msg"]["method"] == "session/load")
    {
        let session = load["msg"]["params"]["sessionId"].as_str().unwrap();
        acp.resume = Some(session.to_owned());
    }
    let mut prompted = 0;
    for record in &records {
        let message = &record["msg"];
        match record["dir"].as_str() {
            Some("out") if message["method"] == "initialize" => {
                let bytes = acp.start_turn(prompts[0]);
                send(bytes, &mut replay, &mut in_flight);
                replay.turns.push(Vec::new());
                turn_over = false;
                prompted = 1;
            }
            Some("out") if message["method"] == "session/prompt" && turn_over => {
                let bytes = acp.start_turn(prompts[prompted]);
                send(bytes, &mut replay, &mut in_flight);
                replay.turns.push(Vec::new());
                turn_over = false;
                prompted += 1;
            }
            Some("in") => {
                let mut message = message.clone();
                let is_answer = message.get("method").is_none() && message.get("id").is_some();
                if is_answer {
                    message["id"] = in_flight.take().unwrap_or(Value::Null);
                }
                let mut outbox = Outbox::default();
                let over = acp.read(&line(&message), &mut events, &mut outbox);
                if let Some(turn) = replay.turns.last_mut() {
                    turn.append(&mut events);
                }
                for pending in std::mem::take(&mut outbox.pending) {
                    replay.asked.push(pending.native.clone());
                    replay.judged.extend(
                        pending
                            .calls
                            .iter()
                            .map(|call| format!("{} {}", call.tool, call.input)),
                    );
                    let answer =
                        pending.answer_now(&verdict(&replay.asked[replay.asked.len() - 1]));
                    replay.sent.extend(parse_lines(&answer));
                }
                send(outbox.bytes, &mut replay, &mut in_flight);
                turn_over |= over;
            }
            _ => {}
        }
    }
    replay
}

/// Copilot CLI's dialect, as its module states it.
fn copilot() -> Dialect {
    crate::testing::provider("copilot").acp_dialect(None)
}

fn allow(_: &str) -> Verdict {
    Verdict::Allow
}

#[test]
fn copilot_s_disabled_tools_notice_is_not_part_of_the_answer() {
    let replay = replay("copilot/disabled_tools_notice.jsonl", copilot(), allow);
    assert_eq!(replay.text(0), "Plain answer text.");
    assert!(replay.result(0).is_ok());
    // Read as the model's text, the notice is glued to the answer.
    let plain = self::replay(
        "copilot/disabled_tools_notice.jsonl",
        Dialect::default(),
        allow,
    );
    assert!(
        plain
            .text(0)
            .starts_with("Info: Disabled tools: glob, grep"),
        "{}",
        plain.text(0)
    );
}

#[test]
fn copilot_s_api_errors_are_failures_not_answers() {
    for (name, said) in [
        (
            "copilot/api_error_400.jsonl",
            "Error: 400 scripted-boom-400",
        ),
        (
            "copilot/api_error_500.jsonl",
            "Last error: 500 scripted-boom-500",
        ),
    ] {
        let replay = replay(name, copilot(), allow);
        let message = replay.result(0).expect_err(name);
        assert!(message.starts_with("copilot --acp: Error: "), "{message}");
        assert!(message.contains(said), "{message}");
        // No retry notice and no error text reaches the answer.
        assert_eq!(replay.text(0), "", "{name}");
        // The session goes on: the next prompt is answered as usual.
        assert!(replay.result(1).is_ok(), "{name}");
        assert!(!replay.text(1).is_empty(), "{name}");
    }
}

#[test]
fn every_codecrew_call_copilot_streams_is_found() {
    // Two envelopes in one message; one after a notice; one on each side of Copilot's own
    // read, its messages not separated by any newline.
    for name in [
        "copilot/two_envelopes.jsonl",
        "copilot/envelope_after_notice.jsonl",
        "copilot/envelope_native_no_newline.jsonl",
    ] {
        let replay = replay(name, copilot(), allow);
        let calls = replay.calls(0);
        assert_eq!(calls.len(), 2, "{name}: {calls:?}\n{:?}", replay.items(0));
        assert!(
            calls.iter().all(|c| c.starts_with("read_file ")),
            "{calls:?}"
        );
    }
}

#[test]
fn copilot_s_running_usage_is_taken_apart_per_turn() {
    let replay = replay("copilot/plain.jsonl", copilot(), allow);
    // 10332 for the first prompt; 20724 is the process's total after the second.
    assert_eq!(replay.usage(0).input_tokens, Some(10332));
    assert_eq!(replay.usage(1).input_tokens, Some(20724 - 10332));
    assert_eq!(replay.usage(1).output_tokens, Some(10));
}

#[test]
fn a_refused_copilot_edit_is_explained_to_the_model_within_the_turn() {
    let refuse = |_: &str| Verdict::Deny("a.txt is protected".to_owned());
    let replay = replay("copilot/permission_edit_reject.jsonl", copilot(), refuse);
    assert_eq!(replay.asked, ["copilot's Edit file"]);
    let prompts: Vec<&Value> = replay
        .sent
        .iter()
        .filter(|m| m["method"] == "session/prompt")
        .collect();
    // Copilot stopped at the refusal: codecrew's client told the model why, itself,
    // and the turn went on to the model's answer.
    assert_eq!(prompts.len(), 2, "{prompts:?}");
    let why = prompts[1]["params"]["prompt"][0]["text"].as_str().unwrap();
    assert!(
        why.contains("Edit file") && why.contains("a.txt is protected"),
        "{why}"
    );
    assert_eq!(replay.turns.len(), 1);
    assert_eq!(replay.text(0), "Default fake reply.");
    assert!(replay.result(0).is_ok());
    // "Info: Operation cancelled by user" is Copilot's, not the model's.
    assert!(!replay.text(0).contains("Info:"));
}

#[test]
fn an_allowed_copilot_edit_runs_within_the_turn() {
    let replay = replay("copilot/permission_edit_allow.jsonl", copilot(), allow);
    assert_eq!(replay.asked, ["copilot's Edit file"]);
    assert_eq!(
        replay
            .sent
            .iter()
            .filter(|m| m["method"] == "session/prompt")
            .count(),
        1
    );
    let events = replay.kinds(0);
    assert!(events.contains(&"tool result"), "{events:?}");
    assert_eq!(replay.text(0), "Finished after tool.");
}

#[test]
fn a_loaded_copilot_session_answers_without_its_replayed_history() {
    let replay = replay("copilot/load_replay.jsonl", copilot(), allow);
    assert_eq!(replay.sent[1]["method"], "session/load");
    assert_eq!(replay.text(0), "You said PINEAPPLE.");
    assert!(
        replay.calls(0).is_empty(),
        "the history's envelope is not a call"
    );
}

/// opencode's dialect for `model`, as its module states it.
fn opencode(model: Option<&str>) -> Dialect {
    crate::testing::provider("opencode").acp_dialect(model)
}

#[test]
fn opencode_takes_its_model_over_the_protocol() {
    let replay = replay(
        "opencode/model_set.jsonl",
        opencode(Some("anthropic/claude-sonnet-4-5")),
        allow,
    );
    let methods: Vec<&str> = replay
        .sent
        .iter()
        .filter_map(|m| m["method"].as_str())
        .collect();
    assert_eq!(
        methods[..4],
        [
            "initialize",
            "session/new",
            "session/set_model",
            "session/prompt"
        ]
    );
    assert_eq!(
        replay.sent[2]["params"]["modelId"],
        "anthropic/claude-sonnet-4-5"
    );
    assert!(
        matches!(&replay.turns[0][0], Event::Session { model: Some(model), .. }
                 if model == "anthropic/claude-sonnet-4-5"),
        "{:?}",
        replay.turns[0]
    );
    assert_eq!(replay.text(0), "ok");
}

#[test]
fn opencode_s_turns_report_their_tokens_and_the_session_s_cost() {
    let replay = replay("opencode/plain.jsonl", opencode(None), allow);
    assert_eq!(replay.text(0), "Hello from the fake model.");
    assert_eq!(replay.usage(0).input_tokens, Some(7644));
    assert_eq!(replay.usage(1).input_tokens, Some(7692));
    // The running cost: the transport takes each turn's part.
    assert_eq!(replay.usage(1).cost_usd, Some(0.015396));
}

#[test]
fn opencode_s_own_tools_are_judged_as_codecrew_calls() {
    let replay = replay(
        "opencode/permission_edit_allow.jsonl",
        opencode(None),
        allow,
    );
    assert_eq!(replay.judged.len(), 1, "{:?}", replay.judged);
    assert!(
        replay.judged[0].starts_with("write_file ") && replay.judged[0].contains("hello.txt"),
        "{:?}",
        replay.judged
    );
    assert_eq!(replay.text(0), "turn finished after tool");
    // A refused shell command: opencode ends its turn, the model reads why and goes on.
    let refuse = |_: &str| Verdict::Deny("not in this project".to_owned());
    let replay = self::replay(
        "opencode/permission_bash_reject.jsonl",
        opencode(None),
        refuse,
    );
    assert!(
        replay.judged[0].starts_with("run_command "),
        "{:?}",
        replay.judged
    );
    assert!(
        replay.judged[0].contains("echo hi-from-bash"),
        "{:?}",
        replay.judged
    );
    let prompts: Vec<&Value> = replay
        .sent
        .iter()
        .filter(|m| m["method"] == "session/prompt")
        .collect();
    assert_eq!(prompts.len(), 2);
    let why = prompts[1]["params"]["prompt"][0]["text"].as_str().unwrap();
    assert!(why.contains("not in this project"), "{why}");
    assert_eq!(replay.turns.len(), 1);
    assert_eq!(replay.text(0), "turn finished after tool");
}

#[test]
fn opencode_s_api_error_fails_the_turn_with_its_message() {
    let replay = replay("opencode/api_error_400.jsonl", opencode(None), allow);
    assert_eq!(
        replay.result(0),
        Err("opencode acp: Internal error: bad request: max_tokens too large".to_owned())
    );
}

#[test]
fn a_loaded_opencode_session_answers_without_its_replayed_history() {
    let replay = replay("opencode/load_replay.jsonl", opencode(None), allow);
    assert_eq!(replay.sent[1]["method"], "session/load");
    // No replayed read (a tool) nor old text: the new answer alone.
    assert_eq!(
        replay.kinds(0),
        ["session", "text", "text end", "finished"],
        "{:?}",
        replay.turns[0]
    );
    // The cost before the load is not this turn's.
    assert_eq!(replay.usage(0).cost_usd, None);
}

#[test]
fn every_file_of_an_opencode_patch_is_judged() {
    // opencode gives GPT models `apply_patch` instead of `edit`: one question for a patch
    // that adds sub/b.txt, changes a.txt and deletes .env.
    let refuse = |_: &str| Verdict::Deny(".env is protected".to_owned());
    let replay = replay("opencode/apply_patch_reject.jsonl", opencode(None), refuse);
    assert_eq!(replay.asked.len(), 1, "{:?}", replay.asked);
    for file in ["/sub/b.txt\"", "/a.txt\"", "/.env\""] {
        assert!(
            replay
                .judged
                .iter()
                .any(|call| call.starts_with("write_file ") && call.contains(file)),
            "{file}: {:?}",
            replay.judged
        );
    }
    // Its `rawInput.filepath` lists the same files, relative and joined by commas: not
    // judged as one more path.
    let writes = replay
        .judged
        .iter()
        .filter(|call| call.starts_with("write_file "));
    assert_eq!(writes.count(), 3, "{:?}", replay.judged);
}
