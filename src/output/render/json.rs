//! JSON output: one document when every job has ended (`--output json`), or one NDJSON
//! value per event as it happens (`--output stream-json`). Strings go out escaped, exact.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::{JobLabel, Render};
use crate::output::console::Out;
use codecrew_core::session::{JobEvent, JobReport};
use codecrew_core::usage::JobUsage;

/// `--output json`: nothing until the end, then one document.
pub struct JsonRenderer<W: Write> {
    out: Out<W>,
    /// The jobs' worktrees (`execute --worktrees`), a field of the document when set.
    worktrees: Option<Value>,
}

impl<W: Write> JsonRenderer<W> {
    pub fn new(out: W) -> Self {
        JsonRenderer {
            out: Out::new(out),
            worktrees: None,
        }
    }

    pub fn into_inner(self) -> W {
        self.out.into_inner()
    }

    pub fn set_worktrees(&mut self, worktrees: Value) {
        self.worktrees = Some(worktrees);
    }
}

impl<W: Write + Send> Render for JsonRenderer<W> {
    fn event(&mut self, _index: usize, _event: &JobEvent) -> io::Result<()> {
        Ok(())
    }

    fn done(&mut self, _index: usize, _report: &JobReport) -> io::Result<()> {
        Ok(())
    }

    fn finish(&mut self, reports: &[JobReport]) -> io::Result<()> {
        let mut document = json!({
            "success": reports.iter().all(|r| r.success),
            "results": reports,
            "usage": JobUsage::total(reports.iter().map(|r| &r.usage)),
        });
        if let Some(worktrees) = self.worktrees.take() {
            document["worktrees"] = worktrees;
        }
        self.out.json_line(&document)?;
        self.out.flush()
    }
}

/// `--output stream-json`: a `start` per job, its events, a `done` with its report.
pub struct StreamJsonRenderer<W: Write> {
    labels: Vec<JobLabel>,
    out: Out<W>,
}

impl<W: Write> StreamJsonRenderer<W> {
    pub fn new(labels: Vec<JobLabel>, out: W) -> Self {
        StreamJsonRenderer {
            labels,
            out: Out::new(out),
        }
    }

    pub fn into_inner(self) -> W {
        self.out.into_inner()
    }
}

impl<W: Write + Send> Render for StreamJsonRenderer<W> {
    fn start(&mut self) -> io::Result<()> {
        for (index, label) in self.labels.iter().enumerate() {
            let event = json!({
                "type": "start", "job": index, "agent": label.agent,
                "provider": label.provider, "model": label.model, "mode": label.mode,
            });
            self.out.json_line(&event)?;
        }
        Ok(())
    }

    fn event(&mut self, index: usize, event: &JobEvent) -> io::Result<()> {
        let agent = self
            .labels
            .get(index)
            .map(|label| label.agent.as_str())
            .unwrap_or_default();
        match event_value(index, agent, event) {
            Some(value) => self.out.json_line(&value),
            None => Ok(()),
        }
    }

    fn done(&mut self, index: usize, report: &JobReport) -> io::Result<()> {
        let mut value = serde_json::to_value(report).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.insert("type".into(), "done".into());
            map.insert("job".into(), index.into());
        }
        self.out.json_line(&value)
    }

    fn finish(&mut self, _reports: &[JobReport]) -> io::Result<()> {
        self.out.flush()
    }
}

/// An event as one NDJSON value, naming its agent; a sub-agent's event also names the
/// agent whose call started it (`parent`) and its `depth`.
fn event_value(index: usize, agent: &str, event: &JobEvent) -> Option<Value> {
    let value = match event {
        JobEvent::Turn(turn) => {
            json!({"type": "turn", "job": index, "agent": agent, "turn": turn})
        }
        JobEvent::TurnEnd {
            turn,
            usage,
            context_window,
        } => {
            let mut value = json!({
                "type": "turn_end", "job": index, "agent": agent, "turn": turn,
                "usage": usage.unwrap_or_default(),
            });
            if let Some(window) = context_window {
                value["context_window"] = json!(window);
            }
            value
        }
        JobEvent::Text(text) => {
            json!({"type": "text", "job": index, "agent": agent, "text": text})
        }
        // The CLI's own tools: what `stream-json` printed before they were events (its
        // fields stay as they were; an editor gets them over ACP).
        JobEvent::MessageEnd | JobEvent::NativeTool { .. } | JobEvent::NativeToolResult { .. } => {
            return None;
        }
        JobEvent::ToolCall { id, call } => json!({
            "type": "tool_call", "job": index, "agent": agent, "id": id,
            "name": call.name, "input": call.input,
        }),
        JobEvent::Rejected(rejection) => json!({
            "type": "rejected", "job": index, "agent": agent,
            "reason": rejection.reason, "raw": rejection.raw,
        }),
        JobEvent::ToolResult(result) => {
            let mut value = serde_json::to_value(result).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut value {
                map.insert("type".into(), "tool_result".into());
                map.insert("job".into(), index.into());
                map.insert("agent".into(), agent.into());
            }
            value
        }
        JobEvent::Notice(message) => {
            json!({"type": "error", "job": index, "agent": agent, "message": message})
        }
        // Not an error: the job goes on (a script that stops at an `error` event would
        // give up on a run that then answers).
        JobEvent::Retry(message) => {
            json!({"type": "retry", "job": index, "agent": agent, "message": message})
        }
        JobEvent::Sub(sub) => {
            let mut value = event_value(index, &sub.agent, &sub.event)?;
            if let Value::Object(map) = &mut value
                && !map.contains_key("parent")
            {
                map.insert("parent".into(), agent.into());
                map.insert("depth".into(), sub.depth.into());
            }
            value
        }
    };
    Some(value)
}
