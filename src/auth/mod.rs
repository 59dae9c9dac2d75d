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

mod authorizer;
pub(crate) mod config;
mod discovery;
mod flow;
mod jwt;
mod loopback;
mod pkce;
mod store;

pub use crate::transport::http::Challenge;
pub use config::{Grant, OAuthConfig};
pub use store::{MemoryTokenStore, TokenStore};

use crate::base::{BoxFuture, CancelToken, HandlerError};
use crate::error::{Error, ErrorKind, Result};
use crate::net::policy::Guard;
use crate::transport::http::challenge;
use crate::untrusted::shown;
use discovery::{AuthServer, Discovery};
use flow::ClientAuth;
use loopback::Loopback;
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION};
use serde_json::Value;
use std::future::Future;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use store::{Record, TokenSet};
use url::Url;

/// Refresh an access token this close to its expiry before using it.
const REFRESH_MARGIN_SECS: u64 = 30;

/// The browser step of an authorization-code flow, handed to the host.
#[derive(Debug, Clone)]
pub struct AuthorizationRequest {
    /// The authorization URL to open in a browser.
    pub url: String,
    /// Where the authorization server will redirect the browser.
    pub redirect_uri: String,
    /// The authorization server's issuer.
    pub issuer: String,
    /// The library's loopback listener waits for the redirect too: the handler may just open
    /// the browser and resolve `Ok(None)`.
    pub loopback: bool,
    /// Cancelled when the answer is no longer wanted (the call ended, the client closed).
    pub cancel: CancelToken,
}

/// The host's part of an authorization-code flow: open `request.url` in a browser and resolve
/// with the full URL the browser was redirected to (with `code`, `state` and maybe `iss`), or
/// `Ok(None)` when the loopback listener receives it. An error ends the flow.
pub trait AuthorizationHandler: Send + Sync + 'static {
    /// Runs the browser step for `request`; see the trait's documentation for the answer.
    fn authorize(&self, request: AuthorizationRequest) -> BoxFuture<'static, Result<Option<String>, HandlerError>>;
}

impl<F, Fut> AuthorizationHandler for F
where
    F: Fn(AuthorizationRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Option<String>, HandlerError>> + Send + 'static,
{
    fn authorize(&self, request: AuthorizationRequest) -> BoxFuture<'static, Result<Option<String>, HandlerError>> {
        Box::pin(self(request))
    }
}

/// GETs `url` once without following redirects and returns the absolute `Location` of its
/// 3xx answer. For tests and automation against authorization servers that redirect at once
/// (the conformance suite's); a real host opens a browser instead. Nothing is sent but the URL.
pub async fn fetch_redirect(url: &str, timeout: Duration) -> Result<String> {
    let target = Url::parse(url).map_err(|_| Error::invalid("the authorization URL is not a URL"))?;
    let shown = crate::net::redact::url(&target);
    if !matches!(target.scheme(), "http" | "https") {
        return Err(Error::invalid("the authorization URL must be http or https"));
    }
    let http = crate::net::tls::plain_client(url, timeout)?;
    let response = tokio::time::timeout(timeout, http.get(target.clone()).send())
        .await
        .map_err(|_| Error::new(ErrorKind::Timeout, "the authorization URL did not answer in time"))?
        .map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("GET {shown} failed: {}", crate::net::redact::http_error(e)),
            )
        })?;
    let status = response.status();
    if !status.is_redirection() {
        return Err(
            Error::new(ErrorKind::Io, format!("{shown} answered HTTP {status}, not a redirect"))
                .with_http_status(status.as_u16()),
        );
    }
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| Error::new(ErrorKind::Io, "the redirect has no Location"))?;
    target
        .join(location)
        .map(|u| u.to_string())
        .map_err(|_| Error::new(ErrorKind::Io, "the redirect's Location is not a URL"))
}

