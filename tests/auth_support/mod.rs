//! A protected MCP endpoint and an OAuth authorization server of our own, each on its own
//! 127.0.0.1 port (so two origins), for the authorization tests. Knobs in [`Knobs`] make either
//! misbehave; everything they receive is recorded.

#![allow(dead_code)]

#[path = "../http_support/mod.rs"]
pub mod http_support;

use base64::Engine;
pub use http_support::{discover_result, result, text_result, Reply, Request, Server};
use mcp_client::AuthorizationRequest;
use mcp_client::HttpConfig;
use mcp_client::{Client, ClientConfig, ConnectMode, HandlerError, TransportConfig};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the authorization server puts `iss` into its redirect.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Iss {
    Correct,
    Omit,
    Wrong,
    /// The issuer with a trailing slash: equal only after normalisation.
    Normalized,
}

/// What the two servers do.
#[derive(Clone)]
pub struct Knobs {
    /// PRM `resource` (default: the MCP URL).
    pub prm_resource: Option<String>,
    /// Put `resource_metadata` in the challenge (else the client must use the well-known URL).
    pub challenge_names_prm: bool,
    /// `scope` in the 401 challenge.
    pub challenge_scope: Option<String>,
    pub prm_scopes: Option<Vec<String>>,
    /// Metadata `issuer` (default: the AS URL).
    pub metadata_issuer: Option<String>,
    pub iss: Iss,
    pub iss_supported: Option<bool>,
    pub s256_advertised: bool,
    pub auth_methods: Vec<String>,
    pub as_scopes: Option<Vec<String>>,
    pub cimd: bool,
    pub dcr: bool,
    /// Issue refresh tokens.
    pub refresh: bool,
    pub expires_in: u64,
    /// Scope `tools/call` needs (a 403 `insufficient_scope` otherwise).
    pub call_needs: Option<String>,
    /// Every authorized request is answered 403 asking for a fresh scope (step-up never ends).
    pub endless_step_up: bool,
    /// Extra `error`/`error_description` added to the redirect.
    pub redirect_error: Option<(String, String)>,
    /// Tokens the MCP server accepts this many times, then rejects (401).
    pub token_uses: Option<usize>,
    /// `tools/call` of a tool named "redirect" answers 307 to this URL.
    pub redirect_call_to: Option<String>,
    /// The authorization server the PRM names (default: this world's).
    pub prm_authorization_server: Option<String>,
    /// Also accept the tokens another world's authorization server issued.
    pub accept_from: Option<Arc<Mutex<Record>>>,
    /// What a token exchange says it issued (default: an ID-JAG).
    pub issued_token_type: Option<String>,
    /// DPoP (RFC 9449): a token request with a proof gets a DPoP-bound token, which the MCP
    /// server accepts only as `Authorization: DPoP` with a proof.
    pub dpop: bool,
    /// Both servers demand this nonce in proofs (400 / 401 `use_dpop_nonce` otherwise).
    pub dpop_nonce: Option<String>,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            prm_resource: None,
            challenge_names_prm: true,
            challenge_scope: None,
            prm_scopes: None,
            metadata_issuer: None,
            iss: Iss::Correct,
            iss_supported: Some(true),
            s256_advertised: true,
            auth_methods: vec!["none".into(), "client_secret_basic".into()],
            as_scopes: None,
            cimd: false,
            dcr: true,
            refresh: false,
            expires_in: 3600,
            call_needs: None,
            endless_step_up: false,
            redirect_error: None,
            token_uses: None,
            redirect_call_to: None,
            prm_authorization_server: None,
            accept_from: None,
            issued_token_type: None,
            dpop: false,
            dpop_nonce: None,
        }
    }
}

/// A code handed out by `/authorize`.
#[derive(Clone, Debug)]
pub struct Grant {
    pub client_id: String,
    pub challenge: String,
    pub redirect_uri: String,
    pub scope: Option<String>,
    pub resource: Option<String>,
}

#[derive(Default)]
pub struct Record {
    /// Access token → its scopes and remaining uses.
    pub tokens: HashMap<String, (Vec<String>, Option<usize>)>,
    /// Live refresh tokens → scopes.
    pub refresh_tokens: HashMap<String, Vec<String>>,
    pub codes: HashMap<String, Grant>,
    /// Query of each authorization request.
    pub authorizations: Vec<HashMap<String, String>>,
    /// Form (plus the Authorization header as "authorization") of each token request.
    pub token_requests: Vec<HashMap<String, String>>,
    pub registrations: Vec<Value>,
    pub counter: usize,
    pub step_ups: usize,
    /// Access tokens bound to a DPoP key (never accepted as Bearer).
    pub bound: std::collections::HashSet<String>,
}

