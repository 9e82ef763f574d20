//! A minimal HTTP/1.1 client, enough to test the fake without a CLI.

use super::*;

pub(super) struct HttpAnswer {
    pub(super) status: u16,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: String,
}

impl HttpAnswer {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(super) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap()
    }

    /// `(event name, data)` of each SSE event (`event:` lines optional).
    pub(super) fn sse(&self) -> Vec<(Option<String>, Value)> {
        self.body
            .replace("\r\n", "\n")
            .split("\n\n")
            .filter(|block| !block.trim().is_empty())
            .map(|block| {
                let mut name = None;
                let mut data = Value::Null;
                for line in block.lines() {
                    if let Some(n) = line.strip_prefix("event: ") {
                        name = Some(n.to_string());
                    } else if let Some(d) = line.strip_prefix("data: ") {
                        data = serde_json::from_str(d).unwrap();
                    } else {
                        panic!("unexpected SSE line {line:?}");
                    }
                }
                (name, data)
            })
            .collect()
    }
}

pub(super) fn send(
    addr: SocketAddr,
    method: &str,
    target: &str,
    body: Option<&Value>,
) -> TcpStream {
    let mut stream = TcpStream::connect(addr).unwrap();
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        stream,
        "{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nX-Api-Key: k\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    stream
}

pub(super) fn http(
    addr: SocketAddr,
    method: &str,
    target: &str,
    body: Option<&Value>,
) -> HttpAnswer {
    let stream = send(addr, method, target, body);
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let status: u16 = line.split(' ').nth(1).unwrap().parse().unwrap();
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        let (k, v) = trimmed.split_once(':').unwrap();
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    let mut raw = Vec::new();
    if method != "HEAD" {
        reader.read_to_end(&mut raw).unwrap();
    }
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked { dechunk(&raw) } else { raw };
    HttpAnswer {
        status,
        headers,
        body: String::from_utf8(body).unwrap(),
    }
}

pub(super) fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let end = raw.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&raw[..end]).unwrap().trim(), 16).unwrap();
        raw = &raw[end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&raw[..size]);
        raw = &raw[size + 2..];
    }
}
