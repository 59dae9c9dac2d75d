//! Transports move JSON-RPC messages between the session and a server. A transport delivers
//! everything it receives to one inbound channel and decides how a request is cancelled on its
//! wire (stdio: `notifications/cancelled`; modern HTTP: closing the response stream; legacy
//! HTTP: POSTing `notifications/cancelled`).

mod child;
pub mod framing;
pub mod http;
pub(crate) mod lean_reader;
mod line_writer;
mod reaper;
pub mod sse;
pub mod stdio;

use crate::error::{Error, Result};
use crate::protocol::RequestId;
use serde_json::Value;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::{mpsc, Notify};

pub use crate::base::BoxFuture;

/// What a transport hands to the session.
#[derive(Debug)]
pub enum Inbound {
    /// One decoded JSON-RPC message.
    Message(Value),
    /// An answer (result or error) to request `id`, still undecoded: the waiting caller decodes
    /// it on its own thread, so the thread reading the transport never decodes results, and
    /// what the decoding allocates is allocated and freed by one thread.
    Answer { id: RequestId, line: Vec<u8> },
    /// A message for request `id` could not be accepted (e.g. too large); the request fails.
    RequestFailed { id: RequestId, error: Error },
    /// A diagnostic line (server stderr, skipped input) for the log listener.
    Log { source: &'static str, line: String },
    /// The transport is gone for good; every pending request fails with this error.
    Closed(Error),
    /// Request `id` waits for an authorization (a browser, a token endpoint): its timeout is
    /// held while `paused`, and starts afresh when released. The call's total cap still runs.
    Paused { id: RequestId, paused: bool },
}

/// How much a transport's reader may have handed to the session and not yet seen handled, in
/// bytes of the messages as they arrived. A reader that gets ahead waits ([`InboundSender::deliver`]),
/// so it stops reading and a flooding server meets back-pressure on its own output instead of
/// the client's memory growing (a lone message larger than this still passes, alone).
pub(crate) const INBOUND_BUDGET: usize = 4 * 1024 * 1024;

/// One queued event and the bytes it holds of the budget (0: not metered).
#[derive(Debug)]
struct Queued {
    event: Inbound,
    weight: usize,
}

/// The transport's end of the delivery channel. `send` never waits (rare events: closing,
/// pauses, failures); `deliver` is for the flow of server messages and waits while the
/// session is [`INBOUND_BUDGET`] bytes behind.
#[derive(Clone, Debug)]
pub struct InboundSender {
    tx: mpsc::UnboundedSender<Queued>,
    meter: Arc<Meter>,
}

#[derive(Debug, Default)]
struct Meter {
    queued: AtomicUsize,
    /// A reader waits for room (so the session's side wakes it; checked per message, cheap).
    waiting: AtomicBool,
    room: Notify,
}

/// The session's end of the delivery channel.
pub struct InboundReceiver {
    rx: mpsc::UnboundedReceiver<Queued>,
    meter: Arc<Meter>,
}

/// A delivery channel between a transport and its session.
pub fn inbound_channel() -> (InboundSender, InboundReceiver) {
    let (tx, rx) = mpsc::unbounded_channel();
    let meter = Arc::new(Meter::default());
    (
        InboundSender {
            tx,
            meter: meter.clone(),
        },
        InboundReceiver { rx, meter },
    )
}

impl InboundSender {
    /// Queues `event` at once (not metered); false when the session is gone.
    pub fn send(&self, event: Inbound) -> bool {
        self.tx.send(Queued { event, weight: 0 }).is_ok()
    }

    /// Queues `event`, which holds `weight` bytes, once the session has room for it; false when
    /// the session is gone.
    pub async fn deliver(&self, event: Inbound, weight: usize) -> bool {
        self.room(weight).await && self.send_metered(event, weight)
    }

    /// Waits until the session has room for `weight` more bytes (always, when nothing waits);
    /// false when the session is gone. For readers that then deliver with `send_metered`.
    pub async fn room(&self, weight: usize) -> bool {
        let fits = |queued: usize| queued == 0 || queued + weight <= INBOUND_BUDGET;
        if !fits(self.meter.queued.load(Ordering::SeqCst)) {
            loop {
                let room = self.meter.room.notified();
                self.meter.waiting.store(true, Ordering::SeqCst);
                if fits(self.meter.queued.load(Ordering::SeqCst)) {
                    break;
                }
                if self.tx.is_closed() {
                    return false;
                }
                room.await;
            }
            self.meter.waiting.store(false, Ordering::SeqCst);
        }
        true
    }

    /// Queues `event`, which holds `weight` bytes, at once (after `room`); false when the
    /// session is gone.
    pub fn send_metered(&self, event: Inbound, weight: usize) -> bool {
        let weight = weight.max(1);
        self.meter.queued.fetch_add(weight, Ordering::SeqCst);
        self.tx.send(Queued { event, weight }).is_ok()
    }
}

impl InboundReceiver {
    pub async fn recv(&mut self) -> Option<Inbound> {
        let Queued { event, weight } = self.rx.recv().await?;
        if weight > 0 {
            self.meter.queued.fetch_sub(weight, Ordering::SeqCst);
            if self.meter.waiting.load(Ordering::SeqCst) && self.meter.waiting.swap(false, Ordering::SeqCst) {
                self.meter.room.notify_waiters();
            }
        }
        Some(event)
    }
}

impl Drop for InboundReceiver {
    fn drop(&mut self) {
        // A reader waiting for room must see the session is gone.
        self.rx.close();
        self.meter.room.notify_waiters();
    }
}

pub trait Transport: Send + Sync + 'static {
    /// Writes one message. Fails when the transport is closed or the write fails.
    fn send(&self, message: Value) -> BoxFuture<'_, Result<()>>;
    /// Tells the server to stop working on `id`, in this transport's way.
    fn cancel(&self, id: RequestId, reason: String) -> BoxFuture<'_, ()>;
    /// Shuts the transport down and releases its resources; idempotent.
    fn close(&self) -> BoxFuture<'_, ()>;
    /// Whether this transport may send `Inbound::Paused` (only an HTTP transport with an
    /// authorization flow does); the session then keeps a hold switch per request.
    fn may_pause(&self) -> bool {
        false
    }
}

/// How to reach a server.
#[derive(Debug, Clone)]
pub enum TransportConfig {
    /// A child process speaking over its stdin and stdout.
    Stdio(stdio::StdioConfig),
    /// An HTTP endpoint (Streamable HTTP, either era, or the 2024-11-05 HTTP+SSE fallback).
    Http(http::HttpConfig),
}

impl TransportConfig {
    /// Starts a new connection, delivering what it receives to `inbound`; an HTTP transport's
    /// requests are authorized by `auth` (the client's).
    pub(crate) async fn start(
        &self,
        inbound: InboundSender,
        auth: Option<Arc<dyn http::Authorizer>>,
    ) -> Result<Box<dyn Transport>> {
        match self {
            TransportConfig::Stdio(cfg) => Ok(Box::new(stdio::StdioTransport::spawn(cfg, inbound)?)),
            TransportConfig::Http(cfg) => Ok(Box::new(http::HttpTransport::start(cfg, inbound, auth)?)),
        }
    }

    /// Default per-message size bound.
    pub fn max_message_bytes(&self) -> usize {
        match self {
            TransportConfig::Stdio(cfg) => cfg.max_message_bytes,
            TransportConfig::Http(cfg) => cfg.max_message_bytes,
        }
    }
}
