//! The one shape of a failure the model (and the user) reads: a stable [`ErrorCode`], a
//! message, and what to do instead.
//!
//! It lives here, in the lowest crate that makes one, so that the path guard
//! ([`crate::path`]) and every tool of `codecrew-tools` return the same type: a refused
//! path travels up to the tool's result as it is, with no conversion. The code is an enum,
//! so a misspelt code does not compile; it is serialised as its `E_…` string.

mod code;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use code::{ErrorCode, UnknownCode};

/// A failure, shaped for the model (and the user) to act on. Serialised as
/// `{"code": "E_…", "message": …, "suggestion": …}`, the suggestion left out when there
/// is none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub suggestion: Option<String>,
}

impl ToolError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError {
            code,
            message: message.into(),
            suggestion: None,
        }
    }

    pub fn with_suggestion(mut self, suggestion: impl Into<String>) -> Self {
        self.suggestion = Some(suggestion.into());
        self
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)?;
        if let Some(suggestion) = &self.suggestion {
            write!(f, " ({suggestion})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ToolError {}
