//! 1 MB arguments and results over every transport: stdio, Streamable HTTP with JSON and with
//! SSE answers (both eras), the 2024-11-05 HTTP+SSE wire, HTTPS and HTTP/2 over TLS (the
//! direct connections). The fixture's `echo` sends the argument back as the result's text, so
//! each call carries the payload both ways. Its own test binary, because it sets the process's
//! `SSL_CERT_FILE` (once, the same for every test here).

mod common;
mod tls_support;

use common::{none, text, Fixture, HttpFixture};
use mcp_client::{Client, ClientConfig, ConnectMode, HttpConfig, TransportConfig};
use serde_json::json;
use tls_support::{vector, H2Front, TlsFront};

const MB: usize = 1024 * 1024;

/// 1 MiB of text that JSON must escape in places (quotes, backslashes, newlines, non-ASCII),
/// different for each `seed`.
fn payload(seed: u8) -> String {
    let unit = format!("line {seed} \"quoted\" back\\slash é ✓\n");
    let mut s = unit.repeat(MB / unit.len() + 1);
    let mut end = MB;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s
}

/// `text`'s first `len` bytes at most, cut at a character boundary.
fn prefix(mut text: String, mut len: usize) -> String {
    while !text.is_char_boundary(len) {
        len -= 1;
    }
    text.truncate(len);
    text
}

async fn round_trips(client: &Client) {
    for seed in 0..2u8 {
        let sent = payload(seed);
        let result = client
            .call_tool("echo", Some(json!({"text": sent})), &none())
            .await
            .expect("a 1 MiB call");
        assert!(
            text(&result) == sent,
            "the 1 MiB text came back changed ({} bytes)",
            text(&result).len()
        );
    }
}

fn http_client(url: &str, mode: ConnectMode) -> Client {
    let mut config = ClientConfig::new(TransportConfig::Http(HttpConfig::new(url.to_string())));
    config.mode = mode;
    Client::new(config)
}

async fn over_http(args: &[&str], mode: ConnectMode) {
    let server = HttpFixture::start(args);
    let client = http_client(&server.1, mode);
    client.connect().await.unwrap();
    round_trips(&client).await;
    client.close().await;
}

fn trust_the_test_ca() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::env::remove_var("SSL_CERT_DIR");
        std::env::set_var("SSL_CERT_FILE", vector("trusted-ca.pem"));
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_both_eras() {
    for fixture in [Fixture::modern(&[]), Fixture::legacy(&[])] {
        let client = fixture.client();
        client.connect().await.unwrap();
        round_trips(&client).await;
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_json_and_sse_both_eras() {
    over_http(&["--era", "modern"], ConnectMode::Modern).await;
    over_http(&["--era", "modern", "--sse-responses"], ConnectMode::Modern).await;
    over_http(&["--era", "legacy"], ConnectMode::Legacy).await;
    over_http(&["--era", "legacy", "--sse-responses"], ConnectMode::Legacy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_the_2024_http_sse_wire() {
    over_http(
        &["--era", "legacy", "--legacy-sse"],
        ConnectMode::Pinned("2024-11-05".into()),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_https_json_and_sse() {
    trust_the_test_ca();
    for args in [&["--era", "modern"][..], &["--era", "modern", "--sse-responses"][..]] {
        let server = HttpFixture::start(args);
        let front = TlsFront::start("trusted", &server.1).await;
        let client = http_client(&front.url, ConnectMode::Modern);
        client.connect().await.unwrap();
        round_trips(&client).await;
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http2_json_and_sse() {
    trust_the_test_ca();
    for args in [&["--era", "modern"][..], &["--era", "modern", "--sse-responses"][..]] {
        let server = HttpFixture::start(args);
        let front = H2Front::start(&server.1).await;
        let client = http_client(&front.url, ConnectMode::Modern);
        client.connect().await.unwrap();
        round_trips(&client).await;
        assert_eq!(front.connections(), 1);
        client.close().await;
    }
}

/// One connection, requests of changing sizes (the HTTP transport writes each request into the
/// buffer an earlier one left): 1 MiB, a small one, 100 KB, a 6 MiB one (past what is kept),
/// small again; each answer is its own request's text, whole. Then eight calls in flight at
/// once, each with a text of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_and_small_requests_in_turn_and_at_once_over_http() {
    let server = HttpFixture::start(&["--era", "modern"]);
    let client = http_client(&server.1, ConnectMode::Modern);
    client.connect().await.unwrap();
    let texts = [
        payload(1),
        "small".to_string(),
        prefix(payload(2), 100_000),
        payload(3).repeat(6),
        "s".to_string(),
    ];
    for sent in &texts {
        let result = client
            .call_tool("echo", Some(json!({"text": sent})), &none())
            .await
            .unwrap();
        assert!(text(&result) == *sent, "a {}-byte text came back changed", sent.len());
    }
    let calls: Vec<_> = (0..8u8)
        .map(|i| {
            let sent = prefix(payload(i), (i as usize + 1) * 60_000);
            let client = client.clone();
            tokio::spawn(async move {
                let result = client.call_tool("echo", Some(json!({"text": sent})), &none()).await;
                (i, text(&result.expect("a call in flight with others")) == sent)
            })
        })
        .collect();
    for call in calls {
        let (i, same) = call.await.unwrap();
        assert!(same, "call {i}'s text came back changed");
    }
    client.close().await;
}
