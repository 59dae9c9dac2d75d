//! The HTTPS bench's own pieces (`bench/run.py`, section `https`), none of them using the MCP
//! library; TLS is rustls with the ring provider throughout, as in the library:
//!
//! - `server [--sse] [--h2] [--plain]`: an MCP endpoint on `https://127.0.0.1:<port>/mcp`
//!   presenting the test certificate (`tests/vectors/tls/trusted-server.pem`, signed by the test
//!   CA `trusted-ca.pem`), offering `http/1.1` by ALPN (with `--h2`, `h2` first). It answers
//!   with canned modern-era results found by substring, as `c/mini_server.c` does: `server/discover`,
//!   `tools/call` (the echo: the `text` argument's bytes copied back unparsed), an empty result
//!   for any other request, 202 for a notification; JSON bodies, or one SSE event with `--sse`.
//!   With `--plain`, the same over plain HTTP/1.1 (`http://`), for what TLS adds. It prints
//!   `listening on URL`, then answers each line on stdin with one JSON line of its
//!   counters (connections accepted, handshakes resumed, requests, HTTP/2 connections) and
//!   exits when stdin closes.
//! - `proxy`: a CONNECT-only HTTP proxy on `http://127.0.0.1:<port>` (no authentication): reads
//!   the request head, connects the target, answers 200 and copies both ways. Same stdin
//!   protocol (counters: tunnels).
//! - `raw seq|connect [--sse-ok] [--payload N] [--proxy URL] --url URL`: the raw TLS client:
//!   blocking rustls over a `std` TCP socket, pre-encoded HTTP/1.1 POSTs, each reply read to
//!   its end (Content-Length, or the last chunk) with no JSON work. `seq`: sequential calls as
//!   `c/raw_http.c`; `connect`: per iteration a new TLS configuration (the CA file read, as a
//!   new client does), TCP + handshake + `server/discover` (connect) and one call (first call).
//! - `rawh2 --inflight N --url URL`: the raw HTTP/2 client: one TLS connection (ALPN `h2`), the
//!   `h2` crate's client on a current-thread runtime, N streams kept in flight, each a
//!   pre-encoded `tools/call` POST whose reply body is read to its end.
//!
//! Every client prints one JSON result line like the other runners (`runner`, `test`, `calls`,
//! `per_sec`, `p50_us`, `p99_us`, `cpu_us_per_call`, ...).

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use mcp_bench::{cpu_us, fail, pct_us, result, rss_kb, Series};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use serde_json::{json, Map};
use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn vector(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/vectors/tls")
        .join(name)
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = argv.first() else {
        fail("usage: mcp-bench-tls server|proxy|raw|rawh2 ...")
    };
    let rest = &argv[1..];
    match cmd.as_str() {
        "server" => server(rest),
        "proxy" => proxy(),
        "raw" => raw(rest),
        "rawh2" => rawh2(rest),
        _ => fail("usage: mcp-bench-tls server|proxy|raw|rawh2 ..."),
    }
}

/// Options shared by the clients.
struct Opts {
    test: String,
    url: String,
    duration: Duration,
    warmup: usize,
    max_calls: usize,
    iterations: usize,
    inflight: usize,
    payload: usize,
    proxy: Option<String>,
}

fn opts(args: &[String], with_test: bool) -> Opts {
    let usage = "usage: raw seq|connect | rawh2 [--duration S] [--warmup N] [--max-calls N] [--iterations N] \
                 [--inflight N] [--payload N] [--proxy http://HOST:PORT] --url https://127.0.0.1:PORT/PATH";
    let mut it = args.iter();
    let test = if with_test {
        it.next().cloned().unwrap_or_else(|| fail(usage))
    } else {
        "h2".into()
    };
    let mut o = Opts {
        test,
        url: String::new(),
        duration: Duration::from_secs(2),
        warmup: 500,
        max_calls: 200_000,
        iterations: 50,
        inflight: 64,
        payload: 0,
        proxy: None,
    };
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| fail(usage));
        let num = |v: &str| v.parse::<usize>().unwrap_or_else(|_| fail(usage));
        match flag.as_str() {
            "--duration" => o.duration = Duration::from_secs_f64(value.parse().unwrap_or_else(|_| fail(usage))),
            "--warmup" => o.warmup = num(value),
            "--max-calls" => o.max_calls = num(value),
            "--iterations" => o.iterations = num(value),
            "--inflight" => o.inflight = num(value).max(1),
            "--payload" => o.payload = num(value),
            "--proxy" => o.proxy = Some(value.clone()),
            "--url" => o.url = value.clone(),
            _ => fail(usage),
        }
    }
    if !o.url.starts_with("https://127.0.0.1:") {
        fail("--url must be https://127.0.0.1:PORT/...");
    }
    o
}

