//! codecrew's own cost in a long tool loop: one `codecrew query` whose model makes 100
//! `codecrew:read_file` calls, two a turn for 50 turns (`--max-turns` is at most 100),
//! before it answers, in front of a fake kept
//! `claude` that answers each stream-json message at once. Everything but the CLI's
//! (instant) replies is codecrew's: the turns written, the stream decoded and
//! intercepted, each call judged by the policy and run, its result recorded in the run
//! store and written back.
//!
//! `cargo bench --bench hundred_calls` prints the median whole-process time of RUNS
//! runs. With `CODECREW_BENCH_BEFORE=/path/to/another/codecrew` the two binaries run in
//! turn, pair by pair, and the ratio is printed too (how the figures before and after a
//! change in docs/PERFORMANCE.md are taken).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 15;
/// Turns with calls, two calls each.
const TURNS: u32 = 50;
const CALLS: u32 = 2 * TURNS;

/// A kept Claude: each stream-json message in gets a turn out at once, two calls to
/// `codecrew:read_file` for the first TURNS turns, then the answer.
fn kept_cli() -> String {
    let session = "0b7e6a52-1f3c-4d2e-9a41-5c0de0000002";
    let call = r#"```json\n{\"type\":\"tool_use\",\"name\":\"codecrew:read_file\",\"input\":{\"path\":\"notes.txt\"}}\n```\n"#;
    format!(
        r#"#!/bin/sh
n=0
printf '%s\n' '{{"type":"system","subtype":"init","session_id":"{session}","model":"fake"}}'
while read -r _; do
  n=$((n + 1))
  if [ "$n" -le {TURNS} ]; then
    printf '%s\n' '{{"type":"assistant","message":{{"content":[{{"type":"text","text":"Reading.\n{call}{call}"}}]}},"session_id":"{session}"}}'
  else
    printf '%s\n' '{{"type":"assistant","message":{{"content":[{{"type":"text","text":"Read it all."}}]}},"session_id":"{session}"}}'
  fi
  printf '%s\n' '{{"type":"result","subtype":"success","is_error":false,"result":"","session_id":"{session}"}}'
done
"#
    )
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

struct Bench {
    dir: tempfile::TempDir,
    path: std::ffi::OsString,
}

impl Bench {
    fn new() -> Option<Bench> {
        let dir = tempfile::tempdir().ok()?;
        for folder in ["bin", "home", "ws"] {
            std::fs::create_dir_all(dir.path().join(folder)).ok()?;
        }
        let cli = dir.path().join("bin/claude");
        std::fs::write(&cli, kept_cli()).ok()?;
        std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755)).ok()?;
        std::fs::write(
            dir.path().join("ws/notes.txt"),
            "a line of notes\n".repeat(40),
        )
        .ok()?;
        let inherited = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![dir.path().join("bin")];
        dirs.extend(std::env::split_paths(&inherited));
        let path = std::env::join_paths(dirs).ok()?;
        Some(Bench { dir, path })
    }

    /// One whole `codecrew query`'s time, when it answered.
    fn run(&self, codecrew: &Path) -> Option<Duration> {
        let started = Instant::now();
        let output = Command::new(codecrew)
            .args(["query", "--max-turns", "100", "--workdir"])
            .arg(self.dir.path().join("ws"))
            .arg("@claude read notes.txt again and again")
            .env("PATH", &self.path)
            .env("HOME", self.dir.path().join("home"))
            .env("XDG_STATE_HOME", self.dir.path().join("home/.state"))
            .env("CODECREW_CONFIG", "")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()?;
        let elapsed = started.elapsed();
        let answered = String::from_utf8_lossy(&output.stdout).contains("Read it all.");
        (output.status.success() && answered).then_some(elapsed)
    }
}

fn main() {
    let after = PathBuf::from(env!("CARGO_BIN_EXE_codecrew"));
    let before = std::env::var_os("CODECREW_BENCH_BEFORE").map(PathBuf::from);
    let Some(bench) = Bench::new() else {
        println!("no temp dir; nothing measured");
        return;
    };
    if bench.run(&after).is_none() {
        println!("the loop did not answer; nothing measured");
        return;
    }
    let (mut afters, mut befores, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let Some(time) = bench.run(&after) else {
            continue;
        };
        afters.push(time);
        if let Some(before) = &before
            && let Some(then) = bench.run(before)
        {
            befores.push(then);
            ratios.push(time.as_secs_f64() / then.as_secs_f64());
        }
    }
    let ms = |time: Duration| time.as_secs_f64() * 1e3;
    println!(
        "codecrew query, {CALLS} read_file calls in {TURNS} turns, then the answer (median of {} runs)",
        afters.len()
    );
    println!("this build        {:>9.1} ms", ms(median(afters.clone())));
    println!(
        "per call          {:>9.2} ms",
        ms(median(afters)) / f64::from(CALLS)
    );
    if !befores.is_empty() {
        ratios.sort_by(f64::total_cmp);
        println!("before            {:>9.1} ms", ms(median(befores)));
        println!(
            "this / before     {:>9.3} (pair by pair; {:.3} to {:.3})",
            ratios[ratios.len() / 2],
            ratios[0],
            ratios[ratios.len() - 1]
        );
    }
}
