//! The HTTP server on loopback: routes, replies, errors and hangs.

use super::*;

pub(super) struct Shared {
    pub(super) script: Mutex<Script>,
    pub(super) log: Mutex<Vec<LoggedRequest>>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A test that panicked while holding the lock must not hide the log from the others.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A running fake model server on `127.0.0.1:<ephemeral port>`. Stops when dropped.
pub struct FakeModel {
    pub(super) addr: SocketAddr,
    pub(super) shared: Arc<Shared>,
    pub(super) shutdown: Option<oneshot::Sender<()>>,
    pub(super) thread: Option<JoinHandle<()>>,
}

impl FakeModel {
    /// Binds `127.0.0.1:0` and serves `script` on a dedicated thread (see the module docs).
    pub fn start(script: Script) -> FakeModel {
        let listener = StdTcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            script: Mutex::new(script),
            log: Mutex::new(Vec::new()),
        });
        let (tx, rx) = oneshot::channel::<()>();
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let thread = std::thread::Builder::new()
            .name(format!("fake-model-{}", addr.port()))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                runtime.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                    tokio::select! {
                        result = axum::serve(listener, app) => result.unwrap(),
                        _ = rx => {}
                    }
                });
                // Dropping the runtime cancels the connection tasks, hanging ones included.
                runtime.shutdown_timeout(Duration::from_millis(100));
            })
            .unwrap();
        FakeModel {
            addr,
            shared,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// The base URL, `http://127.0.0.1:PORT` (no path).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Replaces the script for the requests that arrive from now on.
    pub fn set_script(&self, script: Script) {
        *lock(&self.shared.script) = script;
    }

    /// A snapshot of every request received so far, in order of arrival.
    pub fn requests(&self) -> Vec<LoggedRequest> {
        lock(&self.shared.log).clone()
    }

    /// The requests answered from the script (model turns; no router, no unknown paths).
    pub fn model_requests(&self) -> Vec<LoggedRequest> {
        self.requests()
            .into_iter()
            .filter(LoggedRequest::is_model_turn)
            .collect()
    }

    /// Waits until at least `n` model requests arrived; panics after `timeout`.
    pub fn wait_for_model_requests(&self, n: usize, timeout: Duration) -> Vec<LoggedRequest> {
        let start = Instant::now();
        loop {
            let requests = self.model_requests();
            if requests.len() >= n {
                return requests;
            }
            assert!(
                start.elapsed() < timeout,
                "fake model: {} model request(s) after {timeout:?}, wanted {n}: {:#?}",
                requests.len(),
                self.requests()
                    .iter()
                    .map(LoggedRequest::summary)
                    .collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[derive(Debug)]
pub(super) enum Route {
    Anthropic,
    AnthropicCountTokens,
    GeminiStream(String),
    GeminiGenerate(String),
    GeminiCountTokens(String),
    OpenAi,
    OpenAiChat,
    Unknown,
}

impl Route {
    fn of(method: &Method, path: &str) -> Route {
        if method != Method::POST {
            return Route::Unknown;
        }
        if path == "/v1/messages" {
            return Route::Anthropic;
        }
        if path == "/v1/messages/count_tokens" {
            return Route::AnthropicCountTokens;
        }
        if path == "/v1/responses" {
            return Route::OpenAi;
        }
        if path.ends_with("/chat/completions") {
            return Route::OpenAiChat;
        }
        if let Some((model, action)) = path
            .strip_prefix("/v1beta/models/")
            .and_then(|rest| rest.rsplit_once(':'))
        {
            let model = model.to_string();
            return match action {
                "streamGenerateContent" => Route::GeminiStream(model),
                "generateContent" => Route::GeminiGenerate(model),
                "countTokens" => Route::GeminiCountTokens(model),
                _ => Route::Unknown,
            };
        }
        Route::Unknown
    }

    fn api(&self) -> Api {
        match self {
            Route::Anthropic | Route::AnthropicCountTokens => Api::Anthropic,
            Route::GeminiStream(_) | Route::GeminiGenerate(_) | Route::GeminiCountTokens(_) => {
                Api::Gemini
            }
            Route::OpenAi => Api::OpenAi,
            Route::OpenAiChat => Api::OpenAiChat,
            Route::Unknown => Api::Other,
        }
    }
}

pub(super) async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 512 << 20)
        .await
        .unwrap_or_default();
    let body: Value = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
    };
    let mut headers = BTreeMap::<String, String>::new();
    for (name, value) in &parts.headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        headers
            .entry(name.as_str().to_ascii_lowercase())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    let path = parts.uri.path().to_string();
    let route = Route::of(&parts.method, &path);
    let extracted = match route.api() {
        Api::Anthropic => extract_anthropic(&body),
        Api::Gemini => extract_gemini(&body),
        Api::OpenAi => extract_openai(&body),
        Api::OpenAiChat => extract_openai_chat(&body),
        Api::Other => Extracted::default(),
    };
    let model = match &route {
        Route::GeminiStream(m) | Route::GeminiGenerate(m) | Route::GeminiCountTokens(m) => {
            Some(m.clone())
        }
        _ => body["model"].as_str().map(str::to_string),
    };
    let structured = matches!(route, Route::GeminiStream(_) | Route::GeminiGenerate(_))
        && is_gemini_structured(&body);
    let (answered_by, reply) = match &route {
        Route::Unknown => ("unknown-path".to_string(), None),
        Route::AnthropicCountTokens | Route::GeminiCountTokens(_) => {
            ("count-tokens".to_string(), None)
        }
        _ if structured => ("structured-output".to_string(), None),
        _ => {
            let (label, reply) = lock(&shared.script).choose(&extracted);
            (label, Some(reply))
        }
    };
    let input_tokens = (bytes.len() / 4).max(1) as u64;
    let reported_usage = match (&route, &reply) {
        (Route::Unknown | Route::AnthropicCountTokens | Route::GeminiCountTokens(_), _) => None,
        (_, None) => Some((
            input_tokens,
            gemini_output_tokens(&router_answer(&body).to_string()),
        )),
        (_, Some(reply)) if reply.hang || reply.error.is_some() => None,
        (route, Some(reply)) => Some((
            input_tokens,
            match route.api() {
                Api::Gemini => gemini_output_tokens(&reply.text),
                _ => output_tokens(reply),
            },
        )),
    };
    {
        let mut log = lock(&shared.log);
        let seq = log.len();
        log.push(LoggedRequest {
            seq,
            method: parts.method.to_string(),
            path: path.clone(),
            query: parts.uri.query().map(str::to_string),
            headers,
            body: body.clone(),
            api: route.api(),
            model: model.clone(),
            prompt: extracted.prompt.clone(),
            tool_result: extracted.tool_result.clone(),
            answered_by,
            reply: reply.clone(),
            reported_usage,
        });
    }

    let model = model.unwrap_or_else(|| "fake-model".to_string());
    let mut response = match (route, reply) {
        (Route::Unknown, _) => {
            if parts.method == Method::GET || parts.method == Method::HEAD {
                json_response(StatusCode::OK, &json!({}))
            } else {
                json_response(
                    StatusCode::NOT_FOUND,
                    &json!({"error": {"type": "not_found_error", "message":
                        format!("fake model: no route for {} {path}", parts.method)}}),
                )
            }
        }
        (Route::AnthropicCountTokens, _) => {
            json_response(StatusCode::OK, &json!({"input_tokens": input_tokens}))
        }
        (Route::GeminiCountTokens(_), _) => {
            json_response(StatusCode::OK, &json!({"totalTokens": input_tokens}))
        }
        (route, None) => {
            // Structured output (the Gemini router): answered at once, never scripted.
            let text = router_answer(&body).to_string();
            let chunk = gemini_chunk(
                vec![json!({"text": text})],
                &model,
                &fresh_id(""),
                Some(usage_gemini(input_tokens, &text)),
            );
            match route {
                Route::GeminiStream(_) => sse_response(vec![gemini_event(&chunk)]),
                _ => json_response(StatusCode::OK, &chunk),
            }
        }
        (route, Some(reply)) => {
            if reply.hang {
                return std::future::pending::<Response>().await;
            }
            if !reply.delay.is_zero() {
                tokio::time::sleep(reply.delay).await;
            }
            if let Some(error) = &reply.error {
                error_response(route.api(), error)
            } else {
                let stream = match route {
                    Route::GeminiStream(_) => true,
                    Route::GeminiGenerate(_) => false,
                    _ => body["stream"] == true,
                };
                answer(&route, &reply, &model, input_tokens, stream)
            }
        }
    };
    response.headers_mut().insert(
        "request-id",
        HeaderValue::from_str(&fresh_id("req_")).unwrap(),
    );
    response
}

pub(super) fn answer(
    route: &Route,
    reply: &Reply,
    model: &str,
    input_tokens: u64,
    stream: bool,
) -> Response {
    match (route.api(), stream) {
        (Api::Anthropic, true) => sse_response(anthropic_events(reply, model, input_tokens)),
        (Api::Anthropic, false) => json_response(
            StatusCode::OK,
            &anthropic_message(reply, model, input_tokens),
        ),
        (Api::Gemini, true) => sse_response(
            gemini_chunks(reply, model, input_tokens)
                .iter()
                .map(gemini_event)
                .collect(),
        ),
        (Api::Gemini, false) => {
            json_response(StatusCode::OK, &gemini_whole(reply, model, input_tokens))
        }
        (Api::OpenAi, true) => sse_response(openai_events(reply, model, input_tokens)),
        (Api::OpenAi, false) => {
            let (_, response) = openai_items(reply, model, input_tokens);
            json_response(StatusCode::OK, &response)
        }
        (Api::OpenAiChat, true) => sse_response(chat_events(reply, model, input_tokens)),
        (Api::OpenAiChat, false) => {
            json_response(StatusCode::OK, &chat_completion(reply, model, input_tokens))
        }
        (Api::Other, _) => json_response(StatusCode::OK, &json!({})),
    }
}

pub(super) fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// One body frame per event, so each event is flushed on its own.
pub(super) fn sse_response(events: Vec<String>) -> Response {
    let frames = events
        .into_iter()
        .map(|e| Ok::<Bytes, Infallible>(Bytes::from(e)));
    let mut response = Response::new(Body::from_stream(tokio_stream::iter(frames)));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

pub(super) fn error_response(api: Api, error: &ApiError) -> Response {
    let status = StatusCode::from_u16(error.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = match api {
        Api::Anthropic => {
            let kind = match error.status {
                400 => "invalid_request_error",
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                413 => "request_too_large",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": error.message}})
        }
        Api::Gemini => {
            let kind = match error.status {
                400 => "INVALID_ARGUMENT",
                401 => "UNAUTHENTICATED",
                403 => "PERMISSION_DENIED",
                404 => "NOT_FOUND",
                429 => "RESOURCE_EXHAUSTED",
                503 => "UNAVAILABLE",
                504 => "DEADLINE_EXCEEDED",
                _ => "INTERNAL",
            };
            json!({"error": {"code": error.status, "message": error.message, "status": kind}})
        }
        Api::OpenAi | Api::OpenAiChat | Api::Other => {
            let kind = match error.status {
                429 => "rate_limit_exceeded",
                500..=599 => "server_error",
                _ => "invalid_request_error",
            };
            json!({"error": {"type": kind, "message": error.message, "code": null}})
        }
    };
    json_response(status, &body)
}
