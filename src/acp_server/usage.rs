//! What the editor is told of usage at the end of each prompt: a `usage_update` per
//! agent that answered, with the tokens in its context (as near as its CLI's figures
//! tell: what the model read on its last turn and what it wrote) and what the session
//! has cost so far, where a CLI states a price (Claude Code).
//!
//! `size` is the model's context window where the CLI tells it (Claude Code's result
//! does); elsewhere 0, which editors read as "not known" (Zed then shows the count
//! without a limit) rather than a made-up one.

use std::collections::BTreeMap;

use agent_client_protocol::v1::schema::{Cost, SessionUpdate, UsageUpdate};
use serde_json::json;

use codecrew_core::usage::{JobUsage, Usage};

/// What codecrew does not know: the model's context window.
const WINDOW_UNKNOWN: u64 = 0;

/// The last turn each agent of one prompt reported tokens for, and its model's context
/// window when its CLI said.
#[derive(Debug, Default)]
pub struct ContextGauge {
    last_turn: BTreeMap<String, (Usage, Option<u64>)>,
}

impl ContextGauge {
    /// `agent`'s turn ended having used `usage`, in a window of `window` tokens.
    pub fn turn_ended(&mut self, agent: &str, usage: &Usage, window: Option<u64>) {
        if usage.input_tokens.is_some() || usage.output_tokens.is_some() {
            self.last_turn.insert(agent.to_owned(), (*usage, window));
        }
    }

    /// The updates of the prompt's end: one per agent whose CLI reported tokens, each
    /// with the session's cost so far (`spent`: every agent's usage in the session).
    pub fn updates(&self, spent: &BTreeMap<String, JobUsage>) -> Vec<SessionUpdate> {
        let cost = session_cost(spent);
        self.last_turn
            .iter()
            .map(|(agent, (usage, window))| {
                let input = usage.input_tokens.unwrap_or(0);
                let output = usage.output_tokens.unwrap_or(0);
                let mut meta = serde_json::Map::new();
                meta.insert(
                    "codecrew".to_owned(),
                    json!({"agent": agent, "inputTokens": input, "outputTokens": output}),
                );
                let size = window.unwrap_or(WINDOW_UNKNOWN);
                let update = UsageUpdate::new(input.saturating_add(output), size)
                    .cost(cost.map(|usd| Cost::new(usd, "USD")))
                    .meta(meta);
                SessionUpdate::UsageUpdate(update)
            })
            .collect()
    }
}

/// What the session cost so far in US dollars, when any of its CLIs stated a price.
fn session_cost(spent: &BTreeMap<String, JobUsage>) -> Option<f64> {
    JobUsage::total(spent.values()).reported.cost_usd
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(input: u64, output: u64, cost: Option<f64>) -> Usage {
        Usage {
            input_tokens: Some(input),
            output_tokens: Some(output),
            cached_tokens: None,
            cost_usd: cost,
        }
    }

    /// The context is the last turn's, not the sum of the turns; the cost is the
    /// session's; an agent that reported no tokens gets no update.
    #[test]
    fn each_agent_gets_its_last_turn_and_the_sessions_cost() {
        let mut gauge = ContextGauge::default();
        gauge.turn_ended("claude", &tokens(100, 10, Some(0.5)), None);
        gauge.turn_ended("claude", &tokens(300, 20, Some(0.25)), None);
        gauge.turn_ended("copilot", &Usage::default(), Some(128_000));
        let mut spent = BTreeMap::new();
        for (agent, cost) in [("claude", 0.75), ("gemini", 0.5)] {
            let mut used = JobUsage::default();
            used.reported.cost_usd = Some(cost);
            spent.insert(agent.to_owned(), used);
        }
        let updates = serde_json::to_value(gauge.updates(&spent)).unwrap();
        assert_eq!(updates.as_array().unwrap().len(), 1, "{updates}");
        let update = &updates[0];
        assert_eq!(update["sessionUpdate"], "usage_update");
        assert_eq!(update["used"], 320);
        assert_eq!(update["size"], 0);
        assert_eq!(update["cost"], json!({"amount": 1.25, "currency": "USD"}));
        assert_eq!(update["_meta"]["codecrew"]["agent"], "claude");
    }

    /// Where the CLI said its model's window, the editor gets it as the size.
    #[test]
    fn the_window_the_cli_reported_is_the_size() {
        let mut gauge = ContextGauge::default();
        gauge.turn_ended("claude", &tokens(5_000, 18, None), Some(1_000_000));
        let updates = serde_json::to_value(gauge.updates(&BTreeMap::new())).unwrap();
        assert_eq!(updates[0]["used"], 5_018);
        assert_eq!(updates[0]["size"], 1_000_000);
    }
}
