//! Transports move JSON-RPC messages between the session and a server. A transport delivers
//! everything it receives to one inbound channel and decides how a request is cancelled on its
//! wire (stdio: `notifications/cancelled`; modern HTTP: closing the response stream; legacy
//! HTTP: POSTing `notifications/cancelled`).

#[cfg(unix)]
mod child;
#[cfg(windows)]
#[path = "child_windows.rs"]
mod child;
pub mod framing;
pub mod http;
pub(crate) mod lean_reader;
mod line_writer;
mod pump;
mod reaper;
pub mod sse;
pub mod stdio;

use crate::error::{Error, Result};
use crate::protocol::RequestId;
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
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
    Answer {
        id: RequestId,
        line: Vec<u8>,
        result: ResultAt,
    },
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

#[derive(Default)]
struct Meter {
    queued: AtomicUsize,
    /// A reader waits for room (so the session's side wakes it; checked per message, cheap).
    waiting: AtomicBool,
    room: Notify,
    /// Events sent and not yet handled (the receiver counts one handled when it comes back for
    /// the next, or is dropped).
    unhandled: AtomicUsize,
    /// Where an answer goes when nothing is queued before it (see [`InboundSender::deliver_answer`]).
    direct: OnceLock<AnswerSink>,
    /// Where the server's stderr lines go (see [`InboundSender::deliver_log`]).
    log: OnceLock<LogSink>,
    /// Where notes on a request go (see [`InboundSender::note`]).
    note: OnceLock<NoteSink>,
}

/// Hands an undecoded answer to the request waiting for it (the session's, set by the receiver).
pub type AnswerSink = Box<dyn Fn(RequestId, Vec<u8>, ResultAt) + Send + Sync>;

/// Hands a diagnostic line (`source`, the line) to the session (set by the receiver).
pub type LogSink = Box<dyn Fn(&'static str, String) + Send + Sync>;

/// Tells the session something happened to request `id` on its way (an event of its span:
/// `mcp.auth.unauthorized`, `mcp.auth.step_up`, `mcp.auth.dpop_nonce_retry`,
/// `mcp.session.renewed`), with the HTTP status that caused it, if any (set by the receiver).
pub type NoteSink = Box<dyn Fn(&RequestId, &'static str, Option<u16>) + Send + Sync>;

/// Where an answer line's `result` sits and what it says of itself (`resultType`,
/// `structuredContent`), when the transport already knows: it checked the line is well-formed
/// JSON with a `result` and no `error` (HTTP reads each body once to find the answer's error
/// code), so the caller reads nothing more. `None`: the caller finds out.
pub type ResultAt = Option<crate::protocol::result_probe::LocatedResult>;

impl std::fmt::Debug for Meter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Meter")
            .field("queued", &self.queued)
            .finish_non_exhaustive()
    }
}

/// The session's end of the delivery channel.
pub struct InboundReceiver {
    rx: mpsc::UnboundedReceiver<Queued>,
    meter: Arc<Meter>,
    /// The last event returned is being handled (counted in `unhandled`).
    holding: bool,
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
        InboundReceiver {
            rx,
            meter,
            holding: false,
        },
    )
}

impl InboundSender {
    /// Queues `event` at once (not metered); false when the session is gone.
    pub fn send(&self, event: Inbound) -> bool {
        self.meter.unhandled.fetch_add(1, Ordering::SeqCst);
        self.tx.send(Queued { event, weight: 0 }).is_ok()
    }

    /// Delivers an answer (`Inbound::Answer`). When every event sent before it has been
    /// handled, it goes straight to the waiting request through the session's sink: the same
    /// order as through the queue, without a hop through the session's read loop (a task poll
    /// and a wake-up per call). Otherwise it queues behind them, as [`deliver`](Self::deliver).
    pub async fn deliver_answer(&self, id: RequestId, line: Vec<u8>, result: ResultAt) -> bool {
        let weight = line.len();
        match self.answer_direct(id, line, result) {
            None => !self.tx.is_closed(),
            Some(queued) => self.deliver(queued, weight).await,
        }
    }

    /// As [`deliver_answer`](Self::deliver_answer), never waiting: queued without counting
    /// against the budget when events are ahead of it (an answer a request waits for).
    pub fn send_answer(&self, id: RequestId, line: Vec<u8>, result: ResultAt) -> bool {
        match self.answer_direct(id, line, result) {
            None => !self.tx.is_closed(),
            Some(queued) => self.send(queued),
        }
    }

