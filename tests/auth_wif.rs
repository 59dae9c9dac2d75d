//! Workload identity federation (RFC 7523 JWT-bearer grant, SEP-1933) against our own
//! authorization server: the workload's JWT from the configuration, a file (re-read, as a
//! rotated Kubernetes token is) or the host's provider; refusals surfaced with their OAuth error
//! code, never retried with the same JWT, never followed by another grant.

mod auth_support;

use auth_support::http_support::within;
use auth_support::*;
use mcp_client::{AssertionKind, AssertionRequest};
use mcp_client::{ErrorKind, HandlerError, RequestOptions};
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(20);
const GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

fn jwt_requests(w: &World) -> Vec<HashMap<String, String>> {
    w.token_requests()
        .into_iter()
        .filter(|t| t["grant_type"] == GRANT)
        .collect()
}

fn wif_world() -> Knobs {
    Knobs {
        dcr: false,
        ..Knobs::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workload_jwt_is_the_grant_and_the_file_is_read_again() {
    let w = World::start(wif_world()).await;
    let dir = std::env::temp_dir().join(format!("mcp-wif-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("token");
    std::fs::write(&file, "good.first.jwt\n").unwrap();
    let client = w.client(json!({"grant": "jwt_bearer", "workload_jwt_file": file}));
    within(LIMIT, client.call_tool("test-tool", None, &RequestOptions::default()))
        .await
        .unwrap();
    let first = jwt_requests(&w);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0]["assertion"], "good.first.jwt");
    assert_eq!(first[0]["resource"], w.mcp_url());
    // No client configured: no client id, no registration, no browser.
    assert!(!first[0].contains_key("client_id") && !first[0].contains_key("authorization"));
    assert!(w.registrations().is_empty() && w.authorizations().is_empty());

    // The platform rotates the token; the next grant reads the new one.
    std::fs::write(&file, "good.second.jwt").unwrap();
    w.revoke_access_tokens();
    within(LIMIT, client.call_tool("test-tool", None, &RequestOptions::default()))
        .await
        .unwrap();
    let all = jwt_requests(&w);
    assert_eq!(all.len(), 2);
    assert_eq!(all[1]["assertion"], "good.second.jwt");
    std::fs::remove_dir_all(&dir).unwrap();
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_carry_their_oauth_code_and_are_never_retried_or_replaced() {
    for (jwt, scopes, code) in [
        ("bad.jwt.value", json!([]), "invalid_grant"),
        ("good.jwt.value", json!(["rejected"]), "invalid_scope"),
        ("good.jwt.value", json!(["unauthorized"]), "unauthorized_client"),
    ] {
        let w = World::start(wif_world()).await;
        let client = w.client(json!({"grant": "jwt_bearer", "workload_jwt": jwt, "scopes": scopes}));
        fetching_handler(&client); // a browser flow would be possible: it must not be used
        for attempt in 0..2 {
            let e = within(LIMIT, client.call_tool("test-tool", None, &RequestOptions::default()))
                .await
                .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::AuthRequired, "{e}");
            if attempt == 0 {
                assert_eq!(e.oauth_error(), Some(code), "{e}");
                assert!(e.message().contains(code), "{e}");
            }
            assert!(!e.message().contains(jwt) && !format!("{e:?}").contains(jwt));
        }
        // One token request: the refused JWT was not sent again, no other grant was tried.
        assert_eq!(w.token_requests().len(), 1, "{code}");
        assert_eq!(jwt_requests(&w).len(), 1, "{code}");
        assert!(w.authorizations().is_empty() && w.registrations().is_empty(), "{code}");
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_provider_supplies_the_jwt_and_a_configured_client_id_is_sent() {
    let w = World::start(wif_world()).await;
    let client = w.client(json!({"grant": "jwt_bearer", "client_id": "workload-1"}));
    let asked: Arc<Mutex<Vec<(AssertionKind, String)>>> = Arc::default();
    let seen = asked.clone();
    client.set_assertion_provider(Some(Arc::new(move |req: AssertionRequest| {
        seen.lock().unwrap().push((req.kind, req.audience.clone()));
        async move { Ok::<_, HandlerError>("good.from.host".to_string()) }
    })));
    within(LIMIT, client.call_tool("test-tool", None, &RequestOptions::default()))
        .await
        .unwrap();
    assert_eq!(*asked.lock().unwrap(), vec![(AssertionKind::WorkloadJwt, w.issuer())]);
    let req = &jwt_requests(&w)[0];
    assert_eq!(req["assertion"], "good.from.host");
    assert_eq!(req["client_id"], "workload-1");

    // A host that fails ends the flow without any token request.
    let w = World::start(wif_world()).await;
    let client = w.client(json!({"grant": "jwt_bearer"}));
    client.set_assertion_provider(Some(Arc::new(|_req: AssertionRequest| async {
        Err::<String, _>(HandlerError::new("no token mounted"))
    })));
    let e = within(LIMIT, client.connect()).await.unwrap_err();
    assert!(e.message().contains("no token mounted"), "{e}");
    assert!(w.token_requests().is_empty());
}