/// `host:port` and the path of an `https://host:port/path` URL.
fn split_url(url: &str) -> (String, String) {
    let rest = url.strip_prefix("https://").unwrap_or(url);
    match rest.split_once('/') {
        Some((auth, path)) => (auth.to_string(), format!("/{path}")),
        None => (rest.to_string(), "/".into()),
    }
}

// ---------------------------------------------------------------- the requests

const META: &str = "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\
\"io.modelcontextprotocol/clientCapabilities\":{},\
\"io.modelcontextprotocol/clientInfo\":{\"name\":\"raw\",\"version\":\"0.1.0\"}}";

/// The echo's text: "hi", or `n` characters of the base64 alphabet (as `c/common.h`'s
/// `payload_text`: nothing JSON must escape).
fn payload_text(n: usize) -> String {
    if n == 0 {
        return "hi".into();
    }
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    (0..n).map(|k| alphabet[(k * 7 + k / 64) % 64] as char).collect()
}

fn call_body(payload: usize) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\
         \"arguments\":{{\"text\":\"{}\"}},{META}}}}}",
        payload_text(payload)
    )
}

fn discover_body() -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{{{META}}}}}")
}

/// A pre-encoded HTTP/1.1 POST of `body`, with the headers a modern-era client sends.
fn post(authority: &str, path: &str, method: &str, name: Option<&str>, body: &str) -> Vec<u8> {
    let name = name.map(|n| format!("Mcp-Name: {n}\r\n")).unwrap_or_default();
    format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n\
         {name}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

// ---------------------------------------------------------------- the raw TLS client

fn client_config(alpn: &[&[u8]]) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(vector("trusted-ca.pem")).unwrap_or_else(|e| fail(&format!("CA: {e}"))) {
        roots
            .add(cert.unwrap_or_else(|e| fail(&format!("CA: {e}"))))
            .unwrap_or_else(|e| fail(&format!("CA: {e}")));
    }
    let mut config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap_or_else(|e| fail(&format!("TLS: {e}")))
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(config)
}

type Tls = rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream>;

/// TCP to `authority` (or through the CONNECT proxy `proxy`), then a TLS client over it; the
/// handshake completes here.
fn open(config: Arc<rustls::ClientConfig>, authority: &str, proxy: Option<&str>) -> Tls {
    let hop = proxy
        .map(|p| p.trim_start_matches("http://").trim_end_matches('/'))
        .unwrap_or(authority);
    let mut tcp = std::net::TcpStream::connect(hop).unwrap_or_else(|e| fail(&format!("connect {hop}: {e}")));
    tcp.set_nodelay(true).ok();
    if proxy.is_some() {
        tcp.write_all(format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n").as_bytes())
            .unwrap_or_else(|e| fail(&format!("proxy: {e}")));
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            if tcp.read(&mut byte).unwrap_or(0) == 0 {
                fail("the proxy closed the connection");
            }
            head.push(byte[0]);
        }
        if !head.starts_with(b"HTTP/1.1 200") && !head.starts_with(b"HTTP/1.0 200") {
            fail("the proxy refused the tunnel");
        }
    }
    let host = authority.rsplit_once(':').map(|(h, _)| h).unwrap_or(authority);
    let name = ServerName::try_from(host.to_string()).unwrap_or_else(|_| fail("bad host"));
    let conn = rustls::ClientConnection::new(config, name).unwrap_or_else(|e| fail(&format!("TLS: {e}")));
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    while tls.conn.is_handshaking() {
        tls.conn
            .complete_io(&mut tls.sock)
            .unwrap_or_else(|e| fail(&format!("handshake: {e}")));
    }
    tls
}

