//! The MCP endpoint through a proxy named in the configuration (`net::proxy`): `https://` by a
//! CONNECT tunnel, with and without proxy authentication, still on the direct connections (the
//! TLS front sees the direct path's ALPN offer); plain `http://` forwarded in absolute form with
//! the proxy's credentials; the token rules judged on the endpoint, not on the proxy. Its own
//! test binary, because it sets the process's `SSL_CERT_FILE` (once, the same for every test).

mod common;
#[path = "http_support/mod.rs"]
mod http_support;
mod tls_support;

use common::{none, text, HttpFixture};
use http_support::{discover_result, result, text_result, Reply, Server};
use mcp_client::{Client, ClientConfig, ConnectMode, ErrorKind, HttpConfig, TransportConfig};
use serde_json::json;
use tls_support::{vector, ConnectProxy, TlsFront};

fn trust_the_test_ca() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::env::remove_var("SSL_CERT_DIR");
        std::env::set_var("SSL_CERT_FILE", vector("trusted-ca.pem"));
    });
}

fn client(http: HttpConfig) -> Client {
    let mut config = ClientConfig::new(TransportConfig::Http(http));
    config.mode = ConnectMode::Modern;
    Client::new(config)
}

/// `https://localhost:<port>/mcp` in front of a modern fixture: a name the proxy resolves.
async fn tls_endpoint(server: &HttpFixture) -> (TlsFront, String) {
    let front = TlsFront::start("trusted", &server.1).await;
    let url = front.url.replacen("127.0.0.1", "localhost", 1);
    (front, url)
}

async fn echoes(client: &Client, word: &str) {
    let result = client
        .call_tool("echo", Some(json!({"text": word})), &none())
        .await
        .unwrap();
    assert_eq!(text(&result), word);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_goes_through_the_configured_proxys_tunnel_on_the_direct_path() {
    trust_the_test_ca();
    let server = HttpFixture::start(&["--era", "modern"]);
    let (front, url) = tls_endpoint(&server).await;
    let proxy = ConnectProxy::start(None).await;
    let mut http = HttpConfig::new(url.clone());
    http.proxy = Some(proxy.url.clone());
    let client = client(http);
    client.connect().await.expect("connects through the proxy");
    echoes(&client, "tunnelled").await;
    echoes(&client, "again").await;
    let port = url.split(':').nth(2).unwrap().split('/').next().unwrap();
    let tunnels = proxy.tunnels();
    assert_eq!(
        tunnels,
        vec![(format!("localhost:{port}"), None)],
        "one kept-alive tunnel"
    );
    for h in front.handshakes() {
        assert_eq!(h.alpn, ["h2", "http/1.1"], "the direct path's TLS: {h:?}");
    }
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_that_wants_credentials_gets_them_from_its_url() {
    trust_the_test_ca();
    let server = HttpFixture::start(&["--era", "modern"]);
    let (_front, url) = tls_endpoint(&server).await;
    let proxy = ConnectProxy::start(Some("user:s3cret")).await;

    let mut http = HttpConfig::new(url.clone());
    http.proxy = Some(proxy.url_with("user:s3cret"));
    let client = client(http);
    client.connect().await.expect("the proxy accepts its credentials");
    echoes(&client, "authorized").await;
    assert_eq!(proxy.tunnels()[0].1.as_deref(), Some("Basic dXNlcjpzM2NyZXQ="));
    client.close().await;

    for (proxy_url, says) in [
        (proxy.url.clone(), "wants credentials"),
        (proxy.url_with("user:wrong"), "refused its credentials"),
    ] {
        let mut http = HttpConfig::new(url.clone());
        http.proxy = Some(proxy_url);
        let err = client_err(http).await;
        assert_eq!(err.kind(), ErrorKind::Io, "{err:?}");
        let message = err.message();
        assert!(message.contains("refused the tunnel to localhost:"), "{message}");
        assert!(message.contains("407 Proxy Authentication Required"), "{message}");
        assert!(message.contains(says), "{message}");
        assert!(
            !message.contains("wrong") && !message.contains("s3cret"),
            "credentials shown: {message}"
        );
    }
}

async fn client_err(http: HttpConfig) -> mcp_client::Error {
    client(http).connect().await.unwrap_err()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_is_forwarded_to_the_proxy_with_its_credentials() {
    // The "proxy" answers as the MCP server itself: what matters is what it is asked.
    let proxy = Server::start(|req| async move {
        let id = req.id();
        match req.rpc_method().as_deref() {
            Some("server/discover") => Reply::json(result(&id, discover_result())),
            Some("tools/call") => Reply::json(result(&id, text_result("via proxy"))),
            _ => Reply::status(202),
        }
    })
    .await;
    let mut http = HttpConfig::new("http://mcp.test:9/mcp?k=1");
    http.proxy = Some(proxy.url("").replacen("http://", "http://u:p@", 1));
    let client = client(http);
    client.connect().await.unwrap();
    let r = client
        .call_tool("echo", Some(json!({"text": "hi"})), &none())
        .await
        .unwrap();
    assert_eq!(text(&r), "via proxy");
    let posts = proxy.posts();
    assert_eq!(posts.len(), 2, "{:?}", proxy.summary());
    for post in &posts {
        assert_eq!(post.path, "http://mcp.test:9/mcp?k=1", "absolute form, as to a proxy");
        assert_eq!(post.header("proxy-authorization"), Some("Basic dTpw"));
        assert_eq!(post.header("host"), Some("mcp.test:9"));
    }
    assert!(
        posts.iter().all(|p| p.conn == posts[0].conn),
        "one kept-alive connection"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_rules_look_at_the_endpoint_not_at_a_loopback_proxy() {
    let proxy = ConnectProxy::start(None).await;
    let config = json!({"url": "http://mcp.test:9/mcp", "bearer_token": "tok", "proxy": proxy.url});
    let err = ClientConfig::from_json(&config).unwrap_err();
    assert!(
        err.message().contains("goes over plain http only to a loopback host"),
        "{err:?}"
    );
    // The configuration's proxy key itself: a URL of a proxy scheme, or "" for none.
    let bad = json!({"url": "https://mcp.test/mcp", "proxy": "socks9://p.test"});
    let err = ClientConfig::from_json(&bad).unwrap_err();
    assert!(err.message().contains("proxy is an http:// or https:// URL"), "{err:?}");
    let none = json!({"url": "https://mcp.test/mcp", "proxy": ""});
    ClientConfig::from_json(&none).expect("an empty proxy is none");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_proxy_setting_means_none() {
    trust_the_test_ca();
    let server = HttpFixture::start(&["--era", "modern"]);
    let (front, url) = tls_endpoint(&server).await;
    let mut http = HttpConfig::new(url);
    http.proxy = Some(String::new());
    let client = client(http);
    client.connect().await.unwrap();
    echoes(&client, "straight").await;
    assert!(!front.handshakes().is_empty());
    client.close().await;
}
