//! The session loop for one job: prompt → run the CLI → decode and intercept live →
//! execute the calls → send the results back to the same session → until the model
//! answers without a call or the turn limit is reached.
//!
//! This is the only module that knows the order of the steps. It reports what happens as
//! [`JobEvent`]s (for live display) and returns a [`JobReport`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};

use crate::mention::Job;
use codecrew_agents::drive::transport::{Launch, Transport};
use codecrew_agents::{self as clis, Provider};
use codecrew_config::LimitsConfig;

pub mod caller;
mod conversation;
mod failure;
mod report;
mod shaped;
mod stream;
mod turn;
mod turns;

pub use conversation::{Continuation, Conversation};
pub use report::{Failure, JobEvent, JobReport, ReportedCall, StopReason, SubEvent, exit_code};
pub use stream::{JobLog, JobStream};

use crate::schema::AnswerShape;
use crate::usage::JobUsage;
use codecrew_intercept::{Rejection, ScannerLimits};
use codecrew_policy::sandbox::LinkedGit;
use codecrew_tools::{ErrorCode, Mode, ToolExecutor, ToolResult};

/// How one job runs.
#[derive(Debug, Clone)]
pub struct Settings {
    pub mode: Mode,
    pub max_turns: u32,
    pub turn_timeout: Duration,
    pub workspace: PathBuf,
    pub scanner: ScannerLimits,
    /// Stdout bytes per turn after which a CLI is stopped as flooding.
    pub max_stdout_bytes: u64,
    /// Variables set for the agent's CLI on top of what it inherits (`codecrew mcp` counts
    /// its nesting depth this way).
    pub env: Vec<(OsString, OsString)>,
    /// How many agents delegated to reach this job (0: a job of the command line).
    pub depth: u32,
    /// In a linked worktree codecrew made ([`crate::worktree`]): its repository's git
    /// data, which the CLI's wall and the job's commands may reach. Empty elsewhere.
    pub git: LinkedGit,
    /// The shape the final answer must have (`--schema`), checked and asked again.
    pub answer: Option<AnswerShape>,
}

/// Where a job works when not in the run's workspace: a git worktree codecrew made for
/// it, and what it may reach of that worktree's repository.
#[derive(Debug, Clone)]
pub struct Place {
    pub workspace: PathBuf,
    pub git: LinkedGit,
}

/// Stdout bytes one CLI turn may print before it is stopped as flooding.
pub const DEFAULT_MAX_STDOUT_BYTES: u64 = 256 * 1024 * 1024;

impl Settings {
    /// The settings the configuration's limits give; callers apply their flags on top.
    pub fn new(mode: Mode, limits: &LimitsConfig, workspace: PathBuf) -> Self {
        Settings {
            mode,
            max_turns: limits.max_turns,
            turn_timeout: limits.turn_timeout(),
            workspace,
            scanner: ScannerLimits {
                max_calls_per_message: limits.max_calls_per_message,
                ..ScannerLimits::default()
            },
            max_stdout_bytes: DEFAULT_MAX_STDOUT_BYTES,
            env: Vec::new(),
            depth: 0,
            git: LinkedGit::default(),
            answer: None,
        }
    }
}

/// Sends a job's events to whoever displays them.
pub type EventSender = mpsc::UnboundedSender<(usize, JobEvent)>;

/// One job with everything it needs.
pub struct JobRun {
    /// The job's position on the command line; events carry it.
    pub index: usize,
    pub job: Job,
    pub provider: Provider,
    pub executor: Arc<ToolExecutor>,
    pub settings: Settings,
    pub continuation: Continuation,
}

impl JobRun {
    /// A session id (`stored`: from a thread or an earlier line of a chat; `reported`: by
    /// the CLI) when it has the shape of the CLI's ids. Another is never put on the CLI's
    /// command line, where it could be read as an option: the conversation then goes on
    /// from its transcript, and the user is told.
    fn usable_session(&self, id: &str, origin: &str) -> Option<String> {
        match self.provider.checked_session(id) {
            Ok(id) => Some(id.to_owned()),
            Err(why) => {
                tracing::warn!(
                    agent = %self.provider.agent_id,
                    "{why}: the {origin} session is not resumed"
                );
                None
            }
        }
    }

