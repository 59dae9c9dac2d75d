//! A Streamable HTTP request's exchange (modern or legacy wire) run on its caller's task
//! instead of a task of its own, while the caller waits on a current-thread runtime (the
//! session decides, as for stdio's inline reading: `Transport::poll_read_inline`), alone or
//! beside others: each exchange is its own caller's.
//!
//! Why: a spawned exchange hands its answer to the caller across tasks, and a current-thread
//! runtime whose `block_on` future is woken by another task parks once more with a zero timeout
//! before polling it (an `epoll_wait` per call); the spawn, its task and the abort handle cost
//! ~3k instructions more. Run by its caller, the exchange delivers the answer while the caller
//! is being polled, so the caller finds it in the same turn. Calls in flight together (started
//! calls on one HTTP/2 connection) each run their own exchange the same way.
//!
//! A caller that stops waiting before the exchange ended (timeout, cancellation, its future
//! dropped) hands it back, and it goes on in a task of its own, as it would have from the
//! start: cancelling aborts it, closing the transport drops it.

use crate::protocol::RequestId;
use crate::transport::BoxFuture;
use std::collections::HashMap;
use std::sync::Mutex;
use std::task::{Context, Poll};

/// The exchanges waiting for their callers to poll them, one a caller: the first in a slot of
/// its own (a lone caller's, the common case, found without hashing), the others by id (hashed
/// with foldhash: each caller looks its own up on every poll, among as many as are in flight).
#[derive(Default)]
pub(super) struct InlineSlot(Mutex<Parked>);

type Exchange = (RequestId, BoxFuture<'static, ()>);

#[derive(Default)]
struct Parked {
    one: Option<Exchange>,
    more: HashMap<RequestId, BoxFuture<'static, ()>, foldhash::fast::RandomState>,
}

impl Parked {
    fn park(&mut self, (id, exchange): Exchange) {
        match self.one {
            None => self.one = Some((id, exchange)),
            Some(_) => drop(self.more.insert(id, exchange)),
        }
    }

    fn take(&mut self, id: &RequestId) -> Option<Exchange> {
        match &self.one {
            Some((held, _)) if held == id => self.one.take(),
            _ if self.more.is_empty() => None,
            _ => self.more.remove_entry(id),
        }
    }
}

impl InlineSlot {
    /// Parks `exchange` for the caller of `id`.
    pub fn park(&self, id: RequestId, exchange: BoxFuture<'static, ()>) {
        self.0.lock().unwrap().park((id, exchange));
    }

    /// Polls the exchange of `id` (unlocked while it runs); `Ready` once it has ended.
    pub fn poll(&self, cx: &mut Context<'_>, id: &RequestId) -> Poll<()> {
        let Some((held, mut exchange)) = self.0.lock().unwrap().take(id) else {
            return Poll::Pending;
        };
        if exchange.as_mut().poll(cx).is_ready() {
            return Poll::Ready(());
        }
        self.0.lock().unwrap().park((held, exchange));
        Poll::Pending
    }

    /// The exchange of `id`, unfinished, when it is parked here.
    pub fn take(&self, id: &RequestId) -> Option<BoxFuture<'static, ()>> {
        self.0.lock().unwrap().take(id).map(|(_, exchange)| exchange)
    }

    /// Drops what is parked (the transport closed).
    pub fn clear(&self) {
        let parked = std::mem::take(&mut *self.0.lock().unwrap());
        drop(parked);
    }
}
