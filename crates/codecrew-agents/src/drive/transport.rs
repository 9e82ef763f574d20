//! How a job's turns reach its CLI: a new process per turn that resumes the session
//! (`--resume <id>`, `exec resume <id>`), or one process kept for the whole loop
//! ([`Resident`]) where the CLI has a long-lived mode (Claude's stream-json input, `codex
//! app-server`, `gemini --acp`). The provider chooses; the session
//! loop sees the same turn either way.

use std::ffi::OsString;
use std::path::Path;

use std::time::SystemTime;

use codecrew_intercept::decode::{Event, Format};
use tokio::sync::watch;

use crate::drive::acp::Acp;
use crate::drive::app_server::{AppServer, ThreadSettings};
use crate::drive::claude_control::ClaudeControl;
use crate::drive::native::{NativeGate, Outbox};
use crate::drive::process::{self, Ending, Outcome, RunLimits, SpawnError};
use crate::drive::resident::Resident;
use crate::drive::start;
use crate::{LongLived, Provider, Turn};
use codecrew_intercept::decode::Usage;

/// The longest a CLI's preparation may take (Copilot unpacks about 235 MB).
pub const PREPARATION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// What every command of a job is made from.
pub struct Launch<'a> {
    pub provider: &'a Provider,
    /// The CLI, found on PATH.
    pub program: &'a Path,
    pub workspace: &'a Path,
    /// Variables the job sets for its CLI.
    pub env: &'a [(OsString, OsString)],
    /// Decides the CLI's own tool calls where its protocol asks first.
    pub gate: Option<&'a dyn NativeGate>,
    /// Folders the CLI may also read inside its wall (`permissions.cli_read`).
    pub reads: &'a [std::path::PathBuf],
    /// In a linked worktree codecrew made: its repository's git data.
    pub git: &'a codecrew_policy::sandbox::LinkedGit,
}

/// What a turn's CLI printed, as the session loop is to read it.
#[derive(Debug)]
pub enum Output<'a> {
    /// Its stdout as it is, for the decoder of the turn's format ([`Transport::format`]):
    /// a CLI run per turn, Claude's kept stream-json.
    Bytes(&'a [u8]),
    /// What a CLI kept over a JSON-RPC protocol reported, already events: its adapter
    /// read its messages (`codex app-server`, an ACP agent).
    Events(Vec<Event>),
}

/// What a kept CLI reads and writes.
enum Protocol {
    /// Claude: a stream-json `user` line per turn; its output as when run per turn, its
    /// questions about its own tools on the control protocol.
    StreamJsonInput(ClaudeControl),
    /// Codex: `codex app-server`'s JSON-RPC, read as events.
    AppServer(AppServer),
    /// Gemini, Qwen Code, Copilot, opencode: the Agent Client Protocol, read as events.
    Acp(Acp),
}

impl Protocol {
    /// Whether the kept CLI is past its set-up, having printed something: an ACP agent
    /// once its session is open (it may answer `initialize` before).
    fn past_start_up(&self) -> bool {
        match self {
            Protocol::Acp(acp) => acp.session().is_some(),
            Protocol::StreamJsonInput(_) | Protocol::AppServer(_) => true,
        }
    }

    /// For the JSON-RPC protocols, one chunk of stdout read as events (into `events`,
    /// with what codecrew answers into `outbox`) and whether the turn is over; `None`
    /// where stdout is read as it is.
    fn read(&mut self, bytes: &[u8], events: &mut Vec<Event>, outbox: &mut Outbox) -> Option<bool> {
        match self {
            Protocol::StreamJsonInput(control) => {
                control.read(bytes, outbox);
                None
            }
            Protocol::AppServer(app) => Some(app.read(bytes, events, outbox)),
            Protocol::Acp(acp) => Some(acp.read(bytes, events, outbox)),
        }
    }
}

/// A job's way of running its turns.
pub struct Transport<'a> {
    launch: Launch<'a>,
    /// Whether one process serves the loop (else a new one per turn).
    keep_alive: bool,
    /// The kept process, started by the first turn (and again after a failure), and the
    /// protocol it speaks.
    process: Option<(Box<Resident>, Protocol)>,
    /// The cost the kept process has reported so far: Claude's `total_cost_usd` counts
    /// every turn of the process.
    cost_so_far: f64,
    /// How the last turn reached the CLI: its kept protocol, `None` per turn.
    last_kept: Option<LongLived>,
    /// When the kept process started.
    kept_since: Option<SystemTime>,
    /// Whether the CLI's preparation ran (or was not needed).
    prepared: bool,
}

impl<'a> Transport<'a> {
    /// What the provider offers: its long-lived mode unless the agent turned it off.
    pub fn new(launch: Launch<'a>, mode: codecrew_tools::Mode) -> Self {
        Transport {
            keep_alive: launch.provider.keeps_alive(mode),
            launch,
            process: None,
            cost_so_far: 0.0,
            last_kept: None,
            kept_since: None,
            prepared: false,
        }
    }

