//! What an ACP agent reports a turn used, in ACP's own names (`inputTokens` …), summed
//! over the turn's model calls or taken apart from a running total.

use serde_json::{Value, json};

/// Token counts summed over a turn's model calls.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct CallUsage {
    pub(super) input: Option<u64>,
    pub(super) output: Option<u64>,
    pub(super) cached: Option<u64>,
}

impl CallUsage {
    /// Adds one call's ACP-style counts (`inputTokens`, `outputTokens`, `thoughtTokens`,
    /// `cachedReadTokens`).
    pub(super) fn add(&mut self, usage: &Value) {
        let field = |name: &str| usage.get(name).and_then(Value::as_u64);
        let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        self.input = sum(self.input, field("inputTokens"));
        self.output = sum(
            self.output,
            sum(field("outputTokens"), field("thoughtTokens")),
        );
        self.cached = sum(self.cached, field("cachedReadTokens"));
    }

    /// What was used since `before`, both running totals.
    pub(super) fn since(&self, before: &CallUsage) -> CallUsage {
        let less =
            |now: Option<u64>, then: Option<u64>| now.map(|n| n.saturating_sub(then.unwrap_or(0)));
        CallUsage {
            input: less(self.input, before.input),
            output: less(self.output, before.output),
            cached: less(self.cached, before.cached),
        }
    }

    /// The counts as ACP's `usage` names them.
    pub(super) fn as_acp(&self) -> Value {
        json!({"inputTokens": self.input, "outputTokens": self.output,
               "cachedReadTokens": self.cached})
    }
}