pub struct World {
    pub mcp: Server,
    pub auth: Server,
    pub knobs: Arc<Mutex<Knobs>>,
    pub record: Arc<Mutex<Record>>,
}

pub fn query(path: &str) -> HashMap<String, String> {
    let q = path.split_once('?').map(|(_, q)| q).unwrap_or("");
    url::form_urlencoded::parse(q.as_bytes()).into_owned().collect()
}

fn form(body: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

pub fn s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes()))
}

fn bearer_of(req: &Request) -> Option<String> {
    req.header("authorization")
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string)
}

/// The claims of a DPoP proof (unverified: the tests verify signatures themselves).
pub fn proof_claims(proof: &str) -> Value {
    proof
        .split('.')
        .nth(1)
        .and_then(|p| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(p).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null)
}

/// The proof's nonce is not the one demanded.
fn lacks_nonce(req: &Request, k: &Knobs) -> bool {
    k.dpop_nonce.as_ref().is_some_and(|n| {
        req.header("dpop")
            .map(proof_claims)
            .is_none_or(|c| c["nonce"].as_str() != Some(n))
    })
}

impl World {
    pub async fn start(knobs: Knobs) -> World {
        let knobs = Arc::new(Mutex::new(knobs));
        let record = Arc::new(Mutex::new(Record::default()));
        let as_url = Arc::new(Mutex::new(String::new()));
        let mcp_url = Arc::new(Mutex::new(String::new()));

        let (k, r, me) = (knobs.clone(), record.clone(), as_url.clone());
        let auth = Server::start(move |req| {
            let (k, r, me) = (k.clone(), r.clone(), me.clone());
            async move { authorization_server(req, &k.lock().unwrap().clone(), &r, &me.lock().unwrap().clone()) }
        })
        .await;
        *as_url.lock().unwrap() = auth.url("");

        let (k, r, me, asu) = (knobs.clone(), record.clone(), mcp_url.clone(), as_url.clone());
        let mcp = Server::start(move |req| {
            let (k, r, me, asu) = (k.clone(), r.clone(), me.clone(), asu.clone());
            async move {
                let knobs = k.lock().unwrap().clone();
                let (me, asu) = (me.lock().unwrap().clone(), asu.lock().unwrap().clone());
                protected_server(req, &knobs, &r, &me, &asu)
            }
        })
        .await;
        *mcp_url.lock().unwrap() = mcp.url("");
        World {
            mcp,
            auth,
            knobs,
            record,
        }
    }

    pub fn mcp_url(&self) -> String {
        self.mcp.url("/mcp")
    }

    pub fn issuer(&self) -> String {
        self.auth.url("")
    }

    pub fn knobs(&self, f: impl FnOnce(&mut Knobs)) {
        f(&mut self.knobs.lock().unwrap());
    }

    pub fn authorizations(&self) -> Vec<HashMap<String, String>> {
        self.record.lock().unwrap().authorizations.clone()
    }

    pub fn token_requests(&self) -> Vec<HashMap<String, String>> {
        self.record.lock().unwrap().token_requests.clone()
    }

    pub fn registrations(&self) -> Vec<Value> {
        self.record.lock().unwrap().registrations.clone()
    }

    /// The MCP server forgets every access token issued so far (they answer 401 from now on).
    pub fn revoke_access_tokens(&self) {
        self.record.lock().unwrap().tokens.clear();
    }

    /// Every access token issued so far.
    pub fn issued(&self) -> Vec<String> {
        self.record.lock().unwrap().tokens.keys().cloned().collect()
    }

    /// A client for the MCP endpoint with `oauth` as its configuration.
    pub fn client(&self, oauth: Value) -> Client {
        client_with(&self.mcp_url(), oauth)
    }
}

pub fn client_with(url: &str, oauth: Value) -> Client {
    let cfg = ClientConfig::from_json(&json!({
        "url": url,
        "mode": "modern",
        "request_timeout_ms": 10000,
        "client_info": {"name": "auth-tests", "version": "1.0.0"},
        "oauth": oauth,
    }))
    .unwrap();
    Client::new(cfg)
}