/// Reads one response to its end: the head, then a Content-Length body or a chunked body to
/// its last chunk. `buf` is reused; returns the bytes read.
fn read_response(tls: &mut Tls, buf: &mut Vec<u8>) -> usize {
    let mut have = 0usize;
    let mut need = 0usize;
    let mut chunked = false;
    loop {
        if have == buf.len() {
            let len = buf.len();
            buf.resize(len * 2, 0);
        }
        let r = match tls.read(&mut buf[have..]) {
            Ok(0) => fail("the server closed the connection"),
            Ok(r) => r,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => fail(&format!("read: {e}")),
        };
        have += r;
        if need == 0 && !chunked {
            let Some(end) = find(&buf[..have], b"\r\n\r\n") else {
                continue;
            };
            let head = &buf[..end];
            let head_lower = String::from_utf8_lossy(head).to_ascii_lowercase();
            if let Some(at) = head_lower.find("\r\ncontent-length:") {
                let digits: String = head_lower[at + 17..]
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_ascii_digit())
                    .collect();
                need = end + 4 + digits.parse::<usize>().unwrap_or_else(|_| fail("bad content-length"));
            } else if head_lower.contains("\r\ntransfer-encoding: chunked") {
                chunked = true;
            } else {
                fail("response without a length");
            }
        }
        if need != 0 && have >= need {
            return have;
        }
        if chunked && have >= 5 && &buf[have - 5..have] == b"0\r\n\r\n" {
            return have;
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn raw(args: &[String]) {
    let o = opts(args, true);
    let (authority, path) = split_url(&o.url);
    let call = post(&authority, &path, "tools/call", Some("echo"), &call_body(o.payload));
    let mut buf = vec![0u8; 2 * o.payload + (1 << 16)];
    match o.test.as_str() {
        "seq" => {
            let mut tls = open(client_config(&[b"http/1.1"]), &authority, o.proxy.as_deref());
            // Once, untimed: the echo really carries the payload back.
            tls.write_all(&call).unwrap_or_else(|e| fail(&format!("write: {e}")));
            if read_response(&mut tls, &mut buf) < o.payload {
                fail("the echo's reply is shorter than its payload");
            }
            for _ in 0..o.warmup {
                tls.write_all(&call).unwrap_or_else(|e| fail(&format!("write: {e}")));
                read_response(&mut tls, &mut buf);
            }
            let mut s = Series {
                lat_ns: Vec::with_capacity(o.max_calls.min(1 << 20)),
                ..Series::default()
            };
            let cpu0 = cpu_us();
            let start = Instant::now();
            let deadline = start + o.duration;
            let mut t = start;
            while s.calls < o.max_calls && t < deadline {
                tls.write_all(&call).unwrap_or_else(|e| fail(&format!("write: {e}")));
                read_response(&mut tls, &mut buf);
                let t2 = Instant::now();
                s.lat_ns.push((t2 - t).as_nanos() as u64);
                t = t2;
                s.calls += 1;
            }
            s.seconds = (t - start).as_secs_f64();
            let cpu = cpu_us() - cpu0;
            let mut m = s.to_json("");
            m.insert(
                "cpu_us_per_call".into(),
                json!(if s.calls > 0 { cpu / s.calls as f64 } else { 0.0 }),
            );
            m.insert("rss_kb".into(), json!(rss_kb()));
            m.insert("payload".into(), json!(o.payload));
            println!("{}", result("raw", "seq", m));
        }
        "connect" => {
            let discover = post(&authority, &path, "server/discover", None, &discover_body());
            let (mut conn, mut first) = (Vec::new(), Vec::new());
            let deadline = Instant::now() + o.duration;
            let mut k = 0;
            while k < o.iterations && Instant::now() < deadline {
                let t0 = Instant::now();
                let mut tls = open(client_config(&[b"h2", b"http/1.1"]), &authority, o.proxy.as_deref());
                tls.write_all(&discover)
                    .unwrap_or_else(|e| fail(&format!("write: {e}")));
                read_response(&mut tls, &mut buf);
                let t1 = Instant::now();
                tls.write_all(&call).unwrap_or_else(|e| fail(&format!("write: {e}")));
                read_response(&mut tls, &mut buf);
                let tf = Instant::now();
                conn.push((t1 - t0).as_nanos() as u64);
                first.push((tf - t0).as_nanos() as u64);
                k += 1;
            }
            let mut m = Map::new();
            m.insert("iterations".into(), json!(k));
            m.insert("connect_p50_us".into(), json!(pct_us(&mut conn, 50.0)));
            m.insert("connect_p99_us".into(), json!(pct_us(&mut conn, 99.0)));
            m.insert("first_p50_us".into(), json!(pct_us(&mut first, 50.0)));
            m.insert("first_p99_us".into(), json!(pct_us(&mut first, 99.0)));
            println!("{}", result("raw", "connect", m));
        }
        _ => fail("raw seq|connect"),
    }
}

// ---------------------------------------------------------------- the raw HTTP/2 client

fn rawh2(args: &[String]) {
    let o = opts(args, false);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(&format!("runtime: {e}")));
    let out = rt.block_on(async move {
        let (authority, _) = split_url(&o.url);
        let tcp = tokio::net::TcpStream::connect(&authority)
            .await
            .unwrap_or_else(|e| fail(&format!("connect: {e}")));
        tcp.set_nodelay(true).ok();
        let connector = tokio_rustls::TlsConnector::from(client_config(&[b"h2"]));
        let name = ServerName::try_from("127.0.0.1").unwrap_or_else(|_| fail("name"));
        let tls = connector
            .connect(name, tcp)
            .await
            .unwrap_or_else(|e| fail(&format!("TLS: {e}")));
        if tls.get_ref().1.alpn_protocol() != Some(b"h2") {
            fail("the server did not choose h2");
        }
        let (sender, connection) = h2::client::handshake(tls)
            .await
            .unwrap_or_else(|e| fail(&format!("h2 handshake: {e}")));
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let body = Bytes::from(call_body(o.payload));
        let url = o.url.clone();
        let one = move |mut sender: h2::client::SendRequest<Bytes>, body: Bytes, url: String| async move {
            let request = http::Request::builder()
                .method("POST")
                .uri(url)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "echo")
                .body(())
                .unwrap_or_else(|_| fail("request"));
            sender = sender.ready().await.unwrap_or_else(|e| fail(&format!("h2: {e}")));
            let (response, mut stream) = sender
                .send_request(request, false)
                .unwrap_or_else(|e| fail(&format!("h2 send: {e}")));
            stream
                .send_data(body, true)
                .unwrap_or_else(|e| fail(&format!("h2 data: {e}")));
            let response = response.await.unwrap_or_else(|e| fail(&format!("h2 response: {e}")));
            let mut incoming = response.into_body();
            let mut n = 0;
            while let Some(chunk) = incoming.data().await {
                let chunk = chunk.unwrap_or_else(|e| fail(&format!("h2 body: {e}")));
                n += chunk.len();
                let _ = incoming.flow_control().release_capacity(chunk.len());
            }
            n
        };
        for _ in 0..o.warmup {
            one(sender.clone(), body.clone(), url.clone()).await;
        }
        let cpu0 = cpu_us();
        let start = Instant::now();
        let deadline = start + o.duration;
        let max_each = o.max_calls / o.inflight + 1;
        let mut tasks = Vec::new();
        for _ in 0..o.inflight {
            let (sender, body, url) = (sender.clone(), body.clone(), url.clone());
            tasks.push(tokio::spawn(async move {
                let mut lat = Vec::new();
                let mut t = Instant::now();
                while t < deadline && lat.len() < max_each {
                    one(sender.clone(), body.clone(), url.clone()).await;
                    let t2 = Instant::now();
                    lat.push((t2 - t).as_nanos() as u64);
                    t = t2;
                }
                lat
            }));
        }
        let mut s = Series::default();
        for task in tasks {
            let lat = task.await.unwrap_or_default();
            s.calls += lat.len();
            s.lat_ns.extend(lat);
        }
        s.seconds = start.elapsed().as_secs_f64();
        let cpu = cpu_us() - cpu0;
        let mut m = s.to_json("");
        m.insert("inflight".into(), json!(o.inflight));
        m.insert(
            "cpu_us_per_call".into(),
            json!(if s.calls > 0 { cpu / s.calls as f64 } else { 0.0 }),
        );
        m.insert("threads".into(), json!(threads()));
        result("raw-h2", "h2", m)
    });
    println!("{out}");
}

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map(|d| d.count()).unwrap_or(0)
}

