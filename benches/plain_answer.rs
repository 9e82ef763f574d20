//! One plain answer with a real CLI against the project's fake model server: the CLI
//! called directly vs through `codecrew query`, in paired rounds (each round runs every
//! variant once, in turn, so that the machine's drift touches all alike).
//!
//! For each run two times are taken: when the answer's text reached stdout, and when the
//! process ended (what a user waits for before the shell prompt returns). Their
//! difference is the shutdown: for a kept CLI, closing its input and waiting for it to
//! exit, then codecrew's exit sweep.
//!
//! `cargo bench --bench plain_answer [-- CLI...] [--rounds N]` (needs
//! `.ci/install-clis`; the CLIs with a kept mode: claude, codex, gemini, copilot, opencode,
//! qwen; default: claude, 20 rounds). Figures from this machine are in
//! docs/PERFORMANCE.md.

// The test suite's own support code (the fake model server, the CLIs' setup) is built
// here as it is in the tests, where a failed setup is a panic.
#![allow(dead_code, clippy::unwrap_used, clippy::panic)]

#[path = "../tests/integration/support/clis.rs"]
mod clis;
#[path = "../tests/integration/support/fake_model/mod.rs"]
mod fake_model;

use std::io::Read;
use std::process::Command;
use std::time::{Duration, Instant};

use clis::{Cli, CliEnv, Clis, TestHome};
use fake_model::{FakeModel, Reply, Rule, Script};

const ANSWER: &str = "Plain answer.";
const TASK: &str = "BENCH-PLAIN say hi";

/// A way of getting the answer, and one timed run of it.
type Variant<'a> = (&'a str, Box<dyn Fn() -> Option<Sample> + 'a>);

/// One run's two times.
#[derive(Clone, Copy)]
struct Sample {
    answered: Duration,
    ended: Duration,
}

/// Runs `command` (with `stdin` written and closed, or none), and times the answer's
/// arrival on its stdout and its end; None when it failed or never answered.
fn run(mut command: Command, stdin: Option<&str>) -> Option<Sample> {
    let start = Instant::now();
    let mut child = clis::spawn_fed(&mut command, stdin).ok()?;
    let mut stdout = child.stdout.take()?;
    let mut seen = Vec::new();
    let mut chunk = [0u8; 8192];
    let mut answered = None;
    loop {
        match stdout.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                seen.extend_from_slice(&chunk[..n]);
                if answered.is_none() && String::from_utf8_lossy(&seen).contains(ANSWER) {
                    answered = Some(start.elapsed());
                }
            }
        }
    }
    let status = child.wait().ok()?;
    let ended = start.elapsed();
    if !status.success() {
        return None;
    }
    answered.map(|answered| Sample { answered, ended })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn main() {
    let Ok(clis) = Clis::locate() else {
        println!("the real CLIs are not installed (.ci/install-clis); nothing measured");
        return;
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|at| args.get(at + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(20usize);
    let named: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with('-') && a.parse::<usize>().is_err())
        .map(String::as_str)
        .collect();
    let codecrew = env!("CARGO_BIN_EXE_codecrew");
    let home = TestHome::new("bench-plain-answer");
    let server =
        FakeModel::start(Script::new().rule(Rule::on_prompt("BENCH-PLAIN", Reply::text(ANSWER))));
    let env = clis
        .env_for_all(&home, &server.url())
        .with("CODECREW_CONFIG", "");
    let per_turn_env = env.per_turn(&home);
    let codecrew_prompt = {
        let mut command = Command::new(codecrew);
        env.apply(&mut command);
        command
            .args(["prompt", TASK])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    };
    // `--raw` prints the final answer once the turn has ended; without it the text
    // streams as the CLI writes it.
    let through = |env: &CliEnv, name: &str, raw: bool| {
        let mut command = Command::new(codecrew);
        env.apply(&mut command);
        command.args(["query", "--quiet", &format!("@{name} {TASK}")]);
        if raw {
            command.arg("--raw");
        }
        command
    };
    let direct = |cli: Cli| {
        let mut command = clis.command(cli, &env);
        match cli {
            // Each in its own headless mode, the prompt on stdin (as `tool_loop` runs them).
            Cli::Codex => command.args(["exec", "--json", "--skip-git-repo-check", "-"]),
            Cli::Gemini => command.args(["--output-format", "stream-json"]),
            Cli::Qwen => command.args(["--output-format", "stream-json", "--safe-mode"]),
            Cli::Copilot => command.args(["--output-format", "json", "--no-auto-update"]),
            Cli::Opencode => command.args(["run", "--format", "json", "--title", "bench"]),
            Cli::Claude | Cli::Llm => {
                command.args(["-p", "--output-format", "stream-json", "--verbose"])
            }
        };
        command
    };
    // llm has no kept mode to compare.
    for cli in Cli::ALL.into_iter().filter(|cli| *cli != Cli::Llm) {
        let name = cli.bin_name();
        let wanted = if named.is_empty() {
            name == "claude"
        } else {
            named.contains(&name)
        };
        if !wanted {
            continue;
        }
        let variants: [Variant; 5] = [
            (
                "the CLI directly (the task on stdin)",
                Box::new(|| run(direct(cli), Some(TASK))),
            ),
            (
                "the CLI directly, codecrew's prompt",
                Box::new(|| run(direct(cli), Some(&codecrew_prompt))),
            ),
            (
                "codecrew query, kept process",
                Box::new(|| run(through(&env, name, false), None)),
            ),
            (
                "the same, --raw",
                Box::new(|| run(through(&env, name, true), None)),
            ),
            (
                "codecrew query, keep_alive = false",
                Box::new(|| run(through(&per_turn_env, name, false), None)),
            ),
        ];
        let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); variants.len()];
        // Paired: a round is one run of each variant; a failed run drops its round.
        for _ in 0..rounds {
            let round: Vec<Option<Sample>> = variants.iter().map(|(_, run)| run()).collect();
            if round.iter().all(Option::is_some) {
                for (kept, sample) in samples.iter_mut().zip(round.into_iter().flatten()) {
                    kept.push(sample);
                }
            }
        }
        let complete = samples[0].len();
        println!("{name}: {complete} complete rounds of {rounds}, medians");
        println!(
            "  {:<38} {:>10} {:>10} {:>12}",
            "", "answered", "ended", "ended − direct (paired)"
        );
        for (index, (label, _)) in variants.iter().enumerate() {
            let answered = median(samples[index].iter().map(|s| ms(s.answered)).collect());
            let ended = median(samples[index].iter().map(|s| ms(s.ended)).collect());
            let paired = median(
                samples[index]
                    .iter()
                    .zip(&samples[0])
                    .map(|(s, d)| ms(s.ended) - ms(d.ended))
                    .collect(),
            );
            println!("  {label:<38} {answered:>7.1} ms {ended:>7.1} ms {paired:>+9.1} ms");
        }
    }
}
