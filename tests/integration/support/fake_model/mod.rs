//! A scripted fake model server that speaks the four wire protocols the real CLIs use:
//! Anthropic Messages (Claude Code, opencode, and Copilot CLI offline), Gemini
//! `generateContent` (Gemini CLI), OpenAI Responses (Codex) and OpenAI Chat Completions
//! (Qwen Code, llm). The end-to-end tests point each real CLI at it.
//!
//! # Choosing the answer
//!
//! The CLIs run in parallel and re-send requests (Claude re-sends a 400 five times, Gemini asks
//! a router first), so the answer is chosen from the **content** of each request, never from the
//! order of arrival. Each request is reduced to an [`Extracted`]: the latest user prompt and, when
//! the last user turn carries tool results, their text. A [`Script`] then picks a [`Rule`]:
//!
//! 1. if the request carries a tool result, the tool-result rules ([`Rule::on_tool_result`]) in
//!    order; prompt rules are **not** consulted, so a rule that calls a tool cannot fire again on
//!    its own result and loop;
//! 2. otherwise the prompt rules ([`Rule::on_prompt`]) in order;
//! 3. otherwise the script's default reply.
//!
//! Structured-output requests (Gemini's `auto` router: `generationConfig.responseMimeType ==
//! "application/json"` or a `responseJsonSchema`) are answered with a JSON instance of the schema
//! (`{"complexity_reasoning":"fake","complexity_score":1}` for the router), never from the script.
//!
//! # Threading
//!
//! [`FakeModel::start`] is a plain (non-async) function: the server runs on a dedicated thread
//! with its own current-thread tokio runtime. Blocking test code (`std::process::Command`, which
//! spawns codecrew, which spawns the CLIs) can therefore wait on child processes while the server
//! keeps answering, and the server works the same from a `#[test]` or a `#[tokio::test]`.
//! Dropping the [`FakeModel`] stops that runtime, which also ends requests that were scripted to
//! hang.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::{SocketAddr, TcpListener as StdTcpListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// The default size, in characters, of the text pieces a reply is streamed in.
pub const DEFAULT_CHUNK_SIZE: usize = 12;

/// The text answered when no rule matches and no other default was set.
pub const DEFAULT_REPLY_TEXT: &str = "Default fake reply.";

mod extract;
mod log;
mod script;
mod server;
mod wire;

pub use extract::*;
pub use log::*;
pub use script::*;
pub use server::*;
pub use wire::*;
