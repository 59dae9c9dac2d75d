//! A small HTTP/1.1 server for the HTTP transport tests, on 127.0.0.1 with an ephemeral port.
//!
//! Every request is recorded (method, path, headers, body, connection number, arrival time)
//! once its handler has produced the reply.
//! Handlers answer with a full body or a chunked stream fed from a channel; while a stream is
//! open the server watches the socket, so a client that drops the connection is seen (and
//! counted). Keep-alive is the default; every connection is counted.

// Each test binary uses a different subset of the helpers.
#![allow(dead_code)]

/// Runs each named `async fn` test on both runtimes: on a current-thread one a call waiting
/// alone runs its exchange on its own task (`transport/http/inline`), on a multi-thread one the
/// exchange has a task of its own. Test binaries load it with `#[macro_use] mod http_support;`.
#[allow(unused_macros)]
macro_rules! on_both_runtimes {
    ($($test:ident)*) => {
        $(mod $test {
            #[tokio::test(flavor = "current_thread")]
            async fn current_thread() {
                super::$test().await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn multi_thread() {
                super::$test().await
            }
        })*
    };
}

use mcp_client::HttpConfig;
use mcp_client::{Client, ClientConfig, ConnectMode, TransportConfig};
use serde_json::{json, Value};
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, Notify};

pub const MODERN: &str = "2026-07-28";
pub const LATEST_LEGACY: &str = "2025-11-25";
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// Names lowercased, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Which connection carried it (1-based, in accept order).
    pub conn: usize,
    pub at: Instant,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
    }

    /// Every header whose name starts with `prefix` (lowercase), sorted.
    pub fn headers_with_prefix(&self, prefix: &str) -> Vec<(String, String)> {
        let mut out: Vec<_> = self
            .headers
            .iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .cloned()
            .collect();
        out.sort();
        out
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The JSON-RPC method of a POST body.
    pub fn rpc_method(&self) -> Option<String> {
        self.json().get("method").and_then(Value::as_str).map(str::to_string)
    }

    pub fn id(&self) -> Value {
        self.json().get("id").cloned().unwrap_or(Value::Null)
    }

    pub fn is_notification(&self) -> bool {
        let body = self.json();
        body.get("method").is_some() && body.get("id").is_none()
    }

    pub fn meta_version(&self) -> Option<String> {
        self.json()["params"]["_meta"][META_VERSION]
            .as_str()
            .map(str::to_string)
    }
}

pub enum Body {
    Full(Vec<u8>),
    /// Chunks as they come; the stream ends when every sender is gone.
    Stream(mpsc::UnboundedReceiver<Vec<u8>>),
}

pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Body,
    /// Whether the connection closes after this reply.
    pub close: Close,
}

#[derive(Clone, Copy, PartialEq)]
pub enum Close {
    No,
    /// With `connection: close` in the reply.
    Announced,
    /// Without a word, as a server's idle timeout does: the client learns it when it reads.
    Silent,
}

impl Reply {
    pub fn status(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Body::Full(Vec::new()),
            close: Close::No,
        }
    }

    pub fn json_status(status: u16, value: Value) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: Body::Full(serde_json::to_vec(&value).unwrap()),
            close: Close::No,
        }
    }

    pub fn json(value: Value) -> Reply {
        Reply::json_status(200, value)
    }

    pub fn text(status: u16, text: &str) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), "text/plain".into())],
            body: Body::Full(text.as_bytes().to_vec()),
            close: Close::No,
        }
    }

    /// A complete event stream made of `chunks` (raw SSE text).
    pub fn sse<I: IntoIterator<Item = String>>(chunks: I) -> Reply {
        let (reply, tx) = Reply::sse_stream();
        for c in chunks {
            tx.send(c.into_bytes()).unwrap();
        }
        reply
    }

    /// An open event stream and its feeder; dropping the feeder ends the stream.
    pub fn sse_stream() -> (Reply, mpsc::UnboundedSender<Vec<u8>>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Reply {
                status: 200,
                headers: vec![
                    ("content-type".into(), "text/event-stream".into()),
                    ("cache-control".into(), "no-cache".into()),
                ],
                body: Body::Stream(rx),
                close: Close::No,
            },
            tx,
        )
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_ascii_lowercase(), value.into()));
        self
    }

    pub fn closing(mut self) -> Reply {
        self.close = Close::Announced;
        self
    }

    pub fn hanging_up(mut self) -> Reply {
        self.close = Close::Silent;
        self
    }
}

