//! Response caching (SEP-2549) over real pipes: a fresh entry answers without a round trip,
//! TTL 0 and the bypass/refresh modes go to the server, notifications (legacy and listen)
//! invalidate, private entries follow the authorization context, MRTR legs are never stored,
//! and the client-wide switch turns it all off.

mod common;

use common::*;
use mcp_client::{CacheMode, ListKind, RequestOptions, SubscriptionEvent};
use serde_json::json;
use std::time::Duration;

fn mode(cache: CacheMode) -> RequestOptions {
    RequestOptions {
        cache,
        ..RequestOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_tools_list_within_the_ttl_sends_nothing() {
    let fx = Fixture::modern(&["--cache-ttl-ms", "60000"]);
    let client = fx.client();
    let first = client.list(ListKind::Tools, None, &none()).await.unwrap();
    let second = client.list(ListKind::Tools, None, &none()).await.unwrap();
    assert_eq!(first, second);
    assert_eq!(fx.wire.requests("tools/list").len(), 1, "{:?}", fx.wire.methods());
    // The list-all helper and every other cacheable method use it too.
    client.list_all(ListKind::Prompts, &none()).await.unwrap();
    client.list_all(ListKind::Prompts, &none()).await.unwrap();
    client.read_resource("fixture://static", &none()).await.unwrap();
    client.read_resource("fixture://static", &none()).await.unwrap();
    client.request("server/discover", None, &none()).await.unwrap();
    client.request("server/discover", None, &none()).await.unwrap();
    assert_eq!(fx.wire.requests("prompts/list").len(), 1);
    assert_eq!(fx.wire.requests("resources/read").len(), 1);
    // One discover at connect (not cached: the connect's own) and one for the first request.
    assert_eq!(fx.wire.requests("server/discover").len(), 2);
    // Refresh asks again (and stores), bypass asks again; use is served from the cache.
    client
        .list(ListKind::Tools, None, &mode(CacheMode::Refresh))
        .await
        .unwrap();
    client
        .list(ListKind::Tools, None, &mode(CacheMode::Bypass))
        .await
        .unwrap();
    client.list(ListKind::Tools, None, &none()).await.unwrap();
    assert_eq!(fx.wire.requests("tools/list").len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_are_entries_of_their_own() {
    let fx = Fixture::modern(&["--cache-ttl-ms", "60000", "--page-size", "2"]);
    let client = fx.client();
    let all = client.list_all(ListKind::Resources, &none()).await.unwrap();
    let pages = fx.wire.requests("resources/list").len();
    assert!(pages >= 2, "{pages}");
    assert_eq!(client.list_all(ListKind::Resources, &none()).await.unwrap(), all);
    assert_eq!(fx.wire.requests("resources/list").len(), pages);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ttl_zero_and_expired_entries_go_to_the_server() {
    let zero = Fixture::modern(&[]);
    let client = zero.client();
    client.list(ListKind::Tools, None, &none()).await.unwrap();
    client.list(ListKind::Tools, None, &none()).await.unwrap();
    assert_eq!(zero.wire.requests("tools/list").len(), 2, "ttlMs 0 is stale at once");

    let short = Fixture::modern(&["--cache-ttl-ms", "200"]);
    let client = short.client();
    client.list(ListKind::Tools, None, &none()).await.unwrap();
    // A wall-clock TTL has to pass on the client's clock: there is no signal to wait on.
    tokio::time::sleep(Duration::from_millis(250)).await;
    client.list(ListKind::Tools, None, &none()).await.unwrap();
    assert_eq!(short.wire.requests("tools/list").len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_notifications_invalidate() {
    let fx = Fixture::modern(&["--cache-ttl-ms", "60000"]);
    let client = fx.client();
    let filter = json!({"toolsListChanged": true, "promptsListChanged": true,
        "resourcesListChanged": true, "resourceSubscriptions": ["fixture://static"]});
    let sub = client.listen(filter, &none()).await.unwrap();
    for kind in KINDS {
        client.list(kind, None, &none()).await.unwrap();
    }
    client.read_resource("fixture://static", &none()).await.unwrap();
    client.read_resource("fixture://binary", &none()).await.unwrap();
    client
        .call_tool("touch", Some(json!({"uri": "fixture://static"})), &none())
        .await
        .unwrap();
    wait_event(&sub, "notifications/resources/updated").await;
    client.read_resource("fixture://static", &none()).await.unwrap();
    client.read_resource("fixture://binary", &none()).await.unwrap();
    assert_eq!(
        fx.wire.requests("resources/read").len(),
        3,
        "only the updated URI is read again"
    );

    client.call_tool("notify", None, &none()).await.unwrap();
    for method in [
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    ] {
        wait_event(&sub, method).await;
    }
    for kind in KINDS {
        client.list(kind, None, &none()).await.unwrap();
    }
    for method in [
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    ] {
        // resources/list_changed evicts the templates too.
        assert_eq!(fx.wire.requests(method).len(), 2, "{method}");
    }
    sub.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_notifications_invalidate() {
    // The fixture sends the hints in the legacy era too when given a TTL.
    let fx = Fixture::legacy(&["--cache-ttl-ms", "60000"]);
    let client = fx.client();
    let notes = collect_notifications(&client);
    for kind in KINDS {
        client.list(kind, None, &none()).await.unwrap();
        client.list(kind, None, &none()).await.unwrap();
    }
    assert_eq!(fx.wire.requests("tools/list").len(), 1);
    // The legacy `notify` tool sends the three list_changed notifications before its answer.
    client.call_tool("notify", None, &none()).await.unwrap();
    notes
        .wait_for("resources/list_changed", |(m, _)| {
            m == "notifications/resources/list_changed"
        })
        .await;
    for kind in KINDS {
        client.list(kind, None, &none()).await.unwrap();
    }
    for method in [
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    ] {
        assert_eq!(fx.wire.requests(method).len(), 2, "{method}");
    }
}

const KINDS: [ListKind; 4] = [
    ListKind::Tools,
    ListKind::Prompts,
    ListKind::Resources,
    ListKind::ResourceTemplates,
];

async fn wait_event(sub: &mcp_client::Subscription, want: &str) {
    loop {
        match within(Duration::from_secs(10), sub.next()).await {
            Some(SubscriptionEvent::Notification { method, .. }) if method == want => return,
            Some(SubscriptionEvent::Closed(e)) => panic!("subscription closed: {e:?}"),
            None => panic!("subscription ended"),
            Some(_) => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_entries_follow_the_authorization_context_public_ones_are_shared() {
    let private = Fixture::modern(&["--cache-ttl-ms", "60000", "--cache-scope", "private"]);
    let client = private.client();
    client.list(ListKind::Tools, None, &none()).await.unwrap();
    client.set_cache_partition("user-b");
    client.list(ListKind::Tools, None, &none()).await.unwrap();
    client.list(ListKind::Tools, None, &none()).await.unwrap();
    assert_eq!(private.wire.requests("tools/list").len(), 2);

    let public = Fixture::modern(&["--cache-ttl-ms", "60000", "--cache-scope", "public"]);
    let client = public.client();
    client.list(ListKind::Tools, None, &none()).await.unwrap();
    client.set_cache_partition("user-b");
    client.list(ListKind::Tools, None, &none()).await.unwrap();
    assert_eq!(public.wire.requests("tools/list").len(), 1);
    client.clear_cache();
    client.list(ListKind::Tools, None, &none()).await.unwrap();
    assert_eq!(public.wire.requests("tools/list").len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_required_reads_and_their_retries_are_never_cached() {
    let fx = Fixture::modern(&["--cache-ttl-ms", "60000"]);
    let client = fx.client();
    accept_elicitation(&client, json!({"password": "hunter2"}));
    client.read_resource("fixture://needs-input", &none()).await.unwrap();
    client.read_resource("fixture://needs-input", &none()).await.unwrap();
    // Each read: a first leg (input_required) and a retry with inputResponses.
    assert_eq!(fx.wire.requests("resources/read").len(), 4, "{:?}", fx.wire.methods());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_wide_switch_turns_caching_off() {
    let fx = Fixture::modern(&["--cache-ttl-ms", "60000"]);
    let client = fx.client_with(|c| c.response_cache = false);
    client.list(ListKind::Tools, None, &none()).await.unwrap();
    client.list(ListKind::Tools, None, &none()).await.unwrap();
    assert_eq!(fx.wire.requests("tools/list").len(), 2);
}
