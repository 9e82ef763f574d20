//! Conversations that continue: the transcript a CLI that cannot resume is sent, and
//! `--thread`, which carries a conversation across invocations (`codecrew threads ...`).
//!
//! Most tests use a `command` agent: a shell script that saves every prompt it receives and
//! answers with the `TASK-...` word of its task, so a test can read exactly what codecrew
//! sent on each turn.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::binary::{BIN, assert_exit, text};
use crate::support::{AgentScript, Answer, Turn, World};

/// A world with `@echo`, the scripted agent: it answers with the `TASK-...` word of its
/// task, and a task `TASK-TOOL...` makes it call codecrew's `help` tool on its first two
/// turns before answering. Its prompts are kept, so a test can read exactly what codecrew
/// sent on each turn.
fn world() -> World {
    World::new().agent(
        "echo",
        AgentScript::new()
            .turn(Turn::on_task("TASK-TOOL", Answer::call("Calling.", "help", json!({}))).times(2)),
    )
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// A CLI that cannot resume gets the transcript so far on every follow-up turn, and each
/// earlier prompt appears in it once.
#[test]
fn the_transcript_holds_each_earlier_turn_once() {
    let world = world();
    let output = world.run(&["query", "--raw", "@echo TASK-TOOL-ONCE go"]);
    assert_exit(&output, 0);
    assert_eq!(text(&output.stdout).trim(), "ANSWER-TASK-TOOL-ONCE");
    let prompts = world.prompts("echo");
    assert_eq!(prompts.len(), 3, "{prompts:#?}");
    let last = &prompts[2];
    assert_eq!(count(last, "TASK-TOOL-ONCE go"), 1, "{last}");
    assert_eq!(count(last, "## Your previous answer"), 2, "{last}");
    assert_eq!(count(last, "codecrew ran the tool calls"), 2, "{last}");
}

/// The thread's file in `world`'s workspace, parsed.
fn thread_file(world: &World, name: &str) -> Value {
    let path = thread_path(world, name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap()
}

fn thread_path(world: &World, name: &str) -> PathBuf {
    world
        .workspace()
        .join(".codecrew/threads")
        .join(format!("{name}.json"))
}

fn tasks(thread: &Value) -> Vec<String> {
    thread["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["task"].as_str().unwrap().to_owned())
        .collect()
}

/// A CLI that cannot resume gets the thread's earlier tasks and answers before the new task.
#[test]
fn a_thread_continues_with_the_transcript() {
    let world = world();
    let first = world.run(&["query", "--raw", "--thread", "t1", "@echo TASK-ONE first"]);
    assert_exit(&first, 0);
    assert_eq!(text(&first.stdout).trim(), "ANSWER-TASK-ONE");
    assert!(
        !world.prompts("echo")[0].contains("earlier conversation"),
        "a new thread has nothing earlier"
    );

    let second = world.run(&["query", "--raw", "--thread", "t1", "@echo TASK-TWO second"]);
    assert_exit(&second, 0);
    let prompt = world.prompts("echo").pop().unwrap();
    let earlier = prompt.find("TASK-ONE first").expect(&prompt);
    let answer = prompt.find("ANSWER-TASK-ONE").expect(&prompt);
    let now = prompt.find("TASK-TWO second").expect(&prompt);
    assert!(earlier < answer && answer < now, "{prompt}");

    let thread = thread_file(&world, "t1");
    assert_eq!(thread["name"], "t1");
    assert_eq!(tasks(&thread), ["TASK-ONE first", "TASK-TWO second"]);
    assert_eq!(thread["exchanges"][1]["answer"], "ANSWER-TASK-TWO");
    assert_eq!(thread["exchanges"][1]["mode"], "query");
    assert_eq!(thread["agents"]["echo"]["provider"], "command");
    assert_eq!(thread["agents"]["echo"]["session_id"], Value::Null);
    assert!(thread["updated"].as_str().unwrap().ends_with('Z'));

    // Without --thread, or on another thread, nothing earlier is sent.
    assert_exit(&world.run(&["query", "@echo TASK-THREE alone"]), 0);
    assert_exit(
        &world.run(&["query", "--thread", "other", "@echo TASK-FOUR"]),
        0,
    );
    for prompt in &world.prompts("echo")[2..] {
        assert!(!prompt.contains("TASK-ONE"), "{prompt}");
    }
    assert_eq!(tasks(&thread_file(&world, "t1")).len(), 2);
}

#[test]
fn threads_list_show_and_rm() {
    let world = world();
    let empty = world.run(&["threads", "list"]);
    assert_exit(&empty, 0);
    assert!(
        text(&empty.stdout).starts_with("No threads in "),
        "{empty:?}"
    );
    assert_exit(
        &world.run(&["query", "--thread", "alpha", "@echo TASK-A one\nline two"]),
        0,
    );
    assert_exit(
        &world.run(&["execute", "--thread", "alpha", "@echo TASK-B"]),
        0,
    );
    assert_exit(
        &world.run(&["query", "--thread", "beta", "@echo TASK-C"]),
        0,
    );

    let list = world.run(&["threads", "list"]);
    assert_exit(&list, 0);
    let lines: Vec<Vec<String>> = text(&list.stdout)
        .lines()
        .map(|l| l.split_whitespace().map(str::to_owned).collect())
        .collect();
    assert_eq!(lines[0], ["NAME", "AGENTS", "EXCHANGES", "UPDATED"]);
    assert_eq!(lines[1][..3], ["alpha", "@echo", "2"]);
    assert_eq!(lines[2][..3], ["beta", "@echo", "1"]);
    assert_eq!(lines.len(), 3);

    let list = world.run(&["threads", "list", "--output", "json"]);
    assert_exit(&list, 0);
    let doc: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(doc["threads"][0]["name"], "alpha");
    assert_eq!(doc["threads"][0]["agents"], json!(["echo"]));
    assert_eq!(doc["threads"][0]["exchanges"], 2);
    assert_eq!(doc["threads"][1]["name"], "beta");

    let show = world.run(&["threads", "show", "alpha"]);
    assert_exit(&show, 0);
    let shown = text(&show.stdout);
    assert!(shown.starts_with("Thread alpha: 2 exchanges"), "{shown}");
    // Each exchange says what it used: a command CLI reports no tokens.
    assert!(shown.contains("  used: 2 turns, 0 tool calls, "), "{shown}");
    assert!(
        shown.contains("@echo query · 1 turn, 0 tool calls, "),
        "{shown}"
    );
    assert!(
        shown.contains("tokens not reported by the CLI\n> TASK-A one line two\n\nANSWER-TASK-A\n"),
        "{shown}"
    );
    assert!(shown.contains("@echo execute · 1 turn, "), "{shown}");
    assert!(
        shown.contains("tokens not reported by the CLI\n> TASK-B\n\nANSWER-TASK-B\n"),
        "{shown}"
    );
    let show = world.run(&["threads", "show", "alpha", "--output", "json"]);
    assert_exit(&show, 0);
    let mut doc: Value = serde_json::from_slice(&show.stdout).unwrap();
    // The stored thread, and beside it the sum of its exchanges' usage.
    let usage = doc.as_object_mut().unwrap().remove("usage").unwrap();
    assert_eq!(usage["turns"], 2, "{usage}");
    assert_eq!(usage["input_tokens"], Value::Null, "{usage}");
    assert_eq!(doc, thread_file(&world, "alpha"));

    let rm = world.run(&["threads", "rm", "alpha"]);
    assert_exit(&rm, 0);
    assert!(!thread_path(&world, "alpha").exists());
    let again = world.run(&["threads", "rm", "alpha"]);
    assert_exit(&again, 1);
    assert!(
        text(&again.stderr).contains("no thread named \"alpha\""),
        "{again:?}"
    );
    assert_exit(&world.run(&["threads", "show", "alpha"]), 1);
    let list = world.run(&["threads", "list"]);
    assert_eq!(text(&list.stdout).lines().count(), 2, "only beta is left");
}

#[test]
fn invalid_thread_names_are_usage_errors() {
    let world = world();
    let long = "x".repeat(65);
    for name in [
        "../escape",
        ".hidden",
        "a/b",
        "has space",
        long.as_str(),
        "",
    ] {
        let output = world.run(&["query", "--thread", name, "@echo TASK-X"]);
        assert_exit(&output, 2);
        assert!(
            text(&output.stderr).contains("invalid thread name"),
            "{name:?}: {output:?}"
        );
        assert_exit(&world.run(&["threads", "show", name]), 2);
        assert_exit(&world.run(&["threads", "rm", name]), 2);
    }
    assert!(world.prompts("echo").is_empty(), "no agent ran");
    assert!(!world.workspace().join(".codecrew").exists());
    assert!(!world.path("escape.json").exists());
}

/// A thread file that cannot be read stops the run before any agent starts, says which file
/// and how to get out, and is left exactly as it was.
#[test]
fn a_corrupt_thread_is_reported_and_left_alone() {
    let world = world();
    let path = thread_path(&world, "bad");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "{\"version\": 1, \"na").unwrap();
    let output = world.run(&["query", "--thread", "bad", "@echo TASK-X"]);
    assert_exit(&output, 2);
    let stderr = text(&output.stderr);
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
    assert!(stderr.contains("codecrew threads rm bad"), "{stderr}");
    assert!(world.prompts("echo").is_empty());
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"version\": 1, \"na"
    );

    let list = world.run(&["threads", "list"]);
    assert_exit(&list, 0);
    assert!(text(&list.stdout).contains("bad "), "{list:?}");
    assert!(text(&list.stdout).contains("unreadable"), "{list:?}");
    assert!(text(&list.stderr).contains("codecrew threads rm bad"));
    assert_exit(&world.run(&["threads", "show", "bad"]), 1);
    assert_exit(&world.run(&["threads", "rm", "bad"]), 0);
    assert_exit(&world.run(&["query", "--thread", "bad", "@echo TASK-X"]), 0);
}

/// Several codecrew processes on one thread at once, one of them with two jobs: the file
/// stays valid and keeps every exchange.
#[test]
fn concurrent_runs_keep_every_exchange() {
    let world = world();
    let mut children: Vec<std::process::Child> = (0..6)
        .map(|n| {
            world
                .command(&["query", "--thread", "shared", &format!("@echo TASK-P{n}")])
                .stdout(Stdio::null())
                .stderr(Stdio::inherit())
                .spawn()
                .unwrap()
        })
        .collect();
    children.push(
        world
            .command(&[
                "query",
                "--thread",
                "shared",
                "@echo TASK-J1",
                "@echo TASK-J2",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let mut got = tasks(&thread_file(&world, "shared"));
    got.sort();
    let mut expected: Vec<String> = (0..6).map(|n| format!("TASK-P{n}")).collect();
    expected.extend(["TASK-J1".to_owned(), "TASK-J2".to_owned()]);
    expected.sort();
    assert_eq!(got, expected);
    let files: Vec<String> = std::fs::read_dir(thread_path(&world, "shared").parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        files
            .iter()
            .all(|f| f == "shared.json" || f == "shared.lock"),
        "no temporary file is left: {files:?}"
    );
}

/// The real Claude, Gemini and Codex CLIs against the fake model: the second invocation on a
/// thread resumes the CLI session of the first (the model sees the first exchange as history)
/// instead of resending it as a transcript.
#[test]
fn real_clis_resume_their_session_across_invocations() {
    use crate::support::clis::{Clis, TestHome, run};
    use crate::support::fake_model::{FakeModel, Reply, Rule, Script};

    let Some(clis) = Clis::require("threads-resume") else {
        return;
    };
    let script = Script::new()
        .rule(Rule::on_prompt(
            "THREAD-SECOND",
            Reply::text("Second answer."),
        ))
        .rule(Rule::on_prompt(
            "THREAD-FIRST",
            Reply::text("First answer, remembered."),
        ));
    let server = FakeModel::start(script);
    for agent in [
        "claude", "gemini", "codex", "copilot", "opencode", "qwen", "llm",
    ] {
        let home = TestHome::new(&format!("threads-{agent}"));
        let env = clis
            .env_for_all(&home, &server.url())
            .with("CODECREW_CONFIG", "");
        let codecrew = |task: &str| {
            let mut command = Command::new(BIN);
            env.apply(&mut command);
            command.args(["-v", "query", "--output", "json", "--thread", "t", task]);
            let done = run(&mut command, std::time::Duration::from_secs(180));
            done.assert_code(0);
            let doc: Value = serde_json::from_str(done.stdout.trim()).unwrap();
            (done, doc)
        };
        let (_, first) = codecrew(&format!("@{agent} THREAD-FIRST hello"));
        let session = first["results"][0]["session_id"]
            .as_str()
            .unwrap()
            .to_owned();
        let before = server.model_requests().len();
        let (second_run, second) = codecrew(&format!("@{agent} THREAD-SECOND go on"));
        assert_eq!(
            second["results"][0]["response"], "Second answer.",
            "{agent}"
        );

        // codecrew asked the CLI to resume the first session (`--resume <id>`, codex
        // app-server's `thread/resume <id>`, an ACP agent's `session/load <id>`, llm's
        // `--cid=<id>`)…
        assert!(
            second_run.stderr.contains(&format!("resume {session}"))
                || second_run
                    .stderr
                    .contains(&format!("session/load {session}"))
                || second_run.stderr.contains(&format!("--resume={session}"))
                || second_run.stderr.contains(&format!("--session={session}"))
                || second_run.stderr.contains(&format!("--cid={session}")),
            "{agent}: {}",
            second_run.stderr
        );
        // …and the model got the first exchange from the CLI's history, not from a
        // transcript in the new prompt.
        let requests = server.model_requests();
        let request = requests[before..]
            .iter()
            .find(|r| {
                r.prompt
                    .as_deref()
                    .is_some_and(|p| p.contains("THREAD-SECOND"))
            })
            .unwrap_or_else(|| panic!("{agent}: no second request"));
        let body = request.body.to_string();
        assert!(
            body.contains("First answer, remembered."),
            "{agent}: {body}"
        );
        assert!(!body.contains("earlier conversation"), "{agent}: {body}");

        let path = home.workdir().join(".codecrew/threads/t.json");
        let thread: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(thread["agents"][agent]["provider"], agent);
        assert_eq!(
            thread["agents"][agent]["session_id"], second["results"][0]["session_id"],
            "{agent}: the thread moves on to the latest session"
        );
        assert_eq!(thread["exchanges"].as_array().unwrap().len(), 2);
    }
}

/// A thread whose stored session the CLI no longer has: codecrew says so and starts a new
/// session from the thread's transcript instead of failing every run on the thread.
#[test]
fn a_lost_session_starts_over_from_the_transcript() {
    use crate::support::clis::{Clis, TestHome, run};
    use crate::support::fake_model::{FakeModel, Reply, Rule, Script};

    let Some(clis) = Clis::require("threads-lost-session") else {
        return;
    };
    let script = Script::new()
        .rule(Rule::on_prompt(
            "LOST-SECOND",
            Reply::text("Second answer."),
        ))
        .rule(Rule::on_prompt(
            "LOST-FIRST",
            Reply::text("First answer, kept."),
        ));
    let server = FakeModel::start(script);
    for agent in [
        "claude", "gemini", "codex", "copilot", "opencode", "qwen", "llm",
    ] {
        let home = TestHome::new(&format!("threads-lost-{agent}"));
        let env = clis
            .env_for_all(&home, &server.url())
            .with("CODECREW_CONFIG", "");
        let codecrew = |task: &str| {
            let mut command = Command::new(BIN);
            env.apply(&mut command);
            command.args(["query", "--output", "json", "--thread", "t", task]);
            run(&mut command, std::time::Duration::from_secs(180))
        };
        codecrew(&format!("@{agent} LOST-FIRST hello")).assert_code(0);
        let path = home.workdir().join(".codecrew/threads/t.json");
        let mut thread: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        thread["agents"][agent]["session_id"] = json!("0b7e6a52-1f3c-4d2e-9a41-5c0de0000000");
        std::fs::write(&path, serde_json::to_vec(&thread).unwrap()).unwrap();
        // Changed by hand, the thread is the user's again once they say so.
        let mut adopt = Command::new(BIN);
        env.apply(&mut adopt);
        adopt.args(["threads", "adopt", "t"]);
        run(&mut adopt, std::time::Duration::from_secs(30)).assert_code(0);

        let before = server.model_requests().len();
        let second = codecrew(&format!("@{agent} LOST-SECOND go on"));
        second.assert_code(0);
        let doc: Value = serde_json::from_str(second.stdout.trim()).unwrap();
        assert_eq!(doc["results"][0]["response"], "Second answer.", "{agent}");
        let requests = server.model_requests();
        let request = requests[before..]
            .iter()
            .find(|r| {
                r.prompt
                    .as_deref()
                    .is_some_and(|p| p.contains("LOST-SECOND"))
            })
            .unwrap_or_else(|| panic!("{agent}: no second request"));
        assert!(
            request.body.to_string().contains("First answer, kept."),
            "{agent}: the transcript carries the first exchange"
        );
    }
}

/// A `claude` that records its arguments and its first message (in a folder of Claude's
/// state that its wall lets it write), and answers in a session of its own.
const RECORDING_CLAUDE: &str = r#"#!/bin/sh
records="$HOME/.claude/todos"
mkdir -p "$records"
printf '%s\n' "$@" > "$records/argv.$$"
while read -r message; do
    case "$message" in *'"type":"user"'*) break ;; esac
done
printf '%s\n' "$message" > "$records/message.$$"
printf '%s\n' '{"type":"system","subtype":"init","session_id":"6c44634d-5dd0-4df1-a3a5-64e422fced4e","model":"fake"}'
printf '%s\n' '{"type":"assistant","message":{"content":[{"type":"text","text":"Going on."}]},"session_id":"6c44634d-5dd0-4df1-a3a5-64e422fced4e"}'
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"Going on.","session_id":"6c44634d-5dd0-4df1-a3a5-64e422fced4e"}'
cat > /dev/null
"#;

/// What every start of the recording `claude` was given: (arguments, first message).
fn recorded(home: &std::path::Path) -> Vec<(Vec<String>, String)> {
    let records = home.join(".claude/todos");
    let mut starts = Vec::new();
    let Ok(entries) = std::fs::read_dir(&records) else {
        return starts;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name.strip_prefix("argv.") {
            let argv = std::fs::read_to_string(entry.path()).unwrap();
            let message =
                std::fs::read_to_string(records.join(format!("message.{pid}"))).unwrap_or_default();
            starts.push((argv.lines().map(str::to_owned).collect(), message));
        }
    }
    starts
}

/// A checkout that ships `.codecrew/threads/review.json` naming a "session" and a "model"
/// that are options: codecrew does not continue it until the user adopts it, and even
/// then neither reaches Claude's command line; the thread is the user's from then on.
#[test]
fn a_shipped_thread_is_data_and_its_values_never_become_options() {
    let machine = World::with_claude(RECORDING_CLAUDE);
    let threads = machine.workspace().join(".codecrew/threads");
    std::fs::create_dir_all(&threads).unwrap();
    let shipped = json!({
        "version": 1,
        "name": "review",
        "created": "2026-01-01T00:00:00Z",
        "updated": "2026-01-01T00:00:00Z",
        "agents": {"claude": {
            "provider": "claude",
            "model": "--settings=/tmp/planted.json",
            "session_id": "--dangerously-skip-permissions"
        }},
        "exchanges": [{
            "agent": "claude", "provider": "claude", "model": null, "mode": "query",
            "task": "SHIPPED-TASK", "answer": "SHIPPED-ANSWER",
            "time": "2026-01-01T00:00:00Z", "session_id": "--dangerously-skip-permissions"
        }]
    });
    std::fs::write(threads.join("review.json"), shipped.to_string()).unwrap();
    let run = |args: &[&str]| machine.command(args).output().unwrap();

    // Not continued: the user is told why and what to do, and Claude never starts.
    let refused = run(&["query", "--thread", "review", "@claude go on"]);
    assert_exit(&refused, 2);
    let said = text(&refused.stderr);
    assert!(said.contains("was not written by your codecrew"), "{said}");
    assert!(said.contains("codecrew threads adopt review"), "{said}");
    assert!(recorded(&machine.home_dir()).is_empty(), "Claude started");
    // It is still there to read.
    assert_exit(&run(&["threads", "show", "review"]), 0);

    // Adopted, it continues from its transcript: its session and model are not a
    // Claude session's and a model's shape, and are said to be left out.
    let adopted = run(&["threads", "adopt", "review"]);
    assert_exit(&adopted, 0);
    let said = text(&adopted.stdout);
    assert!(said.contains("review is yours now"), "{said}");
    // What of it will not be used is said before it is.
    assert!(
        said.contains("is not a UUID, so it is not resumed"),
        "{said}"
    );
    assert!(said.contains("is not a model's name"), "{said}");
    let continued = run(&["query", "--thread", "review", "@claude go on"]);
    assert_exit(&continued, 0);
    let said = text(&continued.stderr);
    assert!(said.contains("is not a UUID"), "{said}");
    assert!(said.contains("not a model's name"), "{said}");
    let starts = recorded(&machine.home_dir());
    assert_eq!(starts.len(), 1, "{starts:?}");
    let (argv, message) = &starts[0];
    for arg in argv {
        assert!(
            !arg.starts_with("--dangerously") && !arg.starts_with("--settings"),
            "{argv:?}"
        );
        assert!(arg != "--resume" && arg != "--model", "{argv:?}");
    }
    assert!(
        message.contains("SHIPPED-ANSWER"),
        "the transcript: {message}"
    );

    // The thread is the user's now, with the session Claude gave: resumed, attached.
    let thread: Value =
        serde_json::from_slice(&std::fs::read(threads.join("review.json")).unwrap()).unwrap();
    assert_eq!(
        thread["agents"]["claude"]["session_id"],
        "6c44634d-5dd0-4df1-a3a5-64e422fced4e"
    );
    assert_exit(&run(&["query", "--thread", "review", "@claude more"]), 0);
    let starts = recorded(&machine.home_dir());
    assert!(
        starts.iter().any(|(argv, _)| argv
            .iter()
            .any(|arg| arg == "--resume=6c44634d-5dd0-4df1-a3a5-64e422fced4e")),
        "{starts:?}"
    );
}

/// A model that is an option is refused before anything starts, from a mention or a
/// project's configuration.
#[test]
fn a_model_that_is_an_option_is_refused() {
    let machine = World::with_claude(RECORDING_CLAUDE);
    let refused = machine
        .command(&["query", "@claude:--dangerously-skip-permissions hi"])
        .output()
        .unwrap();
    assert_exit(&refused, 2);
    let said = text(&refused.stderr);
    assert!(said.contains("from the mention"), "{said}");
    assert!(said.contains("not a model's name"), "{said}");

    std::fs::write(
        machine.workspace().join("codecrew.toml"),
        "[agents.claude]\nprovider = \"claude\"\nmodel = \"--settings=/tmp/x.json\"\n",
    )
    .unwrap();
    let refused = machine.command(&["query", "@claude hi"]).output().unwrap();
    assert_exit(&refused, 2);
    assert!(
        text(&refused.stderr).contains("from the agent's configuration"),
        "{}",
        text(&refused.stderr)
    );
    assert!(recorded(&machine.home_dir()).is_empty(), "Claude started");
}

/// The same through a door a model holds: `query_agent` over `codecrew mcp`, its `model`
/// argument an option. The call fails with the reason; Claude never starts.
#[test]
fn an_agent_tools_model_that_is_an_option_is_refused() {
    use std::io::{BufRead, BufReader, Write};

    let machine = World::with_claude(RECORDING_CLAUDE);
    let mut child = machine
        .command(&["mcp"])
        .stdin(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "query_agent",
            "arguments": {"task": "hi", "agent": "claude",
                          "model": "--dangerously-skip-permissions"}}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let answer = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(Result::unwrap)
        .map(|line| serde_json::from_str::<Value>(&line).unwrap())
        .find(|message| message["id"] == 2)
        .unwrap();
    drop(stdin);
    let _ = child.wait();
    let said = answer.to_string();
    assert!(said.contains("not a model's name"), "{said}");
    assert!(recorded(&machine.home_dir()).is_empty(), "Claude started");
}
