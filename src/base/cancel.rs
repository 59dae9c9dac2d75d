//! A cloneable cancellation token: cancelling any clone cancels them all.
//!
//! A token also knows which host callbacks run on its behalf (`enter_callback`), so that
//! `cancel_and_wait` can return only once none is running elsewhere: after it, the host may
//! tear down what those callbacks use (the C ABI's cancellation contract).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::ThreadId;
use tokio::sync::Notify;

/// Cancels a call (or a handler's work): pass it in [`crate::RequestOptions::cancel`] and call
/// [`CancelToken::cancel`] from anywhere. Clones share one state.
#[derive(Clone, Default, Debug)]
pub struct CancelToken(Arc<Inner>);

#[derive(Default, Debug)]
struct Inner {
    cancelled: AtomicBool,
    notify: Notify,
    /// The threads running a callback on this token's behalf (one entry per callback).
    callbacks: Mutex<Vec<ThreadId>>,
    callback_done: Condvar,
    /// Work done for the parent's call (an MRTR round): its callbacks count for the parent too.
    parent: Option<CancelToken>,
}

impl CancelToken {
    /// A token not cancelled yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A token cancelled on its own whose callbacks also count as `parent`'s (see
    /// [`CancelToken::cancel_and_wait`]).
    pub(crate) fn child(parent: Option<&CancelToken>) -> Self {
        CancelToken(Arc::new(Inner {
            parent: parent.cloned(),
            ..Inner::default()
        }))
    }

    /// Idempotent and callable from any thread.
    pub fn cancel(&self) {
        if !self.0.cancelled.swap(true, Ordering::SeqCst) {
            self.0.notify.notify_waiters();
        }
    }

    /// Cancels, then waits until no callback entered for this token runs on another thread (a
    /// callback cancelling its own call does not wait for itself). A callback that enters
    /// afterwards sees the token cancelled and must not call the host.
    pub fn cancel_and_wait(&self) {
        self.cancel();
        let me = std::thread::current().id();
        let mut running = self.0.callbacks.lock().unwrap();
        while running.iter().any(|t| *t != me) {
            running = self.0.callback_done.wait(running).unwrap();
        }
    }

    /// Marks a host callback running on this thread for this token (and its ancestors) until
    /// the guard drops. Enter first, then check [`CallbackGuard::cancelled`].
    pub(crate) fn enter_callback(&self) -> CallbackGuard {
        let me = std::thread::current().id();
        let mut tokens = Vec::new();
        let mut next = Some(self);
        while let Some(token) = next {
            token.0.callbacks.lock().unwrap().push(me);
            tokens.push(token.clone());
            next = token.0.parent.as_ref();
        }
        CallbackGuard { tokens, thread: me }
    }

    /// Whether [`CancelToken::cancel`] was called on this token or a clone.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
    }

    /// Completes once the token is cancelled.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.0.notify.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

/// A host callback in progress for some tokens (see [`CancelToken::enter_callback`]).
#[must_use]
pub(crate) struct CallbackGuard {
    tokens: Vec<CancelToken>,
    thread: ThreadId,
}

impl CallbackGuard {
    /// Whether any token the callback runs for is cancelled (then the host must not be called).
    pub fn cancelled(&self) -> bool {
        self.tokens.iter().any(CancelToken::is_cancelled)
    }
}

impl Drop for CallbackGuard {
    fn drop(&mut self) {
        for token in &self.tokens {
            let mut running = token.0.callbacks.lock().unwrap();
            if let Some(i) = running.iter().position(|t| *t == self.thread) {
                running.swap_remove(i);
            }
            token.0.callback_done.notify_all();
        }
    }
}

/// Waits for an optional token; never completes for `None`.
pub(crate) async fn cancelled(token: Option<&CancelToken>) {
    match token {
        Some(t) => t.cancelled().await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn cancel_and_wait_waits_for_callbacks_on_other_threads_only() {
        let call = CancelToken::new();
        let round = CancelToken::child(Some(&call));
        let (entered_tx, entered_rx) = std::sync::mpsc::channel();
        let worker = {
            let round = round.clone();
            std::thread::spawn(move || {
                let _busy = round.enter_callback();
                entered_tx.send(()).unwrap();
                std::thread::sleep(Duration::from_millis(200));
                Instant::now()
            })
        };
        entered_rx.recv().unwrap();
        call.cancel_and_wait();
        let returned = Instant::now();
        let callback_done = worker.join().unwrap();
        assert!(
            callback_done <= returned,
            "cancel returned while the round's callback ran"
        );
        assert!(call.is_cancelled() && !round.is_cancelled());

        // From inside a callback of its own call: no waiting for itself.
        let own = CancelToken::new();
        let _busy = own.enter_callback();
        let t = Instant::now();
        own.cancel_and_wait();
        assert!(t.elapsed() < Duration::from_millis(100));
    }
}