    /// The model the job runs: the one its mention named, else its agent's.
    pub fn model(&self) -> Option<String> {
        self.provider
            .model(self.job.model.as_deref())
            .map(str::to_owned)
    }

    fn report(&self, started: Instant) -> JobReport {
        JobReport {
            agent: self.job.agent.clone(),
            provider: self.provider.kind().name().to_owned(),
            model: self.model(),
            mode: self.settings.mode,
            success: false,
            response: String::new(),
            turns: 0,
            tool_calls: Vec::new(),
            session_id: None,
            duration_ms: elapsed_ms(started),
            error: None,
            error_code: None,
            stop_reason: StopReason::Error,
            usage: JobUsage::default(),
            failure: None,
            data: None,
            schema_errors: Vec::new(),
        }
    }

    /// Runs the job to its end. Never fails: every failure is in the report.
    pub async fn run(self, stream: JobStream, cancel: watch::Receiver<bool>) -> JobReport {
        let mut answer = None;
        self.run_reporting(stream, cancel, |report| answer = Some(report))
            .await;
        answer.unwrap_or_else(|| self.report(Instant::now()))
    }

    /// Runs the job to its end, giving `answered` the report as soon as the answer is
    /// final, before the CLI kept for the loop has shut down: a CLI takes tens of
    /// milliseconds to exit once its input is closed (Claude about 40), which the answer
    /// need not wait for. Returns once the CLI is gone.
    pub async fn run_reporting(
        &self,
        stream: JobStream,
        cancel: watch::Receiver<bool>,
        answered: impl FnOnce(JobReport),
    ) {
        let program = clis::locate(&self.provider);
        let (report, transport) = match &program {
            Some(program) => {
                let mut transport = self.transport(program);
                let mut conversation = Conversation::from(&self.continuation);
                let report = self
                    .run_task(
                        &self.job.task,
                        self.settings.answer.as_ref(),
                        &mut conversation,
                        &mut transport,
                        &stream,
                        cancel,
                    )
                    .await;
                (report, Some(transport))
            }
            None => (self.missing_cli(&self.job.task, &stream), None),
        };
        answered(report);
        if let Some(transport) = transport {
            transport.close().await;
        }
    }

    /// The answer to `task` of a job whose CLI is not installed (logged on `stream`).
    pub fn missing_cli(&self, task: &str, stream: &JobStream) -> JobReport {
        let started = Instant::now();
        let mut report = self.report(started);
        report.error = Some(clis::describe_missing(&self.provider));
        report.failure = Some(Failure::MissingCli);
        let report = self.finish_report(report, started, 0);
        stream.answered(task, &report);
        report
    }

    /// How this job's turns reach the CLI `program`: kept for every task it runs, until
    /// closed ([`Transport::close`], which also puts back what its wall held).
    pub fn transport<'a>(&'a self, program: &'a Path) -> Transport<'a> {
        Transport::new(
            Launch {
                provider: &self.provider,
                program,
                workspace: &self.settings.workspace,
                env: &self.settings.env,
                gate: Some(self.executor.as_ref()),
                reads: self.executor.policy().cli_read(),
                git: &self.settings.git,
            },
            self.settings.mode,
        )
    }

