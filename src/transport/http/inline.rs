//! A Streamable HTTP request's exchange (modern or legacy wire) run on its caller's task
//! instead of a task of its own, while the caller waits alone on a current-thread runtime (the
//! session decides, as for stdio's inline reading: `Transport::poll_read_inline`).
//!
//! Why: a spawned exchange hands its answer to the caller across tasks, and a current-thread
//! runtime whose `block_on` future is woken by another task parks once more with a zero timeout
//! before polling it (an `epoll_wait` per call); the spawn, its task and the abort handle cost
//! ~3k instructions more. Run by its caller, the exchange delivers the answer while the caller
//! is being polled, so the caller finds it in the same turn.
//!
//! A caller that stops waiting before the exchange ended (timeout, cancellation, its future
//! dropped) hands it back, and it goes on in a task of its own, as it would have from the
//! start: cancelling aborts it, closing the transport drops it.

use crate::protocol::RequestId;
use crate::transport::BoxFuture;
use std::sync::Mutex;
use std::task::{Context, Poll};

/// The one exchange waiting for its caller to poll it (a caller alone: at most one at a time).
#[derive(Default)]
pub(super) struct InlineSlot(Mutex<Option<(RequestId, BoxFuture<'static, ()>)>>);

impl InlineSlot {
    /// Parks `exchange` for the caller of `id`; gives it back if another one is parked.
    pub fn park(&self, id: RequestId, exchange: BoxFuture<'static, ()>) -> Option<BoxFuture<'static, ()>> {
        let mut slot = self.0.lock().unwrap();
        if slot.is_some() {
            return Some(exchange);
        }
        *slot = Some((id, exchange));
        None
    }

    /// Polls the exchange of `id` (unlocked while it runs); `Ready` once it has ended.
    pub fn poll(&self, cx: &mut Context<'_>, id: &RequestId) -> Poll<()> {
        let (held, mut exchange) = {
            let mut slot = self.0.lock().unwrap();
            match slot.take() {
                Some((held, exchange)) if held == *id => (held, exchange),
                other => {
                    *slot = other;
                    return Poll::Pending;
                }
            }
        };
        if exchange.as_mut().poll(cx).is_ready() {
            return Poll::Ready(());
        }
        *self.0.lock().unwrap() = Some((held, exchange));
        Poll::Pending
    }

    /// The exchange of `id`, unfinished, when it is parked here.
    pub fn take(&self, id: &RequestId) -> Option<BoxFuture<'static, ()>> {
        let mut slot = self.0.lock().unwrap();
        match slot.as_ref() {
            Some((held, _)) if held == id => slot.take().map(|(_, exchange)| exchange),
            _ => None,
        }
    }

    /// Drops what is parked (the transport closed).
    pub fn clear(&self) {
        let parked = self.0.lock().unwrap().take();
        drop(parked);
    }
}
