//! `auto` caches the era it detected per HTTP origin: a second client for a legacy origin goes
//! straight to `initialize`, with no `server/discover` probe.

mod common;

use common::{HttpFixture, TempPath};
use mcp_client::HttpConfig;
use mcp_client::{Client, ClientConfig, Era, EraCache, TransportConfig};

fn methods(record: &TempPath) -> Vec<String> {
    record
        .lines()
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v.pointer("/body/method").and_then(|m| m.as_str()).map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_origin_is_not_probed_twice() {
    let record = TempPath::new("era-cache.jsonl");
    let server = HttpFixture::start(&["--era", "legacy", "--record", &record.as_string()]);
    for round in 0..2 {
        let client = Client::new(ClientConfig::new(TransportConfig::Http(HttpConfig::new(
            server.1.clone(),
        ))));
        let info = client.connect().await.expect("connect");
        assert_eq!(info.era, Era::Legacy, "round {round}");
        client.close().await;
    }
    let sent = methods(&record);
    assert_eq!(
        sent.iter().filter(|m| *m == "server/discover").count(),
        1,
        "one probe in all: {sent:?}"
    );
    assert_eq!(sent.iter().filter(|m| *m == "initialize").count(), 2, "{sent:?}");
}

/// A client given a cache of its own learns nothing from the process's, and `clear` forgets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cache_of_its_own_can_be_cleared() {
    let record = TempPath::new("era-cache-own.jsonl");
    let server = HttpFixture::start(&["--era", "legacy", "--record", &record.as_string()]);
    let cache = EraCache::new();
    let connect = || async {
        assert_eq!(era_with(&cache, &server.1).await.expect("connect"), Era::Legacy);
    };
    connect().await;
    let origin = reqwest_origin(&server.1);
    assert_eq!(cache.get(&origin), Some(Era::Legacy));
    connect().await;
    cache.clear();
    assert_eq!(cache.get(&origin), None);
    connect().await;
    let sent = methods(&record);
    // Probed on the first connect and after the clear, not on the second.
    assert_eq!(sent.iter().filter(|m| *m == "server/discover").count(), 2, "{sent:?}");
    assert_eq!(sent.iter().filter(|m| *m == "initialize").count(), 3, "{sent:?}");
}

/// The era a client using `cache` connects to `url` in (it closes again).
async fn era_with(cache: &EraCache, url: &str) -> mcp_client::Result<Era> {
    let mut config = ClientConfig::new(TransportConfig::Http(HttpConfig::new(url)));
    config.era_cache = cache.clone();
    let client = Client::new(config);
    let era = client.connect().await.map(|info| info.era);
    client.close().await;
    era
}

/// `scheme://host:port` of a URL like `http://127.0.0.1:PORT/mcp`.
fn reqwest_origin(url: &str) -> String {
    let rest = url.split_once("://").unwrap();
    format!("{}://{}", rest.0, rest.1.split('/').next().unwrap())
}

/// A server upgraded in place (the same origin, now modern only): the era the cache holds is
/// stale, and the `initialize` it leads to is refused. The same connect then detects the era
/// again on a fresh transport and goes on as modern; the cache learns the new era.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_legacy_era_is_detected_again_in_the_same_connect() {
    let cache = EraCache::new();
    let legacy = HttpFixture::start(&["--era", "legacy"]);
    let url = legacy.1.clone();
    assert_eq!(
        era_with(&cache, &url).await.expect("connect to the legacy server"),
        Era::Legacy
    );
    drop(legacy);

    let record = TempPath::new("era-cache-stale.jsonl");
    let origin = reqwest_origin(&url);
    let address = origin.split_once("://").unwrap().1;
    let modern = HttpFixture::start(&["--era", "modern", "--http", address, "--record", &record.as_string()]);
    assert_eq!(modern.1, url, "the upgraded server listens where the old one did");
    let era = era_with(&cache, &url)
        .await
        .expect("the same connect detects the new era");
    assert_eq!(era, Era::Modern);
    assert_eq!(cache.get(&origin), Some(Era::Modern));
    let sent = methods(&record);
    assert_eq!(
        sent.first().map(String::as_str),
        Some("initialize"),
        "the cache was used first: {sent:?}"
    );
    assert!(sent.iter().any(|m| m == "server/discover"), "then probed: {sent:?}");
    // Known modern now: the next connect goes straight to the probe that is its first request.
    assert_eq!(era_with(&cache, &url).await.expect("connect again"), Era::Modern);
    assert_eq!(methods(&record).iter().filter(|m| *m == "initialize").count(), 1);
}
