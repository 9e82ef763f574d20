//! The live view of a run at a terminal: one status line per running agent (agent:model,
//! turn, the call in progress, elapsed time, tokens so far), drawn on stderr by indicatif
//! below the text the agents stream on stdout.
//!
//! Everything written to stdout meanwhile goes through [`LiveView::stdout`], which lifts
//! the status lines, writes, and draws them again, so text and status never overwrite
//! each other. Text that stops mid-line is a place where nothing may be drawn after it:
//! the view hides before such a write and shows again once a write ends the line, and the
//! caller can keep it hidden too ([`LiveView::set_wanted`]). While a permission question
//! is on the terminal the view hides ([`crate::output::ask::Screen`]), and the question
//! starts on a line of its own.

use std::io::{self, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::output::console::{self, inert};
use codecrew_core::session::JobEvent;
use codecrew_core::usage::Usage;

/// What one agent's status line says.
struct Status {
    title: String,
    turn: u32,
    /// The call in progress, or the sub-agent consulted.
    doing: Option<String>,
    usage: Usage,
    bar: ProgressBar,
}

/// Whether the lines are drawn: the caller's wish, unless a question is on screen or
/// the text on stdout stops mid-line.
#[derive(Default)]
struct Visibility {
    wanted: bool,
    asking: bool,
    /// The last write to stdout did not end its line.
    line_open: bool,
    shown: bool,
}

/// The status lines of the running agents. While the view lives, the console lifts it
/// around what it writes on stderr and a permission question hides it; dropped, it is
/// taken off the terminal and neither knows it any more.
pub struct LiveView {
    multi: MultiProgress,
    statuses: Vec<Status>,
    started: Instant,
    visibility: Arc<Mutex<Visibility>>,
}

impl LiveView {
    /// Status lines for agents with `titles` (`@claude:haiku`), drawn on stderr.
    pub fn new(titles: Vec<String>) -> Self {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::hidden());
        let style = ProgressStyle::with_template("{spinner} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner())
            .tick_chars("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏ ");
        let statuses = titles
            .into_iter()
            .map(|title| Status {
                bar: multi.add(ProgressBar::new_spinner().with_style(style.clone())),
                title,
                turn: 0,
                doing: None,
                usage: Usage::default(),
            })
            .collect();
        let view = LiveView {
            multi,
            statuses,
            started: Instant::now(),
            visibility: Arc::default(),
        };
        view.apply();
        console::set_live(Some(view.multi.clone()));
        crate::output::ask::set_screen(Some(view.screen()));
        view
    }

    /// A writer for stdout that lifts the status lines around each write.
    pub fn stdout(&self) -> LiveStdout {
        LiveStdout {
            multi: self.multi.clone(),
            visibility: self.visibility.clone(),
        }
    }

    /// The handle a permission prompt hides the view with.
    fn screen(&self) -> Arc<dyn crate::output::ask::Screen> {
        Arc::new(ScreenHandle {
            multi: self.multi.clone(),
            visibility: self.visibility.clone(),
        })
    }

    /// Whether the caller wants the lines drawn (false while its text stands mid-line).
    pub fn set_wanted(&self, wanted: bool) {
        self.lock().wanted = wanted;
        self.apply();
    }

    pub fn event(&mut self, index: usize, event: &JobEvent) {
        let Some(status) = self.statuses.get_mut(index) else {
            return;
        };
        match event {
            JobEvent::Turn(turn) => {
                status.turn = *turn;
                status.doing = None;
            }
            JobEvent::TurnEnd {
                usage: Some(usage), ..
            } => status.usage.add(usage),
            JobEvent::ToolCall { call, .. } => status.doing = Some(format!("→ {}", call.name)),
            JobEvent::ToolResult(_) => status.doing = None,
            JobEvent::Sub(sub) => status.doing = Some(format!("→ @{} working", sub.agent)),
            _ => {}
        }
        self.render(index);
    }

    /// An agent finished: its line goes.
    pub fn done(&mut self, index: usize) {
        if let Some(status) = self.statuses.get(index) {
            status.bar.finish_and_clear();
        }
    }

    /// Advances the spinners and the elapsed times.
    pub fn tick(&mut self) {
        self.apply();
        for index in 0..self.statuses.len() {
            self.render(index);
            if let Some(status) = self.statuses.get(index) {
                status.bar.tick();
            }
        }
    }

    /// Takes the lines off the terminal for good.
    fn clear(&self) {
        for status in &self.statuses {
            status.bar.finish_and_clear();
        }
        let _ = self.multi.clear();
    }

    fn render(&self, index: usize) {
        let Some(status) = self.statuses.get(index) else {
            return;
        };
        let mut parts = vec![status.title.clone()];
        if status.turn > 0 {
            parts.push(format!("turn {}", status.turn));
        }
        if let Some(doing) = &status.doing {
            parts.push(doing.clone());
        }
        parts.push(elapsed(self.started.elapsed()));
        if let (Some(input), Some(output)) = (status.usage.input_tokens, status.usage.output_tokens)
        {
            parts.push(format!("{} tokens", input.saturating_add(output)));
        }
        // A tool's name is the model's to choose.
        status
            .bar
            .set_message(inert(&parts.join(" · ")).into_owned());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Visibility> {
        self.visibility
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn apply(&self) {
        apply(&self.multi, &mut self.lock());
    }
}

/// Draws or hides the lines as `visibility` says, when that changed.
fn apply(multi: &MultiProgress, visibility: &mut Visibility) {
    let show = visibility.wanted && !visibility.asking && !visibility.line_open;
    if show == visibility.shown {
        return;
    }
    if show {
        multi.set_draw_target(ProgressDrawTarget::stderr());
    } else {
        let _ = multi.clear();
        multi.set_draw_target(ProgressDrawTarget::hidden());
    }
    visibility.shown = show;
}

fn elapsed(time: Duration) -> String {
    let seconds = time.as_secs();
    if seconds < 60 {
        format!("{seconds}s")
    } else {
        format!("{}m{:02}s", seconds / 60, seconds % 60)
    }
}

/// stdout, with the status lines lifted around each write, and hidden while the text
/// stops mid-line (a line drawn there would stand glued to it).
pub struct LiveStdout {
    multi: MultiProgress,
    visibility: Arc<Mutex<Visibility>>,
}

impl Write for LiveStdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let mut visibility = self
            .visibility
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        visibility.line_open = !buf.ends_with(b"\n");
        if visibility.line_open {
            apply(&self.multi, &mut visibility);
        }
        let written = self.multi.suspend(|| {
            // Bytes reach this writer only as the console's `Text` or exact JSON.
            let mut out = console::stdout().into_inner();
            out.write_all(buf)?;
            out.flush()?;
            Ok(buf.len())
        });
        apply(&self.multi, &mut visibility);
        written
    }

    fn flush(&mut self) -> io::Result<()> {
        console::stdout().flush()
    }
}

struct ScreenHandle {
    multi: MultiProgress,
    visibility: Arc<Mutex<Visibility>>,
}

impl crate::output::ask::Screen for ScreenHandle {
    fn set_asking(&self, asking: bool) -> bool {
        let mut visibility = self
            .visibility
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        visibility.asking = asking;
        let line_open = visibility.line_open;
        // The answer's Enter ends the line the question stood on.
        if !asking {
            visibility.line_open = false;
        }
        apply(&self.multi, &mut visibility);
        line_open
    }
}

impl Drop for LiveView {
    fn drop(&mut self) {
        self.clear();
        crate::output::ask::set_screen(None);
        console::set_live(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_times_read_as_people_write_them() {
        assert_eq!(elapsed(Duration::from_millis(4_900)), "4s");
        assert_eq!(elapsed(Duration::from_secs(75)), "1m15s");
    }
}
