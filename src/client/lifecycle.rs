//! Connecting: era detection (`auto`), `server/discover` (modern), `initialize` (legacy).

use super::session::{Session, Wait};
use super::{
    supported_versions, version_mismatch, CancelToken, Client, ConnectMode, Connection, RequestOptions, ServerInfo,
};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::era::{self, Era, LATEST_LEGACY_VERSION, MODERN_VERSION};
use crate::protocol::{codes, meta, methods, ResultType};
use crate::transport::TransportConfig;
use once_cell::sync::Lazy;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::{Arc, RwLock};
use tokio::time::Instant;

/// Eras `auto` detected per HTTP origin in this process (spec: cache the era per origin).
static HTTP_ERAS: Lazy<Mutex<HashMap<String, Era>>> = Lazy::new(Default::default);

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
    /// The server died on the probe: start it again, then `initialize`.
    Restart,
}

impl Client {
    /// As [`Client::connect`], under a call's options: its cancel token, and its `timeout` and
    /// `max_total` (both capping the whole connect), end this wait with `Cancelled` or
    /// `Timeout`. The attempt itself goes on for later calls, bounded by the configured
    /// timeouts, until [`Client::close`]. Nothing starts when the token is already cancelled.
    pub async fn connect_with(&self, opts: &RequestOptions) -> Result<ServerInfo> {
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
        Ok(self.connection(&wait).await?.info())
    }

    /// Connects (once): probes or negotiates the era per the configured mode. Later calls
    /// return the existing connection's info.
    pub async fn connect(&self) -> Result<ServerInfo> {
        let _guard = self.inner.connect_lock.lock().await;
        if self.is_closed() {
            return Err(Error::closed());
        }
        if let Some(conn) = self.inner.conn.read().unwrap().as_ref() {
            return Ok(conn.info());
        }
        let conn = self.establish().await?;
        let info = conn.info();
        *self.inner.conn.write().unwrap() = Some(conn.clone());
        if self.is_closed() {
            // close() ran while we were connecting: it could not see this connection.
            conn.session.close(Error::closed()).await;
            return Err(Error::closed());
        }
        Ok(info)
    }

    async fn start_session(&self) -> Result<Arc<Session>> {
        let (tx, rx) = crate::transport::inbound_channel();
        let transport = self
            .inner
            .config
            .transport
            .start_with_auth(tx, Some(self.inner.auth.clone()))
            .await?;
        let session = Session::start(transport, rx, self.inner.hooks.clone());
        *self.inner.connecting.lock().unwrap() = Some(session.clone());
        Ok(session)
    }

    async fn establish(&self) -> Result<Arc<Connection>> {
        let mut session = self.start_session().await?;
        let wait = self.connect_wait(self.inner.config.request_timeout, true);
        let outcome = match self.inner.config.mode.clone() {
            ConnectMode::Modern => self
                .discover(&session, MODERN_VERSION, &wait, false)
                .await
                .and_then(Discovered::require_modern),
            ConnectMode::Legacy => self.initialize(&session, LATEST_LEGACY_VERSION, false).await,
            ConnectMode::Pinned(v) => match Era::of_version(&v) {
                Some(Era::Modern) => self
                    .discover(&session, &v, &wait, true)
                    .await
                    .and_then(Discovered::require_modern),
                Some(Era::Legacy) => self.initialize(&session, &v, true).await,
                None => Err(Error::invalid(format!(
                    "protocol version {v:?} is not one this client speaks"
                ))),
            },
            // An origin already found to be legacy in this process skips the probe.
            ConnectMode::Auto if self.known_http_era() == Some(Era::Legacy) => {
                self.initialize(&session, LATEST_LEGACY_VERSION, false).await
            }
            ConnectMode::Auto => match self.probe(&session).await {
                Ok(ProbeOutcome::Modern(conn)) => Ok(conn),
                Ok(ProbeOutcome::Legacy(version)) => match self.initialize(&session, version, false).await {
                    // Some legacy servers answer the probe with an error, then exit: start again.
                    Err(e) if died(&e) => {
                        session = self.restart(&session).await?;
                        self.initialize(&session, version, false).await
                    }
                    other => other,
                },
                Ok(ProbeOutcome::Restart) => {
                    session = self.restart(&session).await?;
                    self.initialize(&session, LATEST_LEGACY_VERSION, false).await
                }
                Err(e) => Err(e),
            },
        };
        self.inner.connecting.lock().unwrap().take();
        if self.inner.config.mode == ConnectMode::Auto {
            self.remember_http_era(outcome.as_ref().ok().map(|c| c.era));
        }
        if let Err(e) = &outcome {
            session.close(e.clone()).await;
        }
        outcome
    }

    fn http_origin(&self) -> Option<String> {
        match &self.inner.config.transport {
            TransportConfig::Http(cfg) => reqwest::Url::parse(&cfg.url)
                .ok()
                .map(|u| u.origin().ascii_serialization()),
            _ => None,
        }
    }

    fn known_http_era(&self) -> Option<Era> {
        self.http_origin()
            .and_then(|origin| HTTP_ERAS.lock().unwrap().get(&origin).copied())
    }

    /// Caches what `auto` found for this origin; a failure forgets it, so the next connect probes.
    fn remember_http_era(&self, era: Option<Era>) {
        if let Some(origin) = self.http_origin() {
            let mut eras = HTTP_ERAS.lock().unwrap();
            match era {
                Some(era) => eras.insert(origin, era),
                None => eras.remove(&origin),
            };
        }
    }

    /// Replaces a session whose server died during era detection.
    async fn restart(&self, old: &Arc<Session>) -> Result<Arc<Session>> {
        old.close(Error::new(
            ErrorKind::ServerExited,
            "the server exited during era detection",
        ))
        .await;
        self.start_session().await
    }

    fn connect_wait(&self, timeout: std::time::Duration, notify_cancel: bool) -> Wait {
        Wait {
            timeout: (!timeout.is_zero()).then_some(timeout),
            notify_cancel,
            ..Wait::default()
        }
    }

    /// `auto`: a `server/discover` under the probe timeout. Only a modern answer (or a
    /// recognised modern error) means modern; anything else means legacy.
    async fn probe(&self, session: &Arc<Session>) -> Result<ProbeOutcome> {
        let wait = self.connect_wait(self.inner.config.probe_timeout, false);
        match self.discover(session, MODERN_VERSION, &wait, false).await {
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

    /// Modern connect: `server/discover`, with one corrective retry on -32022.
    async fn discover(&self, session: &Arc<Session>, version: &str, wait: &Wait, pinned: bool) -> Result<Discovered> {
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

    /// Legacy connect: `initialize`, then `notifications/initialized`. Never cancelled.
    async fn initialize(&self, session: &Arc<Session>, version: &str, pinned: bool) -> Result<Arc<Connection>> {
        let wait = self.connect_wait(self.inner.config.request_timeout, false);
        let mut offer = version.to_string();
        let mut retried = false;
        let result = loop {
            let params = json!({
                "protocolVersion": offer,
                "capabilities": self.capabilities(Era::Legacy),
                "clientInfo": self.inner.config.client_info,
            });
            let params = params.as_object().cloned().unwrap_or_default();
            match session.request(methods::INITIALIZE, params, &wait).await {
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
                    return Err(version_mismatch(&supported_versions(&e)).context("initialize"))
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
        }))
    }
}

/// The server process went away (as opposed to answering).
fn died(e: &Error) -> bool {
    matches!(e.kind(), ErrorKind::ServerExited | ErrorKind::Io)
}