// ---------------------------------------------------------------- the server

const DISCOVER: &str = "{\"resultType\":\"complete\",\"supportedVersions\":[\"2026-07-28\"],\
\"capabilities\":{\"tools\":{}},\"ttlMs\":0,\"cacheScope\":\"private\",\
\"_meta\":{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"bench-tls-server\",\"version\":\"0.1.0\"}}}";

#[derive(Default)]
struct Counters {
    connections: AtomicUsize,
    resumed: AtomicUsize,
    h2: AtomicUsize,
    requests: AtomicUsize,
}

/// Prints `listening on ...`, then one line of counters per stdin line; exits at stdin's end.
fn control(what: &str, counters: Arc<Counters>) {
    println!("listening on {what}");
    std::io::stdout().flush().ok();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        for line in stdin.lock().lines() {
            if line.is_err() {
                break;
            }
            println!(
                "{}",
                json!({
                    "connections": counters.connections.load(Relaxed),
                    "resumed": counters.resumed.load(Relaxed),
                    "h2": counters.h2.load(Relaxed),
                    "requests": counters.requests.load(Relaxed),
                })
            );
            std::io::stdout().flush().ok();
        }
        std::process::exit(0);
    });
}

fn server(args: &[String]) {
    let sse = args.iter().any(|a| a == "--sse");
    let h2 = args.iter().any(|a| a == "--h2");
    let plain = args.iter().any(|a| a == "--plain");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(&format!("runtime: {e}")));
    rt.block_on(async move {
        let cert = CertificateDer::from_pem_file(vector("trusted-server.pem")).unwrap_or_else(|e| fail(&e.to_string()));
        let key =
            PrivateKeyDer::from_pem_file(vector("trusted-server-key.pem")).unwrap_or_else(|e| fail(&e.to_string()));
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap_or_else(|e| fail(&e.to_string()))
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)
            .unwrap_or_else(|e| fail(&e.to_string()));
        config.alpn_protocols = if h2 {
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        } else {
            vec![b"http/1.1".to_vec()]
        };
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| fail(&e.to_string()));
        let port = listener.local_addr().unwrap_or_else(|e| fail(&e.to_string())).port();
        let counters = Arc::new(Counters::default());
        let scheme = if plain { "http" } else { "https" };
        control(&format!("{scheme}://127.0.0.1:{port}/mcp"), counters.clone());
        while let Ok((tcp, _)) = listener.accept().await {
            tcp.set_nodelay(true).ok();
            counters.connections.fetch_add(1, Relaxed);
            if plain {
                let served = counters.clone();
                let service = hyper::service::service_fn(move |request| {
                    served.requests.fetch_add(1, Relaxed);
                    answer(request, sse)
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(tcp), service),
                );
                continue;
            }
            let (acceptor, counters) = (acceptor.clone(), counters.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let state = tls.get_ref().1;
                if state.handshake_kind() == Some(rustls::HandshakeKind::Resumed) {
                    counters.resumed.fetch_add(1, Relaxed);
                }
                let is_h2 = state.alpn_protocol() == Some(b"h2");
                let io = hyper_util::rt::TokioIo::new(tls);
                let served = counters.clone();
                let service = hyper::service::service_fn(move |request| {
                    served.requests.fetch_add(1, Relaxed);
                    answer(request, sse)
                });
                if is_h2 {
                    counters.h2.fetch_add(1, Relaxed);
                    let _ = hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                        .max_concurrent_streams(256)
                        .serve_connection(io, service)
                        .await;
                } else {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                }
            });
        }
    });
}

