//! Every request to `codecrew mcp --http` passes here before rmcp's Streamable HTTP
//! service sees it, in this order: the path (`/health` is answered without a token and
//! says nothing but "ok"), a shutdown in progress, the `Origin` (a page in the user's
//! browser, even through DNS rebinding), the bearer token, the body's size and the time
//! it takes to arrive, and the number of sessions: at `--max-sessions` a new client takes
//! the place of the session idle longest ([`super::occupancy`]), and waits a little, then
//! is refused, only when every session is busy. A refusal is a JSON-RPC error in an HTTP
//! error status, logged without the token; the server keeps serving.

use std::collections::HashSet;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use rmcp::model::ErrorCode;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager};
use serde_json::{Value, json};
use tokio::sync::MutexGuard;

use super::disconnect::{Disconnect, Held};
use super::occupancy::{Chosen, Entry, Occupancy};
use super::token::Token;
use crate::mcp_server::McpServer;
use crate::mcp_server::limits::{BUSY, InFlight};

/// The MCP endpoint's path.
pub const ENDPOINT: &str = "/mcp";
/// The supervisors' path.
pub const HEALTH: &str = "/health";
/// How long a request body may take to arrive: a client that sends slowly holds one
/// connection of its own, never the server.
const BODY_DEADLINE: Duration = Duration::from_secs(30);
/// How long a new client waits at the session cap for a busy session to turn idle: long
/// enough for a quick call to end, short beside a client's own timeout.
const ROOM_WAIT: Duration = Duration::from_secs(2);
/// How often a waiting client looks again, for sessions rmcp ended on its own.
const ROOM_RECHECK: Duration = Duration::from_millis(200);
/// How long closing a session to make room may take (an idle session's worker is
/// waiting for exactly that message).
const CLOSE_DEADLINE: Duration = Duration::from_secs(1);
/// The header that names a request's session.
const SESSION_ID: &str = "mcp-session-id";

pub type Reply = Response<BoxBody<Bytes, Infallible>>;

/// What every request is checked against, and the MCP service behind.
pub struct Gate {
    pub(super) token: Token,
    /// Where a client finds the token, for the refusal's message.
    pub(super) token_hint: String,
    /// Browser origins allowed, exactly as browsers send them.
    pub(super) origins: Vec<String>,
    pub(super) max_body: usize,
    pub(super) max_sessions: usize,
    pub(super) sessions: Arc<LocalSessionManager>,
    /// Which sessions are busy, and since when the others are idle.
    pub(super) occupancy: Arc<Occupancy>,
    /// Held while a session is opened (room made, the new one counted), so that two at
    /// once cannot both take the last place or close the same idle session.
    pub(super) opening: tokio::sync::Mutex<()>,
    pub(super) draining: AtomicBool,
    /// The answers to POSTs not yet sent to their end: a shutdown lets them leave before
    /// it ends the streams.
    pub(super) answers: Arc<InFlight>,
    pub(super) mcp: StreamableHttpService<McpServer, LocalSessionManager>,
}

impl Gate {
    /// From now on, new requests are refused (the health check says so too).
    pub fn drain(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    pub async fn handle(
        self: Arc<Self>,
        request: Request<Incoming>,
        peer: SocketAddr,
    ) -> Result<Reply, Infallible> {
        Ok(match request.uri().path() {
            HEALTH => self.health(request.method()),
            ENDPOINT => self.mcp(request, peer).await,
            _ => plain(
                StatusCode::NOT_FOUND,
                "Not Found: the MCP endpoint is /mcp\n",
            ),
        })
    }

    fn health(&self, method: &Method) -> Reply {
        if method != Method::GET && method != Method::HEAD {
            return plain(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed\n");
        }
        if self.draining() {
            plain(StatusCode::SERVICE_UNAVAILABLE, "draining\n")
        } else {
            plain(StatusCode::OK, "ok\n")
        }
    }

    async fn mcp(&self, request: Request<Incoming>, peer: SocketAddr) -> Reply {
        if self.draining() {
            return refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                BUSY,
                None,
                "codecrew is shutting down; connect again when it is back",
            );
        }
        if let Some(origin) = request.headers().get(header::ORIGIN)
            && !self.origin_allowed(origin)
        {
            tracing::warn!(
                %peer,
                origin = %shown(origin),
                "refused a request from a foreign Origin (allow one with --allow-origin)"
            );
            return refusal(
                StatusCode::FORBIDDEN,
                ErrorCode::INVALID_REQUEST,
                None,
                "requests from this Origin are refused (a web page may not use codecrew); \
                 the user may allow it with `codecrew mcp --http --allow-origin <origin>`",
            );
        }
        match self.presented_token(&request) {
            Presented::Right => {}
            Presented::Missing => {
                tracing::warn!(%peer, "refused a request without a token");
                return unauthorized(format!(
                    "codecrew needs a token: send `Authorization: Bearer <token>`; {}",
                    self.token_hint
                ));
            }
            Presented::Wrong => {
                tracing::warn!(%peer, "refused a request with a wrong token");
                return unauthorized(format!("the token is wrong; {}", self.token_hint));
            }
        }
        if request.method() != Method::POST {
            return self.forward(request).await;
        }
        let (parts, body) = request.into_parts();
        let body = match self.read_body(&parts.headers, body, peer).await {
            Ok(body) => body,
            Err(reply) => return reply,
        };
        let request = Request::from_parts(parts, Full::new(body.clone()));
        if request.headers().contains_key(SESSION_ID) || !is_initialize(&body) {
            return self.forward(request).await;
        }
        // An `initialize` without a session opens one.
        let _opening = match self.make_room(peer).await {
            Ok(opening) => opening,
            Err(open) => {
                tracing::warn!(%peer, open, "refused a new session: every session is busy");
                return refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    BUSY,
                    request_id(&body),
                    &format!(
                        "codecrew serves at most {} sessions at once (--max-sessions), and \
                         every one is busy (a call in flight or a stream open); try again \
                         shortly, or close a session you hold (DELETE /mcp with its \
                         Mcp-Session-Id)",
                        self.max_sessions
                    ),
                );
            }
        };
        let reply = self.forward(request).await;
        // Counted before the next `initialize` looks.
        if let Some(id) = reply
            .headers()
            .get(SESSION_ID)
            .and_then(|id| id.to_str().ok())
        {
            self.occupancy
                .opened(SessionId::from(id), peer, Instant::now());
        }
        reply
    }

