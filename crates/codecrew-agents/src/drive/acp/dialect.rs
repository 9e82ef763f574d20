//! Where ACP agents differ from one another in what they send, and what codecrew does
//! about it. Each CLI module says which of these its agent needs
//! ([`crate::Cli::acp_dialect`]); Gemini CLI and Qwen Code need none.

use serde_json::Value;

/// How one agent speaks ACP.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dialect {
    /// The model to choose with `session/set_model` once the session is open, for an
    /// agent that takes none on its command line (`opencode acp`).
    pub model: Option<String>,
    /// The agent continues a stored session with `session/load`, and codecrew trusts
    /// it to (Gemini CLI's erases the session it loads).
    pub loads_sessions: bool,
    /// The prompt response's `usage` counts every prompt of the process so far, not this
    /// one (Copilot CLI).
    pub usage_is_running_total: bool,
    /// The agent writes its own notices into the model's text, as whole message chunks
    /// at a message's start: `Info: …` and `Warning: …`, left out; and a failed model
    /// call as an `Error: …` chunk before an ordinary `end_turn` without `usage`, which
    /// codecrew reports as the turn's failure (Copilot CLI).
    pub notices_in_text: bool,
    /// A refused permission ends the agent's turn, the model reading the refusal only
    /// with the next prompt (Copilot CLI): codecrew sends that prompt itself, with why,
    /// so that the model goes on within the same turn as with the other agents.
    pub refusal_ends_turn: bool,
}

/// What a message chunk at the start of a message is, for an agent with
/// [`Dialect::notices_in_text`].
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Chunk {
    /// The model's text.
    Text,
    /// The agent's own notice: not the model's words.
    Notice,
    /// Perhaps the agent's report of a failed model call: held until the turn's end says.
    MaybeFailure,
}

pub(super) fn classify(text: &str) -> Chunk {
    if text.starts_with("Info: ") || text.starts_with("Warning: ") {
        Chunk::Notice
    } else if text.starts_with("Error: ") {
        Chunk::MaybeFailure
    } else {
        Chunk::Text
    }
}

/// Whether a prompt response reports what the turn used: Copilot CLI's answer to a failed
/// model call does not.
pub(super) fn has_usage(result: &Value) -> bool {
    result["usage"].is_object()
}
