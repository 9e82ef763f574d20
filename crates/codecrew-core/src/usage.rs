//! What a job used: the tokens and cost its CLI reported, summed over the job's turns,
//! and what codecrew counted itself (turns, tool calls, wall time).
//!
//! The token and cost figures are only ever the CLI's own ([`Usage`]): a CLI that reports
//! no cost (Gemini, Codex) or no tokens (Copilot) leaves them `null`, never estimated.

use serde::{Deserialize, Serialize};

pub use codecrew_intercept::decode::Usage;

/// One job's usage, or the sum of several.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JobUsage {
    /// `input_tokens`, `output_tokens`, `cached_tokens`, `cost_usd`, as the CLI reported.
    #[serde(flatten)]
    pub reported: Usage,
    /// Model turns (CLI runs) the job took.
    pub turns: u32,
    /// Tool calls codecrew ran for it.
    pub tool_calls: u32,
    /// The CLI's own tool calls codecrew judged (its Write, its shell, ...), allowed or not.
    pub native_tool_calls: u32,
    /// Wall time from the job's start to its end.
    pub duration_ms: u64,
    /// What the sub-agents its calls started used (`query_agent`, `execute_agent`), theirs
    /// included; absent when it started none. Not part of the figures above.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sub_agents: Option<SubAgentsUsage>,
}

/// The sum of what a job's sub-agents used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SubAgentsUsage {
    #[serde(flatten)]
    pub reported: Usage,
    /// How many sub-agent jobs ran, at every depth.
    pub agents: u32,
    pub turns: u32,
    pub tool_calls: u32,
}

impl SubAgentsUsage {
    fn add(&mut self, other: &SubAgentsUsage) {
        self.reported.add(&other.reported);
        self.agents = self.agents.saturating_add(other.agents);
        self.turns = self.turns.saturating_add(other.turns);
        self.tool_calls = self.tool_calls.saturating_add(other.tool_calls);
    }
}

impl JobUsage {
    /// Adds `other` to this sum. Wall times add up too: for jobs that ran at the same
    /// time the sum is the agents' time, not the run's.
    pub fn add(&mut self, other: &JobUsage) {
        self.reported.add(&other.reported);
        self.turns = self.turns.saturating_add(other.turns);
        self.tool_calls = self.tool_calls.saturating_add(other.tool_calls);
        self.native_tool_calls = self
            .native_tool_calls
            .saturating_add(other.native_tool_calls);
        self.duration_ms = self.duration_ms.saturating_add(other.duration_ms);
        if let Some(theirs) = &other.sub_agents {
            self.sub_agents.get_or_insert_default().add(theirs);
        }
    }

    /// Counts `sub`, one sub-agent's whole usage (its own sub-agents included), in this
    /// job's `sub_agents`.
    pub fn add_sub_agent(&mut self, sub: &JobUsage) {
        let mut whole = SubAgentsUsage {
            reported: sub.reported,
            agents: 1,
            turns: sub.turns,
            tool_calls: sub.tool_calls,
        };
        if let Some(theirs) = &sub.sub_agents {
            whole.add(theirs);
        }
        self.sub_agents.get_or_insert_default().add(&whole);
    }

    /// The sum of every usage in `all`.
    pub fn total<'a>(all: impl IntoIterator<Item = &'a JobUsage>) -> JobUsage {
        let mut total = JobUsage::default();
        for usage in all {
            total.add(usage);
        }
        total
    }

    /// One line for people: `3 turns, 2 tool calls, 4.2 s, 10,234 tokens in (2,000
    /// cached), 512 out, $0.0123`.
    pub fn summary(&self) -> String {
        let plural =
            |n: u32, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let calls = self.tool_calls.saturating_add(self.native_tool_calls);
        let mut calls = plural(calls, "tool call", "tool calls");
        if self.native_tool_calls > 0 {
            calls.push_str(&format!(" ({} of the CLI's own)", self.native_tool_calls));
        }
        let mut parts = vec![
            plural(self.turns, "turn", "turns"),
            calls,
            format!("{:.1} s", self.duration_ms as f64 / 1000.0),
        ];
        let reported = &self.reported;
        match (reported.input_tokens, reported.output_tokens) {
            (None, None) => parts.push("tokens not reported by the CLI".to_owned()),
            (input, output) => {
                let count = |n: Option<u64>| n.map_or_else(|| "?".to_owned(), thousands);
                let cached = match reported.cached_tokens {
                    Some(cached) if cached > 0 => format!(" ({} cached)", thousands(cached)),
                    _ => String::new(),
                };
                parts.push(format!("{} tokens in{cached}", count(input)));
                parts.push(format!("{} out", count(output)));
            }
        }
        if let Some(cost) = reported.cost_usd {
            parts.push(format!("${cost:.4}"));
        }
        let mut line = parts.join(", ");
        if let Some(sub) = &self.sub_agents {
            let agents = if sub.agents == 1 { "agent" } else { "agents" };
            let tokens = match (sub.reported.input_tokens, sub.reported.output_tokens) {
                (None, None) => String::new(),
                (input, output) => format!(
                    ", {} tokens in, {} out",
                    input.map_or_else(|| "?".to_owned(), thousands),
                    output.map_or_else(|| "?".to_owned(), thousands)
                ),
            };
            let cost = sub
                .reported
                .cost_usd
                .map(|c| format!(", ${c:.4}"))
                .unwrap_or_default();
            line.push_str(&format!(
                "; sub-agents: {} {agents}{tokens}{cost}",
                sub.agents
            ));
        }
        line
    }
}

