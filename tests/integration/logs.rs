//! The run store and `codecrew logs`: a real `codecrew query` through a scripted
//! `command` agent is kept as it goes, then listed, shown, searched, removed; `--no-log`
//! and `[logs] enabled = false` keep nothing; codecrew's tools never read the store.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::binary::{assert_exit, text, tool_result, tools_call_args};
use crate::support::{AgentScript, Answer, Turn, World};

/// The scripted agent `@echo`: calls codecrew's `help` tool on the first turn of each
/// task, then answers with the `TASK-...` word of its task (`TASK-HANG...`: after 10 s;
/// `TASK-RAW...`: at once, with terminal control sequences in its answer).
fn echo() -> AgentScript {
    AgentScript::new()
        .turn(Turn::on_task(
            "TASK-HANG",
            Answer::pause(Duration::from_secs(10)),
        ))
        .turn(Turn::on_task(
            "TASK-RAW",
            Answer::text("raw \u{1b}]52;c;cHduZWQ=\u{7}\u{1b}[2J end\n"),
        ))
        .turn(Turn::always(Answer::call("Calling.", "help", json!({}))).times_per_task(1))
        .otherwise(Answer::text("The zebracorn answer to {task}\n"))
}

/// A world with `@echo` and `user_config` in its user config.
fn echo_world(user_config: &str) -> World {
    World::new().user_config(user_config).agent("echo", echo())
}

/// The run store.
fn store(world: &World) -> PathBuf {
    world.state_dir().join("runs.db")
}