    /// Runs `task` to its answer through `transport`, going on from `conversation`
    /// (which then holds this exchange too), its events and its answer out on `stream`. A
    /// chat runs each of its lines so, over one transport: a kept CLI serves them all.
    /// `answer`: the shape this task's answer must have (`--schema`; a chat's `/schema`
    /// for one line), checked and asked again.
    pub async fn run_task<'a>(
        &'a self,
        task: &str,
        answer: Option<&AnswerShape>,
        conversation: &mut Conversation,
        transport: &mut Transport<'a>,
        stream: &JobStream,
        cancel: watch::Receiver<bool>,
    ) -> JobReport {
        let started = Instant::now();
        // The executor serves every task of a chat: this task's calls are those after now.
        let authorized_before = self.executor.authorized_calls();
        let report = self
            .run_turns(
                task,
                answer,
                conversation,
                transport,
                stream,
                cancel,
                started,
            )
            .await;
        if report.session_id.is_some() {
            conversation.session_id = report.session_id.clone();
        }
        if report.success {
            conversation
                .earlier
                .push((task.to_owned(), report.response.clone()));
        }
        let report = self.finish_report(report, started, authorized_before);
        stream.answered(task, &report);
        report
    }

    /// The report with its time and usage filled in; the CLI's own calls are those the
    /// executor authorized after `authorized_before`.
    fn finish_report(
        &self,
        mut report: JobReport,
        started: Instant,
        authorized_before: u64,
    ) -> JobReport {
        report.duration_ms = elapsed_ms(started);
        report.usage.turns = report.turns;
        report.usage.tool_calls = u32::try_from(report.tool_calls.len()).unwrap_or(u32::MAX);
        let authorized = self
            .executor
            .authorized_calls()
            .saturating_sub(authorized_before);
        report.usage.native_tool_calls = u32::try_from(authorized).unwrap_or(u32::MAX);
        report.usage.duration_ms = report.duration_ms;
        if !report.success && report.failure.is_none() {
            report.failure = Some(match report.stop_reason {
                StopReason::Interrupted => Failure::Interrupted,
                StopReason::MaxTurns => Failure::MaxTurns,
                StopReason::Answered | StopReason::Error => Failure::Failed,
            });
        }
        report
    }
}

/// What the sub-agent of a `query_agent`/`execute_agent` result used.
fn sub_agent_usage(result: &ToolResult) -> Option<JobUsage> {
    if result.tool != codecrew_config::agent_tools::QUERY_AGENT
        && result.tool != codecrew_config::agent_tools::EXECUTE_AGENT
    {
        return None;
    }
    serde_json::from_value(result.output.get("usage")?.clone()).ok()
}

/// A result as the model reads it. Its output is untrusted data (a file, a command's
/// output) and may hold an envelope: it is neutralised. codecrew's own error messages and
/// suggestions stay as they are, so that the model can copy a tool name from them; where
/// they quote a program (stderr, an MCP server's words) the quote was neutralised when
/// the message was made (`tool::child::Captured::tail`, the MCP client).
fn result_line(result: &ToolResult) -> String {
    let mut result = result.clone();
    codecrew_intercept::neutralise_value(&mut result.output);
    serde_json::to_string(&result).unwrap_or_default()
}

/// A rejected envelope as the model reads it: what was wrong, and that nothing ran. No
/// suggestion to write it again: the model may have been quoting what it read (a file's
/// envelope, broken or not), and codecrew asking for it would lend that text its voice.
fn rejection_line(rejection: &Rejection) -> String {
    let value = serde_json::json!({
        "status": "error",
        "error": {
            "code": ErrorCode::RejectedEnvelope,
            "message": format!("{}; it was not run", rejection.reason),
        },
        "raw": codecrew_intercept::neutralise_envelopes(
            &codecrew_tools::executor::truncate_chars(&rejection.raw, 1000)
        ),
    });
    value.to_string()
}

/// A new tool call's id, given where the call is found (in the model's text, or as a
/// client of `codecrew mcp` makes it): `call_` and 16 hex digits from the OS's random
/// source, as a run's id is made ([`crate::ids::random_hex`]). The call's events, its result
/// (`tool_call_id`), its row in the run store and its `toolCallId` in ACP all carry it.
///
/// Random rather than counted: a run's calls come from several jobs at once (the agents
/// of one command, the sub-agents they call), from every prompt of a chat or an editor's
/// session, and from another process when an editor loads its session again after a
/// restart; a counter would have to be handed to each and picked up where the store
/// left it, and a random id is unique within the run without either.
pub fn new_call_id() -> String {
    format!("call_{}", crate::ids::random_hex())
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}
