//! `codecrew mcp --http` as a test starts it: a child process on a free loopback port
//! (read from its first line on stderr), its stderr kept, and the clients that talk to it:
//! rmcp's (the official Rust SDK) and raw HTTP/1.1 for what no SDK would send.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::binary::{codecrew, lasting_home};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};

/// The token the tests' servers use (given by CODECREW_MCP_TOKEN).
pub const TOKEN: &str = "test-token-0123456789abcdef";

pub type Client = RunningService<RoleClient, ()>;

/// A running `codecrew mcp --http`.
pub struct Served {
    child: Option<Child>,
    /// `127.0.0.1:<port>`.
    pub addr: String,
    stderr: Arc<Mutex<String>>,
}

impl Served {
    /// Starts `command` (codecrew with its arguments up to `mcp`; `--http 127.0.0.1:0` and
    /// `extra` are added) and waits for it to listen.
    pub fn start(mut command: Command, extra: &[&str]) -> Served {
        command
            .args(["--http", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let reader = BufReader::new(child.stderr.take().unwrap());
        let kept = stderr.clone();
        std::thread::spawn(move || {
            for line in reader.lines() {
                let Ok(line) = line else { break };
                if let Some(at) = line.find("at http://") {
                    let rest = &line[at + "at http://".len()..];
                    let addr = rest.split('/').next().unwrap_or_default().to_owned();
                    let _ = addr_tx.send(addr);
                }
                let mut kept = kept.lock().unwrap();
                kept.push_str(&line);
                kept.push('\n');
            }
        });
        let addr = match addr_rx.recv_timeout(Duration::from_secs(30)) {
            Ok(addr) => addr,
            Err(_) => {
                let _ = child.kill();
                let status = child.wait().unwrap();
                std::thread::sleep(Duration::from_millis(100));
                panic!(
                    "codecrew mcp --http did not start ({status}):\n{}",
                    stderr.lock().unwrap()
                );
            }
        };
        Served {
            child: Some(child),
            addr,
            stderr,
        }
    }

    /// `codecrew --workdir <dir> mcp <args>` with no user config unless `env` names one,
    /// and the tests' token.
    pub fn command(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Command {
        // The server outlives this function: its home lasts.
        let mut command = codecrew(&lasting_home(dir.file_name().unwrap()));
        command
            .arg("--workdir")
            .arg(dir)
            .arg("mcp")
            .args(args)
            .env("CODECREW_MCP_TOKEN", TOKEN);
        for (key, value) in env {
            command.env(key, value);
        }
        command
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub fn pid(&self) -> i32 {
        self.child.as_ref().map_or(0, |child| child.id() as i32)
    }

    /// What it wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// rmcp's client, connected with the tests' token.
    pub async fn client(&self) -> Client {
        self.client_with(TOKEN).await.unwrap()
    }

    pub async fn client_with(&self, token: &str) -> Result<Client, String> {
        let config = StreamableHttpClientTransportConfig::with_uri(self.url()).auth_header(token);
        let transport = StreamableHttpClientTransport::from_config(config);
        ().serve(transport).await.map_err(|error| error.to_string())
    }

    /// Sends `signal` and waits (at most `limit`) for the server to exit.
    pub fn stop(&mut self, signal: nix::sys::signal::Signal, limit: Duration) -> ExitStatus {
        let mut child = self.child.take().unwrap();
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
        let started = Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                // Its last lines.
                std::thread::sleep(Duration::from_millis(50));
                return status;
            }
            if started.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "the server did not exit within {limit:?} of {signal}:\n{}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// An HTTP response as raw HTTP/1.1 read it.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl RawResponse {
    /// The body as JSON (a refusal is a JSON-RPC error).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|error| panic!("not JSON ({error}): {self:?}"))
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    }
}

/// One request on a connection of its own (`Connection: close`), its whole response read.
/// `headers` are whole lines (`Name: value`).
pub fn raw(addr: &str, method: &str, path: &str, headers: &[&str], body: &[u8]) -> RawResponse {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers
        .iter()
        .any(|h| h.to_ascii_lowercase().starts_with("host:"))
    {
        request.push_str(&format!("Host: {addr}\r\n"));
    }
    for header in headers {
        request.push_str(header);
        request.push_str("\r\n");
    }
    if !headers
        .iter()
        .any(|h| h.to_ascii_lowercase().starts_with("transfer-encoding"))
    {
        request.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    // The server may answer (and close) before the whole body is sent.
    let _ = stream.write_all(body);
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP response: {text:?}"));
    RawResponse {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    }
}

/// The headers an MCP POST carries, with `token`.
pub fn mcp_headers(token: &str) -> Vec<String> {
    vec![
        format!("Authorization: Bearer {token}"),
        "Content-Type: application/json".to_owned(),
        "Accept: application/json, text/event-stream".to_owned(),
    ]
}

/// An `initialize` request body.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// The headers of a request in session `session` (after `initialize`).
pub fn session_headers(session: &str) -> Vec<String> {
    let mut headers = mcp_headers(TOKEN);
    headers.push(format!("Mcp-Session-Id: {session}"));
    headers.push("MCP-Protocol-Version: 2025-06-18".to_owned());
    headers
}

/// A session opened by hand (`initialize`, then `notifications/initialized`); its id.
pub fn open_raw_session(addr: &str) -> String {
    let headers = mcp_headers(TOKEN);
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    let initialized = raw(addr, "POST", "/mcp", &headers, INITIALIZE.as_bytes());
    assert_eq!(initialized.status, 200, "{initialized:?}");
    let session = initialized.header("mcp-session-id").unwrap();
    let notified = raw_in_session(
        addr,
        &session,
        "POST",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(notified.status, 202, "{notified:?}");
    session
}

/// One request in session `session`, on a connection of its own.
pub fn raw_in_session(addr: &str, session: &str, method: &str, body: &str) -> RawResponse {
    let headers = session_headers(session);
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    raw(addr, method, "/mcp", &headers, body.as_bytes())
}

/// Processes whose command line holds `needle` (NUL-separated words joined by spaces).
pub fn processes_with(needle: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                let words: Vec<String> = cmdline
                    .split(|byte| *byte == 0)
                    .map(|word| String::from_utf8_lossy(word).into_owned())
                    .collect();
                words.join(" ").contains(needle)
            })
        })
        .collect()
}

/// Waits until `check` holds, at most `limit`.
pub fn wait_until(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    check()
}
