//! `--raw`: each job's final answer alone, under a header when there are several.

use std::io::{self, Write};

use super::{JobLabel, Render};
use crate::output::color::{ERROR, LABEL, Palette};
use crate::output::console::{Out, Text};
use codecrew_core::session::{JobEvent, JobReport};

/// The final answers, nothing streamed.
pub struct RawRenderer<W: Write> {
    labels: Vec<JobLabel>,
    out: Out<W>,
    palette: Palette,
}

impl<W: Write> RawRenderer<W> {
    pub fn new(labels: Vec<JobLabel>, out: W, palette: Palette) -> Self {
        RawRenderer {
            labels,
            out: Out::new(out),
            palette,
        }
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

impl<W: Write + Send> Render for RawRenderer<W> {
    fn event(&mut self, _index: usize, _event: &JobEvent) -> io::Result<()> {
        Ok(())
    }

    fn done(&mut self, index: usize, report: &JobReport) -> io::Result<()> {
        let many = self.labels.len() != 1;
        let palette = self.palette;
        let Some(label) = self.labels.get(index) else {
            return Ok(());
        };
        let mut section = Text::new();
        if many {
            let title = format!("━━ {} ━━", label.title());
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

    fn finish(&mut self, _reports: &[JobReport]) -> io::Result<()> {
        self.out.flush()
    }
}
