//! OAuth 2.1 authorization against our own authorization server and protected MCP endpoint
//! (two origins on 127.0.0.1): the happy paths, and every refusal (resource mismatch, issuer
//! mismatch, `iss` missing or wrong, no PKCE), and the token never reaching another origin, a
//! URL, a log line or an error message.

mod auth_support;

use auth_support::http_support::{within, Logs};
use auth_support::*;
use mcp_client::BoxFuture;
use mcp_client::{AuthorizationRequest, TokenStore};
use mcp_client::{ErrorKind, HandlerError, RequestOptions};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(20);

fn none() -> RequestOptions {
    RequestOptions::default()
}

/// What a browser does with the redirect: a plain GET, the status line and page returned.
async fn browser_get(url: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let url = url::Url::parse(url).unwrap();
    let mut s = tokio::net::TcpStream::connect((url.host_str().unwrap(), url.port().unwrap()))
        .await
        .unwrap();
    let target = format!("{}?{}", url.path(), url.query().unwrap_or(""));
    s.write_all(format!("GET {target} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    out
}

fn redirect_cfg() -> Value {
    json!({"redirect_uri": "http://localhost:3000/callback"})
}

/// Every request the two servers received, for leak checks.
fn everything_received(w: &World) -> Vec<Request> {
    w.mcp.requests().into_iter().chain(w.auth.requests()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_code_with_dynamic_registration() {
    let w = World::start(Knobs {
        challenge_scope: Some("mcp:basic".into()),
        ..Knobs::default()
    })
    .await;
    let client = w.client(redirect_cfg());
    fetching_handler(&client);
    let logs = Logs::attach(&client);
    within(LIMIT, client.connect()).await.unwrap();
    let out = within(LIMIT, client.call_tool("test-tool", Some(json!({})), &none()))
        .await
        .unwrap();
    assert_eq!(out["content"][0]["text"], "scopes: mcp:basic");

    // Registration: native, our redirect, refresh-capable.
    let reg = &w.registrations()[0];
    assert_eq!(reg["application_type"], "native");
    assert_eq!(reg["redirect_uris"], json!(["http://localhost:3000/callback"]));
    assert_eq!(reg["grant_types"], json!(["authorization_code", "refresh_token"]));
    assert_eq!(reg["client_name"], "auth-tests");
    // The authorization request: PKCE S256, state, the resource, the challenged scope.
    let a = &w.authorizations()[0];
    assert_eq!(a["response_type"], "code");
    assert_eq!(a["code_challenge_method"], "S256");
    assert_eq!(a["resource"], w.mcp_url());
    assert_eq!(a["scope"], "mcp:basic");
    assert!(a["state"].len() >= 32);
    // The token request: the verifier, the same resource, public client (none).
    let t = &w.token_requests()[0];
    assert_eq!(t["grant_type"], "authorization_code");
    assert_eq!(t["resource"], w.mcp_url());
    assert_eq!(s256(&t["code_verifier"]), a["code_challenge"]);
    assert!(!t.contains_key("authorization") && !t.contains_key("client_secret"));
    // One flow: the first request went without a token, everything after with it.
    let posts = w.mcp.posts();
    assert!(posts[0].header("authorization").is_none());
    assert!(posts[1..].iter().all(|p| p.header("authorization").is_some()));
    assert_eq!(w.authorizations().len(), 1);
    // The token shows up nowhere but the Authorization header of MCP requests.
    let token = w.issued().pop().unwrap();
    for r in everything_received(&w) {
        assert!(!r.path.contains(&token), "{} {}", r.method, r.path);
        for (name, value) in &r.headers {
            assert!(name == "authorization" || !value.contains(&token), "{name}");
        }
    }
    for auth_request in w.auth.requests() {
        assert!(auth_request
            .header("authorization")
            .is_none_or(|v| !v.starts_with("Bearer")));
    }
    assert!(logs.lines().iter().all(|l| !l.contains(&token)), "{:?}", logs.lines());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loopback_listener_receives_the_redirect() {
    let w = World::start(Knobs::default()).await;
    let client = w.client(json!({}));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    // A browser: follow the authorization server's redirect to the loopback listener.
    client.on_authorization(move |req: AuthorizationRequest| {
        let s = s.clone();
        async move {
            s.lock().unwrap().push((req.redirect_uri.clone(), req.loopback));
            let location = mcp_client::testing::fetch_redirect(&req.url, Duration::from_secs(5))
                .await
                .map_err(|e| HandlerError::new(e.message()))?;
            assert!(browser_get(&location).await.starts_with("HTTP/1.1 200"));
            Ok(None)
        }
    });
    within(LIMIT, client.call_tool("test-tool", None, &none()))
        .await
        .unwrap();
    let (redirect, loopback) = seen.lock().unwrap()[0].clone();
    assert!(loopback);
    assert!(
        redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"),
        "{redirect}"
    );
    assert_eq!(w.registrations()[0]["redirect_uris"], json!([redirect]));
    assert_eq!(w.token_requests()[0]["redirect_uri"], redirect);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_oauth_a_401_is_auth_required_with_its_challenge() {
    let w = World::start(Knobs::default()).await;
    let client = plain_client(&w.mcp_url());
    let e = within(LIMIT, client.connect()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AuthRequired, "{e}");
    assert_eq!(e.http_status(), Some(401));
    assert!(e.www_authenticate().unwrap().contains("resource_metadata="), "{e:?}");
    assert!(e.message().contains("HTTP 401"), "{e}");
    assert!(w.auth.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_static_bearer_token_still_works() {
    let w = World::start(Knobs::default()).await;
    w.record
        .lock()
        .unwrap()
        .tokens
        .insert("static-token".into(), (vec![], None));
    let mut http = mcp_client::HttpConfig::new(w.mcp_url());
    http.bearer_token = Some("static-token".into());
    let mut cfg = mcp_client::ClientConfig::new(mcp_client::TransportConfig::Http(http.clone()));
    cfg.mode = mcp_client::ConnectMode::Modern;
    let client = mcp_client::Client::new(cfg);
    within(LIMIT, client.call_tool("test-tool", None, &none()))
        .await
        .unwrap();
    assert!(w
        .mcp
        .posts()
        .iter()
        .all(|p| p.header("authorization") == Some("Bearer static-token")));
    // A refused static token is AuthRequired, and the token is not in the error.
    http.bearer_token = Some("wrong-token".into());
    let mut cfg = mcp_client::ClientConfig::new(mcp_client::TransportConfig::Http(http));
    cfg.mode = mcp_client::ConnectMode::Modern;
    let e = within(LIMIT, mcp_client::Client::new(cfg).connect()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AuthRequired);
    assert!(!e.message().contains("wrong-token") && !format!("{e:?}").contains("wrong-token"));
    // Both at once are refused.
    let both = mcp_client::ClientConfig::from_json(&json!({"url": w.mcp_url(), "bearer_token": "t", "oauth": {}}));
    assert_eq!(both.unwrap_err().kind(), ErrorKind::InvalidArgument);
}

async fn refused(knobs: Knobs) -> (World, mcp_client::Error) {
    let w = World::start(knobs).await;
    let client = w.client(redirect_cfg());
    fetching_handler(&client);
    let e = within(LIMIT, client.connect()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AuthRequired, "{e}");
    assert!(w.issued().is_empty(), "no token may be issued");
    assert!(w.mcp.posts().iter().all(|p| p.header("authorization").is_none()));
    (w, e)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_metadata_for_another_resource() {
    let (w, e) = refused(Knobs {
        prm_resource: Some("https://evil.example.com/mcp".into()),
        ..Knobs::default()
    })
    .await;
    // The fetched document's text is never quoted.
    assert!(
        !e.message().contains("evil.example.com") && e.message().contains("another resource"),
        "{e}"
    );
    // Nothing was asked of the authorization server.
    assert!(w.auth.requests().is_empty(), "{:?}", w.auth.summary());
    // Another port on the same host is another resource too.
    let other = format!("http://127.0.0.1:{}/mcp", w.auth.addr.port());
    let (w, _) = refused(Knobs {
        prm_resource: Some(other),
        ..Knobs::default()
    })
    .await;
    assert!(w.auth.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_metadata_whose_issuer_differs() {
    let (w, e) = refused(Knobs {
        metadata_issuer: Some("https://attacker.example.com".into()),
        ..Knobs::default()
    })
    .await;
    assert!(
        !e.message().contains("attacker.example.com") && e.message().contains("another issuer"),
        "{e}"
    );
    // Only the metadata was read: no registration, authorization or token request.
    assert!(
        w.auth.requests().iter().all(|r| r.path.starts_with("/.well-known/")),
        "{:?}",
        w.auth.summary()
    );
    // A trailing slash is a different issuer too (no normalisation).
    let w2 = World::start(Knobs::default()).await;
    w2.knobs(|k| k.metadata_issuer = Some(format!("{}/", w2.issuer())));
    let client = w2.client(redirect_cfg());
    fetching_handler(&client);
    assert_eq!(
        within(LIMIT, client.connect()).await.unwrap_err().kind(),
        ErrorKind::AuthRequired
    );
    assert!(w2.registrations().is_empty() && w2.authorizations().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rfc9207_iss_is_checked_as_the_table_says() {
    let planted = ("access_denied".to_string(), "PLANTED-DESCRIPTION".to_string());
    // Advertised, missing: rejected; nothing from the response shown.
    let (w, e) = refused(Knobs {
        iss: Iss::Omit,
        redirect_error: Some(planted.clone()),
        ..Knobs::default()
    })
    .await;
    assert!(e.message().contains("iss"), "{e}");
    assert!(
        !e.message().contains("PLANTED") && !e.message().contains("access_denied"),
        "{e}"
    );
    assert_eq!(w.authorizations().len(), 1);
    assert!(w.token_requests().is_empty());
    // Advertised, wrong.
    let (w, e) = refused(Knobs {
        iss: Iss::Wrong,
        redirect_error: Some(planted.clone()),
        ..Knobs::default()
    })
    .await;
    assert!(!e.message().contains("PLANTED"), "{e}");
    assert!(w.token_requests().is_empty());
    // Not advertised, present and wrong: still compared.
    let (w, _) = refused(Knobs {
        iss: Iss::Wrong,
        iss_supported: None,
        ..Knobs::default()
    })
    .await;
    assert!(w.token_requests().is_empty());
    // Equal only after normalisation: a mismatch.
    let (w, _) = refused(Knobs {
        iss: Iss::Normalized,
        ..Knobs::default()
    })
    .await;
    assert!(w.token_requests().is_empty());
    // Not advertised, absent: proceed.
    let w = World::start(Knobs {
        iss: Iss::Omit,
        iss_supported: Some(false),
        ..Knobs::default()
    })
    .await;
    let client = w.client(redirect_cfg());
    fetching_handler(&client);
    within(LIMIT, client.connect()).await.unwrap();
    // A matching response that carries an error is shown (it is the server's own answer).
    let w = World::start(Knobs {
        redirect_error: Some(planted),
        ..Knobs::default()
    })
    .await;
    let client = w.client(redirect_cfg());
    fetching_handler(&client);
    let e = within(LIMIT, client.connect()).await.unwrap_err();
    assert!(
        e.message().contains("access_denied") && e.message().contains("PLANTED"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_an_authorization_server_without_pkce() {
    let (w, e) = refused(Knobs {
        s256_advertised: false,
        ..Knobs::default()
    })
    .await;
    assert!(e.message().contains("S256"), "{e}");
    assert!(w.authorizations().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_never_goes_to_another_origin() {
    let other = Server::start(|_req| async { Reply::status(200) }).await;
    let w = World::start(Knobs {
        redirect_call_to: Some(other.url("/mcp")),
        ..Knobs::default()
    })
    .await;
    let client = w.client(redirect_cfg());
    fetching_handler(&client);
    let logs = Logs::attach(&client);
    within(LIMIT, client.connect()).await.unwrap();
    // The server redirects a call elsewhere: not followed, so the token stays home.
    let e = within(LIMIT, client.call_tool("redirect", None, &none()))
        .await
        .unwrap_err();
    assert_eq!(e.http_status(), Some(307), "{e}");
    assert!(other.requests().is_empty());
    // The authorization server (another origin) never sees a Bearer token.
    let token = w.issued().pop().unwrap();
    assert!(w
        .auth
        .requests()
        .iter()
        .all(|r| r.headers.iter().all(|(_, v)| !v.contains(&token)) && !r.path.contains(&token)));
    assert!(!e.message().contains(&token) && !format!("{e:?}").contains(&token));
    assert!(logs.lines().iter().all(|l| !l.contains(&token)));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_tokens_are_used_and_rotated() {
    let w = World::start(Knobs {
        refresh: true,
        token_uses: Some(2),
        ..Knobs::default()
    })
    .await;
    let client = w.client(redirect_cfg());
    fetching_handler(&client);
    for _ in 0..6 {
        within(LIMIT, client.call_tool("test-tool", None, &none()))
            .await
            .unwrap();
    }
    // One browser authorization; every later 401 was answered with the refresh token, each
    // time the one the previous refresh returned.
    assert_eq!(w.authorizations().len(), 1);
    let refreshes: Vec<_> = w
        .token_requests()
        .into_iter()
        .filter(|t| t["grant_type"] == "refresh_token")
        .collect();
    assert!(refreshes.len() >= 2, "{refreshes:?}");
    let used: Vec<&String> = refreshes.iter().map(|t| &t["refresh_token"]).collect();
    let mut distinct = used.clone();
    distinct.dedup();
    assert_eq!(used, distinct, "a refresh token is used once");
    assert!(refreshes.iter().all(|t| t["resource"] == w.mcp_url()));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_about_to_expire_is_refreshed_before_use() {
    let w = World::start(Knobs {
        refresh: true,
        expires_in: 5, // inside the refresh margin
        ..Knobs::default()
    })
    .await;
    let client = w.client(redirect_cfg());
    fetching_handler(&client);
    within(LIMIT, client.connect()).await.unwrap();
    within(LIMIT, client.call_tool("test-tool", None, &none()))
        .await
        .unwrap();
    assert_eq!(w.authorizations().len(), 1);
    assert!(w.token_requests().iter().any(|t| t["grant_type"] == "refresh_token"));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_up_asks_for_the_union_of_scopes_and_is_bounded() {
    let w = World::start(Knobs {
        challenge_scope: Some("mcp:basic".into()),
        call_needs: Some("mcp:write".into()),
        ..Knobs::default()
    })
    .await;
    let client = w.client(redirect_cfg());
    fetching_handler(&client);
    within(LIMIT, client.connect()).await.unwrap();
    let out = within(LIMIT, client.call_tool("test-tool", None, &none()))
        .await
        .unwrap();
    let scopes: Vec<String> = w
        .authorizations()
        .iter()
        .map(|a| a.get("scope").cloned().unwrap_or_default())
        .collect();
    assert_eq!(scopes, vec!["mcp:basic", "mcp:basic mcp:write"]);
    assert_eq!(out["content"][0]["text"], "scopes: mcp:basic mcp:write");
    client.close().await;

    // A server that always wants something new: at most max_step_up re-authorizations.
    let w = World::start(Knobs {
        endless_step_up: true,
        ..Knobs::default()
    })
    .await;
    let client = w.client(json!({"redirect_uri": "http://localhost:3000/callback", "max_step_up": 2}));
    fetching_handler(&client);
    let e = within(LIMIT, client.connect()).await.unwrap_err();
    assert_eq!((e.kind(), e.http_status()), (ErrorKind::AuthRequired, Some(403)), "{e}");
    assert!(e.www_authenticate().unwrap().contains("insufficient_scope"));
    assert_eq!(w.authorizations().len(), 3, "one authorization and two step-ups");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scopes_come_from_the_challenge_then_the_resource_and_offline_access_only_when_listed() {
    // From the resource's scopes_supported; offline_access listed by the AS: added.
    let w = World::start(Knobs {
        prm_scopes: Some(vec!["a".into(), "b".into()]),
        as_scopes: Some(vec!["a".into(), "b".into(), "offline_access".into()]),
        ..Knobs::default()
    })
    .await;
    let client = w.client(redirect_cfg());
    fetching_handler(&client);
    within(LIMIT, client.connect()).await.unwrap();
    assert_eq!(w.authorizations()[0]["scope"], "a b offline_access");
    // Not listed: never asked for. Nothing known: no scope at all.
    let w = World::start(Knobs {
        prm_scopes: Some(vec!["a".into()]),
        as_scopes: Some(vec!["a".into()]),
        ..Knobs::default()
    })
    .await;
    let client = w.client(redirect_cfg());
    fetching_handler(&client);
    within(LIMIT, client.connect()).await.unwrap();
    assert_eq!(w.authorizations()[0]["scope"], "a");
    let w = World::start(Knobs::default()).await;
    let client = w.client(redirect_cfg());
    fetching_handler(&client);
    within(LIMIT, client.connect()).await.unwrap();
    assert!(!w.authorizations()[0].contains_key("scope"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pre_registered_credentials_and_cimd() {
    // Pre-registered, for this issuer: used with client_secret_basic, no registration.
    let w = World::start(Knobs {
        dcr: false,
        auth_methods: vec!["client_secret_basic".into()],
        ..Knobs::default()
    })
    .await;
    let client = w.client(
        json!({"redirect_uri": "http://localhost:3000/callback", "client_id": "pre",
                                 "client_secret": "pre-secret", "issuer": w.issuer()}),
    );
    fetching_handler(&client);
    within(LIMIT, client.connect()).await.unwrap();
    let t = &w.token_requests()[0];
    assert!(t["authorization"].starts_with("Basic "));
    assert_eq!(w.authorizations()[0]["client_id"], "pre");
    // For another issuer: never offered; without registration there is no identity.
    let w = World::start(Knobs {
        dcr: false,
        ..Knobs::default()
    })
    .await;
    let client = w.client(
        json!({"redirect_uri": "http://localhost:3000/callback", "client_id": "pre",
                                 "client_secret": "pre-secret", "issuer": "https://other.example"}),
    );
    fetching_handler(&client);
    let e = within(LIMIT, client.connect()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AuthRequired);
    assert!(e.message().contains("no client identity"), "{e}");
    assert!(w.authorizations().is_empty());
    // CIMD where advertised: the URL is the client id, no registration.
    let w = World::start(Knobs {
        cimd: true,
        ..Knobs::default()
    })
    .await;
    let client = w.client(json!({"redirect_uri": "http://localhost:3000/callback",
                                 "client_metadata_url": "https://app.example/client.json"}));
    fetching_handler(&client);
    within(LIMIT, client.connect()).await.unwrap();
    assert_eq!(w.authorizations()[0]["client_id"], "https://app.example/client.json");
    assert!(w.registrations().is_empty());
    // Without an authorization handler and with a host-handled redirect: a clear error.
    let w = World::start(Knobs::default()).await;
    let client = w.client(redirect_cfg());
    let e = within(LIMIT, client.connect()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AuthRequired);
    assert!(e.message().contains("authorization handler"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_credentials_with_a_secret_and_with_a_private_key() {
    let w = World::start(Knobs {
        auth_methods: vec!["client_secret_basic".into(), "private_key_jwt".into()],
        ..Knobs::default()
    })
    .await;
    let client = w.client(
        json!({"grant": "client_credentials", "client_id": "svc", "client_secret": "s3cret",
                                 "issuer": w.issuer(), "scopes": ["jobs"]}),
    );
    assert!(
        !format!("{:?}", client.config()).contains("s3cret"),
        "secrets stay out of Debug"
    );
    within(LIMIT, client.call_tool("test-tool", None, &none()))
        .await
        .unwrap();
    let t = &w.token_requests()[0];
    assert_eq!(t["grant_type"], "client_credentials");
    assert_eq!(
        (t["resource"].as_str(), t["scope"].as_str()),
        (w.mcp_url().as_str(), "jobs")
    );
    let basic = t["authorization"].strip_prefix("Basic ").unwrap();
    use base64::Engine;
    let decoded = base64::engine::general_purpose::STANDARD.decode(basic).unwrap();
    assert_eq!(decoded, b"svc:s3cret");
    assert!(w.authorizations().is_empty() && w.registrations().is_empty());

    // private_key_jwt: an ES256 assertion for the issuer, verifiable with the public key.
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 =
        ring::signature::EcdsaKeyPair::generate_pkcs8(&ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let pair = ring::signature::EcdsaKeyPair::from_pkcs8(
        &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
        pkcs8.as_ref(),
        &rng,
    )
    .unwrap();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref())
    );
    let w = World::start(Knobs {
        auth_methods: vec!["private_key_jwt".into()],
        ..Knobs::default()
    })
    .await;
    let client = w.client(
        json!({"grant": "client_credentials", "client_id": "svc", "private_key_pem": pem,
                                 "issuer": w.issuer(), "signing_algorithm": "ES256"}),
    );
    within(LIMIT, client.call_tool("test-tool", None, &none()))
        .await
        .unwrap();
    let t = &w.token_requests()[0];
    assert_eq!(
        t["client_assertion_type"],
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    );
    assert!(!t.contains_key("authorization") && !t.contains_key("client_secret"));
    let parts: Vec<&str> = t["client_assertion"].split('.').collect();
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let claims: Value = serde_json::from_slice(&b64.decode(parts[1]).unwrap()).unwrap();
    assert_eq!(
        (claims["iss"].as_str(), claims["sub"].as_str()),
        (Some("svc"), Some("svc"))
    );
    assert_eq!(claims["aud"], w.issuer());
    use ring::signature::KeyPair;
    ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, pair.public_key().as_ref())
        .verify(
            format!("{}.{}", parts[0], parts[1]).as_bytes(),
            &b64.decode(parts[2]).unwrap(),
        )
        .unwrap();
}

/// A token store that records what it is asked.
#[derive(Default)]
struct Recorder {
    records: Mutex<HashMap<String, Value>>,
    loads: Mutex<Vec<String>>,
    saves: Mutex<Vec<String>>,
}

impl TokenStore for Recorder {
    fn load(&self, issuer: &str) -> BoxFuture<'static, Option<Value>> {
        self.loads.lock().unwrap().push(issuer.to_string());
        let r = self.records.lock().unwrap().get(issuer).cloned();
        Box::pin(async move { r })
    }
    fn save(&self, issuer: &str, record: Option<Value>) -> BoxFuture<'static, ()> {
        self.saves.lock().unwrap().push(issuer.to_string());
        let mut records = self.records.lock().unwrap();
        match record {
            Some(r) => records.insert(issuer.to_string(), r),
            None => records.remove(issuer),
        };
        Box::pin(async {})
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_token_is_used_and_records_are_per_issuer() {
    let w = World::start(Knobs::default()).await;
    let store = Arc::new(Recorder::default());
    let client = w.client(redirect_cfg());
    client.set_token_store(Some(store.clone()));
    fetching_handler(&client);
    within(LIMIT, client.call_tool("test-tool", None, &none()))
        .await
        .unwrap();
    let record = store.records.lock().unwrap()[&w.issuer()].clone();
    assert!(record["client"]["client_id"].is_string(), "{record}");
    assert!(record["tokens"][w.mcp_url()]["access_token"].is_string(), "{record}");
    assert_eq!(*store.loads.lock().unwrap(), vec![w.issuer()]);

    // Another client with the same store: the stored token, no new registration or login.
    let again = w.client(redirect_cfg());
    again.set_token_store(Some(store.clone()));
    within(LIMIT, again.call_tool("test-tool", None, &none()))
        .await
        .unwrap();
    assert_eq!((w.authorizations().len(), w.registrations().len()), (1, 1));

    // A record under another issuer is never read for this one.
    let other = World::start(Knobs::default()).await;
    let planted = Arc::new(Recorder::default());
    planted.records.lock().unwrap().insert(
        w.issuer(),
        json!({"client": {"client_id": "planted", "token_endpoint_auth_method": "none",
                          "redirect_uris": ["http://localhost:3000/callback"]},
               "tokens": {other.mcp_url(): {"access_token": "planted-token"}}}),
    );
    let client = other.client(redirect_cfg());
    client.set_token_store(Some(planted.clone()));
    fetching_handler(&client);
    within(LIMIT, client.connect()).await.unwrap();
    assert_eq!(*planted.loads.lock().unwrap(), vec![other.issuer()]);
    assert_ne!(other.authorizations()[0]["client_id"], "planted");
    assert!(other
        .mcp
        .posts()
        .iter()
        .all(|p| p.header("authorization") != Some("Bearer planted-token")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_authorization_server_means_a_new_registration() {
    let w = World::start(Knobs::default()).await;
    let second = World::start(Knobs::default()).await;
    let store = Arc::new(Recorder::default());
    let client = w.client(redirect_cfg());
    client.set_token_store(Some(store.clone()));
    fetching_handler(&client);
    within(LIMIT, client.connect()).await.unwrap();
    let old_client = w.authorizations()[0]["client_id"].clone();

    // The resource moves to the second authorization server and revokes the old tokens.
    w.knobs(|k| {
        k.prm_authorization_server = Some(second.issuer());
        k.accept_from = Some(second.record.clone());
    });
    w.record.lock().unwrap().tokens.clear();
    within(LIMIT, client.call_tool("test-tool", None, &none()))
        .await
        .unwrap();
    assert_eq!(second.registrations().len(), 1, "registered again with the new server");
    let new_client = second.authorizations()[0]["client_id"].clone();
    assert_ne!(new_client, old_client);
    // The old server's client id never reached the new server.
    for r in second.auth.requests() {
        assert!(!r.path.contains(&old_client) && !String::from_utf8_lossy(&r.body).contains(&old_client));
    }
    // One record per issuer.
    let records = store.records.lock().unwrap();
    assert_eq!(records[&w.issuer()]["client"]["client_id"], json!(old_client));
    assert_eq!(records[&second.issuer()]["client"]["client_id"], json!(new_client));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authorization_holds_the_request_timeout() {
    let w = World::start(Knobs::default()).await;
    let cfg = mcp_client::ClientConfig::from_json(&json!({
        "url": w.mcp_url(), "mode": "modern", "request_timeout_ms": 300,
        "oauth": {"redirect_uri": "http://localhost:3000/callback"}
    }))
    .unwrap();
    let client = mcp_client::Client::new(cfg);
    client.on_authorization(|req: AuthorizationRequest| async move {
        // A person at a browser, slower than the request timeout.
        tokio::time::sleep(Duration::from_millis(1200)).await;
        mcp_client::testing::fetch_redirect(&req.url, Duration::from_secs(5))
            .await
            .map(Some)
            .map_err(|e| HandlerError::new(e.message()))
    });
    within(LIMIT, client.call_tool("test-tool", None, &none()))
        .await
        .unwrap();
    // And the flow has its own bound.
    let w = World::start(Knobs::default()).await;
    let client = w.client(json!({"redirect_uri": "http://localhost:3000/callback", "authorization_timeout_ms": 200}));
    client.on_authorization(|_req: AuthorizationRequest| async move {
        // A host slower than authorization_timeout_ms: the bound under test.
        tokio::time::sleep(Duration::from_secs(5)).await;
        Ok(None)
    });
    let e = within(LIMIT, client.connect()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    // A host that declines ends the flow with AuthRequired.
    let client = w.client(redirect_cfg());
    client
        .on_authorization(|_req: AuthorizationRequest| async move { Err(HandlerError::new("user closed the window")) });
    let e = within(LIMIT, client.connect()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AuthRequired);
    assert!(e.message().contains("user closed the window"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_is_found_at_the_well_known_path_without_a_challenge() {
    let w = World::start(Knobs {
        challenge_names_prm: false,
        ..Knobs::default()
    })
    .await;
    let client = w.client(redirect_cfg());
    fetching_handler(&client);
    within(LIMIT, client.connect()).await.unwrap();
    let gets: Vec<String> = w.mcp.of_method("GET").iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        gets,
        vec!["/.well-known/oauth-protected-resource/mcp"],
        "path-aware first"
    );
}

/// The spans of calls that met the authorization flow say so: a 401 answered with new
/// credentials is an `mcp.auth.unauthorized` event, a 403 `insufficient_scope` an
/// `mcp.auth.step_up` event, each with the HTTP status, inside the one span of the call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_steps_are_events_of_the_calls_span() {
    use mcp_client::observe::{AttrValue, Span};
    let spans: Arc<Mutex<Vec<Span>>> = Arc::default();
    let keep = |client: &mcp_client::Client| {
        let kept = spans.clone();
        client.set_observer(Some(Arc::new(move |s: &Span| kept.lock().unwrap().push(s.clone()))));
    };
    let events = |span: &Span, name: &str| -> Vec<Option<AttrValue>> {
        span.events
            .iter()
            .filter(|e| e.name == name)
            .map(|e| {
                e.attributes
                    .iter()
                    .find(|(k, _)| *k == "http.response.status_code")
                    .map(|(_, v)| v.clone())
            })
            .collect()
    };

    let w = World::start(Knobs {
        refresh: true,
        token_uses: Some(2),
        ..Knobs::default()
    })
    .await;
    let client = w.client(redirect_cfg());
    fetching_handler(&client);
    within(LIMIT, client.connect()).await.unwrap();
    keep(&client);
    for _ in 0..4 {
        within(LIMIT, client.call_tool("test-tool", None, &none()))
            .await
            .unwrap();
    }
    let taken = std::mem::take(&mut *spans.lock().unwrap());
    assert_eq!(taken.len(), 4, "one span per call");
    let refused: Vec<_> = taken.iter().map(|s| events(s, "mcp.auth.unauthorized")).collect();
    assert!(
        refused.iter().any(|e| e == &vec![Some(AttrValue::Int(401))]),
        "a call met a 401: {refused:?}"
    );
    assert!(taken.iter().all(|s| s.attribute("error.type").is_none()));
    client.close().await;

    let w = World::start(Knobs {
        challenge_scope: Some("mcp:basic".into()),
        call_needs: Some("mcp:write".into()),
        ..Knobs::default()
    })
    .await;
    let client = w.client(redirect_cfg());
    fetching_handler(&client);
    within(LIMIT, client.connect()).await.unwrap();
    keep(&client);
    within(LIMIT, client.call_tool("test-tool", None, &none()))
        .await
        .unwrap();
    let span = spans.lock().unwrap().pop().expect("the call's span");
    assert_eq!(events(&span, "mcp.auth.step_up"), vec![Some(AttrValue::Int(403))]);
    assert!(span.attribute("error.type").is_none());
    client.close().await;
}
