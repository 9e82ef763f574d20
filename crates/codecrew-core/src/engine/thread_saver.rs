//! A thread's exchanges, saved as each job answers.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::task::JoinSet;

use crate::session::JobReport;
use crate::thread::{self, Exchange, ThreadError, ThreadName, ThreadStore};

/// Saves each successful answer in a thread as soon as it comes, so that an interrupt
/// later keeps it. The store's lock may wait for another process, so each save runs off
/// the runtime; [`ThreadSaver::next_failed`] says which failed. Clones share the saves: each
/// job's log holds one, and whoever reads the run's updates awaits them all.
#[derive(Clone)]
pub struct ThreadSaver {
    store: ThreadStore,
    name: ThreadName,
    saves: Arc<Mutex<JoinSet<Result<(), ThreadError>>>>,
}

impl ThreadSaver {
    pub fn new(store: ThreadStore, name: ThreadName) -> ThreadSaver {
        ThreadSaver {
            store,
            name,
            saves: Arc::default(),
        }
    }

    pub fn name(&self) -> &ThreadName {
        &self.name
    }

    pub fn store(&self) -> &ThreadStore {
        &self.store
    }

    /// Saves the exchange of `task` and its answer; a failed job is not saved (its
    /// session may not hold the task).
    pub fn save(&self, task: &str, report: &JobReport) {
        if !report.success {
            return;
        }
        let exchange = Exchange::from_report(task, report, thread::now());
        let (store, name) = (self.store.clone(), self.name.clone());
        self.saves
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .spawn_blocking(move || {
                store
                    .update(&name, thread::now(), |thread| thread.add(exchange))
                    .map(drop)
            });
    }

    /// Waits for the saves so far until one fails: its error, as text; None once every
    /// save is done. Cancel-safe: a save not awaited yet stays to be awaited.
    pub async fn next_failed(&self) -> Option<String> {
        loop {
            let saved = std::future::poll_fn(|context| {
                self.saves
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .poll_join_next(context)
            })
            .await?;
            match saved {
                Ok(Ok(())) => {}
                Ok(Err(error)) => return Some(error.to_string()),
                Err(error) => return Some(error.to_string()),
            }
        }
    }

    /// Waits for every save so far; the errors of those that failed, as text.
    pub async fn settle(&self) -> Vec<String> {
        let mut errors = Vec::new();
        while let Some(error) = self.next_failed().await {
            errors.push(error);
        }
        errors
    }
}
