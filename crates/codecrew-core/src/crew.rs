//! The crew: agents that consult each other. `query_agent` asks another agent, read-only;
//! `execute_agent` (execute mode only, asking unless allowed) has it do a task.
//!
//! ```text
//! a job's call ─ AgentTool ─> Crew::run_job ─> jobs::plan + JobRun (a job of the same runner)
//!                    ▲                             │ its events, as JobEvent::Sub, to the caller
//!                    └── CallerScope (the call's context: who called, at what depth, its cancel)
//! ```
//!
//! Both front ends use this one implementation: the prompted tools of `query`/`execute`
//! (an `AgentTool` in the run's registry) and the MCP server's tools (`mcp_server`).
//! A sub-agent gets its own catalog for its mode, the same policy (through the same
//! executor factory), the run's turn limit and timeout, and the caller's cancellation.
//! Depth is counted from the top job (or from [`DEPTH_ENV`], when codecrew itself runs
//! under an agent) and a call at [`MAX_DEPTH`] is refused with an error the model reads,
//! so agents cannot call each other without end.

use std::ffi::OsString;
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use crate::mention::{self, Job};
use crate::schema::{AnswerSchema, AnswerShape};
use crate::session::{JobEvent, JobLog, JobReport, JobStream, Place, Settings, SubEvent};
use codecrew_config::LoadedConfig;
use codecrew_intercept::neutralise_envelopes;
use codecrew_tools::{
    ErrorCode, Mode, Tool, ToolCatalog, ToolContext, ToolError, ToolExecutor, ToolFuture,
    ToolRegistry,
};

/// The environment variable that carries the delegation depth to the CLIs an agent job
/// runs (and to a `codecrew mcp` or `codecrew query` they start): absent means 0.
pub const DEPTH_ENV: &str = "CODECREW_MCP_DEPTH";

/// The depth from which no agent is started: two levels of delegation (an agent asks an
/// agent that asks an agent) and no more.
pub const MAX_DEPTH: u32 = 2;

pub use crate::session::caller::CallerScope;
pub use codecrew_config::agent_tools::{EXECUTE_AGENT, QUERY_AGENT};

/// Makes the executor of a job from its mode, the registry and its catalog: the command
/// decides the policy, the asker and the hooks.
pub type ExecutorFactory =
    Arc<dyn Fn(Mode, Arc<ToolRegistry>, Arc<ToolCatalog>) -> ToolExecutor + Send + Sync>;

/// This process's delegation depth from [`DEPTH_ENV`]: 0 when unset. A value that is not
/// a number counts as the maximum, so a garbled variable can never reopen delegation.
pub fn depth_from_env() -> u32 {
    match std::env::var(DEPTH_ENV) {
        Err(std::env::VarError::NotPresent) => 0,
        Ok(value) => value.trim().parse().unwrap_or_else(|_| {
            tracing::warn!("{DEPTH_ENV}={value:?} is not a number; starting no agents");
            MAX_DEPTH
        }),
        Err(std::env::VarError::NotUnicode(_)) => MAX_DEPTH,
    }
}

/// The agents of one run and what they need to run a job.
pub struct Crew {
    loaded: LoadedConfig,
    registry: Arc<ToolRegistry>,
    settings: Settings,
    executor_for: ExecutorFactory,
}

impl Crew {
    /// The crew of a run: `tools` (built-ins, external and MCP tools) plus the two agent
    /// tools, with `settings` (the run's limits and timeout) for every sub-agent.
    pub fn new(
        loaded: LoadedConfig,
        tools: &ToolRegistry,
        settings: Settings,
        executor_for: ExecutorFactory,
    ) -> Arc<Crew> {
        Arc::new_cyclic(|crew: &Weak<Crew>| {
            let mut registry = tools.clone();
            let roster = roster(&loaded);
            for mode in [Mode::Query, Mode::Execute] {
                registry.register(Arc::new(AgentTool {
                    mode,
                    description: describe(mode, &roster),
                    crew: crew.clone(),
                }));
            }
            Crew {
                loaded,
                registry: Arc::new(registry),
                settings,
                executor_for,
            }
        })
    }

