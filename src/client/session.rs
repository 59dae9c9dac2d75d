//! The JSON-RPC session over one transport: request ids, the pending map, timeouts,
//! progress routing, subscription routing, and answers to server→client requests.

use super::cancel::{cancelled, CancelToken};
use super::handlers::{Hooks, InputRequest};
use super::options::{Progress, ProgressFn};
use super::reply::Reply;
pub(crate) use super::wait::Wait;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{codes, jsonrpc, meta, methods, Incoming, RequestId};
use crate::transport::{Inbound, InboundReceiver, RequestLine, ResultAt, Transport};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::{mpsc, oneshot, watch, Notify};
use tokio::time::Instant;

/// What a subscription (`subscriptions/listen`) receives.
#[derive(Debug, Clone, PartialEq)]
pub enum SubscriptionEvent {
    /// A notification tagged with this subscription's id (the acknowledgement included).
    Notification {
        /// The notification's method.
        method: String,
        /// Its params (`null` when it had none).
        params: Value,
    },
    /// The subscription ended: by the server (`None`), or with an error.
    Closed(Option<Error>),
}

/// Events a subscription may hold that the host has not taken. A host that stops reading
/// (or a server flooding `list_changed`) ends the subscription with an error past this, rather
/// than the events piling up in memory.
pub(crate) const SUBSCRIPTION_QUEUE: usize = 1024;

/// Server→client requests (legacy) being answered at once; more are refused with an error
/// answer at once, so a flooding server cannot make the client hold unbounded work.
pub(crate) const MAX_SERVER_REQUESTS: usize = 64;

/// The sending half of a subscription's bounded event queue. Its end (`Closed`) never queues:
/// it is kept aside, so it is never lost to a full queue.
#[derive(Clone)]
pub(crate) struct SubSender {
    tx: mpsc::Sender<SubscriptionEvent>,
    end: Arc<OnceLock<Option<Error>>>,
}

/// The receiving half: the events, then the `Closed` event once the senders are gone.
pub(crate) struct SubReceiver {
    rx: mpsc::Receiver<SubscriptionEvent>,
    end: Arc<OnceLock<Option<Error>>>,
}

fn sub_queue() -> (SubSender, SubReceiver) {
    let (tx, rx) = mpsc::channel(SUBSCRIPTION_QUEUE);
    let end = Arc::new(OnceLock::new());
    (SubSender { tx, end: end.clone() }, SubReceiver { rx, end })
}

impl SubSender {
    /// Queues an event; false when the queue is full.
    fn event(&self, event: SubscriptionEvent) -> bool {
        !matches!(self.tx.try_send(event), Err(mpsc::error::TrySendError::Full(_)))
    }

    /// Ends the subscription (`None`: by the server, gracefully); the first end sticks.
    fn close(&self, why: Option<Error>) {
        let _ = self.end.set(why);
    }
}

impl SubReceiver {
    /// The next event; `Closed` once the subscription ended and its events were taken.
    pub async fn recv(&mut self) -> SubscriptionEvent {
        match self.rx.recv().await {
            Some(event) => event,
            None => SubscriptionEvent::Closed(self.end.get().cloned().flatten()),
        }
    }
}

/// What the session knows of the server's era: who may send it requests.
const ERA_UNKNOWN: u8 = 0;
const ERA_LEGACY: u8 = 1;
const ERA_MODERN: u8 = 2;

struct ProgressRoute {
    activity: Arc<Notify>,
    callback: Option<ProgressFn>,
}

/// What a waiting request receives.
enum Answer {
    Decoded(Result<Value>),
    /// The raw answer line (see `Inbound::Answer`), decoded by the waiting caller.
    Line(Vec<u8>, ResultAt),
}

impl Answer {
    fn decode(self, id: &RequestId) -> Result<Reply> {
        match self {
            Answer::Decoded(answer) => answer.map(Reply::Value),
            Answer::Line(line, result) => Reply::from_answer(id, line, result),
        }
    }
}

