//! What a job says: the events it reports as it runs ([`JobEvent`]) and the report it
//! ends with ([`JobReport`]), which the front ends render and `--output json` prints.

use serde::Serialize;
use serde_json::Value;

use crate::usage::{JobUsage, Usage};
use codecrew_intercept::{Rejection, ToolCall};
use codecrew_tools::{ErrorCode, Mode, Status, ToolError, ToolResult};

/// What a running job reports, in order.
#[derive(Debug, Clone)]
pub enum JobEvent {
    /// A turn starts (1-based).
    Turn(u32),
    /// A turn's CLI run ended; what it reported it used (`None`: nothing reported).
    TurnEnd { turn: u32, usage: Option<Usage> },
    /// Assistant text, envelopes removed.
    Text(String),
    /// One assistant message ended.
    MessageEnd,
    /// A call found in the model's text, about to run, with the id it was given there
    /// ([`new_call_id`](super::new_call_id)): its result's `tool_call_id`, its row's
    /// `call_id` in the run store, its `toolCallId` in ACP.
    ToolCall { id: String, call: ToolCall },
    /// An envelope that cannot run.
    Rejected(Rejection),
    /// A call's result.
    ToolResult(ToolResult),
    /// Something the user should know that is not the model's text (a CLI error).
    Notice(String),
    /// An event of a sub-agent that one of this job's calls started.
    Sub(Box<SubEvent>),
    /// A call to one of the CLI's own tools (its Read, its shell), as the CLI reported
    /// it: run by the CLI (after codecrew's gate said yes), never by codecrew. `id` is
    /// codecrew's (as a [`JobEvent::ToolCall`]'s), whatever id the CLI gave it.
    NativeTool {
        id: String,
        name: String,
        input: Value,
    },
    /// The result of one of the CLI's own tools: `id` is its call's.
    NativeToolResult {
        id: String,
        output: String,
        is_error: bool,
    },
}

/// What a sub-agent (started by `query_agent`/`execute_agent`) reported.
#[derive(Debug, Clone)]
pub struct SubEvent {
    pub agent: String,
    /// 1 for an agent a job of the command line called, 2 for one it called in turn.
    pub depth: u32,
    pub event: JobEvent,
}

/// A call as the report shows it.
#[derive(Debug, Clone, Serialize)]
pub struct CallRecord {
    /// The call's id: its events' and its result's `tool_call_id`.
    pub id: String,
    pub name: String,
    pub input: Value,
    pub status: Status,
    pub output: Value,
    pub error: Option<ToolError>,
    pub duration_ms: u64,
}

/// Why a job stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without a call.
    Answered,
    /// The turn limit was reached.
    MaxTurns,
    /// The CLI failed, timed out, or was not found.
    Error,
    /// The user interrupted the run.
    Interrupted,
}

/// The result of one job.
#[derive(Debug, Clone, Serialize)]
pub struct JobReport {
    pub agent: String,
    pub provider: String,
    pub model: Option<String>,
    pub mode: Mode,
    pub success: bool,
    pub response: String,
    pub turns: u32,
    pub tool_calls: Vec<CallRecord>,
    pub session_id: Option<String>,
    pub duration_ms: u64,
    pub error: Option<String>,
    /// A stable code for some errors: `E_CLI_WALL_REFUSED` when the CLI could not start
    /// inside its wall ([`codecrew_agents::drive::refused`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
    pub stop_reason: StopReason,
    /// What the job used: the CLI's reported tokens and cost summed over its turns.
    pub usage: JobUsage,
    #[serde(skip)]
    pub timed_out: bool,
    #[serde(skip)]
    pub missing_cli: bool,
}
