//! HTTP transports: modern Streamable HTTP (2026-07-28), legacy Streamable HTTP (2025-03-26 …
//! 2025-11-25: sessions, the GET stream, resumption) and the 2024-11-05 HTTP+SSE fallback.
//!
//! The transport sees every outgoing message and every answer, so the HTTP specifics live here:
//! the era of each message follows from what was sent (an `initialize` switches to the legacy
//! wire, everything else before that is modern and carries its version in `_meta`); the tool
//! cache is fed by the `tools/list` answers passing through; the legacy session id and version
//! come from the `initialize` answer.
//!
//! The endpoint's requests take the direct connections (`net::direct`) where they can; one
//! `reqwest::Client` per transport, made on first need, serves the rest ([`ServerClient`]).
//! Every body is read to its end (or the connection is dropped), and every message is bounded by
//! `max_message_bytes`.

mod authorize;
mod config;
pub(crate) mod headers;
mod inline;
mod legacy;
mod modern;
mod reply;
mod spare;
mod sse_legacy;
mod stream;

pub use authorize::{challenge, Authorization, Authorizer, Challenge, Link};
pub use config::HttpConfig;

use super::{BoxFuture, Inbound, InboundSender, RequestLine, Transport};
use crate::error::{Error, ErrorKind, Result};
use crate::net::direct::DirectOrigin;
use crate::net::proxy;
use crate::net::redact::chain;
use crate::net::request::{Fields, Request};
use crate::net::resolve::{pinned, Resolver};
use crate::net::tls;
use crate::protocol::{jsonrpc, methods, RequestId};
use headers::ToolCache;
use hyper::body::Bytes;
use reply::{Outcome, ERROR_BODY_MAX};
use reqwest::header::{HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::{Method, Url};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use stream::EventStream;
use tokio::task::AbortHandle;

/// Longest excerpt of an error body (or a bad event) quoted in a message.
const EXCERPT_MAX: usize = 300;
/// How long `close` waits for the legacy session's DELETE.
const DELETE_LIMIT: Duration = Duration::from_secs(2);

const ACCEPT_BOTH: &str = "application/json, text/event-stream";
const EVENT_STREAM: &str = "text/event-stream";
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";
pub(crate) const VERSION_HEADER: &str = "mcp-protocol-version";

/// Which wire the transport speaks now.
enum Wire {
    /// 2026-07-28 (also the state before anything legacy was sent).
    Modern,
    /// Streamable HTTP with `initialize` (2025-03-26 … 2025-11-25).
    Streamable(legacy::Session),
    /// 2024-11-05 HTTP+SSE: POSTs go to `endpoint`, answers come on the GET stream.
    Sse2024 { endpoint: Url },
}

#[derive(Default)]
struct Tasks {
    /// Request tasks by request id (cancelling aborts them).
    requests: HashMap<RequestId, AbortHandle>,
    /// Streams and other helpers, aborted on close.
    background: Vec<AbortHandle>,
}

struct State {
    wire: Wire,
    tools: ToolCache,
    /// The last modern version seen in `_meta` (for messages that carry none), with its header
    /// value (`None`: not a valid header value, so no header is sent).
    modern_version: Option<(String, Option<HeaderValue>)>,
}

pub(crate) struct Inner {
    cfg: Arc<HttpConfig>,
    url: Url,
    client: Arc<ServerClient>,
    /// Requests to the endpoint without reqwest, where it would add nothing (`net::direct`).
    direct: Option<Arc<DirectOrigin>>,
    base_headers: Fields,
    inbound: InboundSender,
    state: Mutex<State>,
    tasks: Mutex<Tasks>,
    /// A request's exchange run by its waiting caller (`inline`).
    inline: inline::InlineSlot,
    /// The buffer of an earlier request's body, for the next request's line (`spare`).
    spare: spare::SpareBody,
    /// Serialises legacy re-initialisation after a 404.
    reinit: tokio::sync::Mutex<()>,
    closed: AtomicBool,
    /// The HTTP version of the latest response (`network.protocol.version`): 0 none yet,
    /// 1 HTTP/1.1 (or 1.0), 2 HTTP/2.
    http_version: std::sync::atomic::AtomicU8,
    close_done: tokio::sync::Mutex<bool>,
    /// The authorization bound to this transport (OAuth, when configured): tokens for the
    /// requests, flows on 401/403.
    auth: Option<Box<dyn Authorization>>,
}

/// An HTTP connection to one MCP endpoint.
pub struct HttpTransport {
    inner: Arc<Inner>,
}

impl HttpTransport {
    /// Starts a connection to `cfg.url`, delivering what it receives to `inbound`; `auth`
    /// authorizes its requests (the client's).
    pub(crate) fn start(cfg: &HttpConfig, inbound: InboundSender, auth: Option<Arc<dyn Authorizer>>) -> Result<Self> {
        let url = cfg.parsed_url()?;
        let base_headers = Fields::from_map(cfg.header_map()?);
        let cfg = Arc::new(cfg.clone());
        let route = proxy::route(cfg.proxy.as_deref(), &url);
        let direct = DirectOrigin::for_endpoint(&url, pinned(&cfg.resolve), cfg.connect_timeout, route);
        let client = Arc::new(ServerClient {
            cfg: cfg.clone(),
            made: OnceLock::new(),
        });
        match direct {
            // Every request goes on the direct connections: what would refuse the client later
            // refuses the configuration now.
            Some(_) => drop(configured_proxy(&cfg)?),
            None => drop(client.get()?),
        }
        let auth = match auth {
            Some(authorizer) => {
                let log = inbound.clone();
                authorizer.bind(Link {
                    cfg: &cfg,
                    url: &url,
                    client: &client,
                    log: Arc::new(move |line| {
                        let _ = log.send(Inbound::Log { source: "auth", line });
                    }),
                })?
            }
            None => None,
        };
        Ok(HttpTransport {
            inner: Arc::new(Inner {
                cfg,
                url,
                client,
                direct,
                base_headers,
                inbound,
                state: Mutex::new(State {
                    wire: Wire::Modern,
                    tools: ToolCache::default(),
                    modern_version: None,
                }),
                tasks: Mutex::default(),
                inline: inline::InlineSlot::default(),
                spare: spare::SpareBody::default(),
                reinit: tokio::sync::Mutex::new(()),
                closed: AtomicBool::new(false),
                http_version: std::sync::atomic::AtomicU8::new(0),
                close_done: tokio::sync::Mutex::new(false),
                auth,
            }),
        })
    }
}

/// The MCP server's reqwest client (`net::tls`; proxies from the environment, or the
/// configuration's), made when something first needs it: the requests to the endpoint take the
/// direct connections (`net::direct`), so most transports never do (making it cost ~22k
/// instructions at connect, its proxy matcher included). Its users: the endpoint's requests
/// where the direct connections do not go (an `https://` proxy), the 2024 fallback's POST
/// endpoint, the legacy session's closing DELETE, and the OAuth flows' requests to the MCP
/// server's own origin.
pub struct ServerClient {
    cfg: Arc<HttpConfig>,
    made: OnceLock<reqwest::Client>,
}

impl ServerClient {
    pub fn get(&self) -> Result<&reqwest::Client> {
        if let Some(client) = self.made.get() {
            return Ok(client);
        }
        let client = build_client(&self.cfg)?;
        Ok(self.made.get_or_init(|| client))
    }
}

/// The configuration's proxy for reqwest (`None`: none set; `Some("")` turns the environment's off).
fn configured_proxy(cfg: &HttpConfig) -> Result<Option<reqwest::Proxy>> {
    match cfg.proxy.as_deref() {
        None | Some("") => Ok(None),
        Some(url) => reqwest::Proxy::all(url)
            .map(Some)
            .map_err(|e| Error::new(ErrorKind::InvalidArgument, format!("proxy: {}", chain(&e)))),
    }
}

fn build_client(cfg: &HttpConfig) -> Result<reqwest::Client> {
    let mut builder = tls::client_builder(cfg.url.starts_with("https:"), cfg.connect_timeout)?;
    if cfg.proxy.as_deref() == Some("") {
        builder = builder.no_proxy();
    } else if let Some(proxy) = configured_proxy(cfg)? {
        builder = builder.proxy(proxy);
    }
    if !cfg.resolve.is_empty() {
        builder = builder.dns_resolver(Resolver::new(pinned(&cfg.resolve), None));
    }
    builder
        .build()
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot create the HTTP client: {}", chain(&e))))
}

fn header_value(value: &str) -> Option<HeaderValue> {
    HeaderValue::from_str(value).ok()
}

impl Inner {
    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    fn closed_error() -> Error {
        Error::new(ErrorKind::Closed, "the HTTP transport is closed")
    }

    fn deliver(&self, message: Value) {
        let _ = self.inbound.send(Inbound::Message(message));
    }

    /// Delivers a message from a stream or a body (notifications, server requests), counted
    /// against the session's inbound budget: stream readers wait for `room` before each event,
    /// so a flooding server's stream is read no faster than the session handles it.
    fn deliver_metered(&self, message: Value, weight: usize) {
        let _ = self.inbound.send_metered(Inbound::Message(message), weight);
    }

    /// Waits until the session has room for more of a stream (see `deliver_metered`).
    async fn room(&self) {
        self.inbound.room(1).await;
    }

    fn fail(&self, id: RequestId, error: Error) {
        let _ = self.inbound.send(Inbound::RequestFailed { id, error });
    }

    fn log(&self, line: impl Into<String>) {
        let _ = self.inbound.send(Inbound::Log {
            source: "transport",
            line: line.into(),
        });
    }

    /// Runs `fut` as the task serving request `id` (cancel aborts it). The future comes boxed:
    /// a request's state (reqwest's, the stream's) is kilobytes, and moved by value it was
    /// copied several times on its way into the task; boxed, only the pointer moves.
    fn spawn_request(self: &Arc<Self>, id: RequestId, fut: BoxFuture<'static, ()>) {
        let inner = self.clone();
        let key = id.clone();
        // The lock is held across the spawn so the task cannot unregister before it registered.
        let mut tasks = self.tasks.lock().unwrap();
        let handle = tokio::spawn(async move {
            fut.await;
            inner.tasks.lock().unwrap().requests.remove(&key);
        });
        if let Some(old) = tasks.requests.insert(id, handle.abort_handle()) {
            old.abort();
        }
    }

    /// Runs a helper task (streams, drains) that `close` aborts.
    fn spawn_background<F>(&self, fut: F) -> AbortHandle
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let mut tasks = self.tasks.lock().unwrap();
        tasks.background.retain(|h| !h.is_finished());
        let handle = tokio::spawn(fut).abort_handle();
        tasks.background.push(handle.clone());
        handle
    }

    fn abort_request(&self, id: &RequestId) {
        if let Some(handle) = self.tasks.lock().unwrap().requests.remove(id) {
            handle.abort();
        }
    }

    /// A request to `url` with the configured headers, then `extra` on top.
    fn request<'a>(&self, method: Method, url: &'a Url, extra: Fields, body: Option<Bytes>) -> Request<'a> {
        Request::new(method, url, self.base_headers.overlaid(extra), body)
    }

    fn post<'a>(&self, url: &'a Url, body: &Value, extra: Fields) -> Result<Request<'a>> {
        // Room for a typical request at once (`to_vec` starts at 128 bytes and grows twice).
        let mut bytes = Vec::with_capacity(512);
        serde_json::to_writer(&mut bytes, body).map_err(Error::unserialisable)?;
        Ok(self.post_body(url, bytes.into(), extra))
    }

    /// A POST of `body` (JSON text; shared, so a resend copies nothing).
    fn post_body<'a>(&self, url: &'a Url, body: Bytes, mut extra: Fields) -> Request<'a> {
        extra.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        extra.insert(ACCEPT, HeaderValue::from_static(ACCEPT_BOTH));
        self.request(Method::POST, url, extra, Some(body))
    }

    fn get_stream_request<'a>(&self, url: &'a Url, mut extra: Fields) -> Request<'a> {
        extra.insert(ACCEPT, HeaderValue::from_static(EVENT_STREAM));
        self.request(Method::GET, url, extra, None)
    }

    /// Sends `message`: a request is started in its own task at once (the returned future is
    /// then ready and small); notifications and answers are sent by the future.
    fn send(self: Arc<Self>, message: Value) -> BoxFuture<'static, Result<()>> {
        if self.is_closed() {
            return Box::pin(std::future::ready(Err(Self::closed_error())));
        }
        let method = message.get("method").and_then(Value::as_str).map(str::to_string);
        let id = message.get("id").and_then(RequestId::from_value);
        match (method, id) {
            (Some(method), Some(id)) => {
                self.start_request(id, method, message);
                crate::base::done()
            }
            (Some(method), None) => Box::pin(async move { self.send_notification(&method, message).await }),
            (None, _) => Box::pin(async move { self.send_answer(message).await }),
        }
    }

    /// Sends a request the session wrote as a line: on the Streamable HTTP wires (modern and
    /// legacy) as the POST body it already is, the modern headers from the parts it was written
    /// from; `initialize` and the 2024 fallback's requests decoded, as `send` takes them.
    fn send_line(self: &Arc<Self>, request: RequestLine<'_>) -> BoxFuture<'static, Result<()>> {
        if self.is_closed() {
            return Box::pin(std::future::ready(Err(Self::closed_error())));
        }
        let (modern, legacy) = match self.state.lock().unwrap().wire {
            Wire::Modern => (true, false),
            Wire::Streamable(_) => (false, true),
            Wire::Sse2024 { .. } => (false, false),
        };
        if (modern || legacy) && request.method != methods::INITIALIZE {
            let headers = modern.then(|| self.modern_headers(&modern::HeaderSource::Parts(&request)));
            let mut body = request.line;
            if body.last() == Some(&b'\n') {
                body.pop();
            }
            let method: Cow<'static, str> = match modern::COMMON_METHODS.iter().find(|m| **m == request.method) {
                Some(known) => Cow::Borrowed(known),
                None => Cow::Owned(request.method.to_string()),
            };
            let id = request.id.clone();
            let (inner, task_id) = (self.clone(), id.clone());
            let body = Bytes::from(body);
            // One future per wire, each boxed as it is: in one, the legacy exchange's larger
            // state would make every modern request's box as large (and copied whole into it).
            let exchange: BoxFuture<'static, ()> = match headers {
                Some(headers) => Box::pin(async move {
                    let kept = body.clone();
                    inner.modern_request(task_id, method, body, Some(headers)).await;
                    // The body's buffer, for the next request's line.
                    inner.spare.keep(kept);
                }),
                None => Box::pin(async move {
                    let kept = body.clone();
                    inner.legacy_request(task_id, method, body, None).await;
                    inner.spare.keep(kept);
                }),
            };
            match request.inline {
                true => self.inline.park(id, exchange),
                false => self.spawn_request(id, exchange),
            }
            return crate::base::done();
        }
        match serde_json::from_slice(&request.line) {
            Ok(message) => self.clone().send(message),
            Err(e) => Box::pin(std::future::ready(Err(Error::unserialisable(e)))),
        }
    }

    fn start_request(self: &Arc<Self>, id: RequestId, method: String, message: Value) {
        enum Route {
            Modern,
            Streamable,
            Sse2024(Url),
        }
        let route = {
            let mut st = self.state.lock().unwrap();
            if method == methods::INITIALIZE && !matches!(st.wire, Wire::Sse2024 { .. }) {
                st.wire = Wire::Streamable(legacy::Session::new(message.clone()));
            }
            match &st.wire {
                Wire::Modern => Route::Modern,
                Wire::Streamable(_) => Route::Streamable,
                Wire::Sse2024 { endpoint } => Route::Sse2024(endpoint.clone()),
            }
        };
        let inner = self.clone();
        let task_id = id.clone();
        let fut: BoxFuture<'static, ()> = match route {
            Route::Modern | Route::Streamable => {
                let body = match serde_json::to_vec(&message) {
                    Ok(body) => Bytes::from(body),
                    Err(e) => return self.fail(id, Error::unserialisable(e)),
                };
                let initialize = (method == methods::INITIALIZE).then_some(message);
                Box::pin(async move {
                    match route {
                        Route::Modern => inner.modern_request(id, method.into(), body, None).await,
                        // `initialize` keeps its message for the 2024 fallback.
                        _ => inner.legacy_request(id, method.into(), body, initialize).await,
                    }
                })
            }
            Route::Sse2024(endpoint) => Box::pin(async move {
                if let Err(e) = inner.sse2024_post(&endpoint, &message).await {
                    inner.fail(id, e);
                }
            }),
        };
        self.spawn_request(task_id, fut);
    }

    async fn send_notification(self: &Arc<Self>, method: &str, message: Value) -> Result<()> {
        let endpoint = {
            let st = self.state.lock().unwrap();
            match &st.wire {
                Wire::Modern => None,
                Wire::Streamable(_) => Some(None),
                Wire::Sse2024 { endpoint } => Some(Some(endpoint.clone())),
            }
        };
        match endpoint {
            None => self.modern_notification(method, &message).await,
            Some(None) => self.legacy_one_way(Some(method), &message).await,
            Some(Some(endpoint)) => self.sse2024_post(&endpoint, &message).await,
        }
    }

    /// The client's answer to a server→client request (legacy only).
    async fn send_answer(self: &Arc<Self>, message: Value) -> Result<()> {
        let endpoint = {
            let st = self.state.lock().unwrap();
            match &st.wire {
                Wire::Sse2024 { endpoint } => Some(endpoint.clone()),
                _ => None,
            }
        };
        match endpoint {
            Some(endpoint) => self.sse2024_post(&endpoint, &message).await,
            None => self.legacy_one_way(None, &message).await,
        }
    }

    async fn cancel(self: Arc<Self>, id: RequestId, reason: String) {
        let wire = {
            let st = self.state.lock().unwrap();
            match &st.wire {
                Wire::Modern => None,
                Wire::Streamable(_) => Some(None),
                Wire::Sse2024 { endpoint } => Some(Some(endpoint.clone())),
            }
        };
        match wire {
            // Modern: closing the response stream is the cancellation.
            None => self.abort_request(&id),
            Some(endpoint) => {
                let params = serde_json::json!({"requestId": id.to_value(), "reason": reason});
                let note = jsonrpc::notification(methods::NOTIFY_CANCELLED, Some(params));
                let sent = match endpoint {
                    Some(endpoint) => self.sse2024_post(&endpoint, &note).await,
                    None => self.legacy_one_way(Some(methods::NOTIFY_CANCELLED), &note).await,
                };
                if let Err(e) = sent {
                    self.log(format!(
                        "could not send the cancellation of request {id}: {}",
                        e.message()
                    ));
                }
                // A disconnect is no cancellation on this wire, but nobody waits for the answer.
                self.abort_request(&id);
            }
        }
    }

    async fn close(self: Arc<Self>) {
        let mut done = self.close_done.lock().await;
        if *done {
            return;
        }
        self.closed.store(true, Ordering::SeqCst);
        {
            let mut tasks = self.tasks.lock().unwrap();
            for (_, handle) in tasks.requests.drain() {
                handle.abort();
            }
            for handle in tasks.background.drain(..) {
                handle.abort();
            }
        }
        self.end_legacy_session().await;
        let _ = self.inbound.send(Inbound::Closed(Error::new(
            ErrorKind::Closed,
            "the client closed the connection",
        )));
        *done = true;
    }

    fn abort_all(&self) {
        self.inline.clear();
        let mut tasks = self.tasks.lock().unwrap();
        for (_, handle) in tasks.requests.drain() {
            handle.abort();
        }
        for handle in tasks.background.drain(..) {
            handle.abort();
        }
    }
}

