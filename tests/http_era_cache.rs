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
        let mut config = ClientConfig::new(TransportConfig::Http(HttpConfig::new(server.1.clone())));
        config.era_cache = cache.clone();
        let client = Client::new(config);
        assert_eq!(client.connect().await.expect("connect").era, Era::Legacy);
        client.close().await;
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

/// `scheme://host:port` of a URL like `http://127.0.0.1:PORT/mcp`.
fn reqwest_origin(url: &str) -> String {
    let rest = url.split_once("://").unwrap();
    format!("{}://{}", rest.0, rest.1.split('/').next().unwrap())
}
