//! Shared server state, message routing, era selection and the request
//! context handed to handlers. Messages arrive on a [`Chan`] (stdio, or one
//! HTTP request) which says where replies go and which session they use.

use crate::config::{Config, EraMode, OnDiscover};
use crate::listen::Listens;
use crate::signal::Signal;
use crate::sink::{self, NullSink, SinkRef, StdoutSink};
use crate::wire::{self, Recorder, Reply, RpcError};
use crate::{legacy, modern};
use serde_json::{json, Map, Value};
use std::collections::{BTreeSet, HashMap};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

pub const SERVER_NAME: &str = "mcp-fixture-server";
pub const SERVER_VERSION: &str = "0.1.0";
pub const INSTRUCTIONS: &str = "Fixture server for mcp_client tests.";

pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Logging levels, least severe first.
pub const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

pub fn level_rank(level: &str) -> Option<usize> {
    LEVELS.iter().position(|l| *l == level)
}

pub fn server_info() -> Value {
    json!({"name": SERVER_NAME, "version": SERVER_VERSION})
}

/// The era a request is served in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    Modern,
    Legacy,
}

/// Session state (legacy session data plus diagnostics). Stdio has one;
/// over HTTP each legacy session has its own and modern requests share a
/// connection-less default one.
#[derive(Default)]
pub struct Session {
    /// Dual mode only: the era fixed by the first decisive request.
    pub pinned: Option<Era>,
    pub initialized: bool,
    pub client_capabilities: Map<String, Value>,
    pub log_level: Option<String>,
    pub subscriptions: BTreeSet<String>,
    pub roots_changed: u64,
    pub cancelled: Vec<Value>,
}

/// A session and where its unsolicited messages go (legacy list_changed and
/// resources/updated): stdout, or an HTTP session's GET stream.
pub struct SessionCell {
    state: Mutex<Session>,
    pub outlet: SinkRef,
}

impl SessionCell {
    pub fn new(outlet: SinkRef) -> Arc<SessionCell> {
        Arc::new(SessionCell {
            state: Mutex::new(Session::default()),
            outlet,
        })
    }

    pub fn lock(&self) -> MutexGuard<'_, Session> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Where a message came from: replies go to `out`, state lives in `session`.
#[derive(Clone)]
pub struct Chan {
    pub out: SinkRef,
    pub session: Arc<SessionCell>,
    /// None: pick the era per request (stdio, with dual-mode pinning);
    /// Some: the HTTP layer already decided.
    pub era: Option<Era>,
    /// Stdio runs `initialize` and `subscriptions/listen` before reading the
    /// next line; HTTP runs every request on its own thread.
    pub inline_ordering: bool,
    /// HTTP only: the `Mcp-Param-*` headers (lower-case names, raw values).
    pub param_headers: Option<Map<String, Value>>,
}

/// Why a server→client request (legacy) did not produce an answer.
#[derive(Debug)]
pub enum ClientFail {
    /// The client answered with a JSON-RPC error; carries its message.
    Error(String),
    /// The client did not declare the capability the request needs.
    Lacks(&'static str),
}

pub struct Server {
    pub cfg: Config,
    pub recorder: Recorder,
    /// `--signal PATH`: a line per received message (see signal.rs).
    pub signal: Signal,
    pub listens: Listens,
    /// The stdio session, or HTTP's connection-less default session.
    pub default_session: Arc<SessionCell>,
    stdout: SinkRef,
    /// Waiting server→client requests: id → (answer channel, session key).
    pending: Mutex<HashMap<String, (Sender<Value>, usize)>>,
    next_client_id: AtomicU64,
    /// Requests whose handler is still running (hang/garbage return at once).
    in_flight: AtomicUsize,
}

/// Per-request context.
pub struct Ctx {
    pub srv: Arc<Server>,
    pub era: Era,
    pub id: Value,
    /// `params._meta` of the request (Null when absent).
    pub meta: Value,
    /// Where the response and request-scoped messages (progress, logs,
    /// legacy server→client requests) go.
    pub out: SinkRef,
    pub session: Arc<SessionCell>,
    /// HTTP only: the `Mcp-Param-*` headers received.
    pub param_headers: Option<Map<String, Value>>,
}

impl Ctx {
    pub fn session(&self) -> MutexGuard<'_, Session> {
        self.session.lock()
    }

