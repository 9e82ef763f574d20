//! Hooks around every tool call: tracing now, the audit log next.

use serde_json::Value;

use super::{Mode, ToolResult};

/// What a hook learns about a call before it runs.
#[derive(Debug, Clone)]
pub struct CallInfo {
    pub id: String,
    pub tool: String,
    pub input: Value,
    pub mode: Mode,
}

/// A before/after hook around every call. Hooks observe; they cannot change the call.
pub trait Middleware: Send + Sync {
    fn before(&self, _call: &CallInfo) {}
    fn after(&self, _call: &CallInfo, _result: &ToolResult) {}
}

/// Logs every call and its outcome with `tracing` (visible with `-v` or `RUST_LOG`).
#[derive(Debug, Default)]
pub struct TracingLogger;

impl Middleware for TracingLogger {
    fn before(&self, call: &CallInfo) {
        tracing::debug!(id = %call.id, tool = %call.tool, mode = call.mode.name(), "tool call");
    }

    fn after(&self, call: &CallInfo, result: &ToolResult) {
        tracing::info!(
            id = %call.id,
            tool = %call.tool,
            status = ?result.status,
            duration_ms = result.duration_ms,
            "tool result"
        );
    }
}
