//! Which of the server's sessions are busy, and since when the others have been idle, so
//! that at `--max-sessions` a new client takes the place of the session idle longest
//! instead of being refused. A client that leaves without `DELETE /mcp` (killed, crashed,
//! or one that never sends it: the specification only says clients should) would
//! otherwise hold its place until rmcp's idle expiry, five minutes later, and 32 such
//! clients would lock every new one out for that long.
//!
//! rmcp keeps this state where nobody else can read it, but every request passes the gate
//! and every response body is watched there (see `disconnect`): a request that carries a
//! session's id marks it busy ([`Busy`]) until its response has ended or was dropped.
//! That covers a call in flight (its answer streams until the call is done) and a `GET`
//! stream (open as long as its client listens). A client that is killed or crashes
//! closes its connections, hyper drops their bodies, and its session turns idle.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rmcp::transport::streamable_http_server::session::SessionId;
use tokio::sync::Notify;
use tokio::sync::futures::Notified;

/// The sessions the gate has seen opened, and what they are doing.
#[derive(Debug, Default)]
pub struct Occupancy {
    sessions: Mutex<HashMap<SessionId, Session>>,
    /// Signalled when a session turns idle or is closed, for an `initialize` waiting at
    /// the cap.
    freed: Notify,
}

#[derive(Debug)]
struct Session {
    /// Who opened it, for the log when it is closed to make room.
    peer: SocketAddr,
    /// Responses to its requests not yet ended.
    open: usize,
    /// Since when no response has been open (or since it was opened).
    idle_since: Instant,
    /// Chosen to make room and being closed: its requests are answered "not found".
    closing: bool,
}

/// What a request that carries a session's id finds.
#[derive(Debug)]
pub enum Entry {
    /// A session in use: busy until this mark is dropped.
    Busy(Busy),
    /// A session being closed to make room: for its client, it is gone.
    Closing,
    /// Not one the gate knows (ended, or never opened): rmcp answers.
    Unknown,
}

/// A session's mark "busy", held by one response until it ends or is dropped.
#[derive(Debug)]
pub struct Busy {
    occupancy: Arc<Occupancy>,
    id: SessionId,
}

/// The session chosen to make room.
#[derive(Debug)]
pub struct Chosen {
    pub id: SessionId,
    pub peer: SocketAddr,
    pub idle: Duration,
}

impl Occupancy {
    /// A poisoned lock still holds a consistent table: every change is one statement.
    fn table(&self) -> MutexGuard<'_, HashMap<SessionId, Session>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A session `peer` just opened, idle until its first request.
    pub fn opened(&self, id: SessionId, peer: SocketAddr, now: Instant) {
        let session = Session {
            peer,
            open: 0,
            idle_since: now,
            closing: false,
        };
        self.table().insert(id, session);
    }

    /// A request for session `id` begins.
    pub fn enter(self: &Arc<Self>, id: &str) -> Entry {
        let mut table = self.table();
        let Some((key, session)) = table.get_key_value(id) else {
            return Entry::Unknown;
        };
        if session.closing {
            return Entry::Closing;
        }
        let id = key.clone();
        if let Some(session) = table.get_mut(id.as_ref()) {
            session.open += 1;
        }
        Entry::Busy(Busy {
            occupancy: self.clone(),
            id,
        })
    }

    /// Session `id` is gone (closed by its client, or to make room).
    pub fn closed(&self, id: &str) {
        self.table().remove(id);
        self.freed.notify_waiters();
    }

    /// Of the sessions rmcp holds (`live`), the one idle longest, marked as closing so
    /// that no request starts on it and no other `initialize` chooses it too. None when
    /// every one is busy (or still opening, unknown to the gate so far).
    pub fn choose_idle_longest(&self, live: &HashSet<SessionId>, now: Instant) -> Option<Chosen> {
        let mut table = self.table();
        // Sessions rmcp ended on its own (idle expiry) leave the table here.
        table.retain(|id, _| live.contains(id));
        let (id, session) = table
            .iter_mut()
            .filter(|(_, session)| session.open == 0 && !session.closing)
            .min_by_key(|(_, session)| session.idle_since)?;
        session.closing = true;
        Some(Chosen {
            id: id.clone(),
            peer: session.peer,
            idle: now.saturating_duration_since(session.idle_since),
        })
    }

