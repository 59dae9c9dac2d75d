//! `https://` MCP endpoints on the transport's direct connections (`net::direct`, TLS from
//! `net::stream`): both eras and both response kinds through a TLS front presenting a
//! certificate of the trusted test CA (`tests/vectors/tls`), the session resumed when the
//! connection is lost, and certificate failures that say which name and why. Its own test binary,
//! because it sets the process's `SSL_CERT_FILE` (once, the same for every test here).

mod common;
mod tls_support;

use common::{none, text, HttpFixture};
use mcp_client::{Client, ClientConfig, ConnectMode, ErrorKind, HttpConfig, TransportConfig};
use serde_json::json;
use tls_support::{vector, TlsFront};

fn trust_the_test_ca() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::env::remove_var("SSL_CERT_DIR");
        std::env::set_var("SSL_CERT_FILE", vector("trusted-ca.pem"));
    });
}

fn client(url: &str, mode: ConnectMode) -> Client {
    let mut config = ClientConfig::new(TransportConfig::Http(HttpConfig::new(url.to_string())));
    config.mode = mode;
    Client::new(config)
}

async fn echoes(client: &Client, word: &str) {
    let result = client
        .call_tool("echo", Some(json!({"text": word})), &none())
        .await
        .unwrap();
    assert_eq!(text(&result), word);
}

/// Every handshake offered HTTP/2 and HTTP/1.1 by ALPN: the direct connections' configuration (reqwest's
/// preconfigured one offers nothing), so the requests did not go through reqwest.
fn all_direct(front: &TlsFront) {
    let handshakes = front.handshakes();
    assert!(!handshakes.is_empty());
    for h in handshakes {
        assert_eq!(h.alpn, ["h2", "http/1.1"], "{h:?}");
    }
}

async fn era_and_kind(args: &[&str], mode: ConnectMode) {
    trust_the_test_ca();
    let server = HttpFixture::start(args);
    let front = TlsFront::start("trusted", &server.1).await;
    let client = client(&front.url, mode);
    client.connect().await.expect("connects over https");
    echoes(&client, "over tls").await;
    echoes(&client, "and again").await;
    all_direct(&front);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_json_over_https() {
    era_and_kind(&["--era", "modern"], ConnectMode::Modern).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_sse_over_https() {
    era_and_kind(&["--era", "modern", "--sse-responses"], ConnectMode::Modern).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_json_over_https() {
    era_and_kind(&["--era", "legacy"], ConnectMode::Legacy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_sse_over_https() {
    era_and_kind(&["--era", "legacy", "--sse-responses"], ConnectMode::Legacy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_connection_is_replaced_by_a_resumed_session() {
    trust_the_test_ca();
    let server = HttpFixture::start(&["--era", "modern"]);
    let front = TlsFront::start("trusted", &server.1).await;
    let client = client(&front.url, ConnectMode::Modern);
    client.connect().await.unwrap();
    echoes(&client, "first").await;
    let before = front.handshakes();
    assert!(before.iter().all(|h| !h.resumed), "{before:?}");
    front.drop_connections().await;
    // Time for the runtime to see the hang-up before the next call takes the pooled connection
    // (a request written into a connection whose end is not seen yet fails as sent).
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    echoes(&client, "after the loss").await;
    let after = front.handshakes();
    assert!(after.len() > before.len(), "{after:?}");
    assert!(after[before.len()..].iter().all(|h| h.resumed), "{after:?}");
    all_direct(&front);
    client.close().await;
}

/// Connecting through `who`'s certificate fails with an I/O error containing every one of
/// `says`.
async fn refused(who: &str, says: &[&str]) {
    trust_the_test_ca();
    let server = HttpFixture::start(&["--era", "modern"]);
    let front = TlsFront::start(who, &server.1).await;
    let err = client(&front.url, ConnectMode::Modern).connect().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io, "{err:?}");
    for part in says {
        assert!(
            err.message().contains(part),
            "{part:?} missing from {:?}",
            err.message()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_for_another_name_is_refused_naming_both() {
    refused(
        "wrong-name",
        &[
            "TLS handshake with 127.0.0.1 failed",
            "certificate not valid for name \"127.0.0.1\"",
            "elsewhere.test",
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_certificate_is_refused_saying_so() {
    refused(
        "expired",
        &[
            "TLS handshake with 127.0.0.1 failed",
            "certificate expired",
            "not valid after 1609459200",
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_http_server_at_an_https_url_is_named_as_such() {
    trust_the_test_ca();
    let server = HttpFixture::start(&["--era", "modern"]);
    let url = server.1.replacen("http://", "https://", 1);
    let err = client(&url, ConnectMode::Modern).connect().await.unwrap_err();
    assert!(err.message().contains("TLS handshake with 127.0.0.1 failed"), "{err:?}");
    assert!(err.message().contains("does not speak TLS"), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_the_system_resolves_goes_direct_too() {
    trust_the_test_ca();
    let server = HttpFixture::start(&["--era", "modern"]);
    let front = TlsFront::start("trusted", &server.1).await;
    // `localhost` by the system's resolver: ::1 (if listed) refuses, 127.0.0.1 accepts.
    let client = client(&front.url.replacen("127.0.0.1", "localhost", 1), ConnectMode::Modern);
    client.connect().await.expect("connects by name");
    echoes(&client, "by name").await;
    all_direct(&front);
    client.close().await;
}
