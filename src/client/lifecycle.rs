//! Connecting: era detection (`auto`), `server/discover` (modern), `initialize` (legacy).

use super::session::Session;
use super::wait::Wait;
use super::{
    supported_versions, version_mismatch, CancelToken, Client, ConnectMode, Connection, RequestOptions, ServerInfo,
};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::era::{self, Era, LATEST_LEGACY_VERSION, MODERN_VERSION};
use crate::protocol::{codes, meta, methods, ResultType};
use crate::transport::TransportConfig;
use serde_json::{json, Map, Value};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::{Arc, RwLock};
use tokio::time::Instant;

/// What `server/discover` found.
enum Discovered {
    Modern(Arc<Connection>),
    /// The server speaks the modern wire but shares no modern version with us; it listed these.
    NoMutualModern(Vec<String>),
}

impl Discovered {
    fn require_modern(self) -> Result<Arc<Connection>> {
        match self {
            Discovered::Modern(conn) => Ok(conn),
            Discovered::NoMutualModern(offered) => Err(version_mismatch(&offered)),
        }
    }
}

/// Why the `auto` probe says "not modern".
enum ProbeOutcome {
    Modern(Arc<Connection>),
    /// Legacy on the same process, with the version to offer.
    Legacy(&'static str),
    /// Connected after the probe timed out (either era: see `race`).
    Ready(Arc<Connection>),
    /// The server died on the probe: start it again, then `initialize`.
    Restart,
}

impl Client {
    /// As [`Client::connect`], under a call's options: its cancel token, and its `timeout` and
    /// `max_total` (both capping the whole connect), end this wait with `Cancelled` or
    /// `Timeout`. The attempt itself goes on for later calls, bounded by the configured
    /// timeouts, until [`Client::close`]. Nothing starts when the token is already cancelled.
    pub async fn connect_with(&self, opts: &RequestOptions) -> Result<ServerInfo> {
        Ok(self.connected(opts).await?.info())
    }

    /// `connect_with`, giving the connection itself (its info is copied only if asked for).
    pub(crate) async fn connected(&self, opts: &RequestOptions) -> Result<Arc<Connection>> {
        if opts.cancel.as_ref().is_some_and(CancelToken::is_cancelled) {
            return Err(Error::new(
                ErrorKind::Cancelled,
                "connect was cancelled before it started",
            ));
        }
        let mut wait = self.wait_for(opts);
        if let Some(t) = opts.timeout.filter(|t| !t.is_zero()) {
            let at = Instant::now() + t;
            wait.deadline = Some(wait.deadline.map_or(at, |d| d.min(at)));
        }
        // An explicit connect is its own operations: no trace source is asked, the call's own
        // trace context (if any) is the handshake spans' parent.
        self.connection_for(&wait, || super::observe::ConnectFor::of(opts))
            .await
    }

    /// Connects (once): probes or negotiates the era per the configured mode, bounded as a
    /// whole by `connect_timeout`. Later calls return the existing connection's info; with a
    /// reconnect policy, a connection found lost is replaced (see `reconnect`).
    pub async fn connect(&self) -> Result<ServerInfo> {
        Ok(self.connect_conn(super::observe::ConnectFor::default()).await?.info())
    }

    /// `connect`, giving the connection itself.
    pub(super) async fn connect_conn(&self, made_for: super::observe::ConnectFor) -> Result<Arc<Connection>> {
        let _guard = self.inner.connect_lock.lock().await;
        if self.is_closed() {
            return Err(Error::closed());
        }
        let current = self.inner.conn.read().unwrap().clone();
        if let Some(conn) = current {
            match conn.session.closed_error() {
                Some(e) if self.drop_lost(&conn, &e).await => {}
                _ => return Ok(conn),
            }
        }
        let started = std::time::SystemTime::now();
        *self.inner.connect_for.lock().unwrap() = Some(made_for);
        let conn = if self.inner.config.reconnect.is_some() && self.inner.ever_connected.load(SeqCst) {
            self.reconnect().await
        } else {
            self.establish_bounded().await
        };
        self.inner.connect_for.lock().unwrap().take();
        let conn = conn?;
        self.report_session_end(&conn, started);
        // A new connection (a restarted server, maybe another era) starts with an empty cache.
        self.inner.cache.clear();
        *self.inner.conn.write().unwrap() = Some(conn.clone());
        if self.is_closed() {
            // close() ran while we were connecting: it could not see this connection.
            conn.session.close(Error::closed()).await;
            return Err(Error::closed());
        }
        self.inner.ever_connected.store(true, SeqCst);
        self.emit_state(super::ConnectionState::Connected);
        Ok(conn)
    }