fn listed_runs(world: &World) -> Vec<Value> {
    world.run_json(&["logs", "--output", "json"])["runs"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_query_is_kept_listed_shown_searched_and_removed() {
    let world = echo_world("");
    let output = world.run(&["query", "@echo explain TASK-ONE please"]);
    assert_exit(&output, 0);
    assert!(text(&output.stdout).contains("The zebracorn answer to TASK-ONE"));
    let mode = |path: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    };
    assert_eq!(mode(&store(&world)), 0o600);
    assert_eq!(mode(store(&world).parent().unwrap()), 0o700);

    let runs = listed_runs(&world);
    assert_eq!(runs.len(), 1, "{runs:#?}");
    let run = &runs[0];
    assert_eq!(run["status"], "ok");
    assert_eq!(run["exit_code"], 0);
    assert_eq!(run["command"], "query");
    assert_eq!(run["mode"], "query");
    assert_eq!(run["agents"], json!(["echo"]));
    assert!(run["task"].as_str().unwrap().contains("explain TASK-ONE"));
    let workspace = world.workspace().canonicalize().unwrap();
    assert_eq!(run["workspace"], workspace.display().to_string());
    let id = run["id"].as_str().unwrap();
    let short = run["short_id"].as_str().unwrap();
    assert_eq!(short.len(), 6);
    assert!(id.starts_with(short));

    // Shown by its short id: the answer, the call, the usage.
    let shown = shown_run(&world, short);
    assert_eq!(shown["id"], id);
    let job = &shown["jobs"][0];
    assert_eq!(job["agent"], "echo");
    assert_eq!(job["cli"], "command");
    assert_eq!(job["success"], true);
    assert_eq!(job["stop_reason"], "answered");
    assert!(
        job["answer"]
            .as_str()
            .unwrap()
            .contains("The zebracorn answer to TASK-ONE")
    );
    assert_eq!(job["tool_calls"][0]["name"], "help");
    assert_eq!(job["tool_calls"][0]["status"], "ok");
    assert_eq!(job["usage"]["turns"], 2);
    let shown = world.run(&["logs", "show", short]);
    assert_exit(&shown, 0);
    let shown = text(&shown.stdout);
    assert!(
        shown.contains("The zebracorn answer to TASK-ONE"),
        "{shown}"
    );
    assert!(shown.contains("call help("), "{shown}");

    // The text listing.
    let listed = world.run(&["logs"]);
    assert_exit(&listed, 0);
    let listed = text(&listed.stdout);
    assert!(
        listed.contains(short) && listed.contains("@echo") && listed.contains(" ok "),
        "{listed}"
    );

    // A second run: the filters.
    assert_exit(&world.run(&["query", "@echo TASK-TWO"]), 0);
    assert_eq!(listed_runs(&world).len(), 2);
    let newest = world.run_json(&["logs", "-n", "1", "--output", "json"]);
    assert!(
        newest["runs"][0]["task"]
            .as_str()
            .unwrap()
            .contains("TASK-TWO")
    );
    let none = world.run_json(&["logs", "--agent", "nobody", "--output", "json"]);
    assert_eq!(none["runs"], json!([]));
    let here = world.run_json(&[
        "logs", "--here", "--since", "1h", "--status", "ok", "--output", "json",
    ]);
    assert_eq!(here["runs"].as_array().unwrap().len(), 2);
    let failed = world.run_json(&["logs", "--status", "failed", "--output", "json"]);
    assert_eq!(failed["runs"], json!([]));

    // Searched: a word of an answer, a word of a task.
    let found = world.run_json(&["logs", "search", "zebracorn", "--output", "json"]);
    let matches = found["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 2, "{found:#}");
    let found = world.run_json(&["logs", "search", "explain", "--output", "json"]);
    assert_eq!(found["matches"][0]["id"], id);
    assert_eq!(found["matches"][0]["found_in"], "task");

    // An id nobody has, then removed by its prefix.
    let missing = world.run(&["logs", "show", "ffffffffff"]);
    assert_exit(&missing, 1);
    assert!(text(&missing.stderr).contains("no run has the id"));
    assert_exit(&world.run(&["logs", "rm", short]), 0);
    assert_eq!(listed_runs(&world).len(), 1);
    let pruned = world.run_json(&["logs", "prune", "--older-than", "0s", "--output", "json"]);
    assert_eq!(pruned["removed"], 1);
    assert!(listed_runs(&world).is_empty());
}

/// `kill -9` leaves no chance to write an end: the run stays, "not finished".
#[test]
fn a_run_killed_stays_not_finished() {
    let world = echo_world("");
    let mut child = world
        .command(&["query", "@echo TASK-HANG"])
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !store(&world).exists() || listed_runs(&world).is_empty() {
        assert!(start.elapsed().as_secs() < 30, "the run was never recorded");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let runs = listed_runs(&world);
    assert_eq!(runs[0]["status"], "not_finished", "{runs:#?}");
    assert_eq!(runs[0]["ended"], Value::Null);
    let listed = text(&world.run(&["logs", "--status", "not-finished"]).stdout);
    assert!(listed.contains("not finished"), "{listed}");
    let shown = shown_run(&world, runs[0]["id"].as_str().unwrap());
    assert_eq!(shown["jobs"][0]["agent"], "echo");
    assert_eq!(shown["jobs"][0]["answer"], Value::Null);
}

#[test]
fn no_log_and_the_user_config_keep_nothing() {
    let world = echo_world("");
    assert_exit(&world.run(&["query", "--no-log", "@echo TASK-A"]), 0);
    assert!(listed_runs(&world).is_empty());
    assert!(!store(&world).exists(), "the store is not even made");

    let world = echo_world("[logs]\nenabled = false\n");
    assert_exit(&world.run(&["query", "@echo TASK-B"]), 0);
    assert!(!store(&world).exists());
    assert!(listed_runs(&world).is_empty());
}

#[test]
fn a_store_that_cannot_be_written_only_warns() {
    let world = echo_world("");
    // The state folder is a file: the store cannot be made.
    std::fs::create_dir_all(world.home_dir().join(".local")).unwrap();
    std::fs::write(world.home_dir().join(".local/state"), "not a folder").unwrap();
    let output = world.run(&["query", "@echo TASK-C"]);
    assert_exit(&output, 0);
    assert!(text(&output.stdout).contains("The zebracorn answer to TASK-C"));
    let stderr = text(&output.stderr);
    assert_eq!(
        stderr.matches("not kept for `codecrew logs`").count(),
        1,
        "{stderr}"
    );
}

/// With the state folder inside the workspace, the store is a file the tools could
/// reach: it is a sensitive path, never read without a question (denied where nobody
/// can be asked).
#[test]
fn the_tools_never_read_the_store() {
    let world = echo_world("");
    let state = world.workspace().join("state");
    let mut query = world.command(&["query", "@echo TASK-D"]);
    query.env("XDG_STATE_HOME", &state);
    assert_exit(&query.output().unwrap(), 0);
    assert!(state.join("codecrew/runs.db").exists());
    for path in ["state/codecrew/runs.db", "state/codecrew/runs.db-wal"] {
        let input = json!({ "path": path }).to_string();
        let mut call = world.command(&tools_call_args("read_file", &input, "query", false));
        call.env("XDG_STATE_HOME", &state);
        let result = tool_result(&call.output().unwrap());
        assert_eq!(result["status"], "denied", "{path}: {result:#}");
        assert_eq!(result["error"]["code"], "E_PERMISSION_DENIED", "{result:#}");
        assert!(!result.to_string().contains("zebracorn"), "{result:#}");
    }
}

/// What the store gives back is text codecrew did not compose (the user's task, the
/// model's answer): `logs`, `logs show` and `logs search` show it inert, whatever it
/// holds (a clipboard write, a screen clear), and JSON carries it escaped.
#[test]
fn what_the_store_holds_reaches_the_terminal_inert() {
    let world = echo_world("");
    let task = "@echo TASK-RAW \u{1b}]0;title\u{7} \u{1b}[31mred";
    assert_exit(&world.run(&["query", task]), 0);
    let id = listed_runs(&world)[0]["short_id"]
        .as_str()
        .unwrap()
        .to_owned();
    for args in [
        vec!["logs"],
        vec!["logs", "show", id.as_str()],
        vec!["logs", "search", "raw"],
        vec!["logs", "search", "TASK-RAW"],
    ] {
        let output = world.run(&args);
        assert_exit(&output, 0);
        assert!(
            !output.stdout.contains(&0x1b),
            "{args:?}: {:?}",
            text(&output.stdout)
        );
        assert!(
            !output.stdout.contains(&0x07),
            "{args:?}: {:?}",
            text(&output.stdout)
        );
    }
    let shown = world.run(&["logs", "show", &id]);
    assert!(
        text(&shown.stdout).contains("end"),
        "{}",
        text(&shown.stdout)
    );
    let json = world.run(&["logs", "show", &id, "--output", "json"]);
    assert!(!json.stdout.contains(&0x1b));
    let value: Value = serde_json::from_slice(&json.stdout).unwrap();
    let answer = value["jobs"][0]["answer"].as_str().unwrap();
    assert!(answer.contains("\u{1b}]52;c;"), "{answer:?}");
}

/// The store as a hostile model would go after it, through every door of codecrew's own
/// tools in query mode, with the store inside the workspace (the worst place it can be):
/// a search over the workspace, a shell read, a copy, a listing of its contents. None
/// gives back a word of it.
#[test]
fn no_tool_door_gives_back_what_the_store_holds() {
    let world = echo_world("");
    let state = world.workspace().join("state");
    let mut query = world.command(&["query", "@echo TASK-E"]);
    query.env("XDG_STATE_HOME", &state);
    assert_exit(&query.output().unwrap(), 0);
    assert!(state.join("codecrew/runs.db").exists());
    let calls = [
        ("grep", json!({"pattern": "zebracorn", "path": "."})),
        (
            "grep",
            json!({"pattern": "zebracorn", "path": "state/codecrew"}),
        ),
        (
            "run_command",
            json!({"command": "cat state/codecrew/runs.db"}),
        ),
        ("run_command", json!({"command": "grep -ra zebracorn ."})),
        (
            "run_command",
            json!({"command": "strings state/codecrew/runs.db-wal"}),
        ),
        (
            "run_command",
            json!({"command": "cp state/codecrew/runs.db /dev/stdout"}),
        ),
        ("run_command", json!({"command": "cat state/*/runs.d?"})),
    ];
    for (tool, input) in calls {
        let input = input.to_string();
        let mut call = world.command(&tools_call_args(tool, &input, "query", false));
        call.env("XDG_STATE_HOME", &state);
        let output = call.output().unwrap();
        let shown = format!("{}{}", text(&output.stdout), text(&output.stderr));
        assert!(!shown.contains("zebracorn"), "{tool} {input}: {shown}");
        assert!(!shown.contains("TASK-E"), "{tool} {input}: {shown}");
    }
}

/// A chat at a terminal is one run: each answer a job of it, recorded by the engine as it
/// comes, and the run's end when the chat ends (Ctrl-D).
#[test]
fn a_chat_is_kept_as_one_run() {
    use crate::support::pty::Terminal;

    let world = echo_world("");
    // The pty's environment: the same isolation as every other run of the binary.
    let env = world.env.clone().with("NO_COLOR", "1");
    let limit = Duration::from_secs(60);
    let mut terminal = Terminal::run(
        &env,
        Path::new(env!("CARGO_BIN_EXE_codecrew")),
        &["chat", "--thread", "kept"],
    );
    terminal.wait_for("prompt", limit, |shown| shown.contains("query> "));
    terminal.type_keys(b"@echo first TASK-CHAT-ONE\r");
    terminal.wait_for("first answer", limit, |shown| {
        shown
            .split_once("answer to TASK-CHAT-ONE")
            .is_some_and(|(_, after)| after.contains("query> "))
    });
    // While the chat runs, its run is there, not finished, with its first job.
    let runs = listed_runs(&world);
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(runs[0]["status"], "not_finished");
    terminal.type_keys(b"@echo second TASK-CHAT-TWO\r");
    terminal.wait_for("second answer", limit, |shown| {
        shown
            .split_once("answer to TASK-CHAT-TWO")
            .is_some_and(|(_, after)| after.contains("query> "))
    });
    terminal.type_keys(b"\x04");
    let status = terminal.wait(limit).expect("the chat ended");
    assert_eq!(status.code(), Some(0), "{}", terminal.text());

    let runs = listed_runs(&world);
    assert_eq!(runs.len(), 1, "{runs:#?}");
    let run = &runs[0];
    assert_eq!(run["command"], "chat");
    assert_eq!(run["status"], "ok");
    assert!(run["task"].as_str().unwrap().contains("TASK-CHAT-ONE"));
    let id = run["id"].as_str().unwrap();
    let shown = shown_run(&world, id);
    let jobs = shown["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "{shown:#}");
    for (job, task) in jobs.iter().zip(["TASK-CHAT-ONE", "TASK-CHAT-TWO"]) {
        assert_eq!(job["agent"], "echo");
        assert_eq!(job["thread"], "kept");
        assert!(job["answer"].as_str().unwrap().contains(task), "{job:#}");
        assert_eq!(job["tool_calls"][0]["name"], "help");
    }
}

/// Asks `@echo` through `codecrew:query_agent` on its first turn, then answers with what
/// came back.
fn boss() -> AgentScript {
    AgentScript::new()
        .turn(Turn::on_prompt(
            "The zebracorn answer to TASK-SUB",
            Answer::text("The boss heard: zebracorn\n"),
        ))
        .otherwise(Answer::text(
            "```json\n{\"type\":\"tool_use\",\"name\":\"codecrew:query_agent\",\"input\":{\"agent\":\"echo\",\"task\":\"TASK-SUB please\"}}\n```\n",
        ))
}

/// A crew call is kept as a job of the run, under the job whose call started it, and
/// each call says who let it run.
#[test]
fn a_crew_call_is_kept_under_its_caller() {
    let world = echo_world("").agent("boss", boss());
    let output = world.run(&["query", "--raw", "@boss TASK-BOSS delegate"]);
    assert_exit(&output, 0);
    assert!(text(&output.stdout).contains("The boss heard: zebracorn"));

    let run = &listed_runs(&world)[0];
    assert_eq!(run["agents"], json!(["boss", "echo"]));
    let shown = shown_run(&world, run["id"].as_str().unwrap());
    let jobs = shown["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "{shown:#}");
    let (caller, sub) = (&jobs[0], &jobs[1]);
    assert_eq!(
        (&caller["agent"], &caller["depth"], &caller["parent"]),
        (&json!("boss"), &json!(0), &Value::Null)
    );
    assert_eq!(
        (&sub["agent"], &sub["depth"], &sub["parent"]),
        (&json!("echo"), &json!(1), &json!(0))
    );
    assert!(sub["task"].as_str().unwrap().contains("TASK-SUB please"));
    assert!(
        sub["answer"]
            .as_str()
            .unwrap()
            .contains("The zebracorn answer to TASK-SUB")
    );
    // The sub-agent's own call is its job's, the caller's is the caller's.
    assert_eq!(sub["tool_calls"][0]["name"], "help");
    assert_eq!(caller["tool_calls"][0]["name"], "query_agent");
    assert_eq!(caller["tool_calls"][0]["decided_by"], "policy");
    assert_eq!(caller["tool_calls"][0]["output_withheld"], false);

    let shown = world.run(&["logs", "show", run["id"].as_str().unwrap()]);
    let shown = text(&shown.stdout);
    assert!(
        shown.contains("  [job 1: @echo] (command, called by @boss (job 0))"),
        "{shown}"
    );
    assert!(shown.contains("decided by policy"), "{shown}");
    // Searched: the sub-agent's answer is found too.
    let found = world.run_json(&["logs", "search", "TASK-SUB", "--output", "json"]);
    assert!(
        !found["matches"].as_array().unwrap().is_empty(),
        "{found:#}"
    );
}

/// What a call read after the user allowed a sensitive file is not kept; the call is.
#[test]
fn a_sensitive_files_content_is_not_kept() {
    let reader = AgentScript::new()
        .turn(Turn::on_prompt(
            "codecrew ran the tool calls",
            Answer::text("Read it.\n"),
        ))
        .otherwise(Answer::text(
            "```json\n{\"type\":\"tool_use\",\"name\":\"codecrew:read_file\",\"input\":{\"path\":\".env\"}}\n```\n",
        ));
    let world = echo_world("").agent("reader", reader);
    std::fs::write(world.workspace().join(".env"), "API_KEY=sup3rs3cr3tvalue\n").unwrap();
    // --yes allows what would ask: the read of .env runs.
    let output = world.run(&["execute", "--yes", "--raw", "@reader TASK-READ"]);
    assert_exit(&output, 0);
    let run = &listed_runs(&world)[0];
    let shown = shown_run(&world, run["id"].as_str().unwrap());
    let call = &shown["jobs"][0]["tool_calls"][0];
    assert_eq!(call["name"], "read_file");
    assert_eq!(call["status"], "ok");
    assert_eq!(call["decided_by"], "yes");
    assert_eq!(call["output_withheld"], true);
    let bytes = std::fs::read(store(&world)).unwrap();
    let wal = std::fs::read(store(&world).with_extension("db-wal")).unwrap_or_default();
    for file in [bytes, wal] {
        assert!(!file.windows(16).any(|window| window == b"sup3rs3cr3tvalue"));
    }
}

/// A call's id is the one `--output stream-json` gives its `tool_call` event and its
/// result (`tool_call_id`), and the one the run store keeps it under (`call_id`).
#[test]
fn a_calls_id_is_the_same_in_stream_json_and_the_store() {
    let world = echo_world("");
    let output = world.run(&["query", "--output", "stream-json", "@echo TASK-IDS"]);
    assert_exit(&output, 0);
    let events: Vec<Value> = text(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let of_type = |kind: &str| -> Vec<&Value> {
        events
            .iter()
            .filter(|event| event["type"] == kind)
            .collect()
    };
    let (calls, results) = (of_type("tool_call"), of_type("tool_result"));
    assert_eq!((calls.len(), results.len()), (1, 1), "{events:#?}");
    let id = calls[0]["id"].as_str().unwrap();
    assert!(id.starts_with("call_"), "{id}");
    assert_eq!(results[0]["tool_call_id"], id);

    let run = &listed_runs(&world)[0];
    let shown = shown_run(&world, run["id"].as_str().unwrap());
    let kept = &shown["jobs"][0]["tool_calls"][0];
    assert_eq!(kept["name"], "help");
    assert_eq!(kept["call_id"], id);

    // `--output json` gives each of a job's calls the id the store has.
    let doc = world.run_json(&["query", "--output", "json", "@echo TASK-IDS-AGAIN"]);
    let id = doc["results"][0]["tool_calls"][0]["id"].as_str().unwrap();
    assert!(id.starts_with("call_"), "{doc:#}");
    let run = &listed_runs(&world)[0];
    let shown = shown_run(&world, run["id"].as_str().unwrap());
    assert_eq!(
        shown["jobs"][0]["tool_calls"][0]["call_id"], id,
        "{shown:#}"
    );
}

#[test]
fn a_reader_that_goes_away_ends_the_query_quietly_and_the_run_is_still_ended() {
    let world = echo_world("");
    let mut child = world
        .command(&["query", "@echo explain TASK-PIPE please"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The reader is gone before the first word: every write to stdout fails.
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert_exit(&output, 0);
    let stderr = text(&output.stderr);
    assert!(!stderr.contains("codecrew:"), "{stderr}");

    let runs = listed_runs(&world);
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(runs[0]["exit_code"], 0, "{runs:#?}");
    assert_ne!(runs[0]["status"], "running", "{runs:#?}");
}

/// `codecrew logs show ID --output json`: the run `id` (or a prefix of it) as kept.
fn shown_run(world: &World, id: &str) -> Value {
    world.run_json(&["logs", "show", id, "--output", "json"])
}
