//! The chat's line editor on a thread of its own.
//!
//! `readline` blocks until a line is typed, and nothing can wake it; yet the chat must end
//! at once on a signal, or when the terminal hangs up. So the editor lives on a thread of
//! its own (not the runtime's blocking pool, whose shutdown would wait for the read), the
//! chat awaits its lines beside the signals, and a chat that ends during a read leaves
//! the thread in it (the process's exit ends it), after putting the terminal back as it
//! was before the editor made it raw ([`Reader::abandon`]).
//!
//! Each line read is added to the history and the history saved at once, so that a chat
//! ended by a signal or a hang-up keeps its lines too.

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::mpsc as std_mpsc;

use nix::errno::Errno;
use nix::sys::termios::{self, SetArg, Termios};
use rustyline::error::ReadlineError;
use tokio::sync::mpsc;

use super::editor::LineEditor;
use crate::output::console;

/// What one read gave.
#[derive(Debug)]
pub enum Read {
    Line(String),
    /// Ctrl-C at the prompt.
    Interrupted,
    /// Ctrl-D on an empty line.
    Eof,
    /// The terminal hung up: its reads end or fail (EIO), and it answers nothing more.
    HungUp,
    /// Another error of the terminal or the editor, said in words.
    Failed(String),
}

/// The editor's thread, and the read it is in.
pub struct Reader {
    prompts: std_mpsc::Sender<String>,
    reads: mpsc::UnboundedReceiver<Read>,
    /// A line was asked for and has not come: the editor holds the terminal raw.
    reading: bool,
    /// The terminal's settings before the editor first made it raw.
    cooked: Option<Termios>,
}

impl Reader {
    /// Starts the editor's thread. Each line read goes into its history, saved in
    /// `history` (none: kept in memory only).
    pub fn start(editor: LineEditor, history: Option<PathBuf>) -> std::io::Result<Reader> {
        let cooked = termios::tcgetattr(std::io::stdin()).ok();
        let (prompts, asked) = std_mpsc::channel::<String>();
        let (sender, reads) = mpsc::unbounded_channel();
        std::thread::Builder::new()
            .name("chat-editor".to_owned())
            .spawn(move || serve(editor, history.as_deref(), &asked, &sender))?;
        Ok(Reader {
            prompts,
            reads,
            reading: false,
            cooked,
        })
    }

    /// The next line, read after `prompt`. Cancel-safe: dropped during a read, it leaves
    /// the read going on, and the next call gets that read's line.
    pub async fn read(&mut self, prompt: &str) -> Read {
        let gone = || Read::Failed("the line editor stopped".to_owned());
        if !self.reading {
            if self.prompts.send(prompt.to_owned()).is_err() {
                return gone();
            }
            self.reading = true;
        }
        let read = self.reads.recv().await;
        self.reading = false;
        read.unwrap_or_else(gone)
    }

    /// For a chat that ends during a read: the terminal put back as it was before the
    /// editor made it raw (its settings, bracketed paste off) and the cursor on a new
    /// line, since the editor will never do it. Nothing when no read is going on, or
    /// the terminal hung up.
    pub fn abandon(&mut self) {
        if !self.reading || console::hung_up() {
            return;
        }
        self.reading = false;
        if let Some(cooked) = &self.cooked {
            let _ = termios::tcsetattr(std::io::stdin(), SetArg::TCSANOW, cooked);
        }
        let _ = console::stdout().exact(b"\x1b[?2004l\n");
    }
}

/// The terminal's hang-up, whether or not a SIGHUP says so: the kernel sends SIGHUP to the
/// terminal's session leader, and a shell that ignores it (or `nohup`) passes none on to
/// the chat, which must still end, during an answer too, when nothing reads the terminal.
/// A thread polls the terminal for its hang-up alone (never its input, which the editor
/// reads).
pub struct HangUp(mpsc::UnboundedReceiver<()>);

impl HangUp {
    /// Starts watching the terminal on stdin.
    pub fn watch() -> HangUp {
        let (hung_up, receiver) = mpsc::unbounded_channel();
        let watching = std::thread::Builder::new()
            .name("chat-terminal".to_owned())
            .spawn(move || {
                if wait_for_hang_up() {
                    let _ = hung_up.send(());
                }
            });
        if let Err(error) = watching {
            tracing::debug!("the terminal's hang-up is not watched: {error}");
        }
        HangUp(receiver)
    }

