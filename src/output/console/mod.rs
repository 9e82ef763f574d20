//! The one door to the terminal: every byte codecrew prints on stdout and stderr passes
//! here.
//!
//! Two kinds of output cross it, and the type says which:
//!
//! - [`Text`], for people: built only from text made [`inert`] (every control character
//!   shown, never sent) and codecrew's own styles, so the only escape sequences in it are
//!   the ones a [`Palette`] adds. The model's answer, a CLI's error, a server's message,
//!   a stored thread and a tool notice all reach the terminal this way, whether stdout is
//!   a terminal or a pipe: a pipe often ends in one (`| less -R`, `| tee`).
//! - exact output, for programs: JSON (through [`json`], which escapes DEL and the C1
//!   controls too, so the document is the same value and still inert on a terminal), a
//!   shell completion script, a manual page, a prompt for another CLI. `--output json`
//!   and `--output stream-json` are the way to the model's exact text.
//!
//! Lines on stderr go through [`line()`] (and [`error`], [`warn`], [`note`]), which lift a
//! live view drawn there ([`set_live`]) while they write. The permission prompt is the
//! one thing written elsewhere: to `/dev/tty`, with the policy's stricter escape, which
//! also shows newlines and invisible characters (`output::ask`).
//!
//! Elsewhere in the crate, printing macros and `std::io::stdout`/`stderr` are lint
//! errors (`src/lib.rs`, `clippy.toml`), so a new output path cannot miss the door.

mod inert;
pub mod json;

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use anstyle::Style;

pub use inert::{Inert, inert};

use crate::output::color::{Colors, ERROR, Palette, WARNING};

/// Text safe to send to a terminal: made of text made [`inert`] and codecrew's own
/// styles, nothing else.
///
/// ```
/// use codecrew::output::color::{LABEL, Palette};
/// use codecrew::output::console::Text;
///
/// let mut line = Text::styled(Palette::ANSI, LABEL, "[claude]");
/// line.push(" done\u{1b}[2J\n");
/// assert_eq!(line.as_str(), "\u{1b}[1m[claude]\u{1b}[0m done^[[2J\n");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Text(String);

impl Text {
    pub fn new() -> Self {
        Text(String::new())
    }

    /// `text`, made inert.
    pub fn plain(text: &str) -> Self {
        Text(inert(text).into_owned())
    }

    /// `text`, made inert, in `style` when `palette` styles.
    pub fn styled(palette: Palette, style: Style, text: &str) -> Self {
        let mut shown = Text::new();
        shown.push_styled(palette, style, text);
        shown
    }

    /// Adds `text`, made inert.
    pub fn push(&mut self, text: &str) -> &mut Self {
        self.0.push_str(&inert(text));
        self
    }

    /// Adds `text`, made inert, in `style` when `palette` styles.
    pub fn push_styled(&mut self, palette: Palette, style: Style, text: &str) -> &mut Self {
        // The palette renders the style around the text and nothing else.
        let painted = palette.paint(style, inert(text)).to_string();
        self.0.push_str(&painted);
        self
    }

    /// Adds a piece of a stream, made inert by the stream's own state (a `\r` at the end
    /// of one piece may end a line with the next).
    pub fn push_streamed(&mut self, stream: &mut Inert, piece: &str) -> &mut Self {
        self.0.push_str(&stream.push(piece));
        self
    }

    /// Adds what a stream still holds at its end.
    pub fn finish_stream(&mut self, stream: &mut Inert) -> &mut Self {
        self.0.push_str(&stream.finish());
        self
    }

