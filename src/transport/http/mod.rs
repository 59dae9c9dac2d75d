//! HTTP transports: modern Streamable HTTP (2026-07-28), legacy Streamable HTTP (2025-03-26 …
//! 2025-11-25: sessions, the GET stream, resumption) and the 2024-11-05 HTTP+SSE fallback.
//!
//! The transport sees every outgoing message and every answer, so the HTTP specifics live here:
//! the era of each message follows from what was sent (an `initialize` switches to the legacy
//! wire, everything else before that is modern and carries its version in `_meta`); the tool
//! cache is fed by the `tools/list` answers passing through; the legacy session id and version
//! come from the `initialize` answer.
//!
//! One `reqwest::Client` per transport (keep-alive, `TCP_NODELAY`); every body is read to its end
//! (or the connection is dropped), and every message is bounded by `max_message_bytes`.

pub(crate) mod headers;
mod legacy;
mod modern;
mod sse_legacy;

pub use headers::{encode_value as encode_header_value, tool_headers, ParamHeader, ToolHeaders};

use super::framing::scan_top_level_id;
use super::sse::{SseItem, SseParser};
use super::{BoxFuture, Inbound, InboundSender, Transport};
use crate::auth::{AuthContext, Challenge, OAuthConfig};
use crate::error::{Error, ErrorKind, Result};
use crate::net::policy::Guard;
use crate::net::redact::{self, chain};
use crate::net::resolve::Resolver;
use crate::protocol::{jsonrpc, methods, RequestId};
use headers::ToolCache;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use reqwest::{Method, StatusCode, Url};
use serde_json::Value;
use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::AbortHandle;

/// Largest error-status body read for its JSON-RPC error or an excerpt.
const ERROR_BODY_MAX: usize = 64 * 1024;
/// Longest excerpt of an error body quoted in a message.
const EXCERPT_MAX: usize = 300;
/// How long the rest of a stream is read after its answer before the connection is dropped.
const DRAIN_LIMIT: Duration = Duration::from_secs(2);
/// How long `close` waits for the legacy session's DELETE.
const DELETE_LIMIT: Duration = Duration::from_secs(2);

const ACCEPT_BOTH: &str = "application/json, text/event-stream";
const EVENT_STREAM: &str = "text/event-stream";
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";
pub(crate) const VERSION_HEADER: &str = "mcp-protocol-version";

#[derive(Clone)]
pub struct HttpConfig {
    /// The MCP endpoint (`http://` or `https://`).
    pub url: String,
    /// Extra headers sent on every request.
    pub headers: Vec<(String, String)>,
    /// Sent as `Authorization: Bearer <token>` on every request (never in the URL).
    pub bearer_token: Option<String>,
    /// Bound on one incoming message (a JSON body or one SSE event's data), in bytes.
    pub max_message_bytes: usize,
    /// TCP/TLS connect timeout; also how long the 2024-11-05 fallback waits for its `endpoint`.
    pub connect_timeout: Duration,
    /// Consecutive failed reconnections of a legacy SSE stream before it is given up.
    pub max_reconnect_attempts: u32,
    /// OAuth 2.1 authorization (`crate::auth`): on a 401 the client discovers the
    /// authorization server and obtains a token itself. Exclusive with `bearer_token`.
    pub oauth: Option<Box<OAuthConfig>>,
    /// Let a bearer token (static or OAuth) and OAuth requests go over plain `http://` to hosts
    /// other than loopback. Off: tokens travel over https, or plain http to loopback only.
    pub allow_insecure_http: bool,
    /// Host names pinned to addresses (like curl's `--resolve`), for every request of this
    /// client; the authorization client's address checks still apply to them.
    pub resolve: Vec<(String, Vec<IpAddr>)>,
}

impl HttpConfig {
    pub fn new(url: impl Into<String>) -> Self {
        HttpConfig {
            url: url.into(),
            headers: Vec::new(),
            bearer_token: None,
            max_message_bytes: 8 * 1024 * 1024,
            connect_timeout: Duration::from_secs(10),
            max_reconnect_attempts: 5,
            oauth: None,
            allow_insecure_http: false,
            resolve: Vec::new(),
        }
    }

    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// Checks the URL and the headers; the errors name what is wrong.
    pub fn validate(&self) -> Result<()> {
        let url = self.parsed_url()?;
        if self.oauth.is_some() && self.bearer_token.is_some() {
            return Err(Error::invalid(
                "bearer_token and oauth exclude each other: a static token or OAuth, not both",
            ));
        }
        let headers = self.header_map()?;
        if self.oauth.is_some() && headers.contains_key(AUTHORIZATION) {
            return Err(Error::invalid(
                "with oauth, the Authorization header is the library's; remove it from headers",
            ));
        }
        // One rule for every token: over plain http only to loopback, unless the host says so.
        let sends_token = self.bearer_token.is_some() || self.oauth.is_some() || headers.contains_key(AUTHORIZATION);
        if sends_token && url.scheme() == "http" && !self.allow_insecure_http && !crate::net::policy::is_loopback(&url)
        {
            return Err(Error::invalid(
                "a token (bearer_token, oauth or an Authorization header) goes over plain http only to a loopback \
                 host; use https, or set allow_insecure_http",
            ));
        }
        Ok(())
    }