    /// Resolves once the terminal hung up; never when it cannot be watched. Cancel-safe.
    pub async fn wait(&mut self) {
        if self.0.recv().await.is_none() {
            std::future::pending::<()>().await;
        }
    }
}

/// Blocks until the terminal on stdin hangs up (true), or cannot be polled (false).
fn wait_for_hang_up() -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let stdin = std::io::stdin();
    loop {
        // No event asked for: only a hang-up or an error wakes the poll.
        let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::empty())];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {
                let happened = fds[0].revents().unwrap_or(PollFlags::POLLNVAL);
                if happened.intersects(PollFlags::POLLHUP | PollFlags::POLLERR) {
                    return true;
                }
                if happened.contains(PollFlags::POLLNVAL) {
                    return false;
                }
            }
            Err(Errno::EINTR) => {}
            Err(_) => return false,
        }
    }
}

/// The editor's thread: a line read for each prompt asked, until the chat is gone.
fn serve(
    mut editor: LineEditor,
    history: Option<&Path>,
    asked: &std_mpsc::Receiver<String>,
    reads: &mpsc::UnboundedSender<Read>,
) {
    let mut saved = Saved::default();
    while let Ok(prompt) = asked.recv() {
        let read = match editor.readline(&prompt) {
            Ok(line) => {
                let _ = editor.add_history_entry(line.as_str());
                if let Some(path) = history {
                    saved.save(&mut editor, path);
                }
                Read::Line(line)
            }
            Err(error) => meaning(error, terminal_hung_up()),
        };
        if reads.send(read).is_err() {
            return;
        }
    }
}

/// What a read that gave no line means; `hung_up`: the terminal answers nothing more.
fn meaning(error: ReadlineError, hung_up: bool) -> Read {
    match error {
        ReadlineError::Interrupted => Read::Interrupted,
        // A terminal that hung up ends its reads (or fails them): no Ctrl-D was typed.
        _ if hung_up => Read::HungUp,
        ReadlineError::Io(error) if error.raw_os_error() == Some(Errno::EIO as i32) => Read::HungUp,
        ReadlineError::Errno(Errno::EIO) => Read::HungUp,
        ReadlineError::Eof => Read::Eof,
        other => Read::Failed(other.to_string()),
    }
}

/// Whether the terminal on stdin hung up: it then fails every request with EIO.
fn terminal_hung_up() -> bool {
    matches!(termios::tcgetattr(std::io::stdin()), Err(Errno::EIO))
}

/// The history's saving, which warns once when it fails.
#[derive(Default)]
struct Saved {
    warned: bool,
}

impl Saved {
    fn save(&mut self, editor: &mut LineEditor, path: &Path) {
        let saved = path
            .parent()
            .map_or(Ok(()), codecrew_tools::state_dir::create)
            .map_err(|error| error.to_string())
            .and_then(|()| editor.save_history(path).map_err(|error| error.to_string()));
        if let (Err(error), false) = (saved, self.warned) {
            self.warned = true;
            tracing::warn!(file = %path.display(), "the chat history was not saved: {error}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_that_fails_as_the_terminal_hangs_up_is_a_hang_up_not_a_ctrl_d() {
        let eio = || std::io::Error::from_raw_os_error(Errno::EIO as i32);
        assert!(matches!(meaning(ReadlineError::Eof, true), Read::HungUp));
        assert!(matches!(meaning(ReadlineError::Eof, false), Read::Eof));
        assert!(matches!(
            meaning(ReadlineError::Io(eio()), false),
            Read::HungUp
        ));
        assert!(matches!(
            meaning(ReadlineError::Errno(Errno::EIO), false),
            Read::HungUp
        ));
        assert!(matches!(
            meaning(ReadlineError::Interrupted, true),
            Read::Interrupted
        ));
        let other = std::io::Error::from_raw_os_error(Errno::EBADF as i32);
        assert!(matches!(
            meaning(ReadlineError::Io(other), false),
            Read::Failed(_)
        ));
    }
}