/// What a flow needs from the transport: the HTTP clients (no redirects are ever followed)
/// and a way to report diagnostics. Requests to the MCP server's own origin (its metadata, the
/// 2025-03-26 default endpoints) go through the transport's client, which reaches that server
/// anyway; every other URL was chosen by the server and passes the guard (`crate::net::policy`)
/// first, then goes through the guarded client, whose resolver checks each answer.
#[derive(Clone)]
pub(crate) struct Io {
    http: reqwest::Client,
    server: url::Origin,
    guarded: reqwest::Client,
    guard: Arc<Guard>,
    log: Arc<dyn Fn(String) + Send + Sync>,
}

impl Io {
    pub fn new(
        http: reqwest::Client,
        server: &Url,
        guarded: reqwest::Client,
        guard: Arc<Guard>,
        log: Arc<dyn Fn(String) + Send + Sync>,
    ) -> Io {
        Io {
            http,
            server: server.origin(),
            guarded,
            guard,
            log,
        }
    }

    pub fn log(&self, line: String) {
        (self.log)(line)
    }

    /// Refuses a URL the flows must not contact (checked again on its resolved addresses).
    pub fn check(&self, url: &Url) -> Result<()> {
        if url.origin() == self.server && url.username().is_empty() && url.password().is_none() {
            return Ok(());
        }
        self.guard.check_url(url).map_err(|r| Error::auth(r.0))
    }

    /// The scheme rule alone, for the authorization endpoint (a browser opens it).
    pub fn check_scheme(&self, url: &Url) -> Result<()> {
        self.guard.check_scheme(url).map_err(|r| Error::auth(r.0))
    }

    /// The client for a request to `url`, once `url` passed [`Io::check`].
    pub fn client_for(&self, url: &Url) -> Result<&reqwest::Client> {
        self.check(url)?;
        Ok(if url.origin() == self.server {
            &self.http
        } else {
            &self.guarded
        })
    }

    /// The error for a request that got no answer: the guard's refusal, or the failure without
    /// the request URL.
    pub fn send_error(e: reqwest::Error, what: &str) -> Error {
        match crate::net::redact::refusal(&e) {
            Some(r) => Error::auth(format!("{what}: {}", r.0)),
            None => Error::new(
                ErrorKind::Io,
                format!("{what} failed: {}", crate::net::redact::http_error(e)),
            ),
        }
    }
}

/// The token in use, with what is needed to refresh it. No `Debug`: it holds secrets.
struct Active {
    issuer: String,
    resource: String,
    server: AuthServer,
    client: Option<ClientAuth>,
    tokens: TokenSet,
    /// The scopes asked for when this token was obtained.
    requested: Vec<String>,
    generation: u64,
}

#[derive(Default)]
struct State {
    active: Option<Active>,
    generation: u64,
    /// The issuer a public pre-registered client id (no secret, no key) without `oauth.issuer`
    /// was first used with.
    bound_issuer: Option<String>,
}

/// A client's authorization state: configuration, host hooks, the token in use. Shared by
/// the client and its transports (tokens survive reconnects).
pub(crate) struct AuthContext {
    oauth: Option<OAuthConfig>,
    server: Option<Url>,
    client_name: String,
    handler: RwLock<Option<Arc<dyn AuthorizationHandler>>>,
    store: RwLock<Option<Arc<dyn TokenStore>>>,
    memory: Arc<MemoryTokenStore>,
    state: Mutex<State>,
    /// One flow at a time.
    flow: tokio::sync::Mutex<()>,
}

