//! One editor session: its workspace's engine (asking the editor), its agents kept
//! between prompts, the mode and the agent a prompt with no mention goes to; and a prompt
//! run to its end.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, ContentBlock, ContentChunk, PromptResponse, SessionConfigOption, SessionId,
    SessionModeState, SessionNotification, SessionUpdate, StopReason, Usage,
};
use tokio::sync::watch;

use super::commands::{self, EditorCommand, Slash};
use super::config_options::{self, Choice, Choices};
use super::relay::{Announced, Relay};
use codecrew_core::engine::{Engine, KeptAgents, Update};
use codecrew_core::mention::{self, Job};
use codecrew_core::session::{Failure, JobReport};
use codecrew_core::usage::JobUsage;
use codecrew_tools::Mode;

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
    /// The model the editor chose for an agent, where it chose one other than the
    /// agent's default: a prompt to that agent naming no model runs it.
    models: BTreeMap<String, String>,
    /// What each agent used in the session (`/usage`, the cost in `usage_update`).
    spent: BTreeMap<String, JobUsage>,
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
                models: BTreeMap::new(),
                spent: BTreeMap::new(),
                titled,
            }),
        }
    }

    /// The modes the editor shows, the current one first chosen.
    pub async fn modes(&self) -> SessionModeState {
        let current = self.state.lock().await.agents.mode();
        config_options::modes(current)
    }

    /// The session's config options: the agent a prompt with no mention goes to, its
    /// model, the mode.
    pub async fn config_options(&self) -> Vec<SessionConfigOption> {
        self.state.lock().await.options()
    }

    /// From now on in `mode` (the CLIs start again in its wall, resuming, at the next
    /// prompt). Waits for a running prompt to end. The options as they then stand.
    pub async fn set_mode(&self, mode: Mode) -> Vec<SessionConfigOption> {
        let mut state = self.state.lock().await;
        state.agents.set_mode(mode).await;
        state.options()
    }

    /// Makes the editor's `choice`; the options as they then stand, or why not. A
    /// change of mode or model waits for a running prompt to end.
    pub async fn choose(&self, choice: Choice) -> Result<Vec<SessionConfigOption>, String> {
        let mut state = self.state.lock().await;
        match choice {
            Choice::Agent(agent) => {
                if !state.engine.config().config.agents.contains_key(&agent) {
                    return Err(format!(
                        "no agent @{agent} in this workspace's config (`codecrew agents` lists them)"
                    ));
                }
                state.chosen = agent;
                state.last.clear();
            }
            Choice::Model(model) => state.choose_model(model)?,
            Choice::Effort(level) => state.choose_effort(level)?,
            Choice::Mode(mode) => state.agents.set_mode(mode).await,
        }
        Ok(state.options())
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
        let answered = match commands::parse(prompt) {
            Some(slash) => Ok(self.run_command(connection, slash).await),
            None => self.run_prompt(connection, prompt, context).await,
        };
        self.busy.store(false, Ordering::Release);
        answered
    }

    /// Runs one of the chat's `/commands`, its answer shown as the agent's text.
    async fn run_command(&self, connection: &ConnectionTo<Client>, slash: Slash) -> PromptResponse {
        let text = match slash {
            Slash::EditorsOwn(what) => format!("{what}\n"),
            Slash::Run(EditorCommand::Mode(None)) => {
                format!("mode {}\n", self.state.lock().await.agents.mode().name())
            }
            Slash::Run(EditorCommand::Mode(Some(name))) => {
                match config_options::mode_named(&name) {
                    Some(mode) => {
                        let options = self.set_mode(mode).await;
                        self.options_changed(connection, options);
                        format!("mode {}\n", mode.name())
                    }
                    None => format!("no mode {name:?}: /mode query (read only) or /mode execute\n"),
                }
            }
            Slash::Run(EditorCommand::Agents) => {
                let state = self.state.lock().await;
                commands::agents(&state.engine.config().config, |agent| {
                    state.agents.running(agent)
                })
            }
            Slash::Run(EditorCommand::Usage) => commands::usage(&self.state.lock().await.spent),
            Slash::Run(EditorCommand::Help) => commands::help(),
        };
        let update = SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text)));
        let _ = connection.send_notification(SessionNotification::new(self.id.clone(), update));
        PromptResponse::new(StopReason::EndTurn)
    }

    /// Tells the editor the options changed other than by its own choice.
    pub fn options_changed(
        &self,
        connection: &ConnectionTo<Client>,
        options: Vec<SessionConfigOption>,
    ) {
        let update = SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(options));
        let _ = connection.send_notification(SessionNotification::new(self.id.clone(), update));
    }

    async fn run_prompt(
        &self,
        connection: &ConnectionTo<Client>,
        prompt: &str,
        context: &str,
    ) -> Result<PromptResponse, PromptError> {
        let mut state = self.state.lock().await;
        let state = &mut *state;
        let (jobs, addressed) = jobs(prompt, context, &state.last, &state.chosen, &state.models);
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
        if state.follow_the_addressed() {
            self.options_changed(connection, state.options());
        }
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
        for report in &reports {
            state
                .spent
                .entry(report.agent.clone())
                .or_default()
                .add(&report.usage);
        }
        for update in relay.usage_updates(&state.spent) {
            send(update);
        }
        Ok(response(&reports, stopped))
    }
}

