//! The interception engine: bytes from an LLM command-line agent in, events and the tool
//! calls its model wrote out.
//!
//! ```text
//! stdout bytes   ── decode::Decoder ──> decode::Event   (Claude/Gemini stream-json, Codex JSONL, text)
//! assistant text ── Scanner ─────────> Segment::{Text, Call, Rejected}
//! both at once   ── Interceptor ─────> Item::{Event, Segment}  (only the assistant's text is scanned)
//! a CLI          ── CliKind ─────────> its name, the decode::Format it prints (the registry of CLIs)
//! ```
//!
//! A call is a JSON envelope, `{"type":"tool_use","name":"codecrew:read_file","input":{...}}`,
//! in a fenced block or bare on its own lines. The engine is plain functions over bytes
//! and text: no async runtime, no file system, no processes. Feed it chunks as they
//! arrive, in any sizes: the segments are the same as for the whole text at once (a
//! property test holds it to that), so it fits anything that wraps an LLM CLI.
//!
//! ```
//! use codecrew_intercept::decode::Format;
//! use codecrew_intercept::{Interceptor, Item, ScannerLimits, Segment};
//!
//! // Claude Code's stream-json, as `claude -p --output-format stream-json` prints it.
//! let stdout = concat!(
//!     r#"{"type":"system","subtype":"init","session_id":"s1","model":"haiku"}"#, "\n",
//!     r#"{"type":"assistant","session_id":"s1","message":{"content":[{"type":"text","text":"#,
//!     r#""Let me look.\n```json\n{\"type\":\"tool_use\",\"name\":\"codecrew:read_file\","#,
//!     r#"\"input\":{\"path\":\"README.md\"}}\n```\n"}]}}"#, "\n",
//! );
//! let mut interceptor = Interceptor::new(Format::Claude, ScannerLimits::default());
//! let mut items = Vec::new();
//! // Any chunking gives the same result; here, 7 bytes at a time.
//! for chunk in stdout.as_bytes().chunks(7) {
//!     interceptor.feed(chunk, &mut items);
//! }
//! interceptor.finish(&mut items);
//!
//! let calls: Vec<_> = items.iter().filter_map(|item| match item {
//!     Item::Segment(Segment::Call(call)) => Some((call.tool.as_str(), call.input["path"].as_str())),
//!     _ => None,
//! }).collect();
//! assert_eq!(calls, [("read_file", Some("README.md"))]);
//! ```

mod cli_kind;
pub mod decode;
mod echoes;
mod envelope;
#[doc(hidden)]
pub mod fuzzing;
mod neutralise;
mod scanner;
mod stream;
mod strict;

use serde::Serialize;
use serde_json::Value;

pub use cli_kind::CliKind;
pub use echoes::Echoes;
pub use neutralise::{neutralise_envelopes, neutralise_value};
pub use scanner::{Scanner, ScannerLimits};
pub use stream::{Interceptor, Item};

/// The canonical prefix of codecrew tool names.
pub const PREFIX: &str = "codecrew:";

/// One piece of the assistant's text, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Segment {
    /// Text for the human, with envelopes removed.
    Text(String),
    /// A tool call.
    Call(ToolCall),
    /// Something that was meant as a call but cannot be run, and why.
    Rejected(Rejection),
}

/// A tool call found in the assistant's text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    /// The normalised name, always `codecrew:<tool>`.
    pub name: String,
    /// The tool's name without prefix.
    pub tool: String,
    /// The input object.
    pub input: Value,
}

/// An envelope that was not accepted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rejection {
    pub reason: String,
    pub raw: String,
}

#[cfg(test)]
mod tests;