    /// Every tool of the run, the agent tools included.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// The executor of a job in `mode` over `catalog`.
    pub fn executor(&self, mode: Mode, catalog: Arc<ToolCatalog>) -> ToolExecutor {
        (self.executor_for)(mode, self.registry.clone(), catalog)
    }

    pub fn default_agent(&self) -> &str {
        &self.loaded.config.default_agent
    }

    /// The agents one may call, for tool descriptions.
    pub fn roster(&self) -> String {
        roster(&self.loaded)
    }

    /// Runs the job `asked` for in `mode` as a sub-agent at `depth` (its answer held to
    /// the call's `schema`, if any), to its end, passing its events to
    /// `on_event`; `cancel` stops it. It is logged under `caller`, the log of the job
    /// whose call started it (none: not logged). An error is a job that could not start
    /// (unknown agent, empty task): its message says what to change. `place`: the
    /// caller's git worktree, where the sub-agent works too (None: the run's workspace).
    #[allow(clippy::too_many_arguments)]
    pub async fn run_job(
        &self,
        mode: Mode,
        asked: Delegation,
        depth: u32,
        place: Option<Place>,
        caller: Option<&Arc<dyn JobLog>>,
        cancel: watch::Receiver<bool>,
        mut on_event: impl FnMut(JobEvent) + Send,
    ) -> Result<JobReport, String> {
        let mut settings = self.settings.clone();
        settings.mode = mode;
        settings.depth = depth;
        // The run's --schema shapes the answers of its own agents; a sub-agent answers
        // its caller in prose, or in the schema its call names.
        let Delegation { job, answer } = asked;
        settings.answer = answer;
        settings
            .env
            .retain(|(name, _)| name.as_os_str() != DEPTH_ENV);
        settings
            .env
            .push((OsString::from(DEPTH_ENV), OsString::from(depth.to_string())));
        let runs = crate::jobs::plan(
            &self.loaded,
            vec![job],
            &settings,
            &self.registry,
            |catalog| self.executor(mode, catalog),
            place.as_slice(),
        )
        .map_err(|error| error.to_string())?;
        let Some(run) = runs.into_iter().next() else {
            return Err("no job to run".to_owned());
        };
        tracing::info!(agent = %run.job.agent, mode = mode.name(), depth, "delegating");
        let log = caller.map(|caller| caller.sub_job(&run, depth));
        let (events_tx, mut events) = mpsc::unbounded_channel();
        let stream = JobStream::new(events_tx, run.index).logged(log);
        let job = run.run(stream, cancel);
        tokio::pin!(job);
        let report = loop {
            tokio::select! {
                report = &mut job => break report,
                Some((_, event)) = events.recv() => on_event(event),
            }
        };
        while let Ok((_, event)) = events.try_recv() {
            on_event(event);
        }
        Ok(report)
    }
}

/// What a delegating call asks for: the job, and the shape of its answer.
#[derive(Debug)]
pub struct Delegation {
    pub job: Job,
    /// The call's `schema` ([`agent_schema`]).
    pub answer: Option<AnswerShape>,
}

/// `@claude (default), @gemini, @codex (model gpt-5.5)`.
fn roster(loaded: &LoadedConfig) -> String {
    let config = &loaded.config;
    let names: Vec<String> = config
        .agents
        .iter()
        .map(|(id, agent)| {
            let mut name = format!("@{id}");
            if *id == config.default_agent {
                name.push_str(" (default)");
            } else if let Some(model) = &agent.model {
                name.push_str(&format!(" (model {model})"));
            }
            name
        })
        .collect();
    names.join(", ")
}

