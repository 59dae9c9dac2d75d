//! Legacy HTTP sessions (Streamable HTTP `Mcp-Session-Id`, and HTTP+SSE
//! `sessionId`): the session table, ids, `--expire-session-after` and the
//! `MCP-Protocol-Version` rule.

use crate::server::{Server, SessionCell};
use crate::sink::SinkRef;
use crate::streams::EventHub;
use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

/// The first legacy revision whose clients send `MCP-Protocol-Version`.
pub const VERSION_HEADER_SINCE: &str = "2025-06-18";

pub struct HttpSession {
    pub id: String,
    pub cell: Arc<SessionCell>,
    pub hub: Arc<EventHub>,
    /// The negotiated version ("" for HTTP+SSE).
    version: Mutex<String>,
    requests: AtomicU64,
}

impl HttpSession {
    pub fn new() -> Arc<HttpSession> {
        let hub = EventHub::new();
        let outlet: SinkRef = hub.clone();
        Arc::new(HttpSession {
            id: random_id(),
            cell: SessionCell::new(outlet),
            hub,
            version: Mutex::new(String::new()),
            requests: AtomicU64::new(0),
        })
    }

    pub fn version(&self) -> String {
        self.version.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn set_version(&self, version: &str) {
        *self.version.lock().unwrap_or_else(|p| p.into_inner()) = version.to_string();
    }

    /// Counts one JSON-RPC request; returns the new count.
    pub fn count_request(&self) -> u64 {
        self.requests.fetch_add(1, Ordering::SeqCst) + 1
    }
}

#[derive(Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, Arc<HttpSession>>>,
    /// `--expire-session-after` fires once per server run.
    expired_one: AtomicBool,
}

impl Sessions {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<HttpSession>>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn insert(&self, session: Arc<HttpSession>) {
        self.lock().insert(session.id.clone(), session);
    }

    pub fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        self.lock().get(id).cloned()
    }

    /// Ends a session: its GET stream closes, its waiting server→client
    /// requests fail, its id becomes unknown (404).
    pub fn remove(&self, id: &str, srv: &Server) -> bool {
        let Some(session) = self.lock().remove(id) else {
            return false;
        };
        session.hub.end();
        srv.drop_pending(&session.cell);
        true
    }

    /// Counts a request; true when it is the one that expires the session
    /// (the count passed `limit`, and no session has expired before).
    pub fn expires(&self, session: &HttpSession, limit: Option<u64>) -> bool {
        let n = session.count_request();
        limit.is_some_and(|limit| n > limit) && !self.expired_one.swap(true, Ordering::SeqCst)
    }
}

/// 128 random bits as 32 hex digits (std's per-instance SipHash keys).
pub fn random_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut out = String::with_capacity(32);
    for part in 0u8..2 {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u128(nanos);
        hasher.write_u8(part);
        out.push_str(&format!("{:016x}", hasher.finish()));
    }
    out
}

/// From 2025-06-18 on, every request after `initialize` must carry
/// `MCP-Protocol-Version` equal to the negotiated version.
pub fn version_check(negotiated: &str, header: Option<&str>) -> Result<(), String> {
    if negotiated.is_empty() || negotiated < VERSION_HEADER_SINCE {
        return Ok(());
    }
    match header {
        Some(h) if h == negotiated => Ok(()),
        Some(h) => Err(format!(
            "Bad Request: MCP-Protocol-Version header '{h}' does not match the negotiated version '{negotiated}'"
        )),
        None => Err(format!(
            "Bad Request: missing MCP-Protocol-Version header (negotiated version '{negotiated}')"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_random_hex() {
        let a = random_id();
        let b = random_id();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn protocol_version_header_rule() {
        assert_eq!(version_check("2025-03-26", None), Ok(()));
        assert_eq!(version_check("2024-11-05", Some("junk")), Ok(()));
        assert_eq!(version_check("", None), Ok(()));
        assert_eq!(version_check("2025-06-18", Some("2025-06-18")), Ok(()));
        assert!(version_check("2025-06-18", None).is_err());
        assert!(version_check("2025-11-25", Some("2025-06-18")).is_err());
    }

    #[test]
    fn only_one_session_expires() {
        let sessions = Sessions::default();
        let first = HttpSession::new();
        let second = HttpSession::new();
        assert!(!sessions.expires(&first, Some(2)));
        assert!(!sessions.expires(&first, Some(2)));
        assert!(sessions.expires(&first, Some(2)));
        for _ in 0..5 {
            assert!(!sessions.expires(&second, Some(2)));
        }
        assert!(!sessions.expires(&HttpSession::new(), None));
    }
}
