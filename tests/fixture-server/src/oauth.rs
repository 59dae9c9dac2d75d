//! `--http ADDR --oauth`: the MCP endpoint becomes an OAuth 2.1 protected
//! resource, and the fixture is its own authorization server, so bindings
//! can test MCP authorization end to end (spec §15):
//!
//! - protected resource metadata (RFC 9728) and authorization server
//!   metadata (RFC 8414);
//! - dynamic client registration (RFC 7591), plus `--oauth-client ID:SECRET`
//!   pre-registered confidential clients;
//! - `/authorize`, which approves at once (no login page) and redirects with
//!   `code`, `state` and `iss` (RFC 9207); PKCE S256 only (RFC 7636);
//! - `/token`: `authorization_code`, `refresh_token` (rotated) and
//!   `client_credentials`, with `none`, `client_secret_basic` and
//!   `client_secret_post` client authentication; `resource` (RFC 8707) is
//!   required everywhere;
//! - every other request needs `Authorization: Bearer <token>` (401
//!   otherwise), and `--oauth-step-up-tool NAME` needs scope `mcp admin`
//!   (403 `insufficient_scope` otherwise).
//!
//! The logic is pure ([`OAuth::route`] maps a request to an [`Answer`]);
//! `http.rs` only calls [`OAuth::handle`] first for every request.

use crate::http::Conn;
use crate::http_parse::Request;
use crate::oauth_codec::{self, base64_decode, form_decode, is_code_verifier, parse_form, percent_encode};
use crate::oauth_hostile_auth::Hostile;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::io;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The scopes the fixture knows; `mcp` is the one every token gets by default.
pub const SCOPES: [&str; 2] = ["mcp", "admin"];
pub const DEFAULT_SCOPE: &str = "mcp";
/// What `--oauth-step-up-tool` needs.
pub const STEP_UP_SCOPE: &str = "mcp admin";
pub const DEFAULT_TOKEN_TTL: u64 = 3600;
/// How long an authorization code may wait for its token request.
const CODE_TTL: Duration = Duration::from_secs(60);

pub const PRM_PATH: &str = "/.well-known/oauth-protected-resource/mcp";
pub const PRM_ROOT_PATH: &str = "/.well-known/oauth-protected-resource";
pub const AS_METADATA_PATH: &str = "/.well-known/oauth-authorization-server";
pub const AUTHORIZE_PATH: &str = "/authorize";
pub const TOKEN_PATH: &str = "/token";
pub const REGISTER_PATH: &str = "/register";
/// Test hook (not OAuth): expire every access token now.
pub const EXPIRE_PATH: &str = "/fixture/expire-tokens";

const AUTH_METHODS: [&str; 3] = ["none", "client_secret_basic", "client_secret_post"];
const GRANT_TYPES: [&str; 3] = ["authorization_code", "refresh_token", "client_credentials"];

// ---- flags ----

/// The `--oauth*` flags (parsed in `config.rs`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OAuthFlags {
    /// `--oauth`.
    pub enabled: bool,
    /// `--oauth-client ID:SECRET` (repeatable): pre-registered confidential clients.
    pub clients: Vec<(String, String)>,
    /// `--oauth-token-ttl SECS` (default 3600).
    pub token_ttl: Option<u64>,
    /// `--oauth-step-up-tool NAME`: calling it needs scope `mcp admin`.
    pub step_up_tool: Option<String>,
    /// `--oauth-hostile-auth MODE`: attacks on the client (`oauth_hostile_auth.rs`).
    pub hostile_auth: Option<crate::oauth_hostile_auth::Mode>,
}

impl OAuthFlags {
    /// `--oauth-client ID:SECRET` (split at the first `:`; both non-empty).
    pub fn add_client(&mut self, raw: &str) -> Result<(), String> {
        match raw.split_once(':') {
            Some((id, secret)) if !id.is_empty() && !secret.is_empty() => {
                self.clients.push((id.to_string(), secret.to_string()));
                Ok(())
            }
            _ => Err(format!("--oauth-client must be ID:SECRET, got '{raw}'")),
        }
    }

    pub fn ttl(&self) -> u64 {
        self.token_ttl.unwrap_or(DEFAULT_TOKEN_TTL)
    }

    /// `--oauth` needs `--http`; the other `--oauth-*` flags need `--oauth`.
    pub fn validate(&self, http: bool) -> Result<(), String> {
        if self.enabled {
            return if http {
                Ok(())
            } else {
                Err("--oauth needs --http".into())
            };
        }
        for (set, flag) in [
            (!self.clients.is_empty(), "--oauth-client"),
            (self.token_ttl.is_some(), "--oauth-token-ttl"),
            (self.step_up_tool.is_some(), "--oauth-step-up-tool"),
            (self.hostile_auth.is_some(), "--oauth-hostile-auth"),
        ] {
            if set {
                return Err(format!("{flag} needs --oauth"));
            }
        }
        Ok(())
    }
}

// ---- state ----

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AuthMethod {
    None,
    Basic,
    Post,
    /// Pre-registered clients: either secret method.
    AnySecret,
}

impl AuthMethod {
    fn parse(s: &str) -> Option<AuthMethod> {
        match s {
            "none" => Some(AuthMethod::None),
            "client_secret_basic" => Some(AuthMethod::Basic),
            "client_secret_post" => Some(AuthMethod::Post),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            AuthMethod::None => "none",
            AuthMethod::Basic | AuthMethod::AnySecret => "client_secret_basic",
            AuthMethod::Post => "client_secret_post",
        }
    }
}

struct Client {
    secret: Option<String>,
    method: AuthMethod,
    /// Empty: any redirect URI is accepted.
    redirect_uris: Vec<String>,
}

struct Code {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    resource: String,
    scope: Vec<String>,
    expires: Instant,
    used: bool,
}

struct AccessToken {
    scope: Vec<String>,
    expires: Instant,
    /// The authorization code the grant started from (revoked on reuse).
    grant: Option<String>,
}

struct RefreshToken {
    client_id: String,
    scope: Vec<String>,
    resource: String,
    grant: Option<String>,
}

#[derive(Default)]
struct Store {
    clients: HashMap<String, Client>,
    codes: HashMap<String, Code>,
    access: HashMap<String, AccessToken>,
    refresh: HashMap<String, RefreshToken>,
}

/// The authorization server and resource server state of one fixture.
pub struct OAuth {
    /// `http://127.0.0.1:<port>`: the issuer and the base of every URL.
    base: String,
    ttl: u64,
    step_up_tool: Option<String>,
    store: Mutex<Store>,
    hostile: Option<Hostile>,
}

/// One HTTP answer, plus what `--record` notes about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    /// A JSON body, or none (302).
    pub body: Option<Value>,
    /// The OAuth `error` code, for the record and the log.
    pub error: Option<String>,
}

impl Answer {
    fn json(status: u16, body: Value) -> Answer {
        Answer {
            status,
            headers: vec![("Cache-Control", "no-store".into())],
            body: Some(body),
            error: None,
        }
    }

    /// An RFC 6749 §5.2 error body.
    fn error(status: u16, error: &str, description: impl Into<String>) -> Answer {
        let description = description.into();
        Answer {
            error: Some(error.to_string()),
            ..Answer::json(status, json!({"error": error, "error_description": description}))
        }
    }

    fn with_header(mut self, name: &'static str, value: String) -> Answer {
        self.headers.push((name, value));
        self
    }

    fn not_allowed(allow: &str) -> Answer {
        Answer::error(405, "invalid_request", format!("method not allowed (allowed: {allow})"))
            .with_header("Allow", allow.to_string())
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn scope_list(raw: Option<&str>) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for s in raw.unwrap_or_default().split(' ').filter(|s| !s.is_empty()) {
        if !SCOPES.contains(&s) {
            return Err(format!("unknown scope '{s}' (supported: {})", SCOPES.join(" ")));
        }
        if !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    }
    if out.is_empty() {
        out.push(DEFAULT_SCOPE.to_string());
    }
    Ok(out)
}

/// The parts of an absolute `scheme://authority/path?query` URL.
struct UrlParts<'a> {
    scheme: String,
    host: String,
    /// Path and query ("/" when empty).
    rest: &'a str,
}

