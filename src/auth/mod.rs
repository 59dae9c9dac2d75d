//! MCP authorization, client side (OAuth 2.1), for the HTTP transports.
//!
//! The transport calls in here (`transport/http`, `Inner::send_for`): every request to the MCP
//! server gets the access token in its `Authorization` header (and nowhere else, and only on
//! the server's own origin); a 401 runs [`AuthContext::unauthorized`] and the request is sent
//! again; a 403 `insufficient_scope` runs [`AuthContext::insufficient_scope`] (bounded).
//!
//! A flow, in order: discovery (`discovery`: protected resource metadata, its `resource`
//! checked; authorization server metadata, its `issuer` checked), then credentials for that
//! issuer only (the failed token's refresh token, a stored token, or a new one), then a client
//! identity in the specification's order (pre-registered, Client ID Metadata Document, a
//! dynamic registration stored for that issuer, a new dynamic registration), then the grant:
//! authorization code with PKCE S256, `state` and RFC 9207 `iss` checks (`flow`), the redirect
//! coming from the host's [`AuthorizationHandler`] or the loopback listener (`loopback`); or
//! client credentials (`client_secret_*`, `private_key_jwt` via `jwt`).
//!
//! Credentials are kept per issuer in a [`TokenStore`] (in memory unless the host sets one);
//! tokens inside a record are per resource. One flow runs at a time per client; requests that
//! hit a 401 meanwhile wait for it and use its token.

mod assertion;
mod authorizer;
mod code_grant;
pub(crate) mod config;
mod credentials;
mod discovery;
mod dpop;
mod enterprise;
mod file_store;
mod flow;
mod handler;
mod identity;
mod io;
mod jwt;
mod jwt_bearer;
mod loopback;
mod pkce;
mod recovery;
mod refresh;
mod store;
mod tokens;

pub use crate::transport::http::Challenge;
pub use assertion::{AssertionKind, AssertionProvider, AssertionRequest, AssertionSource};
pub use config::{Grant, OAuthConfig};
pub use dpop::DpopKeySource;
pub use enterprise::{IdpConfig, ENTERPRISE_AUTH_EXTENSION};
pub use file_store::FileTokenStore;
pub use handler::{fetch_redirect, AuthorizationHandler, AuthorizationRequest};
pub(crate) use io::Io;
pub use store::{MemoryTokenStore, StoreGuard, TokenStore};

use crate::transport::http::challenge;
use crate::untrusted::shown;
use serde_json::Value;
use std::sync::{Arc, Mutex, RwLock};
use store::Record;
use tokens::State;
use url::Url;

/// A client's authorization state: configuration, host hooks, the token in use. Shared by
/// the client and its transports (tokens survive reconnects).
pub(crate) struct AuthContext {
    oauth: Option<OAuthConfig>,
    server: Option<Url>,
    client_name: String,
    handler: RwLock<Option<Arc<dyn AuthorizationHandler>>>,
    store: RwLock<Option<Arc<dyn TokenStore>>>,
    /// The store used when the host sets none: in memory, or `oauth.token_store_dir`'s files.
    memory: Arc<dyn TokenStore>,
    state: Mutex<State>,
    /// One flow at a time.
    flow: tokio::sync::Mutex<()>,
    /// The client's DPoP key (`oauth.dpop`), generated here when the host gave none.
    dpop: Option<Arc<dpop::Dpop>>,
    /// The host's source of assertions (workload JWTs, ID tokens) not in the configuration.
    assertions: RwLock<Option<Arc<dyn AssertionProvider>>>,
    /// Fingerprints of assertions an authorization server refused: never sent again.
    refused_assertions: Mutex<Vec<[u8; 32]>>,
}

fn union(into: &mut Vec<String>, more: &[String]) {
    for s in more {
        if !into.contains(s) {
            into.push(s.clone());
        }
    }
}

impl AuthContext {
    /// `oauth`: the client's OAuth settings; `server`: the HTTP server's URL (`None`: stdio).
    pub fn new(oauth: Option<&OAuthConfig>, server: Option<&str>, client_info: &Value) -> Arc<AuthContext> {
        // The server's URL is OAuth's alone (its flows, its tokens' origin): without OAuth no
        // transport binds this context, and a client's connect parses no URL for it.
        let (oauth, server) = match (oauth, server) {
            (Some(oauth), Some(url)) => (Some(oauth.clone()), Url::parse(url).ok()),
            _ => (None, None),
        };
        let client_name = oauth
            .as_ref()
            .and_then(|o| o.client_name.clone())
            .or_else(|| client_info.get("name").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_else(|| "mcp_client".into());
        // The key was checked when the configuration was read; only the system's random
        // generator failing can refuse it here, and then no request could be signed anyway.
        let dpop = oauth
            .as_ref()
            .and_then(|o| o.dpop.as_ref())
            .and_then(|source| dpop::Dpop::new(source).ok())
            .map(Arc::new);
        let memory: Arc<dyn TokenStore> = match oauth.as_ref().and_then(|o| o.token_store_dir.clone()) {
            Some(dir) => Arc::new(FileTokenStore::new(dir)),
            None => Arc::new(MemoryTokenStore::default()),
        };
        Arc::new(AuthContext {
            oauth,
            server,
            client_name,
            handler: RwLock::new(None),
            store: RwLock::new(None),
            memory,
            state: Mutex::default(),
            flow: tokio::sync::Mutex::new(()),
            dpop,
            assertions: RwLock::new(None),
            refused_assertions: Mutex::default(),
        })
    }

    /// OAuth is configured for this client's HTTP server.
    pub fn enabled(&self) -> bool {
        self.oauth.is_some() && self.server.is_some()
    }

    pub fn max_step_up(&self) -> u32 {
        self.oauth.as_ref().map_or(0, |o| o.max_step_up)
    }

    pub fn set_handler(&self, handler: Option<Arc<dyn AuthorizationHandler>>) {
        let old = std::mem::replace(&mut *self.handler.write().unwrap(), handler);
        drop(old); // outside the lock: dropping may run host code (userdata_free)
    }

    pub fn set_assertion_provider(&self, provider: Option<Arc<dyn AssertionProvider>>) {
        let old = std::mem::replace(&mut *self.assertions.write().unwrap(), provider);
        drop(old); // outside the lock: dropping may run host code (userdata_free)
    }

    pub fn set_store(&self, store: Option<Arc<dyn TokenStore>>) {
        let old = std::mem::replace(&mut *self.store.write().unwrap(), store);
        drop(old);
    }

    pub(super) fn cfg(&self) -> &OAuthConfig {
        self.oauth.as_ref().expect("OAuth flows run only when configured")
    }

    pub(super) fn store(&self) -> Arc<dyn TokenStore> {
        self.store
            .read()
            .unwrap()
            .clone()
            .unwrap_or_else(|| self.memory.clone())
    }

    pub(super) async fn load(&self, io: &Io, issuer: &str) -> Record {
        let value = self.store().load(issuer).await;
        let had = value.is_some();
        match Record::from_value(value) {
            Some(r) => r,
            None => {
                if had {
                    io.log(format!(
                        "ignored an unreadable token store record for {}",
                        shown(issuer)
                    ));
                }
                Record::default()
            }
        }
    }

    pub(super) async fn save(&self, issuer: &str, record: &Record) {
        let value = (!record.is_empty()).then(|| record.to_value());
        self.store().save(issuer, value).await;
    }
}
