//! What a decision needs to know about the run: its mode, its workspace, and how the
//! commands it starts run.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::Grant;

/// What a run may do. `query` never writes; `execute` may, under the permission policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Query,
    Execute,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Query => "query",
            Mode::Execute => "execute",
        }
    }
}

/// What a tool may know about the run that calls it.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The canonical workspace root; file tools never leave it.
    pub workspace: PathBuf,
    pub mode: Mode,
    /// How commands run (environment, network, OS sandbox).
    pub exec: ExecSettings,
    /// Who makes the call, as the one that runs the tools knows it (the engine: the job
    /// whose turn wrote the call). Opaque here: the tools that need it (the agent tools,
    /// which nest a sub-agent under its caller) know its type. The executor sets it for
    /// each call it is handed one for.
    pub caller: Option<Caller>,
}

/// A call's caller, as [`ToolContext::caller`] holds it.
pub type Caller = std::sync::Arc<dyn std::any::Any + Send + Sync>;

impl ToolContext {
    /// A context with the default command settings (scrubbed environment, sandbox on,
    /// no network).
    pub fn new(workspace: PathBuf, mode: Mode) -> Self {
        ToolContext {
            workspace,
            mode,
            exec: ExecSettings::default(),
            caller: None,
        }
    }
}

/// How `run_command` (and any tool that starts processes) runs them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecSettings {
    /// Variables passed through the environment scrub (`pass_env` in the config).
    pub pass_env: Vec<String>,
    /// Whether commands may use the network (`allow_network` in the config).
    pub allow_network: bool,
    /// Whether the OS sandbox confines commands (Linux Landlock, where the kernel has it).
    pub sandbox: bool,
    /// Who let the call that runs now through: the executor sets it for each call. A
    /// command of an [`Grant::Unattended`] call, and every command in `query`, runs in
    /// the read-only sandbox.
    pub grant: Grant,
    /// In a linked worktree codecrew made: its repository's git data, which commands
    /// may read (and, approved, write as a commit does). Empty elsewhere.
    pub git: crate::sandbox::LinkedGit,
}

impl ExecSettings {
    /// Whether a command started now runs in the read-only sandbox rather than the
    /// mode's: in `query` always, in `execute` when nobody approved the call.
    pub fn read_only(&self, mode: Mode) -> bool {
        mode == Mode::Query || self.grant == Grant::Unattended
    }
}

impl Default for ExecSettings {
    fn default() -> Self {
        ExecSettings {
            pass_env: Vec::new(),
            allow_network: false,
            sandbox: true,
            // What a tool run outside the executor (a test, a bench) gets: the mode's
            // sandbox, as an approved call.
            grant: Grant::Approved,
            git: crate::sandbox::LinkedGit::default(),
        }
    }
}
