//! The permission decision for a validated call: the mode, the policy (on the blocking
//! pool: it may read files), then the asker, `--yes` or a refusal where nobody can be
//! asked.

use serde_json::Value;

use codecrew_policy::{Answer, Decision, Grant, Question, Reason};

use super::ToolExecutor;
use std::sync::Arc;

use crate::{Decided, DecidedBy, ErrorCode, ToolError};

impl ToolExecutor {
    /// The permission decision for a validated call, and the question when it asks;
    /// the grant when it may run, and who decided.
    pub(super) async fn permit(
        &self,
        call_id: Option<&str>,
        tool: &str,
        readonly: bool,
        input: &Value,
    ) -> (Result<Grant, ToolError>, Decided) {
        let by_policy = Decided::by(DecidedBy::Policy);
        let reason = match self.decide(tool, readonly, input).await {
            Decision::Allow(grant) => return (Ok(grant), by_policy),
            Decision::Deny(reason) => {
                let hint = reason.hint.clone().unwrap_or_else(|| {
                    "no flag or prompt overrides a denial; change the call".to_owned()
                });
                let denied = ToolError::new(
                    ErrorCode::PermissionDenied,
                    format!("codecrew:{tool} is denied: {}", reason.message),
                )
                .with_suggestion(hint);
                return (Err(denied), by_policy);
            }
            Decision::Ask(reason) => reason,
        };
        // Let through after asking about what it touches: what it reads is kept nowhere.
        let allowed = |by| {
            let decided = Decided {
                by,
                guarded: reason.risk,
            };
            (Ok(Grant::Approved), decided)
        };
        if self.assume_yes {
            tracing::info!(tool, reason = %reason, "allowed by --yes");
            return allowed(DecidedBy::Yes);
        }
        let key = format!("{tool}\u{0}{input}");
        if self
            .approved
            .lock()
            .is_ok_and(|approved| approved.contains(&key))
        {
            return allowed(DecidedBy::Session);
        }
        if !self.asker.interactive() {
            return (
                Err(needs_approval(tool, &reason)),
                Decided::by(DecidedBy::Nobody),
            );
        }
        let asker = Arc::clone(&self.asker);
        let question = Question {
            call_id: call_id.map(str::to_owned),
            tool: tool.to_owned(),
            input: input.clone(),
            reason: reason.clone(),
        };
        let answer = tokio::task::spawn_blocking(move || asker.ask(&question))
            .await
            .unwrap_or(Answer::Deny);
        match answer {
            Answer::Once => allowed(DecidedBy::User),
            Answer::Always => {
                if let Some(rule) = &reason.hint
                    && let Err(error) = self.policy.allow_for_run(rule)
                {
                    tracing::warn!("could not remember {rule:?}: {error}");
                }
                if let Ok(mut approved) = self.approved.lock() {
                    approved.insert(key);
                }
                allowed(DecidedBy::User)
            }
            Answer::Deny => {
                let refused = ToolError::new(
                    ErrorCode::PermissionDenied,
                    format!("the user did not allow codecrew:{tool}: {}", reason.message),
                )
                .with_suggestion("do something else, or ask the user what they want");
                (Err(refused), Decided::by(DecidedBy::User))
            }
        }
    }
}

impl ToolExecutor {
    /// The policy's decision, taken on a blocking thread: the analysis reads the disk and
    /// may list a repository's history (`git rev-list`), which must not hold up the
    /// runtime's workers.
    async fn decide(&self, tool: &str, readonly: bool, input: &Value) -> Decision {
        let policy = Arc::clone(&self.policy);
        let (tool, input, context) = (tool.to_owned(), input.clone(), self.context.clone());
        tokio::task::spawn_blocking(move || policy.decide(&tool, readonly, &input, &context))
            .await
            .unwrap_or_else(|error| {
                Decision::Deny(Reason::new(format!(
                    "the permission check did not finish: {error}"
                )))
            })
    }
}

/// A call that needs approval when nobody can be asked.
fn needs_approval(tool: &str, reason: &Reason) -> ToolError {
    let suggestion = match &reason.hint {
        Some(rule) => format!(
            "the user can rerun with --yes (allows calls that would ask), or add \"{rule}\" \
             to `allow` under [permissions] in their user config"
        ),
        None => "the user can rerun with --yes, which allows calls that would ask; no allow \
                 rule lifts this check"
            .to_owned(),
    };
    ToolError::new(
        ErrorCode::PermissionDenied,
        format!(
            "codecrew:{tool} needs the user's approval and there is no terminal to ask on: {}",
            reason.message
        ),
    )
    .with_suggestion(suggestion)
}