/// The start of a body or event for a message, bounded.
fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.chars().count() > EXCERPT_MAX {
        format!("{}…", text.chars().take(EXCERPT_MAX).collect::<String>())
    } else {
        text.to_string()
    }
}

/// How long a cancelled call waits for its cancellation notice to be sent (legacy HTTP POSTs it).
const CANCEL_NOTICE_WAIT: Duration = Duration::from_millis(500);

impl Transport for HttpTransport {
    fn send(&self, message: Value) -> BoxFuture<'_, Result<()>> {
        self.inner.clone().send(message)
    }

    fn protocol_version(&self) -> Option<&'static str> {
        match self.inner.http_version.load(Ordering::Relaxed) {
            1 => Some("1.1"),
            2 => Some("2"),
            _ => None,
        }
    }

    fn origin(&self) -> Option<String> {
        Some(self.inner.url.origin().ascii_serialization())
    }

    fn session_id(&self) -> Option<String> {
        match &self.inner.state.lock().unwrap().wire {
            Wire::Streamable(session) => session.id().map(str::to_string),
            _ => None,
        }
    }

    fn send_line(&self, request: RequestLine<'_>) -> BoxFuture<'_, Result<()>> {
        self.inner.send_line(request)
    }

    fn line_buffer(&self) -> Vec<u8> {
        self.inner.spare.take()
    }

    fn takes_lines(&self) -> bool {
        true
    }

    fn reads_inline(&self) -> bool {
        true
    }

    fn reads_inline_together(&self) -> bool {
        true
    }

    fn poll_read_inline(
        &self,
        cx: &mut std::task::Context<'_>,
        id: &RequestId,
        _joined: &mut bool,
    ) -> std::task::Poll<()> {
        self.inner.inline.poll(cx, id)
    }

    fn end_read_inline(&self, id: &RequestId, _joined: bool) {
        // Unfinished: on in a task of its own (none without a runtime: nothing could run it).
        if let Some(exchange) = self.inner.inline.take(id) {
            if !self.inner.is_closed() && tokio::runtime::Handle::try_current().is_ok() {
                self.inner.spawn_request(id.clone(), exchange);
            }
        }
    }

    fn cancel(&self, id: RequestId, reason: String) -> BoxFuture<'_, ()> {
        // A server that never answers the cancellation POST must not hold the cancelled call
        // past its bound: the notice goes on in a task, awaited only briefly.
        let task = tokio::spawn(self.inner.clone().cancel(id, reason));
        Box::pin(async move {
            let _ = tokio::time::timeout(CANCEL_NOTICE_WAIT, task).await;
        })
    }

    fn abandon(&self, id: RequestId, reason: String) {
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn(self.inner.clone().cancel(id, reason))),
            // Nothing could run a legacy POST: the exchange at least ends (the modern wire's
            // cancellation).
            Err(_) => self.inner.abort_request(&id),
        }
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        let inner = self.inner.clone();
        Box::pin(inner.close())
    }

    fn may_pause(&self) -> bool {
        self.inner.auth.is_some()
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        // Dropped without `close`: stop every stream and request task.
        self.inner.closed.store(true, Ordering::SeqCst);
        self.inner.abort_all();
    }
}
