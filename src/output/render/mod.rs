//! What `query` and `execute` print: live text, one JSON document, or NDJSON events.
//!
//! stdout carries only the result; notices about the run itself (errors of a job) go to
//! stderr. With one job, text streams as it arrives; with several, it streams too, a
//! whole line at a time, each line under its agent's name (`[claude] …`), so lines of
//! different agents never mix. `--raw` prints each final answer under a header.
//!
//! Text goes out as [`Text`]: the model's words made inert, codecrew's own lines styled
//! (`output::console`); JSON goes out exact, its strings escaped.

use std::io::{self, Write};

use anstyle::Style;
use serde_json::{Value, json};

use crate::output::color::{ERROR, LABEL, NOTICE, Palette, WARNING};
use crate::output::console::{Inert, Out, Text};
use crate::output::markdown::Markdown;
use crate::run::session::{JobEvent, JobReport, SubEvent};
use crate::run::usage::JobUsage;
use codecrew_tools::Status;

/// How a run's answers are shown (`--output`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RunOutput {
    /// The answers as they stream, tool calls as one-line notices
    Text,
    /// One JSON document at the end
    Json,
    /// NDJSON events as they happen
    StreamJson,
}

pub use crate::run::engine::JobLabel;

struct View {
    label: JobLabel,
    /// Sub-agents' text not yet ended by a newline, per sub-agent (its line prefix).
    sub_partial: Vec<(String, String)>,
    /// Text output of a job while other jobs run, not yet ended by a newline.
    buffer: Text,
    /// The job's text as a stream: a `\r` that ends one piece may end a line with the
    /// next.
    stream: Inert,
    /// The job's text rendered from markdown, at a terminal.
    markdown: Option<Markdown>,
    at_line_start: bool,
}

/// Prints a run's jobs in the chosen format.
pub struct Renderer<W: Write> {
    output: RunOutput,
    raw: bool,
    views: Vec<View>,
    out: Out<W>,
    /// Styles for codecrew's own lines in the text output.
    palette: Palette,
}

impl<W: Write> Renderer<W> {
    pub fn new(output: RunOutput, raw: bool, labels: Vec<JobLabel>, out: W) -> Self {
        let views = labels
            .into_iter()
            .map(|label| View {
                label,
                sub_partial: Vec::new(),
                buffer: Text::new(),
                stream: Inert::default(),
                markdown: None,
                at_line_start: true,
            })
            .collect();
        Renderer {
            output,
            raw,
            views,
            out: Out::new(out),
            palette: Palette::PLAIN,
        }
    }

    /// Styles codecrew's own lines (call notices, job headers, failures) in the text
    /// output with `palette`; the model's text and JSON are never styled.
    pub fn with_palette(mut self, palette: Palette) -> Self {
        self.palette = palette;
        self
    }

    /// Renders each job's text from markdown, wrapped at `width` columns (less the
    /// `[agent] ` prefix when several print at once): for a terminal that styles. Only
    /// streamed text is rendered: JSON and `--raw` keep the model's markdown as it is.
    /// After [`Self::with_palette`], whose styles it draws in.
    pub fn with_markdown(mut self, width: usize) -> Self {
        let many = self.views.len() > 1;
        let palette = self.palette;
        for view in &mut self.views {
            let prefix = if many { view.label.agent.len() + 3 } else { 0 };
            view.markdown = Some(Markdown::new(palette, width.saturating_sub(prefix)));
        }
        self
    }

    fn live(&self) -> bool {
        self.views.len() == 1
    }

    /// The jobs are starting.
    pub fn start(&mut self) -> io::Result<()> {
        if self.output == RunOutput::StreamJson {
            for index in 0..self.views.len() {
                let label = &self.views[index].label;
                let event = json!({
                    "type": "start", "job": index, "agent": label.agent,
                    "provider": label.provider, "model": label.model, "mode": label.mode,
                });
                self.line(&event)?;
            }
        }
        Ok(())
    }

    pub fn event(&mut self, index: usize, event: &JobEvent) -> io::Result<()> {
        match self.output {
            RunOutput::Json => Ok(()),
            RunOutput::StreamJson => self.stream_event(index, event),
            RunOutput::Text if self.raw => Ok(()),
            RunOutput::Text => self.text_event(index, event),
        }
    }