/// One SSE `message` event carrying `value`.
pub fn event(value: &Value) -> String {
    format!("event: message\ndata: {value}\n\n")
}

/// One SSE event with an id.
pub fn event_with_id(id: &str, value: &Value) -> String {
    format!("id: {id}\nevent: message\ndata: {value}\n\n")
}

pub fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub fn rpc_error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

pub fn discover_result() -> Value {
    json!({
        "resultType": "complete",
        "supportedVersions": [MODERN],
        "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
        "ttlMs": 0,
        "cacheScope": "public",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "http-test", "version": "1.0.0"}}
    })
}

pub fn initialize_result(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "http-legacy-test", "version": "1.0.0"}
    })
}

pub fn text_result(text: &str) -> Value {
    json!({"resultType": "complete", "content": [{"type": "text", "text": text}], "isError": false})
}

type Handler = Arc<dyn Fn(Request) -> Pin<Box<dyn Future<Output = Reply> + Send>> + Send + Sync>;

struct Shared {
    log: Mutex<Vec<Request>>,
    /// Paths of streamed replies the client dropped before the stream ended.
    dropped: Mutex<Vec<String>>,
    connections: AtomicUsize,
    changed: Notify,
}

pub struct Server {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    /// Starts a server answering every request with `handler`.
    pub async fn start<F, Fut>(handler: F) -> Server
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Reply> + Send + 'static,
    {
        let handler: Handler = Arc::new(move |req| Box::pin(handler(req)));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            log: Mutex::new(Vec::new()),
            dropped: Mutex::new(Vec::new()),
            connections: AtomicUsize::new(0),
            changed: Notify::new(),
        });
        let s = shared.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let conn = s.connections.fetch_add(1, Ordering::SeqCst) + 1;
                let _ = stream.set_nodelay(true);
                tokio::spawn(serve(stream, conn, handler.clone(), s.clone()));
            }
        });
        Server { addr, shared, task }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.shared.log.lock().unwrap().clone()
    }

    pub fn posts(&self) -> Vec<Request> {
        self.requests().into_iter().filter(|r| r.method == "POST").collect()
    }

    /// The JSON-RPC methods of all POSTs, in arrival order.
    pub fn rpc_methods(&self) -> Vec<String> {
        self.posts()
            .iter()
            .map(|r| r.rpc_method().unwrap_or_else(|| "<response>".into()))
            .collect()
    }

    pub fn posts_of(&self, method: &str) -> Vec<Request> {
        self.posts()
            .into_iter()
            .filter(|r| r.rpc_method().as_deref() == Some(method))
            .collect()
    }

    pub fn of_method(&self, http_method: &str) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == http_method)
            .collect()
    }

    pub fn connections(&self) -> usize {
        self.shared.connections.load(Ordering::SeqCst)
    }

    pub fn dropped(&self) -> Vec<String> {
        self.shared.dropped.lock().unwrap().clone()
    }

    /// Waits (up to `limit`) until `check` holds for the server's records.
    pub async fn wait_until(&self, limit: Duration, what: &str, check: impl Fn(&Server) -> bool) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let changed = self.shared.changed.notified();
            if check(self) {
                return;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                assert!(
                    check(self),
                    "timed out waiting for: {what}; requests: {:?}",
                    self.summary()
                );
                return;
            }
        }
    }

    /// `METHOD path rpc-method` per request, for failure messages.
    pub fn summary(&self) -> Vec<String> {
        self.requests()
            .iter()
            .map(|r| format!("{} {} {}", r.method, r.path, r.rpc_method().unwrap_or_default()))
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(stream: TcpStream, conn: usize, handler: Handler, shared: Arc<Shared>) {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    loop {
        let Some(request) = read_request(&mut reader, conn).await else {
            return;
        };
        let path = request.path.clone();
        // Logged once the handler has run, so what a test sees logged has been acted upon.
        let reply = handler(request.clone()).await;
        shared.log.lock().unwrap().push(request);
        shared.changed.notify_waiters();
        let mut head = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
        for (k, v) in &reply.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        if reply.close == Close::Announced {
            head.push_str("connection: close\r\n");
        }
        match reply.body {
            Body::Full(bytes) => {
                head.push_str(&format!("content-length: {}\r\n\r\n", bytes.len()));
                let mut out = head.into_bytes();
                out.extend_from_slice(&bytes);
                if write.write_all(&out).await.is_err() {
                    return;
                }
            }
            Body::Stream(mut rx) => {
                head.push_str("transfer-encoding: chunked\r\n\r\n");
                if write.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let mut client_gone = false;
                loop {
                    tokio::select! {
                        chunk = rx.recv() => match chunk {
                            Some(bytes) if bytes.is_empty() => {}
                            Some(bytes) => {
                                let mut out = format!("{:x}\r\n", bytes.len()).into_bytes();
                                out.extend_from_slice(&bytes);
                                out.extend_from_slice(b"\r\n");
                                if write.write_all(&out).await.is_err() {
                                    client_gone = true;
                                    break;
                                }
                            }
                            None => {
                                if write.write_all(b"0\r\n\r\n").await.is_err() {
                                    client_gone = true;
                                }
                                break;
                            }
                        },
                        gone = peer_closed(&mut reader) => {
                            if gone {
                                client_gone = true;
                                break;
                            }
                        }
                    }
                }
                if client_gone {
                    shared.dropped.lock().unwrap().push(path);
                    shared.changed.notify_waiters();
                    return;
                }
            }
        }
        shared.changed.notify_waiters();
        if reply.close != Close::No {
            let _ = write.shutdown().await;
            return;
        }
    }
}

/// Resolves `true` when the client closed its side (while a reply is streaming it sends nothing).
async fn peer_closed(reader: &mut BufReader<tokio::net::tcp::OwnedReadHalf>) -> bool {
    match reader.fill_buf().await {
        Ok([]) | Err(_) => true,
        // Unexpected bytes mid-reply: stop watching.
        Ok(_) => std::future::pending().await,
    }
}

async fn read_request(reader: &mut BufReader<tokio::net::tcp::OwnedReadHalf>, conn: usize) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).await.ok()? == 0 {
        return None;
    }
    let at = Instant::now();
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).await.ok()? == 0 {
            return None;
        }
        let h = h.trim_end_matches(['\r', '\n']);
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let len = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).await.ok()?;
    Some(Request {
        method,
        path,
        headers,
        body,
        conn,
        at,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        _ => "Status",
    }
}

