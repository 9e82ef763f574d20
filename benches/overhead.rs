//! What codecrew adds to a CLI run.
//!
//! `cargo bench --bench overhead` puts a fake `claude` on PATH (a shell script that prints
//! a plain Claude stream-json answer at once) and measures:
//! - the wall time of the fake CLI alone vs `codecrew query "@claude hi"` running it
//!   (median of many runs): the difference is codecrew's added time;
//! - the delay between the CLI printing a piece of text and codecrew printing it: the fake
//!   CLI writes its clock into the text, codecrew's reader stamps its arrival;
//! - the same call as a user meets it (what `../shared/bench/bench.sh` measures): a home
//!   of its own whose state folder (the journal, the run store, the kept read plan)
//!   persists and grows across the runs, the workspace beside it, the CLI in a folder
//!   outside the workspace, run with a model (`@claude:haiku hello`), and a CLI that reads
//!   its stream-json input a line at a time with the shell's `read`, as a `sh` script does
//!   (one byte a system call: codecrew's 9 KB first message costs such a CLI about 2 ms
//!   that a CLI reading in blocks does not pay).
//!
//! Figures from this machine are in docs/PERFORMANCE.md.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const RUNS: usize = 40;

/// Answers once its first line of input is in (the prompt of a run per turn, or a kept
/// process's first stream-json message), then reads on to the end of its input, as
/// Claude does in either mode.
const FAST_CLI: &str = r#"#!/bin/sh
read -r _
printf '%s\n' '{"type":"system","subtype":"init","session_id":"0b7e6a52-1f3c-4d2e-9a41-5c0de0000001","model":"fake"}'
printf '%s\n' '{"type":"assistant","message":{"content":[{"type":"text","text":"Hello from the fake CLI."}]},"session_id":"0b7e6a52-1f3c-4d2e-9a41-5c0de0000001"}'
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"Hello from the fake CLI.","session_id":"0b7e6a52-1f3c-4d2e-9a41-5c0de0000001"}'
cat > /dev/null
"#;

/// Reads each stream-json message whole with the shell's `read` (one byte a system call,
/// as `dash` reads a pipe), acknowledges a control request, answers a user message: the
/// shape of the shared bench's fake `claude`, and of any CLI written in `sh`.
const LINE_READING_CLI: &str = r#"#!/bin/sh
case $1 in
  --version|-v) echo "2.1.329 (Claude Code)"; exit 0 ;;
  mcp) exit 0 ;;
esac
while IFS= read -r line; do
  case $line in
    *'"type":"control_request"'*)
      printf '%s\n' '{"type":"control_response","response":{"subtype":"success","request_id":"codecrew-initialize","response":{}}}'
      continue ;;
  esac
  printf '%s\n' '{"type":"system","subtype":"init","session_id":"0b7e6a52-1f3c-4d2e-9a41-5c0de0000001","model":"claude-haiku"}'
  printf '%s\n' '{"type":"assistant","message":{"content":[{"type":"text","text":"Hello from the fake CLI."}]},"session_id":"0b7e6a52-1f3c-4d2e-9a41-5c0de0000001"}'
  printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"Hello from the fake CLI.","session_id":"0b7e6a52-1f3c-4d2e-9a41-5c0de0000001"}'
done
"#;

/// Prints text carrying its own clock (ns since the epoch), then waits before finishing.
const STAMPING_CLI: &str = r#"#!/bin/bash
read -r _
printf '%s\n' '{"type":"system","subtype":"init","session_id":"0b7e6a52-1f3c-4d2e-9a41-5c0de0000001","model":"fake"}'
for i in 1 2 3 4 5 6 7 8 9 10; do
  printf '{"type":"assistant","message":{"content":[{"type":"text","text":"STAMP %s\\n"}]},"session_id":"0b7e6a52-1f3c-4d2e-9a41-5c0de0000001"}\n' "$(date +%s%N)"
  sleep 0.05
done
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"0b7e6a52-1f3c-4d2e-9a41-5c0de0000001"}'
cat > /dev/null
"#;

fn install(dir: &Path, script: &str) {
    let path = dir.join("claude");
    std::fs::write(&path, script).unwrap_or_default();
    let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755));
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn time_runs(command: impl FnMut() -> Command) -> Duration {
    time_runs_fed(None, command)
}

/// [`time_runs`] with the file `input` on each run's stdin (none: `/dev/null`).
fn time_runs_fed(input: Option<&Path>, mut command: impl FnMut() -> Command) -> Duration {
    let mut samples = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let stdin = input
            .and_then(|path| std::fs::File::open(path).ok())
            .map_or_else(Stdio::null, Stdio::from);
        let start = Instant::now();
        let status = command()
            .stdin(stdin)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if status.is_ok() {
            samples.push(start.elapsed());
        }
    }
    median(samples)
}

fn path_with(dir: &Path) -> std::ffi::OsString {
    let inherited = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![dir.to_path_buf()];
    dirs.extend(std::env::split_paths(&inherited));
    std::env::join_paths(dirs).unwrap_or_default()
}