    fn stream_event(&mut self, index: usize, event: &JobEvent) -> io::Result<()> {
        let agent = self
            .views
            .get(index)
            .map(|v| v.label.agent.clone())
            .unwrap_or_default();
        match event_value(index, &agent, event) {
            Some(value) => self.line(&value),
            None => Ok(()),
        }
    }

    fn text_event(&mut self, index: usize, event: &JobEvent) -> io::Result<()> {
        let chunk = match event {
            JobEvent::Text(text) => return self.write_text(index, text),
            JobEvent::MessageEnd => self.end_stream(index),
            JobEvent::Turn(_) | JobEvent::TurnEnd { .. } | JobEvent::Notice(_) => {
                return Ok(());
            }
            JobEvent::Sub(sub) => {
                // What the answer held back goes out before the lines that interrupt it.
                let held = self.end_stream(index);
                self.write_shown(index, held)?;
                self.sub_lines(index, sub)
            }
            event => match call_line(event) {
                Some((style, line)) => {
                    let held = self.end_stream(index);
                    self.write_shown(index, held)?;
                    notice(index, self, style, &line)
                }
                None => return Ok(()),
            },
        };
        self.write_shown(index, chunk)
    }

    /// The job's text stops (its message ended, or a notice comes): what the stream
    /// still holds (a `\r`, or the markdown not yet rendered) is shown.
    fn end_stream(&mut self, index: usize) -> Text {
        let mut held = Text::new();
        if let Some(view) = self.views.get_mut(index) {
            match &mut view.markdown {
                Some(markdown) => {
                    held.append(&markdown.finish());
                }
                None => {
                    held.finish_stream(&mut view.stream);
                }
            }
        }
        held
    }

    /// A sub-agent's event as whole lines nested under the call that started it: text
    /// waits for its newline, so concurrent sub-agents never interleave mid-line.
    fn sub_lines(&mut self, index: usize, sub: &SubEvent) -> Text {
        // The chain down to the agent that reported, and what it reported.
        let (mut sub, mut depth) = (sub, sub.depth);
        let mut path = format!("@{}", sub.agent);
        while let JobEvent::Sub(inner) = &sub.event {
            path = format!("{path} → @{}", inner.agent);
            depth = inner.depth;
            sub = inner;
        }
        let prefix = format!("{}{path}: ", "  │ ".repeat(depth as usize));
        let palette = self.palette;
        let Some(view) = self.views.get_mut(index) else {
            return Text::new();
        };
        let slot = match view.sub_partial.iter().position(|(p, _)| *p == prefix) {
            Some(slot) => slot,
            None => {
                view.sub_partial.push((prefix.clone(), String::new()));
                view.sub_partial.len() - 1
            }
        };
        let mut lines = Text::new();
        let flush = |partial: &mut String, lines: &mut Text| {
            if !partial.trim().is_empty() {
                lines.push(&format!("{prefix}{}\n", partial.trim_end()));
            }
            partial.clear();
        };
        let partial = &mut view.sub_partial[slot].1;
        match &sub.event {
            JobEvent::Text(text) => {
                partial.push_str(text);
                while let Some(end) = partial.find('\n') {
                    let line: String = partial.drain(..=end).collect();
                    let mut line = line;
                    flush(&mut line, &mut lines);
                }
            }
            JobEvent::MessageEnd | JobEvent::TurnEnd { .. } => flush(partial, &mut lines),
            JobEvent::Notice(message) => {
                flush(partial, &mut lines);
                let line = format!("{prefix}✗ {}", shorten(message, 200));
                lines.push_styled(palette, ERROR, &line).push("\n");
            }
            event => {
                if let Some((style, line)) = call_line(event) {
                    flush(partial, &mut lines);
                    let line = format!("{prefix}{}", line.trim_start());
                    lines.push_styled(palette, style, &line).push("\n");
                }
            }
        }
        if lines.is_empty() || view.at_line_start {
            lines
        } else {
            let mut ended = Text::plain("\n");
            ended.append(&lines);
            ended
        }
    }