    /// Room for one more session: below the cap, or at it once the session idle longest
    /// is closed; when every session is busy, waits at most [`ROOM_WAIT`] for one to turn
    /// idle. Gives the lock to hold until the new session is counted, or the number of
    /// sessions open when there was no room.
    async fn make_room(&self, peer: SocketAddr) -> Result<MutexGuard<'_, ()>, usize> {
        let deadline = tokio::time::Instant::now() + ROOM_WAIT;
        let opening = tokio::time::timeout_at(deadline, self.opening.lock())
            .await
            .map_err(|_| self.max_sessions)?;
        loop {
            let freed = self.occupancy.freed();
            tokio::pin!(freed);
            // Listening before looking: a session freed in between is not missed.
            freed.as_mut().enable();
            let live: HashSet<SessionId> = self
                .sessions
                .sessions
                .read()
                .await
                .keys()
                .cloned()
                .collect();
            if live.len() < self.max_sessions {
                return Ok(opening);
            }
            if let Some(chosen) = self.occupancy.choose_idle_longest(&live, Instant::now()) {
                self.close_to_make_room(chosen, peer).await;
                continue;
            }
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                return Err(live.len());
            }
            let _ = tokio::time::timeout(left.min(ROOM_RECHECK), freed).await;
        }
    }

    /// Closes an idle session through rmcp's session manager (its worker ends, and with
    /// it that session's clone of the server); a later request with its id gets rmcp's
    /// 404, on which a client opens a new session.
    async fn close_to_make_room(&self, chosen: Chosen, peer: SocketAddr) {
        tracing::info!(
            %peer,
            idle_peer = %chosen.peer,
            idle_secs = chosen.idle.as_secs(),
            "at --max-sessions: closing the session idle longest to make room for a new client"
        );
        match tokio::time::timeout(CLOSE_DEADLINE, self.sessions.close_session(&chosen.id)).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::debug!("closing an idle session: {error}"),
            Err(_) => tracing::debug!("closing an idle session took too long"),
        }
        self.occupancy.closed(&chosen.id);
    }

    /// Hands the request to rmcp, and watches its answer for a client that goes away and
    /// for the end of the session's business.
    async fn forward<B>(&self, mut request: Request<B>) -> Reply
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: std::fmt::Display,
    {
        let session = request
            .headers()
            .get(SESSION_ID)
            .and_then(|id| id.to_str().ok())
            .map(str::to_owned);
        let busy = match session.as_deref().map(|id| self.occupancy.enter(id)) {
            Some(Entry::Busy(busy)) => Some(busy),
            // Closed to make room: as rmcp answers for a session that has ended.
            Some(Entry::Closing) => return session_not_found(),
            Some(Entry::Unknown) | None => None,
        };
        let deleting = request.method() == Method::DELETE;
        let disconnect = Disconnect::default();
        request.extensions_mut().insert(disconnect.clone());
        // A GET is the client's standing stream, which ends only with the session: not an
        // answer a shutdown waits for.
        let answer = (request.method() == Method::POST).then(|| self.answers.start());
        let held = Held::new(answer, busy);
        let response = self.mcp.handle(request).await;
        if deleting
            && response.status().is_success()
            && let Some(id) = &session
        {
            self.occupancy.closed(id);
        }
        response.map(|body| BoxBody::new(disconnect.watch(body, held)))
    }

    fn origin_allowed(&self, origin: &HeaderValue) -> bool {
        let Ok(origin) = origin.to_str() else {
            return false;
        };
        self.origins
            .iter()
            .any(|allowed| allowed.trim_end_matches('/').eq_ignore_ascii_case(origin))
    }

    fn presented_token<B>(&self, request: &Request<B>) -> Presented {
        let Some(value) = request.headers().get(header::AUTHORIZATION) else {
            return Presented::Missing;
        };
        let value = value.as_bytes();
        let Some(token) = value
            .get(..7)
            .filter(|scheme| scheme.eq_ignore_ascii_case(b"bearer "))
            .and_then(|_| value.get(7..))
        else {
            return Presented::Missing;
        };
        if self.token.matches(token.trim_ascii()) {
            Presented::Right
        } else {
            Presented::Wrong
        }
    }

    /// The whole body, at most `max_body` bytes, within [`BODY_DEADLINE`].
    async fn read_body(
        &self,
        headers: &http::HeaderMap,
        body: Incoming,
        peer: SocketAddr,
    ) -> Result<Bytes, Reply> {
        let too_large = || {
            tracing::warn!(%peer, limit = self.max_body, "refused a request body over the limit");
            refusal(
                StatusCode::PAYLOAD_TOO_LARGE,
                ErrorCode::INVALID_REQUEST,
                None,
                &format!(
                    "the request body is over codecrew's limit of {} bytes (--max-body)",
                    self.max_body
                ),
            )
        };
        let declared = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<u64>().ok());
        if declared.is_some_and(|length| length > self.max_body as u64) {
            return Err(too_large());
        }
        let read = Limited::new(body, self.max_body).collect();
        match tokio::time::timeout(BODY_DEADLINE, read).await {
            Ok(Ok(collected)) => Ok(collected.to_bytes()),
            Ok(Err(error)) if error.is::<http_body_util::LengthLimitError>() => Err(too_large()),
            Ok(Err(error)) => {
                tracing::debug!(%peer, "a request body broke off: {error}");
                Err(refusal(
                    StatusCode::BAD_REQUEST,
                    ErrorCode::PARSE_ERROR,
                    None,
                    "the request body could not be read",
                ))
            }
            Err(_) => {
                tracing::warn!(%peer, "refused a request whose body took too long");
                Err(refusal(
                    StatusCode::REQUEST_TIMEOUT,
                    ErrorCode::INVALID_REQUEST,
                    None,
                    &format!(
                        "the request body did not arrive within {} seconds",
                        BODY_DEADLINE.as_secs()
                    ),
                ))
            }
        }
    }
}