fn main() {
    let codecrew = env!("CARGO_BIN_EXE_codecrew");
    let Ok(dir) = tempfile::tempdir() else {
        println!("no temp dir; nothing measured");
        return;
    };
    let path = path_with(dir.path());

    install(dir.path(), FAST_CLI);
    let cli = dir.path().join("claude");
    let direct = time_runs(|| Command::new(&cli));
    let per_turn_config = dir.path().join("per-turn.toml");
    let _ = std::fs::write(
        &per_turn_config,
        "[agents.claude]\nprovider = \"claude\"\nkeep_alive = false\n",
    );
    let codecrew_run = |config: &Path| {
        let mut command = Command::new(codecrew);
        command
            .args(["query", "--workdir"])
            .arg(dir.path())
            .arg("@claude hi")
            .env("PATH", &path)
            .env("CODECREW_CONFIG", config);
        command
    };
    let through = time_runs(|| codecrew_run(Path::new("")));
    let per_turn = time_runs(|| codecrew_run(&per_turn_config));
    println!("codecrew overhead over calling the CLI directly (median of {RUNS} runs)\n");
    println!(
        "fake CLI alone            {:>8.2} ms",
        direct.as_secs_f64() * 1e3
    );
    println!(
        "codecrew query → fake CLI {:>8.2} ms",
        through.as_secs_f64() * 1e3
    );
    println!(
        "added by codecrew         {:>8.2} ms",
        (through.as_secs_f64() - direct.as_secs_f64()) * 1e3
    );
    println!(
        "the same, keep_alive = false {:>5.2} ms (added {:.2} ms)",
        per_turn.as_secs_f64() * 1e3,
        (per_turn.as_secs_f64() - direct.as_secs_f64()) * 1e3
    );

    as_a_user_meets_it();

    install(dir.path(), STAMPING_CLI);
    let mut delays = Vec::new();
    for _ in 0..5 {
        let child = Command::new(codecrew)
            .args(["query", "--workdir"])
            .arg(dir.path())
            .arg("@claude hi")
            .env("PATH", &path)
            .env("CODECREW_CONFIG", "")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let Ok(mut child) = child else { continue };
        let Some(stdout) = child.stdout.take() else {
            continue;
        };
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            if let Some(stamp) = line
                .strip_prefix("STAMP ")
                .and_then(|s| s.trim().parse::<u128>().ok())
            {
                delays.push(Duration::from_nanos(
                    u64::try_from(now.as_nanos().saturating_sub(stamp)).unwrap_or(0),
                ));
            }
        }
        let _ = child.wait();
    }
    // The stamp is taken by `date` just before the CLI's printf: the delay includes the
    // printf and a pipe hop inside the fake CLI, so it bounds codecrew's share from above.
    let count = delays.len();
    println!("\ntext delay, CLI print → codecrew print ({count} samples)\n");
    println!(
        "median                    {:>8.2} ms",
        median(delays.clone()).as_secs_f64() * 1e3
    );
    println!(
        "max                       {:>8.2} ms",
        delays
            .iter()
            .max()
            .copied()
            .unwrap_or_default()
            .as_secs_f64()
            * 1e3
    );
}

/// The plain answer as `../shared/bench/bench.sh` measures it (see the module's docs):
/// the floor is the same CLI answering one short message on its own.
fn as_a_user_meets_it() {
    let codecrew = env!("CARGO_BIN_EXE_codecrew");
    let Ok(root) = tempfile::tempdir() else {
        return;
    };
    let (home, workspace, bin) = (
        root.path().join("home"),
        root.path().join("ws"),
        root.path().join("bin"),
    );
    for dir in [&home, &workspace, &bin] {
        let _ = std::fs::create_dir_all(dir);
    }
    install(&bin, LINE_READING_CLI);
    let message = root.path().join("hello.jsonl");
    let _ = std::fs::write(
        &message,
        "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hello\"}}\n",
    );
    let floor = time_runs_fed(Some(&message), || Command::new(bin.join("claude")));
    let path = path_with(&bin);
    let through = time_runs(|| {
        let mut command = Command::new(codecrew);
        command
            .args(["query", "@claude:haiku hello"])
            .current_dir(&workspace)
            .env("PATH", &path)
            .env("HOME", &home)
            .env_remove("CODECREW_CONFIG");
        // The state and cache folders are the fresh home's, whatever the caller's are.
        for xdg in [
            "XDG_CONFIG_HOME",
            "XDG_STATE_HOME",
            "XDG_CACHE_HOME",
            "XDG_DATA_HOME",
        ] {
            command.env_remove(xdg);
        }
        command
    });
    println!("\nas a user meets it: a home of its own, kept across the runs (median of {RUNS})\n");
    println!(
        "fake CLI alone, one message {:>6.2} ms",
        floor.as_secs_f64() * 1e3
    );
    println!(
        "codecrew query → fake CLI {:>8.2} ms",
        through.as_secs_f64() * 1e3
    );
    println!(
        "added by codecrew         {:>8.2} ms",
        (through.as_secs_f64() - floor.as_secs_f64()) * 1e3
    );
}
