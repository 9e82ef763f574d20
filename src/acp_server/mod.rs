//! `codecrew acp`: the crew in the editor, over the Agent Client Protocol (JSON-RPC on
//! stdin/stdout, protocol version 1; the `agent-client-protocol` SDK).
//!
//! ```text
//! initialize            -> what codecrew offers: sessions loaded, resumed and listed (the
//!                          run store), embedded context in prompts, MCP servers over
//!                          stdio; a terminal sign-in per agent's CLI (auth.rs)
//! session/new {cwd}     -> a Session: the workspace's Engine (held to the same home and
//!                          trust rules as the command line), asking the editor
//!                          (asker.rs), its agents kept between prompts (KeptAgents),
//!                          recorded in the run store from the start (its id the run's);
//!                          its config options (config_options.rs), then, after the
//!                          answer, its slash commands (commands.rs)
//! session/prompt        -> mentions (`@claude @gemini ...`) or the session's agents;
//!                          each agent's events relayed as session/update (relay.rs);
//!                          a usage_update per agent (usage.rs); the stop reason and
//!                          usage. A prompt that is one of the chat's /commands runs it
//! session/cancel        -> as Ctrl-C: the CLIs' turns stop, the prompt answers cancelled
//! session/set_mode      -> query | execute (the CLIs start again in the mode's wall);
//!                          the options' update
//! session/set_config_option agent | model | mode -> the whole list of options
//! session/list, load    -> the editor's sessions in the run store (history.rs)
//! session/resume        -> as load, without replaying the conversation
//! stdin closed / signal -> every session closed: CLIs ended, walls put back, runs ended
//! ```
//!
//! Handlers run on the SDK's dispatch loop, which reads nothing else until they return:
//! a prompt, and anything that may wait for one (a mode change), runs on a task of its
//! own, so that `session/cancel` and the editor's answers to questions get through.

mod asker;
pub mod auth;
mod commands;
mod config_options;
mod editor_input;
mod history;
mod relay;
mod session;
mod usage;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, CloseSessionRequest, CloseSessionResponse,
    Implementation, InitializeRequest, InitializeResponse, ListSessionsRequest,
    ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, McpCapabilities, McpServer,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse,
    ResumeSessionRequest, ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities,
    SessionId, SessionListCapabilities, SessionNotification, SessionResumeCapabilities,
    SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, SetSessionModeRequest,
    SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, ConnectTo, Error, Stdio};
use tokio::sync::watch;

use codecrew_core::engine::{self, Engine, KeptAgents, Limits, LogOptions, Resume, ResumeError};
use codecrew_core::runs::{Earlier, StoreError};
use codecrew_tools::Mode;
use codecrew_tools::builtin::HelpSource;

use asker::EditorAsker;
use config_options::Choice;
use editor_input::{add_mcp_servers, prompt_text};
use relay::Announced;
use session::{Opened, PromptError, Session};

/// A session's title in the run store until its first prompt gives it one.
const UNTITLED: &str = "(a new editor session)";

/// The largest prompt taken, text and attached context together: as much as piped input.
pub const MAX_PROMPT_BYTES: usize = 1 << 20;

/// What `codecrew acp` gives every session.
#[derive(Clone)]
pub struct Settings {
    pub yes: bool,
    pub audit: bool,
    pub log: LogOptions,
    pub help: Arc<dyn HelpSource>,
    /// The mode a new session starts in.
    pub mode: Mode,
    /// `--allow-home`: a session may have the home folder as its workspace.
    pub allow_home: bool,
    /// The most sessions open at once.
    pub max_sessions: usize,
    pub limits: Limits,
    /// Where `codecrew acp` started: its config names the agents the editor may sign in
    /// to (a session's own config is its cwd's).
    pub workspace: std::path::PathBuf,
}

/// The sessions of one editor.
struct Server {
    settings: Settings,
    sessions: Mutex<BTreeMap<String, Arc<Session>>>,
    /// The runtime the editor's questions are awaited on.
    runtime: tokio::runtime::Handle,
}

/// Serves the editor on stdin/stdout until it closes them or `stop` resolves (a signal,
/// with its exit code); then every session is closed. The exit code.
pub async fn serve(settings: Settings, stop: impl std::future::Future<Output = u8>) -> u8 {
    let server = Arc::new(Server {
        settings,
        sessions: Mutex::new(BTreeMap::new()),
        runtime: tokio::runtime::Handle::current(),
    });
    let code = tokio::select! {
        served = agent(server.clone()).connect_to(Stdio::new()) => match served {
            Ok(()) => 0,
            Err(error) => {
                tracing::error!("the ACP connection failed: {error}");
                1
            }
        },
        code = stop => code,
    };
    server.close_all(code).await;
    code
}