    /// A piece of the model's text, made inert as part of the job's stream.
    fn write_text(&mut self, index: usize, text: &str) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        let mut shown = Text::new();
        if let Some(view) = self.views.get_mut(index) {
            match &mut view.markdown {
                // Rendered markdown goes out in whole lines.
                Some(markdown) => {
                    shown.append(&markdown.push(text));
                }
                None => {
                    shown.push_streamed(&mut view.stream, text);
                    // A held `\r` stands mid-line until the next piece says what it is.
                    view.at_line_start = text.ends_with('\n');
                }
            };
        }
        self.write_shown(index, shown)
    }

    /// Text of a job, live with one job; with several, whole lines only, each under its
    /// agent's name, so that lines of different agents never mix.
    fn write_shown(&mut self, index: usize, text: Text) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        let (live, palette) = (self.live(), self.palette);
        let Some(view) = self.views.get_mut(index) else {
            return Ok(());
        };
        if text.ends_with_newline() {
            view.at_line_start = true;
        }
        if live {
            return self.out.show(&text);
        }
        view.buffer.append(&text);
        let Some(whole) = view.buffer.take_lines() else {
            return Ok(());
        };
        let mut lines = Text::new();
        for line in whole.split_lines() {
            lines.append(&agent_prefix(palette, &view.label.agent));
            lines.append(&line);
        }
        // One write per batch of lines: the terminal sees them whole.
        self.out.show(&lines)
    }

    /// A job ended.
    pub fn done(&mut self, index: usize, report: &JobReport) -> io::Result<()> {
        match self.output {
            RunOutput::Json => Ok(()),
            RunOutput::StreamJson => {
                let mut value = serde_json::to_value(report).unwrap_or(Value::Null);
                if let Value::Object(map) = &mut value {
                    map.insert("type".into(), "done".into());
                    map.insert("job".into(), index.into());
                }
                self.line(&value)
            }
            RunOutput::Text if self.raw => self.raw_done(index, report),
            RunOutput::Text if self.live() => {
                // The text was written live; only a held `\r` and the line may be left.
                let mut rest = self.end_stream(index);
                if let Some(view) = self.views.first_mut() {
                    if !view.at_line_start {
                        rest.push("\n");
                    }
                    view.at_line_start = true;
                }
                self.out.show(&rest)?;
                self.out.flush()
            }
            RunOutput::Text => {
                // What the stream held (a list, a `\r`) goes out as lines under the
                // agent's name; what is left of a line waits in the buffer.
                let held = self.end_stream(index);
                self.write_shown(index, held)?;
                let palette = self.palette;
                let Some(view) = self.views.get_mut(index) else {
                    return Ok(());
                };
                let mut rest = Text::new();
                if !view.buffer.is_empty() {
                    rest.append(&agent_prefix(palette, &view.label.agent));
                    rest.append(&std::mem::take(&mut view.buffer));
                    rest.push("\n");
                }
                view.at_line_start = true;
                if let (false, Some(error)) = (report.success, &report.error) {
                    rest.append(&agent_prefix(palette, &view.label.agent));
                    rest.push_styled(palette, ERROR, &format!("✗ {error}"));
                    rest.push("\n");
                }
                self.out.show(&rest)
            }
        }
    }

    /// `--raw`: the final answer alone, under a header when there are several agents.
    fn raw_done(&mut self, index: usize, report: &JobReport) -> io::Result<()> {
        let many = !self.live();
        let palette = self.palette;
        let Some(view) = self.views.get(index) else {
            return Ok(());
        };
        let mut section = Text::new();
        if many {
            let title = format!("━━ {} ━━", view.label.title());
            section.push_styled(palette, LABEL, &title).push("\n");
        }
        section.push(&report.response);
        if !report.response.is_empty() && !report.response.ends_with('\n') {
            section.push("\n");
        }
        if let (true, false, Some(error)) = (many, report.success, &report.error) {
            section.push_styled(palette, ERROR, &format!("✗ {error}"));
            section.push("\n");
        }
        if many {
            section.push("\n");
        }
        self.out.show(&section)
    }

    /// Everything ended: the JSON document, when that is the format.
    pub fn finish(&mut self, reports: &[JobReport]) -> io::Result<()> {
        if self.output == RunOutput::Json {
            let document = json!({
                "success": reports.iter().all(|r| r.success),
                "results": reports,
                "usage": JobUsage::total(reports.iter().map(|r| &r.usage)),
            });
            self.out.json_line(&document)?;
        }
        self.out.flush()
    }

    fn line(&mut self, value: &Value) -> io::Result<()> {
        self.out.json_line(value)
    }

    /// Whether the live output stands at the start of a line (where a spinner may draw).
    pub fn at_line_start(&self) -> bool {
        self.views.iter().all(|view| view.at_line_start)
    }

    pub fn into_inner(self) -> W {
        self.out.into_inner()
    }
}