enum Presented {
    Right,
    Missing,
    Wrong,
}

/// A header value as a log may show it: cut short, since a client chose it.
fn shown(value: &HeaderValue) -> String {
    let text = String::from_utf8_lossy(value.as_bytes());
    text.chars().take(100).collect()
}

/// Whether a JSON-RPC body is an `initialize` request (the one that opens a session).
fn is_initialize(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: Option<&'a str>,
    }
    serde_json::from_slice::<Method>(body).is_ok_and(|message| message.method == Some("initialize"))
}

/// The id of a JSON-RPC request body, when it has one.
fn request_id(body: &[u8]) -> Option<Value> {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|message| message.get("id").cloned())
}

fn plain(status: StatusCode, text: &'static str) -> Reply {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// What rmcp answers for a session that has ended (the specification's 404, on which a
/// client opens a new session).
fn session_not_found() -> Reply {
    plain(StatusCode::NOT_FOUND, "Not Found: Session not found")
}

/// A JSON-RPC error (id null when the request's is unknown) with an HTTP status.
fn refusal(status: StatusCode, code: ErrorCode, id: Option<Value>, message: &str) -> Reply {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(Value::Null),
        "error": {"code": code.0, "message": message},
    });
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn unauthorized(message: String) -> Reply {
    let mut response = refusal(
        StatusCode::UNAUTHORIZED,
        ErrorCode::INVALID_REQUEST,
        None,
        &message,
    );
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"codecrew\""),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_initialize_opens_a_session() {
        assert!(is_initialize(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#
        ));
        assert!(!is_initialize(
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}"#
        ));
        assert!(!is_initialize(br#"[{"method":"initialize"}]"#));
        assert!(!is_initialize(b"{not json"));
    }

    #[test]
    fn a_refusal_is_a_json_rpc_error_with_the_requests_id() {
        let id = request_id(br#"{"jsonrpc":"2.0","id":7,"method":"initialize"}"#);
        let reply = refusal(StatusCode::SERVICE_UNAVAILABLE, BUSY, id, "full");
        assert_eq!(reply.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            reply.headers()[header::CONTENT_TYPE],
            HeaderValue::from_static("application/json")
        );
    }
}
