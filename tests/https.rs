//! Streamable HTTP over TLS, through the platform verifier (`net::tls`): the OS trust store is
//! what `SSL_CERT_FILE` names here (the Linux store loader reads it instead of the system's), a
//! TLS proxy in front of the fixture presents a certificate signed by the trusted test CA or by
//! another one (`tests/vectors/tls`). Its own test binary, because it sets the process's
//! `SSL_CERT_FILE`.

mod common;

use common::{none, text, HttpFixture};
use mcp_client::{Client, ClientConfig, ConnectMode, ErrorKind, HttpConfig, TransportConfig};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

fn vector(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors/tls")
        .join(name)
}

/// A TLS endpoint on 127.0.0.1 presenting `who`'s certificate, forwarding every connection to
/// the plain-HTTP `backend` (host:port). Its URL, same path as the backend's.
async fn tls_proxy(who: &str, backend_url: &str) -> String {
    let cert = CertificateDer::from_pem_file(vector(&format!("{who}-server.pem"))).unwrap();
    let key = PrivateKeyDer::from_pem_file(vector(&format!("{who}-server-key.pem"))).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let rest = backend_url.strip_prefix("http://").unwrap();
    let (backend, path) = rest.split_once('/').unwrap();
    let backend = backend.to_string();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, backend) = (acceptor.clone(), backend.clone());
            tokio::spawn(async move {
                // A refused handshake ends here: the client hangs up.
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Ok(mut plain) = TcpStream::connect(&backend).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    format!("https://127.0.0.1:{port}/{path}")
}

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
    let trusted_url = tls_proxy("trusted", &server.1).await;
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

    let rogue_url = tls_proxy("rogue", &server.1).await;
    let err = client(&rogue_url).connect().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io, "{err:?}");
    assert!(err.message().to_lowercase().contains("certificate"), "{err:?}");
    secure.close().await;
    second.close().await;
}