/// The jobs of a prompt: its mentions, else the agents last addressed, else the chosen
/// agent; each with the prompt's text (its layout kept) and what the editor attached, and
/// the model the mention names, else the one the editor chose for the agent (`models`).
fn jobs(
    prompt: &str,
    context: &str,
    last: &[String],
    chosen: &str,
    models: &BTreeMap<String, String>,
) -> (Vec<Job>, Vec<String>) {
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
            model: model.or_else(|| models.get(&agent).cloned()),
            agent,
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
    SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::from(format!("{text}\n"))))
}

fn first_line(text: &str) -> &str {
    text.lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
        .trim()
}

impl State {
    fn options(&self) -> Vec<SessionConfigOption> {
        Choices {
            config: &self.engine.config().config,
            agent: &self.chosen,
            model: self.models.get(&self.chosen).map(String::as_str),
            mode: self.agents.mode(),
        }
        .options()
    }

    /// The chosen agent runs `model` from now on: one its option lists. Back to its
    /// default while it runs another, its CLI ends and starts again, resuming, at the
    /// next prompt (the other agents' CLIs go on).
    fn choose_model(&mut self, model: String) -> Result<(), String> {
        let agent = self.chosen.clone();
        let Some(config) = self.engine.config().config.agents.get(&agent) else {
            return Err(format!("no agent @{agent} in this workspace's config"));
        };
        let models = config_options::models(&agent, config);
        if models.iter().all(|(value, _)| *value != model) {
            let listed: Vec<&str> = models.iter().map(|(value, _)| value.as_str()).collect();
            return Err(format!(
                "@{agent} has no model {model:?} here: {} (a prompt may name any, as @{agent}:NAME)",
                listed.join(", ")
            ));
        }
        let default = config_options::default_model(config);
        if model == default {
            let configured = config.model.clone();
            self.models.remove(&agent);
            let runs_another = self
                .agents
                .running(&agent)
                .is_some_and(|running| running != configured.as_deref());
            if runs_another {
                self.agents.restart_agent(&agent);
            }
        } else {
            self.models.insert(agent, model);
        }
        Ok(())
    }

    /// The chosen agent thinks as hard as `level` says from now on (one its CLI lists, or
    /// its default): its CLI reads it at its start, so a running one starts again,
    /// resuming, at its next prompt.
    fn choose_effort(&mut self, level: String) -> Result<(), String> {
        let agent = self.chosen.clone();
        let Some(config) = self.engine.config_mut().config.agents.get_mut(&agent) else {
            return Err(format!("no agent @{agent} in this workspace's config"));
        };
        let levels = config.provider.effort_levels();
        if levels.is_empty() {
            return Err(format!(
                "@{agent}'s CLI ({}) has no effort setting",
                config.provider.name()
            ));
        }
        let effort = (level != config_options::CLI_DEFAULT).then_some(level);
        if let Some(level) = &effort
            && !levels.contains(&level.as_str())
        {
            return Err(format!(
                "@{agent} has no effort {level:?}: {} or {}",
                levels.join(", "),
                config_options::CLI_DEFAULT
            ));
        }
        if config.effort != effort {
            config.effort = effort;
            self.agents.restart_agent(&agent);
        }
        Ok(())
    }

    /// A prompt addressed to one agent makes it the one a prompt without a mention goes
    /// to, as it is: whether the chosen agent changed.
    fn follow_the_addressed(&mut self) -> bool {
        match self.last.as_slice() {
            [agent] if *agent != self.chosen => {
                self.chosen = agent.clone();
                true
            }
            _ => false,
        }
    }
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