pub fn plain_client(url: &str) -> Client {
    let mut cfg = ClientConfig::new(TransportConfig::Http(HttpConfig::new(url)));
    cfg.mode = ConnectMode::Modern;
    cfg.request_timeout = Duration::from_secs(10);
    Client::new(cfg)
}

/// The conformance-style handler: GET the authorization URL without following it, hand back
/// the Location.
pub fn fetching_handler(client: &Client) {
    client.on_authorization(|req: AuthorizationRequest| async move {
        mcp_client::testing::fetch_redirect(&req.url, Duration::from_secs(5))
            .await
            .map(Some)
            .map_err(|e| HandlerError::new(e.message()))
    });
}

fn protected_server(req: Request, k: &Knobs, r: &Mutex<Record>, me: &str, issuer: &str) -> Reply {
    let path = req.path.split('?').next().unwrap_or("").to_string();
    if req.method == "GET" && path.starts_with("/.well-known/oauth-protected-resource") {
        if path != "/.well-known/oauth-protected-resource/mcp" {
            return Reply::status(404);
        }
        let mut prm = json!({
            "resource": k.prm_resource.clone().unwrap_or_else(|| format!("{me}/mcp")),
            "authorization_servers": [k.prm_authorization_server.clone().unwrap_or_else(|| issuer.to_string())],
        });
        if let Some(s) = &k.prm_scopes {
            prm["scopes_supported"] = json!(s);
        }
        return Reply::json(prm);
    }
    if req.method != "POST" || path != "/mcp" {
        return Reply::status(404);
    }
    let challenge = |scope: Option<&str>, error: Option<&str>| {
        let mut parts = vec![];
        if let Some(e) = error {
            parts.push(format!("error=\"{e}\""));
        }
        if let Some(s) = scope {
            parts.push(format!("scope=\"{s}\""));
        }
        if k.challenge_names_prm {
            parts.push(format!(
                "resource_metadata=\"{me}/.well-known/oauth-protected-resource/mcp\""
            ));
        }
        format!("Bearer {}", parts.join(", "))
    };
    let body = req.json();
    let id = req.id();
    let method = body["method"].as_str().unwrap_or_default().to_string();
    // DPoP-bound tokens come as `DPoP <token>` with a proof, never as Bearer.
    let dpop_token = req
        .header("authorization")
        .and_then(|v| v.strip_prefix("DPoP "))
        .filter(|_| k.dpop && req.header("dpop").is_some())
        .map(str::to_string);
    if dpop_token.is_some() && lacks_nonce(&req, k) {
        let nonce = k.dpop_nonce.clone().unwrap_or_default();
        return Reply::json_status(401, json!({"error": "use_dpop_nonce"}))
            .with_header("www-authenticate", "DPoP error=\"use_dpop_nonce\"")
            .with_header("dpop-nonce", &nonce);
    }
    let bearer = bearer_of(&req).filter(|t| !r.lock().unwrap().bound.contains(t));
    let token = dpop_token.or(bearer);
    let lookup = |r: &Mutex<Record>| {
        let mut rec = r.lock().unwrap();
        match token.as_ref().and_then(|t| rec.tokens.get_mut(t)) {
            Some((scopes, uses)) => match uses {
                Some(0) => None,
                Some(n) => {
                    *n -= 1;
                    Some(scopes.clone())
                }
                None => Some(scopes.clone()),
            },
            None => None,
        }
    };
    let scopes = lookup(r).or_else(|| k.accept_from.as_deref().and_then(lookup));
    let Some(scopes) = scopes else {
        return Reply::json_status(401, json!({"error": "invalid_token"})).with_header(
            "www-authenticate",
            &challenge(k.challenge_scope.as_deref(), Some("invalid_token")),
        );
    };
    if k.endless_step_up {
        let n = {
            let mut rec = r.lock().unwrap();
            rec.step_ups += 1;
            rec.step_ups
        };
        return Reply::json_status(403, json!({"error": "insufficient_scope"})).with_header(
            "www-authenticate",
            &challenge(Some(&format!("more:{n}")), Some("insufficient_scope")),
        );
    }
    if method == "tools/call" {
        if let Some(needed) = &k.call_needs {
            if !scopes.iter().any(|s| s == needed) {
                return Reply::json_status(403, json!({"error": "insufficient_scope"}))
                    .with_header("www-authenticate", &challenge(Some(needed), Some("insufficient_scope")));
            }
        }
        if body["params"]["name"] == "redirect" {
            if let Some(to) = &k.redirect_call_to {
                return Reply::status(307).with_header("location", to);
            }
        }
    }
    match method.as_str() {
        "server/discover" => Reply::json(result(&id, discover_result())),
        "tools/list" => Reply::json(result(
            &id,
            json!({"resultType": "complete", "tools": [{"name": "test-tool", "inputSchema": {"type": "object"}}]}),
        )),
        "tools/call" => Reply::json(result(&id, text_result(&format!("scopes: {}", scopes.join(" "))))),
        _ => Reply::json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}})),
    }
}

