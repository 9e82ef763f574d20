//! Starting a CLI whose processes share what the first of them sets up on a fresh data
//! folder ([`crate::Cli::shares_start_up`]): opencode makes and migrates its SQLite
//! database when a process first opens it, and two processes doing so at once collide,
//! one failing before it answers ("database is locked", or a `CREATE TABLE` of a table
//! the other has just made). With six started together by one codecrew on a fresh
//! folder, one or more failed in four tries of five.
//!
//! Two measures, each for what the other cannot reach:
//!
//! - In one codecrew process, such a CLI's first start goes alone ([`Gates`]): the
//!   others wait until it is past its set-up (it has passed something on: for an ACP
//!   agent, its session is open), then start together on a folder already set up.
//! - Between codecrew processes nothing is shared, and a newer CLI may migrate a folder
//!   an older one set up: a start that failed so before it passed anything on is made
//!   again ([`again`]), at most [`RETRIES`] times, after a short pause ([`pause`]). It
//!   had shown nothing, so the retry shows nothing either, but in the debug log.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{OwnedMutexGuard, watch};

use super::process::Ending;

/// How many times a start that collided is made again.
pub const RETRIES: u32 = 2;

/// The pause before a retry, times the retry's number; as much again at most, drawn at
/// random, so that the processes that collided do not start together once more.
const PAUSE: Duration = Duration::from_millis(250);

/// How long a start waits for the first to get past its set-up before it goes anyway
/// (a first start that hangs must not hold the others for its whole turn; a start that
/// then collides is made again).
const WAIT_AT_MOST: Duration = Duration::from_secs(20);

/// The gates of this codecrew process, one per CLI.
pub static GATES: LazyLock<Gates> = LazyLock::new(Gates::default);

/// Per CLI (its program's name): a lock the first start holds until it is past its
/// set-up, over whether one has been.
#[derive(Default)]
pub struct Gates(Mutex<HashMap<String, Arc<tokio::sync::Mutex<bool>>>>);

impl Gates {
    /// A place at the gate of `cli`: at once when a start of it is already past its
    /// set-up (or the wait passed `WAIT_AT_MOST`, or the run is cancelled), else once
    /// the start ahead is past it or failed (then this one goes first).
    pub async fn enter(&self, cli: &str, cancel: watch::Receiver<bool>) -> Pass {
        self.enter_within(cli, cancel, WAIT_AT_MOST).await
    }

    async fn enter_within(
        &self,
        cli: &str,
        mut cancel: watch::Receiver<bool>,
        wait: Duration,
    ) -> Pass {
        let gate = {
            let mut gates = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(gates.entry(cli.to_owned()).or_default())
        };
        let guard = tokio::select! {
            guard = gate.lock_owned() => guard,
            () = tokio::time::sleep(wait) => {
                tracing::debug!(cli, "the first start is not past its set-up yet; starting anyway");
                return Pass(None);
            }
            () = cancelled(&mut cancel) => return Pass(None),
        };
        Pass((!*guard).then_some(guard))
    }
}

/// A start's place at its CLI's gate: the first start's holds the gate until
/// [`Pass::through`]; dropped before, the next start waiting goes first.
#[derive(Default)]
pub struct Pass(Option<OwnedMutexGuard<bool>>);

impl Pass {
    /// The start is past its set-up: every start waiting, and every later one, goes.
    pub fn through(&mut self) {
        if let Some(mut guard) = self.0.take() {
            *guard = true;
        }
    }
}

/// Whether a start that ended with `ending`, `retries` retries made so far, is made
/// again: it failed before it passed anything on (`passed_on`), with what its CLI
/// recognises as a collision at start-up (`collided`).
pub fn again(collided: bool, passed_on: bool, ending: &Ending, retries: u32) -> bool {
    let failed = matches!(ending, Ending::Exited(code) if *code != 0);
    collided && failed && !passed_on && retries < RETRIES
}

/// Waits before retry number `retry` (`PAUSE`); false when the run was cancelled
/// meanwhile.
pub async fn pause(retry: u32, mut cancel: watch::Receiver<bool>) -> bool {
    let base = PAUSE.saturating_mul(retry);
    let jitter = PAUSE.mul_f64(random_fraction());
    tokio::select! {
        () = tokio::time::sleep(base + jitter) => true,
        () = cancelled(&mut cancel) => false,
    }
}

