//! The tool loop with the real CLIs against the project's fake model server (scripted
//! replies, no added latency), side by side in one run:
//! 1. a plain one-turn answer: the CLI called directly vs `codecrew query`;
//! 2. a 5-turn loop through codecrew (four `codecrew:read_file` calls, one per turn, then
//!    the answer): one kept CLI process (`keep_alive`, the default where the CLI has a
//!    long-lived mode) vs a new process per turn (`keep_alive = false`);
//! 3. the CLI's own native 5-turn loop (its own read tool four times), called directly
//!    (not for llm, which has no tools of its own);
//! 4. the cost of the CLI's wall and of codecrew judging its own tools: the kept loop of 2
//!    and the native loop of 3 run through codecrew (each native read then judged by
//!    codecrew's policy where the CLI asks), with the wall and with `CODECREW_SANDBOX=off`.
//!
//! `cargo bench --bench tool_loop [-- CLI...]` (needs `.ci/install-clis`); the median of PLAIN_RUNS
//! runs for a plain answer, of RUNS for a loop. Figures from this machine are in
//! docs/PERFORMANCE.md.

// The test suite's own support code (the fake model server, the CLIs' setup) is built
// here as it is in the tests, where a failed setup is a panic.
#![allow(dead_code, clippy::unwrap_used, clippy::panic)]

#[path = "../tests/integration/support/clis.rs"]
mod clis;
#[path = "../tests/integration/support/fake_model/mod.rs"]
mod fake_model;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use clis::{Cli, CliEnv, Clis, TestHome};
use fake_model::{FakeModel, Reply, Rule, Script};

const RUNS: usize = 5;
/// The plain answers differ by milliseconds: more runs.
const PLAIN_RUNS: usize = 15;
const FOLLOW_UP: &str = "codecrew ran the tool calls";

fn envelope(path: &str) -> String {
    let call = json!({"type": "tool_use", "name": "codecrew:read_file", "input": {"path": path}});
    format!("```json\n{call}\n```\n")
}

