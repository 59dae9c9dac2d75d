//! The opt-in reconnect policy ([`ReconnectPolicy`](super::ReconnectPolicy)) and the connection-state listener.
//!
//! A lost connection (the stdio server exited, the HTTP server refused or dropped us) is noticed
//! by the call that meets it. With a policy, that connection is dropped and the next connect
//! (that call's retry, or the next call) re-runs era detection, up to `max_attempts` times with
//! exponential backoff. Only idempotent requests are retried; a `tools/call` whose answer was
//! lost fails, since the tool may have run. Without a policy nothing changes: a lost
//! connection stays lost.

use super::{Client, Connection};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::methods;
use std::sync::Arc;

/// What the host is told about the connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectionState {
    /// A connect succeeded (the first one, and each reconnect).
    Connected,
    /// The connection was lost; the detail says why.
    Disconnected(String),
    /// Reconnect attempt `n` (1-based) starts.
    Reconnecting(u32),
    /// Every attempt failed; the detail is the last error. The next call starts over.
    Failed(String),
}

/// A listener for [`ConnectionState`] changes.
pub type ConnectionStateFn = Arc<dyn Fn(&ConnectionState) + Send + Sync>;

/// Requests that may be sent again after a lost answer: reading has no effect on the server.
pub fn idempotent(method: &str) -> bool {
    matches!(
        method,
        methods::TOOLS_LIST
            | methods::PROMPTS_LIST
            | methods::PROMPTS_GET
            | methods::RESOURCES_LIST
            | methods::RESOURCES_TEMPLATES_LIST
            | methods::RESOURCES_READ
            | methods::COMPLETION_COMPLETE
            | methods::DISCOVER
            | methods::PING
    )
}

impl Client {
    /// Sets (or with `None` removes) the connection-state listener.
    pub fn on_connection_state(&self, listener: Option<ConnectionStateFn>) {
        *self.inner.on_state.write().unwrap() = listener;
    }

    pub(super) fn emit_state(&self, state: ConnectionState) {
        let listener = self.inner.on_state.read().unwrap().clone();
        if let Some(f) = listener {
            f(&state);
        }
    }

    /// Whether `error`, met on `conn`, means the connection itself is gone (not one request).
    pub(super) fn lost(&self, conn: &Connection, error: &Error) -> bool {
        if self.is_closed() {
            return false;
        }
        matches!(error.kind(), ErrorKind::ServerExited | ErrorKind::Io)
            || conn.session.closed_error().is_some_and(|e| {
                matches!(
                    e.kind(),
                    ErrorKind::ServerExited | ErrorKind::Io | ErrorKind::ProtocolViolation
                )
            })
    }

    /// With a policy: forgets `conn` (once, if it is still the current one) so the next call
    /// reconnects, and tells the host. Returns whether a policy applies.
    pub(super) async fn drop_lost(&self, conn: &Arc<Connection>, error: &Error) -> bool {
        if self.inner.config.reconnect.is_none() {
            return false;
        }
        let dropped = {
            let mut current = self.inner.conn.write().unwrap();
            match current.as_ref() {
                Some(c) if Arc::ptr_eq(c, conn) => current.take(),
                _ => None,
            }
        };
        if let Some(old) = dropped {
            let reason = old.session.closed_error().unwrap_or_else(|| error.clone());
            self.emit_state(ConnectionState::Disconnected(reason.message().to_string()));
            old.session.close(reason).await;
        }
        true
    }

    /// The error a non-idempotent call gets when its connection was lost under a policy.
    pub(super) fn not_retried(method: &str, error: Error) -> Error {
        error.note(&format!(
            "{method} was not retried (it may have taken effect on the server); \
             the client reconnects on the next call"
        ))
    }

    /// Connects again under the policy: up to `max_attempts` connects, backing off between
    /// them; close interrupts the wait. Called with the connect lock held and no connection.
    pub(super) async fn reconnect(&self) -> Result<Arc<Connection>> {
        let policy = self.inner.config.reconnect.clone().unwrap_or_default();
        let mut last = None;
        for attempt in 1..=policy.max_attempts {
            let pause = policy.backoff(attempt);
            if !pause.is_zero() {
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = super::cancel::cancelled(Some(&self.inner.shutdown)) => return Err(Error::closed()),
                }
            }
            if self.is_closed() {
                return Err(Error::closed());
            }
            self.emit_state(ConnectionState::Reconnecting(attempt));
            match self.establish_bounded().await {
                Ok(conn) => return Ok(conn),
                Err(e) if e.kind() == ErrorKind::Closed && self.is_closed() => return Err(e),
                Err(e) => last = Some(e),
            }
        }
        let last = last.unwrap_or_else(Error::closed);
        self.emit_state(ConnectionState::Failed(last.message().to_string()));
        Err(last.note(&format!(
            "gave up reconnecting after {} attempts; the next call tries again",
            policy.max_attempts
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::idempotent;
    use crate::client::{ClientConfig, ReconnectPolicy};
    use serde_json::json;
    use std::time::Duration;

    #[test]
    fn backoff_doubles_from_the_second_attempt_up_to_the_cap() {
        let p = ReconnectPolicy {
            max_attempts: 40,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(1000),
        };
        let waits: Vec<u64> = (1..=6).map(|n| p.backoff(n).as_millis() as u64).collect();
        assert_eq!(waits, [0, 100, 200, 400, 800, 1000]);
        assert_eq!(p.backoff(40), Duration::from_millis(1000), "no overflow");
    }

    #[test]
    fn only_reads_are_retried() {
        for m in [
            "tools/list",
            "resources/read",
            "prompts/get",
            "completion/complete",
            "ping",
        ] {
            assert!(idempotent(m), "{m}");
        }
        for m in [
            "tools/call",
            "logging/setLevel",
            "resources/subscribe",
            "subscriptions/listen",
        ] {
            assert!(!idempotent(m), "{m}");
        }
    }

    #[test]
    fn the_policy_is_opt_in_and_validated() {
        let base = json!({"command": "x"});
        assert_eq!(ClientConfig::from_json(&base).unwrap().reconnect, None);
        let on = ClientConfig::from_json(&json!({"command": "x", "reconnect": {}})).unwrap();
        assert_eq!(on.reconnect, Some(ReconnectPolicy::default()));
        for bad in [
            json!(3),
            json!({"max_attempts": 0}),
            json!({"backoff": 1}),
            json!({"max_backoff_ms": -1}),
        ] {
            let cfg = json!({"command": "x", "reconnect": bad});
            assert!(ClientConfig::from_json(&cfg).is_err(), "{cfg}");
        }
        let t = ClientConfig::from_json(&json!({"command": "x", "connect_timeout_ms": 250})).unwrap();
        assert_eq!(t.connect_timeout, Duration::from_millis(250));
        assert_eq!(
            ClientConfig::from_json(&base).unwrap().connect_timeout,
            Duration::from_secs(60)
        );
    }
}