    fn parsed_url(&self) -> Result<Url> {
        // The URL itself is not quoted: it may carry a key in its query.
        let url = Url::parse(&self.url).map_err(|e| Error::invalid(format!("url is not a valid URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Error::invalid(format!(
                "url {} must be http:// or https://",
                redact::url(&url)
            )));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(Error::invalid(
                "the url must not carry credentials; use bearer_token or headers",
            ));
        }
        Ok(url)
    }

    /// The configured headers plus `Authorization`.
    fn header_map(&self) -> Result<HeaderMap> {
        let mut map = HeaderMap::new();
        for (name, value) in &self.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| Error::invalid(format!("header name {name:?} is not valid")))?;
            let value = HeaderValue::from_str(value)
                .map_err(|_| Error::invalid(format!("the value of header {name} is not a valid header value")))?;
            map.append(name, value);
        }
        if let Some(token) = &self.bearer_token {
            let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|_| Error::invalid("bearer_token contains characters a header cannot carry"))?;
            value.set_sensitive(true);
            map.insert(AUTHORIZATION, value);
        }
        Ok(map)
    }
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header values and the token stay out of logs.
        f.debug_struct("HttpConfig")
            .field("url", &redact::url_text(&self.url))
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            )
            .field("bearer_token", &self.bearer_token.as_ref().map(|_| "<redacted>"))
            .field("max_message_bytes", &self.max_message_bytes)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_reconnect_attempts", &self.max_reconnect_attempts)
            .field("oauth", &self.oauth)
            .field("allow_insecure_http", &self.allow_insecure_http)
            .field("resolve", &self.resolve)
            .finish()
    }
}

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
    /// The last modern version seen in `_meta` (for messages that carry none).
    modern_version: Option<String>,
}

/// A request's timer held while an authorization runs; dropping it restarts the timer.
struct Hold {
    inbound: InboundSender,
    id: Option<RequestId>,
}

impl Drop for Hold {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let _ = self.inbound.send(Inbound::Paused { id, paused: false });
        }
    }
}

pub(crate) struct Inner {
    cfg: HttpConfig,
    url: Url,
    client: reqwest::Client,
    base_headers: HeaderMap,
    inbound: InboundSender,
    state: Mutex<State>,
    tasks: Mutex<Tasks>,
    /// Serialises legacy re-initialisation after a 404.
    reinit: tokio::sync::Mutex<()>,
    closed: AtomicBool,
    close_done: tokio::sync::Mutex<bool>,
    /// OAuth, when configured: tokens for the requests, flows on 401/403.
    auth: Option<Arc<AuthContext>>,
    /// The authorization flows' own client (for URLs off the MCP server's origin) and the
    /// guard it applies; present with `auth`.
    auth_net: Option<(reqwest::Client, Arc<Guard>)>,
}

/// An HTTP connection to one MCP endpoint.
pub struct HttpTransport {
    inner: Arc<Inner>,
}

impl HttpTransport {
    pub fn start(cfg: &HttpConfig, inbound: InboundSender) -> Result<Self> {
        Self::start_with_auth(cfg, inbound, None)
    }

    /// As [`HttpTransport::start`], with the client's authorization state (used when OAuth is
    /// configured).
    pub(crate) fn start_with_auth(
        cfg: &HttpConfig,
        inbound: InboundSender,
        auth: Option<Arc<AuthContext>>,
    ) -> Result<Self> {
        let url = cfg.parsed_url()?;
        let base_headers = cfg.header_map()?;
        let client = build_client(cfg)?;
        let auth = auth.filter(|a| a.enabled());
        let auth_net = match (&auth, &cfg.oauth) {
            (Some(_), Some(oauth)) => Some(build_auth_client(cfg, &url, oauth)?),
            _ => None,
        };
        Ok(HttpTransport {
            inner: Arc::new(Inner {
                cfg: cfg.clone(),
                url,
                client,
                base_headers,
                inbound,
                state: Mutex::new(State {
                    wire: Wire::Modern,
                    tools: ToolCache::default(),
                    modern_version: None,
                }),
                tasks: Mutex::default(),
                reinit: tokio::sync::Mutex::new(()),
                closed: AtomicBool::new(false),
                close_done: tokio::sync::Mutex::new(false),
                auth: auth_net.as_ref().and(auth),
                auth_net,
            }),
        })
    }
}