fn split_url(url: &str) -> Option<UrlParts<'_>> {
    let (scheme, after) = url.split_once("://")?;
    let (authority, rest) = match after.find(['/', '?']) {
        Some(i) => (&after[..i], &after[i..]),
        None => (after, ""),
    };
    let host = if let Some(v6) = authority.strip_prefix('[') {
        format!("[{}]", v6.split_once(']')?.0)
    } else {
        authority.split(':').next().unwrap_or_default().to_string()
    };
    if host.is_empty() || authority.contains('@') {
        return None;
    }
    let rest = if rest.is_empty() { "/" } else { rest };
    Some(UrlParts {
        scheme: scheme.to_ascii_lowercase(),
        host: host.to_ascii_lowercase(),
        rest,
    })
}

/// An absolute URI without a fragment (`https://…`, `http://127.0.0.1:…`,
/// or a private-use scheme such as `com.example.app:/cb`).
fn is_redirect_uri(uri: &str) -> bool {
    let Some((scheme, rest)) = uri.split_once(':') else {
        return false;
    };
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    scheme_ok
        && !rest.is_empty()
        && !uri.contains('#')
        && !uri.chars().any(|c| c.is_whitespace() || c.is_control())
        && (!matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") || split_url(uri).is_some())
}

/// Whether `given` is `registered`, or both are `http` loopback URIs
/// (`127.0.0.1`, `localhost`, `[::1]`) that differ only in the port
/// (RFC 8252 §7.3).
pub fn redirect_matches(registered: &str, given: &str) -> bool {
    if registered == given {
        return true;
    }
    let (Some(a), Some(b)) = (split_url(registered), split_url(given)) else {
        return false;
    };
    let loopback = |h: &str| matches!(h, "127.0.0.1" | "localhost" | "[::1]");
    a.scheme == "http" && b.scheme == "http" && loopback(&a.host) && a.host == b.host && a.rest == b.rest
}

/// `uri` plus `params` as query parameters.
fn with_query(uri: &str, params: &[(&str, &str)]) -> String {
    let mut out = uri.to_string();
    let mut sep = if uri.contains('?') { '&' } else { '?' };
    for (name, value) in params {
        out.push(sep);
        out.push_str(name);
        out.push('=');
        out.push_str(&percent_encode(value));
        sep = '&';
    }
    out
}

/// Form or query pairs as a map; Err names a repeated parameter (RFC 6749
/// §3.1: parameters must not be included more than once).
fn unique(pairs: Vec<(String, String)>) -> Result<HashMap<String, String>, String> {
    let mut map = HashMap::new();
    for (name, value) in pairs {
        if map.contains_key(&name) {
            return Err(format!("the parameter '{name}' is repeated"));
        }
        map.insert(name, value);
    }
    Ok(map)
}

fn params_json(params: &HashMap<String, String>) -> Value {
    let mut keys: Vec<&String> = params.keys().collect();
    keys.sort();
    Value::Object(keys.into_iter().map(|k| (k.clone(), json!(params[k]))).collect())
}

/// The `Bearer` token of an `Authorization` value, if that is its scheme.
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// `Authorization: Basic` → (client_id, secret), each form-decoded (RFC
/// 6749 §2.3.1). Err: a Basic header that cannot be read.
fn basic(value: &str) -> Option<Result<(String, String), String>> {
    let (scheme, creds) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64_decode(creds.trim()).and_then(|b| String::from_utf8(b).ok());
    let parsed = decoded.as_deref().and_then(|text| {
        let (id, secret) = text.split_once(':')?;
        Some((form_decode(id)?, form_decode(secret)?))
    });
    Some(parsed.ok_or_else(|| "the Basic credentials are not base64 of id:secret".to_string()))
}

impl OAuth {
    /// The OAuth state for `--oauth` (None without it). `endpoint` is the
    /// printed MCP URL, `http://127.0.0.1:<port>/mcp`.
    pub fn from_config(flags: &OAuthFlags, endpoint: &str) -> Option<OAuth> {
        if !flags.enabled {
            return None;
        }
        let base = endpoint.strip_suffix("/mcp").unwrap_or(endpoint).to_string();
        let oauth = OAuth::new(&base, flags);
        eprintln!(
            "fixture: OAuth mode: issuer {base}, resource {}, token ttl {} s, {} pre-registered client(s){}",
            oauth.resource(),
            oauth.ttl,
            flags.clients.len(),
            flags
                .step_up_tool
                .as_ref()
                .map(|t| format!(", step-up tool '{t}'"))
                .unwrap_or_default()
        );
        Some(oauth)
    }

    pub fn new(base: &str, flags: &OAuthFlags) -> OAuth {
        let mut store = Store::default();
        for (id, secret) in &flags.clients {
            store.clients.insert(
                id.clone(),
                Client {
                    secret: Some(secret.clone()),
                    method: AuthMethod::AnySecret,
                    redirect_uris: Vec::new(),
                },
            );
        }
        OAuth {
            base: base.to_string(),
            ttl: flags.ttl(),
            step_up_tool: flags.step_up_tool.clone(),
            store: Mutex::new(store),
            hostile: flags.hostile_auth.map(|mode| Hostile { mode }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The canonical MCP server URI: the PRM `resource` and the only
    /// `resource` parameter accepted.
    pub fn resource(&self) -> String {
        format!("{}/mcp", self.base)
    }

    pub fn resource_metadata_url(&self) -> String {
        format!("{}{PRM_PATH}", self.base)
    }

    /// Answers `req` when it is an OAuth endpoint or fails the bearer check
    /// (`Ok(Some(keep_alive))`); `Ok(None)`: serve it as MCP.
    pub fn handle(&self, conn: &mut Conn, req: &Request) -> io::Result<Option<bool>> {
        if self.hostile.is_some() {
            conn.hs.srv.recorder.record_json(&Hostile::note(req));
        }
        let Some((answer, record)) = self.route(req) else {
            return Ok(None);
        };
        conn.hs.srv.recorder.record_json(&json!({ "oauth": record }));
        if let Some(error) = &answer.error {
            eprintln!(
                "fixture: oauth: {} {} -> {} {error}",
                req.method, req.path, answer.status
            );
        }
        match &answer.body {
            Some(body) => conn.respond_json(answer.status, body, &answer.headers)?,
            None => conn.respond(answer.status, None, &answer.headers, b"")?,
        }
        Ok(Some(true))
    }

    /// The answer to `req` and its `--record` note, or None to serve it as
    /// MCP (a valid token, with enough scope).
    pub fn route(&self, req: &Request) -> Option<(Answer, Value)> {
        let method = req.method.as_str();
        let (answer, params) = match req.path.as_str() {
            PRM_PATH | PRM_ROOT_PATH => (
                self.get_only(method, || self.protected_resource_metadata()),
                Value::Null,
            ),
            path if self.hostile.as_ref().is_some_and(|h| h.is_issuer_metadata_path(path)) => (
                self.get_only(method, || self.authorization_server_metadata()),
                Value::Null,
            ),
            AS_METADATA_PATH => (
                self.get_only(method, || self.authorization_server_metadata()),
                Value::Null,
            ),
            REGISTER_PATH => self.register(req),
            AUTHORIZE_PATH => self.authorize(req),
            TOKEN_PATH => self.token(req),
            EXPIRE_PATH => self.expire(req),
            _ => {
                let answer = self.gate(req)?;
                let note =
                    json!({"endpoint": "mcp", "path": req.target, "status": answer.status, "error": answer.error});
                return Some((answer, note));
            }
        };
        let note = json!({"endpoint": req.path, "params": params, "status": answer.status, "error": answer.error});
        Some((answer, note))
    }

    fn get_only(&self, method: &str, body: impl FnOnce() -> Value) -> Answer {
        if method != "GET" {
            return Answer::not_allowed("GET");
        }
        Answer {
            headers: Vec::new(),
            ..Answer::json(200, body())
        }
    }

    pub fn protected_resource_metadata(&self) -> Value {
        let prm = json!({
            "resource": self.resource(),
            "authorization_servers": [self.base],
            "scopes_supported": SCOPES,
            "bearer_methods_supported": ["header"],
        });
        match &self.hostile {
            Some(h) => h.protected_resource(&self.base, prm),
            None => prm,
        }
    }

    /// The issuer in metadata and in `iss`.
    fn issuer(&self) -> String {
        match &self.hostile {
            Some(h) => h.issuer(&self.base),
            None => self.base.clone(),
        }
    }

    pub fn authorization_server_metadata(&self) -> Value {
        let base = &self.base;
        let meta = json!({
            "issuer": base,
            "authorization_endpoint": format!("{base}{AUTHORIZE_PATH}"),
            "token_endpoint": format!("{base}{TOKEN_PATH}"),
            "registration_endpoint": format!("{base}{REGISTER_PATH}"),
            "response_types_supported": ["code"],
            "grant_types_supported": GRANT_TYPES,
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": AUTH_METHODS,
            "scopes_supported": SCOPES,
            "authorization_response_iss_parameter_supported": true,
        });
        match &self.hostile {
            Some(h) => h.authorization_server(base, meta),
            None => meta,
        }
    }

    /// `POST /fixture/expire-tokens[?refresh=1]`: every access token
    /// expires now (the next use gets 401 `invalid_token`); with
    /// `refresh=1` every refresh token is revoked too.
    fn expire(&self, req: &Request) -> (Answer, Value) {
        if req.method != "POST" {
            return (Answer::not_allowed("POST"), Value::Null);
        }
        let revoke = req.query_param("refresh").is_some_and(|v| v == "1" || v == "true");
        let mut store = self.lock();
        let now = Instant::now();
        for token in store.access.values_mut() {
            token.expires = token.expires.min(now);
        }
        let expired = store.access.len();
        let revoked = if revoke { store.refresh.drain().count() } else { 0 };
        let body = json!({"expiredAccessTokens": expired, "revokedRefreshTokens": revoked});
        (Answer::json(200, body), json!({"refresh": revoke}))
    }

    // ---- the protected resource ----

    /// `WWW-Authenticate` of a 401: `Bearer resource_metadata="…",
    /// scope="mcp"`, plus `error="invalid_token"` when a token was sent.
    fn challenge(&self, invalid: Option<&str>) -> String {
        let mut value = format!(
            "Bearer resource_metadata=\"{}\", scope=\"{DEFAULT_SCOPE}\"",
            self.resource_metadata_url()
        );
        if let Some(why) = invalid {
            value.push_str(&format!(", error=\"invalid_token\", error_description=\"{why}\""));
        }
        value
    }

    /// None: the request may go on. Some: its 401 or 403.
    fn gate(&self, req: &Request) -> Option<Answer> {
        let header = req.headers.get("authorization");
        let Some(token) = header.as_deref().and_then(bearer).filter(|t| !t.is_empty()) else {
            let why = "this MCP server needs Authorization: Bearer <token>";
            return Some(Answer::error(401, "unauthorized", why).with_header("WWW-Authenticate", self.challenge(None)));
        };
        let scope = {
            let mut store = self.lock();
            match store.access.get(token) {
                None => Err("the access token is not one this server issued (or was revoked)"),
                Some(t) if Instant::now() >= t.expires => {
                    store.access.remove(token);
                    Err("the access token expired")
                }
                Some(t) => Ok(t.scope.clone()),
            }
        };
        let scope = match scope {
            Ok(scope) => scope,
            Err(why) => {
                return Some(
                    Answer::error(401, "invalid_token", why).with_header("WWW-Authenticate", self.challenge(Some(why))),
                )
            }
        };
        let tool = self.step_up_tool.as_deref()?;
        if req.method != "POST" || !calls_tool(&req.body, tool) {
            return None;
        }
        let has = |s: &str| scope.iter().any(|x| x == s);
        if STEP_UP_SCOPE.split(' ').all(has) {
            return None;
        }
        let why = format!("calling {tool} needs the scope '{STEP_UP_SCOPE}'");
        let challenge = format!(
            "Bearer error=\"insufficient_scope\", scope=\"{STEP_UP_SCOPE}\", resource_metadata=\"{}\", error_description=\"{why}\"",
            self.resource_metadata_url()
        );
        Some(Answer::error(403, "insufficient_scope", why).with_header("WWW-Authenticate", challenge))
    }

    // ---- registration (RFC 7591) ----

    fn register(&self, req: &Request) -> (Answer, Value) {
        if req.method != "POST" {
            return (Answer::not_allowed("POST"), Value::Null);
        }
        let body = serde_json::from_slice::<Value>(&req.body).unwrap_or(Value::Null);
        let answer = self.register_client(req, &body);
        (answer, body)
    }

    fn register_client(&self, req: &Request, body: &Value) -> Answer {
        let bad = |what: String| Answer::error(400, "invalid_client_metadata", what);
        if !crate::http_parse::is_json_content_type(req.headers.get("content-type").as_deref()) {
            return bad("the registration request must be application/json".into());
        }
        let Some(meta) = body.as_object() else {
            return bad("the registration request must be a JSON object".into());
        };
        let strings = |key: &str| -> Result<Option<Vec<String>>, String> {
            match meta.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .ok_or(format!("{key} must be an array of strings"))
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(Some),
                Some(_) => Err(format!("{key} must be an array of strings")),
            }
        };
        let redirect_uris = match strings("redirect_uris") {
            Ok(list) => list.unwrap_or_default(),
            Err(e) => return Answer::error(400, "invalid_redirect_uri", e),
        };
        if let Some(uri) = redirect_uris.iter().find(|u| !is_redirect_uri(u)) {
            return Answer::error(
                400,
                "invalid_redirect_uri",
                format!("'{uri}' is not an absolute URI without a fragment"),
            );
        }
        let method = match meta.get("token_endpoint_auth_method") {
            None | Some(Value::Null) => AuthMethod::None,
            Some(Value::String(m)) => match AuthMethod::parse(m) {
                Some(method) => method,
                None => {
                    return bad(format!(
                        "token_endpoint_auth_method '{m}' is not one of {}",
                        AUTH_METHODS.join(", ")
                    ))
                }
            },
            Some(_) => return bad("token_endpoint_auth_method must be a string".into()),
        };
        let grant_types = match strings("grant_types") {
            Ok(list) => list.unwrap_or_else(|| vec!["authorization_code".into(), "refresh_token".into()]),
            Err(e) => return bad(e),
        };
        if let Some(g) = grant_types.iter().find(|g| !GRANT_TYPES.contains(&g.as_str())) {
            return bad(format!("grant type '{g}' is not supported"));
        }
        if method == AuthMethod::None && grant_types.iter().any(|g| g == "client_credentials") {
            return bad(
                "client_credentials needs a confidential client (token_endpoint_auth_method other than none)".into(),
            );
        }
        let response_types = match strings("response_types") {
            Ok(list) => list.unwrap_or_else(|| vec!["code".into()]),
            Err(e) => return bad(e),
        };
        if let Some(r) = response_types.iter().find(|r| *r != "code") {
            return bad(format!("response type '{r}' is not supported"));
        }
        match meta.get("application_type") {
            None | Some(Value::Null) => {}
            Some(Value::String(t)) if t == "native" || t == "web" => {}
            Some(other) => return bad(format!("application_type {other} is not \"native\" or \"web\"")),
        }
        if let Some(scope) = meta.get("scope") {
            if let Err(e) = scope_list(scope.as_str()) {
                return bad(e);
            }
        }
        let mut client_id = oauth_codec::random_token("client-");
        if let Some(h) = &self.hostile {
            client_id = h.client_id(client_id);
        }
        let secret = (method != AuthMethod::None).then(|| oauth_codec::random_token("secret-"));
        let mut out: Map<String, Value> = meta.clone();
        out.insert("client_id".into(), json!(client_id));
        out.insert("client_id_issued_at".into(), json!(now_secs()));
        out.insert("redirect_uris".into(), json!(redirect_uris));
        out.insert("token_endpoint_auth_method".into(), json!(method.name()));
        out.insert("grant_types".into(), json!(grant_types));
        out.insert("response_types".into(), json!(response_types));
        if let Some(s) = &secret {
            out.insert("client_secret".into(), json!(s));
            out.insert("client_secret_expires_at".into(), json!(0));
        }
        eprintln!("fixture: oauth: registered client {client_id} ({})", method.name());
        self.lock().clients.insert(
            client_id,
            Client {
                secret,
                method,
                redirect_uris,
            },
        );
        Answer::json(201, Value::Object(out))
    }

    // ---- authorization (auto-approved) ----

    fn authorize(&self, req: &Request) -> (Answer, Value) {
        if req.method != "GET" {
            return (Answer::not_allowed("GET"), Value::Null);
        }
        let params = match parse_form(req.query.as_deref().unwrap_or_default()).and_then(unique) {
            Ok(p) => p,
            Err(e) => return (Answer::error(400, "invalid_request", e), Value::Null),
        };
        let answer = self.authorize_with(&params);
        (answer, params_json(&params))
    }

    fn authorize_with(&self, params: &HashMap<String, String>) -> Answer {
        let get = |k: &str| params.get(k).map(String::as_str);
        // Until client_id and redirect_uri are known good, errors are shown
        // here, never redirected (RFC 6749 §4.1.2.1).
        let Some(client_id) = get("client_id") else {
            return Answer::error(400, "invalid_request", "client_id is missing");
        };
        let Some(redirect_uri) = get("redirect_uri") else {
            return Answer::error(400, "invalid_request", "redirect_uri is missing");
        };
        {
            let store = self.lock();
            let Some(client) = store.clients.get(client_id) else {
                return Answer::error(400, "invalid_request", format!("unknown client_id '{client_id}'"));
            };
            if !is_redirect_uri(redirect_uri) {
                return Answer::error(
                    400,
                    "invalid_request",
                    "redirect_uri must be an absolute URI without a fragment",
                );
            }
            if !client.redirect_uris.is_empty()
                && !client.redirect_uris.iter().any(|r| redirect_matches(r, redirect_uri))
            {
                return Answer::error(
                    400,
                    "invalid_request",
                    format!("redirect_uri '{redirect_uri}' is not registered for this client"),
                );
            }
        }
        let state = get("state");
        let issuer = self.issuer();
        let redirect = |extra: &[(&str, &str)]| -> Answer {
            let mut query: Vec<(&str, &str)> = extra.to_vec();
            if let Some(s) = state {
                query.push(("state", s));
            }
            query.push(("iss", &issuer));
            Answer {
                status: 302,
                headers: vec![
                    ("Location", with_query(redirect_uri, &query)),
                    ("Cache-Control", "no-store".into()),
                ],
                body: None,
                error: None,
            }
        };
        let fail = |error: &str, description: &str| Answer {
            error: Some(error.to_string()),
            ..redirect(&[("error", error), ("error_description", description)])
        };
        if get("response_type") != Some("code") {
            return fail("unsupported_response_type", "response_type must be code");
        }
        if get("code_challenge_method") != Some("S256") {
            return fail("invalid_request", "code_challenge_method must be S256");
        }
        let challenge = get("code_challenge").unwrap_or_default();
        if challenge.len() != 43
            || !challenge
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return fail(
                "invalid_request",
                "code_challenge must be BASE64URL(SHA256(code_verifier)), 43 characters",
            );
        }
        let resource = self.resource();
        let hostile_ok = |r: &str| self.hostile.as_ref().is_some_and(|h| h.accepts_resource(&self.base, r));
        if get("resource") != Some(resource.as_str()) && !get("resource").is_some_and(hostile_ok) {
            return fail("invalid_target", &format!("resource must be {resource}"));
        }
        let scope = match scope_list(get("scope")) {
            Ok(s) => s,
            Err(e) => return fail("invalid_scope", &e),
        };
        let code = oauth_codec::random_token("code-");
        self.lock().codes.insert(
            code.clone(),
            Code {
                client_id: client_id.to_string(),
                redirect_uri: redirect_uri.to_string(),
                challenge: challenge.to_string(),
                resource,
                scope,
                expires: Instant::now() + CODE_TTL,
                used: false,
            },
        );
        redirect(&[("code", &code)])
    }

    // ---- the token endpoint ----

    fn token(&self, req: &Request) -> (Answer, Value) {
        if req.method != "POST" {
            return (Answer::not_allowed("POST"), Value::Null);
        }
        let form_type = req
            .headers
            .get("content-type")
            .is_some_and(|ct| crate::http_parse::media_types(&ct) == ["application/x-www-form-urlencoded"]);
        if !form_type {
            let answer = Answer::error(
                400,
                "invalid_request",
                "the token request must be application/x-www-form-urlencoded",
            );
            return (answer, Value::Null);
        }
        let text = String::from_utf8_lossy(&req.body);
        let params = match parse_form(&text).and_then(unique) {
            Ok(p) => p,
            Err(e) => return (Answer::error(400, "invalid_request", e), Value::Null),
        };
        let answer = self.token_with(req, &params);
        (answer, params_json(&params))
    }

    /// Authenticates the client of a token request per its registered
    /// method; Err is the 400/401 answer.
    fn authenticate(&self, req: &Request, params: &HashMap<String, String>) -> Result<String, Box<Answer>> {
        let header = req.headers.get("authorization");
        let basic = match header.as_deref().and_then(basic) {
            Some(Ok(creds)) => Some(creds),
            Some(Err(e)) => return reject(invalid_client(e, true)),
            None => None,
        };
        let form_id = params.get("client_id");
        let form_secret = params.get("client_secret");
        if basic.is_some() && form_secret.is_some() {
            return reject(Answer::error(
                400,
                "invalid_request",
                "the client authenticated with both client_secret_basic and client_secret_post",
            ));
        }
        if let (Some((id, _)), Some(fid)) = (&basic, form_id) {
            if id != fid {
                return reject(Answer::error(
                    400,
                    "invalid_request",
                    "client_id differs from the Basic credentials",
                ));
            }
        }
        let (client_id, secret, used) = match (&basic, form_id) {
            (Some((id, secret)), _) => (id.clone(), Some(secret.clone()), AuthMethod::Basic),
            (None, Some(id)) => match form_secret {
                Some(s) => (id.clone(), Some(s.clone()), AuthMethod::Post),
                None => (id.clone(), None, AuthMethod::None),
            },
            (None, None) => return reject(invalid_client("no client authentication (client_id)".into(), false)),
        };
        let store = self.lock();
        let Some(client) = store.clients.get(&client_id) else {
            return reject(invalid_client(format!("unknown client '{client_id}'"), basic.is_some()));
        };
        let method_ok = match client.method {
            AuthMethod::AnySecret => used != AuthMethod::None,
            m => m == used,
        };
        if !method_ok {
            return reject(invalid_client(
                format!(
                    "the client is registered for {} but authenticated with {}",
                    match client.method {
                        AuthMethod::AnySecret => "client_secret_basic or client_secret_post",
                        m => m.name(),
                    },
                    used.name()
                ),
                basic.is_some(),
            ));
        }
        if used != AuthMethod::None && client.secret != secret {
            return reject(invalid_client("wrong client secret".into(), basic.is_some()));
        }
        Ok(client_id)
    }

    fn token_with(&self, req: &Request, params: &HashMap<String, String>) -> Answer {
        let get = |k: &str| params.get(k).map(String::as_str);
        let grant = match get("grant_type") {
            None => return Answer::error(400, "invalid_request", "grant_type is missing"),
            Some(g) if GRANT_TYPES.contains(&g) => g,
            Some(g) => return Answer::error(400, "unsupported_grant_type", format!("grant_type '{g}'")),
        };
        let client_id = match self.authenticate(req, params) {
            Ok(id) => id,
            Err(answer) => return *answer,
        };
        let resource = self.resource();
        let resource_ok = || {
            let hostile_ok = |r: &str| self.hostile.as_ref().is_some_and(|h| h.accepts_resource(&self.base, r));
            if get("resource") == Some(resource.as_str()) || get("resource").is_some_and(hostile_ok) {
                Ok(())
            } else {
                reject(Answer::error(
                    400,
                    "invalid_target",
                    format!("resource must be {resource} (RFC 8707)"),
                ))
            }
        };
        let result = match grant {
            "authorization_code" => self.code_grant(&client_id, params, resource_ok),
            "refresh_token" => self.refresh_grant(&client_id, params, resource_ok),
            _ => self.client_credentials_grant(&client_id, params, resource_ok),
        };
        result.unwrap_or_else(|answer| *answer)
    }

    fn code_grant(
        &self,
        client_id: &str,
        params: &HashMap<String, String>,
        resource_ok: impl Fn() -> Result<(), Box<Answer>>,
    ) -> Result<Answer, Box<Answer>> {
        let get = |k: &str| params.get(k).map(String::as_str);
        let grant_error = |what: &str| Answer::error(400, "invalid_grant", what);
        let Some(code) = get("code") else {
            return reject(Answer::error(400, "invalid_request", "code is missing"));
        };
        let mut store = self.lock();
        let Some(entry) = store.codes.get_mut(code) else {
            return reject(grant_error("unknown authorization code"));
        };
        if entry.used {
            // RFC 6749 §4.1.2: a reused code revokes what it issued.
            store.access.retain(|_, t| t.grant.as_deref() != Some(code));
            store.refresh.retain(|_, t| t.grant.as_deref() != Some(code));
            return reject(grant_error(
                "the authorization code was already used; its tokens are revoked",
            ));
        }
        // Single use: any redemption attempt consumes the code.
        entry.used = true;
        if Instant::now() >= entry.expires {
            return reject(grant_error("the authorization code expired"));
        }
        if entry.client_id != client_id {
            return reject(grant_error("the authorization code was issued to another client"));
        }
        if get("redirect_uri") != Some(entry.redirect_uri.as_str()) {
            return reject(grant_error("redirect_uri differs from the authorization request's"));
        }
        let Some(verifier) = get("code_verifier") else {
            return reject(Answer::error(400, "invalid_request", "code_verifier is missing (PKCE)"));
        };
        if !is_code_verifier(verifier) || oauth_codec::s256(verifier) != entry.challenge {
            return reject(grant_error(
                "PKCE verification failed: BASE64URL(SHA256(code_verifier)) != code_challenge",
            ));
        }
        resource_ok()?;
        if entry.resource != self.resource() {
            return reject(Answer::error(
                400,
                "invalid_target",
                "the code was issued for another resource",
            ));
        }
        let scope = entry.scope.clone();
        let grant = Some(code.to_string());
        Ok(self.issue(&mut store, client_id, scope, grant, true))
    }

    fn refresh_grant(
        &self,
        client_id: &str,
        params: &HashMap<String, String>,
        resource_ok: impl Fn() -> Result<(), Box<Answer>>,
    ) -> Result<Answer, Box<Answer>> {
        let get = |k: &str| params.get(k).map(String::as_str);
        let Some(token) = get("refresh_token") else {
            return reject(Answer::error(400, "invalid_request", "refresh_token is missing"));
        };
        let mut store = self.lock();
        let Some(entry) = store.refresh.get(token) else {
            return reject(Answer::error(
                400,
                "invalid_grant",
                "unknown refresh token (refresh tokens are rotated: each works once)",
            ));
        };
        if entry.client_id != client_id {
            return reject(Answer::error(
                400,
                "invalid_grant",
                "the refresh token belongs to another client",
            ));
        }
        resource_ok()?;
        if entry.resource != self.resource() {
            return reject(Answer::error(
                400,
                "invalid_target",
                "the refresh token is for another resource",
            ));
        }
        let scope = match get("scope") {
            None => entry.scope.clone(),
            Some(raw) => {
                let asked = scope_list(Some(raw)).map_err(|e| Answer::error(400, "invalid_scope", e))?;
                if let Some(extra) = asked.iter().find(|s| !entry.scope.contains(s)) {
                    return reject(Answer::error(
                        400,
                        "invalid_scope",
                        format!("scope '{extra}' was not granted originally"),
                    ));
                }
                asked
            }
        };
        let grant = entry.grant.clone();
        // Rotation: the old refresh token stops working.
        store.refresh.remove(token);
        Ok(self.issue(&mut store, client_id, scope, grant, true))
    }

    fn client_credentials_grant(
        &self,
        client_id: &str,
        params: &HashMap<String, String>,
        resource_ok: impl Fn() -> Result<(), Box<Answer>>,
    ) -> Result<Answer, Box<Answer>> {
        let mut store = self.lock();
        if store.clients.get(client_id).map(|c| c.method) == Some(AuthMethod::None) {
            return reject(Answer::error(
                400,
                "unauthorized_client",
                "client_credentials needs a confidential client",
            ));
        }
        resource_ok()?;
        let scope =
            scope_list(params.get("scope").map(String::as_str)).map_err(|e| Answer::error(400, "invalid_scope", e))?;
        Ok(self.issue(&mut store, client_id, scope, None, false))
    }

    /// A new access token (and refresh token), answered with `Cache-Control:
    /// no-store`.
    fn issue(
        &self,
        store: &mut Store,
        client_id: &str,
        scope: Vec<String>,
        grant: Option<String>,
        refresh: bool,
    ) -> Answer {
        let access = oauth_codec::random_token("at-");
        store.access.insert(
            access.clone(),
            AccessToken {
                scope: scope.clone(),
                expires: Instant::now() + Duration::from_secs(self.ttl),
                grant: grant.clone(),
            },
        );
        let mut body = json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.ttl,
            "scope": scope.join(" "),
        });
        if refresh {
            let token = oauth_codec::random_token("rt-");
            store.refresh.insert(
                token.clone(),
                RefreshToken {
                    client_id: client_id.to_string(),
                    scope,
                    resource: self.resource(),
                    grant,
                },
            );
            body["refresh_token"] = json!(token);
        }
        if let Some(h) = &self.hostile {
            body = h.token_answer(body);
        }
        Answer::json(200, body).with_header("Pragma", "no-cache".into())
    }
}