/// The ACP agent: one handler per message codecrew answers.
fn agent(server: Arc<Server>) -> impl ConnectTo<Client> {
    let (new, load, resume, list, prompt, cancel, mode, option, close) = (
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
    );
    let initialize_server = server;
    Agent
        .v1()
        .name("codecrew")
        .on_receive_request(
            async move |request: InitializeRequest,
                        responder: Responder<InitializeResponse>,
                        _connection: ConnectionTo<Client>| {
                responder.respond(initialize_server.initialize(request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest,
                        responder: Responder<NewSessionResponse>,
                        connection: ConnectionTo<Client>| {
                let made = new.new_session(request, connection.clone()).await;
                let id = made.as_ref().ok().map(|made| made.session_id.clone());
                responder.respond_with_result(made)?;
                if let Some(id) = id {
                    commands::announce(&connection, id);
                }
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest,
                        responder: Responder<LoadSessionResponse>,
                        connection: ConnectionTo<Client>| {
                let id = request.session_id.clone();
                let loaded = load.load_session(request, connection.clone()).await;
                let announced = loaded.is_ok();
                responder.respond_with_result(loaded)?;
                if announced {
                    commands::announce(&connection, id);
                }
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ResumeSessionRequest,
                        responder: Responder<ResumeSessionResponse>,
                        connection: ConnectionTo<Client>| {
                let id = request.session_id.clone();
                let resumed = resume.resume_session(request, connection.clone()).await;
                let announced = resumed.is_ok();
                responder.respond_with_result(resumed)?;
                if announced {
                    commands::announce(&connection, id);
                }
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ListSessionsRequest,
                        responder: Responder<ListSessionsResponse>,
                        _connection: ConnectionTo<Client>| {
                responder.respond_with_result(list.list_sessions(&request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest,
                        responder: Responder<PromptResponse>,
                        connection: ConnectionTo<Client>| {
                let server = prompt.clone();
                // On a task of its own: the loop must go on reading (a cancel, an answer
                // to a question). The task never fails the connection.
                tokio::spawn(async move {
                    let answered = server.prompt(request, &connection).await;
                    let _ = responder.respond_with_result(answered);
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _connection: ConnectionTo<Client>| {
                if let Some(session) = cancel.session(&notification.session_id) {
                    session.cancel();
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest,
                        responder: Responder<SetSessionModeResponse>,
                        connection: ConnectionTo<Client>| {
                let session = mode
                    .session(&request.session_id)
                    .ok_or_else(|| not_found(&request.session_id))?;
                let Some(chosen) = config_options::mode_named(&request.mode_id.0) else {
                    return responder.respond_with_error(invalid(format!(
                        "no mode {:?}: query (read only) or execute",
                        &*request.mode_id.0
                    )));
                };
                // A mode change waits for a running prompt: off the loop.
                tokio::spawn(async move {
                    let options = session.set_mode(chosen).await;
                    let _ = responder.respond(SetSessionModeResponse::new());
                    // The mode is an option too: the editor's list follows.
                    session.options_changed(&connection, options);
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionConfigOptionRequest,
                        responder: Responder<SetSessionConfigOptionResponse>,
                        _connection: ConnectionTo<Client>| {
                let session = option
                    .session(&request.session_id)
                    .ok_or_else(|| not_found(&request.session_id))?;
                let choice = match Choice::of(&request.config_id.0, request.value) {
                    Ok(choice) => choice,
                    Err(why) => return responder.respond_with_error(invalid(why)),
                };
                tokio::spawn(async move {
                    // A change of mode or model waits for a running prompt: off the loop.
                    let chosen = session.choose(choice).await;
                    let _ = responder.respond_with_result(
                        chosen
                            .map(SetSessionConfigOptionResponse::new)
                            .map_err(invalid),
                    );
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: CloseSessionRequest,
                        responder: Responder<CloseSessionResponse>,
                        _connection: ConnectionTo<Client>| {
                let removed = close
                    .sessions
                    .lock()
                    .ok()
                    .and_then(|mut sessions| sessions.remove(&*request.session_id.0));
                let Some(session) = removed else {
                    return responder.respond_with_error(not_found(&request.session_id));
                };
                tokio::spawn(async move {
                    session.close(0).await;
                    let _ = responder.respond(CloseSessionResponse::new());
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
}

impl Server {
    fn initialize(&self, request: InitializeRequest) -> InitializeResponse {
        // Sessions outlive the process only in the run store.
        let kept = self.settings.log.enabled && codecrew_core::runs::default_path().is_some();
        let mut sessions = SessionCapabilities::new().close(SessionCloseCapabilities::new());
        if kept {
            sessions = sessions
                .list(SessionListCapabilities::new())
                .resume(SessionResumeCapabilities::new());
        }
        InitializeResponse::new(request.protocol_version)
            .agent_capabilities(
                AgentCapabilities::new()
                    .load_session(kept)
                    .prompt_capabilities(PromptCapabilities::new().embedded_context(true))
                    .mcp_capabilities(McpCapabilities::new())
                    .session_capabilities(sessions),
            )
            .agent_info(
                Implementation::new("codecrew", env!("CARGO_PKG_VERSION"))
                    .title("codecrew: Claude Code, Gemini CLI, Codex... as one crew".to_owned()),
            )
            .auth_methods(auth::methods(
                &request.client_capabilities,
                &self.settings.workspace,
            ))
    }

    fn session(&self, id: &SessionId) -> Option<Arc<Session>> {
        self.sessions.lock().ok()?.get(&*id.0).cloned()
    }

    /// The engine and agents of a session in `cwd`, asking the editor.
    fn open(
        &self,
        id: &SessionId,
        cwd: &std::path::Path,
        mcp_servers: Vec<McpServer>,
        connection: ConnectionTo<Client>,
    ) -> Result<Opened, Error> {
        let open = self
            .sessions
            .lock()
            .map(|sessions| sessions.len())
            .unwrap_or(usize::MAX);
        if open >= self.settings.max_sessions {
            return Err(invalid(format!(
                "codecrew serves at most {} sessions at once: close one (session/close)",
                self.settings.max_sessions
            )));
        }
        let workspace = session::workspace_of(cwd).map_err(invalid)?;
        crate::home::refuse_session(&workspace, self.settings.allow_home)
            .map_err(|refused| invalid(refused.to_string()))?;
        let (cancel, cancelled) = watch::channel(false);
        let announced = Arc::new(Mutex::new(Announced::default()));
        let asker = EditorAsker {
            connection,
            session: id.clone(),
            runtime: self.runtime.clone(),
            cancelled,
            timeout: self.question_timeout(),
            announced: announced.clone(),
        };
        let mut engine = Engine::open(engine::Options {
            workspace: workspace.clone(),
            yes: self.settings.yes,
            audit: self.settings.audit,
            asker: Arc::new(asker),
            help: self.settings.help.clone(),
            log: self.settings.log.clone(),
        })
        .map_err(|error| invalid(error.to_string()))?;
        add_mcp_servers(&mut engine, mcp_servers)?;
        Ok(Opened {
            workspace,
            engine,
            cancel,
            announced,
        })
    }

    /// How long the editor may take to answer a question: a turn's timeout.
    fn question_timeout(&self) -> std::time::Duration {
        self.settings
            .limits
            .turn_timeout
            .unwrap_or(std::time::Duration::from_secs(600))
    }

    async fn new_session(
        &self,
        request: NewSessionRequest,
        connection: ConnectionTo<Client>,
    ) -> Result<NewSessionResponse, Error> {
        let id = SessionId::new(codecrew_core::runs::new_id());
        let opened = self.open(&id, &request.cwd, request.mcp_servers, connection)?;
        let mode = self.settings.mode;
        let log = opened.engine.conversation_log(&id.0, mode, UNTITLED);
        let agents = KeptAgents::unthreaded(mode, self.settings.limits.clone()).recorded_in(log);
        let session = Arc::new(Session::new(id.clone(), opened, agents, false));
        let response = NewSessionResponse::new(id.clone())
            .modes(session.modes().await)
            .config_options(session.config_options().await);
        self.insert(session);
        Ok(response)
    }

    async fn load_session(
        &self,
        request: LoadSessionRequest,
        connection: ConnectionTo<Client>,
    ) -> Result<LoadSessionResponse, Error> {
        let kept = Kept {
            id: request.session_id,
            cwd: request.cwd,
            mcp_servers: request.mcp_servers,
        };
        // The conversation replayed before the answer, as the protocol asks.
        let session = self.reopen(kept, connection, true).await?;
        Ok(LoadSessionResponse::new()
            .modes(session.modes().await)
            .config_options(session.config_options().await))
    }

    async fn resume_session(
        &self,
        request: ResumeSessionRequest,
        connection: ConnectionTo<Client>,
    ) -> Result<ResumeSessionResponse, Error> {
        let kept = Kept {
            id: request.session_id,
            cwd: request.cwd,
            mcp_servers: request.mcp_servers,
        };
        // The editor still shows the conversation: nothing replayed.
        let session = self.reopen(kept, connection, false).await?;
        Ok(ResumeSessionResponse::new()
            .modes(session.modes().await)
            .config_options(session.config_options().await))
    }

    /// The session kept in the run store opened again, going on from where each of its
    /// agents stood; its conversation replayed to the editor first when `replay`.
    async fn reopen(
        &self,
        kept: Kept,
        connection: ConnectionTo<Client>,
        replay: bool,
    ) -> Result<Arc<Session>, Error> {
        let id = kept.id;
        if self.session(&id).is_some() {
            return Err(invalid(format!("the session {} is open already", &*id.0)));
        }
        let stored = history::find(&id.0)
            .map_err(|error| internal(error.to_string()))?
            .ok_or_else(|| not_found(&id))?;
        let opened = self.open(&id, &kept.cwd, kept.mcp_servers, connection.clone())?;
        let engine = &opened.engine;
        let earlier = match engine.earlier(&Resume::Run(id.0.to_string()), None) {
            Ok(earlier) => earlier,
            // A session no agent answered yet: nothing to go on from.
            Err(ResumeError::Store(StoreError::NothingToResume(_))) => Earlier::default(),
            Err(error) => return Err(internal(error.to_string())),
        };
        let log = engine
            .reopen_log(&id.0)
            .map_err(|error| invalid(error.to_string()))?;
        let mode = config_options::mode_named(&stored.run.mode).unwrap_or(self.settings.mode);
        let agents = KeptAgents::unthreaded(mode, self.settings.limits.clone())
            .recorded_in(log)
            .going_on_from(earlier);
        if replay {
            for update in history::replay(&stored) {
                let _ = connection.send_notification(SessionNotification::new(id.clone(), update));
            }
        }
        // Titled by its first prompt, which a session made and loaded before it had
        // one (as acpx does) is still to come.
        let titled = stored.run.task != UNTITLED;
        let session = Arc::new(Session::new(id, opened, agents, titled));
        self.insert(session.clone());
        Ok(session)
    }

    fn list_sessions(&self, request: &ListSessionsRequest) -> Result<ListSessionsResponse, Error> {
        let cwd = request
            .cwd
            .as_ref()
            .map(|cwd| cwd.canonicalize().unwrap_or_else(|_| cwd.clone()))
            .map(|cwd| cwd.display().to_string());
        let sessions =
            history::list(cwd.as_deref()).map_err(|error| internal(error.to_string()))?;
        Ok(ListSessionsResponse::new(sessions))
    }

    async fn prompt(
        &self,
        request: PromptRequest,
        connection: &ConnectionTo<Client>,
    ) -> Result<PromptResponse, Error> {
        let session = self
            .session(&request.session_id)
            .ok_or_else(|| not_found(&request.session_id))?;
        let (text, context) = prompt_text(&request.prompt)?;
        session
            .prompt(connection, &text, &context)
            .await
            .map_err(|error| match error {
                PromptError::Busy => invalid(error.to_string()),
                PromptError::NotStarted(message) => invalid(message),
            })
    }

    fn insert(&self, session: Arc<Session>) {
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.insert(session.id.0.to_string(), session);
        }
    }

    /// Every session closed, all at once: prompts stopped, CLIs ended (what their walls
    /// held put back), runs recorded as ended with `exit_code`.
    async fn close_all(&self, exit_code: u8) {
        let sessions: Vec<Arc<Session>> = match self.sessions.lock() {
            Ok(mut sessions) => std::mem::take(&mut *sessions).into_values().collect(),
            Err(_) => Vec::new(),
        };
        let mut closing = tokio::task::JoinSet::new();
        for session in sessions {
            closing.spawn(async move { session.close(exit_code).await });
        }
        while closing.join_next().await.is_some() {}
    }
}

/// A session of the run store the editor asks for again.
struct Kept {
    id: SessionId,
    cwd: std::path::PathBuf,
    mcp_servers: Vec<McpServer>,
}

fn invalid(message: String) -> Error {
    Error::invalid_params().data(serde_json::Value::String(message))
}

fn internal(message: String) -> Error {
    Error::internal_error().data(serde_json::Value::String(message))
}

fn not_found(id: &SessionId) -> Error {
    agent_client_protocol::v1::schema::Error::session_not_found(id.clone()).into()
}