/// What the agent tool of `mode` does, for the model.
pub fn describe(mode: Mode, roster: &str) -> String {
    let what = match mode {
        Mode::Query => {
            "Ask another AI coding agent (a CLI such as Claude Code, Gemini CLI or Codex, run \
             by codecrew) a question and get its answer, e.g. a second opinion on a diff. The \
             agent works in the same workspace with codecrew's read-only tools; it cannot \
             change anything."
        }
        Mode::Execute => {
            "Have another AI coding agent (a CLI such as Claude Code, Gemini CLI or Codex, run \
             by codecrew) do a task in the workspace. It may write files and run commands, \
             within codecrew's permission policy."
        }
    };
    format!(
        "{what} `task` is the request, optionally starting with a mention that picks the agent \
         and its model: \"@gemini review src/lib.rs\", \"@codex:gpt-5.5 where is the config \
         parsed?\". Without a mention the default agent answers. One agent per call: to ask \
         several, make several calls (they run at the same time). Instead of a mention you \
         may pass `agent` (and `model`); `task` is then used as written. The result is the \
         agent's answer with its agent, model, turns, tool calls and success; it can take \
         minutes. Agents: {roster}."
    )
}

/// The input schema of both agent tools.
pub fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "task": {
                "type": "string",
                "description": "What the agent should do or answer, optionally starting with @agent or @agent:model"
            },
            "agent": {
                "type": "string",
                "description": "The agent's id (e.g. claude, gemini, codex); overrides a mention in task"
            },
            "model": {
                "type": "string",
                "description": "The model the agent should use; overrides the mention's"
            },
            "schema": {
                "type": ["object", "string"],
                "description": "The shape the answer must have: a JSON Schema, or llm's compact form ('file, risk int, why: a sentence'). The answer is then checked (asked again when it does not fit) and its JSON document returned as `data`"
            }
        },
        "required": ["task"],
        "additionalProperties": false
    })
}

/// The error a call beyond the depth limit gets.
pub fn depth_refusal(depth: u32) -> String {
    format!(
        "agents are already {depth} delegations deep ({DEPTH_ENV}={depth}), the most codecrew \
         allows; it starts no further agents, so agents cannot call each other without end. \
         Do the task with the other tools instead."
    )
}

/// The input of `query_agent` / `execute_agent`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentInput {
    task: String,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    model: Option<String>,
    /// Read by [`agent_schema`].
    #[serde(default, rename = "schema")]
    _schema: Option<Value>,
}

/// The shape a delegating call asks the answer to have (its `schema`: a JSON Schema, or
/// the compact form; never `@file`, which would read a file no policy judged).
pub fn agent_schema(input: &Value) -> Result<Option<AnswerShape>, String> {
    let schema = match input.get("schema") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(text)) if text.trim_start().starts_with('@') => {
            return Err(
                "invalid input: `schema` cannot name a file; give the JSON Schema \
                        itself, or the compact form ('file, risk int')"
                    .to_owned(),
            );
        }
        Some(Value::String(text)) => {
            AnswerSchema::from_argument(text, false, std::path::Path::new("/"))
        }
        Some(other) => AnswerSchema::new(other.clone()),
    };
    let schema = schema.map_err(|error| format!("invalid input: {error}"))?;
    Ok(Some(AnswerShape {
        schema: Arc::new(schema),
        retries: crate::schema::DEFAULT_RETRIES,
    }))
}

/// The job a delegating call asks for: `agent` and `model` when given (the task then as
/// written), else the task's one mention, else the default agent.
pub fn agent_job(input: Value, default_agent: &str) -> Result<Job, String> {
    let input: AgentInput = serde_json::from_value(input).map_err(|error| {
        format!(
            "invalid input: {error}; expected {{\"task\": \"@agent[:model] what to do\"}} with \
             optional \"agent\" and \"model\""
        )
    })?;
    let non_empty =
        |text: Option<String>| text.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty());
    let agent = non_empty(input.agent).map(|a| a.trim_start_matches('@').to_owned());
    let (agent, mentioned_model, task) = match agent {
        Some(agent) => (agent, None, input.task.trim().to_owned()),
        None => {
            let parsed = mention::parse_task(&input.task);
            match parsed.mentions.as_slice() {
                [] => (default_agent.to_owned(), None, parsed.text),
                [one] => (one.agent.clone(), one.model.clone(), parsed.text),
                many => {
                    let names: Vec<String> = many.iter().map(|m| format!("@{}", m.agent)).collect();
                    return Err(format!(
                        "the task mentions {} agents ({}); this tool runs one agent per call: \
                         call it once per agent (the calls may run at the same time)",
                        many.len(),
                        names.join(", ")
                    ));
                }
            }
        }
    };
    Ok(Job {
        agent,
        model: non_empty(input.model).or(mentioned_model),
        task,
    })
}

