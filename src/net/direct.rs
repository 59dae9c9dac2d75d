//! Direct connections to one `http://` or `https://` origin, for the requests to the MCP
//! endpoint itself: the library's own HTTP/1.1 exchange (`net::h1`) under a small keep-alive
//! pool of our own, over TCP or TLS (`net::stream`); or HTTP/2 (the `h2` crate, hyper's own)
//! where a TLS server chooses it by ALPN: then one connection carries every request as a stream
//! of its own, its I/O a task of its own (a GOAWAY or a reset stream fails a request sent as a
//! lost connection does; one the connection never sent goes on a new connection). A request
//! opens its stream itself, with no task of its own and no channel to a dispatcher (hyper's
//! HTTP/2 client spawns a task per request: its future moved whole into the runtime, and a
//! `reqwest::Response` made around each answer). Plain `http://` stays HTTP/1.1.
//!
//! Why: through reqwest every request also pays its redirect policy and response URL (two
//! `url` parses, ~15k instructions with IDNA even for `127.0.0.1`), its tower layers and
//! hyper-util's pool keyed by authority; hyper's own HTTP/1.1 connection then builds a request
//! and a header map, and runs its dispatcher on every poll (docs/performance.md, "HTTP").
//! None of it does anything for one request at a time to the one endpoint the transport was
//! made for, with no redirects followed and no retries. An HTTP/1.1 request is its method and
//! a head prefix encoded once per origin (target, `Host`, a forwarding proxy's
//! `Proxy-Authorization`), its own fields and length appended, written with its body at once.
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
//! then goes back to the pool (unless the server said it closes it: `Connection: close`,
//! HTTP/1.0, a body that ends with the connection, or bytes beyond the body); a body dropped
//! earlier takes its connection with it (`net::reply`), so a cancelled stream never leaves a
//! half-read reply on a reused connection.
//!
//! No task per HTTP/1.1 connection: its socket is written and read by whoever holds the
//! connection: the request's future until the response head, the body's reader after it. The
//! socket then wakes the task waiting for the reply (a lone call's own, see
//! `transport/http/inline`), not a connection task that would wake it in turn. An idle
//! connection is not polled, so a server's hang-up is seen at checkout (a read that finds the
//! end, or anything unasked), and the request goes on a new connection; a write that a pooled
//! connection refused before taking any byte does too. A request is never sent twice.

use super::h1::{self, Conn};
use super::policy::normalize;
use super::proxy::{self, Route, Via};
use super::reply::Reply;
use super::request::Request;
use super::resolve::Overrides;
use super::stream::Stream;
use crate::base::driving::ReadBeside;
use hyper::body::Bytes;
use reqwest::header::{CONNECTION, CONTENT_LENGTH, HOST, PROXY_AUTHORIZATION, TRANSFER_ENCODING};
use reqwest::{Method, StatusCode, Url};
use std::future::poll_fn;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::task::Poll;
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
/// An idle connection this old is looked at in its socket at checkout, not only in the
/// reactor's last report: nothing may have driven the runtime since (a C client's HTTP calls
/// leave no thread driving it between them, `ffi/engine`). Younger ones, as back-to-back calls
/// have, save the system call: the reactor's report is then as fresh as a driver thread's
/// would be (it drives only after 5 ms without calls).
const LOOK_AFTER: Duration = Duration::from_millis(5);

