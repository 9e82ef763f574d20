//! One agent of a chat: its CLI kept between the lines addressed to it.
//!
//! A worker is a task that owns the agent's [`JobRun`] and its [`Transport`], so the CLI
//! process the first line started serves every later line (a follow-up pays no CLI
//! start). Each line comes as a [`Request`]; its events go to that line's display, tagged
//! with the agent's place on the line, and its report comes back. Closing the worker
//! ends the CLI and puts back what its wall held; the conversation it reached comes back,
//! for a worker of another mode to go on from.

use std::time::Instant;

use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use crate::clis;
use crate::run::session::{Conversation, EventSender, JobEvent, JobReport, JobRun};

/// One line for the agent.
pub struct Request {
    pub task: String,
    /// Where the line's display wants this agent's events, and under which index.
    pub events: EventSender,
    pub index: usize,
    pub cancel: watch::Receiver<bool>,
    pub answer: oneshot::Sender<JobReport>,
}

/// A running agent of the chat.
pub struct Worker {
    requests: mpsc::UnboundedSender<Request>,
    task: JoinHandle<Conversation>,
}

impl Worker {
    /// Starts the agent of `run`, going on from `conversation`. Its CLI starts with the
    /// first request.
    pub fn start(run: JobRun, conversation: Conversation) -> Worker {
        let (requests, mut received) = mpsc::unbounded_channel::<Request>();
        let task = tokio::spawn(async move {
            let mut conversation = conversation;
            let program = clis::locate(&run.provider);
            let Some(program) = program else {
                while let Some(request) = received.recv().await {
                    let _ = request.answer.send(run.missing_cli(Instant::now()));
                }
                return conversation;
            };
            let mut transport = run.transport(&program);
            while let Some(request) = received.recv().await {
                let (own, mut events) = mpsc::unbounded_channel::<(usize, JobEvent)>();
                let (display, index) = (request.events.clone(), request.index);
                // The line's display knows this agent by its place on the line.
                let forward = tokio::spawn(async move {
                    while let Some((_, event)) = events.recv().await {
                        let _ = display.send((index, event));
                    }
                });
                let report = run
                    .run_task(
                        &request.task,
                        &mut conversation,
                        &mut transport,
                        &own,
                        request.cancel,
                    )
                    .await;
                drop(own);
                let _ = forward.await;
                let _ = request.answer.send(report);
            }
            transport.close().await;
            conversation
        });
        Worker { requests, task }
    }

    /// Hands the agent a line; its report comes on the request's `answer`. False when the
    /// worker is gone.
    pub fn send(&self, request: Request) -> bool {
        self.requests.send(request).is_ok()
    }

    /// Ends the agent's CLI (what its wall held is put back) and returns where its
    /// conversation stands.
    pub async fn close(self) -> Option<Conversation> {
        drop(self.requests);
        self.task.await.ok()
    }
}
