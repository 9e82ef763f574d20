//! What a CLI reported it used, read from each CLI's own shape into one.
//!
//! Every figure is one the CLI printed: a figure it did not print stays `None`, never
//! estimated. The conventions, the same for every CLI:
//!
//! - `input_tokens`: all the input the model read, cached or not (Claude reports the parts
//!   apart, `input_tokens` + `cache_read_input_tokens` + `cache_creation_input_tokens`;
//!   Codex and Gemini report the whole);
//! - `cached_tokens`: the part of the input read from a cache;
//! - `output_tokens`: what the model wrote, thinking included where the CLI counts it;
//! - `cost_usd`: only where the CLI states a price (Claude's `total_cost_usd`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Tokens and cost one CLI run reported, in a shape common to all CLIs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cached_tokens: Option<u64>,
    pub cost_usd: Option<f64>,
}

impl Usage {
    /// Whether the CLI reported any figure at all.
    pub fn is_empty(&self) -> bool {
        *self == Usage::default()
    }

    /// Adds `other`'s figures to these. A figure either side reported is kept; a figure
    /// neither reported stays `None` (a sum of nothing is not zero).
    pub fn add(&mut self, other: &Usage) {
        fn sum<T: std::ops::Add<Output = T> + Copy>(a: Option<T>, b: Option<T>) -> Option<T> {
            match (a, b) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            }
        }
        self.input_tokens = sum(self.input_tokens, other.input_tokens);
        self.output_tokens = sum(self.output_tokens, other.output_tokens);
        self.cached_tokens = sum(self.cached_tokens, other.cached_tokens);
        self.cost_usd = sum(self.cost_usd, other.cost_usd);
    }

    /// What was used since `before`, for CLIs whose reports are running totals. A figure
    /// `before` lacks is taken whole; none goes below zero.
    pub fn since(&self, before: &Usage) -> Usage {
        fn less(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            Some(a?.saturating_sub(b.unwrap_or(0)))
        }
        let cost = match (self.cost_usd, before.cost_usd) {
            (Some(a), Some(b)) => Some((a - b).max(0.0)),
            (a, _) => a,
        };
        Usage {
            input_tokens: less(self.input_tokens, before.input_tokens),
            output_tokens: less(self.output_tokens, before.output_tokens),
            cached_tokens: less(self.cached_tokens, before.cached_tokens),
            cost_usd: cost,
        }
    }

    /// Claude Code's `result` event: its `usage` object and `total_cost_usd`.
    pub(crate) fn from_claude(usage: Option<&Value>, cost_usd: Option<f64>) -> Option<Usage> {
        let usage = usage.filter(|u| u.is_object());
        let field = |name: &str| usage.and_then(|u| u.get(name)).and_then(Value::as_u64);
        let fresh = field("input_tokens");
        let read = field("cache_read_input_tokens");
        let written = field("cache_creation_input_tokens");
        let input = match (fresh, read, written) {
            (None, None, None) => None,
            (a, b, c) => Some(a.unwrap_or(0) + b.unwrap_or(0) + c.unwrap_or(0)),
        };
        let found = Usage {
            input_tokens: input,
            output_tokens: field("output_tokens"),
            cached_tokens: read,
            cost_usd: cost_usd.filter(|c| c.is_finite() && *c >= 0.0),
        };
        (!found.is_empty()).then_some(found)
    }

    /// Codex's `turn.completed` usage (OpenAI's: the input includes the cached part).
    pub(crate) fn from_codex(usage: Option<&Value>) -> Option<Usage> {
        let field = |name: &str| usage?.get(name)?.as_u64();
        let found = Usage {
            input_tokens: field("input_tokens"),
            output_tokens: field("output_tokens"),
            cached_tokens: field("cached_input_tokens"),
            cost_usd: None,
        };
        (!found.is_empty()).then_some(found)
    }

    /// Gemini CLI's `stats`: the flat totals of `stream-json`'s `result` event, or, in the
    /// `json` document, the per-model `tokens` summed over every model the run used (the
    /// router's included, as in the flat totals).
    pub(crate) fn from_gemini(stats: Option<&Value>) -> Option<Usage> {
        let stats = stats?;
        let flat = |name: &str| stats.get(name)?.as_u64();
        let found = if flat("input_tokens").is_some() || flat("output_tokens").is_some() {
            Usage {
                input_tokens: flat("input_tokens"),
                output_tokens: flat("output_tokens"),
                cached_tokens: flat("cached"),
                // Gemini CLI states no price.
                cost_usd: None,
            }
        } else {
            let mut total = Usage::default();
            for model in stats.get("models")?.as_object()?.values() {
                let tokens = |name: &str| model.get("tokens")?.get(name)?.as_u64();
                let output = match (tokens("candidates"), tokens("thoughts")) {
                    (None, None) => None,
                    (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
                };
                total.add(&Usage {
                    input_tokens: tokens("prompt"),
                    output_tokens: output,
                    cached_tokens: tokens("cached"),
                    cost_usd: None,
                });
            }
            total
        };
        (!found.is_empty()).then_some(found)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn claudes_input_is_its_three_parts_and_its_cost_is_its_own() {
        let usage = json!({"input_tokens": 10, "cache_read_input_tokens": 100,
                           "cache_creation_input_tokens": 5, "output_tokens": 7});
        assert_eq!(
            Usage::from_claude(Some(&usage), Some(0.25)),
            Some(Usage {
                input_tokens: Some(115),
                output_tokens: Some(7),
                cached_tokens: Some(100),
                cost_usd: Some(0.25),
            })
        );
        assert_eq!(Usage::from_claude(None, None), None);
        assert_eq!(
            Usage::from_claude(Some(&json!("odd")), Some(f64::NAN)),
            None
        );
    }

    #[test]
    fn gemini_document_stats_sum_every_model() {
        let stats = json!({"models": {
            "router": {"tokens": {"prompt": 700, "candidates": 10, "cached": 0, "thoughts": 0}},
            "main": {"tokens": {"prompt": 8000, "candidates": 20, "cached": 50, "thoughts": 3}},
        }});
        assert_eq!(
            Usage::from_gemini(Some(&stats)),
            Some(Usage {
                input_tokens: Some(8700),
                output_tokens: Some(33),
                cached_tokens: Some(50),
                cost_usd: None,
            })
        );
        assert_eq!(Usage::from_gemini(Some(&json!({"models": {}}))), None);
    }

    #[test]
    fn since_takes_a_running_total_apart() {
        let first = Usage {
            input_tokens: Some(6934),
            output_tokens: Some(51),
            cached_tokens: None,
            cost_usd: None,
        };
        let second = Usage {
            input_tokens: Some(13962),
            output_tokens: Some(102),
            cached_tokens: Some(5),
            cost_usd: None,
        };
        assert_eq!(
            second.since(&first),
            Usage {
                input_tokens: Some(7028),
                output_tokens: Some(51),
                cached_tokens: Some(5),
                cost_usd: None,
            }
        );
        assert_eq!(first.since(&Usage::default()), first);
        assert_eq!(first.since(&second).input_tokens, Some(0));
    }

    #[test]
    fn a_sum_keeps_what_either_side_reported_and_invents_nothing() {
        let mut total = Usage::default();
        total.add(&Usage {
            input_tokens: Some(3),
            ..Usage::default()
        });
        total.add(&Usage {
            input_tokens: Some(4),
            cost_usd: Some(0.5),
            ..Usage::default()
        });
        assert_eq!(
            total,
            Usage {
                input_tokens: Some(7),
                output_tokens: None,
                cached_tokens: None,
                cost_usd: Some(0.5),
            }
        );
    }
}
