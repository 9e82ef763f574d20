//! Interception: finding the tool calls a model writes in its own text.

mod envelope;
mod neutralise;
mod scanner;
mod stream;
mod strict;

use serde::Serialize;
use serde_json::Value;

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
