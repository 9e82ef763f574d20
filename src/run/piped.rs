//! What a pipe hands codecrew on stdin: context for every task of the command
//! (`git diff | codecrew query "@claude review this"`), or the task itself (`-`, or no
//! task given).
//!
//! The rules, for scripts:
//! - stdin is read only when it is not a terminal, and not with `--no-stdin`;
//! - a stdin that gives nothing within the wait (`--stdin-timeout`, 5 s by default) is
//!   left unread, with a note, so an inherited pipe that nobody writes to (a CI runner,
//!   an agent's shell) cannot hang a script; an empty one (`< /dev/null`) is no input;
//! - once it has begun, it is read to its end, at most [`MAX_BYTES`]: past that the
//!   rest is left unread, and the model and the user are told it was cut;
//! - it must be text (UTF-8, no NUL byte); anything else stops the command (exit 2).

use std::io::Read;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// The most of stdin given to the model: about 250,000 tokens, past most models' window.
pub const MAX_BYTES: usize = 1024 * 1024;

/// How long stdin may stay silent before codecrew goes on without it, by default.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(5);

/// What stdin gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piped {
    /// Nothing: a terminal, `--no-stdin`, an empty pipe or file.
    Nothing,
    /// Nothing within the wait: stdin was left unread.
    Silent(Duration),
    /// Text, and whether it was cut at [`MAX_BYTES`].
    Text { text: String, cut: bool },
}

/// Why stdin cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PipedError {
    #[error(
        "stdin is not text ({reason}); codecrew gives piped input to the model as text: \
         convert it first (e.g. `xxd`, `base64`), or pass --no-stdin to leave it unread"
    )]
    NotText { reason: String },
    #[error("cannot read stdin: {0}")]
    Io(#[from] std::io::Error),
}

/// Reads `input` as the rules above say, waiting at most `wait` for its first byte.
pub fn read(input: impl Read + Send + 'static, wait: Duration) -> Result<Piped, PipedError> {
    // A read cannot be given a deadline; a thread reads, and is left blocked on a silent
    // pipe (it ends with the process).
    let (chunks, received) = mpsc::channel();
    std::thread::spawn(move || read_chunks(input, &chunks));
    let mut bytes = Vec::new();
    match received.recv_timeout(wait) {
        Ok(Chunk::Data(data)) => bytes.extend_from_slice(&data),
        Ok(Chunk::End) | Err(RecvTimeoutError::Disconnected) => return Ok(Piped::Nothing),
        Ok(Chunk::Failed(error)) => return Err(error.into()),
        Err(RecvTimeoutError::Timeout) => return Ok(Piped::Silent(wait)),
    }
    let mut cut = false;
    while bytes.len() <= MAX_BYTES {
        match received.recv() {
            Ok(Chunk::Data(data)) => bytes.extend_from_slice(&data),
            Ok(Chunk::End) | Err(_) => break,
            Ok(Chunk::Failed(error)) => return Err(error.into()),
        }
    }
    if bytes.len() > MAX_BYTES {
        cut = true;
        bytes.truncate(MAX_BYTES);
    }
    text(bytes, cut)
}

enum Chunk {
    Data(Vec<u8>),
    End,
    Failed(std::io::Error),
}

fn read_chunks(mut input: impl Read, chunks: &mpsc::Sender<Chunk>) {
    let mut total = 0;
    loop {
        let mut buffer = vec![0; 64 * 1024];
        let chunk = match input.read(&mut buffer) {
            Ok(0) => Chunk::End,
            Ok(read) => {
                buffer.truncate(read);
                total += read;
                Chunk::Data(buffer)
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => Chunk::Failed(error),
        };
        let last = !matches!(chunk, Chunk::Data(_)) || total > MAX_BYTES;
        if chunks.send(chunk).is_err() || last {
            return;
        }
    }
}

/// The bytes as text: a NUL byte or a sequence that is not UTF-8 is refused, but a
/// character cut in two at [`MAX_BYTES`] is only dropped.
fn text(mut bytes: Vec<u8>, cut: bool) -> Result<Piped, PipedError> {
    if let Some(at) = memchr::memchr(0, &bytes) {
        return Err(PipedError::NotText {
            reason: format!("a NUL byte at offset {at}"),
        });
    }
    if cut && let Err(error) = std::str::from_utf8(&bytes) {
        // An incomplete character at the very end is the cut's, not the input's.
        if error.error_len().is_none() {
            bytes.truncate(error.valid_up_to());
        }
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Piped::Text { text, cut }),
        Err(error) => Err(PipedError::NotText {
            reason: format!(
                "bytes that are not UTF-8 at offset {}",
                error.utf8_error().valid_up_to()
            ),
        }),
    }
}