/// `12345` → `12,345`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn usage(input: Option<u64>, cost: Option<f64>) -> JobUsage {
        JobUsage {
            reported: Usage {
                input_tokens: input,
                output_tokens: input.map(|_| 512),
                cached_tokens: input.map(|_| 2000),
                cost_usd: cost,
            },
            turns: 3,
            tool_calls: 2,
            native_tool_calls: 0,
            duration_ms: 4210,
            sub_agents: None,
        }
    }

    #[test]
    fn the_summary_says_what_was_reported_and_nothing_else() {
        assert_eq!(
            usage(Some(10234), Some(0.01234)).summary(),
            "3 turns, 2 tool calls, 4.2 s, 10,234 tokens in (2,000 cached), 512 out, $0.0123"
        );
        assert_eq!(
            usage(None, None).summary(),
            "3 turns, 2 tool calls, 4.2 s, tokens not reported by the CLI"
        );
    }

    #[test]
    fn json_fields_are_flat_and_null_when_unreported() {
        let value = serde_json::to_value(usage(Some(7), None)).unwrap();
        assert_eq!(
            value,
            json!({"input_tokens": 7, "output_tokens": 512, "cached_tokens": 2000,
                   "cost_usd": null, "turns": 3, "tool_calls": 2, "native_tool_calls": 0,
                   "duration_ms": 4210})
        );
        let back: JobUsage = serde_json::from_value(value).unwrap();
        assert_eq!(back, usage(Some(7), None));
        // Threads written before usage was recorded read as nothing reported.
        let old: JobUsage = serde_json::from_value(json!({})).unwrap();
        assert_eq!(old, JobUsage::default());
    }

    #[test]
    fn totals_add_every_figure() {
        let total = JobUsage::total(&[usage(Some(1), Some(0.5)), usage(None, Some(0.25))]);
        assert_eq!(total.reported.input_tokens, Some(1));
        assert_eq!(total.reported.cost_usd, Some(0.75));
        assert_eq!(
            (total.turns, total.tool_calls, total.duration_ms),
            (6, 4, 8420)
        );
    }

    #[test]
    fn sub_agents_are_summed_apart_at_every_depth() {
        let mut grandchild = usage(Some(100), None);
        grandchild.turns = 1;
        let mut child = usage(Some(10), Some(0.5));
        child.add_sub_agent(&grandchild);
        let mut top = usage(Some(1), Some(0.25));
        top.add_sub_agent(&child);
        assert_eq!(top.reported.input_tokens, Some(1));
        let sub = top.sub_agents.unwrap();
        assert_eq!(sub.agents, 2);
        assert_eq!(sub.reported.input_tokens, Some(110));
        assert_eq!(sub.turns, 4);
        assert!(
            top.summary()
                .ends_with("; sub-agents: 2 agents, 110 tokens in, 1,024 out, $0.5000"),
            "{}",
            top.summary()
        );
        let value = serde_json::to_value(top).unwrap();
        assert_eq!(value["sub_agents"]["agents"], 2);
        assert_eq!(value["sub_agents"]["input_tokens"], 110);
        // Totals carry the sub-agents too.
        let total = JobUsage::total(&[top, top]);
        assert_eq!(total.sub_agents.unwrap().agents, 4);
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
