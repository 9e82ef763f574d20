//! What `codecrew acp` adds between an editor and a CLI.
//!
//! `cargo bench --bench acp` puts a fake `claude` on PATH (a shell script that answers
//! each stream-json message at once, as a kept Claude does) and measures, as medians:
//! - the fake CLI driven directly: started, one message written, its answer read;
//! - through `codecrew acp` (an editor's session, JSON-RPC on stdin/stdout): the time
//!   from a prompt to its first `agent_message_chunk` and to its answer, for the first
//!   prompt of a session (which starts the CLI) and for follow-ups (the CLI kept).
//!
//! `CODECREW_BENCH_BIN=/path/to/codecrew` times another build instead (the figures
//! before a change). Figures from this machine are in docs/PERFORMANCE.md.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const SESSIONS: usize = 15;
const FOLLOW_UPS: usize = 10;
const DIRECT_RUNS: usize = 40;

/// Answers every stream-json message on its input at once, in one session.
const KEPT_CLI: &str = r#"#!/bin/sh
while read -r _; do
printf '%s\n' '{"type":"system","subtype":"init","session_id":"0b7e6a52-1f3c-4d2e-9a41-5c0de0000001","model":"fake"}'
printf '%s\n' '{"type":"assistant","message":{"content":[{"type":"text","text":"Hello from the fake CLI."}]},"session_id":"0b7e6a52-1f3c-4d2e-9a41-5c0de0000001"}'
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"Hello from the fake CLI.","session_id":"0b7e6a52-1f3c-4d2e-9a41-5c0de0000001"}'
done
"#;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// The fake CLI started, one message written, read up to its result.
fn direct(cli: &Path) -> Option<Duration> {
    let start = Instant::now();
    let mut child = Command::new(cli)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    writeln!(stdin, "{{\"type\":\"user\"}}").ok()?;
    let stdout = child.stdout.take()?;
    for line in BufReader::new(stdout).lines() {
        if line.ok()?.contains("\"type\":\"result\"") {
            break;
        }
    }
    let took = start.elapsed();
    drop(stdin);
    let _ = child.wait();
    Some(took)
}

/// One editor: codecrew acp and its lines.
struct Editor {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: mpsc::Receiver<Value>,
    next_id: u64,
}

impl Editor {
    fn start(codecrew: &str, home: &Path, path: &std::ffi::OsStr) -> Option<Editor> {
        let mut child = Command::new(codecrew)
            .arg("acp")
            .env("PATH", path)
            .env("HOME", home)
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("CODECREW_CONFIG", "")
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let stdin = child.stdin.take()?;
        let stdout = child.stdout.take()?;
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(value) = serde_json::from_str(&line)
                    && sender.send(value).is_err()
                {
                    break;
                }
            }
        });
        Some(Editor {
            child,
            stdin,
            lines,
            next_id: 1,
        })
    }

    fn send(&mut self, method: &str, params: Value) -> Option<u64> {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{message}").ok()?;
        self.stdin.flush().ok()?;
        Some(id)
    }

    /// The response to request `id` (and, first, when the first chunk came).
    fn answer(&mut self, id: u64, sent: Instant) -> Option<(Option<Duration>, Duration, Value)> {
        let mut first_chunk = None;
        loop {
            let message = self.lines.recv_timeout(Duration::from_secs(30)).ok()?;
            let update = &message["params"]["update"]["sessionUpdate"];
            if first_chunk.is_none() && update == "agent_message_chunk" {
                first_chunk = Some(sent.elapsed());
            }
            if message["id"] == id {
                return Some((first_chunk, sent.elapsed(), message));
            }
        }
    }

    fn request(
        &mut self,
        method: &str,
        params: Value,
    ) -> Option<(Option<Duration>, Duration, Value)> {
        let sent = Instant::now();
        let id = self.send(method, params)?;
        self.answer(id, sent)
    }
}

fn main() {
    // `CODECREW_BENCH_BIN` times another build of codecrew (the figures before a change).
    let built = std::env::var("CODECREW_BENCH_BIN").ok();
    let codecrew = built.as_deref().unwrap_or(env!("CARGO_BIN_EXE_codecrew"));
    let Ok(dir) = tempfile::tempdir() else {
        println!("no temp dir; nothing measured");
        return;
    };
    let bin = dir.path().join("bin");
    let home = dir.path().join("home");
    let workspace = dir.path().join("ws");
    for folder in [&bin, &home, &workspace] {
        let _ = std::fs::create_dir_all(folder);
    }
    let cli = bin.join("claude");
    let _ = std::fs::write(&cli, KEPT_CLI);
    let _ = std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755));
    let inherited = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![bin.clone()];
    dirs.extend(std::env::split_paths(&inherited));
    let path = std::env::join_paths(dirs).unwrap_or_default();

    let direct_runs: Vec<Duration> = (0..DIRECT_RUNS).filter_map(|_| direct(&cli)).collect();

    let (mut first_chunks, mut first_answers) = (Vec::new(), Vec::new());
    let (mut follow_chunks, mut follow_answers) = (Vec::new(), Vec::new());
    for _ in 0..SESSIONS {
        let Some(mut editor) = Editor::start(codecrew, &home, &path) else {
            println!("codecrew acp did not start; nothing measured");
            return;
        };
        let init = editor.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        );
        let made = editor.request("session/new", json!({"cwd": workspace, "mcpServers": []}));
        let (Some(_), Some((_, _, made))) = (init, made) else {
            println!("no session; nothing measured");
            return;
        };
        let session = made["result"]["sessionId"].clone();
        for n in 0..=FOLLOW_UPS {
            let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": format!("@claude hi {n}")}]});
            let Some((chunk, answer, _)) = editor.request("session/prompt", prompt) else {
                println!("a prompt was not answered; nothing measured");
                return;
            };
            let (chunks, answers) = if n == 0 {
                (&mut first_chunks, &mut first_answers)
            } else {
                (&mut follow_chunks, &mut follow_answers)
            };
            if let Some(chunk) = chunk {
                chunks.push(chunk);
            }
            answers.push(answer);
        }
        drop(editor.stdin);
        let _ = editor.child.wait();
    }
    println!(
        "codecrew acp against the fake kept CLI (medians; {SESSIONS} sessions of 1 + {FOLLOW_UPS} prompts)\n"
    );
    println!(
        "the CLI directly: start, one message, its answer  {:>7.2} ms",
        ms(median(direct_runs))
    );
    println!(
        "first prompt: to its first chunk                  {:>7.2} ms",
        ms(median(first_chunks))
    );
    println!(
        "first prompt: to its answer                       {:>7.2} ms",
        ms(median(first_answers))
    );
    println!(
        "follow-up: to its first chunk                     {:>7.2} ms",
        ms(median(follow_chunks))
    );
    println!(
        "follow-up: to its answer                          {:>7.2} ms",
        ms(median(follow_answers))
    );
}
