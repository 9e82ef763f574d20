//! What `query` and `execute` print: live text, one JSON document, or NDJSON events.
//!
//! stdout carries only the result; notices about the run itself (errors of a job) go to
//! stderr. With one job, text streams as it arrives; with several, each job's output is
//! kept and printed as its own section when the job ends, so answers never interleave.

use std::io::{self, Write};

use anstyle::Style;
use serde_json::{Value, json};

use crate::cli::RunOutput;
use crate::color::{ERROR, LABEL, NOTICE, Palette, WARNING};
use crate::session::{JobEvent, JobReport};
use crate::usage::JobUsage;
use codecrew_tools::Status;

/// Who a job is, for headers and events.
#[derive(Debug, Clone)]
pub struct JobLabel {
    pub agent: String,
    pub provider: String,
    pub model: Option<String>,
    pub mode: &'static str,
}

impl JobLabel {
    /// `@claude (claude · haiku)`.
    pub fn title(&self) -> String {
        match &self.model {
            Some(model) => format!("@{} ({} · {model})", self.agent, self.provider),
            None => format!("@{} ({})", self.agent, self.provider),
        }
    }
}

struct View {
    label: JobLabel,
    /// Text output of a job while other jobs run.
    buffer: Vec<u8>,
    at_line_start: bool,
}

/// Prints a run's jobs in the chosen format.
pub struct Renderer<W: Write> {
    output: RunOutput,
    raw: bool,
    views: Vec<View>,
    out: W,
    /// Styles for codecrew's own lines in the text output.
    palette: Palette,
}

impl<W: Write> Renderer<W> {
    pub fn new(output: RunOutput, raw: bool, labels: Vec<JobLabel>, out: W) -> Self {
        let views = labels
            .into_iter()
            .map(|label| View {
                label,
                buffer: Vec::new(),
                at_line_start: true,
            })
            .collect();
        Renderer {
            output,
            raw,
            views,
            out,
            palette: Palette::PLAIN,
        }
    }