fn authorization_server(req: Request, k: &Knobs, r: &Mutex<Record>, me: &str) -> Reply {
    let path = req.path.split('?').next().unwrap_or("").to_string();
    let issuer = k.metadata_issuer.clone().unwrap_or_else(|| me.to_string());
    match (req.method.as_str(), path.as_str()) {
        ("GET", "/.well-known/oauth-authorization-server") => {
            let mut m = json!({
                "issuer": issuer,
                "authorization_endpoint": format!("{me}/authorize"),
                "token_endpoint": format!("{me}/token"),
                "response_types_supported": ["code"],
                "token_endpoint_auth_methods_supported": k.auth_methods,
            });
            if k.s256_advertised {
                m["code_challenge_methods_supported"] = json!(["S256"]);
            }
            if k.dcr {
                m["registration_endpoint"] = json!(format!("{me}/register"));
            }
            if let Some(b) = k.iss_supported {
                m["authorization_response_iss_parameter_supported"] = json!(b);
            }
            if let Some(s) = &k.as_scopes {
                m["scopes_supported"] = json!(s);
            }
            if k.cimd {
                m["client_id_metadata_document_supported"] = json!(true);
            }
            Reply::json(m)
        }
        ("GET", "/authorize") => {
            let q = query(&req.path);
            let mut rec = r.lock().unwrap();
            rec.authorizations.push(q.clone());
            rec.counter += 1;
            let code = format!("code-{}", rec.counter);
            rec.codes.insert(
                code.clone(),
                Grant {
                    client_id: q.get("client_id").cloned().unwrap_or_default(),
                    challenge: q.get("code_challenge").cloned().unwrap_or_default(),
                    redirect_uri: q.get("redirect_uri").cloned().unwrap_or_default(),
                    scope: q.get("scope").cloned(),
                    resource: q.get("resource").cloned(),
                },
            );
            let mut location =
                url::Url::parse(q.get("redirect_uri").map(String::as_str).unwrap_or("http://x/cb")).unwrap();
            {
                let mut p = location.query_pairs_mut();
                p.append_pair("code", &code);
                if let Some(s) = q.get("state") {
                    p.append_pair("state", s);
                }
                match k.iss {
                    Iss::Correct => {
                        p.append_pair("iss", me);
                    }
                    Iss::Wrong => {
                        p.append_pair("iss", "https://evil.example.com");
                    }
                    Iss::Normalized => {
                        p.append_pair("iss", &format!("{me}/"));
                    }
                    Iss::Omit => {}
                }
                if let Some((e, d)) = &k.redirect_error {
                    p.append_pair("error", e);
                    p.append_pair("error_description", d);
                }
            }
            Reply::status(302).with_header("location", location.as_str())
        }
        ("POST", "/register") => {
            let body = req.json();
            let mut rec = r.lock().unwrap();
            rec.registrations.push(body.clone());
            rec.counter += 1;
            let method = body["token_endpoint_auth_method"]
                .as_str()
                .unwrap_or("none")
                .to_string();
            let mut answer = json!({
                "client_id": format!("dyn-{}-{}", me.rsplit(':').next().unwrap_or(""), rec.counter),
                "redirect_uris": body["redirect_uris"],
                "token_endpoint_auth_method": method,
            });
            if method != "none" {
                answer["client_secret"] = json!(format!("secret-{}", rec.counter));
            }
            Reply::json_status(201, answer)
        }
        ("POST", "/token") => {
            let mut f = form(&req.body);
            if let Some(a) = req.header("authorization") {
                f.insert("authorization".into(), a.to_string());
            }
            if k.dpop && req.header("dpop").is_some() && lacks_nonce(&req, k) {
                r.lock().unwrap().token_requests.push(f.clone());
                let nonce = k.dpop_nonce.clone().unwrap_or_default();
                return Reply::json_status(400, json!({"error": "use_dpop_nonce"})).with_header("dpop-nonce", &nonce);
            }
            let bound = k.dpop && req.header("dpop").is_some();
            let mut rec = r.lock().unwrap();
            rec.token_requests.push(f.clone());
            let grant = f.get("grant_type").cloned().unwrap_or_default();
            let scopes: Vec<String> = match grant.as_str() {
                "authorization_code" => {
                    let Some(g) = f.get("code").and_then(|c| rec.codes.remove(c)) else {
                        return Reply::json_status(400, json!({"error": "invalid_grant"}));
                    };
                    let verifier = f.get("code_verifier").cloned().unwrap_or_default();
                    if s256(&verifier) != g.challenge || f.get("redirect_uri") != Some(&g.redirect_uri) {
                        return Reply::json_status(400, json!({"error": "invalid_grant", "error_description": "pkce"}));
                    }
                    g.scope
                        .map(|s| s.split(' ').map(str::to_string).collect())
                        .unwrap_or_default()
                }
                "refresh_token" => {
                    let Some(s) = f.get("refresh_token").and_then(|t| rec.refresh_tokens.remove(t)) else {
                        return Reply::json_status(400, json!({"error": "invalid_grant"}));
                    };
                    s
                }
                "client_credentials" => f
                    .get("scope")
                    .map(|s| s.split(' ').map(str::to_string).collect())
                    .unwrap_or_default(),
                // RFC 7523: an assertion starting "good." is accepted; the scopes `rejected` and
                // `unauthorized` force invalid_scope and unauthorized_client.
                "urn:ietf:params:oauth:grant-type:jwt-bearer" => {
                    let scopes: Vec<String> = f
                        .get("scope")
                        .map(|s| s.split(' ').map(str::to_string).collect())
                        .unwrap_or_default();
                    if !f.get("assertion").is_some_and(|a| a.starts_with("good.")) {
                        return Reply::json_status(
                            400,
                            json!({"error": "invalid_grant", "error_description": "bad jwt"}),
                        );
                    }
                    if scopes.iter().any(|s| s == "rejected") {
                        return Reply::json_status(400, json!({"error": "invalid_scope"}));
                    }
                    if scopes.iter().any(|s| s == "unauthorized") {
                        return Reply::json_status(400, json!({"error": "unauthorized_client"}));
                    }
                    scopes
                }
                // RFC 8693, as an enterprise identity provider: an ID token starting "good." is
                // exchanged for an ID-JAG the jwt-bearer grant above accepts; the knob
                // `issued_token_type` overrides what the answer says it issued.
                "urn:ietf:params:oauth:grant-type:token-exchange" => {
                    if !f.get("subject_token").is_some_and(|a| a.starts_with("good.")) {
                        return Reply::json_status(400, json!({"error": "invalid_grant"}));
                    }
                    if f.get("audience").map(String::as_str) != Some(me) {
                        return Reply::json_status(400, json!({"error": "invalid_target"}));
                    }
                    rec.counter += 1;
                    let issued = k
                        .issued_token_type
                        .clone()
                        .unwrap_or_else(|| "urn:ietf:params:oauth:token-type:id-jag".into());
                    return Reply::json(json!({
                        "access_token": format!("good.jag-{}.sig", rec.counter),
                        "issued_token_type": issued,
                        "token_type": "N_A",
                    }));
                }
                _ => return Reply::json_status(400, json!({"error": "unsupported_grant_type"})),
            };
            rec.counter += 1;
            let access = format!("tok-{}", rec.counter);
            rec.tokens.insert(access.clone(), (scopes.clone(), k.token_uses));
            if bound {
                rec.bound.insert(access.clone());
            }
            let token_type = if bound { "DPoP" } else { "Bearer" };
            let mut answer = json!({"access_token": access, "token_type": token_type, "expires_in": k.expires_in});
            if !scopes.is_empty() {
                answer["scope"] = json!(scopes.join(" "));
            }
            if k.refresh {
                let rt = format!("rt-{}", rec.counter);
                rec.refresh_tokens.insert(rt.clone(), scopes);
                answer["refresh_token"] = json!(rt);
            }
            Reply::json(answer)
        }
        _ => Reply::status(404),
    }
}