    /// `establish` under `connect_timeout`; a timeout closes the half-made session and says
    /// what was (not) heard from the server.
    pub(super) async fn establish_bounded(&self) -> Result<Arc<Connection>> {
        let limit = self.inner.config.connect_timeout;
        if limit.is_zero() {
            return self.establish().await;
        }
        match tokio::time::timeout(limit, self.establish()).await {
            Ok(outcome) => outcome,
            Err(_) => {
                let session = self.inner.connecting.lock().unwrap().take();
                let error = self.connect_timed_out(limit, session.as_deref());
                if let Some(session) = session {
                    // The close sequence (grace periods for a server ignoring EOF) must not
                    // stretch the bound: it goes on in the background; dropping the transport
                    // (at the latest when the runtime stops) kills the group.
                    let reason = error.clone();
                    crate::base::spawn(async move { session.close(reason).await });
                }
                Err(error)
            }
        }
    }

    fn connect_timed_out(&self, limit: std::time::Duration, session: Option<&Session>) -> Error {
        let secs = limit.as_secs_f64();
        let what = match &self.inner.config.transport {
            TransportConfig::Stdio(cfg) => match session {
                Some(s) if !s.heard_anything() => format!(
                    "the server `{}` wrote nothing on stdout in {secs} s: check that it is an MCP \
                     server speaking JSON-RPC on stdio (and logging to stderr, not stdout); a \
                     first run that downloads packages (npx, uvx) may need a larger \
                     connect_timeout_ms",
                    cfg.command
                ),
                _ => format!(
                    "the server `{}` did not complete the MCP handshake in {secs} s; if it is \
                     slow to start, raise connect_timeout_ms",
                    cfg.command
                ),
            },
            TransportConfig::Http(cfg) => format!(
                "no MCP answer from {} in {secs} s: check that the server is running and the URL is \
                 its MCP endpoint, or raise connect_timeout_ms",
                cfg.url
            ),
        };
        let tail = session.map(Session::stderr_tail).unwrap_or_default();
        let tail = if tail.is_empty() {
            String::new()
        } else {
            format!("; last stderr lines: {tail}")
        };
        Error::new(ErrorKind::Timeout, format!("connect timed out: {what}{tail}"))
    }

    async fn start_session(&self) -> Result<Arc<Session>> {
        let (tx, rx) = crate::transport::inbound_channel();
        let transport = self
            .inner
            .config
            .transport
            .start(tx, Some(self.inner.auth.clone()))
            .await?;
        let session = Session::start(transport, rx, self.inner.hooks.clone());
        *self.inner.connecting.lock().unwrap() = Some(session.clone());
        Ok(session)
    }

