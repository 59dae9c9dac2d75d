//! Direct connections to one `http://` or `https://` origin, for the requests to the MCP
//! endpoint itself: hyper's connection API under a small keep-alive pool of our own, over TCP
//! or TLS (`net::stream`). HTTP/1.1, or HTTP/2 where a TLS server chooses it by ALPN: then one
//! connection carries every request as a stream of its own, its I/O a task of its own (a
//! GOAWAY or a reset stream fails a request sent as a lost connection does; one the connection
//! never sent goes on a new connection). Plain `http://` stays HTTP/1.1.
//!
//! Why: through reqwest every request also pays its redirect policy and response URL (two
//! `url` parses, ~15k instructions with IDNA even for `127.0.0.1`), its tower layers and
//! hyper-util's pool keyed by authority: about 40k of the 126k instructions of a loopback
//! `tools/call` (callgrind; docs/performance.md, "HTTP"). None of it does
//! anything for a request to the one endpoint the transport was made for, with no redirects
//! followed and no retries.
//!
//! TLS is the library's one configuration (`net::tls::config`: the platform verifier, the
//! same trust store and protocol versions as reqwest's), one per origin, so a reconnect resumes
//! the TLS session its previous connection got (rustls's in-memory store); the handshake counts
//! against the connect timeout, and a refused certificate says for which name and why.
//!
//! Every `http://` and `https://` endpoint goes this way, straight or through an `http://`
//! proxy (`net::proxy`; other proxies leave the endpoint to reqwest). A name is resolved by the
//! host's pins (`resolve`) or the system, then its addresses are tried alternating between the
//! families, each attempt having a quarter second alone before the next starts beside it (as
//! reqwest's connector does); through a proxy, that is the proxy's name, and the proxy resolves
//! the endpoint's.
//!
//! A connection is busy from its request until its response body has been read to its end,
//! then goes back to the pool; a body dropped earlier takes its connection with it (hyper
//! closes it), so a cancelled stream never leaves a half-read reply on a reused connection.
//!
//! No task per HTTP/1.1 connection: hyper's connection future (its reading, parsing and writing) is
//! polled by whoever holds the connection: the request's future until the response head, the
//! body's reader after it, the next request at checkout. The socket then wakes the task waiting
//! for the reply (a lone call's own, see `transport/http/inline`), not a connection task that
//! would wake it in turn. An idle connection is not polled, so a server's hang-up is seen at
//! checkout (or by the request put on it, which hyper then hands back unsent).

