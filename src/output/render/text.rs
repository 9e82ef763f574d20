//! Text output: each job's answer as it streams (rendered from markdown at a terminal),
//! its calls as one-line notices; with several jobs, whole lines under each agent's name.

use std::io::{self, Write};

use super::{JobLabel, Render, agent_prefix, call_line, shorten};
use crate::output::color::{ERROR, Palette, WARNING};
use crate::output::console::{Inert, Out, Text};
use crate::output::markdown::Markdown;
use codecrew_core::session::{JobEvent, JobReport, SubEvent};

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

/// The text of a run's jobs, as they stream.
pub struct TextRenderer<W: Write> {
    views: Vec<View>,
    out: Out<W>,
    /// Styles for codecrew's own lines.
    palette: Palette,
}

impl<W: Write> TextRenderer<W> {
    pub fn new(labels: Vec<JobLabel>, out: W, palette: Palette) -> Self {
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
        TextRenderer {
            views,
            out: Out::new(out),
            palette,
        }
    }

    /// Renders each job's text from markdown, wrapped at `width` columns (less the
    /// `[agent] ` prefix when several print at once): for a terminal that styles.
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

    fn text_event(&mut self, index: usize, event: &JobEvent) -> io::Result<()> {
        let chunk = match event {
            JobEvent::Text(text) => return self.write_text(index, text),
            JobEvent::MessageEnd => self.end_stream(index),
            JobEvent::Turn(_)
            | JobEvent::TurnEnd { .. }
            | JobEvent::Notice(_)
            | JobEvent::Retry(_) => {
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
                    self.notice(index, style, &line)
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
            JobEvent::Retry(message) => {
                flush(partial, &mut lines);
                let line = format!("{prefix}↻ {}", shorten(message, 200));
                lines.push_styled(palette, WARNING, &line).push("\n");
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

    /// The one job's end: the text was written live; only a held `\r` and the line
    /// may be left.
    fn live_done(&mut self, index: usize) -> io::Result<()> {
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

    /// A job's end among several: what the stream held goes out as lines under the
    /// agent's name, then what is left of a line, then its failure.
    fn many_done(&mut self, index: usize, report: &JobReport) -> io::Result<()> {
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

    /// A one-line notice, on a line of its own.
    fn notice(&self, index: usize, style: anstyle::Style, line: &str) -> Text {
        let at_line_start = self.views.get(index).is_none_or(|v| v.at_line_start);
        let mut shown = Text::plain(if at_line_start { "" } else { "\n" });
        shown.push_styled(self.palette, style, line).push("\n");
        shown
    }

    /// Styles codecrew's own lines with `palette` (before markdown, which draws in it).
    pub fn with_palette(mut self, palette: Palette) -> Self {
        self.palette = palette;
        self
    }

    pub fn into_inner(self) -> W {
        self.out.into_inner()
    }
}

impl<W: Write + Send> Render for TextRenderer<W> {
    fn event(&mut self, index: usize, event: &JobEvent) -> io::Result<()> {
        self.text_event(index, event)
    }

    fn done(&mut self, index: usize, report: &JobReport) -> io::Result<()> {
        if self.live() {
            self.live_done(index)
        } else {
            self.many_done(index, report)
        }
    }

    fn finish(&mut self, _reports: &[JobReport]) -> io::Result<()> {
        self.out.flush()
    }

    fn at_line_start(&self) -> bool {
        self.views.iter().all(|view| view.at_line_start)
    }
}