    /// Adds text that is already safe.
    pub fn append(&mut self, text: &Text) -> &mut Self {
        self.0.push_str(&text.0);
        self
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn ends_with_newline(&self) -> bool {
        self.0.ends_with('\n')
    }

    /// The whole lines at the front, taken off; what follows the last newline stays.
    pub fn take_lines(&mut self) -> Option<Text> {
        let end = self.0.rfind('\n')? + 1;
        Some(Text(self.0.drain(..end).collect()))
    }

    /// Each line, with its newline.
    pub fn split_lines(&self) -> impl Iterator<Item = Text> + '_ {
        self.0
            .split_inclusive('\n')
            .map(|line| Text(line.to_owned()))
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where output for people or programs goes: stdout (through the live view when one
/// draws) or, in tests, a buffer. It takes only [`Text`] or exact output.
#[derive(Debug)]
pub struct Out<W: Write> {
    inner: W,
}

impl<W: Write> Out<W> {
    pub fn new(inner: W) -> Self {
        Out { inner }
    }

    /// Text for people, in one write (a line is never split between two writes).
    pub fn show(&mut self, text: &Text) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        self.inner.write_all(text.as_str().as_bytes())?;
        self.inner.flush()
    }

    /// A JSON value on a line of its own, its strings inert ([`json`]).
    pub fn json_line(&mut self, value: &impl serde::Serialize) -> io::Result<()> {
        let mut line = json::to_vec(value)?;
        line.push(b'\n');
        self.exact(&line)
    }

    /// A JSON value pretty-printed, its strings inert ([`json`]).
    pub fn json_pretty(&mut self, value: &impl serde::Serialize) -> io::Result<()> {
        let mut document = json::to_vec_pretty(value)?;
        document.push(b'\n');
        self.exact(&document)
    }

    /// Output for a program, byte for byte (a completion script, a manual page, a
    /// prompt another CLI reads).
    pub fn exact(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.inner.write_all(bytes)?;
        self.inner.flush()
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    pub fn into_inner(self) -> W {
        self.inner
    }
}

/// The process's stdout.
#[allow(clippy::disallowed_methods)] // The door itself.
pub fn stdout() -> Out<Stdout> {
    Out::new(Stdout(io::stdout()))
}

/// The process's stdout as a writer. Once the terminal has hung up ([`hang_up`]), what
/// is written to it is dropped, since a terminal that is gone only fails every write;
/// a file or a pipe on stdout still gets it all.
#[derive(Debug)]
pub struct Stdout(io::Stdout);

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if silenced(Stream::Stdout) {
            return Ok(buf.len());
        }
        self.0.write(buf)
    }

    /// In one hold of stdout's lock, so that another thread's write cannot split it.
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if silenced(Stream::Stdout) {
            return Ok(());
        }
        self.0.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        if silenced(Stream::Stdout) {
            return Ok(());
        }
        self.0.flush()
    }
}

/// Whether stdout is a terminal.
#[allow(clippy::disallowed_methods)] // The door itself.
pub fn stdout_is_terminal() -> bool {
    io::IsTerminal::is_terminal(&io::stdout())
}

/// Which of stdout and stderr are terminals, for [`Colors::detect`].
pub fn terminals() -> crate::output::color::Terminals {
    crate::output::color::Terminals {
        stdout: stdout_is_terminal(),
        stderr: stderr_is_terminal(),
    }
}

/// Whether stderr is a terminal.
#[allow(clippy::disallowed_methods)] // The door itself.
pub fn stderr_is_terminal() -> bool {
    io::IsTerminal::is_terminal(&io::stderr())
}

/// How this process styles its streams, decided once by `main` from `--color`, the
/// environment and the streams ([`init`]); plain until then.
static COLORS: OnceLock<Colors> = OnceLock::new();

/// A live view drawn on stderr, lifted while a line is written there.
static LIVE: Mutex<Option<indicatif::MultiProgress>> = Mutex::new(None);

/// Which of stdout and stderr were terminals when the process started: once the
/// terminal hangs up, a hung-up descriptor no longer says it was one.
static TERMINALS: OnceLock<[bool; 2]> = OnceLock::new();

/// Set when the terminal hung up (SIGHUP, or its reads fail with EIO).
static HUNG_UP: AtomicBool = AtomicBool::new(false);

#[derive(Debug, Clone, Copy)]
enum Stream {
    Stdout = 0,
    Stderr = 1,
}

/// Sets the styles of this process's streams; the first call wins. It also notes which
/// streams are terminals, for [`hang_up`].
pub fn init(colors: Colors) {
    let _ = COLORS.set(colors);
    let _ = TERMINALS.set([stdout_is_terminal(), stderr_is_terminal()]);
}