    async fn establish(&self) -> Result<Arc<Connection>> {
        let mut session = self.start_session().await?;
        let wait = self.connect_wait(self.inner.config.request_timeout, true);
        // `auto` over HTTP: the origin whose era is cached (from the URL the transport parsed),
        // read before the probe and written after it; a failure forgets it, so the next
        // connect probes.
        let origin = match self.inner.config.mode {
            ConnectMode::Auto => session.origin(),
            _ => None,
        };
        let era_cache = &self.inner.config.era_cache;
        let outcome = match self.inner.config.mode.clone() {
            ConnectMode::Modern => self
                .discover(&session, MODERN_VERSION, &wait, false)
                .await
                .map_err(legacy_only_hint)
                .and_then(Discovered::require_modern),
            ConnectMode::Legacy => self.initialize(&session, LATEST_LEGACY_VERSION, false).await,
            ConnectMode::Pinned(v) => match Era::of_version(&v) {
                Some(Era::Modern) => self
                    .discover(&session, &v, &wait, true)
                    .await
                    .map_err(legacy_only_hint)
                    .and_then(Discovered::require_modern),
                Some(Era::Legacy) => self.initialize(&session, &v, true).await,
                None => Err(Error::invalid(format!(
                    "protocol version {v:?} is not one this client speaks"
                ))),
            },
            // An origin already found to be legacy in this process skips the probe. A server
            // that refuses the `initialize` has changed since (upgraded in place): detect again,
            // on a fresh transport (the refused `initialize` moved this one to the legacy wire).
            ConnectMode::Auto if origin.as_deref().and_then(|o| era_cache.get(o)) == Some(Era::Legacy) => {
                match self.initialize(&session, LATEST_LEGACY_VERSION, false).await {
                    Err(e) if refused(&e) => {
                        let why = Error::new(ErrorKind::Closed, "the server refused the cached era");
                        session = self.restart(&session, why).await?;
                        self.detect(&mut session).await
                    }
                    other => other,
                }
            }
            ConnectMode::Auto => self.detect(&mut session).await,
        };
        self.inner.connecting.lock().unwrap().take();
        if let Some(origin) = origin {
            era_cache.remember(origin, outcome.as_ref().ok().map(|c| c.era));
        }
        if let Err(e) = &outcome {
            session.close(e.clone()).await;
        }
        outcome
    }

    /// `auto`: the `server/discover` probe, then whichever era it found.
    async fn detect(&self, session: &mut Arc<Session>) -> Result<Arc<Connection>> {
        match self.probe(session).await {
            Ok(ProbeOutcome::Modern(conn) | ProbeOutcome::Ready(conn)) => Ok(conn),
            Ok(ProbeOutcome::Legacy(version)) => match self.initialize(session, version, false).await {
                // Some legacy servers answer the probe with an error, then exit: start again.
                Err(e) if died(&e) => {
                    *session = self.restart(session, exited_during_detection()).await?;
                    self.initialize(session, version, false).await
                }
                other => other,
            },
            Ok(ProbeOutcome::Restart) => {
                *session = self.restart(session, exited_during_detection()).await?;
                self.initialize(session, LATEST_LEGACY_VERSION, false).await
            }
            Err(e) => Err(e),
        }
    }

    /// Replaces a session that era detection cannot go on with (`why` ends the old one).
    async fn restart(&self, old: &Arc<Session>, why: Error) -> Result<Arc<Session>> {
        old.close(why).await;
        self.start_session().await
    }

    fn connect_wait(&self, timeout: std::time::Duration, notify_cancel: bool) -> Wait {
        Wait {
            timeout: (!timeout.is_zero()).then_some(timeout),
            notify_cancel,
            ..Wait::default()
        }
    }

    /// `auto`: a `server/discover`. Only a modern answer (or a recognised modern error) means
    /// modern; a real non-modern answer means legacy. Silence past the probe timeout is not
    /// evidence of either (a modern server may still be starting), so `initialize` then goes out
    /// while the probe keeps waiting, and the first decisive answer wins (`race`).
    async fn probe(&self, session: &Arc<Session>) -> Result<ProbeOutcome> {
        let wait = self.connect_wait(self.inner.config.request_timeout, false);
        let discover = self.discover(session, MODERN_VERSION, &wait, false);
        tokio::pin!(discover);
        let probe_timeout = self.inner.config.probe_timeout;
        let early = if probe_timeout.is_zero() {
            Some(discover.as_mut().await)
        } else {
            tokio::time::timeout(probe_timeout, discover.as_mut()).await.ok()
        };
        match early {
            Some(outcome) => self.judge_probe(outcome),
            None => self.race(session, discover).await,
        }
    }