/// Returns once the run is cancelled; never when its canceller is gone, which cancels
/// nothing.
async fn cancelled(cancel: &mut watch::Receiver<bool>) {
    if cancel.wait_for(|cancelled| *cancelled).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// A number in [0, 1), from the random keys std seeds its hash maps with.
fn random_fraction() -> f64 {
    let bits = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    // The top 53 bits: every value an f64 holds exactly.
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run whose canceller is gone: nothing cancels it.
    fn never_cancelled() -> watch::Receiver<bool> {
        watch::channel(false).1
    }

    /// Whether `pass` is had within 100 ms.
    async fn had(entering: impl std::future::Future<Output = Pass>) -> Option<Pass> {
        tokio::time::timeout(Duration::from_millis(100), entering)
            .await
            .ok()
    }

    #[tokio::test]
    async fn the_first_start_goes_alone_until_it_is_through() {
        let gates = Gates::default();
        let mut first = gates.enter("opencode", never_cancelled()).await;
        assert!(first.0.is_some(), "the first start holds the gate");
        // Another CLI has a gate of its own.
        assert!(
            had(gates.enter("gemini", never_cancelled()))
                .await
                .is_some()
        );
        let waiting = gates.enter("opencode", never_cancelled());
        tokio::pin!(waiting);
        assert!(had(&mut waiting).await.is_none(), "the second waits");
        first.through();
        let second = had(&mut waiting).await.expect("through: the second goes");
        assert!(second.0.is_none(), "and holds nothing");
        let third = had(gates.enter("opencode", never_cancelled())).await;
        assert!(third.is_some_and(|pass| pass.0.is_none()));
    }

    #[tokio::test]
    async fn a_first_start_that_fails_leaves_the_next_to_go_first() {
        let gates = Gates::default();
        let first = gates.enter("opencode", never_cancelled()).await;
        let waiting = gates.enter("opencode", never_cancelled());
        tokio::pin!(waiting);
        assert!(had(&mut waiting).await.is_none());
        drop(first);
        let mut second = had(&mut waiting).await.expect("the failed first gave way");
        assert!(second.0.is_some(), "the next start is now the first");
        second.through();
        assert!(gates.enter("opencode", never_cancelled()).await.0.is_none());
    }

    #[tokio::test]
    async fn a_wait_ends_at_its_limit_and_at_cancel() {
        let gates = Gates::default();
        let _first = gates.enter("opencode", never_cancelled()).await;
        let late = gates
            .enter_within("opencode", never_cancelled(), Duration::from_millis(50))
            .await;
        assert!(late.0.is_none(), "went without the gate");
        let (cancel, cancelled) = watch::channel(false);
        let waiting = gates.enter("opencode", cancelled);
        tokio::pin!(waiting);
        assert!(had(&mut waiting).await.is_none());
        cancel.send(true).unwrap();
        assert!(had(&mut waiting).await.is_some_and(|pass| pass.0.is_none()));
    }

    #[test]
    fn only_a_collision_before_anything_was_passed_on_is_started_again() {
        let failed = Ending::Exited(1);
        assert!(again(true, false, &failed, 0));
        assert!(again(true, false, &failed, RETRIES - 1));
        assert!(!again(true, false, &failed, RETRIES), "a couple of retries");
        assert!(!again(false, false, &failed, 0), "another failure");
        assert!(!again(true, true, &failed, 0), "something was shown");
        for ending in [
            Ending::Exited(0),
            Ending::TurnEnded,
            Ending::TimedOut,
            Ending::Cancelled,
            Ending::Flooded,
            Ending::Signalled(9),
        ] {
            assert!(!again(true, false, &ending, 0), "{ending:?}");
        }
    }

    #[tokio::test]
    async fn the_pause_grows_with_the_retry_and_ends_at_cancel() {
        let started = std::time::Instant::now();
        assert!(pause(1, never_cancelled()).await);
        let waited = started.elapsed();
        assert!(waited >= PAUSE && waited < PAUSE * 3, "{waited:?}");
        let (cancel, cancelled) = watch::channel(true);
        let started = std::time::Instant::now();
        assert!(!pause(RETRIES, cancelled).await);
        assert!(started.elapsed() < PAUSE);
        drop(cancel);
    }

    #[test]
    fn the_random_fraction_stays_below_one() {
        for _ in 0..1000 {
            let fraction = random_fraction();
            assert!((0.0..1.0).contains(&fraction), "{fraction}");
        }
    }
}
