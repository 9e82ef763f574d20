//! The turns of one task: the loop [`JobRun::run_turns`] and its steps. Each turn sends
//! the prompt (the task's, then the results'), reads what the CLI says, and then either
//! ends the job (an answer, a failure, the turn limit) or runs the calls and goes on.

use std::path::Path;
use std::time::Instant;

use tokio::sync::watch;

use super::failure::{self, Recovery, Situation, TurnFailure};
use super::shaped::Shaped;
use super::turn::{TurnState, quieted};
use super::{
    Conversation, Failure, JobEvent, JobReport, JobRun, JobStream, ReportedCall, StopReason,
    caller, rejection_line, result_line, sub_agent_usage,
};
use crate::prompt;
use crate::schema::AnswerShape;
use crate::usage::Usage;
use codecrew_agents::Turn;
use codecrew_agents::drive::process::{Outcome, RunLimits, SpawnError};
use codecrew_agents::drive::refused;
use codecrew_agents::drive::transport::{Output, Transport};
use codecrew_config::PromptStyle;
use codecrew_intercept::{Echoes, Interceptor};
use codecrew_tools::ErrorCode;
use codecrew_tools::executor::CallRequest;

/// The longest tools section given as a system prompt, on the CLI's command line (one
/// argument holds at most 128 KiB; a project's instructions may follow it there).
const MAX_SYSTEM_PROMPT: usize = 32 * 1024;

/// What the loop carries from one turn to the next.
struct Course {
    /// The next prompt: the task's, then each turn's results.
    prompt: String,
    /// The tools section as the CLI's own system prompt, for a CLI that takes one
    /// ([`codecrew_agents::Provider::takes_system_prompt`]); the task's prompt then
    /// carries none.
    system: Option<String>,
    /// For CLIs that cannot resume: everything said so far, resent each turn.
    transcript: String,
    limits: RunLimits,
    /// What the conversation's tool results held that looks like a call, taken from the
    /// [`Conversation`] for the task and given back at its end.
    echoes: Echoes,
    /// The run's `--schema` in the form the CLI's own mechanism takes, if it has one.
    native_schema: Option<serde_json::Value>,
    /// Whether the next turn asks for the answer's document alone (a re-ask): only then
    /// does the CLI get [`Course::native_schema`], which would forbid codecrew's calls.
    answer_only: bool,
    /// The shape the task's final answer must have, if any.
    answer: Option<AnswerShape>,
}

