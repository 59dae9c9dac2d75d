//! Credentials at rest. One record per authorization-server issuer: the client this library
//! registered there (dynamic registration only; pre-registered and CIMD identities come from the
//! configuration) and the tokens it issued, per protected resource. A record is never read for
//! another issuer, and tokens are only used for the resource they were issued for.
//!
//! The record's JSON (what a host's store keeps, opaque to it):
//! `{"client": {"client_id", "client_secret"?, "token_endpoint_auth_method", "redirect_uris": [..]},
//!   "tokens": {"<resource>": {"access_token", "token_type", "refresh_token"?, "expires_at"?, "scope"?}}}`
//! (`expires_at` in seconds since the Unix epoch).

use crate::base::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// Where credentials are kept between flows (and processes): `load`/`save` one record per
/// authorization-server issuer. `save(issuer, None)` forgets the issuer's record.
pub trait TokenStore: Send + Sync + 'static {
    /// The record saved for `issuer`, if any.
    fn load(&self, issuer: &str) -> BoxFuture<'static, Option<Value>>;
    /// Saves the record for `issuer`; `None` deletes it.
    fn save(&self, issuer: &str, record: Option<Value>) -> BoxFuture<'static, ()>;

    /// Takes the store's lock for `issuer`, held (across processes, for a shared store) while a
    /// refresh token is spent and its successor saved; released when the returned guard is
    /// dropped. The default has no lock: enough for a store used by one client at a time.
    fn lock(&self, issuer: &str) -> BoxFuture<'static, Option<StoreGuard>> {
        let _ = issuer;
        Box::pin(async { None })
    }
}

/// What [`TokenStore::lock`] returns: the lock is released when it is dropped.
pub type StoreGuard = Box<dyn std::any::Any + Send>;

/// The default store: records live as long as the client.
#[derive(Default)]
pub struct MemoryTokenStore {
    records: Mutex<HashMap<String, Value>>,
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, issuer: &str) -> BoxFuture<'static, Option<Value>> {
        let record = self.records.lock().unwrap().get(issuer).cloned();
        Box::pin(async move { record })
    }

    fn save(&self, issuer: &str, record: Option<Value>) -> BoxFuture<'static, ()> {
        let mut records = self.records.lock().unwrap();
        match record {
            Some(r) => records.insert(issuer.to_string(), r),
            None => records.remove(issuer),
        };
        Box::pin(async {})
    }
}

/// A client registered with one authorization server. No `Debug`: it holds a secret.
#[derive(Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct ClientRecord {
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    pub token_endpoint_auth_method: String,
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    /// 0 or absent: the secret does not expire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_expires_at: Option<u64>,
}

/// Tokens for one resource. No `Debug`: it holds tokens.
#[derive(Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct TokenSet {
    pub access_token: String,
    #[serde(default = "bearer")]
    pub token_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The granted scope (or the requested one when the server did not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

fn bearer() -> String {
    "Bearer".into()
}

impl TokenSet {
    /// Expired, or expiring within `margin` seconds.
    pub fn expires_within(&self, margin: u64) -> bool {
        self.expires_at
            .is_some_and(|at| at <= now_secs().saturating_add(margin))
    }
}

#[derive(Clone, Default, Serialize, Deserialize)]
pub(crate) struct Record {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientRecord>,
    #[serde(default)]
    pub tokens: BTreeMap<String, TokenSet>,
}

impl Record {
    pub fn from_value(value: Option<Value>) -> Option<Record> {
        value.and_then(|v| serde_json::from_value(v).ok())
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    pub fn is_empty(&self) -> bool {
        self.client.is_none() && self.tokens.is_empty()
    }
}

pub(crate) fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_round_trip_and_tolerate_garbage() {
        let v = json!({"client": {"client_id": "c", "token_endpoint_auth_method": "none"},
                       "tokens": {"https://mcp.example/mcp": {"access_token": "t", "expires_at": 1}}});
        let r = Record::from_value(Some(v)).unwrap();
        assert_eq!(r.tokens["https://mcp.example/mcp"].token_type, "Bearer");
        assert!(r.tokens["https://mcp.example/mcp"].expires_within(0));
        assert!(Record::from_value(Some(r.to_value())).unwrap().client == r.client);
        assert!(Record::from_value(Some(json!("nonsense"))).is_none());
        // A stored expiry at the end of time neither overflows nor counts as expiring.
        let far = TokenSet {
            expires_at: Some(u64::MAX),
            ..r.tokens["https://mcp.example/mcp"].clone()
        };
        assert!(!far.expires_within(30));
        assert!(far.expires_within(u64::MAX));
    }
}
