//! What the lower layers have to tell the user (a held file put back, a kernel without
//! Landlock, a project's configuration left out). They print nothing themselves: the
//! front end says where notices go ([`set_sink`], the console in the binary); until it
//! does, they are logged.

use std::sync::OnceLock;

/// How much a notice matters: a warning is something that went wrong or is unsafe, a
/// note something the user should know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Warning,
    Note,
}

type Sink = Box<dyn Fn(Level, &str) + Send + Sync>;

static SINK: OnceLock<Sink> = OnceLock::new();

/// Where this process's notices go from now on; only the first call counts.
pub fn set_sink(sink: impl Fn(Level, &str) + Send + Sync + 'static) {
    let _ = SINK.set(Box::new(sink));
}

/// Says `text` (one line of words composed by codecrew, holding names from files made
/// inert by the sink) as a warning.
pub fn warn(text: &str) {
    say(Level::Warning, text);
}

/// Says `text` as a note.
pub fn note(text: &str) {
    say(Level::Note, text);
}

fn say(level: Level, text: &str) {
    match (SINK.get(), level) {
        (Some(sink), level) => sink(level, text),
        (None, Level::Warning) => tracing::warn!("{text}"),
        (None, Level::Note) => tracing::info!("{text}"),
    }
}