// ---------------------------------------------------------------------------------------------
// Clients
// ---------------------------------------------------------------------------------------------

pub fn http_config(url: &str) -> HttpConfig {
    HttpConfig::new(url)
}

pub fn client_for(http: HttpConfig, mode: ConnectMode) -> Client {
    let mut cfg = ClientConfig::new(TransportConfig::Http(http));
    cfg.mode = mode;
    cfg.request_timeout = Duration::from_secs(10);
    cfg.probe_timeout = Duration::from_secs(5);
    // A cache of its own: the process's would remember another test's server on a port the
    // kernel hands out again, and skip the probe a test checks.
    cfg.era_cache = mcp_client::EraCache::new();
    Client::new(cfg)
}

/// The log lines a client reports, collected.
#[derive(Clone, Default)]
pub struct Logs(pub Arc<Mutex<Vec<String>>>);

impl Logs {
    pub fn attach(client: &Client) -> Logs {
        let logs = Logs::default();
        let sink = logs.0.clone();
        client.on_log(Some(Arc::new(move |line: &mcp_client::LogLine| {
            sink.lock()
                .unwrap()
                .push(format!("{} {} {}", line.source, line.level, line.message));
        })));
        logs
    }

    pub fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// The notifications a client receives, collected.
#[derive(Clone, Default)]
pub struct Notes(pub Arc<Mutex<Vec<(String, Value)>>>);

impl Notes {
    pub fn attach(client: &Client) -> Notes {
        let notes = Notes::default();
        let sink = notes.0.clone();
        client.on_notification(Some(Arc::new(move |method: &str, params: &Value| {
            sink.lock().unwrap().push((method.to_string(), params.clone()));
        })));
        notes
    }

    pub fn methods(&self) -> Vec<String> {
        self.0.lock().unwrap().iter().map(|(m, _)| m.clone()).collect()
    }
}

pub async fn within<T>(limit: Duration, fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, fut).await.expect("timed out")
}
