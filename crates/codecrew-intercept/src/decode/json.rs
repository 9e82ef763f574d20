//! Pieces shared by the JSON decoders (Claude, Gemini, Codex): borrowed strings, line
//! classification, and the [`Sink`] (public, as `decode::Sink`) that keeps the `Text`/`TextEnd`/`Error` rules of the
//! decoder contract in one place.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::error::Category;

use super::{Event, excerpt, lines::LineItem};

/// An optional string field that borrows from the line when it has no escapes.
///
/// Lenient on purpose: a missing field, `null`, or a value of another type (the CLIs reuse
/// key names with other shapes across event types, e.g. Claude's `message` is an object in
/// `assistant` events and a string in `system/permission_denied`) all read as absent, so
/// one odd field never costs the whole event. (`Option<Cow<str>>` would also always
/// allocate: serde only borrows for a bare `Cow<str>` field.)
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Str<'a>(Option<Cow<'a, str>>);

impl<'a> Str<'a> {
    pub fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// The string, or `""` when absent.
    pub fn as_str(&self) -> &str {
        self.get().unwrap_or("")
    }

    pub fn into_string(self) -> Option<String> {
        self.0.map(Cow::into_owned)
    }

    /// This string if present, else `other`.
    pub fn or(self, other: Str<'a>) -> Str<'a> {
        if self.0.is_some() { self } else { other }
    }
}

/// Implements the visitor methods for every non-string JSON value as "absent".
macro_rules! absent_unless_handled {
    ($absent:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($absent)
        }

        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($absent)
        }

        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($absent)
        }

        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($absent)
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($absent)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            IgnoredAny.visit_seq(seq)?;
            Ok($absent)
        }
    };
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StrVisitor;

        impl<'de> Visitor<'de> for StrVisitor {
            type Value = Str<'de>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Some(Cow::Borrowed(v))))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Some(Cow::Owned(v.to_owned()))))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(Some(Cow::Owned(v))))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                IgnoredAny.visit_map(map)?;
                Ok(Str(None))
            }

            absent_unless_handled!(Str(None));
        }

        deserializer.deserialize_any(StrVisitor)
    }
}

/// An optional object field read as `T`; any other value (`null`, a string, …) reads as
/// absent, for the same reason as [`Str`].
#[derive(Debug)]
pub(crate) struct Obj<T>(Option<T>);

impl<T> Default for Obj<T> {
    fn default() -> Self {
        Obj(None)
    }
}

impl<T> Obj<T> {
    pub fn into_inner(self) -> Option<T> {
        self.0
    }

    pub fn as_ref(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjVisitor<T>(PhantomData<T>);

        impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjVisitor<T> {
            type Value = Obj<T>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Obj(Some(t)))
            }

            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Obj(None))
            }

            absent_unless_handled!(Obj(None));
        }

        deserializer.deserialize_any(ObjVisitor(PhantomData))
    }
}

/// What one line of a JSON-lines output is.
pub(crate) enum Line<'a> {
    /// A candidate JSON object (trimmed).
    Object(&'a str),
    /// Blank, or CLI noise that is not an event (banners, warnings): skipped.
    Skip,
}

/// Sorts a line: only lines that start with `{` can be events. Anything else is what the
/// CLI printed around its events (a warning, a banner), never the model's text.
pub(crate) fn classify(line: &str) -> Line<'_> {
    let trimmed = line.trim();
    if trimmed.starts_with('{') {
        Line::Object(trimmed)
    } else {
        if !trimmed.is_empty() {
            tracing::debug!(line = %excerpt(trimmed), "skipping a non-JSON line");
        }
        Line::Skip
    }
}

/// The event for a `{` line that could not be read as the event it should be.
fn malformed(line: &str, error: &serde_json::Error, at_end: bool) -> Event {
    let reason = match error.classify() {
        Category::Eof if at_end => "incomplete JSON line at end of output".to_owned(),
        Category::Syntax | Category::Eof | Category::Io => format!("invalid JSON: {error}"),
        // Valid JSON, but a field we read has another type than the CLI documents.
        Category::Data => format!("unexpected event shape: {error}"),
    };
    Event::Malformed {
        reason,
        raw: excerpt(line),
    }
}

/// The event for a line longer than [`super::lines::MAX_LINE`].
pub(crate) fn too_long(head: &str, len: usize) -> Event {
    Event::Malformed {
        reason: format!(
            "line of {len} bytes is longer than the {} byte limit",
            super::lines::MAX_LINE
        ),
        raw: excerpt(head),
    }
}

/// One JSON-lines event: the line parsed into `T`, or `None` after reporting why not
/// (over-long lines and malformed objects become events; blank lines and noise are
/// skipped).
pub(crate) fn parse_event<'l, T: serde::Deserialize<'l>>(
    item: &'l LineItem<'_>,
    at_end: bool,
    sink: &mut Sink,
    out: &mut Vec<Event>,
) -> Option<T> {
    let line = line_text(item, out)?;
    let Line::Object(json) = classify(line) else {
        return None;
    };
    parse_object(json, at_end, sink, out)
}

/// A `{` line parsed into `T`, or `None` after reporting it as malformed.
pub(crate) fn parse_object<'l, T: serde::Deserialize<'l>>(
    json: &'l str,
    at_end: bool,
    sink: &mut Sink,
    out: &mut Vec<Event>,
) -> Option<T> {
    match serde_json::from_str::<T>(json) {
        Ok(event) => Some(event),
        Err(error) => {
            sink.other(malformed(json, &error, at_end), out);
            None
        }
    }
}