/// An event as one NDJSON value, naming its agent; a sub-agent's event also names the
/// agent whose call started it (`parent`) and its `depth`.
fn event_value(index: usize, agent: &str, event: &JobEvent) -> Option<Value> {
    let value = match event {
        JobEvent::Turn(turn) => {
            json!({"type": "turn", "job": index, "agent": agent, "turn": turn})
        }
        JobEvent::TurnEnd { turn, usage } => json!({
            "type": "turn_end", "job": index, "agent": agent, "turn": turn,
            "usage": usage.unwrap_or_default(),
        }),
        JobEvent::Text(text) => {
            json!({"type": "text", "job": index, "agent": agent, "text": text})
        }
        JobEvent::MessageEnd => return None,
        JobEvent::ToolCall(call) => json!({
            "type": "tool_call", "job": index, "agent": agent,
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

/// The notice line of a call, its result or a rejected envelope.
fn call_line(event: &JobEvent) -> Option<(Style, String)> {
    match event {
        JobEvent::ToolCall(call) => {
            let input = serde_json::to_string(&call.input).unwrap_or_default();
            Some((NOTICE, format!("→ {} {}", call.name, shorten(&input, 160))))
        }
        JobEvent::Rejected(rejection) => Some((
            WARNING,
            format!("→ rejected tool call: {}", shorten(&rejection.reason, 200)),
        )),
        JobEvent::ToolResult(result) => {
            let style = if result.status == Status::Ok {
                NOTICE
            } else {
                WARNING
            };
            let line = match (&result.status, &result.error) {
                (Status::Ok, _) => {
                    format!("  ← {} ok ({} ms)", result.tool, result.duration_ms)
                }
                (status, Some(error)) => format!(
                    "  ← {} {}: {} {}",
                    result.tool,
                    status_name(*status),
                    error.code,
                    shorten(&error.message, 200)
                ),
                (status, None) => format!("  ← {} {}", result.tool, status_name(*status)),
            };
            Some((style, line))
        }
        _ => None,
    }
}

/// `codecrew: @claude failed: <error>`, the line on stderr for a job that failed (the
/// error may quote the CLI or the model's server: it goes out inert).
pub fn failure_line(palette: Palette, agent: &str, error: &str) -> Text {
    let mut line = Text::plain("codecrew: ");
    line.push_styled(palette, ERROR, &format!("@{agent} failed:"))
        .push(" ")
        .push(error);
    line
}

/// `[claude] `: what starts each line of an agent when several print at once.
fn agent_prefix(palette: Palette, agent: &str) -> Text {
    let mut prefix = Text::styled(palette, LABEL, &format!("[{agent}]"));
    prefix.push(" ");
    prefix
}

/// A one-line notice, on a line of its own.
fn notice<W: Write>(index: usize, renderer: &Renderer<W>, style: Style, line: &str) -> Text {
    let at_line_start = renderer.views.get(index).is_none_or(|v| v.at_line_start);
    let mut shown = Text::plain(if at_line_start { "" } else { "\n" });
    shown.push_styled(renderer.palette, style, line).push("\n");
    shown
}

fn status_name(status: Status) -> &'static str {
    match status {
        Status::Ok => "ok",
        Status::Error => "error",
        Status::Denied => "denied",
    }
}

fn shorten(text: &str, max: usize) -> String {
    let single: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match single.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &single[..cut]),
        None => single,
    }
}

#[cfg(test)]
mod tests;