/// A finished sub-agent's job as its caller receives it: the answer (neutralised: a
/// model's text on its way to another model), who answered, how it went, and its error
/// as data rather than as a failed call.
pub fn agent_output(report: &JobReport) -> Value {
    let calls: Vec<Value> = report
        .tool_calls
        .iter()
        .map(|call| json!({"name": call.name, "status": call.status}))
        .collect();
    json!({
        "agent": report.agent,
        "provider": report.provider,
        "model": report.model,
        "mode": report.mode,
        "success": report.success,
        "answer": neutralise_envelopes(report.response.trim()),
        "data": report.data,
        "error": report.error.as_deref().map(neutralise_envelopes),
        "stop_reason": report.stop_reason,
        "turns": report.turns,
        "tool_calls": calls,
        "session_id": report.session_id,
        "usage": report.usage,
    })
}

/// `codecrew:query_agent` / `codecrew:execute_agent` in a run's registry.
struct AgentTool {
    mode: Mode,
    description: String,
    crew: Weak<Crew>,
}

impl AgentTool {
    async fn consult(&self, context: &ToolContext, input: Value) -> Result<Value, ToolError> {
        let Some(crew) = self.crew.upgrade() else {
            return Err(ToolError::new(
                ErrorCode::Unavailable,
                "the run is ending; no agent can be started",
            ));
        };
        let caller = CallerScope::of(context);
        let depth = caller.map_or_else(depth_from_env, |c| c.depth);
        if depth >= MAX_DEPTH {
            return Err(ToolError::new(ErrorCode::DepthLimit, depth_refusal(depth)));
        }
        let answer = agent_schema(&input)
            .map_err(|message| ToolError::new(ErrorCode::InvalidInput, message))?;
        let job = agent_job(input, crew.default_agent())
            .map_err(|message| ToolError::new(ErrorCode::InvalidInput, message))?;
        let agent = job.agent.clone();
        // A call made outside a job (none today) still needs a cancel that never fires:
        // its sender lives as long as the call.
        let (_keep, own_cancel) = watch::channel(false);
        let cancel = caller.map_or(own_cancel, |caller| caller.cancel.clone());
        let forward = |event: JobEvent| {
            if let Some(caller) = caller {
                let sub = SubEvent {
                    agent: agent.clone(),
                    depth: depth + 1,
                    event,
                };
                caller.stream.send(JobEvent::Sub(Box::new(sub)));
            }
        };
        let report = crew
            .run_job(
                self.mode,
                Delegation { job, answer },
                depth + 1,
                // A caller in a worktree of its own keeps its sub-agents there.
                (!context.exec.git.is_empty()).then(|| Place {
                    workspace: context.workspace.clone(),
                    git: context.exec.git.clone(),
                }),
                caller.and_then(|caller| caller.stream.log()),
                cancel,
                forward,
            )
            .await
            .map_err(|message| {
                ToolError::new(ErrorCode::Agent, message)
                    .with_suggestion(format!("agents: {}", crew.roster()))
            })?;
        Ok(agent_output(&report))
    }
}

impl Tool for AgentTool {
    fn name(&self) -> &str {
        match self.mode {
            Mode::Query => QUERY_AGENT,
            Mode::Execute => EXECUTE_AGENT,
        }
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        input_schema()
    }

    fn readonly(&self) -> bool {
        self.mode == Mode::Query
    }

    fn is_codecrews(&self) -> bool {
        true
    }

    fn execute<'a>(&'a self, ctx: &'a ToolContext, input: Value) -> ToolFuture<'a> {
        Box::pin(self.consult(ctx, input))
    }

    /// The sub-agent's own turns are timed out (the run's `--timeout`, per turn); the call
    /// as a whole is not.
    fn timeout(&self) -> Duration {
        Duration::from_secs(7 * 24 * 3600)
    }
}
