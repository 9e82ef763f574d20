//! A client that drops its connection before its answer has left stops its call, as if it
//! had cancelled it: an agent run's CLI group is killed and what was held is put back,
//! instead of a model working on for nobody.
//!
//! The gate puts a [`Disconnect`] token in each request's extensions (rmcp hands the
//! request's parts to the handler) and wraps the response body; hyper drops a body whose
//! connection is gone, and a body dropped before its end cancels the token.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::combinators::BoxBody;
use rmcp::RoleServer;
use rmcp::service::RequestContext;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::occupancy::Busy;
use crate::mcp_server::limits::Call;

/// Cancelled when the request's response was dropped before its end.
#[derive(Debug, Clone, Default)]
pub struct Disconnect(CancellationToken);

impl Disconnect {
    /// The body to send: `body`, which cancels this token if dropped unfinished, and
    /// keeps `held` until it is dropped.
    pub fn watch(&self, body: BoxBody<Bytes, Infallible>, held: Held) -> Watched {
        Watched {
            inner: body,
            guard: Some(self.0.clone().drop_guard()),
            _held: held,
        }
    }
}

/// What a response keeps for as long as it lasts (sent to its end, or dropped).
#[derive(Debug, Default)]
pub struct Held {
    /// Counts it among the answers a shutdown waits for (a POST's).
    _answer: Option<Call>,
    /// Keeps its session busy, so that no new client takes that session's place.
    _session: Option<Busy>,
}

impl Held {
    pub fn new(answer: Option<Call>, session: Option<Busy>) -> Self {
        Held {
            _answer: answer,
            _session: session,
        }
    }
}

/// A response body that tells when it was dropped before its end.
pub struct Watched {
    inner: BoxBody<Bytes, Infallible>,
    guard: Option<DropGuard>,
    _held: Held,
}

impl Body for Watched {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled
            && let Some(guard) = self.guard.take()
        {
            // Sent to its end: dropping it now is no disconnection.
            guard.disarm();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Resolves when the client of this call cancelled it or went away.
pub async fn abandoned(context: &RequestContext<RoleServer>) {
    let disconnect = context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Disconnect>())
        .map(|disconnect| disconnect.0.clone());
    match disconnect {
        Some(gone) => tokio::select! {
            _ = context.ct.cancelled() => {}
            _ = gone.cancelled() => {}
        },
        None => context.ct.cancelled().await,
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::{BodyExt, Full};

    use super::*;

    #[tokio::test]
    async fn a_body_dropped_before_its_end_cancels_and_a_finished_one_does_not() {
        let disconnect = Disconnect::default();
        let body = disconnect.watch(Full::new(Bytes::from("done")).boxed(), Held::default());
        let collected = body.collect().await.unwrap().to_bytes();
        assert_eq!(collected, "done");
        assert!(!disconnect.0.is_cancelled());

        let disconnect = Disconnect::default();
        let watched = disconnect.watch(Unfinished.boxed(), Held::default());
        drop(watched);
        assert!(disconnect.0.is_cancelled());
    }

    /// A body whose end never comes, like an SSE stream waiting for its answer.
    struct Unfinished;

    impl Body for Unfinished {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            Poll::Pending
        }
    }
}
