//! `auto` caches the era it detected per HTTP origin: a second client for a legacy origin goes
//! straight to `initialize`, with no `server/discover` probe.

mod common;

use common::{fixture_bin, TempPath};
use mcp_client::transport::http::HttpConfig;
use mcp_client::{Client, ClientConfig, Era, TransportConfig};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// The fixture serving HTTP; killed (and reaped) on drop.
struct HttpFixture(Child, String);

impl HttpFixture {
    fn start(args: &[&str]) -> HttpFixture {
        let mut child = Command::new(fixture_bin())
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the fixture");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("fixture: listening on ")
            .expect("the listening line")
            .to_string();
        HttpFixture(child, url)
    }
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

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