    /// Before the job's first CLI process: the CLI's preparation, where it needs one
    /// ([`crate::Cli::preparation`]). Its failure is the turn's to report: the
    /// CLI then fails to start the same way.
    async fn prepare(&mut self, limits: &RunLimits, cancel: watch::Receiver<bool>) {
        if std::mem::replace(&mut self.prepared, true) {
            return;
        }
        let Launch {
            provider,
            program,
            workspace,
            env,
            reads,
            ..
        } = self.launch;
        let Some(mut spec) = provider.preparation_command(program, workspace) else {
            return;
        };
        spec.env.extend(env.iter().cloned());
        spec.read_also(reads);
        tracing::info!(agent = %provider.agent_id, command = %spec.display(), "preparing");
        let limits = RunLimits {
            timeout: limits.timeout.min(PREPARATION_TIMEOUT),
            ..*limits
        };
        if let Err(error) = process::run(&spec, &limits, cancel, |_| {}).await {
            tracing::warn!(agent = %provider.agent_id, "its preparation did not run: {error}");
        }
    }

    /// The CLI this transport runs.
    pub fn program(&self) -> &'a Path {
        self.launch.program
    }

    pub fn keeps_alive(&self) -> bool {
        self.keep_alive
    }

    /// A stored session is continued per turn by an ACP agent whose `session/load`
    /// codecrew does not use (Gemini's erases the session it loads, see
    /// crate::drive::acp).
    fn continues_stored_session_per_turn(&self, turn: &Turn<'_>) -> bool {
        let provider = self.launch.provider;
        self.process.is_none()
            && turn.session.is_some()
            && provider.long_lived() == Some(LongLived::Acp)
            && !provider.loads_kept_sessions()
    }

    /// The output format a turn's stdout is read in, where it is passed on as bytes
    /// ([`Output::Bytes`]): the CLI's own (a kept JSON-RPC CLI's turns come as
    /// [`Output::Events`]).
    pub fn format(&self) -> Format {
        self.launch.provider.format()
    }

    /// From now on, a new process per turn (after the kept one failed).
    pub async fn per_turn(&mut self) {
        self.keep_alive = false;
        self.reset().await;
    }

    /// Runs one turn, passing what the CLI printed to `on_output`, which returns true once
    /// the answer is complete. A start that collided with another process of its CLI
    /// setting up, before it passed anything on, is made again ([`start`]).
    pub async fn turn(
        &mut self,
        turn: &Turn<'_>,
        limits: &RunLimits,
        cancel: watch::Receiver<bool>,
        mut on_output: impl FnMut(Output<'_>) -> bool,
    ) -> Result<Outcome, SpawnError> {
        let provider = self.launch.provider;
        self.prepare(limits, cancel.clone()).await;
        if self.keep_alive && self.continues_stored_session_per_turn(turn) {
            tracing::info!(agent = %provider.agent_id, "continuing a stored session: one process per turn");
            self.keep_alive = false;
        }
        let mut retries = 0;
        loop {
            let starts = !self.keep_alive || self.process.is_none();
            let mut passed_on = false;
            let outcome = self
                .attempt(turn, limits, cancel.clone(), |output| {
                    passed_on = true;
                    on_output(output)
                })
                .await?;
            let collided = starts && provider.collided_at_start(&outcome.stderr_tail);
            if !start::again(collided, passed_on, &outcome.ending, retries) {
                return Ok(outcome);
            }
            retries += 1;
            tracing::debug!(
                agent = %provider.agent_id,
                retry = retries,
                stderr = outcome.stderr_tail.trim(),
                "the CLI collided with another of its processes setting up; starting it again"
            );
            if !start::pause(retries, cancel.clone()).await {
                return Ok(outcome);
            }
        }
    }

    /// One start of the turn (or the turn in the kept process): a start of a CLI whose
    /// processes share their set-up waits at its gate ([`start::Gates`]).
    async fn attempt(
        &mut self,
        turn: &Turn<'_>,
        limits: &RunLimits,
        mut cancel: watch::Receiver<bool>,
        mut on_output: impl FnMut(Output<'_>) -> bool,
    ) -> Result<Outcome, SpawnError> {
        let Launch {
            provider,
            program,
            workspace,
            env,
            gate,
            reads,
            git,
        } = self.launch;
        let starts = !self.keep_alive || self.process.is_none();
        // Dropped before it is through (the start failed), it leaves the gate to the next.
        let mut pass = if starts && provider.shares_start_up() {
            start::GATES
                .enter(&provider.program(), cancel.clone())
                .await
        } else {
            start::Pass::default()
        };
        self.last_kept = None;
        if !self.keep_alive {
            let mut spec = provider.command(program, turn, workspace);
            spec.env.extend(env.iter().cloned());
            spec.read_also(reads);
            spec.with_git(git);
            tracing::info!(agent = %provider.agent_id, command = %spec.display(), "running");
            // Run per turn, the CLI prints nothing before its set-up is done.
            return process::run(&spec, limits, cancel, |bytes| {
                pass.through();
                on_output(Output::Bytes(bytes));
            })
            .await;
        }
        let (resident, protocol) = match &mut self.process {
            Some(kept) => kept,
            None => {
                let mut spec = provider.resident_command(program, turn, workspace);
                spec.env.extend(env.iter().cloned());
                spec.read_also(reads);
                spec.with_git(git);
                tracing::info!(agent = %provider.agent_id, command = %spec.display(), "starting, kept for the loop");
                self.cost_so_far = 0.0;
                let protocol = match provider.long_lived() {
                    Some(LongLived::AppServer) => {
                        Protocol::AppServer(AppServer::new(ThreadSettings {
                            cwd: workspace.display().to_string(),
                            mode: turn.mode,
                            model: provider.model(turn.model).map(str::to_owned),
                            resume: turn.session.map(str::to_owned),
                        }))
                    }
                    Some(LongLived::Acp) => {
                        if let Some(session) = turn.session {
                            tracing::info!(agent = %provider.agent_id, "continuing the stored session over ACP: session/load {session}");
                        }
                        let agent = std::iter::once(provider.program())
                            .chain(spec.args.first().map(|a| a.to_string_lossy().into_owned()))
                            .collect::<Vec<_>>()
                            .join(" ");
                        Protocol::Acp(
                            Acp::new(&agent, workspace.display().to_string())
                                .resuming(turn.session.map(str::to_owned))
                                .speaking(provider.acp_dialect(turn.model)),
                        )
                    }
                    Some(LongLived::StreamJsonInput) | None => {
                        Protocol::StreamJsonInput(ClaudeControl::default())
                    }
                };
                self.kept_since = Some(SystemTime::now());
                self.process
                    .insert((Box::new(Resident::spawn(&spec)?), protocol))
            }
        };
        self.last_kept = provider.long_lived();
        let message = match protocol {
            Protocol::StreamJsonInput(control) => control.start_turn(turn.prompt),
            Protocol::AppServer(app) => app.start_turn(turn.prompt, turn.schema),
            Protocol::Acp(acp) => acp.start_turn(turn.prompt),
        };
        let outcome = resident
            .turn(&message, limits, &mut cancel, gate, |bytes, outbox| {
                let mut events = Vec::new();
                let over = match protocol.read(bytes, &mut events, outbox) {
                    None => on_output(Output::Bytes(bytes)),
                    Some(over) => {
                        let answered = !events.is_empty() && on_output(Output::Events(events));
                        over || answered
                    }
                };
                if protocol.past_start_up() {
                    pass.through();
                }
                over
            })
            .await;
        if outcome.ending != Ending::TurnEnded {
            // Gone or stopped: a later turn starts a new process.
            if let Some((_, protocol)) = self.process.take() {
                self.ended(&protocol);
            }
        }
        Ok(outcome)
    }

    /// Whether the usage the last turn reported is its session's running total, earlier
    /// runs included ([`Provider::reports_session_usage`]), rather than the turn's own: an
    /// ACP agent's is the turn's own (codecrew sums the turn's model calls itself).
    pub fn reported_session_total(&self) -> bool {
        self.last_kept != Some(LongLived::Acp) && self.launch.provider.reports_session_usage()
    }

    /// What this turn used, from what the CLI reported at its end: a kept process
    /// reports its cost as a running total, taken apart here.
    pub fn own_part(&mut self, mut usage: Usage) -> Usage {
        if let (true, Some(total)) = (self.keep_alive, usage.cost_usd) {
            usage.cost_usd = Some((total - self.cost_so_far).max(0.0));
            self.cost_so_far = total;
        }
        usage
    }

    /// Ends the kept process after a failed turn, so that the next starts afresh.
    pub async fn reset(&mut self) {
        if let Some((resident, protocol)) = self.process.take() {
            resident.close().await;
            self.ended(&protocol);
        }
    }

    /// A kept process is gone: the CLI tidies what its start-up left behind.
    fn ended(&mut self, protocol: &Protocol) {
        let session = match protocol {
            Protocol::Acp(acp) => acp.session(),
            Protocol::AppServer(_) | Protocol::StreamJsonInput(_) => None,
        };
        if let Some(started) = self.kept_since.take() {
            self.launch.provider.after_kept(started, session);
        }
    }

    /// The loop is over: a kept process is told so and ends.
    pub async fn close(mut self) {
        self.reset().await;
    }
}
