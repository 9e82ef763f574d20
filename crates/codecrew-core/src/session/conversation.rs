//! Where one agent's conversation stands: what a job continues from a thread
//! ([`Continuation`]), and what carries over between the tasks of one agent in a chat
//! ([`Conversation`]).

use codecrew_intercept::Echoes;

use crate::usage::Usage;

/// Where a job starts when it continues an earlier conversation (a thread). The default
/// starts afresh.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Continuation {
    /// The CLI session to resume, for CLIs that can.
    pub session_id: Option<String>,
    /// The earlier exchanges (task, answer), oldest first, resent when there is no session
    /// to resume.
    pub earlier: Vec<(String, String)>,
    /// What the session to resume used before, for CLIs that report a session's usage
    /// rather than a run's (`Provider::reports_session_usage`).
    pub session_usage: Usage,
}

/// Where one agent's conversation stands between two tasks (a chat's lines): the
/// session its CLI resumes, what that session used, the exchanges so far (resent to a
/// CLI that cannot resume), and what its tool results held that looks like a call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversation {
    pub session_id: Option<String>,
    pub session_usage: Usage,
    pub earlier: Vec<(String, String)>,
    /// An envelope the model writes back from these is its text, never answered
    /// ([`Echoes`]).
    pub echoes: Echoes,
}

impl From<&Continuation> for Conversation {
    fn from(continuation: &Continuation) -> Self {
        Conversation {
            session_id: continuation.session_id.clone(),
            session_usage: continuation.session_usage,
            earlier: continuation.earlier.clone(),
            echoes: Echoes::default(),
        }
    }
}
