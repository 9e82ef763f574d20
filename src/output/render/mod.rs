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

use crate::output::color::{ERROR, LABEL, NOTICE, Palette, WARNING};
use crate::output::console::Text;
use codecrew_core::session::{JobEvent, JobReport};
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

pub use codecrew_core::engine::JobLabel;

mod data;
mod json;
mod raw;
mod text;

pub use data::DataRenderer;
pub use json::{JsonRenderer, StreamJsonRenderer};
pub use raw::RawRenderer;
pub use text::TextRenderer;

/// What every output format does with a run: its jobs start, their events come, each
/// job ends, the run ends. The front end hands each implementation where it writes (the
/// console's stdout, the live view's, a buffer) and the styles it may use.
pub trait Render: Send {
    /// The jobs are starting.
    fn start(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// One event of the job at `index`, as it happens.
    fn event(&mut self, index: usize, event: &JobEvent) -> io::Result<()>;

    /// The job at `index` ended with `report`.
    fn done(&mut self, index: usize, report: &JobReport) -> io::Result<()>;

    /// Every job ended; flushes.
    fn finish(&mut self, reports: &[JobReport]) -> io::Result<()>;

    /// Whether the output stands at the start of a line (where a spinner may draw).
    fn at_line_start(&self) -> bool {
        true
    }
}

/// The renderer `--output` and `--raw` choose.
pub enum Renderer<W: Write> {
    Text(TextRenderer<W>),
    Raw(RawRenderer<W>),
    Json(JsonRenderer<W>),
    StreamJson(StreamJsonRenderer<W>),
    /// `--schema` with text output: the checked data alone.
    Data(DataRenderer<W>),
}

impl<W: Write + Send> Renderer<W> {
    pub fn new(output: RunOutput, raw: bool, labels: Vec<JobLabel>, out: W) -> Self {
        match output {
            RunOutput::Text if raw => Renderer::Raw(RawRenderer::new(labels, out, Palette::PLAIN)),
            RunOutput::Text => Renderer::Text(TextRenderer::new(labels, out, Palette::PLAIN)),
            RunOutput::Json => Renderer::Json(JsonRenderer::new(out)),
            RunOutput::StreamJson => Renderer::StreamJson(StreamJsonRenderer::new(labels, out)),
        }
    }

    /// For a run with `--schema` and text output (plain or `--raw`): the checked data
    /// alone ([`DataRenderer`]); JSON keeps its shape, with each report's `data`.
    pub fn data(labels: &[JobLabel], out: W) -> Self {
        Renderer::Data(DataRenderer::new(labels, out))
    }

    /// Styles codecrew's own lines (call notices, job headers, failures) in the text
    /// output with `palette`; the model's text and JSON are never styled.
    pub fn with_palette(self, palette: Palette) -> Self {
        match self {
            Renderer::Text(text) => Renderer::Text(text.with_palette(palette)),
            Renderer::Raw(raw) => Renderer::Raw(raw.with_palette(palette)),
            json => json,
        }
    }

    /// Renders each job's streamed text from markdown, wrapped at `width` columns: for a
    /// terminal that styles. JSON and `--raw` keep the model's markdown as it is. After
    /// [`Self::with_palette`], whose styles it draws in.
    pub fn with_markdown(self, width: usize) -> Self {
        match self {
            Renderer::Text(text) => Renderer::Text(text.with_markdown(width)),
            other => other,
        }
    }

    fn chosen(&mut self) -> &mut dyn Render {
        match self {
            Renderer::Text(text) => text,
            Renderer::Raw(raw) => raw,
            Renderer::Json(json) => json,
            Renderer::StreamJson(stream) => stream,
            Renderer::Data(data) => data,
        }
    }

    pub fn start(&mut self) -> io::Result<()> {
        self.chosen().start()
    }

    pub fn event(&mut self, index: usize, event: &JobEvent) -> io::Result<()> {
        self.chosen().event(index, event)
    }

    pub fn done(&mut self, index: usize, report: &JobReport) -> io::Result<()> {
        self.chosen().done(index, report)
    }

    pub fn finish(&mut self, reports: &[JobReport]) -> io::Result<()> {
        self.chosen().finish(reports)
    }

    /// The jobs' worktrees, for `--output json`'s document (`worktrees`); the other
    /// outputs show them as a table of their own.
    pub fn set_worktrees(&mut self, worktrees: serde_json::Value) {
        if let Renderer::Json(json) = self {
            json.set_worktrees(worktrees);
        }
    }

    pub fn at_line_start(&self) -> bool {
        match self {
            Renderer::Text(text) => text.at_line_start(),
            Renderer::Raw(_) | Renderer::Json(_) | Renderer::StreamJson(_) | Renderer::Data(_) => {
                true
            }
        }
    }

    pub fn into_inner(self) -> W {
        match self {
            Renderer::Text(text) => text.into_inner(),
            Renderer::Raw(raw) => raw.into_inner(),
            Renderer::Json(json) => json.into_inner(),
            Renderer::StreamJson(stream) => stream.into_inner(),
            Renderer::Data(data) => data.into_inner(),
        }
    }
}

/// The notice line of a call, its result or a rejected envelope.
fn call_line(event: &JobEvent) -> Option<(Style, String)> {
    match event {
        JobEvent::ToolCall { call, .. } => {
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

/// `codecrew: @claude's last answer:` and that answer, on stderr for a job none of whose
/// answers fitted the schema (the model's text goes out inert).
pub fn last_attempt(palette: Palette, report: &JobReport) -> Text {
    let mut lines = Text::plain("codecrew: ");
    lines
        .push_styled(
            palette,
            NOTICE,
            &format!("@{}'s last answer:", report.agent),
        )
        .push("\n")
        .push(report.response.trim_end());
    lines
}

/// `[claude] `: what starts each line of an agent when several print at once.
fn agent_prefix(palette: Palette, agent: &str) -> Text {
    let mut prefix = Text::styled(palette, LABEL, &format!("[{agent}]"));
    prefix.push(" ");
    prefix
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
