//! DPoP (RFC 9449) against our own authorization server and MCP server: a proof on every token
//! request and every authenticated MCP request, each verifying with the one public key the client
//! holds, bound tokens never sent as Bearer, and both servers' nonces honoured with one resend.

mod auth_support;

use auth_support::http_support::within;
use auth_support::*;
use base64::Engine;
use mcp_client::RequestOptions;
use ring::signature::{UnparsedPublicKey, ECDSA_P256_SHA256_FIXED};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(20);

fn b64(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(s).unwrap()
}

/// Verifies `proof` with the key in its own header; returns (jwk, claims).
fn verified(proof: &str) -> (Value, Value) {
    let parts: Vec<&str> = proof.split('.').collect();
    assert_eq!(parts.len(), 3, "{proof}");
    let header: Value = serde_json::from_slice(&b64(parts[0])).unwrap();
    assert_eq!(
        (header["typ"].as_str(), header["alg"].as_str()),
        (Some("dpop+jwt"), Some("ES256"))
    );
    let jwk = header["jwk"].clone();
    assert!(jwk.get("d").is_none(), "the private key never leaves the library");
    let mut point = vec![4u8];
    point.extend(b64(jwk["x"].as_str().unwrap()));
    point.extend(b64(jwk["y"].as_str().unwrap()));
    UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &point)
        .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &b64(parts[2]))
        .expect("the proof verifies with its jwk");
    (jwk, proof_claims(proof))
}

fn ath(token: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(ring::digest::digest(&ring::digest::SHA256, token.as_bytes()))
}

async fn run(knobs: Knobs) -> World {
    let w = World::start(knobs).await;
    let client = w.client(json!({"redirect_uri": "http://localhost:3000/callback", "dpop": true}));
    fetching_handler(&client);
    for _ in 0..3 {
        within(LIMIT, client.call_tool("test-tool", None, &RequestOptions::default()))
            .await
            .unwrap();
    }
    client.close().await;
    w
}