impl Piped {
    /// The task with the piped text beside it, marked as input rather than instructions.
    pub fn beside(&self, task: &str) -> String {
        let Piped::Text { text, cut } = self else {
            return task.to_owned();
        };
        let cut = if *cut {
            format!(", cut at its first {} KiB", MAX_BYTES / 1024)
        } else {
            String::new()
        };
        let newline = if text.ends_with('\n') { "" } else { "\n" };
        format!(
            "{task}\n\nThe input piped to codecrew ({} bytes{cut}) follows, between the \
             <stdin> lines:\n<stdin>\n{text}{newline}</stdin>",
            text.len()
        )
    }

    /// What the user should know about stdin, if anything.
    pub fn notice(&self) -> Option<String> {
        match self {
            Piped::Nothing | Piped::Text { cut: false, .. } => None,
            Piped::Silent(wait) => Some(format!(
                "stdin gave nothing in {} s and was left unread; to wait longer pass \
                 --stdin-timeout, to leave it alone --no-stdin",
                wait.as_secs_f32()
            )),
            Piped::Text { cut: true, .. } => Some(format!(
                "stdin is larger than {} KiB: the model gets its first {} KiB and is told \
                 it was cut",
                MAX_BYTES / 1024,
                MAX_BYTES / 1024
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    const WAIT: Duration = Duration::from_secs(5);

    #[test]
    fn text_is_read_whole_and_set_beside_each_task() {
        let piped = read(Cursor::new(b"diff --git a/x b/x\n+new\n".to_vec()), WAIT).unwrap();
        assert_eq!(
            piped,
            Piped::Text {
                text: "diff --git a/x b/x\n+new\n".into(),
                cut: false
            }
        );
        let task = piped.beside("review this");
        assert!(task.starts_with("review this\n\nThe input piped to codecrew (24 bytes)"));
        assert!(
            task.ends_with("<stdin>\ndiff --git a/x b/x\n+new\n</stdin>"),
            "{task}"
        );
        assert_eq!(piped.notice(), None);
    }

    #[test]
    fn an_empty_stdin_is_no_input() {
        let piped = read(Cursor::new(Vec::new()), WAIT).unwrap();
        assert_eq!(piped, Piped::Nothing);
        assert_eq!(piped.beside("task"), "task");
    }

    #[test]
    fn a_silent_stdin_is_left_unread_after_the_wait() {
        // A pipe whose writer stays open and never writes.
        let (reader, _writer) = std::io::pipe().unwrap();
        let started = std::time::Instant::now();
        let piped = read(reader, Duration::from_millis(200)).unwrap();
        assert_eq!(piped, Piped::Silent(Duration::from_millis(200)));
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(piped.notice().unwrap().contains("--stdin-timeout"));
    }

    #[test]
    fn more_than_the_limit_is_cut_and_said() {
        let mut big = "é".repeat(MAX_BYTES / 2);
        big.push_str("tail");
        let piped = read(Cursor::new(format!("x{big}").into_bytes()), WAIT).unwrap();
        let Piped::Text { text, cut } = &piped else {
            panic!("{piped:?}");
        };
        assert!(cut);
        // The character cut in two at the limit is dropped, not refused.
        assert_eq!(text.len(), MAX_BYTES - 1);
        assert!(piped.beside("t").contains("cut at its first 1024 KiB"));
        assert!(piped.notice().unwrap().contains("1024 KiB"));
    }

    #[test]
    fn binary_input_is_refused_with_what_to_do() {
        let error = read(Cursor::new(b"PK\x03\x04\x00\x00".to_vec()), WAIT).unwrap_err();
        assert!(
            error.to_string().contains("NUL byte at offset 4"),
            "{error}"
        );
        assert!(error.to_string().contains("--no-stdin"), "{error}");
        let error = read(Cursor::new(b"ok \xff\xfe".to_vec()), WAIT).unwrap_err();
        assert!(
            error.to_string().contains("not UTF-8 at offset 3"),
            "{error}"
        );
    }
}
