//! The ToolCallService: every tool codecrew can run, the subset one run offers, and the
//! executor that turns a call into a [`ToolResult`].
//!
//! ```text
//! CallRequest (a call the interception engine found) -> ToolExecutor: validate against the
//!     ToolCatalog, ask codecrew-policy, run the Tool (built-in, [tools.*] program, MCP
//!     server), cap and time it -> ToolResult
//! ```
//!
//! It builds on `codecrew-intercept` (results are neutralised before a model reads them)
//! and `codecrew-policy` (every call is decided there first); it knows nothing of the
//! command line: the front end hands in what it owns, such as the help tool's text
//! ([`builtin::HelpSource`]) and the config sections ([`config`]).
//!
//! Errors are data. A tool never returns a Rust error to its caller; whatever goes wrong
//! (unknown tool, bad input, denied, timed out, failed) becomes a `ToolResult` with
//! `status: "error"` or `"denied"` and a [`ToolError`] the model can act on. `ToolError`
//! and its [`ErrorCode`] are the policy crate's, re-exported here: a path the guard
//! refuses is already the error the tool returns.

pub mod beneath;
pub mod builtin;
pub mod catalog;
pub mod child;
pub mod config;
pub mod executor;
pub mod external;
pub mod mcp;
pub mod middleware;
pub mod registry;
pub mod state_dir;
pub mod toolbox;

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use codecrew_policy::{Caller, ErrorCode, ExecSettings, Mode, ToolContext, ToolError, path};

pub use catalog::ToolCatalog;
pub use executor::ToolExecutor;
pub use registry::ToolRegistry;
pub use toolbox::Toolbox;

/// The future a tool returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send + 'a>>;

/// The longest error message a tool result carries unless the tool says otherwise.
pub const DEFAULT_MAX_ERROR_CHARS: usize = 1000;

/// The time a tool call may take unless the tool says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// One runnable tool.
pub trait Tool: Send + Sync {
    /// The name without the `codecrew:` prefix, e.g. `read_file`.
    fn name(&self) -> &str;
    /// One paragraph for the model: what it does and when to use it.
    fn description(&self) -> &str;
    /// The JSON Schema of the input object.
    fn input_schema(&self) -> Value;
    /// True when the tool never changes anything outside codecrew's own memory.
    fn readonly(&self) -> bool;
    /// Whether codecrew itself wrote the tool, its description and its input schema
    /// (its built-in tools, the crew's), not a configuration or an MCP server.
    ///
    /// Such a schema is in JSON Schema draft 7's words and compiled as draft 7 (its
    /// `$schema` set to it when compiled), whose meta-schema (each schema is checked
    /// against it as it is compiled) takes 0.4 ms to build where draft 2020-12's took
    /// 1.5 ms of a run's first call; a schema from elsewhere (`[tools.*]`, an MCP server)
    /// is compiled as the draft it names, by default 2020-12. And only a catalog of such
    /// tools is described in a CLI's system prompt (Claude Code's), where text from
    /// elsewhere would carry more weight than in the message.
    fn is_codecrews(&self) -> bool {
        false
    }
    /// Runs the call. The input has already been validated against the schema.
    fn execute<'a>(&'a self, ctx: &'a ToolContext, input: Value) -> ToolFuture<'a>;
    /// How long the executor lets a call run. A tool that enforces its own timeout
    /// (like `run_command`) returns a value above its own maximum.
    fn timeout(&self) -> Duration {
        DEFAULT_TIMEOUT
    }
    /// The cap on error messages of this tool's results.
    fn max_error_chars(&self) -> usize {
        DEFAULT_MAX_ERROR_CHARS
    }
    /// What the tool may do in a read-only (`query`) run though it is not read-only
    /// itself, or None (the default) when `query` does not offer it. `run_command` is
    /// offered there for the commands that run without asking, in the read-only sandbox.
    fn query_description(&self) -> Option<&str> {
        None
    }
    /// Whether a `query` run may call it (where the kernel holds the read-only sandbox;
    /// the catalog checks that).
    fn offered_in_query(&self) -> bool {
        self.readonly() || self.query_description().is_some()
    }
    /// The description shown to the model in a run of `mode`.
    fn description_in(&self, mode: Mode) -> &str {
        match (mode, self.query_description()) {
            (Mode::Query, Some(description)) if !self.readonly() => description,
            _ => self.description(),
        }
    }
    /// What the tool does in a few words, for the compact prompt of a run of `mode`: by
    /// default the first sentence of its description there, cut at [`SUMMARY_CHARS`].
    fn summary_in(&self, mode: Mode) -> Cow<'_, str> {
        first_sentence(self.description_in(mode))
    }
}

/// The longest summary [`Tool::summary_in`] derives from a description.
pub const SUMMARY_CHARS: usize = 120;

/// A description's first sentence (ended by a `.` before a blank, not in "e.g." or
/// "i.e."), without its final period, cut at [`SUMMARY_CHARS`] characters.
pub fn first_sentence(description: &str) -> Cow<'_, str> {
    let text = description.trim();
    let mut end = text.len();
    for (at, _) in text.match_indices(". ") {
        let before = &text[..at];
        if !(before.ends_with("e.g") || before.ends_with("i.e")) {
            end = at;
            break;
        }
    }
    let sentence = text[..end].trim_end_matches('.');
    match sentence.char_indices().nth(SUMMARY_CHARS) {
        Some((cut, _)) => Cow::Owned(format!("{}…", &sentence[..cut])),
        None => Cow::Borrowed(sentence),
    }
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Error,
    Denied,
}

/// The one result shape, used everywhere: printed, fed back to the model, logged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub tool_call_id: String,
    /// The tool's name without prefix.
    pub tool: String,
    pub status: Status,
    pub output: Value,
    pub error: Option<ToolError>,
    pub duration_ms: u64,
    /// Who let the call run or refused it (None: it never reached the permission check,
    /// e.g. its input was invalid). Kept in the run store; not part of what is printed.
    #[serde(skip)]
    pub decided: Option<Decided>,
}

impl ToolResult {
    pub fn is_ok(&self) -> bool {
        self.status == Status::Ok
    }
}

/// Who decided whether a call ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecidedBy {
    /// The policy's rules and built-in lists; nobody was asked.
    Policy,
    /// The run's mode: query mode's tools read only.
    Mode,
    /// The user, asked (at the terminal, or in the editor).
    User,
    /// An "always" the user gave earlier in the run.
    Session,
    /// `--yes`, which allows what would ask.
    Yes,
    /// The call needed asking and nobody could be asked: refused.
    Nobody,
}

impl DecidedBy {
    /// As the run store writes it.
    pub fn name(self) -> &'static str {
        match self {
            DecidedBy::Policy => "policy",
            DecidedBy::Mode => "mode",
            DecidedBy::User => "user",
            DecidedBy::Session => "session",
            DecidedBy::Yes => "yes",
            DecidedBy::Nobody => "nobody",
        }
    }
}

/// The permission decision a call met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decided {
    pub by: DecidedBy,
    /// It asked because of what it touches (a sensitive file, a risky command) and was
    /// let through: what it read may be a secret, so its output is kept nowhere.
    pub guarded: bool,
}

impl Decided {
    fn by(by: DecidedBy) -> Decided {
        Decided { by, guarded: false }
    }
}

#[cfg(test)]
mod tests;