fn check_proofs(w: &World) -> (usize, usize) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let (mut keys, mut jtis) = (HashSet::new(), HashSet::new());
    let mut with_nonce = (0, 0);
    // Token requests: one proof each, for the token endpoint, no `ath`.
    let token_posts: Vec<Request> = w.auth.requests().into_iter().filter(|r| r.path == "/token").collect();
    assert!(!token_posts.is_empty());
    for r in &token_posts {
        let (jwk, c) = verified(r.header("dpop").expect("a proof on every token request"));
        assert_eq!(c["htm"], "POST");
        assert_eq!(c["htu"], format!("{}/token", w.issuer()));
        assert!(c.get("ath").is_none());
        assert!(c["iat"].as_u64().unwrap().abs_diff(now) < 300);
        keys.insert(jwk.to_string());
        assert!(jtis.insert(c["jti"].as_str().unwrap().to_string()), "jti reused");
        with_nonce.0 += c.get("nonce").is_some() as usize;
    }
    // MCP requests with a token: DPoP scheme, proof bound to the token, never Bearer.
    for r in w.mcp.posts() {
        let auth = r.header("authorization").unwrap_or("");
        assert!(!auth.starts_with("Bearer"), "a bound token sent as Bearer");
        let Some(token) = auth.strip_prefix("DPoP ") else {
            continue;
        };
        let (jwk, c) = verified(r.header("dpop").expect("a proof with every DPoP token"));
        assert_eq!(c["htm"], "POST");
        assert_eq!(c["htu"], w.mcp_url());
        assert_eq!(c["ath"], ath(token));
        keys.insert(jwk.to_string());
        assert!(jtis.insert(c["jti"].as_str().unwrap().to_string()), "jti reused");
        with_nonce.1 += c.get("nonce").is_some() as usize;
    }
    assert_eq!(keys.len(), 1, "one key per client");
    with_nonce
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proofs_on_token_and_mcp_requests_with_one_key() {
    let w = run(Knobs {
        dpop: true,
        ..Knobs::default()
    })
    .await;
    assert_eq!(check_proofs(&w), (0, 0));
    assert_eq!(w.authorizations().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_servers_nonces_are_honoured_with_one_resend() {
    let w = run(Knobs {
        dpop: true,
        dpop_nonce: Some("n-42".into()),
        ..Knobs::default()
    })
    .await;
    let (token_nonces, mcp_nonces) = check_proofs(&w);
    assert!(token_nonces >= 1 && mcp_nonces >= 3, "{token_nonces} {mcp_nonces}");
    // The nonce refusal did not cost a new authorization, and the code was exchanged once.
    assert_eq!(w.authorizations().len(), 1);
    let codes = w
        .token_requests()
        .iter()
        .filter(|t| t["grant_type"] == "authorization_code")
        .count();
    assert_eq!(codes, 2, "the code request, refused for its nonce, then sent once more");
    let granted = w.issued().len();
    assert_eq!(granted, 1);
}

/// A store shared by two clients.
#[derive(Default)]
struct Shared(std::sync::Mutex<std::collections::HashMap<String, Value>>);

impl mcp_client::TokenStore for Shared {
    fn load(&self, issuer: &str) -> mcp_client::BoxFuture<'static, Option<Value>> {
        let r = self.0.lock().unwrap().get(issuer).cloned();
        Box::pin(async move { r })
    }
    fn save(&self, issuer: &str, record: Option<Value>) -> mcp_client::BoxFuture<'static, ()> {
        let mut m = self.0.lock().unwrap();
        match record {
            Some(r) => m.insert(issuer.to_string(), r),
            None => m.remove(issuer),
        };
        Box::pin(async {})
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_bound_token_is_never_used_without_its_key() {
    let w = World::start(Knobs {
        dpop: true,
        ..Knobs::default()
    })
    .await;
    let store = std::sync::Arc::new(Shared::default());
    let with_key = w.client(json!({"redirect_uri": "http://localhost:3000/callback", "dpop": true}));
    let without = w.client(json!({"redirect_uri": "http://localhost:3000/callback"}));
    for c in [&with_key, &without] {
        c.set_token_store(Some(store.clone()));
        fetching_handler(c);
    }
    within(LIMIT, with_key.call_tool("test-tool", None, &RequestOptions::default()))
        .await
        .unwrap();
    let bound = w.issued();
    within(LIMIT, without.call_tool("test-tool", None, &RequestOptions::default()))
        .await
        .unwrap();
    // The second client authorized on its own, and never presented the bound token.
    assert_eq!(w.authorizations().len(), 2);
    assert!(w.mcp.posts().iter().all(|r| bound
        .iter()
        .all(|t| r.header("authorization") != Some(format!("Bearer {t}").as_str()))));
    with_key.close().await;
    without.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_dpop_configured_no_proof_is_sent() {
    // DPoP is opt-in: a client configured without it never presents a proof.
    let w = World::start(Knobs::default()).await;
    let client = w.client(json!({"redirect_uri": "http://localhost:3000/callback"}));
    fetching_handler(&client);
    within(LIMIT, client.call_tool("test-tool", None, &RequestOptions::default()))
        .await
        .unwrap();
    assert!(w
        .auth
        .requests()
        .iter()
        .chain(w.mcp.requests().iter())
        .all(|r| r.header("dpop").is_none()));
    client.close().await;
}

/// The MCP server's nonce challenge (met on the connect's first request) is the
/// `mcp.auth.dpop_nonce_retry` event of that request's span, with the refusal's status; the
/// handshake and the call end cleanly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_servers_nonce_challenge_is_an_event_of_the_handshake_span() {
    use mcp_client::observe::{AttrValue, Span};
    use std::sync::{Arc, Mutex};
    let w = World::start(Knobs {
        dpop: true,
        dpop_nonce: Some("n-7".into()),
        ..Knobs::default()
    })
    .await;
    let client = w.client(json!({"redirect_uri": "http://localhost:3000/callback", "dpop": true}));
    fetching_handler(&client);
    let spans: Arc<Mutex<Vec<Span>>> = Arc::default();
    let kept = spans.clone();
    client.set_observer(Some(Arc::new(move |s: &Span| kept.lock().unwrap().push(s.clone()))));
    within(LIMIT, client.call_tool("test-tool", None, &RequestOptions::default()))
        .await
        .unwrap();
    let taken = std::mem::take(&mut *spans.lock().unwrap());
    let retried: Vec<(&str, Vec<Option<AttrValue>>)> = taken
        .iter()
        .map(|s| {
            let statuses = s
                .events
                .iter()
                .filter(|e| e.name == "mcp.auth.dpop_nonce_retry")
                .map(|e| {
                    e.attributes
                        .iter()
                        .find(|(k, _)| *k == "http.response.status_code")
                        .map(|(_, v)| v.clone())
                })
                .collect();
            (s.name.as_str(), statuses)
        })
        .collect();
    let with_event: Vec<_> = retried.iter().filter(|(_, e)| !e.is_empty()).collect();
    assert_eq!(with_event.len(), 1, "{retried:?}");
    let (name, statuses) = with_event[0];
    assert!(["server/discover", "initialize"].contains(name), "{retried:?}");
    assert_eq!(statuses, &vec![Some(AttrValue::Int(401))]);
    assert_eq!(taken.last().unwrap().name, "tools/call test-tool");
    assert!(taken
        .iter()
        .all(|s| s.attribute("error.type").is_none() || s.name == "server/discover"));
    client.close().await;
}
