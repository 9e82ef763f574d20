//! Plain text from any CLI: every byte is the assistant's text.

use super::{Decoder, Event};

/// Streams text through as it arrives; a UTF-8 sequence split across chunks is held back
/// until its last byte comes, and invalid bytes become U+FFFD.
#[derive(Debug, Default)]
pub struct TextDecoder {
    utf8: Utf8Stream,
    emitted: bool,
}

impl Decoder for TextDecoder {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Event>) {
        let text = self.utf8.decode(bytes);
        if !text.is_empty() {
            self.emitted = true;
            out.push(Event::Text(text));
        }
    }

    fn finish(&mut self, out: &mut Vec<Event>) {
        let rest = self.utf8.finish();
        if !rest.is_empty() {
            self.emitted = true;
            out.push(Event::Text(rest));
        }
        if self.emitted {
            out.push(Event::TextEnd);
        }
    }
}

/// Incremental UTF-8 decoding with replacement of invalid bytes.
#[derive(Debug, Default)]
pub struct Utf8Stream {
    /// The first bytes of a character whose remaining bytes have not arrived yet (≤ 3).
    partial: Vec<u8>,
}

impl Utf8Stream {
    pub fn decode(&mut self, bytes: &[u8]) -> String {
        let joined;
        let mut input = bytes;
        if !self.partial.is_empty() {
            let mut buf = std::mem::take(&mut self.partial);
            buf.extend_from_slice(bytes);
            joined = buf;
            input = &joined;
        }
        let mut out = String::with_capacity(input.len());
        loop {
            match std::str::from_utf8(input) {
                Ok(valid) => {
                    out.push_str(valid);
                    return out;
                }
                Err(error) => {
                    let (valid, rest) = input.split_at(error.valid_up_to());
                    // Safe: `from_utf8` just said these bytes are valid.
                    out.push_str(&String::from_utf8_lossy(valid));
                    match error.error_len() {
                        Some(bad) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            input = &rest[bad..];
                        }
                        None => {
                            self.partial = rest.to_vec();
                            return out;
                        }
                    }
                }
            }
        }
    }

    /// The stream has ended: an incomplete character is invalid.
    pub fn finish(&mut self) -> String {
        if self.partial.is_empty() {
            String::new()
        } else {
            self.partial.clear();
            char::REPLACEMENT_CHARACTER.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{Format, decode_all};

    #[test]
    fn text_passes_through_and_ends_with_text_end() {
        assert_eq!(
            decode_all(Format::Text, b"hello\nworld"),
            [Event::Text("hello\nworld".into()), Event::TextEnd]
        );
    }

    #[test]
    fn split_characters_and_invalid_bytes() {
        let mut stream = Utf8Stream::default();
        let bytes = "aé€".as_bytes();
        let mut text = String::new();
        for byte in bytes {
            text.push_str(&stream.decode(&[*byte]));
        }
        assert_eq!(text, "aé€");
        assert_eq!(stream.decode(b"x\xff\xfey"), "x\u{fffd}\u{fffd}y");
        assert_eq!(stream.decode(b"\xe2\x82"), "");
        assert_eq!(stream.finish(), "\u{fffd}");
    }

    #[test]
    fn empty_input_gives_no_events() {
        assert_eq!(decode_all(Format::Text, b""), []);
    }
}
