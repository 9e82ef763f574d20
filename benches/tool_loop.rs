//! The tool loop with the real CLIs against the project's fake model server (scripted
//! replies, no added latency), side by side in one run:
//! 1. a plain one-turn answer: the CLI called directly vs `codecrew query`;
//! 2. a 5-turn loop through codecrew (four `codecrew:read_file` calls, one per turn, then
//!    the answer): one kept CLI process (`keep_alive`, the default where the CLI has a
//!    long-lived mode) vs a new process per turn (`keep_alive = false`);
//! 3. the CLI's own native 5-turn loop (its own read tool four times), called directly.
//!
//! `cargo bench --bench tool_loop` (needs `.ci/install-clis`); the median of RUNS runs
//! each. Figures from this machine are in docs/PERFORMANCE.md.

// The test suite's own support code (the fake model server, the CLIs' setup) is built
// here as it is in the tests, where a failed setup is a panic.
#![allow(dead_code, clippy::unwrap_used, clippy::panic)]

#[path = "../tests/integration/support/clis.rs"]
mod clis;
#[path = "../tests/integration/support/fake_model/mod.rs"]
mod fake_model;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use clis::{Cli, CliEnv, Clis, TestHome};
use fake_model::{FakeModel, Reply, Rule, Script};

const RUNS: usize = 5;
const FOLLOW_UP: &str = "codecrew ran the tool calls";

fn envelope(path: &str) -> String {
    let call = json!({"type": "tool_use", "name": "codecrew:read_file", "input": {"path": path}});
    format!("```json\n{call}\n```\n")
}

/// Plain answers, codecrew's 5-turn loop and the native one, told apart by their prompts.
fn script(workspace: &std::path::Path) -> Script {
    let mut script = Script::new()
        .rule(Rule::on_prompt("BENCH-PLAIN", Reply::text("Plain answer.")))
        // codecrew's loop: the follow-up carries the file read, which names the next.
        .rule(Rule::on_prompt(FOLLOW_UP, Reply::text("Read all four.")).and_prompt("LOOP-4"));
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
    // The native loop: the CLI's own Read tool, its results as tool results.
    script = script.rule(Rule::on_tool_result(
        "LOOP-4",
        Reply::text("Read all four."),
    ));
    for n in 1..4 {
        let next = workspace.join(format!("f{}.txt", n + 1));
        script = script.rule(Rule::on_tool_result(
            format!("LOOP-{n}"),
            Reply::tool("Read", json!({"file_path": next})),
        ));
    }
    script.rule(Rule::on_prompt(
        "BENCH-NATIVE",
        Reply::tool("Read", json!({"file_path": workspace.join("f1.txt")})),
    ))
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// The median wall time of `command()` over RUNS runs that succeed with `expect` on stdout.
fn time(
    label: &str,
    expect: &str,
    mut command: impl FnMut() -> (Command, Option<String>),
) -> Duration {
    let mut samples = Vec::new();
    for _ in 0..RUNS {
        let (mut command, stdin) = command();
        command.stdout(Stdio::piped()).stderr(Stdio::null());
        command.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        let start = Instant::now();
        let Ok(mut child) = command.spawn() else {
            println!("{label}: cannot start");
            return Duration::ZERO;
        };
        if let (Some(text), Some(mut input)) = (stdin, child.stdin.take()) {
            let _ = input.write_all(text.as_bytes());
        }
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
    }
    let server = FakeModel::start(script(&workspace));
    let env = clis
        .env_for_all(&home, &server.url())
        .with("CODECREW_CONFIG", "");
    let per_turn_config = home.root().join("per-turn.toml");
    let _ = std::fs::write(
        &per_turn_config,
        "[agents.claude]\nprovider = \"claude\"\nkeep_alive = false\n",
    );
    let codecrew_run = |env: &CliEnv, task: &str| {
        let mut command = Command::new(codecrew);
        env.apply(&mut command);
        command.args(["query", "--quiet", "--raw", task]);
        (command, None)
    };
    let direct = |cli: Cli, prompt: &str| {
        let mut command = clis.command(cli, &env);
        command.args(["-p", "--output-format", "stream-json", "--verbose"]);
        (command, Some(prompt.to_owned()))
    };

    println!("claude (median of {RUNS} runs)");
    let plain_direct = time("plain, claude directly", "Plain answer.", || {
        direct(Cli::Claude, "BENCH-PLAIN say hi")
    });
    let plain = time("plain, through codecrew", "Plain answer.", || {
        codecrew_run(&env, "@claude BENCH-PLAIN say hi")
    });
    let per_turn_env = env.clone().with("CODECREW_CONFIG", &per_turn_config);
    let plain_per_turn = time("plain, through codecrew, per turn", "Plain answer.", || {
        codecrew_run(&per_turn_env, "@claude BENCH-PLAIN say hi")
    });
    println!(
        "  plain answer, claude directly        {}",
        ms(plain_direct)
    );
    println!(
        "  plain answer, through codecrew       {}   (+{:.1} ms)",
        ms(plain),
        (plain.as_secs_f64() - plain_direct.as_secs_f64()) * 1000.0
    );
    println!(
        "  plain answer, codecrew, per turn     {}   (+{:.1} ms)",
        ms(plain_per_turn),
        (plain_per_turn.as_secs_f64() - plain_direct.as_secs_f64()) * 1000.0
    );
    let kept = time("5 turns, kept", "Read all four.", || {
        codecrew_run(&env, "@claude BENCH-LOOP read the files")
    });
    let per_turn = time("5 turns, per turn", "Read all four.", || {
        codecrew_run(&per_turn_env, "@claude BENCH-LOOP read the files")
    });
    let native = time("5 turns, native", "Read all four.", || {
        let (mut command, prompt) = direct(Cli::Claude, "BENCH-NATIVE read the files");
        command.args(["--allowedTools", "Read"]);
        (command, prompt)
    });
    println!("  5-turn loop, codecrew, one process   {}", ms(kept));
    println!("  5-turn loop, codecrew, per turn      {}", ms(per_turn));
    println!("  5-turn loop, claude's own Read tool  {}", ms(native));
    if native > Duration::ZERO {
        println!(
            "  codecrew kept / native: {:.2}x; per turn / native: {:.2}x",
            kept.as_secs_f64() / native.as_secs_f64(),
            per_turn.as_secs_f64() / native.as_secs_f64()
        );
    }
}