pub(crate) struct DirectOrigin {
    url: Url,
    /// What follows the method in every HTTP/1.1 request head: the request target (origin
    /// form: path and query; absolute form to a proxy), the version, `Host`, and for a
    /// forwarding proxy `Proxy-Authorization`.
    after_method: Vec<u8>,
    /// The endpoint's URL as an HTTP/2 request's target (its `:scheme` and `:authority`).
    absolute: hyper::Uri,
    /// The proxy connections go to, if any: a tunnel for `https://`, forwarded requests for
    /// `http://`.
    via: Option<Via>,
    overrides: Arc<Overrides>,
    connect_timeout: Duration,
    /// For `https://`: the TLS client and the name the certificate must be valid for.
    tls: Option<(TlsConnector, ServerName<'static>)>,
    /// Idle connections, with when they became idle (newest last).
    idle: Mutex<Vec<(Conn, Instant)>>,
    /// The HTTP/2 connection, when the server chose HTTP/2 by ALPN: every request shares it.
    h2: Mutex<Option<H2>>,
    /// Set once the server chose HTTP/1.1; until then new TLS connections are made one at a
    /// time, so that calls started together share one HTTP/2 connection rather than each
    /// opening its own.
    h1_chosen: AtomicBool,
    dialing: tokio::sync::Mutex<()>,
}

/// A new connection: HTTP/1.1 (one request at a time), or HTTP/2 (its shared sender).
enum Fresh {
    H1(Conn),
    H2(H2),
}

/// An HTTP/2 connection's sender, and whether the connection ended or refuses new streams (a
/// GOAWAY, an error): then the next request goes on a new connection.
#[derive(Clone)]
struct H2 {
    sender: h2::client::SendRequest<Bytes>,
    ended: Arc<AtomicBool>,
}

/// Flow control and limits as hyper's HTTP/2 client sets them (which this path used before):
/// windows of 2 MiB a stream and 5 MiB the connection, frames of 16 KiB, 16 KiB of response
/// fields, no server push, 100 streams until the server's settings say otherwise.
fn h2_builder() -> h2::client::Builder {
    let mut builder = h2::client::Builder::new();
    builder
        .initial_max_send_streams(100)
        .initial_window_size(2 << 20)
        .initial_connection_window_size(5 << 20)
        .max_frame_size(16 << 10)
        .max_header_list_size(16 << 10)
        .max_send_buffer_size(1 << 20)
        .max_local_error_reset_streams(Some(1024))
        .enable_push(false);
    builder
}

/// Writes the HTTP/1.1 head of `request` into `head` (emptied first): the method, the origin's
/// fixed part, the request's own fields (those the exchange frames itself left out) and the
/// body's length.
fn head(request: &Request<'_>, after_method: &[u8], head: &mut Vec<u8>) {
    head.clear();
    head.extend_from_slice(request.method().as_str().as_bytes());
    head.extend_from_slice(after_method);
    for (name, value) in request.fields().iter() {
        if [HOST, PROXY_AUTHORIZATION, CONTENT_LENGTH, TRANSFER_ENCODING, CONNECTION].contains(name) {
            continue;
        }
        head.extend_from_slice(name.as_str().as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    if request.body().is_some() || request.method() == Method::POST {
        head.extend_from_slice(b"content-length: ");
        let length = request.body().map_or(0, |b| b.len());
        head.extend_from_slice(itoa::Buffer::new().format(length).as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
}

/// An HTTP/2 request that failed: `Unsent` when the connection refused it before it went out.
enum H2Failure {
    Unsent,
    Failed(String),
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
            &url[..Position::AfterQuery]
        } else {
            &url[Position::BeforePath..Position::AfterQuery]
        };
        let host = match url.port() {
            Some(port) => format!("{}:{port}", url.host_str()?),
            None => url.host_str()?.to_string(),
        };
        let mut after_method = format!(" {target} HTTP/1.1\r\nhost: {host}\r\n").into_bytes();
        if let Some(auth) = via.as_ref().filter(|_| forwarded).and_then(|v| v.auth.as_ref()) {
            after_method.extend_from_slice(b"proxy-authorization: ");
            after_method.extend_from_slice(auth.as_bytes());
            after_method.extend_from_slice(b"\r\n");
        }
        // A target or host a head cannot carry (parsed URLs have none) goes to reqwest.
        if after_method.iter().any(|&b| b < b' ' && b != b'\r' && b != b'\n') {
            return None;
        }
        Some(Arc::new(DirectOrigin {
            url: url.clone(),
            after_method,
            absolute: url[..Position::AfterQuery].parse().ok()?,
            overrides,
            connect_timeout,
            tls,
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
    pub fn serves(&self, request: &Request<'_>) -> bool {
        request.url() == &self.url
    }

    /// Sends `request` (one [`DirectOrigin::serves`]) on an idle connection or a new one. A
    /// failure is its cause, worded like reqwest's (the transport's connect hints read it).
    pub async fn send(self: &Arc<Self>, request: Request<'_>) -> Result<Reply, String> {
        // A pooled connection the server closed meanwhile takes nothing of the request: it
        // then goes on a new connection (never sent twice).
        let mut fresh = false;
        loop {
            if let Some(h2) = self.shared() {
                match self.send_h2(h2, &request).await {
                    Ok(response) => return Ok(response),
                    Err(H2Failure::Unsent) if !fresh => continue,
                    Err(H2Failure::Unsent) => return Err("connection closed before the request was sent".into()),
                    Err(H2Failure::Failed(cause)) => return Err(cause),
                }
            }
            let mut conn = match self.idle_conn().await {
                Some(conn) => conn,
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
                    // Boxed: the connect's state (dialling, the TLS and HTTP/2 handshakes) is
                    // kilobytes, and inline it would make every request's future as large,
                    // copied whole on each move (once per connection, a box costs nothing).
                    match Box::pin(self.connect()).await? {
                        Fresh::H1(conn) => conn,
                        Fresh::H2(h2) => {
                            *self.h2.lock().unwrap() = Some(h2);
                            continue;
                        }
                    }
                }
            };
            let body = request.body().map_or(&[][..], |b| &b[..]);
            head(&request, &self.after_method, &mut conn.head);
            match conn.write(body).await {
                Ok(()) => {}
                Err(failed) if failed.sent_nothing && !fresh => continue,
                Err(failed) => return Err(format!("error sending the request: {}", failed.error)),
            }
            let head = conn.read_head().await?;
            let status = StatusCode::from_u16(head.status)
                .map_err(|_| format!("invalid HTTP status {} in the response", head.status))?;
            let body = h1::Body::new(conn, &head);
            return Ok(Reply::own(status, head, body, Arc::downgrade(self)));
        }
    }

    /// The shared HTTP/2 connection, while it takes new streams.
    fn shared(&self) -> Option<H2> {
        let mut h2 = self.h2.lock().unwrap();
        if h2.as_ref().is_some_and(|c| c.ended.load(SeqCst)) {
            *h2 = None;
        }
        h2.clone()
    }

    /// Sends `request` as a stream of the HTTP/2 connection. A GOAWAY or a reset stream fails it
    /// as a lost connection does, except a request the connection refused before it went out
    /// (`Unsent`: the connection is then left for a new one).
    async fn send_h2(&self, h2: H2, request: &Request<'_>) -> Result<Reply, H2Failure> {
        let H2 { mut sender, ended } = h2;
        let opened = match poll_fn(|cx| sender.poll_ready(cx)).await {
            Ok(()) => {
                let body = request.body().filter(|b| !b.is_empty());
                sender
                    .send_request(request.h2_head(self.absolute.clone()), body.is_none())
                    .map(|stream| (stream, body))
            }
            Err(e) => Err(e),
        };
        let ((response, mut stream), body) = match opened {
            Ok(opened) => opened,
            // Refused before any frame of it went out: the connection ended or was told to go
            // away, and takes no new streams.
            Err(_) => {
                ended.store(true, SeqCst);
                return Err(H2Failure::Unsent);
            }
        };
        drop(sender);
        let failed = |e: h2::Error| H2Failure::Failed(super::redact::chain(&e));
        if let Some(body) = body {
            // Buffered by the connection until the stream's window takes it: the body is in
            // memory already (bounded by the transport), so nothing more is held.
            stream.send_data(body.clone(), true).map_err(failed)?;
        }
        let response = response.await.map_err(failed)?;
        Ok(Reply::h2(response))
    }

    /// A pooled connection ready for a request, if one is: one the server ended (or sent
    /// something unasked on) is dropped.
    async fn idle_conn(&self) -> Option<Conn> {
        loop {
            let (mut conn, since) = self.idle.lock().unwrap().pop()?;
            let idle = since.elapsed();
            if idle >= IDLE_FOR {
                continue;
            }
            if poll_fn(|cx| Poll::Ready(conn.poll_alive(cx, idle >= LOOK_AFTER))).await {
                return Some(conn);
            }
        }
    }

    pub(super) fn put_back(&self, conn: Conn) {
        let now = Instant::now();
        let mut idle = self.idle.lock().unwrap();
        // Oldest first: the ones past IDLE_FOR go (dropping a connection closes it).
        let expired = idle.partition_point(|(_, since)| now.duration_since(*since) >= IDLE_FOR);
        idle.drain(..expired);
        if idle.len() < IDLE_MAX {
            idle.push((conn, now));
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
                    let (sender, io) = h2_builder()
                        .handshake::<_, Bytes>(Stream::Tls(Box::new(tls)))
                        .await
                        .map_err(|e| format!("client error (Connect): {}", super::redact::chain(&e)))?;
                    let ended = Arc::new(AtomicBool::new(false));
                    let end = ended.clone();
                    tokio::spawn(async move {
                        let _ = io.await;
                        end.store(true, SeqCst);
                    });
                    return Ok(Fresh::H2(H2 { sender, ended }));
                }
                self.h1_chosen.store(true, SeqCst);
                Stream::Tls(Box::new(tls))
            }
        };
        Ok(Fresh::H1(Conn::new(stream)))
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
