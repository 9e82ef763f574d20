//! `codecrew mcp` over HTTP: what a tool call costs, and how it holds with several clients.
//!
//! `cargo bench --bench mcp_http` starts `codecrew mcp --http 127.0.0.1:0` on a workspace
//! of 200 text files and measures, with rmcp's client (the official Rust SDK):
//! - `read_file` and `grep` calls per second, and each call's p50/p99 latency, with 1, 8
//!   and 32 clients calling at once (each with its own session);
//! - the same `read_file` over stdio (one client), for comparison;
//! - a `query_agent` call of a `command` agent that answers at once, over HTTP and over
//!   stdio: the cost of starting an agent run, beside the transport's.
//!
//! `-- --calls N` sets the calls per round (default 3200). Figures from this machine are in
//! docs/PERFORMANCE.md.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

type Client = RunningService<RoleClient, ()>;

const TOKEN: &str = "bench-token-0123456789abcdef";
const CODECREW: &str = env!("CARGO_BIN_EXE_codecrew");

fn main() {
    let calls = std::env::args()
        .skip_while(|arg| arg != "--calls")
        .nth(1)
        .and_then(|value| value.parse().ok())
        .unwrap_or(3200usize);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            println!("no runtime ({error}); nothing measured");
            return;
        }
    };
    if let Err(error) = runtime.block_on(run(calls)) {
        println!("the bench failed: {error}");
    }
}

async fn run(calls: usize) -> Result<(), String> {
    let workspace = tempfile::tempdir().map_err(|e| e.to_string())?;
    fill(workspace.path())?;
    let config_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let config = config_dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[agents.quick]\nprovider = \"command\"\ncommand = { argv = [\"sh\", \"-c\", \"cat >/dev/null; echo ready\"] }\n",
    )
    .map_err(|e| e.to_string())?;

    let (mut server, url) = start_http(workspace.path(), &config).await?;
    println!("codecrew mcp --http, {calls} calls per round (release build)\n");
    println!(
        "{:<10} {:>8} {:>10} {:>10} {:>10}",
        "tool", "clients", "calls/s", "p50 (ms)", "p99 (ms)"
    );
    for (tool, input) in [
        (
            "read_file",
            json!({"path": "src/file-17.txt", "offset": 10, "limit": 20}),
        ),
        ("grep", json!({"pattern": "needle-4[0-9]", "path": "src"})),
    ] {
        for clients in [1usize, 8, 32] {
            let round = round(&url, clients, calls, tool, &input).await?;
            println!(
                "{tool:<10} {clients:>8} {:>10.0} {:>10.2} {:>10.2}",
                round.per_second, round.p50_ms, round.p99_ms
            );
        }
    }

    // One client, the same read_file, over stdio.
    let stdio = stdio_client(workspace.path(), &config).await?;
    let input = json!({"path": "src/file-17.txt", "offset": 10, "limit": 20});
    let mut latencies = Vec::new();
    let started = Instant::now();
    for _ in 0..calls.min(2000) {
        let at = Instant::now();
        call(&stdio, "read_file", &input).await?;
        latencies.push(at.elapsed());
    }
    let per_second = latencies.len() as f64 / started.elapsed().as_secs_f64();
    let (p50, p99) = percentiles(&mut latencies);
    println!(
        "{:<10} {:>8} {per_second:>10.0} {p50:>10.2} {p99:>10.2}   (stdio)",
        "read_file", 1
    );

    // query_agent: an agent run that answers at once, over both transports.
    let http = http_client(&url).await?;
    let agent = json!({"task": "@quick hi"});
    let over_http = median_of(&http, "query_agent", &agent, 20).await?;
    let over_stdio = median_of(&stdio, "query_agent", &agent, 20).await?;
    println!(
        "\nquery_agent (a `command` agent answering at once), median of 20:\n  \
         http  {over_http:.1} ms\n  stdio {over_stdio:.1} ms"
    );
    let _ = http.cancel().await;
    let _ = stdio.cancel().await;
    if let Some(pid) = server.id() {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    let _ = server.wait().await;
    Ok(())
}