    /// Hands the answer to the session's sink when nothing sent before it is unhandled;
    /// otherwise returns it as the event to queue.
    fn answer_direct(&self, id: RequestId, line: Vec<u8>, result: ResultAt) -> Option<Inbound> {
        match self.meter.direct.get() {
            Some(sink) if self.meter.unhandled.load(Ordering::SeqCst) == 0 => {
                sink(id, line, result);
                None
            }
            _ => Some(Inbound::Answer { id, line, result }),
        }
    }

    /// Delivers a line the server wrote on its stderr. Another pipe than its messages, so no
    /// order with them to keep: once the session has a sink for lines, the line goes there at
    /// once, neither queued (an answer behind it would lose its direct path) nor handled by the
    /// session's read loop (a second task to wake per line). Queued as `Inbound::Log` before.
    pub async fn deliver_log(&self, source: &'static str, line: String) -> bool {
        match self.meter.log.get() {
            Some(sink) => {
                sink(source, line);
                !self.tx.is_closed()
            }
            None => {
                let weight = line.len();
                self.deliver(Inbound::Log { source, line }, weight).await
            }
        }
    }

    /// Notes `event` on request `id` (see [`NoteSink`]), at once, before the transport goes on
    /// with the request; nothing when the session takes no notes.
    pub fn note(&self, id: Option<&RequestId>, event: &'static str, status: Option<u16>) {
        if let (Some(sink), Some(id)) = (self.meter.note.get(), id) {
            sink(id, event, status);
        }
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
        self.meter.unhandled.fetch_add(1, Ordering::SeqCst);
        self.tx.send(Queued { event, weight }).is_ok()
    }
}

impl InboundReceiver {
    /// Installs where answers go when nothing is queued before them (once).
    pub fn set_answer_sink(&self, sink: AnswerSink) {
        let _ = self.meter.direct.set(sink);
    }

    /// Installs where stderr lines go (once; see [`InboundSender::deliver_log`]).
    pub fn set_log_sink(&self, sink: LogSink) {
        let _ = self.meter.log.set(sink);
    }

    /// Installs where notes on requests go (once; see [`InboundSender::note`]).
    pub fn set_note_sink(&self, sink: NoteSink) {
        let _ = self.meter.note.set(sink);
    }

    /// The next event; the one returned before counts as handled from now on.
    pub async fn recv(&mut self) -> Option<Inbound> {
        if std::mem::take(&mut self.holding) {
            self.meter.unhandled.fetch_sub(1, Ordering::SeqCst);
        }
        let Queued { event, weight } = self.rx.recv().await?;
        self.holding = true;
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
        if self.holding {
            self.meter.unhandled.fetch_sub(1, Ordering::SeqCst);
        }
        self.meter.room.notify_waiters();
    }
}

/// A request the session serialised itself (see [`Transport::takes_lines`]), with what it
/// was written from, for a transport that derives more than the bytes from it (HTTP's headers
/// mirror the method, the name and the version).
pub struct RequestLine<'a> {
    pub id: &'a RequestId,
    pub method: &'a str,
    /// Its params as the caller gave them: no `_meta`, and the members in `apart` not in it.
    pub params: &'a Map<String, Value>,
    /// Members kept out of `params`: the tool's name, the arguments as JSON object text.
    pub apart: crate::protocol::jsonrpc::Apart<'a>,
    /// The protocol version its `_meta` carries (modern era).
    pub version: Option<&'a str>,
    /// The serialised request, with its newline.
    pub line: Vec<u8>,
    /// The session will poll [`Transport::poll_read_inline`] for this request while it waits.
    pub inline: bool,
}

