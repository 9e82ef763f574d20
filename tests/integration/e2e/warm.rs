//! One CLI process for the whole tool loop (Claude's stream-json input, `codex
//! app-server`, the ACP agents `gemini --acp`, `qwen --acp`, `copilot --acp` and
//! `opencode acp`): counted by a wrapper that logs every start of the real
//! CLI; the per-turn resume still selectable; a kept CLI killed mid-loop; the CLIs' own
//! requests for permission answered per mode.

use super::*;
use crate::support::clis::Clis;

/// The CLIs with a long-lived mode.
const KEPT: [&str; 6] = ["claude", "codex", "gemini", "copilot", "opencode", "qwen"];

/// A `cli` on PATH before the real one that logs each start, then runs it. The log is
/// kept in a state folder of the CLI's own (`~/.claude/debug`, ...), which its wall lets it write.
pub(super) struct Counted {
    pub(super) env: CliEnv,
    log: std::path::PathBuf,
}

impl Counted {
    pub(super) fn new(world: &World, env: &CliEnv, cli: &str) -> Counted {
        let clis = Clis::require("e2e::warm").unwrap();
        let dir = world.home.root().join("counting-bin");
        // A folder the CLI's wall lets it write: Claude's and Qwen Code's own folders are
        // read only but for their state.
        let state = match cli {
            "claude" => world.home.home().join(".claude/debug"),
            "qwen" => world.home.home().join(".qwen/tmp"),
            "opencode" => world.home.home().join(".local/share/opencode"),
            _ => world.home.home().join(format!(".{cli}")),
        };
        std::fs::create_dir_all(&state).unwrap();
        let log = state.join("codecrew-test-starts.log");
        let real = clis.bin_dir().join(cli);
        // One line a start, whatever its arguments hold (Claude's system prompt, on its
        // command line, spans many lines).
        let script = format!(
            "#!/bin/sh\nif [ \"$*\" = '--no-auto-update --version' ]; then echo version; \
             else echo start; fi >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.display()
        );
        let path = clis.path_with_wrapper(&dir, cli, &script);
        Counted {
            env: env.clone().with("PATH", path),
            log,
        }
    }

    /// The CLI's starts for turns: not Copilot's `--no-auto-update --version` run that
    /// unpacks its package in a fresh home before the first turn.
    pub(super) fn starts(&self) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter(|line| *line == "start")
            .count()
    }
}

/// Two reads, one per turn, then the answer: three turns.
fn three_turns() -> Script {
    let first = fenced(&[envelope("read_file", json!({"path": "a.txt"}))]);
    let second = fenced(&[envelope("read_file", json!({"path": "b.txt"}))]);
    Script::new()
        .rule(
            Rule::on_prompt(FOLLOW_UP, Reply::text("Read WARM-A and WARM-B.")).and_prompt("WARM-B"),
        )
        .rule(Rule::on_prompt(FOLLOW_UP, Reply::text(second)).and_prompt("WARM-A"))
        .rule(Rule::on_prompt("E2E-WARM", Reply::text(first)))
}

