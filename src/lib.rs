//! codecrew: a proxy for LLM command-line agents that gives them tools they lack.
//!
//! The library follows the data flow of one run, one module per step:
//!
//! ```text
//! bytes from a CLI ── decode ──> Event stream
//! assistant text   ── intercept ──> Segment::{Text, Call, Rejected}
//! Call             ── tool (ToolCallService) ──> ToolResult
//! catalog          ── prompt ──> the tool-augmented prompt text
//! ```
//!
//! `decode` and `intercept` are plain functions over bytes and text: they know nothing of
//! processes, async runtimes or flags, so they are easy to test and to fuzz.
//!
//! ```
//! use codecrew::intercept::{Scanner, Segment};
//!
//! let mut scanner = Scanner::default();
//! let mut segments = Vec::new();
//! scanner.push("Reading it now.\n```json\n", &mut segments);
//! scanner.push("{\"type\":\"tool_use\",\"name\":\"codecrew:read_file\",\"input\":{\"path\":\"README.md\"}}\n```\n", &mut segments);
//! scanner.finish(&mut segments);
//! let calls: Vec<_> = segments.iter().filter_map(|s| match s {
//!     Segment::Call(call) => Some(call.tool.as_str()),
//!     _ => None,
//! }).collect();
//! assert_eq!(calls, ["read_file"]);
//! ```

pub mod cli;
pub mod color;
pub mod config;
pub mod decode;
pub mod intercept;
pub mod jobs;
pub mod mcp;
pub mod mention;
pub mod permission;
pub mod process;
pub mod prompt;
pub mod provider;
pub mod render;
pub mod session;
pub mod thread;
pub mod tool;
