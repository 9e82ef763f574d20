//! The stable codes of [`ToolError`](super::ToolError)s: one enum, written once as the
//! `E_…` strings models, scripts and the docs already know.
//!
//! A code is serialised (and displayed) as its string, `E_NOT_FOUND`, so `--output json`,
//! the results fed back to models, the MCP server's answers and the audit log read as they
//! always have. Nothing in codecrew reads a code back from outside (results of remote MCP
//! servers become [`ErrorCode::McpToolError`], threads keep no tool errors), so reading an
//! unknown string is an error rather than a catch-all variant.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Declares [`ErrorCode`] from one table, so that each variant's string is written once
/// and [`ErrorCode::ALL`] cannot miss a variant.
macro_rules! error_codes {
    ($($(#[doc = $doc:literal])+ $variant:ident = $code:literal,)+) => {
        /// Why a call (or a job) failed, as a stable code the model and scripts can act
        /// on. The variant's documentation says where codecrew uses it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $($(#[doc = $doc])+ $variant,)+
        }

        impl ErrorCode {
            /// Every code, in the order of the table.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)+];

            /// The code as it is serialised: `E_` and upper case.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $code,)+
                }
            }
        }
    };
}

error_codes! {
    // What the call asked for.
    /// The input does not match the tool's schema, or a field's value is out of range or
    /// malformed (`tools call` input that is not JSON, an agent call without a task).
    InvalidInput = "E_INVALID_INPUT",
    /// A path that names no file: empty, holding a NUL byte, or ending in `..` where a
    /// file is to be written.
    InvalidPath = "E_INVALID_PATH",
    /// A glob or regular expression that does not compile.
    InvalidPattern = "E_INVALID_PATTERN",
    /// There is no tool of that name at all.
    UnknownTool = "E_UNKNOWN_TOOL",
    /// The tool exists but this run does not offer it (a writing tool in `query`).
    ToolNotInCatalog = "E_TOOL_NOT_IN_CATALOG",
    /// The help tool was asked about a command codecrew does not have.
    UnknownCommand = "E_UNKNOWN_COMMAND",

    // The workspace boundary and the permission layer.
    /// A path that resolves outside the workspace root (by `..`, an absolute path, or a
    /// link that leads out).
    PathOutsideWorkspace = "E_PATH_OUTSIDE_WORKSPACE",
    /// A write through a symbolic link, or through a link whose target does not exist.
    Symlink = "E_SYMLINK",
    /// The path changed between the check and the use (a directory or file swapped for a
    /// link), so the kernel refused to open it beneath the workspace.
    PathChanged = "E_PATH_CHANGED",
    /// Denied: by a rule or the deny list, by the user, for want of a terminal to ask on,
    /// by `query` mode, or a path that only reaches a sensitive or protected file through
    /// a link or a hard link.
    PermissionDenied = "E_PERMISSION_DENIED",
    /// A command that may run only in the read-only OS sandbox, where that sandbox is not
    /// available, or a sandbox that could not be set up; nothing ran.
    Sandbox = "E_SANDBOX",

    // The file a tool was pointed at.
    /// The file or directory does not exist.
    NotFound = "E_NOT_FOUND",
    /// Not a regular file: a FIFO, socket or device, which codecrew never opens.
    NotAFile = "E_NOT_A_FILE",
    /// A directory was expected, or a component of the path is not one.
    NotADirectory = "E_NOT_A_DIRECTORY",
    /// A file was expected and the path is a directory.
    IsADirectory = "E_IS_A_DIRECTORY",
    /// `edit_file` was given a file that is not UTF-8 text.
    NotText = "E_NOT_TEXT",
    /// `edit_file` was given a file above its size limit.
    FileTooLarge = "E_FILE_TOO_LARGE",
    /// `edit_file`'s `old_string` does not occur in the file.
    NoMatch = "E_NO_MATCH",
    /// `edit_file`'s `old_string` occurs more than once and `replace_all` was not given.
    AmbiguousMatch = "E_AMBIGUOUS_MATCH",
    /// `edit_file`'s `old_string` and `new_string` are the same: nothing would change.
    NoChange = "E_NO_CHANGE",
    /// Any other I/O error, its text in the message.
    Io = "E_IO",

    // Running a tool.
    /// The call did not finish in time (the executor's limit, a command's or an MCP
    /// server's timeout).
    Timeout = "E_TIMEOUT",
    /// The program of a command or of a `[tools.*]` tool could not be started.
    Spawn = "E_SPAWN",
    /// A `[tools.*]` program exited with a failure or was killed by a signal.
    ToolFailed = "E_TOOL_FAILED",
    /// A `[tools.*]` tool's configuration cannot work (its working directory is missing).
    ToolConfig = "E_TOOL_CONFIG",
    /// codecrew itself failed (a task that panicked, input it could not encode, a result
    /// without an error); not the model's fault.
    Internal = "E_INTERNAL",

    // MCP servers codecrew is a client of.
    /// The MCP server did not start, or is not running any more.
    McpUnavailable = "E_MCP_UNAVAILABLE",
    /// The MCP server refused the call or its tool reported an error.
    McpToolError = "E_MCP_TOOL_ERROR",
    /// The MCP server answered with something codecrew cannot follow (a request for user
    /// input, a long-running task).
    McpUnsupported = "E_MCP_UNSUPPORTED",
    /// The MCP server broke the protocol.
    McpProtocol = "E_MCP_PROTOCOL",

    // Agents that call agents (`query_agent`, `execute_agent`).
    /// The agent's job could not be run (an unknown agent, its CLI failing).
    Agent = "E_AGENT",
    /// The run is ending, so no agent can be started.
    Unavailable = "E_UNAVAILABLE",
    /// Agents called agents as deep as codecrew allows.
    DepthLimit = "E_DEPTH_LIMIT",

    // Outside a tool call.
    /// A call envelope in the model's text that cannot run (malformed JSON, a missing
    /// field); the model is told why, never asked to write it again.
    RejectedEnvelope = "E_REJECTED_ENVELOPE",
    /// An agent CLI could not start inside its wall (a job's `error_code` in
    /// `--output json`).
    CliWallRefused = "E_CLI_WALL_REFUSED",
    /// A job reached its turn limit (`--max-turns`) while its model was still calling
    /// tools, so it gave no answer (a job's `error_code`).
    MaxTurns = "E_MAX_TURNS",
    /// The agent's CLI said the prompt does not fit its model's context window (a job's
    /// `error_code`); the compact prompt (`prompt = "compact"`) may.
    ContextExceeded = "E_CONTEXT_EXCEEDED",
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is no [`ErrorCode`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a codecrew error code")]
pub struct UnknownCode(pub String);

impl FromStr for ErrorCode {
    type Err = UnknownCode;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        ErrorCode::ALL
            .iter()
            .copied()
            .find(|code| code.as_str() == text)
            .ok_or_else(|| UnknownCode(text.to_owned()))
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}