use super::policy::normalize;
use super::proxy::{self, Route, Via};
use super::resolve::Overrides;
use super::stream::Stream;
use crate::base::driving::ReadBeside;
use hyper::body::{Body as HttpBody, Bytes, Frame, Incoming, SizeHint};
use hyper::client::conn::http1::{self, Connection, SendRequest};
use hyper::client::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioIo};
use reqwest::header::{HeaderValue, HOST, PROXY_AUTHORIZATION};
use reqwest::{Body, Method, ResponseBuilderExt, Url};
use std::future::{poll_fn, Future};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex, Weak};
use std::task::{ready, Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_rustls::TlsConnector;
use url::{Host, Position};

/// Idle connections kept for reuse; more than this many calls in flight at once still get a
/// connection each, but the extra ones close when their reply ends.
const IDLE_MAX: usize = 32;
/// An idle connection older than this is closed rather than reused (reqwest's pool default):
/// servers close theirs sooner or later, and a request racing that close would fail.
const IDLE_FOR: Duration = Duration::from_secs(90);

pub(crate) struct DirectOrigin {
    url: Url,
    /// The request target (origin form: path and query; absolute form to a proxy) and `Host`
    /// of every request.
    target: hyper::Uri,
    host: HeaderValue,
    /// The endpoint's URL as an HTTP/2 request's target (its `:scheme` and `:authority`).
    absolute: hyper::Uri,
    /// The proxy connections go to, if any: a tunnel for `https://`, forwarded requests for
    /// `http://` (with `forward_auth` as their `Proxy-Authorization`).
    via: Option<Via>,
    forward_auth: Option<HeaderValue>,
    overrides: Arc<Overrides>,
    connect_timeout: Duration,
    /// For `https://`: the TLS client and the name the certificate must be valid for.
    tls: Option<(TlsConnector, ServerName<'static>)>,
    /// Idle connections, with when they became idle (newest last).
    idle: Mutex<Vec<(Link, Instant)>>,
    /// The HTTP/2 connection, when the server chose HTTP/2 by ALPN: every request shares it.
    h2: Mutex<Option<http2::SendRequest<Body>>>,
    /// Set once the server chose HTTP/1.1; until then new TLS connections are made one at a
    /// time, so that calls started together share one HTTP/2 connection rather than each
    /// opening its own.
    h1_chosen: AtomicBool,
    dialing: tokio::sync::Mutex<()>,
}

/// A new connection: HTTP/1.1 (one request at a time), or HTTP/2 (its shared sender).
enum Fresh {
    H1(Link),
    H2(http2::SendRequest<Body>),
}

/// An HTTP/2 request that failed: `Unsent` when the connection ended before it went out.
enum H2Failure {
    Unsent(Box<hyper::Request<Body>>),
    Failed(String),
}

/// hyper's future that does a connection's I/O. A lone call beside the driver thread's idle
/// spell reads the socket itself (`ReadBeside`), as a stdio call reads its pipe.
type ConnectionIo = Pin<Box<Connection<TokioIo<Stream>, Body>>>;

/// One connection: the sender of its requests and its I/O.
struct Link {
    sender: SendRequest<Body>,
    /// `None` once the connection has ended.
    io: Option<ConnectionIo>,
    /// What the connection's I/O is driven with (see [`LinkWaker`]).
    waker: Arc<LinkWaker>,
    as_waker: Waker,
}

/// The waker a connection's I/O registers: that of the task driving it, except while a request
/// is put on the connection. Putting one there wakes the connection's reader, which its last
/// drive registered (usually the previous call's, on the same task); the sender drives the
/// connection right after anyway, so that wake-up would only make a current-thread runtime
/// poll its `block_on` future once more after a zero-timeout `epoll_wait`, per call.
#[derive(Default)]
struct LinkWaker {
    task: Mutex<Option<Waker>>,
    quiet: AtomicBool,
}

impl Wake for LinkWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.quiet.load(SeqCst) {
            if let Some(task) = &*self.task.lock().unwrap() {
                task.wake_by_ref();
            }
        }
    }
}

impl Link {
    fn new(sender: SendRequest<Body>, io: ConnectionIo) -> Link {
        let waker = Arc::new(LinkWaker::default());
        Link {
            sender,
            io: Some(io),
            as_waker: Waker::from(waker.clone()),
            waker,
        }
    }

    /// Lets the connection read and write what it can now, registering `cx`'s task for more.
    fn drive(&mut self, cx: &mut Context<'_>) {
        if let Some(io) = &mut self.io {
            {
                let mut task = self.waker.task.lock().unwrap();
                if !task.as_ref().is_some_and(|task| task.will_wake(cx.waker())) {
                    *task = Some(cx.waker().clone());
                }
            }
            if io.as_mut().poll(&mut Context::from_waker(&self.as_waker)).is_ready() {
                self.io = None;
            }
        }
    }

    /// Puts `request` on the connection without waking its reader's task (see [`LinkWaker`]):
    /// the caller drives the connection next.
    fn put(&mut self, request: hyper::Request<Body>) -> impl Future<Output = SendResult> {
        self.waker.quiet.store(true, SeqCst);
        let response = self.sender.try_send_request(request);
        self.waker.quiet.store(false, SeqCst);
        response
    }
}

type SendResult = Result<hyper::Response<Incoming>, hyper::client::conn::TrySendError<hyper::Request<Body>>>;