/// Plain answers, codecrew's 5-turn loop and the native ones, told apart by their prompts
/// and by what the files read hold: `LOOP-n` (codecrew's loop and Claude's Read tool),
/// `NATC-n` (Codex's shell), `NATG-n` (Gemini's read_file), `NATO-n` (opencode's read),
/// `NATQ-n` (Qwen Code's read_file), `NATP-n` (Copilot's view). llm has no tools of its
/// own: no native loop.
fn script(workspace: &std::path::Path) -> Script {
    let mut script = Script::new()
        .rule(Rule::on_prompt(
            "BENCH-PLAIN",
            Reply::text("Plain answer.").with_chunk_size(64),
        ))
        // codecrew's loop: the follow-up carries the file read, which names the next.
        .rule(
            Rule::on_prompt(FOLLOW_UP, Reply::text("Read all four.").with_chunk_size(64))
                .and_prompt("LOOP-4"),
        );
    for n in 1..4 {
        script = script.rule(
            Rule::on_prompt(FOLLOW_UP, Reply::text(envelope(&format!("f{}.txt", n + 1))))
                .and_prompt(format!("LOOP-{n}")),
        );
    }
    script = script.rule(Rule::on_prompt(
        "BENCH-LOOP",
        Reply::text(envelope("f1.txt")),
    ));
    // The native loops: the CLI's own tool, its results as tool results.
    script = script
        .rule(Rule::on_tool_result(
            "LOOP-4",
            Reply::text("Read all four.").with_chunk_size(64),
        ))
        .rule(Rule::on_tool_result(
            "NATC-4",
            Reply::text("Read all four.").with_chunk_size(64),
        ))
        .rule(Rule::on_tool_result(
            "NATG-4",
            Reply::text("Read all four.").with_chunk_size(64),
        ))
        .rule(Rule::on_tool_result(
            "NATO-4",
            Reply::text("Read all four.").with_chunk_size(64),
        ))
        .rule(Rule::on_tool_result(
            "NATQ-4",
            Reply::text("Read all four.").with_chunk_size(64),
        ))
        .rule(Rule::on_tool_result(
            "NATP-4",
            Reply::text("Read all four.").with_chunk_size(64),
        ));
    // The highest first: a request may carry every earlier result too (Codex's tool
    // outputs pile up after its last message), and the newest decides the next step.
    for n in (1..4).rev() {
        let next = workspace.join(format!("f{}.txt", n + 1));
        script = script
            .rule(Rule::on_tool_result(
                format!("LOOP-{n}"),
                Reply::tool("Read", json!({"file_path": next})),
            ))
            .rule(Rule::on_tool_result(
                format!("NATC-{n}"),
                Reply::tool(
                    "exec_command",
                    json!({"cmd": format!("cat g{}.txt", n + 1)}),
                ),
            ))
            .rule(Rule::on_tool_result(
                format!("NATG-{n}"),
                Reply::tool(
                    "read_file",
                    json!({"file_path": workspace.join(format!("h{}.txt", n + 1))}),
                ),
            ))
            .rule(Rule::on_tool_result(
                format!("NATO-{n}"),
                Reply::tool(
                    "read",
                    json!({"filePath": workspace.join(format!("i{}.txt", n + 1))}),
                ),
            ))
            .rule(Rule::on_tool_result(
                format!("NATQ-{n}"),
                Reply::tool(
                    "read_file",
                    json!({"file_path": workspace.join(format!("j{}.txt", n + 1))}),
                ),
            ))
            .rule(Rule::on_tool_result(
                format!("NATP-{n}"),
                Reply::tool(
                    "view",
                    json!({"path": workspace.join(format!("k{}.txt", n + 1))}),
                ),
            ));
    }
    script
        .rule(Rule::on_prompt(
            "BENCH-NATIVE-CLAUDE",
            Reply::tool("Read", json!({"file_path": workspace.join("f1.txt")})),
        ))
        .rule(Rule::on_prompt(
            "BENCH-NATIVE-CODEX",
            Reply::tool("exec_command", json!({"cmd": "cat g1.txt"})),
        ))
        .rule(Rule::on_prompt(
            "BENCH-NATIVE-GEMINI",
            Reply::tool("read_file", json!({"file_path": workspace.join("h1.txt")})),
        ))
        .rule(Rule::on_prompt(
            "BENCH-NATIVE-OPENCODE",
            Reply::tool("read", json!({"filePath": workspace.join("i1.txt")})),
        ))
        .rule(Rule::on_prompt(
            "BENCH-NATIVE-QWEN",
            Reply::tool("read_file", json!({"file_path": workspace.join("j1.txt")})),
        ))
        .rule(Rule::on_prompt(
            "BENCH-NATIVE-COPILOT",
            Reply::tool("view", json!({"path": workspace.join("k1.txt")})),
        ))
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// [`time_n`] over RUNS runs.
fn time(label: &str, expect: &str, command: impl FnMut() -> (Command, Option<String>)) -> Duration {
    time_n(RUNS, label, expect, command)
}

/// The median wall time of `command()` over `runs` runs that succeed with `expect` on
/// stdout.
fn time_n(
    runs: usize,
    label: &str,
    expect: &str,
    mut command: impl FnMut() -> (Command, Option<String>),
) -> Duration {
    let mut samples = Vec::new();
    for _ in 0..runs {
        let (mut command, stdin) = command();
        let start = Instant::now();
        let Ok(child) = clis::spawn_fed(&mut command, stdin.as_deref()) else {
            println!("{label}: cannot start");
            return Duration::ZERO;
        };
        let Ok(output) = child.wait_with_output() else {
            continue;
        };
        let elapsed = start.elapsed();
        let stdout = String::from_utf8_lossy(&output.stdout);
        if output.status.success() && stdout.contains(expect) {
            samples.push(elapsed);
        } else {
            println!(
                "{label}: a run failed:\n{}",
                stdout.chars().take(2000).collect::<String>()
            );
        }
    }
    median(samples)
}

fn ms(duration: Duration) -> String {
    format!("{:>8.1} ms", duration.as_secs_f64() * 1000.0)
}

fn main() {
    let Ok(clis) = Clis::locate() else {
        println!("the real CLIs are not installed (.ci/install-clis); nothing measured");
        return;
    };
    let codecrew = env!("CARGO_BIN_EXE_codecrew");
    let home = TestHome::new("bench-tool-loop");
    let workspace = home.workdir();
    for n in 1..=4 {
        let _ = std::fs::write(workspace.join(format!("f{n}.txt")), format!("LOOP-{n}\n"));
        let _ = std::fs::write(workspace.join(format!("g{n}.txt")), format!("NATC-{n}\n"));
        let _ = std::fs::write(workspace.join(format!("h{n}.txt")), format!("NATG-{n}\n"));
        let _ = std::fs::write(workspace.join(format!("i{n}.txt")), format!("NATO-{n}\n"));
        let _ = std::fs::write(workspace.join(format!("j{n}.txt")), format!("NATQ-{n}\n"));
        let _ = std::fs::write(workspace.join(format!("k{n}.txt")), format!("NATP-{n}\n"));
    }
    let server = FakeModel::start(script(&workspace));
    let env = clis
        .env_for_all(&home, &server.url())
        .with("CODECREW_CONFIG", "");
    let per_turn_env = env.per_turn(&home);
    let unwalled_env = env.clone().with("CODECREW_SANDBOX", "off");
    let codecrew_run = |env: &CliEnv, task: &str| {
        let mut command = Command::new(codecrew);
        env.apply(&mut command);
        command.args(["query", "--quiet", "--raw", task]);
        (command, None)
    };
    // Each CLI called directly, as its own headless mode runs: the prompt on stdin; with
    // `as_codecrew`, also the flags codecrew adds for a query.
    let direct = |cli: Cli, prompt: &str, as_codecrew: bool| {
        let mut command = clis.command(cli, &env);
        match cli {
            Cli::Codex => command.args(["exec", "--json", "--skip-git-repo-check"]),
            Cli::Gemini => command.args(["--output-format", "stream-json"]),
            Cli::Opencode => command.args(["run", "--format", "json", "--title", "bench"]),
            Cli::Qwen => command.args(["--output-format", "stream-json", "--safe-mode"]),
            Cli::Llm => command.args(["prompt", "--json"]),
            // Piped stdin is Copilot's non-interactive mode.
            Cli::Copilot => command.args(["--output-format", "json", "--no-auto-update"]),
            Cli::Claude => command.args(["-p", "--output-format", "stream-json", "--verbose"]),
        };
        match cli {
            Cli::Claude if prompt.contains("NATIVE") => command.args(["--allowedTools", "Read"]),
            Cli::Claude if as_codecrew => {
                command.args(["--disallowedTools", "Edit,Write,NotebookEdit"])
            }
            Cli::Codex if as_codecrew => command.args(["--sandbox", "read-only"]),
            Cli::Qwen if as_codecrew => command.args(["--approval-mode", "plan"]),
            Cli::Copilot if as_codecrew => command.args([
                "--available-tools=view,grep,glob",
                "--deny-tool=write,shell",
            ]),
            Cli::Copilot => command.args(["--available-tools=view"]),
            // Its own loop needs its reads approved; headless, only `yolo` does.
            Cli::Qwen => command.args(["--approval-mode", "yolo"]),
            Cli::Opencode if as_codecrew => command.env(
                "OPENCODE_PERMISSION",
                r#"{"edit":"deny","bash":"deny","external_directory":"deny","webfetch":"deny"}"#,
            ),
            _ => &mut command,
        };
        if cli == Cli::Codex {
            command.arg("-");
        }
        (command, Some(prompt.to_owned()))
    };
    // The prompt codecrew sends for the plain answer: the same task with its tool catalog.
    let codecrew_prompt = {
        let mut command = Command::new(codecrew);
        env.apply(&mut command);
        let output = command.args(["prompt", "BENCH-PLAIN say hi"]).output();
        output
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    };
    // `cargo bench --bench tool_loop -- gemini` measures only the CLIs named.
    let named: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    for cli in Cli::ALL {
        let name = cli.bin_name();
        if !named.is_empty() && !named.iter().any(|n| n == name) {
            continue;
        }
        println!("{name} (median of {PLAIN_RUNS} runs for a plain answer, {RUNS} for a loop)");
        let plain_direct = time_n(PLAIN_RUNS, "plain, directly", "Plain answer.", || {
            direct(cli, "BENCH-PLAIN say hi", false)
        });
        let plain_as_codecrew = time_n(
            PLAIN_RUNS,
            "plain, directly as codecrew",
            "Plain answer.",
            || direct(cli, &codecrew_prompt, true),
        );
        let plain = time_n(
            PLAIN_RUNS,
            "plain, through codecrew",
            "Plain answer.",
            || codecrew_run(&env, &format!("@{name} BENCH-PLAIN say hi")),
        );
        let plain_per_turn = time_n(
            PLAIN_RUNS,
            "plain, codecrew per turn",
            "Plain answer.",
            || codecrew_run(&per_turn_env, &format!("@{name} BENCH-PLAIN say hi")),
        );
        let over = |t: Duration| (t.as_secs_f64() - plain_direct.as_secs_f64()) * 1000.0;
        println!(
            "  plain answer, {name} directly{:>w$}{}",
            "",
            ms(plain_direct),
            w = 14 - name.len()
        );
        println!(
            "  the same, codecrew's prompt and flags {}   (+{:.1} ms)",
            ms(plain_as_codecrew),
            over(plain_as_codecrew)
        );
        println!(
            "  plain answer, codecrew, kept         {}   (+{:.1} ms)",
            ms(plain),
            over(plain)
        );
        println!(
            "  plain answer, codecrew, per turn     {}   (+{:.1} ms)",
            ms(plain_per_turn),
            over(plain_per_turn)
        );
        let kept = time("5 turns, kept", "Read all four.", || {
            codecrew_run(&env, &format!("@{name} BENCH-LOOP read the files"))
        });
        let per_turn = time("5 turns, per turn", "Read all four.", || {
            codecrew_run(&per_turn_env, &format!("@{name} BENCH-LOOP read the files"))
        });
        let native_prompt = format!("BENCH-NATIVE-{} read the files", name.to_uppercase());
        let native = if cli == Cli::Llm {
            Duration::ZERO
        } else {
            time("5 turns, native", "Read all four.", || {
                direct(cli, &native_prompt, false)
            })
        };
        let kept_unwalled = time("5 turns, kept, no wall", "Read all four.", || {
            codecrew_run(&unwalled_env, &format!("@{name} BENCH-LOOP read the files"))
        });
        let (native_judged, native_unwalled) = if cli == Cli::Llm {
            (Duration::ZERO, Duration::ZERO)
        } else {
            (
                time("native, through codecrew", "Read all four.", || {
                    codecrew_run(&env, &format!("@{name} {native_prompt}"))
                }),
                time(
                    "native, through codecrew, no wall",
                    "Read all four.",
                    || codecrew_run(&unwalled_env, &format!("@{name} {native_prompt}")),
                ),
            )
        };
        println!("  5-turn loop, codecrew, one process   {}", ms(kept));
        println!(
            "  the same, CODECREW_SANDBOX=off       {}",
            ms(kept_unwalled)
        );
        println!("  5-turn loop, codecrew, per turn      {}", ms(per_turn));
        println!(
            "  5-turn loop, {name}'s own tool{:>w$}{}",
            "",
            ms(native),
            w = 13 - name.len()
        );
        if native > Duration::ZERO {
            println!(
                "  the same through codecrew (judged)   {}",
                ms(native_judged)
            );
            println!(
                "  the same, CODECREW_SANDBOX=off       {}",
                ms(native_unwalled)
            );
            println!(
                "  kept / native: {:.2}x; per turn / native: {:.2}x",
                kept.as_secs_f64() / native.as_secs_f64(),
                per_turn.as_secs_f64() / native.as_secs_f64()
            );
        }
    }
}