impl JobRun {
    /// The turns of one task through `transport`, from where `conversation` stands.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn run_turns<'a>(
        &'a self,
        task: &str,
        answer: Option<&AnswerShape>,
        conversation: &mut Conversation,
        transport: &mut Transport<'a>,
        stream: &JobStream,
        cancel: watch::Receiver<bool>,
        started: Instant,
    ) -> JobReport {
        let mut report = self.report(started);
        let mut course = self.open(task, answer, conversation, &mut report);
        // How often an answer that did not fit the schema was asked for again.
        let mut asked_again = 0;
        loop {
            report.turns += 1;
            stream.send(JobEvent::Turn(report.turns));
            let resuming = self.provider.can_resume() && report.session_id.is_some();
            let (mut turn, outcome) = self
                .one_turn(&course, &report, resuming, transport, stream, &cancel)
                .await;
            self.take_session_and_usage(&mut turn, &mut report, conversation, transport);
            stream.send(JobEvent::TurnEnd {
                turn: report.turns,
                usage: turn.usage,
                context_window: turn.context_window,
            });
            report.response = turn.text.trim().to_owned();
            let outcome = match outcome {
                Ok(outcome) => outcome,
                Err(error) => {
                    report.error = Some(error.to_string());
                    break;
                }
            };
            if let Some(failure) = TurnFailure::of(&outcome, &turn, &course.limits) {
                let said = format!("{failure}\n{}", outcome.stderr_tail);
                if course.answer_only
                    && course.native_schema.is_some()
                    && self.provider.refused_native_schema(&said)
                {
                    // The model cannot take the schema natively: the same ask again,
                    // codecrew's check alone holding the answer to it.
                    tracing::info!(agent = %self.job.agent, "{said}: asking again without the CLI's schema");
                    course.native_schema = None;
                    report.turns -= 1;
                    continue;
                }
                let error = self.explain(&failure, &outcome, transport.program(), &mut report);
                let at = Situation {
                    turn: report.turns,
                    kept: transport.keeps_alive(),
                    resuming,
                    silent: turn.text.is_empty() && turn.calls.is_empty(),
                };
                match failure.recovery(at) {
                    Recovery::RetryInNewProcess => {
                        stream.send(JobEvent::Retry(format!(
                            "{error}; the CLI kept for the loop ended, so this turn runs \
                                 again in a new process that resumes the session"
                        )));
                        transport.per_turn().await;
                        report.turns -= 1;
                    }
                    Recovery::StartFresh => {
                        stream.send(JobEvent::Retry(format!(
                            "could not resume the thread's session ({error}); starting a \
                                 new session with the thread's earlier exchanges"
                        )));
                        report.session_id = None;
                        conversation.session_usage = Usage::default();
                        report.turns = 0;
                        transport.reset().await;
                        course.transcript = prompt::render_earlier(&conversation.earlier);
                    }
                    Recovery::Stop => {
                        if let Some(reason) = failure.stop_reason() {
                            report.stop_reason = reason;
                        }
                        if failure.timed_out() {
                            report.failure = Some(Failure::TimedOut);
                        }
                        stream.send(JobEvent::Notice(error.clone()));
                        report.error = Some(error);
                        break;
                    }
                }
                continue;
            }
            if turn.calls.is_empty() && turn.rejected.is_empty() {
                // The CLI was held to a rewritten form of the schema (Codex's strict one).
                let rewritten = course.answer_only
                    && course.native_schema.as_ref()
                        != course.answer.as_ref().map(|shape| shape.schema.json());
                let shape = course.answer.clone();
                match self.shaped(
                    &turn,
                    shape.as_ref(),
                    rewritten,
                    &mut report,
                    &mut asked_again,
                    stream,
                ) {
                    Shaped::Final => break,
                    Shaped::AskAgain(prompt) => {
                        self.remember_turn(&mut course, &report, &turn);
                        course.prompt = prompt;
                        course.answer_only = true;
                        continue;
                    }
                }
            }
            let results = self
                .run_calls(&turn, &mut report, &mut course.echoes, stream, &cancel)
                .await;
            if report.turns >= self.settings.max_turns {
                report.stop_reason = StopReason::MaxTurns;
                if self.settings.max_turns == 1 && course.answer.is_none() {
                    // One turn: the results are the answer the user asked for (as the
                    // original CodeCrew did).
                    report.success = true;
                    report.response = results;
                } else {
                    // The model was still calling tools: it never answered, and saying
                    // it succeeded would hand the user an empty or half answer (under
                    // --schema, the results of one turn are no answer to check either).
                    report.error = Some(max_turns_error(self.settings.max_turns, &turn));
                    report.error_code = Some(ErrorCode::MaxTurns);
                }
                break;
            }
            self.remember_turn(&mut course, &report, &turn);
            course.prompt = prompt::render_results(&results);
            course.answer_only = false;
        }
        conversation.echoes = course.echoes;
        report
    }

    /// For a CLI that cannot resume its session: this turn's prompt and answer added to
    /// the transcript the next turn resends. This turn's own prompt only: the turn's
    /// prompt already held the transcript, and appending it would double it every turn.
    fn remember_turn(&self, course: &mut Course, report: &JobReport, turn: &TurnState) {
        if self.provider.can_resume() && report.session_id.is_some() {
            return;
        }
        course.transcript = format!(
            "{transcript}{sep}{prompt}\n\n## Your previous answer\n\n{answer}",
            transcript = course.transcript,
            sep = if course.transcript.is_empty() {
                ""
            } else {
                "\n\n"
            },
            prompt = course.prompt,
            answer = turn.raw_text.trim(),
        );
    }

    /// The task's prompt, and where the conversation goes on from: the CLI's own session
    /// when it can resume one, else the earlier exchanges as the transcript.
    fn open(
        &self,
        task: &str,
        answer: Option<&AnswerShape>,
        conversation: &mut Conversation,
        report: &mut JobReport,
    ) -> Course {
        let catalog = self.executor.catalog();
        let style = self.provider.agent.prompt.unwrap_or_default();
        let tools = prompt::render_tools(catalog, self.settings.mode, style);
        // Said once, as the CLI's system prompt, where the CLI takes one: every task of a
        // kept CLI (a chat's lines) then costs its words alone. Only codecrew's own words
        // go there: a tool an MCP server or a configuration describes is text codecrew did
        // not write (a server's description may say anything), and it stays in the
        // message, as a user's words, with the rest of the section. So does a section too
        // long for a command line.
        let own_words = catalog.tools().all(|tool| tool.is_codecrews());
        let (mut prompt, system) =
            if self.provider.takes_system_prompt() && own_words && tools.len() <= MAX_SYSTEM_PROMPT
            {
                (task.trim().to_owned(), Some(tools))
            } else {
                (prompt::with_tools_section(&tools, task), None)
            };
        if let Some(shape) = answer {
            prompt.push_str(&prompt::render_schema(shape.schema.json()));
        }
        if let Some(system) = &self.provider.agent.system_prompt {
            prompt = format!("{}\n\n{prompt}", system.trim());
        }
        if self.provider.can_resume() {
            report.session_id = conversation
                .session_id
                .as_deref()
                .and_then(|id| self.usable_session(id, "stored"));
        }
        let transcript = if report.session_id.is_some() {
            String::new()
        } else {
            prompt::render_earlier(&conversation.earlier)
        };
        // The session's usage as last reported, for CLIs whose figures count the session.
        if report.session_id.is_none() {
            conversation.session_usage = Usage::default();
        }
        Course {
            prompt,
            system,
            transcript,
            limits: RunLimits {
                timeout: self.settings.turn_timeout,
                max_stdout_bytes: self.settings.max_stdout_bytes,
            },
            echoes: std::mem::take(&mut conversation.echoes),
            // Checked when the job was planned: a CLI that cannot take it never starts (a
            // chat's /schema it cannot take is left to codecrew's check alone).
            native_schema: answer
                .and_then(|shape| self.provider.native_schema(shape.schema.json()).ok())
                .flatten(),
            answer_only: false,
            answer: answer.cloned(),
        }
    }

    /// One turn: the prompt sent, the CLI's output decoded and intercepted as it comes,
    /// its events passed on. A rejected envelope that repeats what the conversation's
    /// tool results held is the model's text ([`quieted`]).
    async fn one_turn<'a>(
        &'a self,
        course: &Course,
        report: &JobReport,
        resuming: bool,
        transport: &mut Transport<'a>,
        stream: &JobStream,
        cancel: &watch::Receiver<bool>,
    ) -> (TurnState, Result<Outcome, SpawnError>) {
        let echoes = &course.echoes;
        let turn_prompt = if resuming || course.transcript.is_empty() {
            course.prompt.clone()
        } else {
            format!("{}\n\n{}", course.transcript, course.prompt)
        };
        let this_turn = Turn {
            prompt: &turn_prompt,
            session: if resuming {
                report.session_id.as_deref()
            } else {
                None
            },
            mode: self.settings.mode,
            model: self.job.model.as_deref(),
            assume_yes: self.executor.assumes_yes(),
            schema: course.native_schema.as_ref().filter(|_| course.answer_only),
            system: course.system.as_deref(),
        };
        let mut turn = TurnState::default();
        let mut interceptor = Interceptor::new(transport.format(), self.settings.scanner.clone());
        let mut items = Vec::new();
        let outcome = transport
            .turn(&this_turn, &course.limits, cancel.clone(), |output| {
                match output {
                    Output::Bytes(bytes) => interceptor.feed(bytes, &mut items),
                    Output::Events(decoded) => interceptor.feed_events(decoded, &mut items),
                }
                for item in items.drain(..) {
                    turn.take(quieted(item, echoes), |event| stream.send(event));
                }
                turn.finished
            })
            .await;
        interceptor.finish(&mut items);
        for item in items.drain(..) {
            turn.take(quieted(item, echoes), |event| stream.send(event));
        }
        (turn, outcome)
    }

    /// The session the CLI reported (when it has the CLI's shape), and what the turn
    /// used: the job's own part, whatever the CLI counts.
    fn take_session_and_usage(
        &self,
        turn: &mut TurnState,
        report: &mut JobReport,
        conversation: &mut Conversation,
        transport: &mut Transport<'_>,
    ) {
        if let Some(id) = turn
            .session
            .take()
            .and_then(|id| self.usable_session(&id, "reported"))
        {
            report.session_id = Some(id);
        }
        let Some(usage) = &mut turn.usage else {
            return;
        };
        *usage = transport.own_part(*usage);
        let session_usage = &mut conversation.session_usage;
        if transport.reported_session_total() {
            let whole = *usage;
            *usage = whole.since(session_usage);
            *session_usage = whole;
        } else if self.provider.reports_session_usage() {
            // A kept turn reported its own part: the running total a later run per turn
            // reports includes it.
            session_usage.add(usage);
        }
        report.usage.reported.add(usage);
    }

    /// The failure as the user reads it: with how to fix a wall that refused the CLI
    /// (and its error code), or the CLI's own hint.
    fn explain(
        &self,
        failure: &TurnFailure,
        outcome: &Outcome,
        program: &Path,
        report: &mut JobReport,
    ) -> String {
        let error = failure.to_string();
        let mut readable = vec![self.settings.workspace.clone()];
        readable.extend(self.executor.policy().cli_read().iter().cloned());
        let refused = self.provider.is_walled()
            && refused::looks_refused_by(
                program,
                &outcome.ending,
                outcome.stdout_bytes,
                &outcome.stderr_tail,
                &readable,
            );
        if refused {
            report.error_code = Some(refused::CODE);
            return format!(
                "{error}; {}",
                refused::advice(program, &outcome.stderr_tail, &readable)
            );
        }
        let said = format!("{error}\n{}", outcome.stderr_tail);
        if failure::says_context_exceeded(&said) {
            report.error_code = Some(ErrorCode::ContextExceeded);
            return format!("{error}; {}", self.context_advice());
        }
        match self.provider.failure_hint(&said) {
            Some(hint) => format!("{error}; {hint}"),
            None => error,
        }
    }

    /// What to do when the prompt does not fit the model's context window.
    fn context_advice(&self) -> String {
        let id = &self.provider.agent_id;
        match self.provider.agent.prompt.unwrap_or_default() {
            PromptStyle::Full => format!(
                "the prompt does not fit the model's context window: give @{id} codecrew's \
                 compact prompt (about a fifth of its tokens) with `prompt = \"compact\"` \
                 under [agents.{id}] in your config, use a model with a larger window, or \
                 ask for less at once"
            ),
            PromptStyle::Compact => format!(
                "even codecrew's compact prompt does not fit the model's context window: \
                 give @{id} a model (or a server setting) with a larger window; the compact \
                 prompt takes about 500 tokens, and the answer needs room too"
            ),
        }
    }

    /// Runs the turn's calls, made by this job (a sub-agent a call starts reaches its
    /// caller through the scope handed with them), and records them, and what their results held in `echoes`; the results
    /// and rejections as the model reads them.
    async fn run_calls(
        &self,
        turn: &TurnState,
        report: &mut JobReport,
        echoes: &mut Echoes,
        stream: &JobStream,
        cancel: &watch::Receiver<bool>,
    ) -> String {
        let requests: Vec<CallRequest> = turn
            .calls
            .iter()
            .map(|(id, call)| CallRequest {
                id: id.clone(),
                tool: call.tool.clone(),
                input: call.input.clone(),
            })
            .collect();
        let caller = caller::CallerScope {
            stream: stream.clone(),
            depth: self.settings.depth,
            cancel: cancel.clone(),
        };
        let caller = caller.into_caller();
        let results = self.executor.call_all_by(&requests, Some(&caller)).await;
        let mut lines = Vec::new();
        for ((id, call), result) in turn.calls.iter().zip(&results) {
            stream.send(JobEvent::ToolResult(result.clone()));
            if let Some(sub) = sub_agent_usage(result) {
                report.usage.add_sub_agent(&sub);
            }
            if let Ok(seen) = serde_json::to_value(result) {
                echoes.remember(&seen);
            }
            lines.push(result_line(result));
            report.tool_calls.push(ReportedCall {
                id: id.clone(),
                name: call.name.clone(),
                input: call.input.clone(),
                status: result.status,
                output: result.output.clone(),
                error: result.error.clone(),
                duration_ms: result.duration_ms,
            });
        }
        for rejection in &turn.rejected {
            lines.push(rejection_line(rejection));
        }
        lines.join("\n")
    }
}

/// Why a job stopped at its turn limit is no answer, and what to do.
fn max_turns_error(max_turns: u32, last: &TurnState) -> String {
    let calls = last.calls.len();
    let rejected = last.rejected.len();
    let last_turn = match (calls, rejected) {
        (0, n) => format!("its last turn's {n} envelope(s) were rejected"),
        (n, 0) => format!("its last turn's {n} call(s) ran"),
        (n, m) => format!("its last turn's {n} call(s) ran and {m} envelope(s) were rejected"),
    };
    format!(
        "stopped at the turn limit ({max_turns}) while the model was still calling tools, \
         so it gave no answer ({last_turn}); raise --max-turns (or max_turns under [limits] \
         in the config) to let it finish"
    )
}