/// The value after the first `"key":` in `body` up to the next `,` or `}` (an id), or the
/// string after `"key":"` (a method name).
fn field<'a>(body: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let at = find(body, key)? + key.len();
    let rest = &body[at..];
    let end = rest.iter().position(|&b| b == b',' || b == b'}')?;
    Some(&rest[..end])
}

/// The raw (still escaped) bytes of the echo's `text` argument: from `"text":"` to the next
/// unescaped quote.
fn echo_text(body: &[u8]) -> &[u8] {
    let Some(at) = find(body, b"\"text\":\"") else {
        return b"";
    };
    let rest = &body[at + 8..];
    let mut k = 0;
    while k < rest.len() {
        match rest[k] {
            b'\\' => k += 2,
            b'"' => return &rest[..k],
            _ => k += 1,
        }
    }
    b""
}

async fn answer(
    request: hyper::Request<hyper::body::Incoming>,
    sse: bool,
) -> Result<hyper::Response<Full<Bytes>>, std::convert::Infallible> {
    let status = |code: u16| {
        hyper::Response::builder()
            .status(code)
            .body(Full::new(Bytes::new()))
            .unwrap_or_default()
    };
    if request.method() != hyper::Method::POST {
        return Ok(status(405));
    }
    let Ok(body) = request.into_body().collect().await.map(|b| b.to_bytes()) else {
        return Ok(status(400));
    };
    let (Some(id), Some(method)) = (field(&body, b"\"id\":"), field(&body, b"\"method\":")) else {
        return Ok(status(202)); // a notification, or a response
    };
    let mut out = Vec::with_capacity(body.len() + 256);
    if sse {
        out.extend_from_slice(b"event: message\ndata: ");
    }
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id);
    out.extend_from_slice(b",\"result\":");
    match method {
        b"\"server/discover\"" => out.extend_from_slice(DISCOVER.as_bytes()),
        b"\"tools/call\"" => {
            out.extend_from_slice(b"{\"resultType\":\"complete\",\"content\":[{\"type\":\"text\",\"text\":\"");
            out.extend_from_slice(echo_text(&body));
            out.extend_from_slice(b"\"}]}");
        }
        _ => out.extend_from_slice(b"{}"),
    }
    out.push(b'}');
    if sse {
        out.extend_from_slice(b"\n\n");
    }
    let kind = if sse { "text/event-stream" } else { "application/json" };
    Ok(hyper::Response::builder()
        .header("content-type", kind)
        .body(Full::new(Bytes::from(out)))
        .unwrap_or_default())
}