#[test]
fn one_process_serves_the_whole_loop_unless_keep_alive_is_off() {
    let Some(world) = World::new("e2e-warm", three_turns()) else {
        return;
    };
    std::fs::write(world.workspace().join("a.txt"), "WARM-A\n").unwrap();
    std::fs::write(world.workspace().join("b.txt"), "WARM-B\n").unwrap();
    for cli in KEPT {
        let counted = Counted::new(&world, &world.env, cli);
        let run = world.codecrew_with(
            &counted.env,
            &[
                "query",
                "--output",
                "json",
                &format!("@{cli} E2E-WARM read both"),
            ],
        );
        run.assert_code(0);
        let doc: Value = serde_json::from_str(run.stdout.trim()).unwrap();
        assert_eq!(result(&doc)["response"], "Read WARM-A and WARM-B.", "{doc}");
        assert_eq!(result(&doc)["turns"], 3);
        assert_eq!(counted.starts(), 1, "{cli}: one process for three turns");
        if cli == "gemini" {
            // `gemini --acp` records a chat of its own at start-up, which would show in
            // the user's session list: only codecrew's session is left.
            assert_eq!(gemini_chats(&world), 1, "one recorded Gemini session");
        }

        // keep_alive = false: the per-turn resume, one process per turn, the same answer.
        let per_turn = super::config::with_user_config(
            &world,
            &format!("[agents.{cli}]\nprovider = \"{cli}\"\nkeep_alive = false\n"),
        );
        let counted = Counted::new(&world, &per_turn, cli);
        let before = counted.starts();
        let run = world.codecrew_with(
            &counted.env,
            &[
                "query",
                "--output",
                "json",
                &format!("@{cli} E2E-WARM read both"),
            ],
        );
        run.assert_code(0);
        let doc: Value = serde_json::from_str(run.stdout.trim()).unwrap();
        assert_eq!(result(&doc)["response"], "Read WARM-A and WARM-B.", "{doc}");
        assert_eq!(counted.starts() - before, 3, "{cli}: one process per turn");
    }

    // A kept Claude reports its cost as a running total; each turn counts its own part
    // (three turns of about the same size cost about the same).
    let counted = Counted::new(&world, &world.env, "claude");
    let run = world.codecrew_with(
        &counted.env,
        &[
            "query",
            "--output",
            "stream-json",
            "@claude E2E-WARM read both",
        ],
    );
    run.assert_code(0);
    let costs: Vec<f64> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "turn_end")
        .map(|e| e["usage"]["cost_usd"].as_f64().unwrap())
        .collect();
    assert_eq!(costs.len(), 3, "{}", run.stdout);
    assert!(
        costs.iter().all(|c| *c > 0.0 && *c < costs[0] * 1.5),
        "{costs:?}"
    );
}

/// The chat records in the test HOME's `~/.gemini`.
fn gemini_chats(world: &World) -> usize {
    let tmp = world.home.home().join(".gemini").join("tmp");
    std::fs::read_dir(tmp)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|project| std::fs::read_dir(project.path().join("chats")).ok())
        .flatten()
        .flatten()
        .filter(|file| file.file_name().to_string_lossy().starts_with("session-"))
        .count()
}

/// The pids of the real CLI processes running in `dir` (not codecrew itself).
fn cli_processes(dir: &Path, name: &str) -> Vec<i32> {
    super::interrupt::processes_in(dir)
        .into_iter()
        .filter_map(|pid| pid.parse::<i32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline);
            // Not codecrew itself (a CLI's arguments may name codecrew's files).
            let program = cmdline.split('\0').next().unwrap_or("");
            cmdline.contains(name) && !program.ends_with("codecrew")
        })
        .collect()
}

#[test]
fn a_kept_cli_killed_mid_loop_is_retried_once_by_resuming_the_session() {
    for cli in KEPT {
        killed_mid_loop(cli);
    }
}

