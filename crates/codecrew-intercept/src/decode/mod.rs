//! Decoders: turn the stdout of an LLM CLI into one stream of [`Event`]s.
//!
//! Every decoder takes raw bytes in arbitrary chunks (a pipe gives no line guarantees) and
//! never fails: unknown event types are skipped with a debug log, lines that should be JSON
//! but are not become [`Event::Malformed`], and plain lines are text.
//!
//! The contract every decoder keeps: the [`Event::Text`] pieces of one run, concatenated,
//! are the assistant's own text exactly once (streamed deltas and the complete block that
//! repeats them are not both emitted), and [`Event::TextEnd`] marks where one assistant
//! message or text block ends. Nothing else (thinking, tool results, the echoed prompt) is
//! ever emitted as `Text`, because the interception scanner only looks at `Text`.

mod auto;
mod claude;
mod codex;
mod copilot;
mod gemini;
mod json;
mod lines;
mod llm;
mod opencode;
#[cfg(test)]
mod testing;
mod text;
mod usage;

use serde_json::Value;

use crate::CliKind;

pub use json::Sink;
pub use lines::LineBuffer;
pub use usage::Usage;

/// One thing an LLM CLI reported, in a shape common to all CLIs.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The CLI's session (Claude, Gemini, Copilot, opencode), thread (Codex) or
    /// conversation (llm) identifier.
    Session { id: String, model: Option<String> },
    /// A piece of the assistant's own text, in order.
    Text(String),
    /// The end of one assistant message or text block.
    TextEnd,
    /// A piece of the model's thinking; shown, never scanned for calls.
    Thinking(String),
    /// A call to one of the CLI's own tools: shown, never executed by codecrew.
    NativeTool {
        id: Option<String>,
        name: String,
        input: Value,
    },
    /// The result of one of the CLI's own tools.
    NativeToolResult {
        id: Option<String>,
        output: String,
        is_error: bool,
    },
    /// The run is over.
    Finished {
        /// The final answer as the CLI reported it (already delivered as `Text`).
        text: Option<String>,
        is_error: bool,
        /// What the run used, as the CLI reported it (`None` when it reported nothing).
        usage: Option<Usage>,
        stop: Option<String>,
    },
    /// The model's context window in tokens, as the CLI reported it (Claude Code's
    /// result, `modelUsage.*.contextWindow`): what an editor shows the context used
    /// against.
    ContextWindow(u64),
    /// An error the CLI reported (an API error, a failed turn).
    Error(String),
    /// A line that should have been an event but could not be read.
    Malformed { reason: String, raw: String },
}

/// The output formats codecrew can read: the dialects of the CLIs' output (a CLI may
/// print another's: Qwen Code prints Claude Code's), plain text, and detection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Detect the format from the first line.
    Auto,
    /// Plain text from any CLI.
    Text,
    /// Claude Code `--output-format stream-json --verbose` (with or without
    /// `--include-partial-messages`) and `--output-format json`.
    Claude,
    /// Gemini CLI `--output-format stream-json` and `--output-format json`.
    Gemini,
    /// Codex `exec --json`.
    Codex,
    /// Copilot CLI `--output-format json`.
    Copilot,
    /// opencode `run --format json`.
    Opencode,
    /// `llm prompt --json`: one JSON array when the answer is whole.
    Llm,
}

impl Format {
    /// All formats, in the order `--from` lists them: `auto`, `text`, then the dialects
    /// in the order of the CLIs that print them ([`CliKind::ALL`]; a test holds the two
    /// lists together).
    pub const ALL: [Format; 8] = [
        Format::Auto,
        Format::Text,
        Format::Claude,
        Format::Gemini,
        Format::Codex,
        Format::Copilot,
        Format::Opencode,
        Format::Llm,
    ];

    /// Its `--from` name; a dialect is named for the CLI whose output it is.
    pub const fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Text => "text",
            Format::Claude => CliKind::Claude.name(),
            Format::Gemini => CliKind::Gemini.name(),
            Format::Codex => CliKind::Codex.name(),
            Format::Copilot => CliKind::Copilot.name(),
            Format::Opencode => CliKind::Opencode.name(),
            Format::Llm => CliKind::Llm.name(),
        }
    }
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<_> = Format::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "unknown format {s:?}; expected one of: {}",
                    names.join(", ")
                )
            })
    }
}

/// A streaming decoder for one CLI output format.
pub trait Decoder: Send {
    /// Feeds the next chunk of the CLI's stdout. Chunks may split lines and UTF-8 sequences.
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Event>);
    /// The CLI's stdout has ended: flush whatever is buffered.
    fn finish(&mut self, out: &mut Vec<Event>);
}

/// Makes the decoder for `format`.
pub fn decoder(format: Format) -> Box<dyn Decoder> {
    match format {
        Format::Auto => Box::new(auto::AutoDecoder::default()),
        Format::Text => Box::new(text::TextDecoder::default()),
        Format::Claude => Box::new(claude::ClaudeDecoder::default()),
        Format::Gemini => Box::new(gemini::GeminiDecoder::default()),
        Format::Codex => Box::new(codex::CodexDecoder::default()),
        Format::Copilot => Box::new(copilot::CopilotDecoder::default()),
        Format::Opencode => Box::new(opencode::OpencodeDecoder::default()),
        Format::Llm => Box::new(llm::LlmDecoder::default()),
    }
}

/// Decodes a whole output at once (for tests, fixtures and small inputs).
pub fn decode_all(format: Format, bytes: &[u8]) -> Vec<Event> {
    let mut decoder = decoder(format);
    let mut out = Vec::new();
    decoder.feed(bytes, &mut out);
    decoder.finish(&mut out);
    out
}

/// Caps a raw line for [`Event::Malformed`], so a flood cannot fill memory twice.
pub(crate) fn excerpt(raw: &str) -> String {
    const MAX: usize = 200;
    if raw.len() <= MAX {
        return raw.to_owned();
    }
    let mut end = MAX;
    while !raw.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &raw[..end], raw.len())
}