/// An HTTP client with this crate's TLS setup and no redirects, for one-off requests.
pub(crate) fn plain_client(url: &str, connect_timeout: Duration) -> Result<reqwest::Client> {
    let mut cfg = HttpConfig::new(url);
    cfg.connect_timeout = connect_timeout;
    build_client(&cfg)
}

/// The host's pinned names (`resolve`), as the resolver reads them.
fn overrides(cfg: &HttpConfig) -> Arc<crate::net::resolve::Overrides> {
    Arc::new(
        cfg.resolve
            .iter()
            .map(|(name, addrs)| (crate::net::policy::normalize(name), addrs.clone()))
            .collect(),
    )
}

/// The MCP server's client: see [`client_builder`]; proxies from the environment.
fn build_client(cfg: &HttpConfig) -> Result<reqwest::Client> {
    let mut builder = client_builder(cfg)?;
    if !cfg.resolve.is_empty() {
        builder = builder.dns_resolver(Resolver::new(overrides(cfg), None));
    }
    builder
        .build()
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot create the HTTP client: {}", chain(&e))))
}

/// The authorization flows' client for URLs the MCP server chose (security.md §1): every DNS
/// answer passes the guard before it is dialled, and no proxy is used (a proxy would resolve
/// the names itself, out of the guard's sight). Redirects are never followed (as everywhere).
fn build_auth_client(cfg: &HttpConfig, url: &Url, oauth: &OAuthConfig) -> Result<(reqwest::Client, Arc<Guard>)> {
    let guard = Guard::new(
        url,
        oauth.allow_http || cfg.allow_insecure_http,
        oauth.allow_private_networks,
        &oauth.allow_hosts,
        &oauth.deny_hosts,
    )
    .map(Arc::new)
    .map_err(|e| Error::invalid(format!("oauth.{e}")))?;
    let client = client_builder(cfg)?
        .no_proxy()
        .dns_resolver(Resolver::new(overrides(cfg), Some(guard.clone())))
        .build()
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot create the HTTP client: {}", chain(&e))))?;
    Ok((client, guard))
}

/// rustls with the `ring` provider, certificates checked by the platform verifier (the OS trust
/// store, so enterprise roots work), HTTP/1.1 with keep-alive and `TCP_NODELAY`, no redirects.
fn client_builder(cfg: &HttpConfig) -> Result<reqwest::ClientBuilder> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier: Arc<dyn rustls::client::danger::ServerCertVerifier> =
        match rustls_platform_verifier::Verifier::new(provider.clone()) {
            Ok(v) => Arc::new(v),
            // A plain-http server needs no trust store; keep working where none is installed.
            Err(e) if !cfg.url.starts_with("https:") => Arc::new(NoTrustStore(e.to_string(), provider.clone())),
            Err(e) => {
                return Err(Error::new(
                    ErrorKind::Io,
                    format!("cannot set up TLS certificate verification: {e}"),
                ))
            }
        };
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::new(ErrorKind::Internal, format!("TLS setup failed: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .tcp_nodelay(true)
        .connect_timeout(cfg.connect_timeout)
        .pool_idle_timeout(Duration::from_secs(90))
        .redirect(reqwest::redirect::Policy::none()))
}

/// Refuses every certificate, saying why: used for plain-http servers on machines without a
/// trust store, where no handshake is expected at all.
#[derive(Debug)]
struct NoTrustStore(String, Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for NoTrustStore {
    fn verify_server_cert(
        &self,
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &[rustls::pki_types::CertificateDer<'_>],
        _: &rustls::pki_types::ServerName<'_>,
        _: &[u8],
        _: rustls::pki_types::UnixTime,
    ) -> std::result::Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Err(rustls::Error::General(format!(
            "no TLS trust store is available: {}",
            self.0
        )))
    }

    fn verify_tls12_signature(
        &self,
        _: &[u8],
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        Err(rustls::Error::General(format!(
            "no TLS trust store is available: {}",
            self.0
        )))
    }

    fn verify_tls13_signature(
        &self,
        _: &[u8],
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        Err(rustls::Error::General(format!(
            "no TLS trust store is available: {}",
            self.0
        )))
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.1.signature_verification_algorithms.supported_schemes()
    }
}

/// What to do about a request that never got an HTTP answer, for the causes newcomers meet.
fn connect_hint(cause: &str, scheme: &str) -> &'static str {
    let lower = cause.to_ascii_lowercase();
    if scheme == "https" && (lower.contains("invalidcontenttype") || lower.contains("corrupt message")) {
        "; the server at this address does not speak TLS: if it serves plain HTTP, use an http:// URL"
    } else if lower.contains("connection refused") {
        "; nothing accepts connections at this address: is the server running, on this host and port?"
    } else if lower.contains("dns error") || lower.contains("failed to lookup address") {
        "; the host name does not resolve: check the URL"
    } else if scheme == "http" && lower.contains("connection reset") {
        "; the server dropped the connection: if it serves HTTPS, use an https:// URL"
    } else {
        ""
    }
}

