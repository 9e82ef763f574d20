//! Hooks around every tool call: a tracing logger and an audit log.

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

/// Appends one JSON line per call to an audit file (`.codecrew/audit.jsonl` in the
/// workspace): time, tool, a digest of the input (not the input: it may hold secrets),
/// the decision, the status and the duration. A failure to write is logged, never fatal:
/// the audit must not change what the call does.
#[derive(Debug)]
pub struct AuditLog {
    path: std::path::PathBuf,
    file: std::sync::Mutex<Option<std::fs::File>>,
}

impl AuditLog {
    /// The audit log of a workspace.
    pub fn in_workspace(workspace: &std::path::Path) -> Self {
        AuditLog::at(crate::state_dir::in_workspace(workspace).join("audit.jsonl"))
    }

    pub fn at(path: std::path::PathBuf) -> Self {
        AuditLog {
            path,
            file: std::sync::Mutex::new(None),
        }
    }

    fn append(&self, line: &str) -> std::io::Result<()> {
        use std::io::Write;
        let mut guard = self
            .file
            .lock()
            .map_err(|_| std::io::Error::other("audit log lock poisoned"))?;
        if guard.is_none() {
            if let Some(dir) = self.path.parent() {
                crate::state_dir::create(dir)?;
            }
            let file = crate::state_dir::open_append(&self.path)?;
            *guard = Some(file);
        }
        match guard.as_mut() {
            // One write per line, to a file opened for appending: concurrent codecrew
            // processes interleave whole lines, never parts of them.
            Some(file) => file.write_all(format!("{line}\n").as_bytes()),
            None => Ok(()),
        }
    }
}

/// The SHA-256 of a value's JSON text, in hex.
pub fn digest(input: &Value) -> String {
    use sha2::{Digest, Sha256};
    let hash = Sha256::digest(input.to_string().as_bytes());
    hash.iter().map(|byte| format!("{byte:02x}")).collect()
}

impl Middleware for AuditLog {
    fn after(&self, call: &CallInfo, result: &ToolResult) {
        let seconds = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        let decision = match result.status {
            super::Status::Denied => "deny",
            super::Status::Ok | super::Status::Error => "allow",
        };
        let line = serde_json::json!({
            "time": seconds,
            "id": call.id,
            "tool": call.tool,
            "mode": call.mode.name(),
            "input_sha256": digest(&call.input),
            "decision": decision,
            "status": result.status,
            "error": result.error.as_ref().map(|e| e.code),
            "duration_ms": result.duration_ms,
        });
        if let Err(error) = self.append(&line.to_string()) {
            tracing::warn!(
                "cannot write the audit log {}: {error}",
                self.path.display()
            );
        }
    }
}