    /// The probe went unanswered for the probe timeout: `initialize` alongside the pending
    /// `server/discover`. A modern answer to the probe wins; a successful `initialize` wins;
    /// an error on one side waits for the other.
    async fn race(
        &self,
        session: &Arc<Session>,
        mut discover: std::pin::Pin<&mut impl std::future::Future<Output = Result<Discovered>>>,
    ) -> Result<ProbeOutcome> {
        let init = self.initialize(session, LATEST_LEGACY_VERSION, false);
        tokio::pin!(init);
        let (mut probe_done, mut init_error) = (None::<Result<ProbeOutcome>>, None::<Error>);
        loop {
            tokio::select! {
                outcome = discover.as_mut(), if probe_done.is_none() => {
                    let judged = self.judge_probe(outcome);
                    match judged {
                        Ok(ProbeOutcome::Modern(conn)) => return Ok(ProbeOutcome::Ready(conn)),
                        Ok(ProbeOutcome::Restart) => return Ok(ProbeOutcome::Restart),
                        Err(e) if e.kind() == ErrorKind::Closed && self.is_closed() => return Err(e),
                        other => probe_done = Some(other),
                    }
                    if let Some(e) = init_error.take() {
                        return self.neither(probe_done.take(), e);
                    }
                }
                outcome = init.as_mut(), if init_error.is_none() => match outcome {
                    Ok(conn) => return Ok(ProbeOutcome::Ready(conn)),
                    Err(e) => {
                        if probe_done.is_some() {
                            return self.neither(probe_done.take(), e);
                        }
                        init_error = Some(e);
                    }
                },
            }
        }
    }

    /// Both the late probe and `initialize` failed: the most telling error.
    fn neither(&self, probe: Option<Result<ProbeOutcome>>, init: Error) -> Result<ProbeOutcome> {
        match probe {
            Some(Err(e)) if e.kind() == ErrorKind::Timeout => Err(init),
            Some(Err(e)) if init.kind() == ErrorKind::VersionMismatch => Err(e),
            _ => Err(init),
        }
    }

    fn judge_probe(&self, outcome: Result<Discovered>) -> Result<ProbeOutcome> {
        match outcome {
            Ok(Discovered::Modern(conn)) => Ok(ProbeOutcome::Modern(conn)),
            // A modern-wire server whose versions we reach only through initialize.
            Ok(Discovered::NoMutualModern(offered)) => {
                match era::mutual_version(offered.iter().map(String::as_str), Some(Era::Legacy)) {
                    Some(v) => Ok(ProbeOutcome::Legacy(v)),
                    None => Err(version_mismatch(&offered)),
                }
            }
            Err(e) if died(&e) => Ok(ProbeOutcome::Restart),
            Err(e) if e.kind() == ErrorKind::Closed && self.is_closed() => Err(e),
            // Authorization failed or timed out (the flow already ran once): initialize would only
            // repeat it.
            Err(e) if e.kind() == ErrorKind::AuthRequired || matches!(e.http_status(), Some(401 | 403)) => Err(e),
            Err(_) => Ok(ProbeOutcome::Legacy(LATEST_LEGACY_VERSION)),
        }
    }

    /// Modern connect: `server/discover`, with one corrective retry on -32022; one operation
    /// (its span, when observed).
    async fn discover(&self, session: &Arc<Session>, version: &str, wait: &Wait, pinned: bool) -> Result<Discovered> {
        let (wait, op) = self.handshake_begin(methods::DISCOVER, wait);
        let outcome = self.discover_once(session, version, &wait, pinned).await;
        if let Some(op) = op {
            let found = match &outcome {
                Ok(Discovered::Modern(conn)) => Ok(&**conn),
                Ok(Discovered::NoMutualModern(offered)) => Err(version_mismatch(offered)),
                Err(e) => Err(e.clone()),
            };
            self.handshake_end(op, session, found.as_ref().copied());
        }
        outcome
    }

