//! `codecrew acp` driven by a real ACP client, acpx (pinned in tests/clis), with the real
//! Claude Code against the fake model: a session made, answered, followed up on the
//! same CLI process, a tool call shown, a permission asked and answered both ways, a
//! prompt cancelled, the session listed, then loaded by a new codecrew after the first
//! one ended (Claude resuming its own session).

use std::process::Stdio;
use std::time::{Duration, Instant};

use super::warm::Counted;
use super::*;
use crate::support::clis::Clis;

fn script() -> Script {
    let read = fenced(&[envelope("read_file", json!({"path": "notes.txt"}))]);
    let write = |file: &str| {
        fenced(&[envelope(
            "run_command",
            json!({"command": format!("touch {file}")}),
        )])
    };
    Script::new()
        .rule(
            Rule::on_prompt(FOLLOW_UP, Reply::text("Read the notes: ACP-NOTED."))
                .and_prompt("ACP-NOTES-5150"),
        )
        .rule(Rule::on_prompt(
            FOLLOW_UP,
            Reply::text("The command ran or not."),
        ))
        .rule(Rule::on_prompt(
            "ACP-FIRST",
            Reply::text("First answer: acp-zebra."),
        ))
        .rule(Rule::on_prompt("ACP-SECOND", Reply::text("Second answer.")))
        .rule(Rule::on_prompt("ACP-READ", Reply::text(read)))
        .rule(Rule::on_prompt(
            "ACP-ALLOWED",
            Reply::text(write("allowed-by-editor.txt")),
        ))
        .rule(Rule::on_prompt(
            "ACP-REFUSED",
            Reply::text(write("refused-by-editor.txt")),
        ))
        .rule(Rule::on_prompt(
            "ACP-SLOW",
            Reply::text("Too late.").with_delay_ms(120_000),
        ))
        .rule(Rule::on_prompt("ACP-LOADED", Reply::text("Loaded answer.")))
        .rule(Rule::on_prompt("ACP-MODEL", Reply::text("Haiku answers.")))
        .rule(Rule::on_prompt(
            "ACP-EXEC",
            Reply::text(write("made-by-option.txt")),
        ))
}

/// acpx, pointed at the built codecrew, in the world's workspace.
struct Acpx<'a> {
    world: &'a World,
    env: CliEnv,
    program: std::path::PathBuf,
}

impl Acpx<'_> {
    fn command(&self, global: &[&str], args: &[&str]) -> Command {
        let mut command = Command::new(&self.program);
        self.env.apply(&mut command);
        command
            .arg("--agent")
            .arg(format!("{} acp", env!("CARGO_BIN_EXE_codecrew")))
            .arg("--cwd")
            .arg(self.world.workspace())
            .args(global)
            .args(args);
        command
    }

    fn run(&self, global: &[&str], args: &[&str]) -> CliRun {
        run(&mut self.command(global, args), TIMEOUT)
    }

    /// A prompt in the workspace's session, as JSON-RPC lines.
    fn prompt(&self, permissions: &str, text: &str) -> CliRun {
        self.run(
            // acpx's process that owns the session (and codecrew) ends after 3 s idle.
            &[permissions, "--format", "json", "--ttl", "3"],
            &["prompt", text],
        )
    }
}

/// The updates of one kind a client received.
fn updates(run: &CliRun, kind: &str) -> Vec<Value> {
    run.json_lines()
        .into_iter()
        .filter(|line| line["method"] == "session/update")
        .map(|line| line["params"]["update"].clone())
        .filter(|update| update["sessionUpdate"] == kind)
        .collect()
}

/// The agent's text of a turn.
fn said(run: &CliRun) -> String {
    updates(run, "agent_message_chunk")
        .iter()
        .filter_map(|update| update["content"]["text"].as_str())
        .collect()
}

/// The turn's stop reason.
fn stop_reason(run: &CliRun) -> Option<String> {
    run.json_lines()
        .into_iter()
        .find_map(|line| line["result"]["stopReason"].as_str().map(str::to_owned))
}