    pub fn progress_token(&self) -> Option<&Value> {
        self.meta
            .get("progressToken")
            .filter(|t| t.is_string() || t.is_number())
    }

    /// Sends notifications/progress when the request carried a progressToken.
    pub fn progress(&self, progress: u64, total: u64, message: &str) {
        if let Some(token) = self.progress_token() {
            self.out.notify(
                "notifications/progress",
                Some(json!({"progressToken": token, "progress": progress,
                            "total": total, "message": message})),
            );
        }
    }

    /// Whether a log message at `level` may be sent: modern uses the
    /// request's `_meta` logLevel (none → no logs); legacy the session level
    /// (default "info").
    pub fn log_allows(&self, level: &str) -> bool {
        let threshold = match self.era {
            Era::Modern => self
                .meta
                .get(META_LOG_LEVEL)
                .and_then(Value::as_str)
                .map(str::to_string),
            Era::Legacy => Some(self.session().log_level.clone().unwrap_or_else(|| "info".into())),
        };
        match (threshold.as_deref().and_then(level_rank), level_rank(level)) {
            (Some(min), Some(rank)) => rank >= min,
            _ => false,
        }
    }

    pub fn log(&self, level: &str, data: Value) {
        if self.log_allows(level) {
            self.out.notify(
                "notifications/message",
                Some(json!({"level": level, "logger": "fixture", "data": data})),
            );
        }
    }

    /// The client capabilities in force for this request.
    pub fn client_capabilities(&self) -> Map<String, Value> {
        match self.era {
            Era::Modern => self
                .meta
                .get(META_CLIENT_CAPABILITIES)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            Era::Legacy => self.session().client_capabilities.clone(),
        }
    }

    pub fn has_capability(&self, name: &str) -> bool {
        self.client_capabilities().contains_key(name)
    }

    /// Legacy only: sends real server→client requests (`{method, params?}`
    /// each) on `out`, all at once, then waits for every answer. Ids are
    /// "srv-N".
    pub fn ask_client(&self, requests: &[(String, Value)]) -> Result<Map<String, Value>, ClientFail> {
        let caps = self.session().client_capabilities.clone();
        for (_, req) in requests {
            let needed = match req.get("method").and_then(Value::as_str) {
                Some("elicitation/create") => Some("elicitation"),
                Some("sampling/createMessage") => Some("sampling"),
                Some("roots/list") => Some("roots"),
                _ => None,
            };
            if let Some(cap) = needed.filter(|c| !caps.contains_key(*c)) {
                return Err(ClientFail::Lacks(cap));
            }
            let tools = caps.get("sampling").is_some_and(|s| s.get("tools").is_some());
            if needed == Some("sampling") && crate::caps::offers_tools(req) && !tools {
                return Err(ClientFail::Lacks("sampling.tools"));
            }
        }
        let session_key = Arc::as_ptr(&self.session) as usize;
        let mut waits: Vec<(String, Receiver<Value>)> = Vec::new();
        for (key, req) in requests {
            let n = self.srv.next_client_id.fetch_add(1, Ordering::SeqCst);
            let id = format!("srv-{n}");
            let (tx, rx) = mpsc::channel();
            self.srv.pending().insert(id.clone(), (tx, session_key));
            let method = req.get("method").and_then(Value::as_str).unwrap_or_default();
            self.out.send(&wire::request(&id, method, req.get("params").cloned()));
            waits.push((key.clone(), rx));
        }
        let mut answers = Map::new();
        for (key, rx) in waits {
            // The sender lives in `pending` until the answer arrives or the
            // HTTP session ends; on stdin EOF the process exits.
            let Ok(msg) = rx.recv() else {
                return Err(ClientFail::Error("session ended".into()));
            };
            if let Some(err) = msg.get("error") {
                let message = err.get("message").and_then(Value::as_str).unwrap_or("(no message)");
                return Err(ClientFail::Error(message.to_string()));
            }
            answers.insert(key, msg.get("result").cloned().unwrap_or(Value::Null));
        }
        Ok(answers)
    }
}

/// Whether `params` carries the modern `_meta` protocolVersion key.
pub fn has_modern_meta(params: &Map<String, Value>) -> bool {
    params.get("_meta").and_then(|m| m.get(META_PROTOCOL_VERSION)).is_some()
}

pub fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_number()
}