/// A failed token request (boxed: an [`Answer`] is large).
fn reject<T>(answer: Answer) -> Result<T, Box<Answer>> {
    Err(Box::new(answer))
}

/// 401 `invalid_client`; with `WWW-Authenticate: Basic` when the client
/// tried the Authorization header (RFC 6749 §5.2).
fn invalid_client(description: String, tried_basic: bool) -> Answer {
    let answer = Answer::error(401, "invalid_client", description);
    if tried_basic {
        answer.with_header("WWW-Authenticate", "Basic realm=\"mcp-fixture-server\"".into())
    } else {
        answer
    }
}

/// Whether a POST body is a `tools/call` of `tool`.
fn calls_tool(body: &[u8], tool: &str) -> bool {
    let Ok(msg) = serde_json::from_slice::<Value>(body) else {
        return false;
    };
    msg.get("method").and_then(Value::as_str) == Some("tools/call")
        && msg.pointer("/params/name").and_then(Value::as_str) == Some(tool)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config;
    use crate::http_parse::Headers;
    use crate::oauth_codec::{base64url, s256};

    const BASE: &str = "http://127.0.0.1:4000";
    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

    fn request(method: &str, target: &str, headers: &[(&str, &str)], body: &str) -> Request {
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p.to_string(), Some(q.to_string())),
            None => (target.to_string(), None),
        };
        Request {
            method: method.into(),
            target: target.into(),
            path,
            query,
            minor: 1,
            headers: Headers(
                headers
                    .iter()
                    .map(|(n, v)| (n.to_ascii_lowercase(), v.to_string()))
                    .collect(),
            ),
            body: body.as_bytes().to_vec(),
        }
    }

    fn oauth(flags: OAuthFlags) -> OAuth {
        OAuth::new(BASE, &OAuthFlags { enabled: true, ..flags })
    }

    fn answer(o: &OAuth, req: &Request) -> Answer {
        o.route(req).expect("an OAuth answer").0
    }

    fn header<'a>(a: &'a Answer, name: &str) -> Option<&'a str> {
        a.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    fn body(a: &Answer) -> &Value {
        a.body.as_ref().expect("a JSON body")
    }

    fn form(pairs: &[(&str, &str)]) -> String {
        pairs
            .iter()
            .map(|(k, v)| format!("{}={}", percent_encode(k), percent_encode(v)))
            .collect::<Vec<_>>()
            .join("&")
    }

    fn token_req(pairs: &[(&str, &str)], auth: Option<&str>) -> Request {
        let mut headers = vec![("Content-Type", "application/x-www-form-urlencoded")];
        if let Some(a) = auth {
            headers.push(("Authorization", a));
        }
        request("POST", TOKEN_PATH, &headers, &form(pairs))
    }

    fn register(o: &OAuth, meta: Value) -> Answer {
        answer(
            o,
            &request(
                "POST",
                REGISTER_PATH,
                &[("Content-Type", "application/json")],
                &meta.to_string(),
            ),
        )
    }

    fn authorize_url(client_id: &str, redirect: &str, extra: &[(&str, &str)]) -> String {
        let challenge = s256(VERIFIER);
        let resource = format!("{BASE}/mcp");
        let mut pairs = vec![
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", redirect),
            ("state", "st 1"),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("resource", resource.as_str()),
            ("scope", "mcp"),
        ];
        for (k, v) in extra {
            pairs.retain(|(name, _)| name != k);
            if !v.is_empty() {
                pairs.push((k, v));
            }
        }
        format!("{AUTHORIZE_PATH}?{}", form(&pairs))
    }

    /// Runs /authorize and returns the redirect's query as a map.
    fn authorize(o: &OAuth, url: &str) -> (Answer, HashMap<String, String>) {
        let a = answer(o, &request("GET", url, &[], ""));
        let location = header(&a, "Location").unwrap_or_default().to_string();
        let query = location.split_once('?').map(|(_, q)| q).unwrap_or_default();
        (a, unique(parse_form(query).unwrap()).unwrap())
    }

    fn code_exchange(o: &OAuth, client_id: &str, code: &str, redirect: &str, auth: Option<&str>) -> Answer {
        let resource = format!("{BASE}/mcp");
        let mut pairs = vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect),
            ("code_verifier", VERIFIER),
            ("resource", resource.as_str()),
        ];
        if auth.is_none() {
            pairs.push(("client_id", client_id));
        }
        answer(o, &token_req(&pairs, auth))
    }

    fn mcp_post(token: Option<&str>, body: &str) -> Request {
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers = vec![("Content-Type", "application/json")];
        if let Some(a) = &auth {
            headers.push(("Authorization", a.as_str()));
        }
        request("POST", "/mcp", &headers, body)
    }

    fn basic_header(id: &str, secret: &str) -> String {
        // Standard base64 of "id:secret" (the test ids need no form-encoding).
        let b64 = base64url(format!("{id}:{secret}").as_bytes())
            .replace('-', "+")
            .replace('_', "/");
        let pad = "=".repeat((4 - b64.len() % 4) % 4);
        format!("Basic {b64}{pad}")
    }

    #[test]
    fn flags_parse_and_validate() {
        let cfg = config::parse(
            [
                "--http",
                "127.0.0.1:0",
                "--oauth",
                "--oauth-client",
                "cc:s3cr:et",
                "--oauth-client=other:x",
                "--oauth-token-ttl",
                "1",
                "--oauth-step-up-tool=admin_tool",
            ]
            .map(String::from),
        )
        .unwrap();
        assert!(cfg.oauth.enabled);
        assert_eq!(
            cfg.oauth.clients,
            vec![("cc".to_string(), "s3cr:et".to_string()), ("other".into(), "x".into())]
        );
        assert_eq!(cfg.oauth.ttl(), 1);
        assert_eq!(cfg.oauth.step_up_tool.as_deref(), Some("admin_tool"));
        assert_eq!(config::parse(Vec::new()).unwrap().oauth.ttl(), DEFAULT_TOKEN_TTL);
        let bad = |list: &[&str]| config::parse(list.iter().map(|s| s.to_string())).is_err();
        assert!(bad(&["--oauth"]));
        assert!(bad(&["--http", "x", "--oauth-client", "a:b"]));
        assert!(bad(&["--http", "x", "--oauth", "--oauth-client", "nosecret"]));
        assert!(bad(&["--http", "x", "--oauth", "--oauth-client", ":s"]));
        assert!(bad(&["--http", "x", "--oauth", "--oauth-token-ttl", "0"]));
        assert!(bad(&["--http", "x", "--oauth-step-up-tool", "t"]));
    }

    #[test]
    fn metadata_documents() {
        let o = oauth(OAuthFlags::default());
        for path in [PRM_PATH, PRM_ROOT_PATH] {
            let a = answer(&o, &request("GET", path, &[], ""));
            assert_eq!(a.status, 200);
            assert_eq!(
                body(&a),
                &json!({"resource": "http://127.0.0.1:4000/mcp", "authorization_servers": ["http://127.0.0.1:4000"],
                        "scopes_supported": ["mcp", "admin"], "bearer_methods_supported": ["header"]})
            );
        }
        let a = answer(&o, &request("GET", AS_METADATA_PATH, &[], ""));
        let m = body(&a);
        assert_eq!(m["issuer"], BASE);
        assert_eq!(m["token_endpoint"], "http://127.0.0.1:4000/token");
        assert_eq!(m["code_challenge_methods_supported"], json!(["S256"]));
        assert_eq!(m["authorization_response_iss_parameter_supported"], true);
        assert_eq!(answer(&o, &request("POST", PRM_PATH, &[], "")).status, 405);
    }

    #[test]
    fn the_endpoint_needs_a_bearer_token() {
        let o = oauth(OAuthFlags::default());
        for req in [
            mcp_post(None, "{}"),
            request("GET", "/sse", &[("Authorization", "Basic YTpi")], ""),
            request("DELETE", "/anything?x=1", &[], ""),
        ] {
            let (a, note) = o.route(&req).unwrap();
            assert_eq!(a.status, 401);
            assert_eq!(
                header(&a, "WWW-Authenticate"),
                Some(
                    "Bearer resource_metadata=\"http://127.0.0.1:4000/.well-known/oauth-protected-resource/mcp\", scope=\"mcp\""
                )
            );
            assert_eq!(note["endpoint"], "mcp");
            assert_eq!(note["status"], 401);
        }
        let a = answer(&o, &mcp_post(Some("made-up"), "{}"));
        assert_eq!(a.status, 401);
        assert!(header(&a, "WWW-Authenticate")
            .unwrap()
            .contains("error=\"invalid_token\""));
    }

    #[test]
    fn public_client_full_flow_with_refresh_rotation() {
        let o = oauth(OAuthFlags::default());
        let reg = register(
            &o,
            json!({"client_name": "t", "redirect_uris": ["http://127.0.0.1:1234/callback"],
                   "application_type": "native"}),
        );
        assert_eq!(reg.status, 201);
        let reg = body(&reg);
        assert_eq!(reg["token_endpoint_auth_method"], "none");
        assert!(reg.get("client_secret").is_none());
        assert_eq!(reg["client_name"], "t");
        let client_id = reg["client_id"].as_str().unwrap().to_string();

        // Loopback redirect: any port.
        let redirect = "http://127.0.0.1:5555/callback";
        let (a, q) = authorize(&o, &authorize_url(&client_id, redirect, &[]));
        assert_eq!(a.status, 302);
        assert!(header(&a, "Location")
            .unwrap()
            .starts_with("http://127.0.0.1:5555/callback?code="));
        assert!(header(&a, "Location")
            .unwrap()
            .ends_with("&state=st%201&iss=http%3A%2F%2F127.0.0.1%3A4000"));
        assert_eq!(q["state"], "st 1");
        assert_eq!(q["iss"], BASE);
        let code = q["code"].clone();

        let t = code_exchange(&o, &client_id, &code, redirect, None);
        assert_eq!(t.status, 200, "{:?}", t.body);
        assert_eq!(header(&t, "Cache-Control"), Some("no-store"));
        let t = body(&t).clone();
        assert_eq!(t["token_type"], "Bearer");
        assert_eq!(t["expires_in"], 3600);
        assert_eq!(t["scope"], "mcp");
        let access = t["access_token"].as_str().unwrap();
        assert!(o.route(&mcp_post(Some(access), "{}")).is_none());

        // The code is single-use; reusing it revokes its tokens.
        let again = code_exchange(&o, &client_id, &code, redirect, None);
        assert_eq!(body(&again)["error"], "invalid_grant");
        assert_eq!(answer(&o, &mcp_post(Some(access), "{}")).status, 401);

        // A fresh grant, then refresh with rotation.
        let (_, q) = authorize(&o, &authorize_url(&client_id, redirect, &[]));
        let t = body(&code_exchange(&o, &client_id, &q["code"], redirect, None)).clone();
        let refresh = t["refresh_token"].as_str().unwrap();
        let resource = format!("{BASE}/mcp");
        let refresh_form = |rt: &str| {
            token_req(
                &[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", rt),
                    ("client_id", &client_id),
                    ("resource", &resource),
                ],
                None,
            )
        };
        let r = answer(&o, &refresh_form(refresh));
        assert_eq!(r.status, 200, "{:?}", r.body);
        let new_access = body(&r)["access_token"].as_str().unwrap();
        assert_ne!(body(&r)["refresh_token"], t["refresh_token"]);
        assert!(o.route(&mcp_post(Some(new_access), "{}")).is_none());
        let old = answer(&o, &refresh_form(refresh));
        assert_eq!((old.status, body(&old)["error"].as_str()), (400, Some("invalid_grant")));
    }

    #[test]
    fn authorize_validation() {
        let o = oauth(OAuthFlags::default());
        let reg = register(&o, json!({"redirect_uris": ["http://localhost:1/cb"]}));
        let id = body(&reg)["client_id"].as_str().unwrap().to_string();
        // Shown, not redirected: unknown client, unregistered redirect.
        let (a, _) = authorize(&o, &authorize_url("nobody", "http://localhost:1/cb", &[]));
        assert_eq!(a.status, 400);
        for bad in [
            "http://evil.example/cb",
            "http://localhost:9/other",
            "http://127.0.0.1:1/cb",
        ] {
            let (a, _) = authorize(&o, &authorize_url(&id, bad, &[]));
            assert_eq!(a.status, 400, "{bad}");
        }
        let ok = "http://localhost:8080/cb";
        for (extra, error) in [
            (("code_challenge_method", "plain"), "invalid_request"),
            (("code_challenge_method", ""), "invalid_request"),
            (("code_challenge", "short"), "invalid_request"),
            (("resource", "http://127.0.0.1:4000/other"), "invalid_target"),
            (("resource", ""), "invalid_target"),
            (("scope", "mcp write"), "invalid_scope"),
            (("response_type", "token"), "unsupported_response_type"),
        ] {
            let (a, q) = authorize(&o, &authorize_url(&id, ok, &[extra]));
            assert_eq!(a.status, 302, "{extra:?}");
            assert_eq!(q["error"], error, "{extra:?}");
            assert_eq!(q["iss"], BASE);
            assert_eq!(q["state"], "st 1");
            assert!(!q.contains_key("code"));
        }
        // Repeated parameters.
        let url = format!("{}&state=again", authorize_url(&id, ok, &[]));
        assert_eq!(authorize(&o, &url).0.status, 400);
    }

    #[test]
    fn token_endpoint_checks_pkce_redirect_resource_and_client() {
        let o = oauth(OAuthFlags::default());
        let reg = register(
            &o,
            json!({"redirect_uris": ["http://127.0.0.1/cb"], "token_endpoint_auth_method": "client_secret_post"}),
        );
        let reg = body(&reg).clone();
        let id = reg["client_id"].as_str().unwrap();
        let secret = reg["client_secret"].as_str().unwrap();
        let redirect = "http://127.0.0.1:7/cb";
        let resource = format!("{BASE}/mcp");
        let code = || authorize(&o, &authorize_url(id, redirect, &[])).1["code"].clone();
        let exchange = |code: &str, verifier: &str, redirect: &str, resource: &str, secret: &str| {
            answer(
                &o,
                &token_req(
                    &[
                        ("grant_type", "authorization_code"),
                        ("code", code),
                        ("redirect_uri", redirect),
                        ("code_verifier", verifier),
                        ("resource", resource),
                        ("client_id", id),
                        ("client_secret", secret),
                    ],
                    None,
                ),
            )
        };
        let wrong_verifier = "a".repeat(43);
        let cases = [
            (
                wrong_verifier.as_str(),
                redirect,
                resource.as_str(),
                secret,
                400,
                "invalid_grant",
            ),
            (
                VERIFIER,
                "http://127.0.0.1:8/cb",
                resource.as_str(),
                secret,
                400,
                "invalid_grant",
            ),
            (
                VERIFIER,
                redirect,
                "http://127.0.0.1:4000/",
                secret,
                400,
                "invalid_target",
            ),
            (VERIFIER, redirect, resource.as_str(), "wrong", 401, "invalid_client"),
        ];
        for (verifier, redirect_uri, res, sec, status, error) in cases {
            let a = exchange(&code(), verifier, redirect_uri, res, sec);
            assert_eq!((a.status, body(&a)["error"].as_str()), (status, Some(error)));
        }
        let a = exchange(&code(), VERIFIER, redirect, &resource, secret);
        assert_eq!(a.status, 200, "{:?}", a.body);
        // The method is enforced: basic for a client_secret_post client fails.
        let a = code_exchange(&o, id, &code(), redirect, Some(&basic_header(id, secret)));
        assert_eq!(a.status, 401);
        assert!(header(&a, "WWW-Authenticate").unwrap().starts_with("Basic"));
        // Wrong content type.
        let req = request("POST", TOKEN_PATH, &[("Content-Type", "application/json")], "{}");
        assert_eq!(body(&answer(&o, &req))["error"], "invalid_request");
        let a = answer(&o, &token_req(&[("grant_type", "password")], None));
        assert_eq!(body(&a)["error"], "unsupported_grant_type");
    }

    #[test]
    fn confidential_clients_and_client_credentials() {
        let flags = OAuthFlags {
            clients: vec![("cc".into(), "s3cret".into())],
            ..OAuthFlags::default()
        };
        let o = oauth(flags);
        let resource = format!("{BASE}/mcp");
        let cc = |auth: Option<&str>, extra: &[(&str, &str)]| {
            let mut pairs = vec![("grant_type", "client_credentials"), ("resource", resource.as_str())];
            pairs.extend_from_slice(extra);
            answer(&o, &token_req(&pairs, auth))
        };
        let a = cc(Some(&basic_header("cc", "s3cret")), &[]);
        assert_eq!(a.status, 200, "{:?}", a.body);
        assert!(body(&a).get("refresh_token").is_none());
        assert_eq!(body(&a)["scope"], "mcp");
        let a = cc(
            None,
            &[("client_id", "cc"), ("client_secret", "s3cret"), ("scope", "mcp admin")],
        );
        assert_eq!((a.status, body(&a)["scope"].as_str()), (200, Some("mcp admin")));
        assert_eq!(cc(Some(&basic_header("cc", "nope")), &[]).status, 401);
        assert_eq!(cc(None, &[("client_id", "cc")]).status, 401);
        let both = cc(Some(&basic_header("cc", "s3cret")), &[("client_secret", "s3cret")]);
        assert_eq!(both.status, 400);
        let a = cc(Some(&basic_header("cc", "s3cret")), &[("resource", "")]);
        assert_eq!(a.status, 400, "a repeated resource is invalid_request");
        // Pre-registered: any redirect URI, client_secret_basic code flow.
        let redirect = "myapp:/cb";
        let (a, q) = authorize(&o, &authorize_url("cc", redirect, &[]));
        assert_eq!(a.status, 302);
        assert!(header(&a, "Location").unwrap().starts_with("myapp:/cb?code="));
        let t = code_exchange(&o, "cc", &q["code"], redirect, Some(&basic_header("cc", "s3cret")));
        assert_eq!(t.status, 200, "{:?}", t.body);
        // A public client cannot use client_credentials.
        let reg = register(&o, json!({"redirect_uris": []}));
        let public = body(&reg)["client_id"].as_str().unwrap().to_string();
        let a = cc(None, &[("client_id", &public)]);
        assert_eq!(body(&a)["error"], "unauthorized_client");
    }

    #[test]
    fn registration_validation() {
        let o = oauth(OAuthFlags::default());
        for bad in [
            json!([]),
            json!({"token_endpoint_auth_method": "private_key_jwt"}),
            json!({"redirect_uris": ["/relative"]}),
            json!({"redirect_uris": ["http://x/cb#frag"]}),
            json!({"redirect_uris": "http://x/cb"}),
            json!({"grant_types": ["password"]}),
            json!({"grant_types": ["client_credentials"]}),
            json!({"application_type": "desktop"}),
        ] {
            assert_eq!(register(&o, bad.clone()).status, 400, "{bad}");
        }
        let a = register(&o, json!({"token_endpoint_auth_method": "client_secret_basic"}));
        assert_eq!(a.status, 201);
        assert!(body(&a)["client_secret"].as_str().unwrap().starts_with("secret-"));
        let req = request("POST", REGISTER_PATH, &[("Content-Type", "text/plain")], "{}");
        assert_eq!(answer(&o, &req).status, 400);
    }

    #[test]
    fn tokens_expire_and_step_up_needs_admin() {
        let flags = OAuthFlags {
            clients: vec![("cc".into(), "s".into())],
            step_up_tool: Some("echo".into()),
            ..OAuthFlags::default()
        };
        let o = OAuth { ttl: 0, ..oauth(flags) };
        let resource = format!("{BASE}/mcp");
        let get_token = |scope: &str| {
            let a = answer(
                &o,
                &token_req(
                    &[
                        ("grant_type", "client_credentials"),
                        ("resource", &resource),
                        ("scope", scope),
                    ],
                    Some(&basic_header("cc", "s")),
                ),
            );
            body(&a)["access_token"].as_str().unwrap().to_string()
        };
        // ttl 0: expired at once.
        let t = get_token("mcp");
        let a = answer(&o, &mcp_post(Some(&t), "{}"));
        assert!(header(&a, "WWW-Authenticate")
            .unwrap()
            .contains("the access token expired"));
        let o = OAuth { ttl: 60, ..o };
        let call =
            |tool: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}"}}}}"#);
        assert!(o.lock().access.is_empty(), "the expired token was dropped");
        let basic_token = {
            let a = answer(
                &o,
                &token_req(
                    &[("grant_type", "client_credentials"), ("resource", &resource)],
                    Some(&basic_header("cc", "s")),
                ),
            );
            body(&a)["access_token"].as_str().unwrap().to_string()
        };
        assert!(o.route(&mcp_post(Some(&basic_token), &call("add"))).is_none());
        let a = answer(&o, &mcp_post(Some(&basic_token), &call("echo")));
        assert_eq!(a.status, 403);
        assert!(header(&a, "WWW-Authenticate")
            .unwrap()
            .starts_with("Bearer error=\"insufficient_scope\", scope=\"mcp admin\""));
        let admin = {
            let a = answer(
                &o,
                &token_req(
                    &[
                        ("grant_type", "client_credentials"),
                        ("resource", &resource),
                        ("scope", "mcp admin"),
                    ],
                    Some(&basic_header("cc", "s")),
                ),
            );
            body(&a)["access_token"].as_str().unwrap().to_string()
        };
        assert!(o.route(&mcp_post(Some(&admin), &call("echo"))).is_none());
    }

    #[test]
    fn the_expiry_hook() {
        let o = oauth(OAuthFlags::default());
        let reg = register(&o, json!({}));
        let id = body(&reg)["client_id"].as_str().unwrap().to_string();
        let redirect = "http://127.0.0.1:3/cb";
        let (_, q) = authorize(&o, &authorize_url(&id, redirect, &[]));
        let t = body(&code_exchange(&o, &id, &q["code"], redirect, None)).clone();
        let access = t["access_token"].as_str().unwrap();
        assert!(o.route(&mcp_post(Some(access), "{}")).is_none());
        assert_eq!(answer(&o, &request("GET", EXPIRE_PATH, &[], "")).status, 405);
        let a = answer(&o, &request("POST", EXPIRE_PATH, &[], ""));
        assert_eq!(body(&a), &json!({"expiredAccessTokens": 1, "revokedRefreshTokens": 0}));
        let a = answer(&o, &mcp_post(Some(access), "{}"));
        assert!(header(&a, "WWW-Authenticate")
            .unwrap()
            .contains("the access token expired"));
        let a = answer(&o, &request("POST", &format!("{EXPIRE_PATH}?refresh=1"), &[], ""));
        assert_eq!(body(&a)["revokedRefreshTokens"], 1);
        assert!(o.lock().refresh.is_empty());
    }

    #[test]
    fn redirect_uri_matching() {
        assert!(redirect_matches("http://127.0.0.1/cb", "http://127.0.0.1:5000/cb"));
        assert!(redirect_matches("http://127.0.0.1:1/cb", "http://127.0.0.1:5000/cb"));
        assert!(redirect_matches(
            "http://localhost:3000/callback",
            "http://localhost:1/callback"
        ));
        assert!(redirect_matches("http://[::1]:3/cb", "http://[::1]:4/cb"));
        assert!(redirect_matches("https://app.example/cb", "https://app.example/cb"));
        assert!(!redirect_matches(
            "https://app.example/cb",
            "https://app.example:444/cb"
        ));
        assert!(!redirect_matches("http://127.0.0.1/cb", "http://localhost:5000/cb"));
        assert!(!redirect_matches("http://127.0.0.1/cb", "http://127.0.0.1:5000/cb2"));
        assert!(!redirect_matches("http://127.0.0.1/cb", "https://127.0.0.1:5000/cb"));
        assert!(!redirect_matches("http://example.com:1/cb", "http://example.com:2/cb"));
        assert!(is_redirect_uri("com.example.app:/oauth2redirect"));
        assert!(!is_redirect_uri("http://"));
        assert!(!is_redirect_uri("no-scheme"));
        assert_eq!(with_query("x:/cb?a=1", &[("b", "c d")]), "x:/cb?a=1&b=c%20d");
    }

    #[test]
    fn basic_credentials_are_form_decoded() {
        assert_eq!(basic("Basic YTpi"), Some(Ok(("a".into(), "b".into()))));
        // "a+b:p%3Aw" → ("a b", "p:w") (RFC 6749 §2.3.1).
        assert_eq!(basic("basic YStiOnAlM0F3"), Some(Ok(("a b".into(), "p:w".into()))));
        assert!(matches!(basic("Basic !!!"), Some(Err(_))));
        assert_eq!(basic("Bearer x"), None);
        assert_eq!(bearer("Bearer  tok "), Some("tok"));
        assert_eq!(bearer("bearer tok"), Some("tok"));
        assert_eq!(bearer("Basic tok"), None);
    }
}
