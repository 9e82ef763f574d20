//! The events of one turn of a CLI kept over a JSON-RPC protocol, as its adapter reads
//! them from the CLI's messages: the interception engine's own [`Event`]s, kept to the
//! decoder contract by a [`Sink`] (text ended before anything else, the same error once,
//! a session once), so that the session loop reads them as it reads a decoded output.

use codecrew_intercept::decode::{Event, Sink, Usage};

/// One turn's events so far.
#[derive(Debug, Default)]
pub(crate) struct TurnEvents {
    sink: Sink,
    /// The message being streamed.
    message: String,
    /// The last message that ended: the answer [`Event::Finished`] reports.
    last_message: Option<String>,
}

impl TurnEvents {
    /// The session (or thread) the CLI opened, and its model where known.
    pub fn session(&mut self, id: &str, model: Option<&str>, out: &mut Vec<Event>) {
        self.sink.session(id, model, out);
    }

    /// A piece of the message being streamed.
    pub fn piece(&mut self, text: &str, out: &mut Vec<Event>) {
        self.message.push_str(text);
        self.sink.text(text, out);
    }

    /// A whole message (one that comes complete, never streamed).
    pub fn message(&mut self, text: String, out: &mut Vec<Event>) {
        self.end_message(out);
        self.sink.text(&text, out);
        self.sink.end_text(out);
        self.last_message = Some(text);
    }

    /// Anything else the CLI did (its own tool calls and their results): the message
    /// being streamed is over.
    pub fn push(&mut self, event: Event, out: &mut Vec<Event>) {
        self.end_message(out);
        self.sink.push(event, out);
    }

    /// An error the CLI reported (the turn goes on, or [`TurnEvents::failed`] follows).
    pub fn error(&mut self, message: &str, out: &mut Vec<Event>) {
        self.end_message(out);
        self.sink.error(message, out);
    }

    /// The turn's end: its answer (the last message) and what it used.
    pub fn finished(&mut self, usage: Option<Usage>, out: &mut Vec<Event>) {
        self.end(false, usage, out);
    }

    /// The turn failed, with why.
    pub fn failed(&mut self, message: &str, usage: Option<Usage>, out: &mut Vec<Event>) {
        self.error(message, out);
        self.end(true, usage, out);
    }

    fn end(&mut self, is_error: bool, usage: Option<Usage>, out: &mut Vec<Event>) {
        self.end_message(out);
        let finished = Event::Finished {
            text: self.last_message.take(),
            is_error,
            usage: usage.filter(|usage| !usage.is_empty()),
            stop: None,
        };
        self.sink.push(finished, out);
    }

    fn end_message(&mut self, out: &mut Vec<Event>) {
        if !self.message.is_empty() {
            self.last_message = Some(std::mem::take(&mut self.message));
        }
        self.sink.end_text(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_s_events_keep_the_decoder_contract() {
        let mut turn = TurnEvents::default();
        let mut out = Vec::new();
        turn.session("s", None, &mut out);
        turn.session("s", None, &mut out);
        turn.piece("Hel", &mut out);
        turn.piece("", &mut out);
        turn.piece("lo", &mut out);
        turn.push(Event::Thinking("t".into()), &mut out);
        turn.error("boom", &mut out);
        turn.failed("boom", None, &mut out);
        assert_eq!(
            out,
            [
                Event::Session {
                    id: "s".into(),
                    model: None
                },
                Event::Text("Hel".into()),
                Event::Text("lo".into()),
                Event::TextEnd,
                Event::Thinking("t".into()),
                Event::Error("boom".into()),
                Event::Finished {
                    text: Some("Hello".into()),
                    is_error: true,
                    usage: None,
                    stop: None
                },
            ]
        );
    }
}