/// Cancels the host's view of a flow when the flow ends, however it ends.
struct CancelOnDrop(CancelToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
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
        let (oauth, server) = match server {
            Some(url) => (oauth.cloned(), Url::parse(url).ok()),
            None => (None, None),
        };
        let client_name = oauth
            .as_ref()
            .and_then(|o| o.client_name.clone())
            .or_else(|| client_info.get("name").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_else(|| "mcp_client".into());
        Arc::new(AuthContext {
            oauth,
            server,
            client_name,
            handler: RwLock::new(None),
            store: RwLock::new(None),
            memory: Arc::default(),
            state: Mutex::default(),
            flow: tokio::sync::Mutex::new(()),
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

    pub fn set_store(&self, store: Option<Arc<dyn TokenStore>>) {
        let old = std::mem::replace(&mut *self.store.write().unwrap(), store);
        drop(old);
    }

    fn cfg(&self) -> &OAuthConfig {
        self.oauth.as_ref().expect("OAuth flows run only when configured")
    }

    fn store(&self) -> Arc<dyn TokenStore> {
        self.store
            .read()
            .unwrap()
            .clone()
            .unwrap_or_else(|| self.memory.clone())
    }

    async fn load(&self, io: &Io, issuer: &str) -> Record {
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

    async fn save(&self, issuer: &str, record: &Record) {
        let value = (!record.is_empty()).then(|| record.to_value());
        self.store().save(issuer, value).await;
    }

    /// Adds `Authorization: Bearer …` for a request to `url` when a token is held and `url` is
    /// on the MCP server's origin; a token about to expire is refreshed first. Returns the
    /// token's generation (what a 401 reports back).
    pub async fn authorize_request(&self, io: &Io, url: &Url, headers: &mut HeaderMap) -> Option<u64> {
        let server = self.server.as_ref()?;
        if url.origin() != server.origin() {
            return None;
        }
        let stale = self
            .state
            .lock()
            .unwrap()
            .active
            .as_ref()
            .is_some_and(|a| a.tokens.refresh_token.is_some() && a.tokens.expires_within(REFRESH_MARGIN_SECS));
        if stale {
            self.refresh_stale(io).await;
        }
        let st = self.state.lock().unwrap();
        let active = st.active.as_ref()?;
        let mut value = HeaderValue::from_str(&format!("Bearer {}", active.tokens.access_token)).ok()?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
        Some(active.generation)
    }

    /// Refreshes the token in use ahead of its expiry, unless a flow is running.
    async fn refresh_stale(&self, io: &Io) {
        let Ok(_flow) = self.flow.try_lock() else {
            return;
        };
        let taken = {
            let st = self.state.lock().unwrap();
            st.active.as_ref().and_then(|a| {
                let refresh = a.tokens.refresh_token.clone()?;
                let client = a.client.clone()?;
                a.tokens.expires_within(REFRESH_MARGIN_SECS).then(|| {
                    (
                        a.server.clone(),
                        client,
                        a.resource.clone(),
                        refresh,
                        a.requested.clone(),
                        a.generation,
                    )
                })
            })
        };
        let Some((server, client, resource, refresh, requested, generation)) = taken else {
            return;
        };
        let mut record = self.load(io, &server.issuer).await;
        match self.refresh(io, &server, &client, &resource, &refresh).await {
            Ok(tokens) => {
                self.install(&server, &resource, Some(client), tokens.clone(), requested);
                record.tokens.insert(resource, tokens);
                self.save(&server.issuer, &record).await;
            }
            Err(e) => {
                io.log(format!("refreshing the access token failed: {}", e.message()));
                let mut st = self.state.lock().unwrap();
                if let Some(a) = st.active.as_mut().filter(|a| a.generation == generation) {
                    a.tokens.refresh_token = None;
                }
            }
        }
    }

    fn install(
        &self,
        server: &AuthServer,
        resource: &str,
        client: Option<ClientAuth>,
        tokens: TokenSet,
        requested: Vec<String>,
    ) {
        let mut st = self.state.lock().unwrap();
        st.generation += 1;
        let generation = st.generation;
        st.active = Some(Active {
            issuer: server.issuer.clone(),
            resource: resource.to_string(),
            server: server.clone(),
            client,
            tokens,
            requested,
            generation,
        });
    }

    /// A refresh-token grant; a new refresh token replaces the old one (rotation).
    async fn refresh(
        &self,
        io: &Io,
        server: &AuthServer,
        client: &ClientAuth,
        resource: &str,
        refresh_token: &str,
    ) -> Result<TokenSet> {
        let form = vec![
            ("grant_type", "refresh_token".to_string()),
            ("refresh_token", refresh_token.to_string()),
            ("resource", resource.to_string()),
        ];
        let mut tokens = flow::token_request(io, server, client, form, None).await?;
        if tokens.refresh_token.is_none() {
            tokens.refresh_token = Some(refresh_token.to_string());
        }
        Ok(tokens)
    }

    /// Handles a 401 to a request that carried the token of generation `used` (`None`: no
    /// token): refresh, a stored token, or a new authorization. `Ok` means: send again.
    pub async fn unauthorized(&self, io: &Io, challenge: &Challenge, used: Option<u64>) -> Result<()> {
        let _flow = self.flow.lock().await;
        let (renewed, preferred) = {
            let st = self.state.lock().unwrap();
            let current = st.active.as_ref().map(|a| a.generation);
            (
                current.is_some() && current != used,
                st.active.as_ref().map(|a| a.issuer.clone()),
            )
        };
        if renewed {
            return Ok(()); // another request got a new token meanwhile
        }
        let cfg = self.cfg();
        let server_url = self.server.clone().ok_or_else(|| Error::auth("no server URL"))?;
        let mut prefer: Vec<&str> = Vec::new();
        prefer.extend(cfg.issuer.as_deref());
        prefer.extend(preferred.as_deref());
        let d = discovery::discover(io, &server_url, challenge, &prefer).await?;
        let issuer = d.server.issuer.clone();
        let failed = {
            let mut st = self.state.lock().unwrap();
            if st.active.as_ref().map(|a| a.generation) == used {
                st.active.take()
            } else {
                None
            }
        };
        if let Some(f) = &failed {
            if f.issuer != issuer {
                io.log(format!(
                    "the resource now uses the authorization server {} (was {}); authorizing there",
                    shown(&issuer),
                    shown(&f.issuer)
                ));
            }
        }
        let mut record = self.load(io, &issuer).await;
        // 1. The failed token's refresh token (same issuer and resource only).
        if let Some(f) = failed
            .as_ref()
            .filter(|f| f.issuer == issuer && f.resource == d.resource)
        {
            if let (Some(refresh), Some(client)) = (&f.tokens.refresh_token, &f.client) {
                match self.refresh(io, &d.server, client, &d.resource, refresh).await {
                    Ok(tokens) => {
                        self.install(
                            &d.server,
                            &d.resource,
                            Some(client.clone()),
                            tokens.clone(),
                            f.requested.clone(),
                        );
                        record.tokens.insert(d.resource.clone(), tokens);
                        self.save(&issuer, &record).await;
                        return Ok(());
                    }
                    Err(e) => io.log(format!("refreshing the access token failed: {}", e.message())),
                }
            }
        }
        // 2. A stored token for this resource that is not the one that failed.
        if let Some(stored) = record.tokens.get(&d.resource).cloned() {
            let is_failed = failed
                .as_ref()
                .is_some_and(|f| f.tokens.access_token == stored.access_token);
            let client = self.known_client(&d, &record);
            let requested = challenge::split_scopes(stored.scope.as_deref());
            if !is_failed && !stored.expires_within(REFRESH_MARGIN_SECS) {
                self.install(&d.server, &d.resource, client, stored, requested);
                return Ok(());
            }
            record.tokens.remove(&d.resource);
            // (The failed token's refresh token was tried above already.)
            if let (false, Some(refresh), Some(client)) = (is_failed, &stored.refresh_token, client) {
                match self.refresh(io, &d.server, &client, &d.resource, refresh).await {
                    Ok(tokens) => {
                        self.install(&d.server, &d.resource, Some(client), tokens.clone(), requested);
                        record.tokens.insert(d.resource.clone(), tokens);
                        self.save(&issuer, &record).await;
                        return Ok(());
                    }
                    Err(e) => io.log(format!("refreshing the stored token failed: {}", e.message())),
                }
            }
            self.save(&issuer, &record).await;
        }
        // 3. A new token.
        let scopes = self.select_scopes(challenge.scopes(), &d);
        self.obtain(io, &d, scopes, &mut record).await
    }

    /// Handles a 403 `insufficient_scope`: authorizes again with the union of the scopes asked
    /// for before and the challenged ones. `Ok(false)`: nothing new to ask for (give up).
    pub async fn insufficient_scope(&self, io: &Io, challenge: &Challenge, used: Option<u64>) -> Result<bool> {
        let _flow = self.flow.lock().await;
        let previous = {
            let st = self.state.lock().unwrap();
            match &st.active {
                Some(a) if Some(a.generation) == used => a.requested.clone(),
                Some(_) => return Ok(true), // renewed meanwhile: try that token
                None => Vec::new(),
            }
        };
        let challenged = challenge.scopes();
        if challenged.is_empty() || challenged.iter().all(|s| previous.contains(s)) {
            return Ok(false);
        }
        let cfg = self.cfg();
        let server_url = self.server.clone().ok_or_else(|| Error::auth("no server URL"))?;
        let prefer: Vec<&str> = cfg.issuer.as_deref().into_iter().collect();
        let d = discovery::discover(io, &server_url, challenge, &prefer).await?;
        let mut record = self.load(io, &d.server.issuer).await;
        io.log(format!(
            "the server asks for more scope ({}); authorizing again",
            shown(&challenged.join(" "))
        ));
        let mut wanted = previous;
        union(&mut wanted, &challenged);
        let scopes = self.select_scopes(wanted, &d);
        self.obtain(io, &d, scopes, &mut record).await?;
        Ok(true)
    }

    /// The scopes to ask for: the challenge's (for a step-up: the union of those asked for
    /// before and the challenged ones), else the resource's `scopes_supported`; plus the
    /// configured ones, and `offline_access` when the authorization server lists it.
    fn select_scopes(&self, challenged: Vec<String>, d: &Discovery) -> Vec<String> {
        let cfg = self.cfg();
        let mut scopes = challenged;
        if scopes.is_empty() {
            scopes = d.resource_scopes.clone().unwrap_or_default();
        }
        union(&mut scopes, &cfg.scopes);
        if cfg.grant == Grant::AuthorizationCode
            && cfg.offline_access
            && !scopes.is_empty()
            && d.server.meta.lists_scope("offline_access")
        {
            union(&mut scopes, &["offline_access".to_string()]);
        }
        scopes
    }

    /// Runs the configured grant and installs (and stores) its token.
    async fn obtain(&self, io: &Io, d: &Discovery, scopes: Vec<String>, record: &mut Record) -> Result<()> {
        let (client, tokens) = match self.cfg().grant {
            Grant::ClientCredentials => self.client_credentials(io, d, &scopes).await?,
            Grant::AuthorizationCode => self.authorization_code(io, d, &scopes, record).await?,
        };
        self.install(&d.server, &d.resource, Some(client), tokens.clone(), scopes);
        record.tokens.insert(d.resource.clone(), tokens);
        self.save(&d.server.issuer, record).await;
        io.log(format!("authorized with {}", shown(&d.server.issuer)));
        Ok(())
    }

    /// Whether the configured client may be used with `issuer`: the one named by
    /// `oauth.issuer`; a public client id without it is bound to the first issuer it is used
    /// with. A secret or key without `oauth.issuer` goes nowhere (`from_json` refuses that
    /// configuration): a server could otherwise name its own authorization server and receive
    /// them.
    fn configured_for(&self, issuer: &str) -> bool {
        let cfg = self.cfg();
        if cfg.client_id.is_none() {
            return false;
        }
        match &cfg.issuer {
            Some(i) => i == issuer,
            None if cfg.client_secret.is_some() || cfg.signer.is_some() => false,
            None => {
                let mut st = self.state.lock().unwrap();
                st.bound_issuer.get_or_insert_with(|| issuer.to_string()) == issuer
            }
        }
    }

    /// The configured client, with the authentication method forced, implied by the key or
    /// secret, or chosen from what the server supports.
    fn configured_client(&self, server: &AuthServer) -> ClientAuth {
        let cfg = self.cfg();
        let method = cfg.token_endpoint_auth_method.clone().unwrap_or_else(|| {
            if cfg.signer.is_some() {
                "private_key_jwt".into()
            } else if cfg.client_secret.is_some() {
                let supported = server.meta.auth_methods();
                if !supported.iter().any(|m| m == "client_secret_basic")
                    && supported.iter().any(|m| m == "client_secret_post")
                {
                    "client_secret_post".into()
                } else {
                    "client_secret_basic".into()
                }
            } else {
                "none".into()
            }
        });
        ClientAuth {
            client_id: cfg.client_id.clone().unwrap_or_default(),
            secret: cfg.client_secret.clone(),
            method,
            signer: cfg.signer.clone(),
            issuer: if cfg.client_secret.is_some() || cfg.signer.is_some() {
                cfg.issuer.clone()
            } else {
                Some(server.issuer.clone())
            },
        }
    }

    fn cimd_client(&self, server: &AuthServer) -> Option<ClientAuth> {
        let url = self.cfg().client_metadata_url.as_ref()?;
        (server.meta.client_id_metadata_document_supported == Some(true)).then(|| ClientAuth {
            client_id: url.clone(),
            secret: None,
            method: "none".into(),
            signer: None,
            issuer: None,
        })
    }

    /// A client identity usable for a refresh without registering anything.
    fn known_client(&self, d: &Discovery, record: &Record) -> Option<ClientAuth> {
        if self.configured_for(&d.server.issuer) {
            return Some(self.configured_client(&d.server));
        }
        self.cimd_client(&d.server).or_else(|| {
            record
                .client
                .as_ref()
                .map(|c| ClientAuth::from_record(c, &d.server.issuer))
        })
    }

    /// The client identity for an authorization-code flow, in the specification's order.
    async fn client_identity(
        &self,
        io: &Io,
        d: &Discovery,
        redirect_uri: &str,
        record: &mut Record,
    ) -> Result<ClientAuth> {
        let cfg = self.cfg();
        let issuer = &d.server.issuer;
        if self.configured_for(issuer) {
            return Ok(self.configured_client(&d.server));
        }
        if let Some(client) = self.cimd_client(&d.server) {
            return Ok(client);
        }
        if let Some(c) = &record.client {
            let expired = c.client_secret_expires_at.is_some_and(|t| t <= store::now_secs());
            if !expired && c.redirect_uris.iter().any(|r| flow::redirect_serves(r, redirect_uri)) {
                return Ok(ClientAuth::from_record(c, issuer));
            }
        }
        if d.server.meta.registration_endpoint.is_some() {
            let method = cfg
                .token_endpoint_auth_method
                .as_deref()
                .filter(|m| *m != "private_key_jwt");
            let client = flow::register(
                io,
                &d.server,
                &self.client_name,
                &cfg.application_type,
                redirect_uri,
                method,
            )
            .await?;
            record.client = Some(client.clone());
            self.save(issuer, record).await;
            return Ok(ClientAuth::from_record(&client, issuer));
        }
        Err(Error::auth(format!(
            "no client identity for the authorization server: no pre-registered credentials for it, \
             no Client ID Metadata Document support{}, no dynamic registration; configure oauth.client_id",
            if cfg.client_metadata_url.is_none() {
                " (oauth.client_metadata_url is not set)"
            } else {
                ""
            }
        )))
    }

    async fn client_credentials(&self, io: &Io, d: &Discovery, scopes: &[String]) -> Result<(ClientAuth, TokenSet)> {
        let issuer = &d.server.issuer;
        if !self.configured_for(issuer) {
            return Err(Error::auth(
                "the configured client credentials belong to another authorization server than this one \
                 (oauth.issuer names theirs); not sending them",
            ));
        }
        let client = self.configured_client(&d.server);
        let scope = (!scopes.is_empty()).then(|| scopes.join(" "));
        let mut form = vec![
            ("grant_type", "client_credentials".to_string()),
            ("resource", d.resource.clone()),
        ];
        if let Some(s) = &scope {
            form.push(("scope", s.clone()));
        }
        let tokens = flow::token_request(io, &d.server, &client, form, scope.as_deref()).await?;
        Ok((client, tokens))
    }

    async fn authorization_code(
        &self,
        io: &Io,
        d: &Discovery,
        scopes: &[String],
        record: &mut Record,
    ) -> Result<(ClientAuth, TokenSet)> {
        let cfg = self.cfg();
        let server = &d.server;
        let s256 = server
            .meta
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|x| x == "S256"));
        if server.from_metadata && !s256 {
            return Err(Error::auth(
                "the authorization server does not advertise PKCE S256 (code_challenge_methods_supported); \
                 refusing to authorize",
            ));
        }
        // The redirect: the host's own, or the loopback listener's (bound before registering,
        // which needs the URI).
        let (loopback, redirect_uri) = match &cfg.redirect_uri {
            Some(r) => (None, r.clone()),
            None => {
                let listener = Loopback::bind(cfg.loopback_port, &cfg.loopback_path).await?;
                let uri = listener.redirect_uri();
                (Some(listener), uri)
            }
        };
        let client = self.client_identity(io, d, &redirect_uri, record).await?;
        let pkce = pkce::Pkce::new()?;
        let state = pkce::random_token(32)?;
        let scope = (!scopes.is_empty()).then(|| scopes.join(" "));
        let url = flow::authorization_url(
            server,
            &client.client_id,
            &redirect_uri,
            &pkce.challenge,
            &state,
            &d.resource,
            scope.as_deref(),
        )?;
        let redirect = self
            .obtain_redirect(io, url, &redirect_uri, &server.issuer, loopback.as_ref(), &state)
            .await?;
        drop(loopback);
        let code = flow::check_redirect(
            &redirect,
            &redirect_uri,
            &state,
            &server.issuer,
            server.meta.authorization_response_iss_parameter_supported,
        )?;
        let form = vec![
            ("grant_type", "authorization_code".to_string()),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", pkce.verifier),
            ("resource", d.resource.clone()),
        ];
        let tokens = flow::token_request(io, server, &client, form, scope.as_deref()).await?;
        Ok((client, tokens))
    }

    /// The browser step: the host's handler and/or the loopback listener, under the
    /// authorization timeout.
    async fn obtain_redirect(
        &self,
        io: &Io,
        url: String,
        redirect_uri: &str,
        issuer: &str,
        loopback: Option<&Loopback>,
        state: &str,
    ) -> Result<String> {
        let cfg = self.cfg();
        let handler = self.handler.read().unwrap().clone();
        let cancel = CancelOnDrop(CancelToken::new());
        if handler.is_none() {
            // The URL itself is never logged: it carries the flow's `state`.
            if loopback.is_none() || !cfg.open_browser {
                return Err(Error::auth(
                    "authorization needs a browser: register an authorization handler (mcp_client_on_authorization), \
                     or set oauth.open_browser with the loopback listener (oauth.redirect_uri unset)",
                ));
            }
            io.log(format!("opened the system browser to authorize with {}", shown(issuer)));
            loopback::open_browser(&url);
        }
        let mut host = handler.map(|h| {
            h.authorize(AuthorizationRequest {
                url,
                redirect_uri: redirect_uri.to_string(),
                issuer: issuer.to_string(),
                loopback: loopback.is_some(),
                cancel: cancel.0.clone(),
            })
        });
        let deadline = tokio::time::Instant::now() + cfg.authorization_timeout;
        enum Step {
            Host(std::result::Result<Option<String>, HandlerError>),
            Listener(Result<String>),
            TimedOut,
        }
        // One listener future for the whole flow: recreating it when the host's future ends
        // would drop the connections it is serving (the browser's among them).
        let from_listener = async {
            match loopback {
                Some(l) => l.next_redirect(state).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(from_listener);
        loop {
            let step = {
                let from_host = async {
                    match host.as_mut() {
                        Some(f) => f.await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    r = from_host => Step::Host(r),
                    r = &mut from_listener => Step::Listener(r),
                    _ = tokio::time::sleep_until(deadline) => Step::TimedOut,
                }
            };
            match step {
                Step::Host(Ok(Some(redirect))) => return Ok(redirect),
                Step::Host(Ok(None)) if loopback.is_some() => host = None,
                Step::Host(Ok(None)) => {
                    return Err(Error::auth(
                        "the authorization handler finished without the redirect it was sent to",
                    ))
                }
                Step::Host(Err(e)) => {
                    return Err(Error::auth(format!(
                        "the authorization was not completed: {}",
                        shown(&e.message)
                    )))
                }
                Step::Listener(r) => return r,
                Step::TimedOut => {
                    return Err(Error::new(
                        ErrorKind::Timeout,
                        format!(
                            "the authorization was not completed within {} ms",
                            cfg.authorization_timeout.as_millis()
                        ),
                    ))
                }
            }
        }
    }
}