impl Server {
    pub fn new(cfg: Config, recorder: Recorder, signal: Signal) -> Arc<Server> {
        let stdout: SinkRef = Arc::new(StdoutSink::new());
        // Over HTTP nothing may reach stdout but the "listening" line.
        let outlet: SinkRef = if cfg.http.is_some() {
            Arc::new(NullSink)
        } else {
            Arc::clone(&stdout)
        };
        Arc::new(Server {
            cfg,
            recorder,
            signal,
            listens: Listens::default(),
            default_session: SessionCell::new(outlet),
            stdout,
            pending: Mutex::new(HashMap::new()),
            next_client_id: AtomicU64::new(1),
            in_flight: AtomicUsize::new(0),
        })
    }

    /// Waits (at most `limit`) for running handlers, so that answers to
    /// requests read just before stdin EOF are still written.
    pub fn drain(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        while self.in_flight.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(2));
        }
    }

    /// The stdio session's state.
    pub fn session(&self) -> MutexGuard<'_, Session> {
        self.default_session.lock()
    }

    fn pending(&self) -> MutexGuard<'_, HashMap<String, (Sender<Value>, usize)>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Forgets the server→client requests waiting on `session`; their
    /// askers then see "session ended".
    pub fn drop_pending(&self, session: &Arc<SessionCell>) {
        let key = Arc::as_ptr(session) as usize;
        self.pending().retain(|_, (_, owner)| *owner != key);
    }

    fn stdio_chan(&self) -> Chan {
        Chan {
            out: Arc::clone(&self.stdout),
            session: Arc::clone(&self.default_session),
            era: None,
            inline_ordering: true,
            param_headers: None,
        }
    }

    /// Handles one line read from stdin (without its "\n").
    pub fn handle_line(self: &Arc<Self>, raw: &[u8]) {
        self.recorder.record(raw);
        if raw.iter().all(u8::is_ascii_whitespace) {
            eprintln!("fixture: ignoring blank line");
            return;
        }
        let chan = self.stdio_chan();
        match serde_json::from_slice::<Value>(raw) {
            Ok(msg) => self.dispatch(msg, &chan),
            Err(e) => {
                eprintln!("fixture: parse error: {e}");
                chan.out
                    .send_error(&Value::Null, &RpcError::new(wire::PARSE_ERROR, "Parse error"));
            }
        }
    }

    /// Routes one parsed message (request, notification or response).
    pub fn dispatch(self: &Arc<Self>, msg: Value, chan: &Chan) {
        let out = &chan.out;
        let Value::Object(mut msg) = msg else {
            let err = RpcError::new(wire::INVALID_REQUEST, "Invalid Request: not an object");
            return out.send_error(&Value::Null, &err);
        };
        let id = msg.remove("id");
        let reply_id = id.clone().filter(valid_id).unwrap_or(Value::Null);
        if msg.get("jsonrpc") != Some(&json!("2.0")) {
            let err = RpcError::new(wire::INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\"");
            return out.send_error(&reply_id, &err);
        }
        let method = match msg.get("method") {
            Some(Value::String(m)) => m.clone(),
            Some(_) => {
                let err = RpcError::new(wire::INVALID_REQUEST, "Invalid Request: method must be a string");
                return out.send_error(&reply_id, &err);
            }
            None => {
                if let Some(id) = id.filter(|_| msg.contains_key("result") || msg.contains_key("error")) {
                    return self.on_response(id, msg);
                }
                let err = RpcError::new(wire::INVALID_REQUEST, "Invalid Request");
                return out.send_error(&reply_id, &err);
            }
        };
        let params = match msg.remove("params") {
            None => Map::new(),
            Some(Value::Object(p)) => p,
            Some(_) => {
                if id.is_some() {
                    let err = RpcError::invalid_params("params must be an object");
                    out.send_error(&reply_id, &err);
                }
                return;
            }
        };
        match id {
            None => {
                self.on_notification(&method, &params, chan);
                self.signal.notification(&method);
            }
            Some(id) if valid_id(&id) => {
                self.signal.request(&method, &params);
                self.on_request(id, method, params, chan)
            }
            Some(_) => {
                let err = RpcError::new(wire::INVALID_REQUEST, "Invalid Request: id must be a string or number");
                out.send_error(&Value::Null, &err);
            }
        }
    }

    fn on_response(&self, id: Value, msg: Map<String, Value>) {
        let key = id.as_str().unwrap_or_default().to_string();
        let waiter = self.pending().remove(&key);
        match waiter {
            Some((tx, _)) => {
                let _ = tx.send(Value::Object(msg));
            }
            None => eprintln!("fixture: response to unknown request id {id}"),
        }
    }

    fn on_notification(&self, method: &str, params: &Map<String, Value>, chan: &Chan) {
        match method {
            "notifications/cancelled" => {
                let request_id = params.get("requestId").cloned().unwrap_or(Value::Null);
                chan.session.lock().cancelled.push(request_id.clone());
                // Only listens opened on the same channel (stdio); an HTTP
                // listen ends when its stream closes.
                if self.listens.cancel(&request_id, sink::key(&chan.out)) {
                    eprintln!("fixture: listen {request_id} cancelled by client");
                }
            }
            "notifications/initialized" => {
                eprintln!("fixture: client sent notifications/initialized")
            }
            "notifications/roots/list_changed" => chan.session.lock().roots_changed += 1,
            other => eprintln!("fixture: ignoring notification {other}"),
        }
    }

    fn on_request(self: &Arc<Self>, id: Value, method: String, params: Map<String, Value>, chan: &Chan) {
        if method == "server/discover" {
            match self.cfg.on_discover {
                OnDiscover::Exit => {
                    eprintln!("fixture: exiting on discover");
                    std::process::exit(3);
                }
                OnDiscover::Silent => {
                    eprintln!("fixture: not answering server/discover (id {id})");
                    return;
                }
                OnDiscover::NotFound => {
                    return chan.out.send_error(&id, &RpcError::method_not_found());
                }
                OnDiscover::Answer => {}
            }
        }
        if self.cfg.log_requests {
            eprintln!("fixture: processing request {id} of type {method}");
        }
        let era = match chan.era {
            Some(era) => era,
            None => self.choose_era(&method, &params),
        };
        // These must take effect before the next line is read (ordering).
        // `--fast` serves everything inline: no thread start per request.
        let inline =
            self.cfg.fast || chan.inline_ordering && matches!(method.as_str(), "initialize" | "subscriptions/listen");
        if inline {
            self.serve(era, id, &method, params, chan.clone());
        } else {
            // Counted before spawning, so drain() also sees unstarted threads.
            self.in_flight.fetch_add(1, Ordering::SeqCst);
            let srv = Arc::clone(self);
            let chan = chan.clone();
            thread::spawn(move || {
                srv.serve(era, id, &method, params, chan);
                srv.in_flight.fetch_sub(1, Ordering::SeqCst);
            });
        }
    }

    /// Picks the era for a request; in dual mode the first decisive request
    /// pins it: `initialize` → legacy; `server/discover` or any request with
    /// valid modern `_meta` (supported version) → modern.
    fn choose_era(&self, method: &str, params: &Map<String, Value>) -> Era {
        match self.cfg.era {
            EraMode::Modern => Era::Modern,
            EraMode::Legacy => Era::Legacy,
            EraMode::Dual => {
                let mut session = self.session();
                if let Some(era) = session.pinned {
                    return era;
                }
                if method == "initialize" {
                    eprintln!("fixture: era pinned to legacy");
                    session.pinned = Some(Era::Legacy);
                    return Era::Legacy;
                }
                if method == "server/discover" || has_modern_meta(params) {
                    if modern::meta_error(&self.cfg, params).is_none() {
                        eprintln!("fixture: era pinned to modern");
                        session.pinned = Some(Era::Modern);
                    }
                    return Era::Modern;
                }
                Era::Legacy
            }
        }
    }

    fn serve(self: &Arc<Self>, era: Era, id: Value, method: &str, params: Map<String, Value>, chan: Chan) {
        let ctx = Ctx {
            srv: Arc::clone(self),
            era,
            id: id.clone(),
            meta: params.get("_meta").cloned().unwrap_or(Value::Null),
            out: chan.out,
            session: chan.session,
            param_headers: chan.param_headers,
        };
        let reply = panic::catch_unwind(AssertUnwindSafe(|| match era {
            Era::Modern => modern::handle(&ctx, method, &params),
            Era::Legacy => legacy::handle(&ctx, method, &params),
        }))
        .unwrap_or_else(|_| Reply::Error(RpcError::new(wire::INTERNAL_ERROR, "Internal error")));
        let out = &ctx.out;
        match reply {
            Reply::Nothing => {}
            Reply::Error(e) => out.send_error(&id, &e),
            Reply::Result(body) => out.send_result(&id, decorate(era, body, true)),
            Reply::ResultWithoutType(body) => out.send_result(&id, decorate(era, body, false)),
        }
    }
}

