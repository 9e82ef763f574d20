//! The binary's own commands, driven as a user runs them: `prompt`, `intercept`, `tools`,
//! help and exit codes.

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};

use crate::support::World;
use serde_json::{Value, json};

/// Runs `codecrew ARGS` in `world`'s workspace with `stdin` written to it (from a thread of
/// its own, so a large input cannot block on a full pipe).
fn codecrew(world: &World, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = world.command(args).stdin(Stdio::piped()).spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    output
}

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("crates/codecrew-intercept/tests/fixtures")
            .join(name),
    )
    .unwrap()
}

#[test]
fn intercept_dry_run_on_every_cli_capture() {
    let world = World::new();
    let expected = json!({
        "calls": [{"name": "codecrew:help", "tool": "help", "input": {}, "known": true,
                   "refused": null}],
        "text": "Sure, calling the helper tool:\n\n",
        "rejected": [],
    });
    for capture in [
        "claude/b_json_block_stream_json.stdout",
        "claude/b_json_block_json.stdout",
        "claude-2.1.197/b_json_block_stream_json.stdout",
        "gemini/b_json_block_stream_json.stdout",
        "gemini/b_json_block_json.stdout",
        "codex/b_json_block_json.stdout",
    ] {
        for from in ["auto", capture.split(['/', '-']).next().unwrap()] {
            let output = codecrew(
                &world,
                &["intercept", "--dry-run", "--output", "json", "--from", from],
                &fixture(capture),
            );
            assert!(output.status.success(), "{capture}");
            assert_eq!(json_of(&output), expected, "{capture} --from {from}");
        }
    }
}

