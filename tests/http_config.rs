//! `ClientConfig::from_json` for HTTP: `url`, `headers`, `bearer_token`, `max_message_bytes`,
//! and exactly one of `command` or `url`.

mod http_support;

use http_support::*;
use mcp_client::{ClientConfig, ConnectMode, ErrorKind, RequestOptions, TransportConfig};
use serde_json::json;

#[test]
fn an_http_configuration_from_json() {
    let cfg = ClientConfig::from_json(&json!({
        "url": "https://mcp.example.com/mcp",
        "headers": {"X-Tenant": "acme", "X-Empty": ""},
        "bearer_token": "tok",
        "max_message_bytes": 65536,
        "mode": "legacy",
    }))
    .unwrap();
    let TransportConfig::Http(http) = &cfg.transport else {
        panic!("not HTTP: {:?}", cfg.transport)
    };
    assert_eq!(http.url, "https://mcp.example.com/mcp");
    let mut headers = http.headers.clone();
    headers.sort();
    assert_eq!(
        headers,
        [
            ("X-Empty".to_string(), String::new()),
            ("X-Tenant".into(), "acme".into())
        ]
    );
    assert_eq!(http.bearer_token.as_deref(), Some("tok"));
    assert_eq!(http.max_message_bytes, 65536);
    assert_eq!(cfg.transport.max_message_bytes(), 65536);
    assert_eq!(cfg.mode, ConnectMode::Legacy);
    // The token never shows in debug output.
    assert!(!format!("{cfg:?}").contains("tok\""), "{cfg:?}");
}

#[test]
fn bad_http_configurations_are_rejected() {
    let bad = [
        json!({"url": "https://a/mcp", "command": "server"}),
        json!({}),
        json!({"url": "ftp://a/mcp"}),
        json!({"url": "not a url"}),
        json!({"url": "https://user:pw@a/mcp"}),
        json!({"url": "https://a/mcp", "args": ["x"]}),
        json!({"url": "https://a/mcp", "env": {"A": "b"}}),
        json!({"url": "https://a/mcp", "headers": ["X-A"]}),
        json!({"url": "https://a/mcp", "headers": {"X-A": 1}}),
        json!({"url": "https://a/mcp", "headers": {"Bad Name": "v"}}),
        json!({"url": "https://a/mcp", "headers": {"X-A": "line\nbreak"}}),
        json!({"url": "https://a/mcp", "bearer_token": 5}),
        json!({"url": "https://a/mcp", "bearer_token": "a\nb"}),
        json!({"command": "server", "bearer_token": "t"}),
        json!({"command": "server", "headers": {"X-A": "b"}}),
    ];
    for config in bad {
        let err = ClientConfig::from_json(&config).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{config}: {err}");
    }
    // Null stands for absent, as the C builder may leave it.
    ClientConfig::from_json(&json!({"url": "http://a/mcp", "args": null, "headers": null})).unwrap();
    let stdio = ClientConfig::from_json(&json!({"command": "server", "max_message_bytes": 2048})).unwrap();
    assert!(matches!(stdio.transport, TransportConfig::Stdio(ref s) if s.max_message_bytes == 2048));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_configured_client_talks_http() {
    let server = Server::start(|req| async move {
        let id = req.id();
        match req.rpc_method().as_deref() {
            Some("server/discover") => Reply::json(result(&id, discover_result())),
            _ => Reply::json(result(&id, text_result("configured"))),
        }
    })
    .await;
    let cfg = ClientConfig::from_json(&json!({
        "url": server.url("/mcp"),
        "headers": {"X-Tenant": "acme"},
        "bearer_token": "tok",
        "request_timeout_ms": 5000,
    }))
    .unwrap();
    let client = mcp_client::Client::new(cfg);
    let r = client
        .call_tool("echo", None, &RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(r["content"][0]["text"], "configured");
    for r in server.requests() {
        assert_eq!(r.header("authorization"), Some("Bearer tok"));
        assert_eq!(r.header("x-tenant"), Some("acme"));
    }
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_url_fails_promptly_with_an_io_error() {
    // Bind and drop a listener to get a port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let client = client_for(http_config(&format!("http://127.0.0.1:{port}/mcp")), ConnectMode::Auto);
    let started = std::time::Instant::now();
    let err = client.connect().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io, "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_urls_speak_tls() {
    // A listener that records the first bytes and hangs up: an https URL must open with a TLS
    // ClientHello (record type 22, version 3.x), proving the rustls/ring stack is wired in.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let first = tokio::spawn(async move {
        use tokio::io::AsyncReadExt;
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut head = [0u8; 3];
        socket.read_exact(&mut head).await.unwrap();
        head
    });
    let client = client_for(
        http_config(&format!("https://127.0.0.1:{port}/mcp")),
        ConnectMode::Modern,
    );
    let err = client.connect().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io, "{err}");
    let head = within(std::time::Duration::from_secs(5), first).await.unwrap();
    assert_eq!(head[0], 0x16, "a TLS handshake record");
    assert_eq!(head[1], 0x03);
}
