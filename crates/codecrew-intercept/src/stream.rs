//! A CLI's raw output in, text segments, calls and the CLI's other events out: the decoder
//! and the scanner joined, so that only the assistant's own text is ever scanned. A CLI
//! whose output is already events (one kept over a JSON-RPC protocol, whose adapter reads
//! its messages) gives them as they are ([`Interceptor::feed_events`]).

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
    /// Text fed as events and not ended yet: the end of the output ends it, as a
    /// decoder's `finish` ends its own.
    events_text_open: bool,
}

impl Interceptor {
    pub fn new(format: Format, limits: ScannerLimits) -> Self {
        Interceptor {
            decoder: decode::decoder(format),
            scanner: Scanner::new(limits),
            events: Vec::new(),
            segments: Vec::new(),
            events_text_open: false,
        }
    }

    /// Feeds the next chunk of raw output.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Item>) {
        self.decoder.feed(bytes, &mut self.events);
        self.drain(out);
    }

    /// Feeds events already decoded, kept to the decoder contract ([`decode::Sink`]): a
    /// kept JSON-RPC CLI's messages as its protocol adapter read them.
    pub fn feed_events(&mut self, events: impl IntoIterator<Item = Event>, out: &mut Vec<Item>) {
        for event in events {
            match event {
                Event::Text(_) => self.events_text_open = true,
                Event::TextEnd => self.events_text_open = false,
                _ => {}
            }
            self.events.push(event);
        }
        self.drain(out);
    }

    /// The output has ended.
    pub fn finish(&mut self, out: &mut Vec<Item>) {
        self.decoder.finish(&mut self.events);
        if std::mem::take(&mut self.events_text_open) {
            self.events.push(Event::TextEnd);
        }
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

    #[test]
    fn events_are_scanned_as_decoded_output_is() {
        let envelope = r#"{"type":"tool_use","name":"codecrew:read_file","input":{"path":"a"}}"#;
        let events = [
            Event::Session {
                id: "s".into(),
                model: None,
            },
            Event::Text(format!("Look.\n{}", &envelope[..20])),
            Event::Text(format!("{}\n", &envelope[20..])),
        ];
        let mut interceptor = Interceptor::new(Format::Gemini, ScannerLimits::default());
        let mut out = Vec::new();
        interceptor.feed_events(events, &mut out);
        // The text is still open: the end of the output ends it.
        assert!(!out.contains(&Item::MessageEnd), "{out:?}");
        interceptor.finish(&mut out);
        assert!(
            matches!(&out[0], Item::Event(Event::Session { id, .. }) if id == "s"),
            "{out:?}"
        );
        let calls = out
            .iter()
            .filter(|item| matches!(item, Item::Segment(Segment::Call(_))))
            .count();
        assert_eq!(calls, 1, "{out:?}");
        assert_eq!(out.last(), Some(&Item::MessageEnd));
    }
}
