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

/// A host callback to run once the answer is no longer wanted (`mcp_responder_on_cancel`).
pub(crate) type CancelHook = Box<dyn FnOnce() + Send>;

pub(crate) struct ResponderState<T> {
    answer: Mutex<(Phase, Option<oneshot::Sender<Answer<T>>>)>,
    cancel: CancelToken,
    /// Whether "no longer wanted" was announced, and the hook waiting for it.
    hook: Mutex<(bool, Option<CancelHook>)>,
    /// Where a hook due at registration is queued (set by the input handler that made this).
    poster: std::sync::OnceLock<Arc<super::dispatcher::Dispatcher>>,
}

impl<T> ResponderState<T> {
    /// A fresh state (in its callback) and the receiver of its answer.
    pub fn new(cancel: CancelToken) -> (Arc<Self>, oneshot::Receiver<Answer<T>>) {
        let (tx, rx) = oneshot::channel();
        (
            Arc::new(ResponderState {
                answer: Mutex::new((Phase::InCallback, Some(tx))),
                cancel,
                hook: Mutex::new((false, None)),
                poster: std::sync::OnceLock::new(),
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

    /// Registers the cancel hook; hands it back when the answer is already unwanted (the caller
    /// queues it at once). Replaces an earlier hook.
    pub fn on_cancel(&self, hook: CancelHook) -> Option<CancelHook> {
        let mut h = self.hook.lock().unwrap();
        if h.0 || self.is_cancelled() {
            h.0 = true;
            return Some(hook);
        }
        h.1 = Some(hook);
        None
    }

    /// Sets where hooks due at registration are queued (once).
    pub fn set_hook_poster(&self, dispatcher: Arc<super::dispatcher::Dispatcher>) {
        let _ = self.poster.set(dispatcher);
    }

    /// Registers the hook, queueing it at once when the answer is already unwanted; false when
    /// this responder has nowhere to queue hooks.
    pub fn register_hook(&self, hook: CancelHook) -> bool {
        let Some(poster) = self.poster.get() else {
            return false;
        };
        if let Some(hook) = self.on_cancel(hook) {
            poster.post(hook);
        }
        true
    }

    /// The answer is no longer wanted: the hook to queue, unless it was answered or announced.
    pub fn unwanted(&self) -> Option<CancelHook> {
        if self.answer.lock().unwrap().0 == Phase::Done {
            return None;
        }
        let mut h = self.hook.lock().unwrap();
        h.0 = true;
        h.1.take()
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled() || self.answer.lock().unwrap().1.as_ref().is_none_or(|tx| tx.is_closed())
    }
}