/// A request's params as the client hands them to the session.
pub(crate) enum Params<'a> {
    /// The whole params object, `_meta` included (connect, caller `_meta`, transports that
    /// take messages as values).
    Owned(Map<String, Value>),
    /// The caller's params (without a `_meta` member) and the `_meta` members to append: the
    /// request line is written from these as they are, nothing copied into a map first.
    Parts {
        params: &'a Map<String, Value>,
        /// Members kept apart from `params` (the tool's name, the arguments as JSON text).
        apart: jsonrpc::Apart<'a>,
        /// The protocol version `meta` carries (modern era).
        version: Option<&'a str>,
        meta: jsonrpc::MetaParts<'a>,
    },
}

impl From<Map<String, Value>> for Params<'_> {
    fn from(params: Map<String, Value>) -> Self {
        Params::Owned(params)
    }
}

fn on_current_thread_runtime() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread)
}

/// A request reading the transport on its own task while it waits (`Transport::poll_read_inline`);
/// dropping it hands the reading back.
struct InlineRead<'a> {
    transport: &'a dyn Transport,
    id: &'a RequestId,
    on: bool,
    joined: bool,
}

impl InlineRead<'_> {
    fn poll(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        self.transport.poll_read_inline(cx, self.id, &mut self.joined)
    }
}

impl Drop for InlineRead<'_> {
    fn drop(&mut self) {
        if self.on {
            self.transport.end_read_inline(self.id, self.joined);
        }
    }
}

/// Forgets a request whose caller's future is dropped before it ended (a host's own timeout, a
/// `select!`): otherwise its entry stayed until an answer that may never come, and the session
/// counted it pending, so no later request was alone (none read inline). Once the request was
/// sent, and unless it is one never cancelled, the server is told too: dropping the future is
/// the Rust way to cancel it.
struct Unanswered<'a> {
    session: &'a Session,
    id: &'a RequestId,
    method: &'a str,
    token: Option<&'a str>,
    armed: bool,
    /// Sent, and `Wait::notify_cancel`.
    announce: bool,
}

impl Drop for Unanswered<'_> {
    fn drop(&mut self) {
        if self.armed && self.session.forget(self.id, self.token) && self.announce {
            let reason = format!("{} was abandoned by its caller (request {})", self.method, self.id);
            self.session.transport.abandon(self.id.clone(), reason);
        }
    }
}

const LISTEN_CANCELLED: &str = "subscription cancelled";

/// A request waiting for its answer.
struct Pending {
    answer: oneshot::Sender<Answer>,
    /// True while the transport waits on an authorization (transports that may pause only).
    hold: Option<watch::Sender<bool>>,
    /// The observed operation it belongs to (`observe::Trail`), for the transport's notes.
    trail: Option<Arc<super::observe::Trail>>,
}

/// Maps keyed by the ids this client issues (a counter, so no key a server could choose):
/// hashed with foldhash instead of SipHash, a lookup and an insert on every request.
type IdMap<V> = HashMap<RequestId, V, foldhash::fast::RandomState>;

#[derive(Default)]
struct State {
    pending: IdMap<Pending>,
    progress: HashMap<String, ProgressRoute>,
    subscriptions: IdMap<SubSender>,
    closed: Option<Error>,
}

/// How a session ended: with the error everything pending failed with, or renewed by the
/// transport (a legacy HTTP session the server expired, started again); with the session id it
/// had.
pub(crate) enum SessionEnd<'a> {
    Closed(&'a Error),
    Renewed,
}

