//! One editor session: its workspace's engine (asking the editor), its agents kept
//! between prompts, the mode and the agent a prompt with no mention goes to; and a prompt
//! run to its end.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PromptResponse, SessionConfigOption, SessionConfigSelectOption, SessionId, SessionMode,
    SessionModeState, SessionNotification, SessionUpdate, StopReason, Usage,
};
use tokio::sync::watch;

use super::relay::{Announced, Relay};
use crate::run::engine::{Engine, KeptAgents, Update};
use crate::run::mention::{self, Job};
use crate::run::session::{Failure, JobReport};
use codecrew_tools::Mode;

/// The config option that picks the agent a prompt without a mention goes to.
pub const AGENT_OPTION: &str = "agent";

/// An editor's session.
pub struct Session {
    pub id: SessionId,
    pub workspace: PathBuf,
    /// A prompt runs: another is refused until it ends.
    busy: AtomicBool,
    /// True while the running prompt is being cancelled (`session/cancel`); the asker
    /// watches it too.
    cancel: watch::Sender<bool>,
    pub(super) announced: Arc<Mutex<Announced>>,
    state: tokio::sync::Mutex<State>,
}

struct State {
    engine: Engine,
    agents: KeptAgents,
    /// The agents the last prompt went to: a prompt without a mention goes to them.
    last: Vec<String>,
    /// The agent a prompt goes to when it mentions none and none was addressed yet.
    chosen: String,
    /// The run store knows the session by its first prompt.
    titled: bool,
}

/// Why a prompt was not run: a JSON-RPC error for the editor.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error(
        "a prompt is already running in this session: cancel it (session/cancel) or wait for its end"
    )]
    Busy,
    #[error("{0}")]
    NotStarted(String),
}

/// What a session is made of before its agents: its workspace's engine (asking the
/// editor), the cancel its asker watches, the calls shown so far.
pub struct Opened {
    pub workspace: PathBuf,
    pub engine: Engine,
    pub cancel: watch::Sender<bool>,
    pub announced: Arc<Mutex<Announced>>,
}

impl Session {
    /// The session `id`; `titled`: its run already has its title (a session loaded).
    pub fn new(id: SessionId, opened: Opened, agents: KeptAgents, titled: bool) -> Session {
        let Opened {
            workspace,
            engine,
            cancel,
            announced,
        } = opened;
        let chosen = engine.config().config.default_agent.clone();
        Session {
            id,
            workspace,
            busy: AtomicBool::new(false),
            cancel,
            announced,
            state: tokio::sync::Mutex::new(State {
                engine,
                agents,
                last: Vec::new(),
                chosen,
                titled,
            }),
        }
    }

    /// The modes the editor shows, the current one first chosen.
    pub async fn modes(&self) -> SessionModeState {
        let current = self.state.lock().await.agents.mode();
        modes(current)
    }

    /// The session's config options: which agent answers a prompt with no mention.
    pub async fn config_options(&self) -> Vec<SessionConfigOption> {
        let state = self.state.lock().await;
        config_options(&state)
    }

    /// From now on in `mode` (the CLIs start again in its wall, resuming, at the next
    /// prompt). Waits for a running prompt to end.
    pub async fn set_mode(&self, mode: Mode) {
        self.state.lock().await.agents.set_mode(mode).await;
    }

    /// A prompt with no mention goes to `agent` from now on; the options as they stand,
    /// or why not.
    pub async fn choose_agent(&self, agent: &str) -> Result<Vec<SessionConfigOption>, String> {
        let mut state = self.state.lock().await;
        if !state.engine.config().config.agents.contains_key(agent) {
            return Err(format!(
                "no agent @{agent} in this workspace's config (`codecrew agents` lists them)"
            ));
        }
        state.chosen = agent.to_owned();
        state.last.clear();
        Ok(config_options(&state))
    }

