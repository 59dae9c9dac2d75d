//! Enterprise-managed authorization (SEP-990) against our own servers, the authorization server
//! also playing the enterprise identity provider: the user's ID token exchanged (RFC 8693) for an
//! ID-JAG, then the JWT-bearer grant with the client's own credentials; every refusal surfaced
//! with its OAuth error code and never followed by another grant.

mod auth_support;

use auth_support::http_support::within;
use auth_support::*;
use mcp_client::{ErrorKind, RequestOptions};
use serde_json::{json, Value};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(20);
const EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

fn config(w: &World, id_token: &str, scopes: Value) -> Value {
    json!({
        "grant": "enterprise",
        "id_token": id_token,
        "idp_token_endpoint": format!("{}/token", w.issuer()),
        "idp_client_id": "idp-client",
        "client_id": "mcp-client",
        "client_secret": "mcp-secret",
        "issuer": w.issuer(),
        "scopes": scopes,
    })
}

fn world() -> Knobs {
    Knobs {
        dcr: false,
        ..Knobs::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_id_token_becomes_an_id_jag_then_an_access_token() {
    let w = World::start(world()).await;
    let client = w.client(config(&w, "good.id.token", json!([])));
    within(LIMIT, client.call_tool("test-tool", None, &RequestOptions::default()))
        .await
        .unwrap();
    let reqs = w.token_requests();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    let (exchange, bearer) = (&reqs[0], &reqs[1]);
    assert_eq!(exchange["grant_type"], EXCHANGE);
    assert_eq!(exchange["subject_token"], "good.id.token");
    assert_eq!(
        exchange["subject_token_type"],
        "urn:ietf:params:oauth:token-type:id_token"
    );
    assert_eq!(
        exchange["requested_token_type"],
        "urn:ietf:params:oauth:token-type:id-jag"
    );
    assert_eq!(exchange["audience"], w.issuer());
    assert_eq!(exchange["resource"], w.mcp_url());
    assert_eq!(exchange["client_id"], "idp-client");
    // The MCP client's secret never goes to the identity provider's request.
    assert!(!exchange.values().any(|v| v.contains("mcp-secret")) && !exchange.contains_key("authorization"));
    assert_eq!(bearer["grant_type"], JWT_BEARER);
    assert!(bearer["assertion"].starts_with("good.jag-"), "{bearer:?}");
    assert!(bearer["authorization"].starts_with("Basic "), "{bearer:?}");
    assert!(w.authorizations().is_empty() && w.registrations().is_empty());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_keep_their_code_and_nothing_else_is_tried() {
    // The identity provider refuses the ID token: no grant at the authorization server.
    let w = World::start(world()).await;
    let client = w.client(config(&w, "bad.id.token", json!([])));
    fetching_handler(&client);
    let e = within(LIMIT, client.connect()).await.unwrap_err();
    assert_eq!(
        (e.kind(), e.oauth_error()),
        (ErrorKind::AuthRequired, Some("invalid_grant")),
        "{e}"
    );
    assert!(!e.message().contains("bad.id.token"));
    assert_eq!(w.token_requests().len(), 1);
    // The refused ID token is not sent again: a new sign-in is needed.
    within(LIMIT, client.connect()).await.unwrap_err();
    assert_eq!(w.token_requests().len(), 1);
    assert!(w.authorizations().is_empty() && w.registrations().is_empty());

    // The exchange issues something else than an ID-JAG: not used.
    let w = World::start(Knobs {
        issued_token_type: Some("urn:ietf:params:oauth:token-type:access_token".into()),
        ..world()
    })
    .await;
    let client = w.client(config(&w, "good.id.token", json!([])));
    let e = within(LIMIT, client.connect()).await.unwrap_err();
    assert!(e.message().contains("issued_token_type"), "{e}");
    assert_eq!(w.token_requests().len(), 1);

    // The authorization server refuses the grant's scope.
    let w = World::start(world()).await;
    let client = w.client(config(&w, "good.id.token", json!(["rejected"])));
    let e = within(LIMIT, client.connect()).await.unwrap_err();
    assert_eq!(e.oauth_error(), Some("invalid_scope"), "{e}");
    let grants: Vec<String> = w.token_requests().iter().map(|t| t["grant_type"].clone()).collect();
    assert_eq!(grants, vec![EXCHANGE.to_string(), JWT_BEARER.to_string()]);
}

#[test]
fn the_configuration_is_checked() {
    use mcp_client::OAuthConfig;
    for bad in [
        json!({"grant": "enterprise", "client_id": "c"}),
        json!({"grant": "enterprise", "idp_token_endpoint": "https://idp.example/token"}),
        json!({"id_token": "a.b.c"}),
        json!({"idp_client_id": "x"}),
        json!({"grant": "enterprise", "client_id": "c", "idp_token_endpoint": "ftp://idp.example"}),
        json!({"grant": "enterprise", "client_id": "c", "idp_token_endpoint": "https://i.example/t",
               "id_token": "a.b.c", "id_token_file": "/x"}),
    ] {
        assert!(OAuthConfig::from_json(&bad).is_err(), "{bad}");
    }
    let ok = OAuthConfig::from_json(&json!({"grant": "enterprise", "client_id": "c",
        "idp_token_endpoint": "https://idp.example/token", "idp_client_secret": "idp-secret",
        "id_token": "s.e.cret"}))
    .unwrap();
    let shown = format!("{ok:?}");
    assert!(!shown.contains("idp-secret") && !shown.contains("s.e.cret"), "{shown}");
}