/// What to do about an HTTP status at connect, by status.
pub(super) fn status_hint(status: u16) -> &'static str {
    match status {
        404 => "nothing serves MCP at this URL: check its path (MCP endpoints are often at /mcp)",
        405 => "this URL does not accept POST: check that it is the MCP endpoint (often /mcp)",
        400 => "the server refused the request: check that the URL is an MCP endpoint and whether it needs headers (\"headers\", \"bearer_token\")",
        _ => "check the URL and the server's logs",
    }
}

/// What a POST (or a resuming GET) produced for the request it carried.
enum Outcome {
    /// The answer; `rest` is the stream it came on, to be drained after delivery.
    Answer {
        message: Value,
        rest: Option<Box<EventStream>>,
    },
    /// 202 or an empty 2xx body.
    Accepted,
    /// An error status without a JSON-RPC answer in the body.
    Status { status: StatusCode, excerpt: String },
    /// The reply ended without the answer; a legacy stream may be resumed from `last_event_id`.
    Ended {
        why: String,
        last_event_id: Option<String>,
        retry: Option<Duration>,
    },
}

/// A reply with its status and session id header.
struct Exchange {
    outcome: Outcome,
    status: StatusCode,
    session_id: Option<String>,
}

/// A `text/event-stream` body being read.
pub(crate) struct EventStream {
    response: reqwest::Response,
    parser: SseParser,
    ended: bool,
}

impl EventStream {
    fn new(response: reqwest::Response, max: usize) -> Self {
        EventStream {
            response,
            parser: SseParser::new(max),
            ended: false,
        }
    }

    /// The next item; `Ok(None)` at the end of the body.
    async fn next(&mut self) -> Result<Option<SseItem>> {
        loop {
            if let Some(item) = self.parser.next_item() {
                return Ok(Some(item));
            }
            if self.ended {
                return Ok(None);
            }
            match self.response.chunk().await {
                Ok(Some(bytes)) => self.parser.feed(&bytes),
                Ok(None) => {
                    self.ended = true;
                    self.parser.finish();
                }
                Err(e) => {
                    self.ended = true;
                    self.parser.finish();
                    return Err(Error::new(
                        ErrorKind::Io,
                        format!("the event stream broke: {}", redact::http_error(e)),
                    ));
                }
            }
        }
    }

    fn last_event_id(&self) -> Option<String> {
        self.parser.last_event_id().map(str::to_string)
    }

    fn retry(&self) -> Option<Duration> {
        self.parser.retry()
    }
}

/// What one stream item meant for the request being served.
enum Found {
    Answer(Value),
    Nothing,
}

fn is_response(message: &Value) -> bool {
    message.get("method").is_none() && (message.get("result").is_some() || message.get("error").is_some())
}

fn is_json_rpc_error(message: &Value) -> bool {
    message.get("jsonrpc").is_some()
        && message
            .get("error")
            .and_then(|e| e.get("code"))
            .is_some_and(Value::is_i64)
}

fn header_value(value: &str) -> Option<HeaderValue> {
    HeaderValue::from_str(value).ok()
}

/// Every `WWW-Authenticate` value of an answer.
fn challenge_values(response: &reqwest::Response) -> Vec<&str> {
    response
        .headers()
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect()
}