    async fn discover_once(
        &self,
        session: &Arc<Session>,
        version: &str,
        wait: &Wait,
        pinned: bool,
    ) -> Result<Discovered> {
        let mut version = version.to_string();
        let mut retried = false;
        let result = loop {
            let params = self.modern_envelope(&version);
            match session.request(methods::DISCOVER, params, wait).await {
                Ok(result) => break result.into_value()?,
                Err(e)
                    if e.rpc_error()
                        .is_some_and(|r| r.code == codes::UNSUPPORTED_PROTOCOL_VERSION) =>
                {
                    let supported = supported_versions(&e);
                    // A server listing the very version it refused gets one retry with it (the
                    // conformance `request-metadata` server refuses the first request that way).
                    match era::mutual_version(supported.iter().map(String::as_str), Some(Era::Modern)) {
                        Some(v) if !retried && (!pinned || v == version) => {
                            retried = true;
                            version = v.to_string();
                        }
                        _ => return Ok(Discovered::NoMutualModern(supported)),
                    }
                }
                Err(e) => return Err(e),
            }
        };
        if !result.is_object() || ResultType::of(&result)? != ResultType::Complete {
            return Err(Error::protocol("server/discover returned an unusable result"));
        }
        let supported: Vec<String> = result
            .get("supportedVersions")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        if !supported.contains(&version) {
            match era::mutual_version(supported.iter().map(String::as_str), Some(Era::Modern)) {
                Some(v) if !pinned => version = v.to_string(),
                _ => return Ok(Discovered::NoMutualModern(supported)),
            }
        }
        let server_info = result
            .get("_meta")
            .and_then(|m| m.get(meta::SERVER_INFO))
            .or_else(|| result.get("serverInfo"))
            .cloned();
        let info = ServerInfo {
            era: Era::Modern,
            protocol_version: version.clone(),
            capabilities: result.get("capabilities").cloned().unwrap_or_else(|| json!({})),
            server_info,
            instructions: result.get("instructions").and_then(Value::as_str).map(str::to_string),
            raw: result,
        };
        session.set_era(Era::Modern);
        let conn = Connection {
            session: session.clone(),
            era: Era::Modern,
            version: RwLock::new(version),
            info,
            meta_head: Default::default(),
        };
        Ok(Discovered::Modern(Arc::new(conn)))
    }

    fn modern_envelope(&self, version: &str) -> Map<String, Value> {
        let mut meta_obj = Map::new();
        meta_obj.insert(meta::PROTOCOL_VERSION.into(), json!(version));
        meta_obj.insert(meta::CLIENT_CAPABILITIES.into(), self.capabilities(Era::Modern));
        meta_obj.insert(meta::CLIENT_INFO.into(), self.inner.config.client_info.clone());
        let mut params = Map::new();
        params.insert("_meta".into(), Value::Object(meta_obj));
        params
    }

    /// Legacy connect: `initialize`, then `notifications/initialized`. Never cancelled. One
    /// operation (its span, when observed).
    async fn initialize(&self, session: &Arc<Session>, version: &str, pinned: bool) -> Result<Arc<Connection>> {
        let wait = self.connect_wait(self.inner.config.request_timeout, false);
        let (wait, op) = self.handshake_begin(methods::INITIALIZE, &wait);
        let outcome = self.initialize_once(session, version, pinned, &wait).await;
        if let Some(op) = op {
            self.handshake_end(op, session, outcome.as_ref().map(|c| &**c));
        }
        outcome
    }