/// The terminal is gone (the window closed, SIGHUP): from now on nothing is written to
/// the streams that were terminals. Writing to a terminal that hung up only fails, and
/// an error said about it would go to the same dead terminal.
pub fn hang_up() {
    HUNG_UP.store(true, Ordering::Relaxed);
}

/// Whether the terminal hung up ([`hang_up`]).
pub fn hung_up() -> bool {
    HUNG_UP.load(Ordering::Relaxed)
}

/// Whether what is written to `stream` is dropped: the terminal hung up, and `stream`
/// was a terminal (taken to be one when [`init`] was never called).
fn silenced(stream: Stream) -> bool {
    hung_up()
        && TERMINALS
            .get()
            .is_none_or(|terminals| terminals[stream as usize])
}

/// The styles of this process's streams.
pub fn colors() -> Colors {
    COLORS.get().copied().unwrap_or_default()
}

/// Registers (or, with `None`, removes) the live view that stderr lines must lift.
pub fn set_live(view: Option<indicatif::MultiProgress>) {
    *LIVE.lock().unwrap_or_else(PoisonError::into_inner) = view;
}

/// A line on stderr (a newline is added when it has none), with the live view lifted.
pub fn line(text: &Text) {
    if silenced(Stream::Stderr) {
        return;
    }
    let mut text = text.clone();
    if !text.ends_with_newline() {
        text.0.push('\n');
    }
    #[allow(clippy::disallowed_methods)] // The door itself.
    let write = || {
        let _ = io::stderr().lock().write_all(text.as_str().as_bytes());
    };
    let live = LIVE.lock().unwrap_or_else(PoisonError::into_inner).clone();
    match live {
        Some(view) => view.suspend(write),
        None => write(),
    }
}

/// `codecrew: <message>`: something that ends the command.
pub fn error(message: impl fmt::Display) {
    let mut text = Text::plain("codecrew: ");
    text.push_styled(colors().stderr, ERROR, &message.to_string());
    line(&text);
}

/// `codecrew: warning: <message>`.
pub fn warn(message: impl fmt::Display) {
    let mut text = Text::plain("codecrew: ");
    text.push_styled(colors().stderr, WARNING, "warning:");
    text.push(" ").push(&message.to_string());
    line(&text);
}

/// `codecrew: note: <message>`.
pub fn note(message: impl fmt::Display) {
    let mut text = Text::plain("codecrew: note: ");
    text.push(&message.to_string());
    line(&text);
}

/// The writer of codecrew's logs (`-v`, `RUST_LOG`): stderr, each write made inert (a
/// log may quote a CLI's output), with the live view lifted.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        line(&Text::plain(&String::from_utf8_lossy(buf)));
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LogWriter;

    fn make_writer(&'a self) -> Self::Writer {
        LogWriter
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::color::LABEL;

    #[test]
    fn only_the_palettes_styles_are_escape_sequences() {
        let mut text = Text::styled(Palette::ANSI, LABEL, "[a\u{1b}[31m]");
        text.push("\u{9d}8;;x\u{9c}");
        assert_eq!(
            text.as_str(),
            "\u{1b}[1m[a^[[31m]\u{1b}[0m\\u{9d}8;;x\\u{9c}"
        );
        let plain = Text::styled(Palette::PLAIN, LABEL, "\u{7}");
        assert_eq!(plain.as_str(), "^G");
    }

    #[test]
    fn whole_lines_are_taken_and_the_rest_waits() {
        let mut text = Text::plain("one\ntwo\nthr");
        assert_eq!(text.take_lines(), Some(Text::plain("one\ntwo\n")));
        assert_eq!(text.as_str(), "thr");
        assert_eq!(text.take_lines(), None);
    }

    #[test]
    fn out_writes_text_and_json_and_nothing_else() {
        let mut out = Out::new(Vec::new());
        out.show(&Text::plain("a\u{1b}]0;t\u{7}\n")).unwrap();
        out.json_line(&serde_json::json!({"text": "\u{1b}\u{7f}\u{9b}"}))
            .unwrap();
        let written = String::from_utf8(out.into_inner()).unwrap();
        assert_eq!(written, "a^[]0;t^G\n{\"text\":\"\\u001b\\u007f\\u009b\"}\n");
        assert!(!written.chars().any(|c| c.is_control() && c != '\n'));
    }
}