/// The `WWW-Authenticate` values of an answer, joined, for the error.
fn www_authenticate(response: &reqwest::Response) -> Option<String> {
    let values = challenge_values(response);
    (!values.is_empty()).then(|| values.join(", "))
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

    /// Runs `fut` as the task serving request `id` (cancel aborts it).
    fn spawn_request<F>(self: &Arc<Self>, id: RequestId, fut: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
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
    fn request(&self, method: Method, url: &Url, extra: HeaderMap) -> reqwest::RequestBuilder {
        let mut headers = self.base_headers.clone();
        for (name, value) in extra {
            if let Some(name) = name {
                headers.insert(name, value);
            }
        }
        self.client.request(method, url.clone()).headers(headers)
    }

    fn post(&self, url: &Url, body: &Value, mut extra: HeaderMap) -> Result<reqwest::RequestBuilder> {
        let bytes = serde_json::to_vec(body).map_err(|e| Error::invalid(format!("unserialisable message: {e}")))?;
        extra.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        extra.insert(ACCEPT, HeaderValue::from_static(ACCEPT_BOTH));
        Ok(self.request(Method::POST, url, extra).body(bytes))
    }

    fn get_stream_request(&self, url: &Url, mut extra: HeaderMap) -> reqwest::RequestBuilder {
        extra.insert(ACCEPT, HeaderValue::from_static(EVENT_STREAM));
        self.request(Method::GET, url, extra)
    }

    async fn send_http(&self, request: reqwest::RequestBuilder, what: &str) -> Result<reqwest::Response> {
        self.send_for(request, what, None).await
    }

    async fn execute(&self, request: reqwest::Request, what: &str) -> Result<reqwest::Response> {
        self.client.execute(request).await.map_err(|e| {
            let cause = redact::http_error(e);
            let hint = connect_hint(&cause, self.url.scheme());
            Error::new(
                ErrorKind::Io,
                format!("{what} to {} failed: {cause}{hint}", redact::url(&self.url)),
            )
        })
    }

    /// What an OAuth flow needs from this transport.
    fn auth_io(&self) -> crate::auth::Io {
        let inbound = self.inbound.clone();
        let (guarded, guard) = self.auth_net.clone().expect("an auth client exists whenever auth does");
        crate::auth::Io::new(
            self.client.clone(),
            &self.url,
            guarded,
            guard,
            Arc::new(move |line| {
                let _ = inbound.send(Inbound::Log { source: "auth", line });
            }),
        )
    }

    /// Stops the session's timer for request `id` while an authorization runs, until the
    /// returned guard is dropped: however the authorization ends (an error, a panic unwinding
    /// through it, the request's task aborted), the timer runs again, so the call can time out.
    fn hold(&self, id: Option<&RequestId>) -> Hold {
        let id = id.cloned();
        if let Some(id) = &id {
            let _ = self.inbound.send(Inbound::Paused {
                id: id.clone(),
                paused: true,
            });
        }
        Hold {
            inbound: self.inbound.clone(),
            id,
        }
    }

    /// The `AuthRequired` error for a refused answer (its body is read and dropped).
    async fn refusal(&self, mut response: reqwest::Response, what: &str, why: &str) -> Error {
        let status = response.status();
        let challenge = www_authenticate(&response);
        let _ = Self::read_bounded(&mut response, ERROR_BODY_MAX).await;
        Error::new(
            ErrorKind::AuthRequired,
            format!("{what}: HTTP {status} from {}: {why}", redact::url(&self.url)),
        )
        .with_http_status(status.as_u16())
        .with_www_authenticate(challenge)
    }

    /// Sends one request of this transport (`id`: the JSON-RPC request it carries). Without
    /// OAuth a 401 (or a 403 with a Bearer challenge) is `AuthRequired`. With OAuth the token
    /// is attached (only on the server's origin), a 401 runs the authorization and the request
    /// is sent again (twice at most), and a 403 `insufficient_scope` re-authorizes with more
    /// scope (`max_step_up` times at most). The session's timeout for `id` is held meanwhile.
    async fn send_for(
        &self,
        request: reqwest::RequestBuilder,
        what: &str,
        id: Option<&RequestId>,
    ) -> Result<reqwest::Response> {
        let request = request.build().map_err(|e| {
            Error::new(
                ErrorKind::Internal,
                format!("{what}: cannot build the request: {}", redact::http_error(e)),
            )
        })?;
        let Some(auth) = self.auth.clone() else {
            let response = self.execute(request, what).await?;
            let status = response.status();
            let bearer = Challenge::parse(challenge_values(&response)).bearer;
            return if status == StatusCode::UNAUTHORIZED || (status == StatusCode::FORBIDDEN && bearer) {
                let hint = if self.cfg.bearer_token.is_some() {
                    "the server refused the bearer token"
                } else {
                    "the server requires authorization (configure oauth or bearer_token)"
                };
                Err(self.refusal(response, what, hint).await)
            } else {
                Ok(response)
            };
        };
        let io = self.auth_io();
        let (mut authorizations, mut step_ups) = (0u32, 0u32);
        let mut dpop_nonce_retried = false;
        loop {
            let mut attempt = request
                .try_clone()
                .ok_or_else(|| Error::new(ErrorKind::Internal, format!("{what}: the request cannot be repeated")))?;
            let url = attempt.url().clone();
            let method = attempt.method().clone();
            let used = auth.authorize_request(&io, &method, &url, attempt.headers_mut()).await;
            let response = self.execute(attempt, what).await?;
            let status = response.status();
            let challenge = Challenge::parse(challenge_values(&response));
            // DPoP: keep the server's nonce; a 401 asking for it is sent again once, at once.
            if auth.dpop_nonce_retry(&url, status.as_u16(), response.headers(), &challenge) && !dpop_nonce_retried {
                dpop_nonce_retried = true;
                continue;
            }
            if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
                return Ok(response);
            }
            let header = www_authenticate(&response);
            let outcome = if status == StatusCode::UNAUTHORIZED {
                if authorizations >= 2 {
                    return Err(self
                        .refusal(response, what, "the server refused the token it was just given")
                        .await);
                }
                authorizations += 1;
                drop(response);
                let _held = self.hold(id);
                auth.unauthorized(&io, &challenge, used).await.map(|()| true)
            } else if challenge.is_insufficient_scope() {
                if step_ups >= auth.max_step_up() {
                    return Err(self
                        .refusal(response, what, "the server still wants more scope; giving up")
                        .await);
                }
                step_ups += 1;
                drop(response);
                let _held = self.hold(id);
                auth.insufficient_scope(&io, &challenge, used).await
            } else if challenge.bearer {
                return Err(self.refusal(response, what, "the server refused the token").await);
            } else {
                return Ok(response);
            };
            match outcome {
                Ok(true) => continue,
                Ok(false) => {
                    let why = "the server wants scope that was already asked for; giving up";
                    return Err(Error::new(
                        ErrorKind::AuthRequired,
                        format!("{what}: HTTP {status} from {}: {why}", redact::url(&self.url)),
                    )
                    .with_http_status(status.as_u16())
                    .with_www_authenticate(header));
                }
                Err(e) => {
                    return Err(e
                        .context(&format!(
                            "{what}: HTTP {status} from {}: authorization failed",
                            redact::url(&self.url)
                        ))
                        .with_http_status(status.as_u16())
                        .with_www_authenticate(header))
                }
            }
        }
    }

    /// The token for a request sent without the 401 handling (the closing DELETE).
    async fn attach_token(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let Some(auth) = &self.auth else {
            return request;
        };
        let Some(mut built) = request.try_clone().and_then(|r| r.build().ok()) else {
            return request;
        };
        let mut headers = HeaderMap::new();
        let method = built.method().clone();
        if auth
            .authorize_request(&self.auth_io(), &method, built.url(), &mut headers)
            .await
            .is_some()
        {
            built.headers_mut().extend(headers);
        }
        reqwest::RequestBuilder::from_parts(self.client.clone(), built)
    }

    /// Reads a body to its end, up to `max` bytes; `Err(len)` when it is longer (the rest is not
    /// read and the connection is dropped with the response).
    async fn read_bounded(response: &mut reqwest::Response, max: usize) -> Result<std::result::Result<Vec<u8>, usize>> {
        if let Some(len) = response.content_length() {
            if len as usize > max {
                return Ok(Err(len as usize));
            }
        }
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(bytes)) => {
                    if body.len() + bytes.len() > max {
                        return Ok(Err(body.len() + bytes.len()));
                    }
                    body.extend_from_slice(&bytes);
                }
                Ok(None) => return Ok(Ok(body)),
                Err(e) => {
                    return Err(Error::new(
                        ErrorKind::Io,
                        format!("reading the response failed: {}", redact::http_error(e)),
                    ))
                }
            }
        }
    }

    fn too_large(&self, len: usize) -> Error {
        Error::new(
            ErrorKind::MessageTooLarge,
            format!(
                "the server sent a {len}-byte message; the bound is {} bytes",
                self.cfg.max_message_bytes
            ),
        )
    }

    /// Turns a response into an [`Outcome`] for request `id` (`None`: a notification or answer
    /// was sent). Messages other than the answer are delivered as they are read.
    async fn outcome(self: &Arc<Self>, mut response: reqwest::Response, id: Option<&RequestId>) -> Result<Exchange> {
        let status = response.status();
        let session_id = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
            .unwrap_or_default();
        let outcome = if status.is_success() && content_type == EVENT_STREAM {
            let stream = EventStream::new(response, self.cfg.max_message_bytes);
            match id {
                Some(id) => self.read_for_answer(stream, id).await?,
                None => {
                    // A stream in reply to a notification: deliver whatever it carries.
                    let inner = self.clone();
                    self.spawn_background(async move { inner.drain(Some(Box::new(stream))).await });
                    Outcome::Accepted
                }
            }
        } else if status == StatusCode::ACCEPTED {
            // Whatever a 202 carries ("Accepted") is read and dropped, so the connection is reused.
            let _ = Self::read_bounded(&mut response, ERROR_BODY_MAX).await;
            Outcome::Accepted
        } else if status.is_success() {
            let body = match Self::read_bounded(&mut response, self.cfg.max_message_bytes).await? {
                Ok(body) => body,
                Err(len) => return Err(self.too_large(len)),
            };
            if body.iter().all(u8::is_ascii_whitespace) {
                Outcome::Accepted
            } else {
                match serde_json::from_slice::<Value>(&body) {
                    Ok(value) => self.answer_in(value, id),
                    Err(e) if id.is_some() => {
                        return Err(Error::protocol(format!(
                            "the server answered HTTP {status} with a body that is not JSON ({e}): {}",
                            excerpt(&body)
                        )))
                    }
                    Err(_) => Outcome::Accepted,
                }
            }
        } else {
            let body = match Self::read_bounded(&mut response, ERROR_BODY_MAX).await {
                Ok(Ok(body)) => body,
                // Too long or broken: an excerpt is all that is wanted anyway.
                _ => Vec::new(),
            };
            match serde_json::from_slice::<Value>(&body) {
                // Only a request's own error answer counts; a refused notification is a status.
                Ok(value) if id.is_some() && is_json_rpc_error(&value) => self.answer_in(value, id),
                _ => Outcome::Status {
                    status,
                    excerpt: excerpt(&body),
                },
            }
        };
        Ok(Exchange {
            outcome,
            status,
            session_id,
        })
    }

    /// Finds the answer to `id` in a JSON body (one message or a batch); the rest is delivered.
    fn answer_in(&self, value: Value, id: Option<&RequestId>) -> Outcome {
        let messages = match value {
            Value::Array(items) => items,
            other => vec![other],
        };
        let mut answer = None;
        for message in messages {
            match self.sort(message, id, 0) {
                Found::Answer(m) if answer.is_none() => answer = Some(m),
                _ => {}
            }
        }
        match (answer, id) {
            (Some(message), _) => Outcome::Answer { message, rest: None },
            (None, None) => Outcome::Accepted,
            (None, Some(_)) => Outcome::Ended {
                why: "the server's reply did not contain the answer".into(),
                last_event_id: None,
                retry: None,
            },
        }
    }

    /// Keeps the answer to `id` (an error without an id in a direct reply is ours too), delivers
    /// everything else.
    fn sort(&self, mut message: Value, id: Option<&RequestId>, weight: usize) -> Found {
        if let Some(id) = id {
            if is_response(&message) {
                let msg_id = message.get("id").and_then(RequestId::from_value);
                let anonymous_error = msg_id.is_none() && message.get("error").is_some();
                if msg_id.as_ref() == Some(id) || anonymous_error {
                    if anonymous_error {
                        message["id"] = id.to_value();
                    }
                    return Found::Answer(message);
                }
            }
        }
        self.deliver_metered(message, weight);
        Found::Nothing
    }

    /// Handles one stream item for the request `id`: the answer is returned, the rest delivered.
    fn stream_item(&self, item: SseItem, id: Option<&RequestId>) -> Result<Found> {
        match item {
            SseItem::TooLarge { prefix, len } => {
                let error = self.too_large(len);
                match scan_top_level_id(&prefix).as_ref().and_then(RequestId::from_value) {
                    Some(found) if Some(&found) == id => return Err(error),
                    Some(other) => self.fail(other, error),
                    None => self.log(format!("skipped an SSE event: {}", error.message())),
                }
                Ok(Found::Nothing)
            }
            SseItem::Event(event) => {
                if event.kind() == "endpoint" || event.data.trim().is_empty() {
                    // Priming events (an id and retry with empty data) carry no message.
                    return Ok(Found::Nothing);
                }
                let weight = event.data.len();
                match serde_json::from_str::<Value>(&event.data) {
                    Ok(Value::Array(items)) => {
                        let mut answer = Found::Nothing;
                        let weight = weight / items.len().max(1);
                        for message in items {
                            if let Found::Answer(m) = self.sort(message, id, weight) {
                                answer = Found::Answer(m);
                            }
                        }
                        Ok(answer)
                    }
                    Ok(message) => Ok(self.sort(message, id, weight)),
                    Err(e) => {
                        self.log(format!(
                            "ignored an SSE event that is not JSON ({e}): {}",
                            excerpt(event.data.as_bytes())
                        ));
                        Ok(Found::Nothing)
                    }
                }
            }
        }
    }

    /// Reads an event stream until the answer to `id`, delivering everything before it.
    async fn read_for_answer(&self, mut stream: EventStream, id: &RequestId) -> Result<Outcome> {
        loop {
            self.room().await;
            match stream.next().await {
                Ok(Some(item)) => {
                    if let Found::Answer(message) = self.stream_item(item, Some(id))? {
                        return Ok(Outcome::Answer {
                            message,
                            rest: Some(Box::new(stream)),
                        });
                    }
                }
                Ok(None) => {
                    return Ok(Outcome::Ended {
                        why: "the server closed the response stream before answering".into(),
                        last_event_id: stream.last_event_id(),
                        retry: stream.retry(),
                    })
                }
                Err(e) => {
                    return Ok(Outcome::Ended {
                        why: e.message().to_string(),
                        last_event_id: stream.last_event_id(),
                        retry: stream.retry(),
                    })
                }
            }
        }
    }

    /// Reads what is left of a stream after its answer (bounded in time), so the connection can
    /// be reused; anything still on it is delivered.
    async fn drain(&self, rest: Option<Box<EventStream>>) {
        let Some(mut stream) = rest else {
            return;
        };
        let _ = tokio::time::timeout(DRAIN_LIMIT, async {
            while let Ok(Some(item)) = async {
                self.room().await;
                stream.next().await
            }
            .await
            {
                if let Err(e) = self.stream_item(item, None) {
                    self.log(e.message().to_string());
                }
            }
        })
        .await;
    }

    /// The error for an HTTP status without a JSON-RPC answer.
    fn status_error(&self, what: &str, status: StatusCode, excerpt: &str) -> Error {
        let body = if excerpt.is_empty() {
            String::new()
        } else {
            format!(": {excerpt}")
        };
        // At connect a bare status usually means a wrong URL: say what to check.
        let hint = match what {
            "initialize" | "server/discover" if status.is_client_error() => {
                format!("; {}", status_hint(status.as_u16()))
            }
            _ => String::new(),
        };
        Error::new(
            ErrorKind::HttpStatus,
            format!("{what}: HTTP {status} from {}{body}{hint}", redact::url(&self.url)),
        )
        .with_http_status(status.as_u16())
    }

    /// Delivers an answer, or fails `id` with what the outcome says.
    async fn finish(&self, id: &RequestId, what: &str, outcome: Outcome) {
        match outcome {
            Outcome::Answer { message, rest } => {
                self.deliver(message);
                self.drain(rest).await;
            }
            Outcome::Accepted => self.fail(
                id.clone(),
                Error::protocol(format!("the server accepted {what} (HTTP 202) but sent no answer")),
            ),
            Outcome::Status { status, excerpt } => self.fail(id.clone(), self.status_error(what, status, &excerpt)),
            Outcome::Ended { why, .. } => self.fail(id.clone(), Error::new(ErrorKind::Io, format!("{what}: {why}"))),
        }
    }

    async fn send(self: Arc<Self>, message: Value) -> Result<()> {
        if self.is_closed() {
            return Err(Self::closed_error());
        }
        let method = message.get("method").and_then(Value::as_str).map(str::to_string);
        let id = message.get("id").and_then(RequestId::from_value);
        match (method, id) {
            (Some(method), Some(id)) => {
                self.start_request(id, method, message);
                Ok(())
            }
            (Some(method), None) => self.send_notification(&method, message).await,
            (None, _) => self.send_answer(message).await,
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
        match route {
            Route::Modern => {
                self.spawn_request(task_id, async move { inner.modern_request(id, method, message).await })
            }
            Route::Streamable => {
                self.spawn_request(task_id, async move { inner.legacy_request(id, method, message).await })
            }
            Route::Sse2024(endpoint) => self.spawn_request(task_id, async move {
                if let Err(e) = inner.sse2024_post(&endpoint, &message).await {
                    inner.fail(id, e);
                }
            }),
        }
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
        let mut tasks = self.tasks.lock().unwrap();
        for (_, handle) in tasks.requests.drain() {
            handle.abort();
        }
        for handle in tasks.background.drain(..) {
            handle.abort();
        }
    }
}

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
        let inner = self.inner.clone();
        Box::pin(inner.send(message))
    }

    fn cancel(&self, id: RequestId, reason: String) -> BoxFuture<'_, ()> {
        // A server that never answers the cancellation POST must not hold the cancelled call
        // past its bound: the notice goes on in a task, awaited only briefly.
        let task = tokio::spawn(self.inner.clone().cancel(id, reason));
        Box::pin(async move {
            let _ = tokio::time::timeout(CANCEL_NOTICE_WAIT, task).await;
        })
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

