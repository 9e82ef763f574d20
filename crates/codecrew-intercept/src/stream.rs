//! A CLI's raw output in, text segments, calls and the CLI's other events out: the decoder
//! and the scanner joined, so that only the assistant's own text is ever scanned.

use crate::decode::{self, Decoder, Event, Format};

use super::{Scanner, ScannerLimits, Segment};

/// One thing found in a CLI's output, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// Assistant text, a call or a rejected envelope.
    Segment(Segment),
    /// One assistant message ended.
    MessageEnd,
    /// Any other event of the CLI (session, thinking, native tools, finish, errors).
    Event(Event),
}

/// Decodes and scans a CLI's output as it streams.
pub struct Interceptor {
    decoder: Box<dyn Decoder>,
    scanner: Scanner,
    events: Vec<Event>,
    segments: Vec<Segment>,
}

impl Interceptor {
    pub fn new(format: Format, limits: ScannerLimits) -> Self {
        Interceptor {
            decoder: decode::decoder(format),
            scanner: Scanner::new(limits),
            events: Vec::new(),
            segments: Vec::new(),
        }
    }

    /// Feeds the next chunk of raw output.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Item>) {
        self.decoder.feed(bytes, &mut self.events);
        self.drain(out);
    }

    /// The output has ended.
    pub fn finish(&mut self, out: &mut Vec<Item>) {
        self.decoder.finish(&mut self.events);
        self.drain(out);
        self.scanner.finish(&mut self.segments);
        out.extend(self.segments.drain(..).map(Item::Segment));
    }

    fn drain(&mut self, out: &mut Vec<Item>) {
        for event in self.events.drain(..) {
            match event {
                Event::Text(text) => self.scanner.push(&text, &mut self.segments),
                Event::TextEnd => {
                    self.scanner.end_message(&mut self.segments);
                    out.extend(self.segments.drain(..).map(Item::Segment));
                    out.push(Item::MessageEnd);
                    continue;
                }
                other => {
                    // Whatever the scanner holds belongs before this event.
                    out.extend(self.segments.drain(..).map(Item::Segment));
                    out.push(Item::Event(other));
                    continue;
                }
            }
            out.extend(self.segments.drain(..).map(Item::Segment));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_assistant_text_is_scanned() {
        let mut interceptor = Interceptor::new(Format::Text, ScannerLimits::default());
        let mut out = Vec::new();
        interceptor.feed(b"{\"name\":\"codecrew:help\"}", &mut out);
        interceptor.finish(&mut out);
        assert!(matches!(out[0], Item::Segment(Segment::Call(_))), "{out:?}");
        assert_eq!(out[1], Item::MessageEnd);
    }
}
