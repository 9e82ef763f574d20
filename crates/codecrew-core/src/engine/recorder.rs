//! A thread's exchanges, recorded as each job answers.

use tokio::task::JoinSet;

use crate::session::JobReport;
use crate::thread::{self, Exchange, ThreadError, ThreadName, ThreadStore};

/// Records each successful answer in a thread as soon as it comes, so that an interrupt
/// later keeps it. The store's lock may wait for another process, so each save runs off
/// the runtime; [`Recorder::settle`] says which failed.
pub struct Recorder {
    store: ThreadStore,
    name: ThreadName,
    saves: JoinSet<Result<(), ThreadError>>,
}

impl Recorder {
    pub fn new(store: ThreadStore, name: ThreadName) -> Recorder {
        Recorder {
            store,
            name,
            saves: JoinSet::new(),
        }
    }

    pub fn name(&self) -> &ThreadName {
        &self.name
    }

    pub fn store(&self) -> &ThreadStore {
        &self.store
    }

    /// Records the exchange of `task` and its answer; a failed job is not recorded (its
    /// session may not hold the task).
    pub fn record(&mut self, task: &str, report: &JobReport) {
        if !report.success {
            return;
        }
        let exchange = Exchange::from_report(task, report, thread::now());
        let (store, name) = (self.store.clone(), self.name.clone());
        self.saves.spawn_blocking(move || {
            store
                .update(&name, thread::now(), |thread| thread.record(exchange))
                .map(drop)
        });
    }

    /// Waits for every save so far; the errors of those that failed, as text.
    pub async fn settle(&mut self) -> Vec<String> {
        let mut errors = Vec::new();
        while let Some(saved) = self.saves.join_next().await {
            match saved {
                Ok(Ok(())) => {}
                Ok(Err(error)) => errors.push(error.to_string()),
                Err(error) => errors.push(error.to_string()),
            }
        }
        errors
    }
}
