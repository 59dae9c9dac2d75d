//! The state behind every responder handed to a host callback (input handlers and the
//! authorization handler): answered once, in the callback or later from any thread.

use super::error::Failure;
use super::status::MCP_CANCELLED;
use crate::client::{CancelToken, HandlerError};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The callback is running and has neither answered nor deferred.
    InCallback,
    Deferred,
    Done,
}

type Answer<T> = Result<T, HandlerError>;

pub(crate) struct ResponderState<T> {
    answer: Mutex<(Phase, Option<oneshot::Sender<Answer<T>>>)>,
    cancel: CancelToken,
}

impl<T> ResponderState<T> {
    /// A fresh state (in its callback) and the receiver of its answer.
    pub fn new(cancel: CancelToken) -> (Arc<Self>, oneshot::Receiver<Answer<T>>) {
        let (tx, rx) = oneshot::channel();
        (
            Arc::new(ResponderState {
                answer: Mutex::new((Phase::InCallback, Some(tx))),
                cancel,
            }),
            rx,
        )
    }

    /// Records the answer; false when nobody waits for it any more.
    pub fn finish(&self, answer: Answer<T>) -> bool {
        let tx = {
            let mut guard = self.answer.lock().unwrap();
            guard.0 = Phase::Done;
            guard.1.take()
        };
        match tx {
            Some(tx) if !self.cancel.is_cancelled() => tx.send(answer).is_ok(),
            _ => false,
        }
    }

    /// `finish`, with the C status for an answer nobody wants any more.
    pub fn reply(&self, answer: Answer<T>) -> Result<(), Failure> {
        if self.finish(answer) {
            Ok(())
        } else {
            Err(Failure::new(
                MCP_CANCELLED,
                "the answer is no longer wanted (cancelled, timed out or closed)",
            ))
        }
    }

    /// Keeps the responder alive past its callback (only while the callback runs).
    pub fn defer(&self) {
        let mut guard = self.answer.lock().unwrap();
        if guard.0 == Phase::InCallback {
            guard.0 = Phase::Deferred;
        }
    }

    /// True when the callback returned without answering or deferring.
    pub fn untouched(&self) -> bool {
        self.answer.lock().unwrap().0 == Phase::InCallback
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled() || self.answer.lock().unwrap().1.as_ref().is_none_or(|tx| tx.is_closed())
    }
}