#[cfg(test)]
mod tests {
    use super::{connect_hint, status_hint};

    #[test]
    fn connect_failures_say_what_to_check() {
        let tls = "error sending request: client error (Connect): received corrupt message of type InvalidContentType";
        assert!(connect_hint(tls, "https").contains("use an http:// URL"));
        assert!(
            connect_hint("tcp connect error: Connection refused (os error 111)", "http")
                .contains("is the server running")
        );
        assert!(connect_hint("dns error: failed to lookup address information", "https").contains("does not resolve"));
        assert_eq!(connect_hint("something else", "http"), "");
        assert!(status_hint(404).contains("/mcp"));
        assert!(status_hint(405).contains("does not accept POST"));
        assert!(status_hint(400).contains("headers"));
    }
}

#[cfg(test)]
mod hold_tests {
    use super::*;

    /// The timer restarts even when the authorization panics (it once hung the call).
    #[test]
    fn a_panic_restarts_the_timer() {
        let (tx, mut rx) = crate::transport::inbound_channel();
        let id = RequestId::Num(7);
        let held = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _held = Hold {
                inbound: tx,
                id: Some(id.clone()),
            };
            panic!("an authorization that panics");
        }));
        assert!(held.is_err());
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        match runtime.block_on(rx.recv()) {
            Some(Inbound::Paused { id: got, paused: false }) => assert_eq!(got, id),
            _ => panic!("the timer was not restarted"),
        }
    }
}
