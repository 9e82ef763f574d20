//! `--schema` with text output: what a script reads. One agent: its answer's JSON
//! document alone, one line (so `| jq` works), nothing when no answer fitted (the error
//! goes to stderr). Several: one JSON line per agent as each ends, `{"agent", "ok",
//! "data"}` or `{"agent", "ok": false, "error"}`. The streamed text is never printed: an
//! answer that does not fit is never shown as if it did.

use std::io::{self, Write};

use serde_json::json;

use super::{JobLabel, Render};
use crate::output::console::Out;
use codecrew_core::session::{JobEvent, JobReport};

/// The checked data of each job, nothing streamed.
pub struct DataRenderer<W: Write> {
    many: bool,
    out: Out<W>,
}

impl<W: Write> DataRenderer<W> {
    pub fn new(labels: &[JobLabel], out: W) -> Self {
        DataRenderer {
            many: labels.len() != 1,
            out: Out::new(out),
        }
    }

    pub fn into_inner(self) -> W {
        self.out.into_inner()
    }
}

impl<W: Write + Send> Render for DataRenderer<W> {
    fn event(&mut self, _index: usize, _event: &JobEvent) -> io::Result<()> {
        Ok(())
    }

    fn done(&mut self, _index: usize, report: &JobReport) -> io::Result<()> {
        let line = match (&report.data, self.many) {
            (Some(data), false) => data.clone(),
            (None, false) => return Ok(()),
            (Some(data), true) if report.success => {
                json!({"agent": report.agent, "ok": true, "data": data})
            }
            (_, true) => json!({
                "agent": report.agent,
                "ok": false,
                "error": report.error.as_deref().unwrap_or("no answer"),
            }),
        };
        self.out.json_line(&line)?;
        self.out.flush()
    }

    fn finish(&mut self, _reports: &[JobReport]) -> io::Result<()> {
        self.out.flush()
    }
}