    /// Resolves when a session turns idle or is closed after this call (enable it
    /// before looking, so that a change in between is not missed).
    pub fn freed(&self) -> Notified<'_> {
        self.freed.notified()
    }

    fn ended(&self, id: &str) {
        let mut table = self.table();
        let Some(session) = table.get_mut(id) else {
            return;
        };
        session.open = session.open.saturating_sub(1);
        if session.open == 0 {
            session.idle_since = Instant::now();
            drop(table);
            self.freed.notify_waiters();
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.occupancy.ended(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PEER: SocketAddr = SocketAddr::V4(std::net::SocketAddrV4::new(
        std::net::Ipv4Addr::LOCALHOST,
        9,
    ));

    fn id(name: &str) -> SessionId {
        SessionId::from(name)
    }

    /// Sessions `a`, `b`, `c` opened a second apart, in that order.
    fn three(start: Instant) -> (Arc<Occupancy>, HashSet<SessionId>) {
        let occupancy = Arc::new(Occupancy::default());
        for (i, name) in ["a", "b", "c"].into_iter().enumerate() {
            occupancy.opened(id(name), PEER, start + Duration::from_secs(i as u64));
        }
        (occupancy, ["a", "b", "c"].into_iter().map(id).collect())
    }

    #[test]
    fn the_session_idle_longest_is_chosen_and_only_once() {
        let start = Instant::now();
        let (occupancy, live) = three(start);
        let now = start + Duration::from_secs(10);
        let first = occupancy.choose_idle_longest(&live, now).unwrap();
        assert_eq!(
            (first.id.as_ref(), first.idle),
            ("a", Duration::from_secs(10))
        );
        // Chosen, it is closing: not chosen again, and its requests find it gone.
        let second = occupancy.choose_idle_longest(&live, now).unwrap();
        assert_eq!(second.id.as_ref(), "b");
        assert!(matches!(occupancy.enter("a"), Entry::Closing));
        occupancy.closed("a");
        assert!(matches!(occupancy.enter("a"), Entry::Unknown));
    }

    #[test]
    fn a_busy_session_is_not_chosen_until_its_last_response_ends() {
        let start = Instant::now();
        let (occupancy, live) = three(start);
        let call = occupancy.enter("a");
        let stream = occupancy.enter("b");
        let also_b = occupancy.enter("b");
        let later = start + Duration::from_secs(60);
        let chosen = occupancy.choose_idle_longest(&live, later).unwrap();
        assert_eq!(chosen.id.as_ref(), "c");
        assert!(occupancy.choose_idle_longest(&live, later).is_none());
        drop(stream);
        assert!(occupancy.choose_idle_longest(&live, later).is_none());
        drop(also_b);
        drop(call);
        // Both idle now, `b` since before `a`.
        let chosen = occupancy
            .choose_idle_longest(&live, Instant::now())
            .unwrap();
        assert_eq!(chosen.id.as_ref(), "b");
    }

    #[test]
    fn sessions_rmcp_ended_and_sessions_still_opening_are_not_chosen() {
        let start = Instant::now();
        let (occupancy, _) = three(start);
        // `a` expired in rmcp; `d` is being opened (rmcp has it, the gate not yet).
        let live: HashSet<SessionId> = ["b", "d"].into_iter().map(id).collect();
        let _busy = occupancy.enter("b");
        assert!(occupancy.choose_idle_longest(&live, start).is_none());
        assert!(matches!(occupancy.enter("a"), Entry::Unknown));
    }

    #[tokio::test]
    async fn a_waiter_hears_when_a_session_turns_idle() {
        let (occupancy, _) = three(Instant::now());
        let busy = occupancy.enter("a");
        let freed = occupancy.freed();
        tokio::pin!(freed);
        freed.as_mut().enable();
        drop(busy);
        tokio::time::timeout(Duration::from_secs(1), freed)
            .await
            .unwrap();
    }
}