/// Every decoder is a value of `--from` (opencode's and llm's were refused though the
/// README listed them): the CLIs whose captures hold a read_file call in a json block.
#[test]
fn intercept_reads_opencode_llm_and_qwen_by_name() {
    let world = World::new();
    let expected = json!({
        "calls": [{"name": "codecrew:read_file", "tool": "read_file",
                   "input": {"path": "hello.txt"}, "known": true, "refused": null}],
        "text": "Let me look.\n",
        "rejected": [],
    });
    for (from, capture) in [
        ("opencode", "opencode/b_json_block_json.stdout"),
        ("llm", "llm/b_json_block_json.stdout"),
        // Qwen Code prints Claude's stream-json.
        ("claude", "qwen/b_json_block_json.stdout"),
    ] {
        let output = codecrew(
            &world,
            &["intercept", "--dry-run", "--output", "json", "--from", from],
            &fixture(capture),
        );
        assert!(
            output.status.success(),
            "{from}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(json_of(&output), expected, "{capture} --from {from}");
    }
}

#[test]
fn intercept_runs_the_calls_and_reports_results() {
    let world = World::new();
    let dir = world.workspace();
    std::fs::write(dir.join("notes.txt"), "first line\n").unwrap();
    let text = "Reading.\n```json\n{\"name\":\"codecrew:read_file\",\"input\":{\"path\":\"notes.txt\"}}\n```\n\
                {\"name\":\"codecrew:write_file\",\"input\":{\"path\":\"x\",\"content\":\"y\"}}\n";
    let output = codecrew(&world, &["intercept", "--output", "json"], text.as_bytes());
    let doc = json_of(&output);
    assert_eq!(output.status.code(), Some(1), "a denied call fails the run");
    assert_eq!(doc["results"][0]["status"], "ok");
    assert!(
        doc["results"][0]["output"]["content"]
            .as_str()
            .unwrap()
            .contains("first line")
    );
    assert_eq!(
        doc["results"][1]["status"], "denied",
        "query mode never writes"
    );
    assert!(!dir.join("x").exists());

    let output = codecrew(
        &world,
        &["intercept", "--mode", "execute", "--output", "json"],
        text.as_bytes(),
    );
    assert!(output.status.success());
    assert_eq!(std::fs::read_to_string(dir.join("x")).unwrap(), "y");

    // Text output: the text, a notice per call, and its result.
    let output = codecrew(
        &world,
        &["intercept"],
        b"Hi.\n{\"name\":\"codecrew:help\",\"input\":{\"command\":\"prompt\"}}\n",
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.starts_with("Hi.\n[codecrew] call codecrew:help {\"command\":\"prompt\"}\n{"),
        "{stdout}"
    );
    assert!(stdout.contains("\"status\": \"ok\""));
}

#[test]
fn intercept_survives_bad_input() {
    let world = World::new();
    let mut garbage: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    garbage.extend_from_slice(b"\xff\xfe{\"name\":\"codecrew:help\"");
    for (name, input) in [
        ("binary", garbage),
        (
            "invalid utf-8",
            b"caf\xe9 \xc3\x28\n{\"name\":\"codecrew:help\"}\n".to_vec(),
        ),
        (
            "half a JSON line",
            b"{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n{\"type\":\"item.comp".to_vec(),
        ),
        (
            "unterminated fence",
            b"```json\n{\"name\":\"codecrew:help\",".to_vec(),
        ),
        ("one long line", vec![b'x'; 5_000_000]),
    ] {
        let output = codecrew(
            &world,
            &["intercept", "--dry-run", "--output", "json"],
            &input,
        );
        assert!(
            output.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let doc = json_of(&output);
        assert!(
            doc["calls"].is_array() && doc["rejected"].is_array(),
            "{name}"
        );
    }
    let output = codecrew(
        &world,
        &["intercept", "--dry-run", "--output", "json"],
        b"caf\xe9\n{\"name\":\"codecrew:help\"}\n",
    );
    assert_eq!(json_of(&output)["calls"][0]["tool"], "help");
    let output = codecrew(
        &world,
        &[
            "intercept",
            "--from",
            "codex",
            "--dry-run",
            "--output",
            "json",
        ],
        b"{\"type\":\"item.comp",
    );
    let doc = json_of(&output);
    assert!(
        doc["rejected"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("incomplete"),
        "{doc}"
    );
}

#[test]
fn prompt_lists_the_tools_of_the_mode() {
    let world = World::new();
    let query =
        String::from_utf8(codecrew(&world, &["prompt", "Summarise", "README.md"], b"").stdout)
            .unwrap();
    assert!(query.contains("### codecrew:read_file"));
    assert!(!query.contains("### codecrew:write_file"));
    assert!(
        query
            .trim_end()
            .ends_with("## Your task\n\nSummarise README.md")
    );
    let execute =
        String::from_utf8(codecrew(&world, &["prompt", "--mode", "execute", "x"], b"").stdout)
            .unwrap();
    assert!(
        execute.contains("### codecrew:write_file") && execute.contains("### codecrew:run_command")
    );
}

#[test]
fn tools_commands() {
    let world = World::new();
    let list = json_of(&codecrew(
        &world,
        &["tools", "list", "--mode", "query", "--output", "json"],
        b"",
    ));
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tool"].as_str().unwrap())
        .collect();
    // run_command is offered in query for its reading commands, where the kernel holds
    // the read-only sandbox.
    let sandboxed = codecrew_policy::sandbox::read_only_unavailable(true).is_none();
    let mut expected = vec!["glob", "grep", "help", "list_directory", "read_file"];
    if sandboxed {
        expected.push("run_command");
    }
    assert_eq!(names, expected);
    if sandboxed {
        let run_command = &list.as_array().unwrap()[5];
        let description = run_command["description"].as_str().unwrap();
        assert!(description.contains("read-only"), "{description}");
    }

    let show = codecrew(&world, &["tools", "show", "codecrew:edit_file"], b"");
    let text = String::from_utf8(show.stdout).unwrap();
    assert!(
        text.contains("old_string") && text.contains("Read-only: no"),
        "{text}"
    );
    let missing = codecrew(&world, &["tools", "show", "nope"], b"");
    assert_eq!(missing.status.code(), Some(2));

    let ok = codecrew(
        &world,
        &[
            "tools",
            "call",
            "help",
            "--input",
            "{\"command\":\"intercept\"}",
        ],
        b"",
    );
    assert!(ok.status.success());
    assert!(
        json_of(&ok)["output"]["help"]
            .as_str()
            .unwrap()
            .contains("--dry-run")
    );
    let unknown = codecrew(&world, &["tools", "call", "nope"], b"");
    assert_eq!(unknown.status.code(), Some(1));
    assert_eq!(json_of(&unknown)["error"]["code"], "E_UNKNOWN_TOOL");
    let extra = codecrew(
        &world,
        &[
            "tools",
            "call",
            "read_file",
            "--input",
            "{\"path\":\"a\",\"bogus\":1}",
        ],
        b"",
    );
    assert_eq!(json_of(&extra)["error"]["code"], "E_INVALID_INPUT");
    let nul = codecrew(
        &world,
        &[
            "tools",
            "call",
            "read_file",
            "--input",
            "{\"path\":\"a\\u0000b\"}",
        ],
        b"",
    );
    assert_eq!(nul.status.code(), Some(1));
    assert!(
        json_of(&nul)["error"]["code"]
            .as_str()
            .unwrap()
            .starts_with("E_")
    );
}

#[test]
fn help_and_usage_errors() {
    let world = World::new();
    let help = String::from_utf8(codecrew(&world, &["--help"], b"").stdout).unwrap();
    for command in ["query", "execute", "prompt", "intercept", "tools"] {
        assert!(help.contains(command), "{command} missing from --help");
    }
    assert!(help.contains("Exit codes"));
    let bad = codecrew(&world, &["intercept", "--from", "nonsense"], b"");
    assert_eq!(bad.status.code(), Some(2));
    let bad = codecrew(&world, &["query", "--timeout", "soon", "x"], b"");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a duration"));
}

#[test]
fn config_permission_rules_govern_tool_calls() {
    let world = World::new().project_config(
        "[permissions]\ndeny = [\"read_file(private/**)\"]\nallow = [\"run_command(*)\"]\n",
    );
    let dir = world.workspace();
    std::fs::write(dir.join("notes.txt"), "fine\n").unwrap();
    std::fs::create_dir(dir.join("private")).unwrap();
    std::fs::write(dir.join("private/plan.txt"), "hidden\n").unwrap();
    let read = |path: &str| {
        let input = json!({"path": path}).to_string();
        json_of(&codecrew(
            &world,
            &["tools", "call", "read_file", "--input", &input],
            b"",
        ))
    };
    assert_eq!(read("notes.txt")["status"], "ok");
    let denied = read("private/plan.txt");
    assert_eq!(denied["status"], "denied", "{denied}");
    assert!(!denied.to_string().contains("hidden"));

    // The untrusted project's allow rule does not grant: the command still needs approval,
    // and with no terminal that is a denial naming the way to allow it.
    let input = json!({"command": "touch made-by-command"}).to_string();
    let output = codecrew(
        &world,
        &[
            "tools",
            "call",
            "run_command",
            "--mode",
            "execute",
            "--input",
            &input,
        ],
        b"",
    );
    let result = json_of(&output);
    assert_eq!(result["status"], "denied", "{result}");
    assert!(!dir.join("made-by-command").exists());
    assert!(result["error"].to_string().contains("--yes"), "{result}");
}

#[test]
fn intercept_text_output_keeps_messages_apart() {
    let world = World::new();
    let capture = fixture("claude/e_tool_bash_allowed.stdout");
    let text = codecrew(&world, &["intercept", "--dry-run"], &capture);
    assert_eq!(
        String::from_utf8(text.stdout).unwrap(),
        "Creating a directory.\nThe tool returned; done."
    );
    let json = codecrew(
        &world,
        &["intercept", "--dry-run", "--output", "json"],
        &capture,
    );
    assert_eq!(
        json_of(&json)["text"],
        "Creating a directory.\nThe tool returned; done."
    );
}

/// An editor's sign-in (`codecrew acp --sign-in AGENT`) runs the CLI's own, found on
/// PATH, in an empty folder of its own: never in the checkout, whose files for the CLI
/// (Gemini's `.gemini/settings.json` names MCP servers it would start) would run outside
/// every wall.
#[test]
fn a_sign_in_runs_the_clis_own_outside_the_checkout() {
    let world = World::new().program(
        "gemini",
        "#!/bin/sh\npwd > \"$0.cwd\"\nls -A > \"$0.seen\"\necho \"$#\" > \"$0.args\"\n",
    );
    let shipped = world.workspace().join(".gemini");
    std::fs::create_dir_all(&shipped).unwrap();
    std::fs::write(
        shipped.join("settings.json"),
        r#"{"mcpServers": {"planted": {"command": "touch", "args": ["planted"]}}}"#,
    )
    .unwrap();
    let output = world.run(&["acp", "--sign-in", "gemini"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let recorded = |what: &str| {
        std::fs::read_to_string(format!("{}.{what}", world.program_path("gemini").display()))
            .unwrap()
    };
    let cwd = recorded("cwd");
    let workspace = world.workspace().canonicalize().unwrap();
    assert!(
        !Path::new(cwd.trim()).starts_with(&workspace),
        "the sign-in ran in {cwd}"
    );
    assert_eq!(recorded("seen"), "", "the sign-in's folder is empty");
    // Gemini CLI signs in when started alone: no argument.
    assert_eq!(recorded("args").trim(), "0");
}