    async fn initialize_once(
        &self,
        session: &Arc<Session>,
        version: &str,
        pinned: bool,
        wait: &Wait,
    ) -> Result<Arc<Connection>> {
        let mut offer = version.to_string();
        let mut retried = false;
        let result = loop {
            let params = json!({
                "protocolVersion": offer,
                "capabilities": self.capabilities(Era::Legacy),
                "clientInfo": self.inner.config.client_info,
            });
            let params = params.as_object().cloned().unwrap_or_default();
            match session.request(methods::INITIALIZE, params, wait).await {
                Ok(result) => break result.into_value()?,
                // Legacy servers refuse a version with -32602 and data.supported.
                Err(e) if !retried && !pinned && e.rpc_error().is_some_and(|r| r.code == codes::INVALID_PARAMS) => {
                    let supported = supported_versions(&e);
                    match era::mutual_version(supported.iter().map(String::as_str), Some(Era::Legacy)) {
                        Some(v) if v != offer => {
                            retried = true;
                            offer = v.to_string();
                        }
                        _ => return Err(e.context("initialize")),
                    }
                }
                // A modern-only server refuses initialize with the versions it speaks.
                Err(e)
                    if e.rpc_error()
                        .is_some_and(|r| r.code == codes::UNSUPPORTED_PROTOCOL_VERSION) =>
                {
                    let supported = supported_versions(&e);
                    if era::mutual_version(supported.iter().map(String::as_str), Some(Era::Modern)).is_none() {
                        return Err(version_mismatch(&supported).context("initialize"));
                    }
                    if self.inner.config.mode != ConnectMode::Auto {
                        return Err(Error::new(
                            ErrorKind::VersionMismatch,
                            format!(
                                "initialize: the server speaks only the modern protocol ({supported:?}) and \
                                 this client was configured for the legacy era: connect with mode \"auto\" \
                                 (the default) or \"modern\""
                            ),
                        ));
                    }
                    // Not a mismatch: a modern server, reached through server/discover only.
                    return Err(e.context("initialize").note(&format!(
                        "the server speaks only the modern protocol ({supported:?}) and refuses initialize; \
                         it is reached through server/discover, which it did not answer in time: raise \
                         request_timeout_ms, or connect with mode \"modern\""
                    )));
                }
                Err(e) => return Err(e.context("initialize")),
            }
        };
        let negotiated = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if Era::of_version(&negotiated) != Some(Era::Legacy) || (pinned && negotiated != offer) {
            return Err(Error::new(
                ErrorKind::VersionMismatch,
                format!("initialize: the server offered protocol version {negotiated:?}, which this client does not accept here"),
            ));
        }
        session.set_era(Era::Legacy);
        session.notify(methods::INITIALIZED, None).await?;
        let info = ServerInfo {
            era: Era::Legacy,
            protocol_version: negotiated.clone(),
            capabilities: result.get("capabilities").cloned().unwrap_or_else(|| json!({})),
            server_info: result.get("serverInfo").cloned(),
            instructions: result.get("instructions").and_then(Value::as_str).map(str::to_string),
            raw: result,
        };
        Ok(Arc::new(Connection {
            session: session.clone(),
            era: Era::Legacy,
            version: RwLock::new(negotiated),
            info,
            meta_head: Default::default(),
        }))
    }
}

/// `mode: "modern"` (or a pinned modern version) against a server that does not know
/// `server/discover`: say what that means and what to do, keeping the server's error.
fn legacy_only_hint(e: Error) -> Error {
    match e.rpc_error().map(|r| r.code) {
        Some(codes::METHOD_NOT_FOUND) => e.context("server/discover").note(
            "the server does not implement server/discover, so it speaks only the legacy protocol \
             (initialize): connect with mode \"auto\" (the default) or \"legacy\"",
        ),
        _ => e,
    }
}

/// The server process went away (as opposed to answering).
fn exited_during_detection() -> Error {
    Error::new(ErrorKind::ServerExited, "the server exited during era detection")
}

fn died(e: &Error) -> bool {
    matches!(e.kind(), ErrorKind::ServerExited | ErrorKind::Io)
}

/// The server answered, and not as a legacy server would: an error object, an HTTP status, a
/// version it does not share. (Not silence, a dead connection or a refused authorization: a
/// probe would meet those too.)
fn refused(e: &Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::Rpc | ErrorKind::HttpStatus | ErrorKind::VersionMismatch | ErrorKind::ProtocolViolation
    )
}
