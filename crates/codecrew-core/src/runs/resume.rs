//! Going on from an earlier run (`query -c`, `--resume ID`, chat's `/resume`): where each
//! of its agents stands, read back from the store as a thread would give it.

use rusqlite::{OptionalExtension, params};

use super::{Result, Store, StoreError};
use crate::session::Continuation;
use crate::usage::{JobUsage, Usage};

/// How many runs back a chain of `-c` is followed for the earlier exchanges.
const MAX_CHAIN: usize = 100;

/// Where the agents of an earlier run stand: the run and those before it that it went on
/// from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Earlier {
    /// The run gone on from.
    pub run: String,
    /// Each agent that answered, in the order it first did.
    agents: Vec<AgentState>,
}

#[derive(Debug, Clone, PartialEq)]
struct AgentState {
    agent: String,
    /// The provider whose session it is (`claude`, `gemini`...).
    cli: String,
    model: Option<String>,
    session_id: Option<String>,
    /// (task, answer), oldest first.
    exchanges: Vec<(String, String)>,
    /// What the session used before, for CLIs that report a session's usage.
    session_usage: Usage,
}

/// One answered job of the chain, oldest first.
struct Answered {
    agent: String,
    cli: String,
    model: Option<String>,
    session_id: Option<String>,
    task: String,
    answer: String,
    usage: Option<JobUsage>,
}

impl Earlier {
    /// The agents that answered, in the order they first did.
    pub fn agents(&self) -> impl Iterator<Item = &str> {
        self.agents.iter().map(|state| state.agent.as_str())
    }

    /// Where `agent`, run by `provider`, goes on from: its session (only if the same
    /// provider made it) and its earlier exchanges.
    pub fn continuation(&self, agent: &str, provider: &str) -> Continuation {
        let Some(state) = self.agents.iter().find(|state| state.agent == agent) else {
            return Continuation::default();
        };
        let same = state.cli == provider;
        Continuation {
            session_id: state.session_id.clone().filter(|_| same),
            earlier: state.exchanges.clone(),
            session_usage: if same {
                state.session_usage
            } else {
                Usage::default()
            },
        }
    }

    /// The model `agent` answered with, for a mention that names none; only a model's
    /// name is taken (the store is data).
    pub fn model_for(&self, agent: &str, provider: &str) -> Option<String> {
        self.agents
            .iter()
            .find(|state| state.agent == agent && state.cli == provider)
            .and_then(|state| state.model.clone())
            .filter(|model| codecrew_agents::identifiers::is_model_name(model))
    }

    fn from_answers(run: String, answered: Vec<Answered>) -> Earlier {
        let mut agents: Vec<AgentState> = Vec::new();
        for job in answered {
            let at = match agents.iter().position(|state| state.agent == job.agent) {
                Some(at) => at,
                None => {
                    agents.push(AgentState {
                        agent: job.agent.clone(),
                        cli: job.cli.clone(),
                        model: None,
                        session_id: None,
                        exchanges: Vec::new(),
                        session_usage: Usage::default(),
                    });
                    agents.len() - 1
                }
            };
            let Some(state) = agents.get_mut(at) else {
                continue;
            };
            // The agent moves on to this job's CLI, model and session.
            if state.cli != job.cli || state.session_id != job.session_id {
                state.session_usage = Usage::default();
            }
            state.cli = job.cli;
            state.model = job.model.or(state.model.take());
            state.session_id = job.session_id;
            if let Some(usage) = &job.usage {
                state.session_usage.add(&usage.reported);
            }
            state.exchanges.push((job.task, job.answer));
        }
        Earlier { run, agents }
    }
}

impl Store {
    /// The newest run in `workspace` that an agent answered (of `query`, `execute` or
    /// `chat`), other than `except` (the chat asking): what `-c` goes on from.
    pub fn last_answered_in(
        &self,
        workspace: &str,
        except: Option<&str>,
    ) -> Result<Option<String>> {
        self.conn
            .query_row(
                "SELECT id FROM runs r
                 WHERE workspace = ?1 AND command IN ('query', 'execute', 'chat')
                   AND (?2 IS NULL OR id != ?2)
                   AND EXISTS (SELECT 1 FROM jobs j
                               WHERE j.run = r.id AND j.depth = 0 AND j.success = 1)
                 ORDER BY started DESC, rowid DESC LIMIT 1",
                params![workspace, except],
                |row| row.get(0),
            )
            .optional()
            .map_err(|e| self.sqlite(e))
    }

    /// Where the agents of the run `prefix` names stand, with the runs it went on from:
    /// each agent's exchanges that succeeded, its last session and model.
    pub fn earlier(&self, prefix: &str) -> Result<Earlier> {
        let id = self.resolve(prefix)?;
        let mut chain = vec![id.clone()];
        while chain.len() < MAX_CHAIN {
            let Some(last) = chain.last() else { break };
            let before: Option<String> = self
                .conn
                .query_row(
                    "SELECT continues FROM runs WHERE id = ?1",
                    params![last],
                    |row| row.get(0),
                )
                .optional()
                .map_err(|e| self.sqlite(e))?
                .flatten();
            match before {
                // A run removed since, or a loop someone wrote by hand, ends the chain.
                Some(before) if !chain.contains(&before) => chain.push(before),
                _ => break,
            }
        }
        let mut answered = Vec::new();
        for run in chain.iter().rev() {
            answered.extend(self.answered(run).map_err(|e| self.sqlite(e))?);
        }
        if answered.is_empty() {
            return Err(StoreError::NothingToResume(id));
        }
        Ok(Earlier::from_answers(id, answered))
    }

    /// The run's jobs of the command line (or chat lines) that succeeded, in order.
    fn answered(&self, run: &str) -> rusqlite::Result<Vec<Answered>> {
        let mut statement = self.conn.prepare_cached(
            "SELECT agent, cli, model, session_id, task, answer, usage FROM jobs
             WHERE run = ?1 AND depth = 0 AND success = 1 AND answer IS NOT NULL
             ORDER BY idx",
        )?;
        let rows = statement.query_map(params![run], |row| {
            let usage: Option<String> = row.get(6)?;
            Ok(Answered {
                agent: row.get(0)?,
                cli: row.get(1)?,
                model: row.get(2)?,
                session_id: row.get(3)?,
                task: row.get(4)?,
                answer: row.get(5)?,
                usage: usage.and_then(|usage| serde_json::from_str(&usage).ok()),
            })
        })?;
        rows.collect()
    }
}