/// Polls `wanted` (a response, a body frame, readiness: something the connection produces),
/// driving `link` only when it is not ready yet: every poll of the connection costs a pass of
/// hyper's dispatcher (~3k instructions), and what it delivers is often already waiting.
fn polled_with<T>(
    link: &mut Link,
    cx: &mut Context<'_>,
    mut wanted: impl FnMut(&mut Link, &mut Context<'_>) -> Poll<T>,
) -> Poll<T> {
    if let Poll::Ready(out) = wanted(link, cx) {
        return Poll::Ready(out);
    }
    link.drive(cx);
    wanted(link, cx)
}

impl DirectOrigin {
    /// The direct path to `url` by `route`, when it may take one (see the module's doc).
    pub fn for_endpoint(
        url: &Url,
        overrides: Arc<Overrides>,
        connect_timeout: Duration,
        route: Route,
    ) -> Option<Arc<DirectOrigin>> {
        let via = match route {
            Route::Direct if direct_scheme(url) => None,
            Route::Via(via) if direct_scheme(url) => Some(via),
            _ => return None,
        };
        let forwarded = via.is_some() && url.scheme() == "http";
        let tls = match url.scheme() {
            "https" => {
                // Where this fails, so did the transport's reqwest client, made first.
                let mut config = super::tls::config(true).ok()?;
                config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
                let name = match url.host()? {
                    Host::Ipv4(ip) => ServerName::from(IpAddr::from(ip)),
                    Host::Ipv6(ip) => ServerName::from(IpAddr::from(ip)),
                    Host::Domain(name) => ServerName::try_from(name.to_string()).ok()?,
                };
                Some((TlsConnector::from(Arc::new(config)), name))
            }
            _ => None,
        };
        let target = if forwarded {
            url[..Position::AfterQuery].to_string()
        } else {
            url[Position::BeforePath..Position::AfterQuery].to_string()
        };
        let host = match url.port() {
            Some(port) => format!("{}:{port}", url.host_str()?),
            None => url.host_str()?.to_string(),
        };
        Some(Arc::new(DirectOrigin {
            url: url.clone(),
            target: target.parse().ok()?,
            absolute: url[..Position::AfterQuery].parse().ok()?,
            host: HeaderValue::from_str(&host).ok()?,
            overrides,
            connect_timeout,
            tls,
            forward_auth: via.as_ref().filter(|_| forwarded).and_then(|v| v.auth.clone()),
            via,
            idle: Mutex::new(Vec::new()),
            h2: Mutex::new(None),
            h1_chosen: AtomicBool::new(false),
            dialing: tokio::sync::Mutex::new(()),
        }))
    }

    /// Whether `request` goes this way: any request to the endpoint itself (its POSTs, and the
    /// legacy wire's GET streams and DELETE, which must share the POSTs' idle connections as
    /// through one pool: a GET stream opened after `initialize` takes the connection that just
    /// went idle, and reaches the server before the next POST does).
    pub fn serves(&self, request: &reqwest::Request) -> bool {
        request.url() == &self.url
    }

    /// Sends `request` (one [`DirectOrigin::serves`]) on an idle connection or a new one. A
    /// failure is its cause, worded like reqwest's (the transport's connect hints read it).
    pub async fn send(self: &Arc<Self>, request: reqwest::Request) -> Result<reqwest::Response, String> {
        let mut request = request;
        let mut message = hyper::Request::new(request.body_mut().take().unwrap_or_default());
        *message.method_mut() = std::mem::replace(request.method_mut(), Method::GET);
        *message.uri_mut() = self.target.clone();
        let mut headers = std::mem::take(request.headers_mut());
        headers.insert(HOST, self.host.clone());
        if let Some(auth) = &self.forward_auth {
            headers.insert(PROXY_AUTHORIZATION, auth.clone());
        }
        *message.headers_mut() = headers;
        let mut message = Some(message);
        // A pooled connection the server closed meanwhile hands the request back unsent: it
        // then goes on a new connection (never sent twice).
        let mut fresh = false;
        loop {
            if let Some(sender) = self.shared() {
                let sending = message.take().expect("the request is sent once");
                match self.send_h2(sender, sending).await {
                    Ok(response) => return Ok(response),
                    Err(H2Failure::Unsent(unsent)) if !fresh => {
                        message = Some(self.for_h1(*unsent));
                        continue;
                    }
                    Err(H2Failure::Unsent(_)) => return Err("connection closed before the request was sent".into()),
                    Err(H2Failure::Failed(cause)) => return Err(cause),
                }
            }
            let mut link = match self.idle_link().await {
                Some(link) => link,
                None => {
                    // Until the server's choice is known, one TLS connection at a time.
                    let _turn = match self.tls.is_some() && !self.h1_chosen.load(SeqCst) {
                        true => Some(self.dialing.lock().await),
                        false => None,
                    };
                    if self.shared().is_some() {
                        continue;
                    }
                    fresh = true;
                    match self.connect().await? {
                        Fresh::H1(link) => link,
                        Fresh::H2(sender) => {
                            *self.h2.lock().unwrap() = Some(sender);
                            continue;
                        }
                    }
                }
            };
            let sending = message.take().expect("the request is sent once");
            let mut response = std::pin::pin!(link.put(sending));
            let sent = poll_fn(|cx| polled_with(&mut link, cx, |_, cx| response.as_mut().poll(cx))).await;
            match sent {
                Ok(response) => {
                    let (parts, body) = response.into_parts();
                    let body = Returning {
                        body,
                        home: Some((link, Arc::downgrade(self))),
                    };
                    return self.response(parts, body);
                }
                Err(mut failed) => match failed.take_message() {
                    Some(unsent) if !fresh => message = Some(unsent),
                    _ => return Err(super::redact::chain(failed.error())),
                },
            }
        }
    }

    /// The response for reqwest's callers, with its URL as reqwest records it: without it
    /// reqwest parses a placeholder URL for every response (~4.5k instructions). The builder's
    /// extensions are the response's (hyper's own are none reqwest reads).
    fn response(
        &self,
        parts: hyper::http::response::Parts,
        body: impl HttpBody<Data = Bytes, Error = hyper::Error> + Send + Sync + 'static,
    ) -> Result<reqwest::Response, String> {
        let mut builder = hyper::Response::builder()
            .status(parts.status)
            .version(parts.version)
            .url(self.url.clone());
        if let Some(headers) = builder.headers_mut() {
            *headers = parts.headers;
        }
        let response = builder.body(Body::wrap(body)).map_err(|e| e.to_string())?;
        Ok(reqwest::Response::from(response))
    }

    /// The shared HTTP/2 connection, while it is open.
    fn shared(&self) -> Option<http2::SendRequest<Body>> {
        let mut h2 = self.h2.lock().unwrap();
        if h2.as_ref().is_some_and(|s| s.is_closed()) {
            *h2 = None;
        }
        h2.clone()
    }

    /// Sends `request` as a stream of the HTTP/2 connection. A GOAWAY or a reset stream fails it
    /// as a lost connection does, except a request the connection never sent (`Unsent`).
    async fn send_h2(
        &self,
        mut sender: http2::SendRequest<Body>,
        mut request: hyper::Request<Body>,
    ) -> Result<reqwest::Response, H2Failure> {
        *request.uri_mut() = self.absolute.clone();
        request.headers_mut().remove(HOST);
        request.headers_mut().remove(PROXY_AUTHORIZATION);
        if poll_fn(|cx| sender.poll_ready(cx)).await.is_err() {
            return Err(H2Failure::Unsent(Box::new(request)));
        }
        match sender.try_send_request(request).await {
            Ok(response) => {
                let (parts, body) = response.into_parts();
                self.response(parts, body).map_err(H2Failure::Failed)
            }
            Err(mut failed) => match failed.take_message() {
                Some(unsent) => Err(H2Failure::Unsent(Box::new(unsent))),
                None => Err(H2Failure::Failed(super::redact::chain(failed.error()))),
            },
        }
    }

    /// A request handed back by HTTP/2, made an HTTP/1.1 one again.
    fn for_h1(&self, mut request: hyper::Request<Body>) -> hyper::Request<Body> {
        *request.uri_mut() = self.target.clone();
        request.headers_mut().insert(HOST, self.host.clone());
        if let Some(auth) = &self.forward_auth {
            request.headers_mut().insert(PROXY_AUTHORIZATION, auth.clone());
        }
        request
    }

    /// A pooled connection ready for a request, if one is.
    async fn idle_link(&self) -> Option<Link> {
        loop {
            let (mut link, since) = self.idle.lock().unwrap().pop()?;
            if since.elapsed() >= IDLE_FOR {
                continue;
            }
            let ready = poll_fn(|cx| polled_with(&mut link, cx, |link, cx| link.sender.poll_ready(cx))).await;
            if ready.is_ok() {
                return Some(link);
            }
        }
    }

    fn put_back(&self, link: Link) {
        let now = Instant::now();
        let mut idle = self.idle.lock().unwrap();
        // Oldest first: the ones past IDLE_FOR go (dropping a link closes its connection).
        let expired = idle.partition_point(|(_, since)| now.duration_since(*since) >= IDLE_FOR);
        idle.drain(..expired);
        if idle.len() < IDLE_MAX && link.io.is_some() && !link.sender.is_closed() {
            idle.push((link, now));
        }
    }

    async fn connect(&self) -> Result<Fresh, String> {
        let deadline = tokio::time::Instant::now() + self.connect_timeout;
        let (host, port) = match &self.via {
            Some(via) => (via.host.as_str(), via.port),
            None => (self.host_name(), self.url.port_or_known_default().unwrap_or(80)),
        };
        let mut stream = tokio::time::timeout_at(deadline, self.dial(host, port))
            .await
            .map_err(|_| "client error (Connect): tcp connect error: connect timed out".to_string())?
            .map_err(|e| format!("client error (Connect): tcp connect error: {e}"))?;
        let _ = stream.set_nodelay(true);
        if let (Some(via), Some(_)) = (&self.via, &self.tls) {
            let target = proxy::authority(self.host_name(), self.url.port_or_known_default().unwrap_or(443));
            tokio::time::timeout_at(deadline, proxy::tunnel(&mut stream, via, &target))
                .await
                .map_err(|_| {
                    format!(
                        "client error (Connect): proxy {} did not open the tunnel in time",
                        via.name()
                    )
                })??;
        }
        let stream = match &self.tls {
            None => Stream::Plain(ReadBeside(stream)),
            Some((connector, name)) => {
                let shake = connector.connect(name.clone(), ReadBeside(stream));
                let tls = tokio::time::timeout_at(deadline, shake)
                    .await
                    .map_err(|_| "client error (Connect): TLS handshake timed out".to_string())?
                    .map_err(|e| {
                        format!(
                            "client error (Connect): TLS handshake with {} failed: {e}",
                            name.to_str()
                        )
                    })?;
                if tls.get_ref().1.alpn_protocol() == Some(b"h2") {
                    // The connection's I/O runs as a task of its own: it serves every stream.
                    let (sender, io) = http2::handshake(TokioExecutor::new(), TokioIo::new(Stream::Tls(Box::new(tls))))
                        .await
                        .map_err(|e| format!("client error (Connect): {}", super::redact::chain(&e)))?;
                    tokio::spawn(async move {
                        let _ = io.await;
                    });
                    return Ok(Fresh::H2(sender));
                }
                self.h1_chosen.store(true, SeqCst);
                Stream::Tls(Box::new(tls))
            }
        };
        let (sender, io) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("client error (Connect): {}", super::redact::chain(&e)))?;
        Ok(Fresh::H1(Link::new(sender, Box::pin(io))))
    }

    /// The endpoint's host: a name, or an address (IPv6 without brackets).
    fn host_name(&self) -> &str {
        let host = self.url.host_str().unwrap_or_default();
        host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host)
    }

    /// The first address of `host` (a name or an address) that accepts a connection on `port`
    /// (see the module's doc for why one after the other will do).
    async fn dial(&self, host: &str, port: u16) -> io::Result<tokio::net::TcpStream> {
        let addrs: Vec<IpAddr> = match host.parse::<IpAddr>() {
            Ok(ip) => vec![ip],
            Err(_) => match self.overrides.get(&normalize(host)) {
                Some(fixed) => fixed.clone(),
                None => tokio::net::lookup_host((host, port))
                    .await
                    .map_err(|e| io::Error::new(e.kind(), format!("dns error: {e}")))?
                    .map(|a| a.ip())
                    .collect(),
            },
        };
        dial_in_turn(interleaved(addrs), port).await
    }
}

