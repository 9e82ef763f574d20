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
    /// A turn's CLI run ended; what it reported it used (`None`: nothing reported), and
    /// its model's context window in tokens where the CLI said (Claude Code).
    TurnEnd {
        turn: u32,
        usage: Option<Usage>,
        context_window: Option<u64>,
    },
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
    /// What went wrong with a turn, and that codecrew asks it again (an answer that does
    /// not fit `--schema`) or runs it again (a kept CLI that ended, a session that cannot
    /// be resumed): the job goes on, unlike after a [`JobEvent::Notice`].
    Retry(String),
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
pub struct ReportedCall {
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
    pub tool_calls: Vec<ReportedCall>,
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
    /// Why the job did not answer (absent when it did): what the front ends tell apart,
    /// and the exit code ([`exit_code`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// The answer's JSON document, checked against the run's `--schema` (absent without
    /// one, or when no answer fitted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// What the checker found wrong with the last answer, when none fitted the schema.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub schema_errors: Vec<String>,
}

/// Why a job did not answer, as a front end tells the cases apart. Ordered from the
/// mildest to the one a command's exit code says first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// The CLI failed (an error, a crash, a flood, no answer); the error says how.
    Failed,
    /// The turn limit was reached with calls still coming.
    MaxTurns,
    /// The agent's CLI is not installed.
    MissingCli,
    /// A turn took longer than its timeout; the CLI was stopped.
    TimedOut,
    /// No answer fitted the run's `--schema`, asked again as often as it allows.
    SchemaMismatch,
    /// The user interrupted it.
    Interrupted,
}

impl Failure {
    /// The exit code of a command that ended with this failure: 1, 3 CLI missing, 124
    /// timed out, 65 no answer fitted the schema (sysexits' EX_DATAERR), 130 interrupted.
    pub fn exit_code(self) -> u8 {
        match self {
            Failure::Failed | Failure::MaxTurns => 1,
            Failure::MissingCli => 3,
            Failure::TimedOut => 124,
            Failure::SchemaMismatch => EXIT_SCHEMA_MISMATCH,
            Failure::Interrupted => 130,
        }
    }
}

/// The exit code of a command none of whose answers fitted its `--schema` (when that is
/// its gravest failure): sysexits' EX_DATAERR, used by nothing else in codecrew.
pub const EXIT_SCHEMA_MISMATCH: u8 = 65;

/// The exit code of a command whose `expected` jobs ended with `reports`: the code of
/// the gravest failure (interrupted > no answer fitted the schema > timed out > CLI
/// missing > any other), 1 when a job
/// ended without a report, 0 when every job answered. The one place a job's failure
/// becomes an exit code.
pub fn exit_code(reports: &[JobReport], expected: usize) -> u8 {
    match reports.iter().filter_map(|report| report.failure).max() {
        Some(failure) => failure.exit_code(),
        None if reports.len() < expected => 1,
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(failure: Option<Failure>) -> JobReport {
        JobReport {
            agent: "claude".to_owned(),
            provider: "claude".to_owned(),
            model: None,
            mode: Mode::Query,
            success: failure.is_none(),
            response: String::new(),
            turns: 1,
            tool_calls: Vec::new(),
            session_id: None,
            duration_ms: 0,
            error: None,
            error_code: None,
            stop_reason: StopReason::Answered,
            usage: JobUsage::default(),
            failure,
            data: None,
            schema_errors: Vec::new(),
        }
    }

    #[test]
    fn the_gravest_failure_gives_the_exit_code() {
        use Failure::*;
        let code = |failures: &[Option<Failure>]| {
            let reports: Vec<JobReport> = failures.iter().map(|f| ended(*f)).collect();
            exit_code(&reports, reports.len())
        };
        assert_eq!(code(&[None, None]), 0);
        assert_eq!(code(&[None, Some(Failed)]), 1);
        assert_eq!(code(&[Some(MaxTurns)]), 1);
        assert_eq!(code(&[Some(Failed), Some(MissingCli)]), 3);
        assert_eq!(code(&[Some(MissingCli), Some(TimedOut), None]), 124);
        assert_eq!(code(&[Some(TimedOut), Some(Interrupted)]), 130);
        assert_eq!(code(&[None, Some(SchemaMismatch)]), 65);
        assert_eq!(code(&[Some(TimedOut), Some(SchemaMismatch)]), 65);
        assert_eq!(code(&[Some(SchemaMismatch), Some(Interrupted)]), 130);
    }

    #[test]
    fn a_job_that_ended_without_a_report_is_a_failure() {
        assert_eq!(exit_code(&[ended(None)], 2), 1);
        assert_eq!(exit_code(&[], 1), 1);
        assert_eq!(exit_code(&[ended(Some(Failure::TimedOut))], 2), 124);
    }

    #[test]
    fn the_failure_is_in_the_json_only_when_there_is_one() {
        let answered = serde_json::to_value(ended(None)).unwrap();
        assert!(answered.get("failure").is_none());
        let missing = serde_json::to_value(ended(Some(Failure::MissingCli))).unwrap();
        assert_eq!(missing["failure"], "missing_cli");
    }
}
