//! `--http ADDR`: Streamable HTTP for both eras (or, with `--legacy-sse`,
//! the 2024-11-05 HTTP+SSE transport in `legacy_sse.rs`). One thread per
//! connection; request handlers run on their own threads (as over stdio)
//! and reach the connection through a [`ChannelSink`]. Only the connection
//! thread writes to its socket.

use crate::config::EraMode;
use crate::http_parse::{self, Headers, Request, SSE_KEEP_ALIVE};
use crate::server::{self, Chan, Era, Server, SessionCell};
use crate::sessions::{self, HttpSession, Sessions};
use crate::sink::{NullSink, SinkRef};
use crate::streams::{self, ChannelSink, Out, SplitSink};
use crate::wire;
use crate::{legacy_sse, mcp_headers};
use serde_json::{json, Value};
use std::io::{self, BufReader, Write};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How often a waiting connection checks whether its peer went away.
pub const POLL: Duration = Duration::from_millis(50);

pub struct HttpServer {
    pub srv: Arc<Server>,
    pub sessions: Sessions,
    /// `--oauth`: the authorization server, and the bearer check.
    pub oauth: Option<crate::oauth::OAuth>,
}

impl HttpServer {
    /// `--record`: one JSON line per HTTP request.
    fn record(&self, req: &Request) {
        if !self.srv.recorder.enabled() {
            return;
        }
        let body = serde_json::from_slice::<Value>(&req.body).unwrap_or(Value::Null);
        self.srv.recorder.record_json(&json!({
            "http": {"method": req.method, "path": req.target, "headers": req.headers.to_json()},
            "body": body,
        }));
    }
}

/// The URL printed for a bound address (an unspecified address prints as
/// loopback, which is what clients should connect to).
pub fn endpoint_url(addr: std::net::SocketAddr) -> String {
    let host = match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => "127.0.0.1".to_string(),
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) if ip.is_unspecified() => "[::1]".to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    };
    format!("http://{host}:{}/mcp", addr.port())
}

/// Binds `addr`, prints `fixture: listening on <url>` on stdout and serves
/// on background threads.
pub fn start(srv: Arc<Server>, addr: &str) -> io::Result<()> {
    let listener = TcpListener::bind(addr)?;
    let url = endpoint_url(listener.local_addr()?);
    {
        let mut out = io::stdout().lock();
        writeln!(out, "fixture: listening on {url}")?;
        out.flush()?;
    }
    eprintln!(
        "fixture: serving {} on {url}",
        if srv.cfg.legacy_sse {
            "HTTP+SSE (2024-11-05)"
        } else {
            "Streamable HTTP"
        }
    );
    let hs = Arc::new(HttpServer {
        oauth: crate::oauth::OAuth::from_config(&srv.cfg.oauth, &url),
        srv,
        sessions: Sessions::default(),
    });
    thread::spawn(move || {
        for stream in listener.incoming() {
            match stream {
                Ok(stream) => {
                    let hs = Arc::clone(&hs);
                    thread::spawn(move || match Conn::new(hs, stream) {
                        Ok(conn) => conn.run(),
                        Err(e) => eprintln!("fixture: connection setup failed: {e}"),
                    });
                }
                Err(e) => eprintln!("fixture: accept failed: {e}"),
            }
        }
    });
    Ok(())
}

/// A parsed POST body.
pub enum Kind {
    Request { id: Value, method: String },
    Notification,
    Response,
}

/// Sorts a JSON-RPC message; Err is (reply id, -32600 message).
pub fn classify(msg: &Value) -> Result<Kind, (Value, &'static str)> {
    let Some(obj) = msg.as_object() else {
        let why = if msg.is_array() {
            "Invalid Request: batches are not supported"
        } else {
            "Invalid Request: not an object"
        };
        return Err((Value::Null, why));
    };
    let id = obj.get("id");
    let reply_id = id.filter(|i| server::valid_id(i)).cloned().unwrap_or(Value::Null);
    if obj.get("jsonrpc") != Some(&json!("2.0")) {
        return Err((reply_id, "Invalid Request: jsonrpc must be \"2.0\""));
    }
    match (obj.get("method"), id) {
        (Some(Value::String(_)), None) => Ok(Kind::Notification),
        (Some(Value::String(m)), Some(id)) if server::valid_id(id) => Ok(Kind::Request {
            id: id.clone(),
            method: m.clone(),
        }),
        (Some(Value::String(_)), Some(_)) => Err((Value::Null, "Invalid Request: id must be a string or number")),
        (Some(_), _) => Err((reply_id, "Invalid Request: method must be a string")),
        (None, Some(_)) if obj.contains_key("result") || obj.contains_key("error") => Ok(Kind::Response),
        (None, _) => Err((reply_id, "Invalid Request")),
    }
}

