//! `HTTPS_PROXY` and `NO_PROXY` from the environment decide the route of an `https://` MCP
//! endpoint on the direct connections (`net::proxy`), and a proxy in the configuration
//! overrides them. Its own test binary, because it sets the process's proxy variables and
//! `SSL_CERT_FILE` (one test: nothing else reads them meanwhile).

mod common;
mod tls_support;

use common::{none, text, HttpFixture};
use mcp_client::{Client, ClientConfig, ConnectMode, HttpConfig, TransportConfig};
use serde_json::json;
use tls_support::{vector, ConnectProxy, TlsFront};

async fn call(http: HttpConfig) {
    let mut config = ClientConfig::new(TransportConfig::Http(http));
    config.mode = ConnectMode::Modern;
    let client = Client::new(config);
    client.connect().await.expect("connects");
    let result = client
        .call_tool("echo", Some(json!({"text": "hi"})), &none())
        .await
        .unwrap();
    assert_eq!(text(&result), "hi");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_proxy_and_no_proxy_from_the_environment() {
    std::env::remove_var("SSL_CERT_DIR");
    std::env::set_var("SSL_CERT_FILE", vector("trusted-ca.pem"));
    for name in [
        "http_proxy",
        "HTTP_PROXY",
        "all_proxy",
        "ALL_PROXY",
        "no_proxy",
        "NO_PROXY",
        "https_proxy",
    ] {
        std::env::remove_var(name);
    }
    let server = HttpFixture::start(&["--era", "modern"]);
    let front = TlsFront::start("trusted", &server.1).await;
    let url = front.url.replacen("127.0.0.1", "localhost", 1);
    let proxy = ConnectProxy::start(Some("me:pw")).await;
    std::env::set_var("HTTPS_PROXY", proxy.url_with("me:pw"));

    call(HttpConfig::new(url.clone())).await;
    assert_eq!(proxy.tunnels().len(), 1, "HTTPS_PROXY carries the endpoint");
    assert!(
        front.handshakes().iter().all(|h| h.alpn == ["h2", "http/1.1"]),
        "on the direct path"
    );

    // NO_PROXY names the endpoint's host (as a domain, so its subdomains too).
    std::env::set_var("NO_PROXY", "example.com, localhost");
    call(HttpConfig::new(url.clone())).await;
    assert_eq!(proxy.tunnels().len(), 1, "NO_PROXY bypasses the proxy");

    // The configuration's proxy wins over the environment, NO_PROXY included.
    let other = ConnectProxy::start(None).await;
    let mut http = HttpConfig::new(url.clone());
    http.proxy = Some(other.url.clone());
    call(http).await;
    assert_eq!((proxy.tunnels().len(), other.tunnels().len()), (1, 1));

    // And `""` in the configuration means no proxy at all.
    std::env::remove_var("NO_PROXY");
    let mut http = HttpConfig::new(url);
    http.proxy = Some(String::new());
    call(http).await;
    assert_eq!((proxy.tunnels().len(), other.tunnels().len()), (1, 1));
}
