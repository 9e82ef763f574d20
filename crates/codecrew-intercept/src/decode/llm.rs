//! Simon Willison's `llm prompt --json`: one JSON array, printed when the answer is whole.
//!
//! ```text
//! [
//!   {
//!     "id": "01m89rh8…", "model": "fake", "conversation_id": "01m89rh8…",
//!     "input_tokens": 100, "output_tokens": 7,
//!     "prompt": "…", "response": "the whole answer", …
//!   }
//! ]
//! ```
//!
//! The document is the same one `llm logs --json` prints for the logged response, so it
//! carries what codecrew needs from one process: the answer, the conversation to continue
//! (`--cid`) and the tokens. Nothing arrives before the answer is complete, so the decoder
//! keeps the bytes (up to [`MAX_DOCUMENT`]) and reads them when stdout ends.

use serde::Deserialize;

use super::json::Sink;
use super::{Decoder, Event, Usage, excerpt};

/// The most output kept for one answer; more is reported as malformed, not kept.
pub const MAX_DOCUMENT: usize = 64 << 20;

/// Decodes `llm prompt --json` output.
#[derive(Debug, Default)]
pub struct LlmDecoder {
    bytes: Vec<u8>,
    /// The output outgrew [`MAX_DOCUMENT`]: its length, the rest dropped.
    overflow: Option<usize>,
}

/// One logged response, as `llm` prints it.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Response {
    model: Option<String>,
    conversation_id: Option<String>,
    response: Option<String>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

impl Decoder for LlmDecoder {
    fn feed(&mut self, bytes: &[u8], _out: &mut Vec<Event>) {
        if let Some(total) = &mut self.overflow {
            *total += bytes.len();
        } else if self.bytes.len() + bytes.len() > MAX_DOCUMENT {
            self.overflow = Some(self.bytes.len() + bytes.len());
        } else {
            self.bytes.extend_from_slice(bytes);
        }
    }

    fn finish(&mut self, out: &mut Vec<Event>) {
        let bytes = std::mem::take(&mut self.bytes);
        let head = String::from_utf8_lossy(&bytes[..bytes.len().min(256)]).into_owned();
        if let Some(len) = self.overflow.take() {
            out.push(Event::Malformed {
                reason: format!(
                    "output of {len} bytes is longer than the {MAX_DOCUMENT} byte limit"
                ),
                raw: excerpt(&head),
            });
            return;
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let responses = match serde_json::from_slice::<Vec<Response>>(&bytes) {
            Ok(responses) => responses,
            Err(error) => {
                out.push(Event::Malformed {
                    reason: format!("not the JSON array of `llm prompt --json`: {error}"),
                    raw: excerpt(&head),
                });
                return;
            }
        };
        let mut sink = Sink::default();
        let mut usage = Usage::default();
        let mut last = None;
        for response in responses {
            if let Some(id) = &response.conversation_id {
                sink.session(id, response.model.as_deref(), out);
            }
            if let Some(text) = &response.response {
                sink.text(text, out);
                sink.end_text(out);
            }
            usage.add(&Usage {
                input_tokens: response.input_tokens,
                output_tokens: response.output_tokens,
                cached_tokens: None,
                cost_usd: None,
            });
            last = response.response;
        }
        sink.push(
            Event::Finished {
                text: last,
                is_error: false,
                usage: (!usage.is_empty()).then_some(usage),
                stop: None,
            },
            out,
        );
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::decode::testing::*;
    use crate::decode::{Format, decode_all};

    #[test]
    fn every_fixture_keeps_the_contract() {
        check_suite("llm", Format::Llm, LLM);
    }

    #[test]
    fn the_document_gives_the_conversation_the_answer_and_the_tokens() {
        let events = decode_all(Format::Llm, &fixture("llm/a_plain_json.stdout"));
        let Event::Session { id, model } = &events[0] else {
            panic!("{events:?}")
        };
        assert!(id.starts_with("01"), "{id}");
        assert_eq!(model.as_deref(), Some("fake"));
        assert_eq!(events[1], Event::Text(LLM_PLAIN.into()));
        assert_eq!(events[2], Event::TextEnd);
        assert_eq!(
            events[3],
            Event::Finished {
                text: Some(LLM_PLAIN.into()),
                is_error: false,
                usage: Some(Usage {
                    input_tokens: Some(100),
                    output_tokens: Some(7),
                    cached_tokens: None,
                    cost_usd: None,
                }),
                stop: None,
            }
        );
    }

    #[test]
    fn split_anywhere_it_reads_the_same() {
        let bytes = fixture("llm/b_json_block_json.stdout");
        let whole = decode_all(Format::Llm, &bytes);
        for size in [1, 7, 64] {
            assert_eq!(decode_chunked(Format::Llm, &bytes, size), whole);
        }
    }

    #[test]
    fn text_that_is_not_the_document_is_reported_not_lost_silently() {
        let events = decode_all(Format::Llm, b"Error: Unknown model: x\n");
        assert!(
            matches!(&events[..], [Event::Malformed { raw, .. }] if raw.contains("Unknown model"))
        );
        assert_eq!(decode_all(Format::Llm, b"\n"), []);
    }

    #[test]
    fn a_flood_is_cut_off_not_kept() {
        let mut decoder = LlmDecoder::default();
        let mut out = Vec::new();
        let chunk = vec![b' '; 1 << 20];
        for _ in 0..65 {
            decoder.feed(&chunk, &mut out);
        }
        assert!(decoder.bytes.len() <= MAX_DOCUMENT);
        decoder.finish(&mut out);
        assert!(matches!(&out[..], [Event::Malformed { reason, .. }] if reason.contains("limit")));
    }
}
