//! Placeholder: replaced by the real decoder in the next commit.

use super::{Decoder, Event, text::TextDecoder};

#[derive(Debug, Default)]
pub struct CodexDecoder(TextDecoder);

impl Decoder for CodexDecoder {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Event>) {
        self.0.feed(bytes, out)
    }

    fn finish(&mut self, out: &mut Vec<Event>) {
        self.0.finish(out)
    }
}