fn killed_mid_loop(cli: &str) {
    let call = fenced(&[envelope("read_file", json!({"path": "a.txt"}))]);
    let script = Script::new()
        .rule(
            Rule::on_prompt(
                FOLLOW_UP,
                Reply::text("Survived: WARM-A.").with_delay_ms(3000),
            )
            .and_prompt("WARM-A"),
        )
        .rule(Rule::on_prompt("E2E-KILLED", Reply::text(call)));
    let Some(world) = World::new(&format!("e2e-warm-killed-{cli}"), script) else {
        return;
    };
    std::fs::write(world.workspace().join("a.txt"), "WARM-A\n").unwrap();
    let counted = Counted::new(&world, &world.env, cli);
    let workspace = world.workspace().canonicalize().unwrap();
    let child = {
        let mut command = Command::new(env!("CARGO_BIN_EXE_codecrew"));
        counted.env.apply(&mut command);
        command
            .args([
                "query",
                "--output",
                "stream-json",
                &format!("@{cli} E2E-KILLED read it"),
            ])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    // While the model takes its time over the second turn, the CLI is killed.
    let started = std::time::Instant::now();
    while !world
        .server
        .requests()
        .iter()
        .any(|r| r.prompt.as_deref().is_some_and(|p| p.contains(FOLLOW_UP)))
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no second turn"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let victims = cli_processes(&workspace, cli);
    assert!(!victims.is_empty(), "the kept {cli} is running");
    for pid in victims {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The turn run again is a retry, not an error: the job goes on, and answers.
    assert!(events.iter().all(|e| e["type"] != "error"), "{stdout}");
    let retry = events.iter().find(|e| e["type"] == "retry").unwrap();
    assert!(
        retry["message"].as_str().unwrap().contains("runs again"),
        "{retry}"
    );
    let done = events.iter().find(|e| e["type"] == "done").unwrap();
    assert_eq!(done["response"], "Survived: WARM-A.", "{done}");
    assert_eq!(done["turns"], 2, "{done}");
    assert_eq!(counted.starts(), 2, "the kept process, then one resume");
}

#[test]
fn codexs_own_command_outside_the_workspace_is_refused_in_either_mode() {
    let outside = std::env::temp_dir().join(format!("codecrew-escalated-{}", std::process::id()));
    let _ = std::fs::remove_file(&outside);
    let script = Script::new()
        .rule(Rule::on_tool_result(
            "rejected",
            Reply::text("Codecrew declined it."),
        ))
        .rule(Rule::on_prompt(
            "E2E-ESCALATE",
            Reply::tool(
                "exec_command",
                json!({
                    "cmd": format!("touch {}", outside.display()),
                    "sandbox_permissions": "require_escalated",
                    "justification": "need to write outside",
                }),
            ),
        ));
    let Some(world) = World::new("e2e-warm-escalate", script) else {
        return;
    };
    for mode in ["query", "execute"] {
        let env = world.env.clone();
        let run = world.codecrew_with(
            &env,
            &[
                "-v",
                mode,
                "--output",
                "json",
                "@codex E2E-ESCALATE touch it",
            ],
        );
        run.assert_code(0);
        let doc: Value = serde_json::from_str(run.stdout.trim()).unwrap();
        assert_eq!(
            result(&doc)["response"],
            "Codecrew declined it.",
            "{mode}: {doc}"
        );
        assert!(
            run.stderr.contains("refused codex's shell"),
            "{mode}: {}",
            run.stderr
        );
        assert!(!outside.exists(), "{mode}: the escalated command ran");
    }
}

#[test]
fn geminis_shell_is_refused_unless_allowed_and_its_edits_follow_the_mode() {
    let script = Script::new()
        .rule(Rule::on_any_tool_result(Reply::text("Gemini went on.")))
        .rule(Rule::on_prompt(
            "E2E-GEMINI-SHELL",
            Reply::tool("run_shell_command", json!({"command": "touch shell-ran"})),
        ))
        .rule(Rule::on_prompt(
            "E2E-GEMINI-WRITE",
            Reply::tool(
                "write_file",
                json!({"file_path": "gemini-wrote.txt", "content": "hi"}),
            ),
        ));
    let Some(world) = World::new("e2e-warm-gemini-ask", script) else {
        return;
    };
    let shell_ran = world.workspace().join("shell-ran");
    let wrote = world.workspace().join("gemini-wrote.txt");
    for mode in ["query", "execute"] {
        // Its shell asks codecrew in either mode; `touch` asks, and without a terminal
        // is refused.
        let run = world.codecrew(&["-v", mode, "@gemini E2E-GEMINI-SHELL run it"]);
        run.assert_code(0);
        assert!(
            run.stdout.contains("Gemini went on."),
            "{mode}: {}",
            run.stdout
        );
        assert!(
            run.stderr.contains("refused gemini's"),
            "{mode}: {}",
            run.stderr
        );
        assert!(!shell_ran.exists(), "{mode}: Gemini's shell ran");

        // Its edits ask codecrew: refused in query, allowed in execute (an ordinary file).
        let run = world.codecrew(&["-v", mode, "@gemini E2E-GEMINI-WRITE write it"]);
        run.assert_code(0);
        assert!(
            run.stdout.contains("Gemini went on."),
            "{mode}: {}",
            run.stdout
        );
        match mode {
            "query" => {
                assert!(!wrote.exists(), "query: Gemini wrote a file");
                assert!(run.stderr.contains("refused gemini's"), "{}", run.stderr);
            }
            _ => assert_eq!(std::fs::read_to_string(&wrote).unwrap(), "hi"),
        }
    }
}