/// Modern results get `resultType:"complete"` (unless present or suppressed)
/// and `_meta.serverInfo`; legacy results are sent as built.
pub fn decorate(era: Era, body: Map<String, Value>, add_result_type: bool) -> Value {
    if era == Era::Legacy {
        return Value::Object(body);
    }
    let mut out = Map::new();
    if add_result_type && !body.contains_key("resultType") {
        out.insert("resultType".into(), json!("complete"));
    }
    let mut meta = Map::new();
    for (key, value) in body {
        match (key.as_str(), value) {
            ("_meta", Value::Object(m)) => meta = m,
            (_, value) => {
                out.insert(key, value);
            }
        }
    }
    meta.insert(META_SERVER_INFO.into(), server_info());
    out.insert("_meta".into(), Value::Object(meta));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn decorate_modern_and_legacy() {
        let body = obj(json!({"content": []}));
        assert_eq!(
            serde_json::to_string(&decorate(Era::Modern, body.clone(), true)).unwrap(),
            r#"{"resultType":"complete","content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-fixture-server","version":"0.1.0"}}}"#
        );
        assert_eq!(decorate(Era::Legacy, body.clone(), true), json!({"content": []}));
        let no_type = decorate(Era::Modern, body, false);
        assert!(no_type.get("resultType").is_none());
        let kept = decorate(Era::Modern, obj(json!({"resultType": "bogus"})), true);
        assert_eq!(kept["resultType"], "bogus");
    }

    #[test]
    fn a_channel_gets_its_own_replies_and_session() {
        use crate::sink::testing::VecSink;
        let srv = Server::new(
            Config::default(),
            Recorder::new(None).unwrap(),
            Signal::open(None).unwrap(),
        );
        let sink = Arc::new(VecSink::default());
        let out: SinkRef = sink.clone();
        let session = SessionCell::new(Arc::new(NullSink));
        let chan = Chan {
            out,
            session: Arc::clone(&session),
            era: Some(Era::Legacy),
            inline_ordering: true,
            param_headers: None,
        };
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                          "params": {"protocolVersion": "2025-06-18", "capabilities": {"roots": {}}}});
        srv.dispatch(init, &chan);
        srv.dispatch(
            json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}),
            &chan,
        );
        srv.dispatch(json!("not an object"), &chan);
        assert!(session.lock().initialized);
        assert_eq!(session.lock().roots_changed, 1);
        // The stdio session is untouched and no era was pinned.
        assert!(!srv.session().initialized);
        assert_eq!(srv.session().pinned, None);
        let got = sink.0.lock().unwrap();
        assert_eq!(got[0]["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(got[1]["error"]["code"], -32600);
    }

    #[test]
    fn levels() {
        assert_eq!(level_rank("debug"), Some(0));
        assert_eq!(level_rank("emergency"), Some(7));
        assert_eq!(level_rank("verbose"), None);
    }
}