pub trait Transport: Send + Sync + 'static {
    /// Writes one message. Fails when the transport is closed or the write fails.
    fn send(&self, message: Value) -> BoxFuture<'_, Result<()>>;
    /// Tells the server to stop working on `id`, in this transport's way.
    fn cancel(&self, id: RequestId, reason: String) -> BoxFuture<'_, ()>;
    /// As [`cancel`](Transport::cancel), for a request whose caller's future was dropped: nothing
    /// can be awaited there, so the notice is queued or goes on in a task of its own.
    fn abandon(&self, id: RequestId, reason: String);
    /// Shuts the transport down and releases its resources; idempotent.
    fn close(&self) -> BoxFuture<'_, ()>;
    /// The session id the server gave (`Mcp-Session-Id` of a legacy Streamable HTTP session).
    fn session_id(&self) -> Option<String> {
        None
    }
    /// The origin of the server's URL (`scheme://host:port`, the era cache's key); `None` for
    /// stdio.
    fn origin(&self) -> Option<String> {
        None
    }
    /// The version of the network protocol the latest exchange used (`network.protocol.version`:
    /// HTTP's `1.1` or `2`); `None` for stdio or before any.
    fn protocol_version(&self) -> Option<&'static str> {
        None
    }
    /// Writes a request the session serialised itself, as it writes requests for transports
    /// that [`take lines`](Transport::takes_lines). Others get the line decoded and passed to
    /// [`send`](Transport::send).
    fn send_line(&self, request: RequestLine<'_>) -> BoxFuture<'_, Result<()>> {
        match serde_json::from_slice(&request.line) {
            Ok(message) => self.send(message),
            Err(e) => Box::pin(async move { Err(Error::unserialisable(e)) }),
        }
    }
    /// The buffer the session writes its next request line into: one an earlier request's line
    /// left with the transport (HTTP keeps its POST body's, see `transport/http/spare`), or a
    /// new one.
    fn line_buffer(&self) -> Vec<u8> {
        Vec::new()
    }
    /// Whether [`send_line`](Transport::send_line) sends the line as it is (stdio; HTTP's
    /// modern wire, as the POST body): the session then serialises requests from borrowed parts
    /// instead of building a `Value`.
    fn takes_lines(&self) -> bool {
        false
    }
    /// Whether a request waiting alone may read the transport on its own task
    /// ([`poll_read_inline`](Transport::poll_read_inline); stdio, see `transport/pump`; HTTP
    /// runs the request's exchange there).
    fn reads_inline(&self) -> bool {
        false
    }
    /// Whether requests waiting together may each read inline too: their reading is their own
    /// (HTTP: each request's exchange), not a stream they share (stdio).
    fn reads_inline_together(&self) -> bool {
        false
    }
    /// Reads what the server sent on the calling task, waiting for request `id`; `Ready` when
    /// anything was read (the caller then looks for its answer again). `joined` is the caller's
    /// state for [`end_read_inline`](Transport::end_read_inline), false at first.
    fn poll_read_inline(
        &self,
        _cx: &mut std::task::Context<'_>,
        _id: &RequestId,
        _joined: &mut bool,
    ) -> std::task::Poll<()> {
        std::task::Poll::Pending
    }
    /// The caller of `id` no longer reads (its wait is over).
    fn end_read_inline(&self, _id: &RequestId, _joined: bool) {}
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An answer overtakes nothing: it goes straight to the sink only when every event sent
    /// before it has been handled, and behind them through the queue otherwise.
    #[tokio::test]
    async fn answers_go_straight_to_the_sink_only_when_nothing_waits_before_them() {
        let (tx, mut rx) = inbound_channel();
        let direct = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = direct.clone();
        rx.set_answer_sink(Box::new(move |id, _line, _result| seen.lock().unwrap().push(id)));

        assert!(tx.deliver_answer(RequestId::Num(1), b"{}".to_vec(), None).await);
        assert_eq!(*direct.lock().unwrap(), [RequestId::Num(1)]);

        // A message not yet handled: the next answer queues behind it.
        assert!(tx.deliver(Inbound::Message(Value::Null), 4).await);
        assert!(tx.deliver_answer(RequestId::Num(2), b"{}".to_vec(), None).await);
        assert!(matches!(rx.recv().await, Some(Inbound::Message(_))));
        // Still being handled (the receiver has not come back): queued again.
        assert!(tx.deliver_answer(RequestId::Num(3), b"{}".to_vec(), None).await);
        assert!(matches!(
            rx.recv().await,
            Some(Inbound::Answer {
                id: RequestId::Num(2),
                ..
            })
        ));
        assert!(matches!(
            rx.recv().await,
            Some(Inbound::Answer {
                id: RequestId::Num(3),
                ..
            })
        ));
        assert_eq!(direct.lock().unwrap().len(), 1);

        // Everything handled once the receiver waits for more: straight to the sink again.
        let next = tokio::spawn(async move { rx.recv().await.is_none() });
        tokio::task::yield_now().await;
        while tx.meter.unhandled.load(Ordering::SeqCst) != 0 {
            tokio::task::yield_now().await;
        }
        assert!(tx.deliver_answer(RequestId::Num(4), b"{}".to_vec(), None).await);
        assert_eq!(direct.lock().unwrap().last(), Some(&RequestId::Num(4)));
        drop(tx);
        assert!(next.await.unwrap());
    }
}