/// Turns a [`LineItem`] into the line to parse, or pushes the event for an over-long line.
pub(crate) fn line_text<'l>(item: &'l LineItem<'_>, out: &mut Vec<Event>) -> Option<&'l str> {
    match item {
        LineItem::Line(line) => Some(line),
        LineItem::TooLong { head, len } => {
            out.push(too_long(head, *len));
            None
        }
    }
}

/// Emits events while keeping the contract's rules: no `TextEnd` without text before it,
/// never two `TextEnd` in a row, any other event ends the open text block, the same error
/// is not reported twice in a row, and each session id is announced once. The decoders
/// emit through one, and so does anything else that makes events for the [`crate::Interceptor`]
/// (the protocol adapters of a CLI kept over JSON-RPC, [`crate::Interceptor::feed_events`]).
#[derive(Debug, Default)]
pub struct Sink {
    /// Text was emitted since the last `TextEnd`.
    text_open: bool,
    /// Any assistant text was emitted in this run.
    any_text: bool,
    /// The last event pushed was this error.
    last_error: Option<String>,
    sessions: Vec<String>,
}

impl Sink {
    /// A piece of the assistant's text (an empty piece is none).
    pub fn text(&mut self, text: &str, out: &mut Vec<Event>) {
        if text.is_empty() {
            return;
        }
        self.text_open = true;
        self.any_text = true;
        self.last_error = None;
        out.push(Event::Text(text.to_owned()));
    }

    /// Ends the open text block, if any.
    pub fn end_text(&mut self, out: &mut Vec<Event>) {
        if self.text_open {
            self.text_open = false;
            self.last_error = None;
            out.push(Event::TextEnd);
        }
    }

    /// Pushes an event that is neither text nor an error; it ends the open text block.
    pub fn push(&mut self, event: Event, out: &mut Vec<Event>) {
        self.end_text(out);
        self.last_error = None;
        out.push(event);
    }

    /// Pushes an event that says nothing about the assistant's text (a malformed line):
    /// the open text block stays open.
    pub fn other(&mut self, event: Event, out: &mut Vec<Event>) {
        self.last_error = None;
        out.push(event);
    }

    /// An error; it ends the open text block, and the same error twice in a row is one.
    pub fn error(&mut self, message: &str, out: &mut Vec<Event>) {
        self.end_text(out);
        if self.last_error.as_deref() == Some(message) {
            tracing::debug!(message, "skipping a repeated error");
            return;
        }
        self.last_error = Some(message.to_owned());
        out.push(Event::Error(message.to_owned()));
    }

    /// Announces a session, once per distinct id.
    pub fn session(&mut self, id: &str, model: Option<&str>, out: &mut Vec<Event>) {
        if id.is_empty() || self.sessions.iter().any(|seen| seen == id) {
            return;
        }
        self.sessions.push(id.to_owned());
        self.push(
            Event::Session {
                id: id.to_owned(),
                model: model.map(str::to_owned),
            },
            out,
        );
    }

    /// Whether any assistant text was emitted.
    pub fn any_text(&self) -> bool {
        self.any_text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Probe<'a> {
        #[serde(borrow)]
        s: Str<'a>,
        o: Obj<Inner>,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    struct Inner {
        n: u32,
    }

    #[test]
    fn str_borrows_plain_strings_and_owns_escaped_ones() {
        let plain: Probe = serde_json::from_str(r#"{"s":"abc"}"#).unwrap();
        assert!(matches!(plain.s, Str(Some(Cow::Borrowed("abc")))));
        let escaped: Probe = serde_json::from_str(r#"{"s":"a\nb"}"#).unwrap();
        assert_eq!(escaped.s.as_str(), "a\nb");
    }

    #[test]
    fn fields_of_another_shape_read_as_absent() {
        for json in [
            r#"{}"#,
            r#"{"s":null,"o":null}"#,
            r#"{"s":{"x":[1,{"y":2}]},"o":"text"}"#,
            r#"{"s":[1,2],"o":[{"n":1}]}"#,
            r#"{"s":1.5,"o":true}"#,
            r#"{"s":-3,"o":7}"#,
        ] {
            let probe: Probe = serde_json::from_str(json).unwrap();
            assert_eq!(probe.s.get(), None, "{json}");
            assert_eq!(probe.o.into_inner(), None, "{json}");
        }
        let probe: Probe = serde_json::from_str(r#"{"o":{"n":3,"extra":[]}}"#).unwrap();
        assert_eq!(probe.o.into_inner(), Some(Inner { n: 3 }));
    }

    #[test]
    fn sink_keeps_text_end_and_error_rules() {
        let mut sink = Sink::default();
        let mut out = Vec::new();
        sink.end_text(&mut out);
        sink.text("a", &mut out);
        sink.text("", &mut out);
        sink.end_text(&mut out);
        sink.end_text(&mut out);
        sink.error("e", &mut out);
        sink.error("e", &mut out);
        sink.session("s", None, &mut out);
        sink.session("s", Some("m"), &mut out);
        sink.error("e", &mut out);
        assert_eq!(
            out,
            [
                Event::Text("a".into()),
                Event::TextEnd,
                Event::Error("e".into()),
                Event::Session {
                    id: "s".into(),
                    model: None
                },
                Event::Error("e".into()),
            ]
        );
    }
}