/// How long an attempt to connect has alone before the next address is tried beside it
/// (RFC 8305's recommended delay, as hyper-util's connector behind reqwest uses).
const NEXT_ADDRESS_AFTER: Duration = Duration::from_millis(250);

/// `addrs` alternating between the families, starting with the resolver's first choice.
fn interleaved(addrs: Vec<IpAddr>) -> Vec<IpAddr> {
    let Some(first) = addrs.first().map(IpAddr::is_ipv6) else {
        return addrs;
    };
    let (mut preferred, mut other): (Vec<IpAddr>, Vec<IpAddr>) = addrs.into_iter().partition(|a| a.is_ipv6() == first);
    let mut out = Vec::with_capacity(preferred.len() + other.len());
    preferred.reverse();
    other.reverse();
    while let Some(a) = preferred.pop() {
        out.push(a);
        out.extend(other.pop());
    }
    out.extend(other.into_iter().rev());
    out
}

/// The first of `addrs` to accept a connection on `port`: each attempt has
/// [`NEXT_ADDRESS_AFTER`] alone (or until it fails) before the next one starts beside it, so a
/// refused address costs nothing and an unreachable one a quarter second. The caller bounds the
/// whole.
async fn dial_in_turn(addrs: Vec<IpAddr>, port: u16) -> io::Result<tokio::net::TcpStream> {
    let mut waiting = addrs.into_iter();
    let mut attempts = tokio::task::JoinSet::new();
    let mut last = io::Error::new(io::ErrorKind::NotFound, "the host has no addresses");
    loop {
        if attempts.is_empty() {
            match waiting.next() {
                Some(ip) => attempts.spawn(tokio::net::TcpStream::connect(SocketAddr::new(ip, port))),
                None => return Err(last),
            };
        }
        tokio::select! {
            done = attempts.join_next() => match done {
                Some(Ok(Ok(stream))) => return Ok(stream),
                Some(Ok(Err(e))) => last = e,
                Some(Err(e)) => last = io::Error::other(e),
                None => {}
            },
            _ = tokio::time::sleep(NEXT_ADDRESS_AFTER), if waiting.len() > 0 => {
                if let Some(ip) = waiting.next() {
                    attempts.spawn(tokio::net::TcpStream::connect(SocketAddr::new(ip, port)));
                }
            }
        }
    }
}

