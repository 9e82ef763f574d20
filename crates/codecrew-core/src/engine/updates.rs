//! What a run says, as one stream: every job's events and answers as they come, then
//! what the thread could not keep. A command's run ([`Run`](super::Run)) and a
//! conversation's line ([`Line`](super::Line)) are read the same way, one loop over
//! [`Updates::next`]; the engine has already recorded each update when it comes (the
//! jobs' logs write as the jobs run), so a front end only shows them.

use tokio::sync::mpsc;

use super::ThreadSaver;
use crate::session::{EventSender, JobEvent, JobReport};

/// What a run says next.
#[derive(Debug)]
pub enum Update {
    /// One of the job's events (text, a tool call, a sub-agent's event), as it happens.
    Event(usize, JobEvent),
    /// The job's answer is final (its CLI may still be shutting down).
    Answer(usize, Box<JobReport>),
    /// After every answer: an answer the thread could not keep (the answer was given,
    /// but going on with the thread will not have it). The error, as text.
    Unsaved(String),
}

/// Where a run's jobs send their events and answers.
pub(crate) type AnswerSender = mpsc::UnboundedSender<(usize, JobReport)>;

/// The receiving end of a run's jobs: their events, their answers, then the thread's
/// saves.
pub(crate) struct Updates {
    events: mpsc::UnboundedReceiver<(usize, JobEvent)>,
    answers: mpsc::UnboundedReceiver<(usize, JobReport)>,
    /// Answers still to come; 0 also once every job has ended without.
    waiting: usize,
    thread: Option<ThreadSaver>,
}

impl Updates {
    /// The stream of `expected` jobs' updates, and where the jobs send them; after the
    /// answers, the saves of `thread` are awaited.
    pub(crate) fn new(
        expected: usize,
        thread: Option<ThreadSaver>,
    ) -> (Updates, EventSender, AnswerSender) {
        let (events_tx, events) = mpsc::unbounded_channel();
        let (answers_tx, answers) = mpsc::unbounded_channel();
        let updates = Updates {
            events,
            answers,
            waiting: expected,
            thread,
        };
        (updates, events_tx, answers_tx)
    }

    /// The next update; None once every job has answered (or ended without: it stopped
    /// abnormally, or its worker is gone) and every save is done. A job's events come
    /// before its answer. Cancel-safe.
    pub(crate) async fn next(&mut self) -> Option<Update> {
        while self.waiting > 0 {
            tokio::select! {
                biased;
                Some((index, event)) = self.events.recv() => {
                    return Some(Update::Event(index, event));
                }
                answer = self.answers.recv() => match answer {
                    Some((index, report)) => {
                        self.waiting -= 1;
                        return Some(Update::Answer(index, Box::new(report)));
                    }
                    // Every job ended, some without an answer: nothing more will come.
                    None => self.waiting = 0,
                },
            }
        }
        // The events a job sent before it ended without an answer.
        if let Ok((index, event)) = self.events.try_recv() {
            return Some(Update::Event(index, event));
        }
        let thread = self.thread.as_ref()?;
        thread.next_failed().await.map(Update::Unsaved)
    }
}