// ---------------------------------------------------------------- the CONNECT proxy

fn proxy() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(&format!("runtime: {e}")));
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| fail(&e.to_string()));
        let port = listener.local_addr().unwrap_or_else(|e| fail(&e.to_string())).port();
        let counters = Arc::new(Counters::default());
        control(&format!("http://127.0.0.1:{port}"), counters.clone());
        while let Ok((mut client, _)) = listener.accept().await {
            client.set_nodelay(true).ok();
            let counters = counters.clone();
            tokio::spawn(async move {
                // The head up to its blank line; a client speaks again only after the answer.
                let mut head = Vec::with_capacity(256);
                let mut chunk = [0u8; 512];
                while find(&head, b"\r\n\r\n").is_none() {
                    if head.len() > 16 * 1024 {
                        return;
                    }
                    match client.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&chunk[..n]),
                    }
                }
                let line = String::from_utf8_lossy(&head[..find(&head, b"\r\n").unwrap_or(0)]).into_owned();
                let mut parts = line.split(' ');
                let (Some("CONNECT"), Some(target)) = (parts.next(), parts.next()) else {
                    let _ = client
                        .write_all(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
                        .await;
                    return;
                };
                let Ok(mut upstream) = tokio::net::TcpStream::connect(target).await else {
                    let _ = client
                        .write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")
                        .await;
                    return;
                };
                upstream.set_nodelay(true).ok();
                counters.connections.fetch_add(1, Relaxed);
                if client
                    .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                    .await
                    .is_err()
                {
                    return;
                }
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            });
        }
    });
}