    /// Styles codecrew's own lines (call notices, job headers, failures) in the text
    /// output with `palette`; the model's text and JSON are never styled.
    pub fn with_palette(mut self, palette: Palette) -> Self {
        self.palette = palette;
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
            JobEvent::MessageEnd => return Ok(()),
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
        };
        self.line(&value)
    }

    fn text_event(&mut self, index: usize, event: &JobEvent) -> io::Result<()> {
        let chunk: String = match event {
            JobEvent::Text(text) => text.clone(),
            JobEvent::Turn(_)
            | JobEvent::TurnEnd { .. }
            | JobEvent::MessageEnd
            | JobEvent::Notice(_) => return Ok(()),
            JobEvent::ToolCall(call) => {
                let input = serde_json::to_string(&call.input).unwrap_or_default();
                notice(
                    index,
                    self,
                    NOTICE,
                    &format!("→ {} {}", call.name, shorten(&input, 160)),
                )
            }
            JobEvent::Rejected(rejection) => notice(
                index,
                self,
                WARNING,
                &format!("→ rejected tool call: {}", shorten(&rejection.reason, 200)),
            ),
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
                notice(index, self, style, &line)
            }
        };
        self.write_text(index, &chunk)
    }

    fn write_text(&mut self, index: usize, text: &str) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        let live = self.live();
        let Some(view) = self.views.get_mut(index) else {
            return Ok(());
        };
        view.at_line_start = text.ends_with('\n');
        if live {
            self.out.write_all(text.as_bytes())?;
            self.out.flush()
        } else {
            view.buffer.extend_from_slice(text.as_bytes());
            Ok(())
        }
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
            RunOutput::Text => {
                let many = !self.live();
                let palette = self.palette;
                let Some(view) = self.views.get_mut(index) else {
                    return Ok(());
                };
                let mut section = Vec::new();
                if many {
                    let title = format!("━━ {} ━━", view.label.title());
                    writeln!(section, "{}", palette.paint(LABEL, title))?;
                }
                let ends_line = if self.raw {
                    section.extend_from_slice(report.response.as_bytes());
                    report.response.is_empty() || report.response.ends_with('\n')
                } else if many {
                    section.append(&mut view.buffer);
                    section.last().is_none_or(|b| *b == b'\n')
                } else {
                    // The text was written live; only the line may need ending.
                    view.at_line_start
                };
                if !ends_line {
                    section.push(b'\n');
                }
                view.at_line_start = true;
                if let (true, false, Some(error)) = (many, report.success, &report.error) {
                    writeln!(section, "{}", palette.paint(ERROR, format!("✗ {error}")))?;
                }
                if many {
                    section.push(b'\n');
                }
                self.out.write_all(&section)?;
                self.out.flush()
            }
        }
    }

    /// Everything ended: the JSON document, when that is the format.
    pub fn finish(&mut self, reports: &[JobReport]) -> io::Result<()> {
        if self.output == RunOutput::Json {
            let document = json!({
                "success": reports.iter().all(|r| r.success),
                "results": reports,
                "usage": JobUsage::total(reports.iter().map(|r| &r.usage)),
            });
            serde_json::to_writer(&mut self.out, &document)?;
            self.out.write_all(b"\n")?;
        }
        self.out.flush()
    }

    fn line(&mut self, value: &Value) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, value)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }

    /// Whether the live output stands at the start of a line (where a spinner may draw).
    pub fn at_line_start(&self) -> bool {
        self.views.iter().all(|view| view.at_line_start)
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// A one-line notice, on a line of its own.
fn notice<W: Write>(index: usize, renderer: &Renderer<W>, style: Style, line: &str) -> String {
    let at_line_start = renderer.views.get(index).is_none_or(|v| v.at_line_start);
    let lead = if at_line_start { "" } else { "\n" };
    format!("{lead}{}\n", renderer.palette.paint(style, line))
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
mod tests {
    use super::*;
    use crate::session::StopReason;
    use codecrew_intercept::ToolCall;
    use codecrew_tools::{Mode, ToolResult};

    fn label(agent: &str) -> JobLabel {
        JobLabel {
            agent: agent.to_owned(),
            provider: "claude".to_owned(),
            model: Some("haiku".to_owned()),
            mode: "query",
        }
    }

    fn report(agent: &str, success: bool, response: &str) -> JobReport {
        JobReport {
            agent: agent.to_owned(),
            provider: "claude".to_owned(),
            model: None,
            mode: Mode::Query,
            success,
            response: response.to_owned(),
            turns: 1,
            tool_calls: Vec::new(),
            session_id: None,
            duration_ms: 1,
            error: (!success).then(|| "boom".to_owned()),
            stop_reason: StopReason::Answered,
            usage: JobUsage {
                reported: crate::usage::Usage {
                    input_tokens: Some(10),
                    output_tokens: Some(2),
                    cached_tokens: None,
                    cost_usd: Some(0.5),
                },
                turns: 1,
                tool_calls: 0,
                duration_ms: 1,
            },
            timed_out: false,
            missing_cli: false,
        }
    }

    fn call() -> JobEvent {
        JobEvent::ToolCall(ToolCall {
            name: "codecrew:read_file".into(),
            tool: "read_file".into(),
            input: json!({"path": "a"}),
        })
    }

    fn ok_result() -> JobEvent {
        JobEvent::ToolResult(ToolResult {
            tool_call_id: "c1".into(),
            tool: "read_file".into(),
            status: Status::Ok,
            output: json!({}),
            error: None,
            duration_ms: 3,
        })
    }

    fn render(
        output: RunOutput,
        raw: bool,
        agents: &[&str],
        script: &[(usize, JobEvent)],
        reports: &[JobReport],
    ) -> String {
        let labels = agents.iter().map(|a| label(a)).collect();
        let mut renderer = Renderer::new(output, raw, labels, Vec::new());
        renderer.start().unwrap();
        for (index, event) in script {
            renderer.event(*index, event).unwrap();
        }
        for (index, report) in reports.iter().enumerate() {
            renderer.done(index, report).unwrap();
        }
        renderer.finish(reports).unwrap();
        String::from_utf8(renderer.into_inner()).unwrap()
    }

    #[test]
    fn one_job_streams_text_with_call_notices() {
        let script = [
            (0, JobEvent::Text("Let me look.".into())),
            (0, call()),
            (0, ok_result()),
            (0, JobEvent::Text("It says hi.".into())),
        ];
        let out = render(
            RunOutput::Text,
            false,
            &["claude"],
            &script,
            &[report("claude", true, "It says hi.")],
        );
        assert_eq!(
            out,
            "Let me look.\n→ codecrew:read_file {\"path\":\"a\"}\n  ← read_file ok (3 ms)\nIt says hi.\n"
        );
    }

    #[test]
    fn a_palette_styles_only_codecrews_own_lines() {
        let labels = vec![label("claude"), label("gemini")];
        let mut renderer =
            Renderer::new(RunOutput::Text, false, labels, Vec::new()).with_palette(Palette::ANSI);
        renderer
            .event(0, &JobEvent::Text("plain\n".into()))
            .unwrap();
        renderer.event(0, &call()).unwrap();
        renderer.done(0, &report("claude", true, "")).unwrap();
        renderer.done(1, &report("gemini", false, "")).unwrap();
        let out = String::from_utf8(renderer.into_inner()).unwrap();
        assert_eq!(
            out,
            "\x1b[1m━━ @claude (claude · haiku) ━━\x1b[0m\nplain\n\
             \x1b[2m→ codecrew:read_file {\"path\":\"a\"}\x1b[0m\n\n\
             \x1b[1m━━ @gemini (claude · haiku) ━━\x1b[0m\n\x1b[1m\x1b[31m✗ boom\x1b[0m\n\n"
        );
    }

    #[test]
    fn json_is_never_styled() {
        for output in [RunOutput::Json, RunOutput::StreamJson] {
            let mut renderer = Renderer::new(output, false, vec![label("claude")], Vec::new())
                .with_palette(Palette::ANSI);
            renderer.start().unwrap();
            renderer.event(0, &call()).unwrap();
            renderer.event(0, &ok_result()).unwrap();
            let reports = [report("claude", false, "x")];
            renderer.done(0, &reports[0]).unwrap();
            renderer.finish(&reports).unwrap();
            let out = renderer.into_inner();
            assert!(!out.contains(&0x1b), "{}", String::from_utf8_lossy(&out));
        }
    }

    #[test]
    fn raw_prints_only_the_answer() {
        let script = [(0, JobEvent::Text("thinking aloud".into())), (0, call())];
        let out = render(
            RunOutput::Text,
            true,
            &["claude"],
            &script,
            &[report("claude", true, "Final.")],
        );
        assert_eq!(out, "Final.\n");
    }

    #[test]
    fn several_jobs_get_sections() {
        let script = [
            (1, JobEvent::Text("B".into())),
            (0, JobEvent::Text("A".into())),
        ];
        let out = render(
            RunOutput::Text,
            false,
            &["claude", "gemini"],
            &script,
            &[report("claude", true, "A"), report("gemini", false, "")],
        );
        assert_eq!(
            out,
            "━━ @claude (claude · haiku) ━━\nA\n\n━━ @gemini (claude · haiku) ━━\nB\n✗ boom\n\n"
        );
    }

    #[test]
    fn json_is_one_document() {
        let out = render(
            RunOutput::Json,
            false,
            &["claude"],
            &[(0, JobEvent::Text("x".into()))],
            &[report("claude", true, "x")],
        );
        let value: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(value["success"], true);
        assert_eq!(value["results"][0]["response"], "x");
        assert_eq!(value["results"][0]["usage"]["input_tokens"], 10);
        assert_eq!(out.lines().count(), 1);
    }

    #[test]
    fn json_totals_the_usage_of_every_result() {
        let out = render(
            RunOutput::Json,
            false,
            &["claude", "gemini"],
            &[],
            &[report("claude", true, "x"), report("gemini", true, "y")],
        );
        let value: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            value["usage"],
            json!({"input_tokens": 20, "output_tokens": 4, "cached_tokens": null,
                   "cost_usd": 1.0, "turns": 2, "tool_calls": 0, "duration_ms": 2})
        );
    }

    #[test]
    fn stream_json_events_name_their_agent() {
        let script = [
            (0, JobEvent::Text("x".into())),
            (0, call()),
            (0, ok_result()),
            (
                0,
                JobEvent::TurnEnd {
                    turn: 1,
                    usage: Some(crate::usage::Usage {
                        output_tokens: Some(3),
                        ..Default::default()
                    }),
                },
            ),
        ];
        let out = render(
            RunOutput::StreamJson,
            false,
            &["claude"],
            &script,
            &[report("claude", true, "x")],
        );
        let types: Vec<String> = out
            .lines()
            .map(|line| {
                let value: Value = serde_json::from_str(line).unwrap();
                assert_eq!(value["agent"], "claude");
                value["type"].as_str().unwrap().to_owned()
            })
            .collect();
        assert_eq!(
            types,
            [
                "start",
                "text",
                "tool_call",
                "tool_result",
                "turn_end",
                "done"
            ]
        );
        let turn_end: Value = serde_json::from_str(out.lines().nth(4).unwrap()).unwrap();
        assert_eq!(turn_end["turn"], 1);
        assert_eq!(turn_end["usage"]["output_tokens"], 3);
        assert_eq!(turn_end["usage"]["input_tokens"], Value::Null);
        let done: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
        assert_eq!(done["usage"]["cost_usd"], 0.5);
    }
}