/// 200 files of 200 lines under `src/`, some lines holding a needle.
fn fill(dir: &Path) -> Result<(), String> {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).map_err(|e| e.to_string())?;
    for file in 0..200 {
        let text: String = (0..200)
            .map(|line| {
                if line % 50 == 7 {
                    format!("let value = {line}; // needle-{}\n", (file + line) % 100)
                } else {
                    format!("line {line} of file {file}: some ordinary source text here\n")
                }
            })
            .collect();
        std::fs::write(src.join(format!("file-{file}.txt")), text).map_err(|e| e.to_string())?;
    }
    Ok(())
}

async fn start_http(
    workspace: &Path,
    config: &Path,
) -> Result<(tokio::process::Child, String), String> {
    let mut child = tokio::process::Command::new(CODECREW)
        .arg("--workdir")
        .arg(workspace)
        .args(["mcp", "--http", "127.0.0.1:0", "--max-sessions", "64"])
        .env("CODECREW_CONFIG", config)
        .env("CODECREW_MCP_TOKEN", TOKEN)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| e.to_string())?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(at) = line.find("at http://") {
            let rest = &line[at + "at ".len()..];
            let url = rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_owned();
            // Keep reading stderr so the server never blocks on it.
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return Ok((child, url));
        }
    }
    Err("the server did not start".to_owned())
}

async fn http_client(url: &str) -> Result<Client, String> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(TOKEN);
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .map_err(|e| e.to_string())
}

async fn stdio_client(workspace: &Path, config: &Path) -> Result<Client, String> {
    let mut command = tokio::process::Command::new(CODECREW);
    command
        .arg("--workdir")
        .arg(workspace)
        .arg("mcp")
        .env("CODECREW_CONFIG", config)
        .env_remove("RUST_LOG");
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    ().serve(transport).await.map_err(|e| e.to_string())
}

async fn call(client: &Client, tool: &str, input: &Value) -> Result<(), String> {
    let Value::Object(arguments) = input.clone() else {
        return Err("input must be an object".to_owned());
    };
    let arguments: JsonObject = arguments;
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .map_err(|e| e.to_string())?;
    if result.is_error == Some(true) {
        return Err(format!("{tool} failed: {:?}", result.content));
    }
    Ok(())
}

struct Round {
    per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
}

/// `calls` calls of `tool`, shared among `clients` clients calling at once.
async fn round(
    url: &str,
    clients: usize,
    calls: usize,
    tool: &str,
    input: &Value,
) -> Result<Round, String> {
    let mut connected = Vec::new();
    for _ in 0..clients {
        connected.push(Arc::new(http_client(url).await?));
    }
    let started = Instant::now();
    let mut tasks = Vec::new();
    for client in &connected {
        let client = client.clone();
        let tool = tool.to_owned();
        let input = input.clone();
        let each = calls / clients;
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(each);
            for _ in 0..each {
                let at = Instant::now();
                call(&client, &tool, &input).await?;
                latencies.push(at.elapsed());
            }
            Ok::<_, String>(latencies)
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.map_err(|e| e.to_string())??);
    }
    let elapsed = started.elapsed();
    for client in connected {
        if let Ok(client) = Arc::try_unwrap(client) {
            let _ = client.cancel().await;
        }
    }
    let per_second = latencies.len() as f64 / elapsed.as_secs_f64();
    let (p50_ms, p99_ms) = percentiles(&mut latencies);
    Ok(Round {
        per_second,
        p50_ms,
        p99_ms,
    })
}

async fn median_of(client: &Client, tool: &str, input: &Value, runs: usize) -> Result<f64, String> {
    let mut latencies = Vec::new();
    for _ in 0..runs {
        let at = Instant::now();
        call(client, tool, input).await?;
        latencies.push(at.elapsed());
    }
    Ok(percentiles(&mut latencies).0)
}

/// p50 and p99, in milliseconds.
fn percentiles(latencies: &mut [Duration]) -> (f64, f64) {
    latencies.sort();
    let at = |q: f64| {
        let index = ((latencies.len() as f64 - 1.0) * q).round() as usize;
        latencies
            .get(index)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    (at(0.50), at(0.99))
}