/// Whether `url` is `http://` or `https://` with a host.
fn direct_scheme(url: &Url) -> bool {
    matches!(url.scheme(), "http" | "https") && url.host().is_some()
}

/// A response body that drives its connection while it is read, and returns it to the pool
/// once read to its end.
struct Returning {
    body: Incoming,
    home: Option<(Link, Weak<DirectOrigin>)>,
}

impl Returning {
    fn go_home(&mut self) {
        if let Some((link, origin)) = self.home.take() {
            if let Some(origin) = origin.upgrade() {
                origin.put_back(link);
            }
        }
    }
}

impl HttpBody for Returning {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = &mut *self;
        let body = &mut this.body;
        let frame = ready!(match &mut this.home {
            Some((link, _)) => polled_with(link, cx, |_, cx| Pin::new(&mut *body).poll_frame(cx)),
            None => Pin::new(body).poll_frame(cx),
        });
        match &frame {
            None => self.go_home(),
            Some(Ok(_)) if self.body.is_end_stream() => self.go_home(),
            Some(Err(_)) => self.home = None,
            Some(Ok(_)) => {}
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn direct(url: &str) -> bool {
        direct_scheme(&Url::parse(url).unwrap())
    }

    #[test]
    fn http_and_https_urls_go_direct() {
        assert!(direct("http://127.0.0.1:9/mcp"));
        assert!(direct("http://[::1]:9/mcp"));
        assert!(direct("https://mcp.example.com/mcp"));
        assert!(!direct("ws://127.0.0.1:9/mcp"));
    }

    #[test]
    fn addresses_alternate_between_families_from_the_first_ones() {
        let v4 = |n: u8| IpAddr::from([10, 0, 0, n]);
        let v6 = |n: u16| IpAddr::from([0xfd00, 0, 0, 0, 0, 0, 0, n]);
        assert_eq!(
            interleaved(vec![v6(1), v6(2), v6(3), v4(1)]),
            vec![v6(1), v4(1), v6(2), v6(3)]
        );
        assert_eq!(
            interleaved(vec![v4(1), v4(2), v6(1), v6(2), v6(3)]),
            vec![v4(1), v6(1), v4(2), v6(2), v6(3)]
        );
        assert!(interleaved(Vec::new()).is_empty());
    }

    /// An address that never answers (TEST-NET-1, routed nowhere) holds the next one back a
    /// quarter second, not until the system's connect timeout.
    #[tokio::test]
    async fn an_unanswering_address_does_not_hold_up_the_next() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let addrs = vec![IpAddr::from([192, 0, 2, 1]), IpAddr::from([127, 0, 0, 1])];
        let started = Instant::now();
        let stream = tokio::time::timeout(Duration::from_secs(5), dial_in_turn(addrs, port))
            .await
            .expect("the second address is tried beside the first")
            .unwrap();
        assert_eq!(stream.peer_addr().unwrap().port(), port);
        assert!(started.elapsed() < Duration::from_secs(2));
        let refused = dial_in_turn(vec![IpAddr::from([127, 0, 0, 1])], 1).await.unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::ConnectionRefused);
    }
}
