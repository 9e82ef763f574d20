//! What the CLI layer has to tell the user (a held file put back, a kernel without
//! Landlock). It prints nothing itself: the front end says where warnings go
//! ([`set_warning_sink`], the console in the binary); until it does, they are logged.

use std::sync::OnceLock;

type Sink = Box<dyn Fn(&str) + Send + Sync>;

static WARNINGS: OnceLock<Sink> = OnceLock::new();

/// Where this process's warnings go from now on; only the first call counts.
pub fn set_warning_sink(sink: impl Fn(&str) + Send + Sync + 'static) {
    let _ = WARNINGS.set(Box::new(sink));
}

/// Says `text` (one line of words composed by codecrew, holding names from files made
/// inert by the sink) as a warning.
pub fn warn(text: &str) {
    match WARNINGS.get() {
        Some(sink) => sink(text),
        None => tracing::warn!("{text}"),
    }
}