    /// Stops the running prompt: its CLIs' turns end, and it answers `cancelled`.
    pub fn cancel(&self) {
        if self.busy.load(Ordering::Acquire) {
            let _ = self.cancel.send(true);
        }
    }

    /// Ends the session: its prompt stopped, every CLI ended (what its wall held put
    /// back), its run recorded as ended with `exit_code`.
    pub async fn close(&self, exit_code: u8) {
        let _ = self.cancel.send(true);
        let mut state = self.state.lock().await;
        state.agents.close().await;
        state.agents.finish(exit_code);
    }

    /// Runs `prompt` (its text, mentions first taken out) to its end, streaming what
    /// the agents do to the editor; the turn's stop reason and usage.
    pub async fn prompt(
        &self,
        connection: &ConnectionTo<Client>,
        prompt: &str,
        context: &str,
    ) -> Result<PromptResponse, PromptError> {
        if self.busy.swap(true, Ordering::AcqRel) {
            return Err(PromptError::Busy);
        }
        let _ = self.cancel.send(false);
        let answered = self.run_prompt(connection, prompt, context).await;
        self.busy.store(false, Ordering::Release);
        answered
    }

    async fn run_prompt(
        &self,
        connection: &ConnectionTo<Client>,
        prompt: &str,
        context: &str,
    ) -> Result<PromptResponse, PromptError> {
        let mut state = self.state.lock().await;
        let state = &mut *state;
        let (jobs, addressed) = jobs(prompt, context, &state.last, &state.chosen);
        if jobs.iter().all(|job| job.task.trim().is_empty()) {
            return Err(PromptError::NotStarted(
                "the prompt has no task: write what the agents should do".to_owned(),
            ));
        }
        if !state.titled
            && let Some(log) = state.agents.log()
        {
            log.titled(first_line(prompt));
            state.titled = true;
        }
        let mut line = state
            .agents
            .ask(&state.engine, jobs)
            .await
            .map_err(|error| PromptError::NotStarted(error.to_string()))?;
        state.last = addressed;
        let send = |update: SessionUpdate| {
            let _ = connection.send_notification(SessionNotification::new(self.id.clone(), update));
        };
        for agent in &line.gone {
            send(notice(&format!("@{agent} is not running any more")));
        }
        let labels = line.labels.clone();
        let mut relay = Relay::new(&labels, &self.workspace);
        let mut cancelled = self.cancel.subscribe();
        let mut stopped = false;
        let mut reports: Vec<JobReport> = Vec::new();
        loop {
            let update = tokio::select! {
                biased;
                changed = cancelled.wait_for(|cancelled| *cancelled), if !stopped => {
                    if changed.is_ok() {
                        stopped = true;
                        line.stop();
                    }
                    continue;
                }
                update = line.next() => update,
            };
            match update {
                Some(Update::Event(index, event)) => {
                    let updates = match self.announced.lock() {
                        Ok(mut announced) => relay.event(index, &event, &mut announced),
                        Err(_) => Vec::new(),
                    };
                    for update in updates {
                        send(update);
                    }
                }
                Some(Update::Answer(_, report)) => {
                    if let Some(update) = relay.failure(&report) {
                        send(update);
                    }
                    reports.push(*report);
                }
                // The answer was given; the run store still has it (a session is loaded
                // from there, not from a thread).
                Some(Update::Unsaved(error)) => {
                    tracing::warn!("the thread was not updated: {error}")
                }
                None => break,
            }
        }
        Ok(response(&reports, stopped))
    }
}

