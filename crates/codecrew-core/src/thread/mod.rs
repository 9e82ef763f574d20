//! Threads: conversations that continue across codecrew invocations (`--thread <name>`).
//!
//! A thread is one JSON document, `<workspace>/.codecrew/threads/<name>.json`. It keeps,
//! per agent, the CLI session to resume (for CLIs that can) and every exchange (task and
//! answer). The exchanges are both the history `codecrew threads show` prints and the
//! transcript resent to CLIs that cannot resume, so nothing is stored twice.
//! [`store`] reads and writes the files so that concurrent jobs and processes never
//! corrupt a thread nor lose an exchange.

pub mod seal;
pub mod store;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::session::{Continuation, JobReport};
use crate::usage::{JobUsage, Usage};
use codecrew_agents::identifiers;

pub use store::ThreadStore;

/// The longest thread name.
pub const MAX_NAME_LEN: usize = 64;

/// The version of the file format this codecrew writes and reads.
const FORMAT_VERSION: u32 = 1;

/// What can go wrong with a thread.
#[derive(Debug, thiserror::Error)]
pub enum ThreadError {
    #[error(
        "invalid thread name {name:?}: {reason}; use letters, digits, '-', '_' and '.', \
         at most {MAX_NAME_LEN} characters, not starting with '.'"
    )]
    InvalidName { name: String, reason: &'static str },
    #[error(
        "no thread named {name:?} (no {}); `codecrew threads list` shows the threads",
        path.display()
    )]
    NotFound { name: String, path: PathBuf },
    #[error(
        "the thread file {} cannot be read as a thread ({reason}); nothing was changed — \
         repair it, or remove the thread with `codecrew threads rm {name}`",
        path.display()
    )]
    Corrupt {
        name: String,
        path: PathBuf,
        reason: String,
    },
    #[error(
        "the thread {name:?} ({}) was not written by your codecrew: it has no seal of \
         yours, so it may have come with the checkout (or from an earlier codecrew, \
         before threads were sealed). It is not continued, so that a file a repository ships cannot \
         choose the sessions and models your agents resume. Read it with `codecrew \
         threads show {name}`; if it is yours, `codecrew threads adopt {name}` seals it; \
         or use another thread name",
        path.display()
    )]
    NotYours { name: String, path: PathBuf },
    #[error(
        "cannot seal or check the thread {name:?} with your key ({source}); fix or remove \
         the key file (a new one is then made)"
    )]
    Key {
        name: String,
        source: codecrew_config::secret_file::SecretFileError,
    },
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

pub type Result<T, E = ThreadError> = std::result::Result<T, E>;

/// A valid thread name: it is a file name in the threads directory, so it is kept to
/// characters that are safe there (no `/`, no `..`, no hidden or temporary files).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ThreadName(String);

impl ThreadName {
    pub fn parse(name: &str) -> Result<ThreadName> {
        let invalid = |reason| ThreadError::InvalidName {
            name: name.to_owned(),
            reason,
        };
        if name.is_empty() {
            return Err(invalid("it is empty"));
        }
        if name.len() > MAX_NAME_LEN {
            return Err(invalid("it is too long"));
        }
        if name.starts_with('.') {
            return Err(invalid("it starts with '.'"));
        }
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return Err(invalid("it has a character that is not allowed"));
        }
        Ok(ThreadName(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ThreadName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One conversation, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thread {
    pub version: u32,
    pub name: String,
    /// RFC 3339, UTC.
    pub created: String,
    /// RFC 3339, UTC: the time of the last exchange.
    pub updated: String,
    /// Per agent id: what its next job needs to continue.
    pub agents: BTreeMap<String, AgentState>,
    /// Every exchange, oldest first.
    pub exchanges: Vec<Exchange>,
    /// The user's seal of what the thread continues ([`seal`]): absent in a thread
    /// codecrew did not write for this user (one a checkout shipped, or one written
    /// before threads were sealed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seal: Option<String>,
}

/// Where one agent of a thread stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentState {
    /// The provider that ran it (`claude`, `command`…): a session id only means something
    /// to the same CLI.
    pub provider: String,
    pub model: Option<String>,
    /// The CLI's session to resume; `None` for CLIs that cannot resume.
    pub session_id: Option<String>,
}

/// One task and its answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    pub agent: String,
    pub provider: String,
    pub model: Option<String>,
    /// `query` or `execute`.
    pub mode: String,
    pub task: String,
    pub answer: String,
    /// RFC 3339, UTC.
    pub time: String,
    pub session_id: Option<String>,
    /// What the job used (absent in threads written before codecrew recorded it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<JobUsage>,
}

impl Exchange {
    /// The exchange of a finished job.
    pub fn from_report(task: &str, report: &JobReport, time: String) -> Exchange {
        Exchange {
            agent: report.agent.clone(),
            provider: report.provider.clone(),
            model: report.model.clone(),
            mode: report.mode.name().to_owned(),
            task: task.to_owned(),
            answer: report.response.clone(),
            time,
            session_id: report.session_id.clone(),
            usage: Some(report.usage),
        }
    }
}

impl Thread {
    pub fn new(name: &ThreadName, now: String) -> Thread {
        Thread {
            version: FORMAT_VERSION,
            name: name.as_str().to_owned(),
            created: now.clone(),
            updated: now,
            agents: BTreeMap::new(),
            exchanges: Vec::new(),
            seal: None,
        }
    }