/// The HTTP status of a request's final message. Modern: -32601 → 404;
/// -32020/-32021/-32022 and `_meta` errors → 400; other errors → 200.
/// Legacy JSON-RPC errors are always 200.
pub fn status_for(era: Era, msg: &Value, hint: Option<u16>) -> u16 {
    let code = msg.get("error").and_then(|e| e.get("code")).and_then(Value::as_i64);
    match (era, code) {
        (Era::Modern, Some(code)) => hint.unwrap_or(match code {
            wire::METHOD_NOT_FOUND => 404,
            wire::HEADER_MISMATCH | wire::MISSING_CAPABILITY | wire::UNSUPPORTED_VERSION => 400,
            _ => 200,
        }),
        _ => 200,
    }
}

/// The body legacy servers answer a session-less request with (clients
/// use it to detect a legacy server).
pub fn not_initialized_body() -> Value {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": wire::NOT_INITIALIZED,
           "message": "Bad Request: Server not initialized"}})
}

pub fn ms_since_epoch() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

type HeadExtra<'a> = &'a mut dyn FnMut(&Value) -> Vec<(&'static str, String)>;

pub struct Conn {
    pub hs: Arc<HttpServer>,
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    /// Send `Connection: close` and end the connection after this response.
    close: bool,
}

impl Conn {
    fn new(hs: Arc<HttpServer>, stream: TcpStream) -> io::Result<Conn> {
        stream.set_nodelay(true)?;
        stream.set_write_timeout(Some(Duration::from_secs(60)))?;
        let writer = stream.try_clone()?;
        Ok(Conn {
            hs,
            reader: BufReader::new(stream),
            writer,
            close: false,
        })
    }

    fn run(mut self) {
        loop {
            let Conn { reader, writer, .. } = &mut self;
            let parsed = http_parse::read_request(reader, &mut || {
                let _ = writer
                    .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                    .and_then(|_| writer.flush());
            });
            let req = match parsed {
                Ok(Some(req)) => req,
                Ok(None) => return,
                Err(e) => {
                    eprintln!("fixture: bad HTTP request: {}", e.message);
                    self.close = true;
                    let _ = self.respond_text(e.status, &[], &e.message);
                    return;
                }
            };
            self.close = !req.keep_alive();
            self.hs.record(&req);
            let keep = self.handle(req).unwrap_or(false);
            if !keep || self.close {
                return;
            }
        }
    }

    // ---- writing ----

    pub fn respond(
        &mut self,
        status: u16,
        content_type: Option<&str>,
        extra: &[(&'static str, String)],
        body: &[u8],
    ) -> io::Result<()> {
        let mut fields: Vec<(&str, String)> = Vec::new();
        if let Some(ct) = content_type {
            fields.push(("Content-Type", ct.to_string()));
        }
        fields.push(("Content-Length", body.len().to_string()));
        fields.extend(extra.iter().cloned());
        if self.close {
            fields.push(("Connection", "close".into()));
        }
        let mut bytes = http_parse::response_head(status, &fields).into_bytes();
        bytes.extend_from_slice(body);
        self.writer.write_all(&bytes)?;
        self.writer.flush()
    }

    pub fn respond_json(&mut self, status: u16, body: &Value, extra: &[(&'static str, String)]) -> io::Result<()> {
        let text = serde_json::to_string(body).unwrap_or_default();
        self.respond(status, Some("application/json"), extra, text.as_bytes())
    }

    pub fn respond_text(&mut self, status: u16, extra: &[(&'static str, String)], text: &str) -> io::Result<()> {
        let body = format!("{text}\n");
        self.respond(status, Some("text/plain; charset=utf-8"), extra, body.as_bytes())
    }

    pub fn rpc_error(&mut self, status: u16, id: &Value, code: i64, message: &str) -> io::Result<()> {
        let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        self.respond_json(status, &body, &[])
    }

    fn not_allowed(&mut self, allow: &str) -> io::Result<bool> {
        let msg = format!("Method Not Allowed (allowed: {allow})");
        self.respond_text(405, &[("Allow", allow.to_string())], &msg)?;
        Ok(true)
    }

    fn accepted(&mut self) -> io::Result<bool> {
        self.respond(202, None, &[], b"")?;
        Ok(true)
    }

    /// Starts a `text/event-stream` response with a chunked body.
    pub fn start_sse(&mut self, extra: &[(&'static str, String)]) -> io::Result<()> {
        let mut fields: Vec<(&str, String)> = vec![
            ("Content-Type", "text/event-stream".into()),
            ("Cache-Control", "no-cache".into()),
            ("Transfer-Encoding", "chunked".into()),
        ];
        fields.extend(extra.iter().cloned());
        if self.close {
            fields.push(("Connection", "close".into()));
        }
        self.writer
            .write_all(http_parse::response_head(200, &fields).as_bytes())?;
        self.writer.flush()
    }

    pub fn sse_write(&mut self, text: &str) -> io::Result<()> {
        self.writer.write_all(&http_parse::chunk(text.as_bytes()))?;
        self.writer.flush()
    }

    pub fn sse_end(&mut self) -> io::Result<()> {
        self.writer.write_all(http_parse::LAST_CHUNK)?;
        self.writer.flush()
    }

    /// Whether the peer closed its side (checked without consuming input).
    pub fn peer_closed(&self) -> bool {
        let stream = self.reader.get_ref();
        if stream.set_nonblocking(true).is_err() {
            return true;
        }
        let mut byte = [0u8; 1];
        let peeked = stream.peek(&mut byte);
        let _ = stream.set_nonblocking(false);
        match peeked {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => e.kind() != io::ErrorKind::WouldBlock,
        }
    }

    // ---- routing ----

    fn handle(&mut self, req: Request) -> io::Result<bool> {
        // --oauth: the OAuth endpoints, and the bearer check for every other request.
        if let Some(oauth) = &Arc::clone(&self.hs).oauth {
            if let Some(keep) = oauth.handle(self, &req)? {
                return Ok(keep);
            }
        }
        if self.hs.srv.cfg.legacy_sse {
            return legacy_sse::handle(self, req);
        }
        if req.path == "/sse" || req.path == "/message" {
            self.respond_text(
                404,
                &[],
                "Not Found: this server speaks Streamable HTTP (HTTP+SSE needs --legacy-sse)",
            )?;
            return Ok(true);
        }
        match req.method.as_str() {
            "POST" => self.post(req),
            "GET" => self.get(req),
            "DELETE" => self.delete(req),
            _ => {
                let allow = if self.hs.srv.cfg.era == EraMode::Modern {
                    "POST"
                } else {
                    "GET, POST, DELETE"
                };
                self.not_allowed(allow)
            }
        }
    }

    /// Which era a POST is served in. Dual mode: `initialize` is legacy;
    /// `server/discover`, a `_meta` protocolVersion or a supported modern
    /// `MCP-Protocol-Version` header is modern; other requests are legacy.
    /// Notifications and responses are legacy when they carry a session id.
    fn era_for(&self, kind: &Kind, msg: &Value, headers: &Headers, has_session: bool) -> Era {
        let cfg = &self.hs.srv.cfg;
        match cfg.era {
            EraMode::Modern => Era::Modern,
            EraMode::Legacy => Era::Legacy,
            EraMode::Dual => match kind {
                Kind::Request { method, .. } if method == "initialize" => Era::Legacy,
                Kind::Request { method, .. } => {
                    let params = msg.get("params").and_then(Value::as_object);
                    let header_modern = headers
                        .get("mcp-protocol-version")
                        .is_some_and(|v| cfg.supported_versions.contains(&v));
                    if method == "server/discover" || params.is_some_and(server::has_modern_meta) || header_modern {
                        Era::Modern
                    } else {
                        Era::Legacy
                    }
                }
                _ if has_session => Era::Legacy,
                _ => Era::Modern,
            },
        }
    }

    fn post(&mut self, req: Request) -> io::Result<bool> {
        let accept = req.headers.get("accept");
        let accept = accept.as_deref();
        if !(http_parse::accepts(accept, "application/json") && http_parse::accepts(accept, "text/event-stream")) {
            let message = "Not Acceptable: Client must accept both application/json and text/event-stream";
            self.rpc_error(406, &Value::Null, wire::NOT_INITIALIZED, message)?;
            return Ok(true);
        }
        if !http_parse::is_json_content_type(req.headers.get("content-type").as_deref()) {
            let message = "Unsupported Media Type: Content-Type must be application/json";
            self.rpc_error(415, &Value::Null, wire::NOT_INITIALIZED, message)?;
            return Ok(true);
        }
        let Ok(msg) = serde_json::from_slice::<Value>(&req.body) else {
            self.rpc_error(400, &Value::Null, wire::PARSE_ERROR, "Parse error")?;
            return Ok(true);
        };
        let kind = match classify(&msg) {
            Ok(kind) => kind,
            Err((id, message)) => {
                self.rpc_error(400, &id, wire::INVALID_REQUEST, message)?;
                return Ok(true);
            }
        };
        let session_id = req.headers.get("mcp-session-id");
        match self.era_for(&kind, &msg, &req.headers, session_id.is_some()) {
            Era::Modern => self.modern_post(&req, msg, kind),
            Era::Legacy => self.legacy_post(&req, msg, kind, session_id),
        }
    }

    /// A channel for messages that get no response body (notifications and
    /// responses: 202).
    fn quiet_chan(session: Arc<SessionCell>, era: Era) -> Chan {
        let out: SinkRef = Arc::new(NullSink);
        Chan {
            out,
            session,
            era: Some(era),
            inline_ordering: false,
            param_headers: None,
        }
    }

    fn request_chan(out: SinkRef, session: Arc<SessionCell>, era: Era, req: &Request) -> Chan {
        Chan {
            out,
            session,
            era: Some(era),
            inline_ordering: false,
            param_headers: Some(req.headers.with_prefix("mcp-param-")),
        }
    }

    /// Modern (2026-07-28): stateless; any `Mcp-Session-Id` is ignored.
    fn modern_post(&mut self, req: &Request, msg: Value, kind: Kind) -> io::Result<bool> {
        let srv = Arc::clone(&self.hs.srv);
        let Kind::Request { id, method } = kind else {
            srv.dispatch(msg, &Self::quiet_chan(Arc::clone(&srv.default_session), Era::Modern));
            return self.accepted();
        };
        let params = msg.get("params").and_then(Value::as_object);
        // `initialize` comes from legacy clients (no Mcp-* headers): it gets
        // the -32022 listing the modern versions (--era modern).
        let checked = match method.as_str() {
            "initialize" => Ok(()),
            _ => mcp_headers::check_modern(&req.headers, &method, params),
        };
        if let Err(message) = checked {
            eprintln!("fixture: {message}");
            self.rpc_error(400, &id, wire::HEADER_MISMATCH, &message)?;
            return Ok(true);
        }
        let (sink, rx) = ChannelSink::new();
        let out: SinkRef = sink.clone();
        let chan = Self::request_chan(out, Arc::clone(&srv.default_session), Era::Modern, req);
        srv.dispatch(msg, &chan);
        drop(chan);
        // A listen is always a stream; other requests per --sse-responses.
        let sse = srv.cfg.sse_responses || method == "subscriptions/listen";
        self.pump(rx, &sink, &id, Era::Modern, sse, &mut |_| Vec::new())
    }

    /// Legacy Streamable HTTP (2025-03-26 and later): sessions.
    fn legacy_post(&mut self, req: &Request, msg: Value, kind: Kind, session_id: Option<String>) -> io::Result<bool> {
        let srv = Arc::clone(&self.hs.srv);
        let sse = srv.cfg.sse_responses;
        if let Kind::Request { id, method } = &kind {
            if method == "initialize" {
                return self.initialize(req, msg, id.clone(), sse);
            }
        }
        let Some(session) = self.legacy_session(req, session_id)? else {
            return Ok(true);
        };
        let Kind::Request { id, .. } = kind else {
            srv.dispatch(msg, &Self::quiet_chan(Arc::clone(&session.cell), Era::Legacy));
            return self.accepted();
        };
        if self.hs.sessions.expires(&session, srv.cfg.expire_session_after) {
            eprintln!("fixture: session {} expired (--expire-session-after)", session.id);
            self.hs.sessions.remove(&session.id, &srv);
            self.session_not_found()?;
            return Ok(true);
        }
        let (sink, rx) = ChannelSink::new();
        let out: SinkRef = if sse {
            sink.clone()
        } else {
            Arc::new(SplitSink {
                post: Arc::clone(&sink),
                hub: Arc::clone(&session.hub),
                reply_id: id.clone(),
            })
        };
        let chan = Self::request_chan(out, Arc::clone(&session.cell), Era::Legacy, req);
        srv.dispatch(msg, &chan);
        drop(chan);
        self.pump(rx, &sink, &id, Era::Legacy, sse, &mut |_| Vec::new())
    }

    /// `initialize` opens a session; its id goes out in `Mcp-Session-Id`
    /// only when the result is a success.
    fn initialize(&mut self, req: &Request, msg: Value, id: Value, sse: bool) -> io::Result<bool> {
        let srv = Arc::clone(&self.hs.srv);
        let session = HttpSession::new();
        let (sink, rx) = ChannelSink::new();
        let out: SinkRef = sink.clone();
        let chan = Self::request_chan(out, Arc::clone(&session.cell), Era::Legacy, req);
        srv.dispatch(msg, &chan);
        drop(chan);
        let hs = Arc::clone(&self.hs);
        self.pump(rx, &sink, &id, Era::Legacy, sse, &mut |first| {
            let result = first.get("result").filter(|_| streams::is_final(first, &id));
            let Some(version) = result.and_then(|r| r.get("protocolVersion")).and_then(Value::as_str) else {
                return Vec::new();
            };
            session.set_version(version);
            session.count_request();
            hs.sessions.insert(Arc::clone(&session));
            eprintln!("fixture: legacy session {} opened ({version})", session.id);
            vec![("Mcp-Session-Id", session.id.clone())]
        })
    }

    fn session_not_found(&mut self) -> io::Result<()> {
        self.rpc_error(404, &Value::Null, -32001, "Session not found")
    }

    /// The session a legacy request names; None when the answer (400 or
    /// 404) has already been written.
    fn legacy_session(&mut self, req: &Request, session_id: Option<String>) -> io::Result<Option<Arc<HttpSession>>> {
        let Some(sid) = session_id else {
            self.respond_json(400, &not_initialized_body(), &[])?;
            return Ok(None);
        };
        let Some(session) = self.hs.sessions.get(&sid) else {
            self.session_not_found()?;
            return Ok(None);
        };
        let header = req.headers.get("mcp-protocol-version");
        if let Err(message) = sessions::version_check(&session.version(), header.as_deref()) {
            eprintln!("fixture: {message}");
            self.rpc_error(400, &Value::Null, wire::NOT_INITIALIZED, &message)?;
            return Ok(None);
        }
        Ok(Some(session))
    }

    /// Without a session id, GET and DELETE are modern requests (405); in
    /// `--era legacy` they get the "Server not initialized" 400.
    fn session_for_stream(&mut self, req: &Request) -> io::Result<Option<Arc<HttpSession>>> {
        let cfg = &self.hs.srv.cfg;
        let session_id = req.headers.get("mcp-session-id");
        if cfg.era == EraMode::Modern || (session_id.is_none() && cfg.era == EraMode::Dual) {
            self.not_allowed("POST")?;
            return Ok(None);
        }
        self.legacy_session(req, session_id)
    }

    fn delete(&mut self, req: Request) -> io::Result<bool> {
        let Some(session) = self.session_for_stream(&req)? else {
            return Ok(true);
        };
        self.hs.sessions.remove(&session.id, &self.hs.srv);
        eprintln!("fixture: legacy session {} deleted", session.id);
        self.respond(200, None, &[], b"")?;
        Ok(true)
    }

    /// The legacy GET stream: server→client requests and notifications,
    /// each event with an `id:`; `Last-Event-ID` replays what came after.
    fn get(&mut self, req: Request) -> io::Result<bool> {
        let Some(session) = self.session_for_stream(&req)? else {
            return Ok(true);
        };
        if !http_parse::accepts(req.headers.get("accept").as_deref(), "text/event-stream") {
            self.respond_text(406, &[], "Not Acceptable: GET needs Accept: text/event-stream")?;
            return Ok(true);
        }
        let last_header = req.headers.get("last-event-id");
        let last = match &last_header {
            None => None,
            Some(v) => match v.parse::<u64>() {
                Ok(n) => Some(n),
                Err(_) => {
                    self.respond_text(400, &[], "Bad Request: Last-Event-ID is not an id this server issued")?;
                    return Ok(true);
                }
            },
        };
        if let Some(retry_ms) = self.hs.srv.cfg.sse_retry_ms {
            return self.polling_stream(&session, last, last_header, retry_ms);
        }
        let (token, rx, replay) = session.hub.attach(last);
        let result = self.start_sse(&[]).and_then(|_| self.stream_events(rx, replay, true));
        session.hub.detach(token);
        result
    }

    /// `--sse-retry-ms` (SEP-1699): replay what the client missed, send a
    /// priming event (`id`, `retry`, empty data) and close the connection.
    fn polling_stream(
        &mut self,
        session: &HttpSession,
        last: Option<u64>,
        last_header: Option<String>,
        retry_ms: u64,
    ) -> io::Result<bool> {
        let (replay, prime, since_close) = session.hub.poll(last);
        self.hs.srv.recorder.record_json(&json!({"sse_get": {
            "session": session.id,
            "lastEventId": last_header,
            "atMs": ms_since_epoch() as u64,
            "sinceCloseMs": since_close.map(|d| d.as_millis() as u64),
            "retryMs": retry_ms,
        }}));
        self.close = true;
        self.start_sse(&[])?;
        for (id, text) in &replay {
            self.sse_write(&http_parse::sse_event(Some(*id), Some("message"), None, text))?;
        }
        self.sse_write(&http_parse::sse_event(Some(prime), None, Some(retry_ms), ""))?;
        self.sse_end()?;
        session.hub.closed_now();
        Ok(false)
    }

    /// Writes `replay`, then live events until the hub closes the stream
    /// (Ok(true): the body ended cleanly) or the peer goes away.
    pub fn stream_events(&mut self, rx: Receiver<Out>, replay: Vec<(u64, String)>, ids: bool) -> io::Result<bool> {
        let event = |id: u64, text: &str| http_parse::sse_event(ids.then_some(id), Some("message"), None, text);
        for (id, text) in &replay {
            self.sse_write(&event(*id, text))?;
        }
        loop {
            match rx.recv_timeout(POLL) {
                Ok(Out::Event(id, text)) => self.sse_write(&event(id, &text))?,
                Ok(Out::Close) | Err(RecvTimeoutError::Disconnected) => {
                    self.sse_end()?;
                    return Ok(true);
                }
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    if self.peer_closed() {
                        return Ok(false);
                    }
                }
            }
        }
    }

    /// Writes one request's messages as its HTTP response: JSON (the final
    /// response only; other messages are dropped) or SSE (`: keep-alive`
    /// comments, messages, the final response last). An SSE response starts
    /// at the first message; when that is a modern error with status 400 or
    /// 404 it is sent as JSON with that status instead. `head_extra` gives
    /// extra header fields from the message that starts the response.
    fn pump(
        &mut self,
        rx: Receiver<Out>,
        sink: &ChannelSink,
        id: &Value,
        era: Era,
        sse: bool,
        head_extra: HeadExtra<'_>,
    ) -> io::Result<bool> {
        let result = self.pump_messages(rx, id, era, sse, head_extra);
        sink.close();
        result
    }

    fn pump_messages(
        &mut self,
        rx: Receiver<Out>,
        id: &Value,
        era: Era,
        sse: bool,
        head_extra: HeadExtra<'_>,
    ) -> io::Result<bool> {
        let mut started = false;
        loop {
            let out = match rx.recv_timeout(POLL) {
                Ok(out) => out,
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                    // Unanswered so far (hang, listen, slow): is anyone still there?
                    if self.peer_closed() {
                        return Ok(false);
                    }
                    continue;
                }
            };
            match out {
                Out::Msg(msg, hint) => {
                    let last = streams::is_final(&msg, id);
                    if !sse {
                        if last {
                            let extra = head_extra(&msg);
                            self.respond_json(status_for(era, &msg, hint), &msg, &extra)?;
                            return Ok(true);
                        }
                        continue;
                    }
                    if !started {
                        let status = if last { status_for(era, &msg, hint) } else { 200 };
                        let extra = head_extra(&msg);
                        if status != 200 {
                            self.respond_json(status, &msg, &extra)?;
                            return Ok(true);
                        }
                        self.start_sse(&extra)?;
                        self.sse_write(SSE_KEEP_ALIVE)?;
                        started = true;
                    }
                    let data = serde_json::to_string(&msg).unwrap_or_default();
                    let event = http_parse::sse_event(None, Some("message"), None, &data);
                    if last {
                        self.sse_write(&format!("{SSE_KEEP_ALIVE}{event}"))?;
                        self.sse_end()?;
                        return Ok(true);
                    }
                    self.sse_write(&event)?;
                }
                Out::Raw(line) => {
                    if !sse {
                        self.respond(200, Some("application/json"), &[], line.as_bytes())?;
                        return Ok(true);
                    }
                    if !started {
                        self.start_sse(&[])?;
                        started = true;
                    }
                    self.sse_write(&http_parse::sse_event(None, Some("message"), None, &line))?;
                }
                Out::Event(..) | Out::Close => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification() {
        let kind = |v: Value| classify(&v);
        assert!(matches!(
            kind(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
            Ok(Kind::Request { .. })
        ));
        assert!(matches!(
            kind(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
            Ok(Kind::Notification)
        ));
        assert!(matches!(
            kind(json!({"jsonrpc": "2.0", "id": "srv-1", "result": {}})),
            Ok(Kind::Response)
        ));
        for (bad, id) in [
            (json!([]), Value::Null),
            (json!(3), Value::Null),
            (json!({"jsonrpc": "1.0", "id": 4, "method": "x"}), json!(4)),
            (json!({"jsonrpc": "2.0", "id": null, "method": "x"}), Value::Null),
            (json!({"jsonrpc": "2.0", "id": 5, "method": 7}), json!(5)),
            (json!({"jsonrpc": "2.0", "id": 6}), json!(6)),
        ] {
            let Err((reply_id, _)) = kind(bad.clone()) else {
                panic!("{bad} should be invalid")
            };
            assert_eq!(reply_id, id, "{bad}");
        }
    }

    #[test]
    fn status_mapping() {
        let err = |code: i64| json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "m"}});
        assert_eq!(status_for(Era::Modern, &err(-32601), None), 404);
        assert_eq!(status_for(Era::Modern, &err(-32022), None), 400);
        assert_eq!(status_for(Era::Modern, &err(-32021), None), 400);
        assert_eq!(status_for(Era::Modern, &err(-32020), None), 400);
        assert_eq!(status_for(Era::Modern, &err(-32602), None), 200);
        assert_eq!(status_for(Era::Modern, &err(-32602), Some(400)), 400);
        assert_eq!(status_for(Era::Modern, &err(-32050), None), 200);
        assert_eq!(status_for(Era::Legacy, &err(-32601), None), 200);
        let ok = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        assert_eq!(status_for(Era::Modern, &ok, None), 200);
    }

    #[test]
    fn not_initialized_body_is_exact() {
        assert_eq!(
            serde_json::to_string(&not_initialized_body()).unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}"#
        );
    }

    #[test]
    fn urls() {
        assert_eq!(
            endpoint_url("127.0.0.1:8080".parse().unwrap()),
            "http://127.0.0.1:8080/mcp"
        );
        assert_eq!(endpoint_url("0.0.0.0:1".parse().unwrap()), "http://127.0.0.1:1/mcp");
        assert_eq!(endpoint_url("[::]:2".parse().unwrap()), "http://[::1]:2/mcp");
    }
}