/// The jobs of a prompt: its mentions, else the agents last addressed, else the chosen
/// agent; each with the prompt's text (its layout kept) and what the editor attached.
fn jobs(prompt: &str, context: &str, last: &[String], chosen: &str) -> (Vec<Job>, Vec<String>) {
    let task = mention::parse_prompt(prompt);
    let agents: Vec<(String, Option<String>)> = if !task.mentions.is_empty() {
        task.mentions
            .into_iter()
            .map(|mention| (mention.agent, mention.model))
            .collect()
    } else if !last.is_empty() {
        last.iter().map(|agent| (agent.clone(), None)).collect()
    } else {
        vec![(chosen.to_owned(), None)]
    };
    let text = if context.is_empty() {
        task.text
    } else {
        format!("{}\n\n{context}", task.text)
    };
    let addressed = agents.iter().map(|(agent, _)| agent.clone()).collect();
    let jobs = agents
        .into_iter()
        .map(|(agent, model)| Job {
            agent,
            model,
            task: text.clone(),
        })
        .collect();
    (jobs, addressed)
}

/// The turn's answer: cancelled when it was, else how the jobs ended; what they used.
fn response(reports: &[JobReport], cancelled: bool) -> PromptResponse {
    let failed = |failure| reports.iter().any(|r| r.failure == Some(failure));
    let stop = if cancelled || failed(Failure::Interrupted) {
        StopReason::Cancelled
    } else if failed(Failure::MaxTurns) {
        StopReason::MaxTurnRequests
    } else {
        StopReason::EndTurn
    };
    let (mut input, mut output, mut cached) = (0u64, 0u64, 0u64);
    for report in reports {
        let used = &report.usage.reported;
        input += used.input_tokens.unwrap_or(0);
        output += used.output_tokens.unwrap_or(0);
        cached += used.cached_tokens.unwrap_or(0);
    }
    let mut response = PromptResponse::new(stop);
    if input + output > 0 {
        response =
            response.usage(Usage::new(input + output, input, output).cached_read_tokens(cached));
    }
    response
}

fn notice(text: &str) -> SessionUpdate {
    use agent_client_protocol::v1::schema::{ContentBlock, ContentChunk};
    SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::from(format!("{text}\n"))))
}

fn first_line(text: &str) -> &str {
    text.lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
        .trim()
}

/// Query and execute, as the editor lists them.
pub fn modes(current: Mode) -> SessionModeState {
    SessionModeState::new(
        current.name(),
        vec![
            SessionMode::new("query", "Query").description(
                "Read only: the agents read and search the workspace; nothing is written"
                    .to_owned(),
            ),
            SessionMode::new("execute", "Execute").description(
                "The agents may write files and run commands, under codecrew's permission \
                 policy (what it would ask is asked here)"
                    .to_owned(),
            ),
        ],
    )
}

/// The mode a `session/set_mode` names.
pub fn mode_named(name: &str) -> Option<Mode> {
    match name {
        "query" => Some(Mode::Query),
        "execute" => Some(Mode::Execute),
        _ => None,
    }
}

fn config_options(state: &State) -> Vec<SessionConfigOption> {
    let agents: Vec<SessionConfigSelectOption> = state
        .engine
        .config()
        .config
        .agents
        .iter()
        .map(|(id, agent)| {
            SessionConfigSelectOption::new(id.clone(), format!("@{id}"))
                .description(format!("{} CLI", agent.provider.name()))
        })
        .collect();
    vec![
        SessionConfigOption::select(AGENT_OPTION, "Agent", state.chosen.clone(), agents)
            .description(
                "Who answers a prompt that mentions no agent (@claude, @gemini:flash... in \
                 a prompt choose for it)"
                    .to_owned(),
            ),
    ]
}

/// The workspace a session's `cwd` names: an absolute path to a folder, canonical.
pub fn workspace_of(cwd: &Path) -> Result<PathBuf, String> {
    if !cwd.is_absolute() {
        return Err(format!(
            "the session's cwd {} is not an absolute path",
            cwd.display()
        ));
    }
    let canonical = cwd
        .canonicalize()
        .map_err(|error| format!("the session's cwd {}: {error}", cwd.display()))?;
    if !canonical.is_dir() {
        return Err(format!(
            "the session's cwd {} is not a folder",
            cwd.display()
        ));
    }
    Ok(canonical)
}