    /// Where `agent`, run by `provider`, continues: its session (only if the same provider
    /// made it) and its earlier exchanges.
    pub fn continuation(&self, agent: &str, provider: &str) -> Continuation {
        let session_id = self
            .agents
            .get(agent)
            .filter(|state| state.provider == provider)
            .and_then(|state| state.session_id.clone());
        let earlier = self
            .exchanges
            .iter()
            .filter(|exchange| exchange.agent == agent)
            .map(|exchange| (exchange.task.clone(), exchange.answer.clone()))
            .collect();
        // What the session to resume has used so far: each exchange recorded its own part.
        let mut session_usage = Usage::default();
        let same_session = |exchange: &&Exchange| {
            exchange.agent == agent && session_id.is_some() && exchange.session_id == session_id
        };
        for exchange in self.exchanges.iter().filter(same_session) {
            if let Some(usage) = &exchange.usage {
                session_usage.add(&usage.reported);
            }
        }
        Continuation {
            session_id,
            earlier,
            session_usage,
        }
    }

    /// The model `agent` used last with `provider`, for a mention that names none: a
    /// continued conversation keeps its model.
    /// Only a model's name is taken ([`identifiers::is_model_name`]): the file is data.
    pub fn model_for(&self, agent: &str, provider: &str) -> Option<String> {
        self.agents
            .get(agent)
            .filter(|state| state.provider == provider)
            .and_then(|state| state.model.clone())
            .filter(|model| {
                let usable = identifiers::is_model_name(model);
                if !usable {
                    tracing::warn!(
                        agent,
                        "{}: the thread's model is not used",
                        identifiers::model_error(model, "stored in the thread")
                    );
                }
                usable
            })
    }

    /// What every exchange that recorded its usage used, summed.
    pub fn usage(&self) -> JobUsage {
        JobUsage::total(self.exchanges.iter().filter_map(|e| e.usage.as_ref()))
    }

    /// Adds an exchange and moves its agent on to the exchange's session.
    pub fn add(&mut self, exchange: Exchange) {
        self.agents.insert(
            exchange.agent.clone(),
            AgentState {
                provider: exchange.provider.clone(),
                model: exchange.model.clone(),
                session_id: exchange.session_id.clone(),
            },
        );
        if exchange.time > self.updated {
            self.updated = exchange.time.clone();
        }
        self.exchanges.push(exchange);
    }
}

/// The current time in RFC 3339, UTC, to the second (`2025-01-31T09:05:00Z`).
pub fn now() -> String {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    rfc3339(seconds)
}

/// Seconds since the Unix epoch as RFC 3339, UTC. Hand-made (Howard Hinnant's
/// `civil_from_days`) rather than a date crate: codecrew needs nothing else of dates.
fn rfc3339(seconds: u64) -> String {
    let days = seconds / 86_400;
    let rest = seconds % 86_400;
    let (hour, minute, second) = (rest / 3600, rest % 3600 / 60, rest % 60);
    // Days since 0000-03-01, so that a leap day ends its year.
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for good in ["a", "fix-login", "v1.2_test", &"x".repeat(MAX_NAME_LEN)] {
            assert_eq!(ThreadName::parse(good).unwrap().as_str(), good);
        }
        for bad in [
            "",
            ".hidden",
            "..",
            "a/b",
            "../x",
            "a b",
            "é",
            "a\nb",
            &"x".repeat(MAX_NAME_LEN + 1),
        ] {
            let error = ThreadName::parse(bad).unwrap_err();
            assert!(
                matches!(error, ThreadError::InvalidName { .. }),
                "{bad:?}: {error}"
            );
        }
    }

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339(4_107_542_399), "2100-02-28T23:59:59Z");
        assert_eq!(now().len(), "1970-01-01T00:00:00Z".len());
    }

    fn exchange(agent: &str, provider: &str, session: Option<&str>, task: &str) -> Exchange {
        Exchange {
            agent: agent.to_owned(),
            provider: provider.to_owned(),
            model: Some("m1".to_owned()),
            mode: "query".to_owned(),
            task: task.to_owned(),
            answer: format!("answer to {task}"),
            time: "2025-01-01T00:00:01Z".to_owned(),
            session_id: session.map(str::to_owned),
            usage: None,
        }
    }

    #[test]
    fn continuation_per_agent_and_provider() {
        let name = ThreadName::parse("t").unwrap();
        let mut thread = Thread::new(&name, "2025-01-01T00:00:00Z".to_owned());
        thread.add(exchange("claude", "claude", Some("s1"), "one"));
        thread.add(exchange("mine", "command", None, "two"));
        thread.add(exchange("claude", "claude", Some("s2"), "three"));
        assert_eq!(thread.updated, "2025-01-01T00:00:01Z");

        let claude = thread.continuation("claude", "claude");
        assert_eq!(claude.session_id.as_deref(), Some("s2"));
        assert_eq!(
            claude.earlier,
            [
                ("one".to_owned(), "answer to one".to_owned()),
                ("three".to_owned(), "answer to three".to_owned())
            ]
        );
        // The same agent id now run by another CLI: no session to resume, the transcript.
        let moved = thread.continuation("claude", "gemini");
        assert_eq!(moved.session_id, None);
        assert_eq!(moved.earlier.len(), 2);
        assert_eq!(thread.model_for("claude", "claude").as_deref(), Some("m1"));
        assert_eq!(thread.model_for("claude", "gemini"), None);

        let mine = thread.continuation("mine", "command");
        assert_eq!(mine.session_id, None);
        assert_eq!(mine.earlier.len(), 1);
        assert!(thread.continuation("other", "claude").earlier.is_empty());
    }
}