fn waited(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(90), "never: {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn an_editor_drives_the_crew_through_acpx() {
    let Some(world) = World::new("e2e-acp", script()) else {
        return;
    };
    let clis = Clis::require("e2e::acp").unwrap();
    std::fs::write(world.workspace().join("notes.txt"), "ACP-NOTES-5150\n").unwrap();
    let claude = Counted::new(&world, &world.env, "claude");
    let acpx = Acpx {
        world: &world,
        env: claude.env.clone(),
        program: clis.bin_dir().join("acpx"),
    };

    // A session, made by one codecrew (which then exits, as acpx has it).
    let made = acpx.run(&["--format", "json"], &["sessions", "new"]);
    made.assert_code(0);

    // Answered, streamed as the agent's chunks, marked with the agent.
    let first = acpx.prompt("--approve-all", "@claude ACP-FIRST hello");
    first.assert_code(0);
    assert!(
        said(&first).contains("First answer: acp-zebra."),
        "{}",
        first.stdout
    );
    let chunk = &updates(&first, "agent_message_chunk")[0];
    assert_eq!(chunk["_meta"]["codecrew"]["agent"], "claude", "{chunk}");
    assert_eq!(stop_reason(&first).as_deref(), Some("end_turn"));
    let started = claude.starts();
    assert!(started >= 1);

    // A follow-up (no mention: the agent last addressed) on the same CLI process.
    let second = acpx.prompt("--approve-all", "ACP-SECOND go on");
    second.assert_code(0);
    assert!(
        said(&second).contains("Second answer."),
        "{}",
        second.stdout
    );
    assert_eq!(claude.starts(), started, "a follow-up started a CLI");

    // The model chosen as acpx does (`set model`, through the `model` option): the next
    // prompt runs it (the run store's job says so, below).
    let model = acpx.run(&["--format", "json"], &["set", "model", "haiku"]);
    model.assert_code(0);
    assert!(model.stdout.contains("haiku"), "{}", model.stdout);
    let modelled = acpx.prompt("--approve-all", "ACP-MODEL which model");
    modelled.assert_code(0);
    assert!(
        said(&modelled).contains("Haiku answers."),
        "{}",
        modelled.stdout
    );

    // A codecrew tool call, shown as a tool_call and its update.
    let read = acpx.prompt("--approve-all", "ACP-READ the notes");
    read.assert_code(0);
    let call = &updates(&read, "tool_call")[0];
    assert_eq!(call["kind"], "read", "{call}");
    assert_eq!(call["title"], "@claude: read_file notes.txt");
    let path = world.workspace().join("notes.txt");
    assert_eq!(call["locations"][0]["path"], path.display().to_string());
    let done = updates(&read, "tool_call_update");
    assert!(
        done.iter()
            .any(|update| update["toolCallId"] == call["toolCallId"]
                && update["status"] == "completed"),
        "{}",
        read.stdout
    );
    assert!(said(&read).contains("ACP-NOTED"), "{}", read.stdout);
    // Shown under the call's own id: the run store keeps it under the same one (below).
    let read_id = call["toolCallId"].as_str().unwrap().to_owned();
    assert!(read_id.starts_with("call_"), "{read_id}");

    // In execute mode a command off the safe list is asked in the editor: yes, then no.
    let mode = acpx.run(&[], &["set-mode", "execute"]);
    mode.assert_code(0);
    let allowed = acpx.prompt("--approve-all", "ACP-ALLOWED make it");
    let asked = allowed
        .json_lines()
        .into_iter()
        .find(|line| line["method"] == "session/request_permission")
        .unwrap_or_else(|| panic!("nothing asked: {}", allowed.stdout));
    // The question names the call it is about by the id the call was shown under.
    let shown_ids: Vec<Value> = updates(&allowed, "tool_call")
        .iter()
        .map(|call| call["toolCallId"].clone())
        .collect();
    assert!(
        shown_ids.contains(&asked["params"]["toolCall"]["toolCallId"]),
        "{}",
        allowed.stdout
    );
    let question = asked["params"]["toolCall"].to_string();
    assert!(
        question.contains("touch allowed-by-editor.txt"),
        "{question}"
    );
    assert!(
        question.contains("why:"),
        "the terminal's words: {question}"
    );
    waited("the allowed file", || {
        world.workspace().join("allowed-by-editor.txt").exists()
    });
    let refused = acpx.prompt("--deny-all", "ACP-REFUSED make it");
    assert!(
        refused.stdout.contains("session/request_permission"),
        "{}",
        refused.stdout
    );
    assert!(!world.workspace().join("refused-by-editor.txt").exists());

    // Cancelled mid-turn, from another acpx: the turn ends `cancelled`.
    let mut slow = acpx.command(
        &["--approve-all", "--format", "json", "--ttl", "3"],
        &["prompt", "ACP-SLOW take your time"],
    );
    let slow = slow
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    waited("the slow request at the model", || {
        world.server.model_requests().iter().any(|request| {
            request
                .prompt
                .as_deref()
                .is_some_and(|p| p.contains("ACP-SLOW"))
        })
    });
    acpx.run(&[], &["cancel"]).assert_code(0);
    let output = slow.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("\"stopReason\":\"cancelled\""), "{text}");

    // Listed by the agent itself, titled by its first prompt.
    let listed = acpx.run(&["--format", "json"], &["sessions", "list"]);
    listed.assert_code(0);
    assert!(
        listed.stdout.contains("@claude ACP-FIRST hello"),
        "{}",
        listed.stdout
    );

    // The codecrew serving it ends (acpx's owner is idle past its --ttl of 3 s); the
    // next prompt loads the session in a new one, and Claude resumes its own session.
    std::thread::sleep(Duration::from_secs(6));
    let before = world.server.model_requests().len();
    let starts_before = claude.starts();
    let loaded = acpx.run(
        &["--approve-all", "--format", "json", "--ttl", "1"],
        &["prompt", "ACP-LOADED again"],
    );
    loaded.assert_code(0);
    assert!(
        claude.starts() > starts_before,
        "the same codecrew served it"
    );
    assert!(
        said(&loaded).contains("Loaded answer."),
        "{}",
        loaded.stdout
    );
    let requests = world.server.model_requests();
    let request = requests[before..]
        .iter()
        .find(|r| {
            r.prompt
                .as_deref()
                .is_some_and(|p| p.contains("ACP-LOADED"))
        })
        .unwrap();
    assert!(
        request
            .body
            .to_string()
            .contains("First answer: acp-zebra."),
        "the CLI's session was not resumed: {}",
        request.body
    );

    // The run store has the session as one run: every prompt's answer.
    let logs = world.codecrew(&["logs", "--output", "json"]);
    let listed: Value = serde_json::from_str(&logs.stdout).unwrap();
    let run = &listed["runs"][0];
    assert_eq!(run["command"], "acp", "{listed:#}");
    let shown = world.codecrew(&["logs", "show", run["id"].as_str().unwrap()]);
    for answer in [
        "First answer: acp-zebra.",
        "Second answer.",
        "Loaded answer.",
    ] {
        assert!(shown.stdout.contains(answer), "{answer}: {}", shown.stdout);
    }
    // The read's call is kept under the id the editor was shown.
    let shown = world.codecrew(&[
        "logs",
        "show",
        run["id"].as_str().unwrap(),
        "--output",
        "json",
    ]);
    let shown: Value = serde_json::from_str(&shown.stdout).unwrap();
    let kept: Vec<&Value> = shown["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|job| job["tool_calls"].as_array().unwrap())
        .filter(|call| call["call_id"] == read_id.as_str())
        .collect();
    assert_eq!(kept.len(), 1, "{shown:#}");
    assert_eq!(kept[0]["name"], "read_file");
    let job = shown["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|job| job["task"].as_str().unwrap().contains("ACP-MODEL"))
        .unwrap_or_else(|| panic!("{shown:#}"));
    assert_eq!(job["model"], "haiku", "{job:#}");

    // A one-shot prompt with the options set first (`exec --config-option`): the mode
    // seen in the options acpx got back, and used (the command ran), and the model.
    let exec = acpx.run(
        &["--approve-all", "--format", "json"],
        &[
            "exec",
            "--config-option",
            "mode=execute",
            "--config-option",
            "model=haiku",
            "--config-option",
            "effort=high",
            "@claude ACP-EXEC make it",
        ],
    );
    exec.assert_code(0);
    let chosen: Vec<Vec<Value>> = exec
        .json_lines()
        .into_iter()
        .filter_map(|line| line["result"]["configOptions"].as_array().cloned())
        .collect();
    let last = chosen.last().unwrap_or_else(|| panic!("{}", exec.stdout));
    let current = |id: &str| {
        last.iter()
            .find(|option| option["id"] == id)
            .map(|option| option["currentValue"].clone())
    };
    assert_eq!(current("mode"), Some(json!("execute")), "{}", exec.stdout);
    assert_eq!(current("model"), Some(json!("haiku")), "{}", exec.stdout);
    assert_eq!(current("effort"), Some(json!("high")), "{}", exec.stdout);
    // The effort reached Claude Code (`--effort=high`), which asked the model for it.
    let asked: Vec<Value> = world
        .server
        .model_requests()
        .into_iter()
        .filter(|request| request.body.to_string().contains("ACP-EXEC"))
        .map(|request| request.body["output_config"]["effort"].clone())
        .collect();
    assert!(
        !asked.is_empty() && asked.iter().all(|effort| effort == "high"),
        "{asked:?}"
    );
    waited("the file the execute mode let through", || {
        world.workspace().join("made-by-option.txt").exists()
    });
    let logs = world.codecrew(&["logs", "--output", "json"]);
    let listed: Value = serde_json::from_str(&logs.stdout).unwrap();
    let exec_job = listed["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|run| run["id"].as_str())
        .map(|id| world.codecrew(&["logs", "show", id, "--output", "json"]))
        .map(|shown| serde_json::from_str::<Value>(&shown.stdout).unwrap())
        .flat_map(|shown| shown["jobs"].as_array().cloned().unwrap_or_default())
        .find(|job| {
            job["task"]
                .as_str()
                .unwrap_or_default()
                .contains("ACP-EXEC")
        })
        .unwrap_or_else(|| panic!("{listed:#}"));
    assert_eq!(exec_job["model"], "haiku", "{exec_job:#}");
}

/// The protocol's own TypeScript SDK as the client, for what acpx does not do: two
/// agents on one prompt, the agent option, an attachment, a CLI's own tool call, a
/// second prompt while one runs, the protocol's errors, the mode, closing a session.
#[test]
fn the_protocol_sdk_drives_what_acpx_does_not() {
    // The script names the workspace's file: set once the world is made.
    let Some(world) = World::new("e2e-acp-sdk", Script::new()) else {
        return;
    };
    let notes = world.workspace().join("notes.txt");
    std::fs::write(&notes, "SDK-NATIVE-NOTES\n").unwrap();
    world.server.set_script(
        Script::new()
            .rule(Rule::on_tool_result(
                "SDK-NATIVE-NOTES",
                Reply::text("Native read done."),
            ))
            .rule(Rule::on_prompt(
                "SDK-NATIVE",
                Reply::tool("Read", json!({"file_path": notes})),
            ))
            .rule(Rule::on_prompt("SDK-BOTH", Reply::text("Both: SDK-REPLY.")))
            .rule(Rule::on_prompt(
                "SDK-CHOSEN",
                Reply::text("Chosen answers."),
            ))
            .rule(Rule::on_prompt(
                "SDK-MODEL",
                Reply::text("Modelled answer."),
            ))
            .rule(Rule::on_prompt(
                "SDK-RESUMED",
                Reply::text("Resumed answer."),
            ))
            .rule(Rule::on_prompt(
                "SDK-SLOW",
                Reply::text("Too late.").with_delay_ms(120_000),
            )),
    );
    let clis = Clis::require("e2e::acp").unwrap();
    let sdk = clis
        .bin_dir()
        .join("../@agentclientprotocol/sdk/dist/v1/stable/acp.js");
    let client = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/integration/e2e/acp_sdk_client.mjs");
    let mut command = Command::new("node");
    world.env.apply(&mut command);
    command
        .arg(client)
        .arg(sdk)
        .arg(env!("CARGO_BIN_EXE_codecrew"))
        .arg(world.workspace());
    let done = run(&mut command, TIMEOUT);
    done.assert_code(0);
    let out: Value = serde_json::from_str(done.stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", done.stdout, done.stderr));
    assert_eq!(out["failed"], Value::Null, "{out:#}");
    assert_eq!(out["exitCode"], 0, "{out:#}");

    // What codecrew offers.
    let capabilities = &out["capabilities"];
    assert_eq!(capabilities["loadSession"], true);
    assert_eq!(capabilities["promptCapabilities"]["embeddedContext"], true);
    assert!(
        capabilities["sessionCapabilities"]["list"].is_object(),
        "{capabilities}"
    );
    assert_eq!(out["modes"]["currentModeId"], "query");
    assert!(
        capabilities["sessionCapabilities"]["resume"].is_object(),
        "{capabilities}"
    );

    // A sign-in per agent's CLI, run in a terminal by codecrew itself.
    let sign_in = out["authMethods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|method| method["id"] == "sign-in-claude")
        .unwrap_or_else(|| panic!("{out:#}"));
    assert_eq!(sign_in["type"], "terminal", "{sign_in}");
    assert_eq!(sign_in["args"], json!(["--sign-in", "claude"]));
    assert!(
        sign_in["description"]
            .as_str()
            .unwrap()
            .contains("claude auth login")
    );

    // The options: the agent, its model, its effort (Claude Code has one), the mode (of
    // category mode, as the editor's mode selector reads it).
    let options = &out["configOptions"];
    let ids: Vec<&str> = options
        .as_array()
        .unwrap()
        .iter()
        .map(|option| option["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["agent", "model", "effort", "mode"], "{options:#}");
    assert_eq!(option(options, "model")["category"], "model");
    assert_eq!(option(options, "effort")["category"], "thought_level");
    assert_eq!(option(options, "effort")["currentValue"], "default");
    assert_eq!(option(options, "mode")["category"], "mode");
    assert_eq!(option(options, "mode")["currentValue"], "query");
    let values = |option: &Value| -> Vec<String> {
        option["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|value| value["value"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(values(option(options, "mode")), ["query", "execute"]);
    assert_eq!(
        values(option(options, "effort")),
        ["default", "low", "medium", "high", "xhigh", "max"]
    );

    // The slash commands, told after the answer that made the session (JetBrains hangs
    // on an update about a session it does not know yet).
    let commands: Vec<&str> = out["commands"]
        .as_array()
        .unwrap_or_else(|| panic!("no available_commands_update: {out:#}"))
        .iter()
        .map(|command| command["name"].as_str().unwrap())
        .collect();
    assert_eq!(commands, ["mode", "agents", "usage", "help"]);
    let order = &out["newOrder"];
    assert!(
        order["answer"].as_i64().unwrap() >= 0
            && order["commands"].as_i64() > order["answer"].as_i64(),
        "{order}"
    );

    // Two agents on one prompt, each chunk marked with its agent.
    let both = &out["both"];
    assert_eq!(both["stopReason"], "end_turn", "{both}");
    let mut agents: Vec<&str> = both["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    agents.sort_unstable();
    assert_eq!(agents, ["claude", "gemini"], "{both}");
    for agent in ["claude", "gemini"] {
        let text = both["text"][agent].as_str().unwrap();
        assert!(text.contains(&format!("**@{agent}:**")), "{text}");
        assert!(text.contains("Both: SDK-REPLY."), "{text}");
    }
    assert!(both["usage"]["inputTokens"].as_u64().unwrap() > 0, "{both}");
    // What each agent's context holds, at the prompt's end.
    let used: Vec<&Value> = both["usageUpdates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|update| update["_meta"]["codecrew"]["agent"] == "claude")
        .collect();
    assert_eq!(used.len(), 1, "{both:#}");
    assert!(used[0]["used"].as_u64().unwrap() > 0, "{both:#}");
    // Claude Code states its model's window in its result: the editor's gauge has a size.
    assert!(
        used[0]["size"].as_u64().unwrap() > used[0]["used"].as_u64().unwrap(),
        "{both:#}"
    );
    // Gemini CLI states none: its update, if any, says the size is not known.
    for update in both["usageUpdates"].as_array().unwrap() {
        if update["_meta"]["codecrew"]["agent"] == "gemini" {
            assert_eq!(update["size"], 0, "{both:#}");
        }
    }

    // The agent option: a prompt without a mention goes to gemini alone, with what the
    // editor attached beside its task.
    // The whole list again, the model's values now gemini's.
    let chosen = &out["chosenOptions"];
    assert_eq!(chosen[0]["currentValue"], "gemini");
    // Gemini CLI has no effort setting: agent, model, mode.
    assert_eq!(chosen.as_array().unwrap().len(), 3, "{chosen:#}");
    assert!(
        values(&chosen[1]).contains(&"flash".to_owned()),
        "{chosen:#}"
    );
    assert_eq!(out["chosen"]["agents"], json!(["gemini"]), "{out:#}");
    let attached = world.server.model_requests().into_iter().any(|request| {
        request
            .prompt
            .as_deref()
            .is_some_and(|p| p.contains("SDK-CHOSEN") && p.contains("SDK-ATTACHED-CONTEXT"))
    });
    assert!(attached, "the attachment did not reach the agent");

    // Claude's own Read: a tool_call of kind read on the file, then its result.
    let native = &out["native"];
    assert!(
        native["text"]["claude"]
            .as_str()
            .unwrap_or_default()
            .contains("Native read done."),
        "{native:#}"
    );
    let calls = native["calls"].as_array().unwrap();
    let read = calls
        .iter()
        .find(|c| c["sessionUpdate"] == "tool_call")
        .unwrap_or_else(|| panic!("no tool_call: {native:#}"));
    assert_eq!(read["kind"], "read", "{read}");
    assert!(
        read["title"].as_str().unwrap().starts_with("@claude: Read"),
        "{read}"
    );
    assert_eq!(read["locations"][0]["path"], notes.display().to_string());
    assert!(
        calls
            .iter()
            .any(|c| c["sessionUpdate"] == "tool_call_update"
                && c["toolCallId"] == read["toolCallId"]
                && c["status"] == "completed"),
        "{native:#}"
    );

    // Addressed alone, claude is now the agent option's value: the editor is told.
    let followed = &out["native"]["followed"];
    assert_eq!(
        followed[0]["configOptions"][0]["currentValue"], "claude",
        "{followed:#}"
    );

    // Claude's model chosen: the next prompt ran it (the run store's job says so).
    let modelled = &out["modelOptions"];
    assert_eq!(
        option(modelled, "model")["currentValue"],
        "haiku",
        "{modelled:#}"
    );
    assert!(values(&modelled[1]).contains(&"opus".to_owned()));
    assert!(
        out["modelled"]["text"]["claude"]
            .as_str()
            .unwrap_or_default()
            .contains("Modelled answer."),
        "{out:#}"
    );
    let session = out["sessionId"].as_str().unwrap();
    let shown = world.codecrew(&["logs", "show", session, "--output", "json"]);
    let shown: Value = serde_json::from_str(&shown.stdout).unwrap();
    let job = shown["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|job| job["task"].as_str().unwrap().contains("SDK-MODEL"))
        .unwrap_or_else(|| panic!("{shown:#}"));
    assert_eq!(job["model"], "haiku", "{job:#}");
    assert_eq!(job["agent"], "claude", "{job:#}");

    // The mode: chosen as an option, the whole list back; set_mode then updates it.
    assert_eq!(
        option(&out["modeOptions"], "mode")["currentValue"],
        "execute",
        "{out:#}"
    );
    assert_eq!(
        option(&out["afterSetMode"], "mode")["currentValue"],
        "query",
        "{out:#}"
    );

    // The chat's commands, run as prompts.
    let slash = &out["slash"];
    let said = |command: &str| {
        slash[command]["text"]["codecrew"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(said("/mode"), "mode query\n", "{slash:#}");
    assert!(said("/agents").contains("**@claude**: claude"), "{slash:#}");
    assert!(said("/usage").contains("**@claude**:"), "{slash:#}");
    assert!(said("/new").contains("new session"), "{slash:#}");
    assert_eq!(slash["/mode"]["stopReason"], "end_turn");

    // One prompt at a time; cancel answers `cancelled`.
    let second = &out["second"];
    assert_eq!(second["code"], -32602, "{second}");
    assert!(second.to_string().contains("already running"), "{second}");
    assert_eq!(out["cancelled"], "cancelled");

    // Errors that say what is wrong; the server goes on serving after each.
    assert_eq!(out["unknownSession"]["code"], -32002, "{out:#}");
    assert!(
        out["badMode"]
            .to_string()
            .contains("query (read only) or execute")
    );
    assert!(out["badAgent"].to_string().contains("no agent @nobody"));
    assert_eq!(out["goodMode"], Value::Null, "{out:#}");
    assert!(out["huge"].to_string().contains("at most"), "{out:#}");
    assert_eq!(out["closed"], Value::Null, "{out:#}");
    assert_eq!(out["afterClose"]["code"], -32002, "{out:#}");

    // Resumed after it was closed: its options and commands (after the answer), no
    // replay, and claude goes on.
    let resumed = &out["resumed"];
    assert_eq!(resumed["configOptions"][0]["id"], "agent", "{resumed:#}");
    assert_eq!(resumed["replayed"], 0, "{resumed:#}");
    assert!(resumed["commands"].is_array(), "{resumed:#}");
    let order = &resumed["order"];
    assert!(
        order["commands"].as_i64() > order["answer"].as_i64(),
        "{order}"
    );
    assert!(
        resumed["answer"]["text"]["claude"]
            .as_str()
            .unwrap_or_default()
            .contains("Resumed answer."),
        "{resumed:#}"
    );
}

/// The option `id` of a `configOptions` list.
fn option<'a>(options: &'a Value, id: &str) -> &'a Value {
    options
        .as_array()
        .and_then(|options| options.iter().find(|option| option["id"] == id))
        .unwrap_or_else(|| panic!("no option {id}: {options:#}"))
}
