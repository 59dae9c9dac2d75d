//! Connect modes: `auto` (probe with `server/discover`, fall back to `initialize` on an error,
//! on silence, or by restarting a server that died on the probe), `modern`, `legacy` and a
//! pinned version, each checked against what went over the wire.

mod common;

use common::*;
use mcp_client::{CancelToken, Client, ConnectMode, Era, ErrorKind, RequestOptions, ServerInfo};
use serde_json::json;
use std::time::Duration;

/// A request after connecting; its answer proves the server has read every earlier line.
async fn echo(client: &Client) {
    let result = client
        .call_tool(
            "echo",
            Some(json!({"text": "after connect"})),
            &RequestOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text(&result), "after connect");
}

async fn connect_timed(client: &Client) -> (ServerInfo, Duration) {
    let (info, elapsed) = timed(Duration::from_secs(5), client.connect()).await;
    (info.expect("connect"), elapsed)
}

const LEGACY_TRAFFIC: [&str; 4] = [
    "server/discover",
    "initialize",
    "notifications/initialized",
    "tools/call",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_against_a_dual_server_is_modern() {
    let fx = Fixture::new(&[]);
    let client = fx.client();
    let (info, _) = connect_timed(&client).await;
    assert_eq!(info.era, Era::Modern);
    assert_eq!(info.protocol_version, MODERN_VERSION);
    echo(&client).await;
    assert_eq!(fx.wire.methods(), ["server/discover", "tools/call"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_against_a_legacy_server_falls_back_at_once() {
    let fx = Fixture::new(&["--era", "legacy"]);
    let client = fx.client();
    let (info, elapsed) = connect_timed(&client).await;
    assert_eq!(info.era, Era::Legacy);
    assert_eq!(info.protocol_version, LATEST_LEGACY);
    // The -32601 answer is decisive: no waiting for the probe timeout.
    assert!(elapsed < PROBE_TIMEOUT, "fallback took {elapsed:?}");
    echo(&client).await;
    assert_eq!(fx.wire.methods(), LEGACY_TRAFFIC);
    assert!(fx.wire.requests("initialize")[0]["params"].get("_meta").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_falls_back_on_method_not_found_from_any_server() {
    let fx = Fixture::new(&["--on-discover", "not-found"]);
    let client = fx.client();
    let (info, elapsed) = connect_timed(&client).await;
    assert_eq!(info.era, Era::Legacy);
    assert!(elapsed < PROBE_TIMEOUT, "fallback took {elapsed:?}");
    echo(&client).await;
    assert_eq!(fx.wire.methods(), LEGACY_TRAFFIC);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_against_a_silent_server_falls_back_after_the_probe_timeout() {
    let fx = Fixture::new(&["--on-discover", "silent"]);
    let client = fx.client();
    let (info, elapsed) = connect_timed(&client).await;
    assert_eq!(info.era, Era::Legacy);
    assert!(
        elapsed >= PROBE_TIMEOUT - Duration::from_millis(20),
        "gave up on the probe after {elapsed:?}"
    );
    assert!(elapsed < PROBE_TIMEOUT * 4, "fallback took {elapsed:?}");
    echo(&client).await;
    // Before initialize is answered nothing but ping may be sent: the abandoned probe is not
    // cancelled on the wire.
    assert_eq!(fx.wire.methods(), LEGACY_TRAFFIC);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_restarts_a_server_that_exits_on_the_probe() {
    let fx = Fixture::new(&["--on-discover", "exit"]);
    let stdio = shell_stdio(PID_SCRIPT, &fx.args());
    let client = Client::new(config_for(stdio, ConnectMode::Auto));
    let logs = collect_logs(&client);
    let (info, elapsed) = connect_timed(&client).await;
    assert_eq!(info.era, Era::Legacy);
    assert!(elapsed < Duration::from_secs(3), "restart took {elapsed:?}");
    echo(&client).await;

    // Both processes appended to the same record: the probe, then the legacy session.
    assert_eq!(fx.wire.methods(), LEGACY_TRAFFIC);
    let pids: Vec<String> = logs
        .snapshot()
        .into_iter()
        .filter_map(|l| l.message.strip_prefix("wrapper pid ").map(str::to_string))
        .collect();
    assert_eq!(pids.len(), 2, "expected two server processes: {pids:?}");
    assert_ne!(pids[0], pids[1]);
    assert!(logs
        .snapshot()
        .iter()
        .any(|l| l.message == "fixture: exiting on discover"));
    // The first process was reaped when the client gave up on it.
    let first: u32 = pids[0].parse().unwrap();
    assert!(eventually(Duration::from_secs(1), || !process_exists(first)).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_mode_against_a_legacy_server_fails_without_initialize() {
    let fx = Fixture::new(&["--era", "legacy"]).mode(ConnectMode::Modern);
    let client = fx.client();
    let err = expect_err(client.connect().await, "modern against legacy");
    assert_kind(&err, ErrorKind::Rpc);
    assert_eq!(err.rpc_error().unwrap().code, -32601);
    assert_eq!(fx.wire.methods(), ["server/discover"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_mode_never_probes() {
    let fx = Fixture::new(&[]).mode(ConnectMode::Legacy);
    let client = fx.client();
    let (info, _) = connect_timed(&client).await;
    assert_eq!(info.era, Era::Legacy);
    assert_eq!(info.protocol_version, LATEST_LEGACY);
    echo(&client).await;
    assert_eq!(
        fx.wire.methods(),
        ["initialize", "notifications/initialized", "tools/call"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_mode_against_a_modern_only_server_fails() {
    let fx = Fixture::new(&["--era", "modern"]).mode(ConnectMode::Legacy);
    let client = fx.client();
    let err = expect_err(client.connect().await, "legacy against modern");
    // The server's -32022 lists only modern versions: no mutual version in the legacy era.
    assert_kind(&err, ErrorKind::VersionMismatch);
    assert!(err.message().contains("2026-07-28"), "{}", err.message());
    assert!(fx.wire.requests("server/discover").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_against_a_modern_only_server_is_modern() {
    let fx = Fixture::new(&["--era", "modern"]);
    let client = fx.client();
    let (info, _) = connect_timed(&client).await;
    assert_eq!(info.era, Era::Modern);
    echo(&client).await;
    assert_eq!(fx.wire.methods(), ["server/discover", "tools/call"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_modern_version_connects_modern() {
    let fx = Fixture::new(&[]).mode(ConnectMode::Pinned(MODERN_VERSION.into()));
    let client = fx.client();
    let (info, _) = connect_timed(&client).await;
    assert_eq!(info.era, Era::Modern);
    assert_eq!(info.protocol_version, MODERN_VERSION);
    echo(&client).await;
    assert_eq!(fx.wire.methods(), ["server/discover", "tools/call"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_calls_connect_once() {
    let fx = Fixture::new(&["--era", "legacy"]);
    let client = fx.client();
    let mut tasks = Vec::new();
    for i in 0..10 {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let text_in = format!("first call {i}");
            let result = client
                .call_tool("echo", Some(json!({ "text": text_in })), &RequestOptions::default())
                .await
                .unwrap();
            assert_eq!(text(&result), text_in);
        }));
    }
    for task in tasks {
        within(Duration::from_secs(5), task).await.unwrap();
    }
    assert_eq!(fx.wire.requests("server/discover").len(), 1);
    assert_eq!(fx.wire.requests("initialize").len(), 1);
    assert_eq!(fx.wire.tool_calls("echo").len(), 10);
    // Every call came after the handshake.
    let methods = fx.wire.methods();
    assert_eq!(methods[..3], LEGACY_TRAFFIC[..3]);

    // A second connect returns the same info and sends nothing.
    let again = client.connect().await.unwrap();
    assert_eq!(Some(again), client.server_info());
    assert_eq!(fx.wire.requests("initialize").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_with_ends_the_wait_on_its_cancel_token_or_time_caps() {
    let fx = Fixture::new(&["--on-discover", "silent"]);
    let client = fx.client_with(|c| {
        c.mode = ConnectMode::Modern;
        c.request_timeout = Duration::from_secs(20);
    });
    let capped = RequestOptions {
        max_total: Some(Duration::from_millis(200)),
        ..Default::default()
    };
    let (result, elapsed) = timed(Duration::from_secs(5), client.connect_with(&capped)).await;
    assert_kind(&expect_err(result, "capped"), ErrorKind::Timeout);
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");

    let token = CancelToken::new();
    let opts = RequestOptions {
        cancel: Some(token.clone()),
        ..Default::default()
    };
    // Cancelled once the connect waits (join! polls it first, until it pends) on a probe that
    // reached the (silent) server.
    let canceller = async {
        fx.wire
            .wait_for("the discover probe", |lines| {
                lines.iter().any(|m| m["method"] == "server/discover")
            })
            .await;
        token.cancel();
    };
    let ((result, elapsed), ()) = tokio::join!(timed(Duration::from_secs(5), client.connect_with(&opts)), canceller);
    assert_kind(&expect_err(result, "cancelled"), ErrorKind::Cancelled);
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
    client.close().await;

    // A token cancelled before the call: nothing is started at all.
    let untouched = Fixture::new(&[]);
    let fresh = untouched.client();
    let cancelled = CancelToken::new();
    cancelled.cancel();
    let opts = RequestOptions {
        cancel: Some(cancelled),
        ..Default::default()
    };
    assert_kind(
        &expect_err(fresh.connect_with(&opts).await, "pre-cancelled"),
        ErrorKind::Cancelled,
    );
    // An absence window (nothing was spawned or sent): nothing to wait on but time.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(untouched.wire.raw().is_empty(), "{:?}", untouched.wire.raw());
    // Without a cancellation the same client connects.
    fresh.connect_with(&RequestOptions::default()).await.unwrap();
    assert!(!untouched.wire.raw().is_empty());
}
