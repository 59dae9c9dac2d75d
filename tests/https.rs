//! Streamable HTTP over TLS, through the platform verifier (`net::tls`): the OS trust store is
//! what `SSL_CERT_FILE` names here (the Linux store loader reads it instead of the system's), a
//! TLS proxy in front of the fixture presents a certificate signed by the trusted test CA or by
//! another one (`tests/vectors/tls`). Its own test binary, because it sets the process's
//! `SSL_CERT_FILE`.

mod common;
mod tls_support;

use common::{none, text, HttpFixture};
use mcp_client::{Client, ClientConfig, ConnectMode, ErrorKind, HttpConfig, TransportConfig};
use serde_json::json;
use tls_support::{vector, TlsFront};

fn client(url: &str) -> Client {
    let mut config = ClientConfig::new(TransportConfig::Http(HttpConfig::new(url.to_string())));
    config.mode = ConnectMode::Modern;
    Client::new(config)
}

/// Connects `client` (failing the test with `what`) and has the fixture echo `word` back.
async fn connects_and_echoes(client: &Client, word: &str, what: &str) {
    client.connect().await.expect(what);
    let result = client
        .call_tool("echo", Some(json!({"text": word})), &none())
        .await
        .unwrap();
    assert_eq!(text(&result), word);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_is_checked_against_the_trust_store_and_plain_http_needs_none() {
    let server = HttpFixture::start(&["--era", "modern"]);
    std::env::remove_var("SSL_CERT_DIR");

    // No trust store at all: plain http still works (the store is not even read), and an
    // https client says it cannot check certificates.
    std::env::set_var("SSL_CERT_FILE", vector("absent.pem"));
    let plain = client(&server.1);
    connects_and_echoes(&plain, "plain", "plain http needs no trust store").await;
    let trusted_url = TlsFront::start("trusted", &server.1).await.url;
    let err = client(&trusted_url).connect().await.unwrap_err();
    assert!(
        err.message().contains("cannot set up TLS certificate verification"),
        "{err:?}"
    );
    plain.close().await;

    // The test CA as the store: its server is accepted, another CA's refused.
    std::env::set_var("SSL_CERT_FILE", vector("trusted-ca.pem"));
    let secure = client(&trusted_url);
    connects_and_echoes(&secure, "tls", "a server signed by a trusted CA").await;
    // A second client while the first is alive (they share one verifier).
    let second = client(&trusted_url);
    second.connect().await.expect("a second client of the same server");

    let rogue_url = TlsFront::start("rogue", &server.1).await.url;
    let err = client(&rogue_url).connect().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io, "{err:?}");
    assert!(err.message().to_lowercase().contains("certificate"), "{err:?}");
    secure.close().await;
    second.close().await;
}