/// Told when the session ends (`Session::on_end`), with its session id then.
pub(crate) type EndFn = Box<dyn Fn(SessionEnd<'_>, Option<String>) + Send + Sync>;

pub(crate) struct Session {
    transport: Box<dyn Transport>,
    /// Told when the session ends (the client's session records).
    on_end: std::sync::OnceLock<EndFn>,
    next_id: AtomicI64,
    state: Mutex<State>,
    hooks: Arc<Hooks>,
    /// `ERA_*`: until the era is known only `ping` is answered (legacy servers send nothing
    /// else before `initialize` completes); modern servers never send requests.
    era: AtomicU8,
    /// Server→client requests being answered (bounded by `MAX_SERVER_REQUESTS`).
    server_requests: AtomicUsize,
    heard: Heard,
}

/// What a connect that timed out can say about the server: whether it wrote anything at all,
/// and its last stderr lines.
#[derive(Default)]
struct Heard {
    anything: AtomicBool,
    stderr: Mutex<std::collections::VecDeque<String>>,
}

/// Stderr lines a connect timeout quotes.
const HEARD_STDERR_LINES: usize = 5;

impl Heard {
    fn note(&self, event: &Inbound) {
        if let Inbound::Message(_) | Inbound::Answer { .. } = event {
            self.anything.store(true, Ordering::Relaxed);
        }
    }

    fn note_stderr(&self, line: &str) {
        let mut tail = self.stderr.lock().unwrap();
        if tail.len() == HEARD_STDERR_LINES {
            tail.pop_front();
        }
        tail.push_back(line.chars().take(300).collect());
    }
}

impl Session {
    /// Starts the session's reader over `inbound`, the transport's delivery channel.
    pub fn start(transport: Box<dyn Transport>, inbound: InboundReceiver, hooks: Arc<Hooks>) -> Arc<Session> {
        let session = Arc::new(Session {
            transport,
            on_end: std::sync::OnceLock::new(),
            next_id: AtomicI64::new(1),
            state: Mutex::default(),
            hooks,
            era: AtomicU8::new(ERA_UNKNOWN),
            server_requests: AtomicUsize::new(0),
            heard: Heard::default(),
        });
        let weak = Arc::downgrade(&session);
        inbound.set_answer_sink(Box::new(move |id, line, result| {
            if let Some(session) = weak.upgrade() {
                session.heard.anything.store(true, Ordering::Relaxed);
                session.complete(&id, Answer::Line(line, result));
            }
        }));
        let weak = Arc::downgrade(&session);
        inbound.set_note_sink(Box::new(move |id, event, status| {
            let Some(session) = weak.upgrade() else { return };
            if event == "mcp.session.renewed" {
                if let Some(end) = session.on_end.get() {
                    end(SessionEnd::Renewed, session.session_id());
                }
            }
            let trail = session
                .state
                .lock()
                .unwrap()
                .pending
                .get(id)
                .and_then(|p| p.trail.clone());
            if let Some(trail) = trail {
                let attributes = status
                    .map(|s| vec![("http.response.status_code", super::observe::AttrValue::Int(s.into()))])
                    .unwrap_or_default();
                trail.event(event, attributes);
            }
        }));
        let weak = Arc::downgrade(&session);
        inbound.set_log_sink(Box::new(move |source, line| {
            if let Some(session) = weak.upgrade() {
                session.log_line(source, &line);
            }
        }));
        // Quiet: over HTTP it only hands on what the requests' exchanges (tasks or callers) give
        // it, so waiting it needs no thread between calls; a stdio server's pump is background
        // work of its own.
        tokio::spawn(crate::base::quiet::quietly(read_loop(
            Arc::downgrade(&session),
            inbound,
        )));
        session
    }

    /// A diagnostic line: the server's stderr (kept for a connect timeout's message), or the
    /// transport's; to the log listener.
    fn log_line(&self, source: &'static str, line: &str) {
        let level = if source == "stderr" {
            self.heard.note_stderr(line);
            "info"
        } else {
            "warning"
        };
        self.hooks.log(source, level, line);
    }

    /// The server turned out to be `era`: legacy servers may send requests from now on, modern
    /// ones never do (theirs are refused).
    pub fn set_era(&self, era: crate::protocol::Era) {
        let code = match era {
            crate::protocol::Era::Legacy => ERA_LEGACY,
            crate::protocol::Era::Modern => ERA_MODERN,
        };
        self.era.store(code, Ordering::SeqCst);
    }

    /// Whether the server has sent any message on this session.
    pub fn heard_anything(&self) -> bool {
        self.heard.anything.load(Ordering::Relaxed)
    }

    /// The server's last stderr lines, joined (empty when none).
    pub fn stderr_tail(&self) -> String {
        let tail = self.heard.stderr.lock().unwrap();
        tail.iter().cloned().collect::<Vec<_>>().join(" | ")
    }

    /// Whether requests may be handed over as [`Params::Parts`] at no extra cost (the transport
    /// writes lines as they are).
    pub fn takes_lines(&self) -> bool {
        self.transport.takes_lines()
    }

    /// The origin of the transport's URL (HTTP only), parsed when the transport started.
    pub fn origin(&self) -> Option<String> {
        self.transport.origin()
    }

    /// The transport's session id (`mcp.session.id`), when the server gave one.
    pub fn session_id(&self) -> Option<String> {
        self.transport.session_id()
    }

    /// The transport's network protocol version (`network.protocol.version`), once known.
    pub fn protocol_version(&self) -> Option<&'static str> {
        self.transport.protocol_version()
    }

    pub fn closed_error(&self) -> Option<Error> {
        self.state.lock().unwrap().closed.clone()
    }

    fn next_id(&self) -> RequestId {
        RequestId::Num(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends a request and waits for its answer under `wait`'s rules.
    pub async fn request(&self, method: &str, params: impl Into<Params<'_>>, wait: &Wait) -> Result<Reply> {
        let mut params = params.into();
        if wait.cancel.as_ref().is_some_and(CancelToken::is_cancelled) {
            // Nothing is sent for a call cancelled before it started.
            return Err(Error::new(
                ErrorKind::Cancelled,
                format!("{method} was cancelled before it was sent"),
            ));
        }
        let id = self.next_id();
        if let Some(trail) = &wait.trail {
            trail.sent(&id);
        }
        let wants_progress = wait.on_progress.is_some() || wait.reset_on_progress;
        let token_key = wants_progress.then(|| format!("mcp-{id}"));
        let activity = wants_progress.then(|| Arc::new(Notify::new()));
        if let (Some(token), Params::Owned(params)) = (&token_key, &mut params) {
            let meta = params.entry("_meta").or_insert_with(|| json!({}));
            if let Some(m) = meta.as_object_mut() {
                m.insert(meta::PROGRESS_TOKEN.into(), json!(token));
            }
        }
        let (tx, mut rx) = oneshot::channel();
        let alone;
        let (hold, mut hold_rx) = match self.transport.may_pause() {
            true => {
                let (tx, rx) = watch::channel(false);
                (Some(tx), Some(rx))
            }
            false => (None, None),
        };
        {
            let mut st = self.state.lock().unwrap();
            if let Some(err) = &st.closed {
                return Err(err.clone());
            }
            let trail = wait.trail.clone();
            st.pending.insert(
                id.clone(),
                Pending {
                    answer: tx,
                    hold,
                    trail,
                },
            );
            alone = st.pending.len() == 1;
            if let (Some(token), Some(activity)) = (&token_key, &activity) {
                st.progress.insert(
                    token.clone(),
                    ProgressRoute {
                        activity: activity.clone(),
                        callback: wait.on_progress.clone(),
                    },
                );
            }
        }
        let mut unanswered = Unanswered {
            session: self,
            id: &id,
            method,
            token: token_key.as_deref(),
            armed: true,
            announce: false,
        };
        // Alone, the request reads the transport itself while it waits (see `transport/pump`);
        // on HTTP it runs its exchange there, alone or not (no task per request). Only on a
        // current-thread runtime: on a multi-thread one, handing the reading back to the reader
        // task when the call ends would wake another worker thread per call. Not from a thread
        // waiting on a runtime another thread drives (`base::driving`).
        let inline_on = (alone || self.transport.reads_inline_together())
            && self.transport.reads_inline()
            && on_current_thread_runtime()
            && !crate::base::driving::off_core();
        let sent = match params {
            Params::Owned(params) => {
                let message = jsonrpc::request(&id, method, Some(Value::Object(params)));
                self.transport.send(message).await
            }
            Params::Parts {
                params,
                apart,
                version,
                meta,
            } => {
                let meta = jsonrpc::MetaParts {
                    progress_token: token_key.as_deref(),
                    ..meta
                };
                match jsonrpc::request_line(self.transport.line_buffer(), &id, method, params, apart, meta) {
                    Ok(line) => {
                        let request = RequestLine {
                            id: &id,
                            method,
                            params,
                            apart,
                            version,
                            line,
                            inline: inline_on,
                        };
                        self.transport.send_line(request).await
                    }
                    Err(e) => Err(Error::unserialisable(e)),
                }
            }
        };
        // On failure `unanswered` forgets the request.
        sent?;
        unanswered.announce = wait.notify_cancel;

        let mut timer = wait.timeout.map(|t| Instant::now() + t);
        let mut hold_open = hold_rx.is_some();
        let mut inline = InlineRead {
            transport: &*self.transport,
            id: &id,
            on: inline_on,
            joined: false,
        };
        let outcome = loop {
            let until = match (timer, wait.deadline) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            tokio::select! {
                biased;
                answer = &mut rx => {
                    // Whoever sent the answer (or closed the session) removed the entry.
                    unanswered.armed = false;
                    self.forget_progress(token_key.as_deref());
                    return match answer {
                        Ok(answer) => answer.decode(&id),
                        Err(_) => Err(self.closed_error().unwrap_or_else(Error::closed)),
                    };
                }
                _ = sleep_until(until) => {
                    let what = format!("{method} (request {id})");
                    break match timer {
                        Some(t) if wait.deadline.is_none_or(|d| t <= d) => wait.timed_out(&what),
                        _ => wait.total_ran_out(&what),
                    };
                }
                _ = notified(activity.as_deref()), if wait.reset_on_progress && wait.timeout.is_some() => {
                    timer = wait.timeout.map(|t| Instant::now() + t);
                }
                changed = changed(hold_rx.as_mut()), if hold_open => {
                    // An authorization (a person at a browser) is not the server being slow.
                    match changed {
                        Ok(true) => timer = None,
                        Ok(false) => timer = wait.timeout.map(|t| Instant::now() + t),
                        Err(_) => hold_open = false,
                    }
                }
                _ = cancelled(wait.cancel.as_ref()) => {
                    break Error::new(ErrorKind::Cancelled, format!("{method} was cancelled (request {id})"));
                }
                _ = std::future::poll_fn(|cx| inline.poll(cx)), if inline.on => {
                    // Something was read: look at the answer again.
                }
            }
        };
        // Handed back before the cancellation, which may need the reading (or, on HTTP, the
        // exchange's task to abort). Announced below, where it can be awaited.
        drop(inline);
        unanswered.announce = false;
        drop(unanswered);
        if wait.notify_cancel {
            self.transport.cancel(id, outcome.message().to_string()).await;
        }
        Err(outcome)
    }

    /// Drops request `id`'s entry; true when it was still waiting on an open session.
    fn forget(&self, id: &RequestId, token: Option<&str>) -> bool {
        let mut st = self.state.lock().unwrap();
        let waiting = st.pending.remove(id).is_some();
        if let Some(t) = token {
            st.progress.remove(t);
        }
        waiting && st.closed.is_none()
    }

    /// Holds or releases the timeout of request `id` (see `Inbound::Paused`).
    fn hold(&self, id: &RequestId, paused: bool) {
        if let Some(hold) = self.state.lock().unwrap().pending.get(id).and_then(|p| p.hold.as_ref()) {
            let _ = hold.send(paused);
        }
    }

    fn forget_progress(&self, token: Option<&str>) {
        if let Some(t) = token {
            self.state.lock().unwrap().progress.remove(t);
        }
    }

    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<()> {
        if let Some(err) = self.closed_error() {
            return Err(err);
        }
        self.transport.send(jsonrpc::notification(method, params)).await
    }

    /// Opens a `subscriptions/listen` stream; events arrive on the returned receiver.
    pub async fn listen(&self, params: Map<String, Value>) -> Result<(RequestId, SubReceiver)> {
        let id = self.next_id();
        let (tx, rx) = sub_queue();
        {
            let mut st = self.state.lock().unwrap();
            if let Some(err) = &st.closed {
                return Err(err.clone());
            }
            st.subscriptions.insert(id.clone(), tx);
        }
        let message = jsonrpc::request(&id, methods::SUBSCRIPTIONS_LISTEN, Some(Value::Object(params)));
        if let Err(e) = self.transport.send(message).await {
            self.state.lock().unwrap().subscriptions.remove(&id);
            return Err(e);
        }
        Ok((id, rx))
    }

    /// Ends a subscription from the client side.
    pub async fn unlisten(&self, id: &RequestId) {
        if self.end_listen(id) {
            self.transport.cancel(id.clone(), LISTEN_CANCELLED.into()).await;
        }
    }

    /// As [`unlisten`](Session::unlisten), from a `Drop`: the server is told without waiting.
    pub fn drop_listen(&self, id: &RequestId) {
        if self.end_listen(id) {
            self.transport.abandon(id.clone(), LISTEN_CANCELLED.into());
        }
    }

    /// Closes subscription `id`'s queue; true when it was open.
    fn end_listen(&self, id: &RequestId) -> bool {
        let route = self.state.lock().unwrap().subscriptions.remove(id);
        route.is_some_and(|tx| {
            tx.close(Some(Error::new(ErrorKind::Cancelled, LISTEN_CANCELLED)));
            true
        })
    }

    /// Fails everything pending with `error` (the first reason sticks) and shuts the transport.
    pub async fn close(&self, error: Error) {
        self.fail_all(error);
        self.transport.close().await;
    }

    /// Sets what is told when the session ends (once).
    pub fn on_end(&self, f: EndFn) {
        let _ = self.on_end.set(f);
    }

    fn fail_all(&self, error: Error) {
        let (pending, subs, first) = {
            let mut st = self.state.lock().unwrap();
            let first = st.closed.is_none();
            if first {
                st.closed = Some(error);
            }
            st.progress.clear();
            (
                std::mem::take(&mut st.pending),
                std::mem::take(&mut st.subscriptions),
                first,
            )
        };
        let error = self.closed_error().unwrap_or_else(Error::closed);
        if let (true, Some(end)) = (first, self.on_end.get()) {
            end(SessionEnd::Closed(&error), self.session_id());
        }
        for (_, p) in pending {
            let _ = p.answer.send(Answer::Decoded(Err(error.clone())));
        }
        for (_, tx) in subs {
            tx.close(Some(error.clone()));
        }
    }

    fn complete(&self, id: &RequestId, answer: Answer) {
        let (tx, sub) = {
            let mut st = self.state.lock().unwrap();
            (st.pending.remove(id), st.subscriptions.remove(id))
        };
        if let Some(p) = tx {
            let _ = p.answer.send(answer);
        } else if let Some(sub) = sub {
            // A listen's response ends it: a result is a graceful close, an error a refusal.
            sub.close(answer.decode(id).err());
        }
        // Otherwise a late answer to a cancelled or timed-out request: ignored, as the spec says.
    }

    fn on_notification(self: &Arc<Self>, method: String, params: Value) {
        self.hooks.invalidate(&method, &params);
        match method.as_str() {
            // Progress belongs to its call's progress callback, not to the listener.
            methods::NOTIFY_PROGRESS => return self.on_progress(&params),
            methods::NOTIFY_CANCELLED => {
                // Servers end a listen on stdio with `notifications/cancelled` for its id.
                if let Some(id) = params.get("requestId").and_then(RequestId::from_value) {
                    let sub = self.state.lock().unwrap().subscriptions.remove(&id);
                    if let Some(tx) = sub {
                        tx.close(None);
                    }
                }
            }
            _ => {}
        }
        let sub_id = params
            .get("_meta")
            .and_then(|m| m.get(meta::SUBSCRIPTION_ID))
            .and_then(RequestId::from_value);
        if let Some(id) = sub_id {
            let route = self.state.lock().unwrap().subscriptions.get(&id).cloned();
            if let Some(tx) = route {
                let event = SubscriptionEvent::Notification {
                    method: method.clone(),
                    params: params.clone(),
                };
                if !tx.event(event) {
                    self.overflow(&id);
                }
            }
        }
        self.hooks.notify(&method, &params);
    }

    /// A subscription whose host left `SUBSCRIPTION_QUEUE` events untaken ends with an error
    /// (after the queued events), and the server is told to stop.
    fn overflow(self: &Arc<Self>, id: &RequestId) {
        let Some(tx) = self.state.lock().unwrap().subscriptions.remove(id) else {
            return;
        };
        tx.close(Some(Error::new(
            ErrorKind::Io,
            format!("the subscription was ended: {SUBSCRIPTION_QUEUE} events were waiting to be taken and more came"),
        )));
        drop(tx);
        let (s, id) = (self.clone(), id.clone());
        crate::base::spawn(async move { s.transport.cancel(id, "the client could not keep up".into()).await });
    }

    fn on_progress(&self, params: &Value) {
        let Some(token) = params.get("progressToken") else {
            return;
        };
        let key = match token {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let route = {
            let st = self.state.lock().unwrap();
            st.progress.get(&key).map(|r| (r.activity.clone(), r.callback.clone()))
        };
        if let Some((activity, callback)) = route {
            activity.notify_one();
            if let Some(cb) = callback {
                let progress = Progress {
                    progress: params.get("progress").and_then(Value::as_f64).unwrap_or(0.0),
                    total: params.get("total").and_then(Value::as_f64),
                    message: params.get("message").and_then(Value::as_str).map(str::to_string),
                };
                cb(&progress);
            }
        }
    }

    /// Takes a server→client request: answered by the registered handlers (legacy era), or
    /// refused at once (modern servers send none; too many in flight; before `initialize`
    /// completes only `ping` is expected).
    fn on_server_request(self: &Arc<Self>, id: RequestId, method: String, params: Value) {
        let era = self.era.load(Ordering::SeqCst);
        let refusal = if era == ERA_MODERN {
            Some(format!(
                "{method}: a 2026-07-28 server sends no requests (input comes through input_required results)"
            ))
        } else if era == ERA_UNKNOWN && method != methods::PING {
            Some(format!("{method}: the session is not initialized"))
        } else if self.server_requests.fetch_add(1, Ordering::SeqCst) >= MAX_SERVER_REQUESTS {
            self.server_requests.fetch_sub(1, Ordering::SeqCst);
            Some(format!(
                "{method}: {MAX_SERVER_REQUESTS} requests from the server are already being answered"
            ))
        } else {
            None
        };
        if let Some(why) = refusal {
            let code = if era == ERA_MODERN {
                codes::METHOD_NOT_FOUND
            } else {
                codes::INTERNAL_ERROR
            };
            let reply = jsonrpc::error_response(&id, code, &why);
            let s = self.clone();
            crate::base::spawn(async move {
                let _ = s.transport.send(reply).await;
            });
            return;
        }
        let s = self.clone();
        crate::base::spawn(async move {
            s.answer_server_request(id, method, params).await;
            s.server_requests.fetch_sub(1, Ordering::SeqCst);
        });
    }

    /// Answers a server→client request (legacy era) with the registered handlers.
    async fn answer_server_request(&self, id: RequestId, method: String, params: Value) {
        let reply = match method.as_str() {
            methods::PING => jsonrpc::result_response(&id, json!({})),
            _ => match self.hooks.handler_for_request(&method, Some(&params)) {
                None => jsonrpc::error_response(&id, codes::METHOD_NOT_FOUND, &format!("Method not found: {method}")),
                Some(handler) => {
                    let params = (!params.is_null()).then_some(params);
                    let request = InputRequest {
                        method: method.clone(),
                        params,
                        cancel: CancelToken::new(),
                    };
                    match handler.handle(request).await {
                        Ok(result) => jsonrpc::result_response(&id, result),
                        Err(e) => jsonrpc::error_response(&id, e.code.unwrap_or(codes::INTERNAL_ERROR), &e.message),
                    }
                }
            },
        };
        let _ = self.transport.send(reply).await;
    }
}

/// Waits for `notify` (forever without one).
async fn notified(notify: Option<&Notify>) {
    match notify {
        Some(n) => n.notified().await,
        None => std::future::pending().await,
    }
}

/// The next value of a hold switch (never without one).
async fn changed(hold: Option<&mut watch::Receiver<bool>>) -> std::result::Result<bool, watch::error::RecvError> {
    match hold {
        Some(rx) => {
            rx.changed().await?;
            Ok(*rx.borrow_and_update())
        }
        None => std::future::pending().await,
    }
}

pub(crate) async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

async fn read_loop(session: std::sync::Weak<Session>, mut inbound: InboundReceiver) {
    while let Some(event) = inbound.recv().await {
        let Some(session) = session.upgrade() else {
            return;
        };
        session.heard.note(&event);
        match event {
            // A batch (JSON-RPC 2.0, allowed up to 2025-03-26): its members one by one.
            Inbound::Message(Value::Array(batch)) => {
                if batch.is_empty() {
                    session.hooks.log("transport", "warning", "ignored an empty batch");
                }
                for message in batch {
                    on_message(&session, message);
                }
            }
            Inbound::Message(value) => on_message(&session, value),
            Inbound::Answer { id, line, result } => session.complete(&id, Answer::Line(line, result)),
            Inbound::RequestFailed { id, error } => session.complete(&id, Answer::Decoded(Err(error))),
            Inbound::Paused { id, paused } => session.hold(&id, paused),
            Inbound::Log { source, line } => session.log_line(source, &line),
            Inbound::Closed(error) => {
                session.fail_all(error);
                return;
            }
        }
    }
}

fn on_message(session: &Arc<Session>, value: Value) {
    match Incoming::classify(value) {
        Ok(Incoming::Result { id, result }) => session.complete(&id, Answer::Decoded(Ok(result))),
        Ok(Incoming::Error {
            id: Some(id),
            code,
            message,
            data,
        }) => session.complete(&id, Answer::Decoded(Err(Error::rpc(code, message, data)))),
        Ok(Incoming::Error {
            id: None,
            code,
            message,
            ..
        }) => session.hooks.log(
            "transport",
            "warning",
            &format!(
                "server error without an id: {code} {}",
                crate::untrusted::shown(&message)
            ),
        ),
        Ok(Incoming::Request { id, method, params }) => session.on_server_request(id, method, params),
        Ok(Incoming::Notification { method, params }) => session.on_notification(method, params),
        Err(why) => session
            .hooks
            .log("transport", "warning", &format!("ignored a message: {why}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::{inbound_channel, BoxFuture};
    use std::time::Duration;

    /// A server that never answers, over a transport that takes lines and reads inline; it
    /// records whether the session meant to read inline for each request.
    #[derive(Default)]
    struct Silent {
        inline: Arc<Mutex<Vec<bool>>>,
        abandoned: Arc<Mutex<Vec<RequestId>>>,
    }

    impl Transport for Silent {
        fn send(&self, _message: Value) -> BoxFuture<'_, Result<()>> {
            Box::pin(async { Ok(()) })
        }
        fn send_line(&self, request: RequestLine<'_>) -> BoxFuture<'_, Result<()>> {
            self.inline.lock().unwrap().push(request.inline);
            Box::pin(async { Ok(()) })
        }
        fn cancel(&self, _id: RequestId, _reason: String) -> BoxFuture<'_, ()> {
            Box::pin(async {})
        }
        fn abandon(&self, id: RequestId, _reason: String) {
            self.abandoned.lock().unwrap().push(id);
        }
        fn close(&self) -> BoxFuture<'_, ()> {
            Box::pin(async {})
        }
        fn takes_lines(&self) -> bool {
            true
        }
        fn reads_inline(&self) -> bool {
            true
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_request_whose_future_is_dropped_is_forgotten_and_announced() {
        let (_sender, receiver) = inbound_channel();
        let transport = Silent::default();
        let (inline, abandoned) = (transport.inline.clone(), transport.abandoned.clone());
        let session = Session::start(Box::new(transport), receiver, Arc::new(Hooks::default()));
        let params = Map::new();
        let parts = || Params::Parts {
            params: &params,
            apart: jsonrpc::Apart::default(),
            version: None,
            meta: jsonrpc::MetaParts {
                head: b"",
                trace: b"",
                log_level: None,
                progress_token: None,
            },
        };
        for _ in 0..2 {
            let waited = tokio::time::timeout(
                Duration::from_millis(20),
                session.request("tools/call", parts(), &Wait::default()),
            )
            .await;
            assert!(waited.is_err(), "the silent server cannot have answered");
        }
        assert!(session.state.lock().unwrap().pending.is_empty());
        // The second request was alone: the first one's dropped future did not stay pending.
        assert_eq!(*inline.lock().unwrap(), [true, true]);
        // Neither may be cancelled (`notify_cancel` off, as for `initialize`): nothing told.
        assert!(abandoned.lock().unwrap().is_empty());

        let cancellable = Wait {
            notify_cancel: true,
            ..Wait::default()
        };
        let waited = tokio::time::timeout(
            Duration::from_millis(20),
            session.request("tools/call", parts(), &cancellable),
        )
        .await;
        assert!(waited.is_err());
        assert_eq!(*abandoned.lock().unwrap(), [RequestId::Num(3)]);
        // A request that timed out by its own timeout is cancelled the awaited way, not abandoned.
        let timed = Wait {
            timeout: Some(Duration::from_millis(5)),
            ..cancellable
        };
        let outcome = session.request("tools/call", parts(), &timed).await;
        assert!(matches!(outcome, Err(e) if e.kind() == crate::error::ErrorKind::Timeout));
        assert_eq!(abandoned.lock().unwrap().len(), 1);
    }
}
