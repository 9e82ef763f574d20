//! What a `codecrew mcp` server admits at once: agent runs (each a CLI, with its own memory
//! and a model's time) run a few at a time and queue up to a bound; beyond it a call is
//! refused at once with a JSON-RPC error that says why. And the count of calls in flight,
//! which a shutdown waits on.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::ErrorData;
use rmcp::model::ErrorCode;
use serde_json::json;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

/// The JSON-RPC error code of a call refused because the server is at a limit (in the
/// range JSON-RPC leaves to servers).
pub const BUSY: ErrorCode = ErrorCode(-32001);

/// Agent runs admitted: `running` at once, and `queued` more waiting for a place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentLimits {
    pub running: usize,
    pub queued: usize,
}

impl Default for AgentLimits {
    fn default() -> Self {
        AgentLimits {
            running: 4,
            queued: 16,
        }
    }
}

/// The places of agent runs.
#[derive(Debug, Clone)]
pub struct AgentSlots {
    limits: AgentLimits,
    /// Runs admitted, running or queued: at most `running + queued`.
    admitted: Arc<Semaphore>,
    /// Runs running.
    running: Arc<Semaphore>,
}

/// One admitted run's place; dropping it frees the place.
#[derive(Debug)]
pub struct Admitted {
    _admitted: OwnedSemaphorePermit,
    running: Arc<Semaphore>,
}

/// A run's place to run; held while it runs.
#[derive(Debug)]
pub struct Running {
    _running: OwnedSemaphorePermit,
}

impl AgentSlots {
    pub fn new(limits: AgentLimits) -> Self {
        let running = limits.running.max(1);
        AgentSlots {
            limits: AgentLimits {
                running,
                queued: limits.queued,
            },
            admitted: Arc::new(Semaphore::new(running + limits.queued)),
            running: Arc::new(Semaphore::new(running)),
        }
    }

    /// A place in the queue, or the error a client gets when the queue is full.
    pub fn admit(&self) -> Result<Admitted, ErrorData> {
        let admitted = self.admitted.clone().try_acquire_owned().map_err(|_| {
            ErrorData::new(
                BUSY,
                format!(
                    "codecrew is running {} agent runs and has {} more waiting, its limits \
                     (--max-agent-runs, --agent-queue); try again when one has finished",
                    self.limits.running, self.limits.queued
                ),
                Some(json!({
                    "limit": "agent_runs",
                    "running": self.limits.running,
                    "queued": self.limits.queued,
                })),
            )
        })?;
        Ok(Admitted {
            _admitted: admitted,
            running: self.running.clone(),
        })
    }
}

impl Admitted {
    /// Waits for a place to run. Dropping the future leaves the queue.
    pub async fn run(&self) -> Option<Running> {
        let running = self.running.clone().acquire_owned().await.ok()?;
        Some(Running { _running: running })
    }
}

/// The calls in flight on a server.
#[derive(Debug, Default)]
pub struct InFlight {
    count: AtomicUsize,
    emptied: Notify,
}

/// One call in flight, until dropped.
#[derive(Debug)]
pub struct Call {
    in_flight: Arc<InFlight>,
}

impl InFlight {
    pub fn start(self: &Arc<Self>) -> Call {
        self.count.fetch_add(1, Ordering::SeqCst);
        Call {
            in_flight: self.clone(),
        }
    }

    pub fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// Resolves once no call is in flight.
    pub async fn idle(&self) {
        loop {
            let idle = self.emptied.notified();
            tokio::pin!(idle);
            // Registered before the count is read, so a call ending in between wakes it.
            idle.as_mut().enable();
            if self.count() == 0 {
                return;
            }
            idle.await;
        }
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        if self.in_flight.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.in_flight.emptied.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn runs_beyond_the_limit_wait_and_beyond_the_queue_are_refused() {
        let slots = AgentSlots::new(AgentLimits {
            running: 1,
            queued: 1,
        });
        let first = slots.admit().unwrap();
        let running = first.run().await.unwrap();
        let second = slots.admit().unwrap();
        let refused = slots.admit().unwrap_err();
        assert_eq!(refused.code, BUSY);
        assert!(refused.message.contains("--max-agent-runs"), "{refused:?}");
        // The queued run waits until the first one ends.
        let waiting = tokio::time::timeout(Duration::from_millis(50), second.run()).await;
        assert!(waiting.is_err(), "the second run must wait");
        drop(running);
        drop(first);
        let second_running = second.run().await;
        assert!(second_running.is_some());
        // Its place in the queue is free again.
        let third = slots.admit();
        assert!(third.is_ok());
    }

    #[tokio::test]
    async fn waiting_for_idle_ends_when_the_last_call_ends() {
        let in_flight = Arc::new(InFlight::default());
        let idle = |limit| tokio::time::timeout(limit, in_flight.idle());
        assert!(idle(Duration::from_millis(1)).await.is_ok());
        let call = in_flight.start();
        assert!(idle(Duration::from_millis(20)).await.is_err());
        let waiter = {
            let in_flight = in_flight.clone();
            tokio::spawn(async move {
                tokio::time::timeout(Duration::from_secs(5), in_flight.idle()).await
            })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(call);
        assert!(waiter.await.unwrap().is_ok());
        assert_eq!(in_flight.count(), 0);
    }
}
