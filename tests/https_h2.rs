//! HTTP/2 on the direct connections (`net::direct`), chosen by the server through ALPN: calls in
//! flight together share one connection, a GOAWAY lets the calls in flight finish and moves the
//! next ones to a new connection, and a connection lost mid-call fails that call as any lost
//! connection does. The server is an HTTP/2 front over TLS (`tls_support::H2Front`, which counts
//! connections) before the fixture. Its own test binary, because it sets the process's
//! `SSL_CERT_FILE` (once, the same for every test here).

mod common;
mod tls_support;

use common::{none, text, HttpFixture};
use mcp_client::{Client, ClientConfig, ConnectMode, ErrorKind, HttpConfig, TransportConfig};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tls_support::{vector, H2Front};

fn trust_the_test_ca() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::env::remove_var("SSL_CERT_DIR");
        std::env::set_var("SSL_CERT_FILE", vector("trusted-ca.pem"));
    });
}

async fn connected(args: &[&str], mode: ConnectMode) -> (HttpFixture, H2Front, Arc<Client>) {
    trust_the_test_ca();
    let server = HttpFixture::start(args);
    let front = H2Front::start(&server.1).await;
    let mut config = ClientConfig::new(TransportConfig::Http(HttpConfig::new(front.url.clone())));
    config.mode = mode;
    let client = Arc::new(Client::new(config));
    client.connect().await.expect("connects over HTTP/2");
    (server, front, client)
}

async fn echo(client: &Client, word: &str) -> Result<String, mcp_client::Error> {
    let result = client.call_tool("echo", Some(json!({"text": word})), &none()).await?;
    Ok(text(&result).to_string())
}

/// 64 calls at once on one connection, for `args`'s era and response kind.
async fn sixty_four_at_once(args: &[&str], mode: ConnectMode) {
    let (_server, front, client) = connected(args, mode).await;
    let before = front.streams();
    let calls: Vec<_> = (0..64)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move { (i, echo(&client, &format!("call {i}")).await) })
        })
        .collect();
    for call in calls {
        let (i, answer) = call.await.unwrap();
        assert_eq!(answer.unwrap(), format!("call {i}"));
    }
    assert!(front.streams() >= before + 64, "{} streams", front.streams());
    assert_eq!(front.connections(), 1, "every call on the one HTTP/2 connection");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_share_one_connection_modern_json() {
    sixty_four_at_once(&["--era", "modern"], ConnectMode::Modern).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_share_one_connection_legacy_sse() {
    sixty_four_at_once(&["--era", "legacy", "--sse-responses"], ConnectMode::Legacy).await;
}

#[tokio::test(flavor = "current_thread")]
async fn concurrent_calls_share_one_connection_on_one_thread() {
    sixty_four_at_once(&["--era", "modern", "--sse-responses"], ConnectMode::Modern).await;
}

/// Starts the fixture's `slow` tool (`ms`), returning once the front has its stream.
async fn slow_call(
    client: &Arc<Client>,
    front: &H2Front,
    ms: u64,
) -> tokio::task::JoinHandle<Result<String, mcp_client::Error>> {
    let before = front.streams();
    let c = client.clone();
    let call = tokio::spawn(async move {
        let result = c.call_tool("slow", Some(json!({"ms": ms})), &none()).await?;
        Ok(text(&result).to_string())
    });
    while front.streams() == before {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    call
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goaway_mid_call_finishes_the_call_and_moves_the_next_to_a_new_connection() {
    let (_server, front, client) = connected(&["--era", "modern"], ConnectMode::Modern).await;
    let call = slow_call(&client, &front, 300).await;
    front.goaway();
    assert_eq!(
        call.await.unwrap().unwrap(),
        "slept 300",
        "the stream in flight finishes"
    );
    assert_eq!(echo(&client, "after").await.unwrap(), "after");
    assert_eq!(front.connections(), 2, "the next call on a new connection");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_lost_mid_call_fails_that_call_and_the_next_reconnects() {
    let (_server, front, client) = connected(&["--era", "modern"], ConnectMode::Modern).await;
    let call = slow_call(&client, &front, 2000).await;
    front.kill();
    let err = call.await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io, "{err:?}");
    assert_eq!(echo(&client, "after").await.unwrap(), "after");
    assert_eq!(front.connections(), 2);
    client.close().await;
}

/// The C ABI's blocking calls from many host threads at once, and a lone caller's sequential
/// calls (which may wait beside the driver thread), on one HTTP/2 connection.
#[test]
fn c_abi_calls_from_many_threads_share_one_connection() {
    use ::mcp_client::ffi::client::*;
    use ::mcp_client::ffi::config::*;
    use ::mcp_client::ffi::error::*;
    use ::mcp_client::ffi::status::*;
    use ::mcp_client::ffi::strings::mcp_string_free;
    use std::ffi::{CStr, CString};
    use std::ptr;

    /// The client handle, shared by the host threads (the C ABI allows calls from any thread).
    struct Shared(*mut mcp_client);
    unsafe impl Send for Shared {}
    unsafe impl Sync for Shared {}

    unsafe fn echo(client: *mut mcp_client, word: &str) -> String {
        let (mut out, mut err) = (ptr::null_mut(), ptr::null_mut());
        let (name, args) = (
            CString::new("echo").unwrap(),
            CString::new(json!({"text": word}).to_string()).unwrap(),
        );
        let st = mcp_client_call_tool(
            client,
            name.as_ptr(),
            args.as_ptr(),
            ptr::null(),
            ptr::null(),
            ptr::null(),
            &mut out,
            &mut err,
        );
        assert_eq!(
            st,
            MCP_OK,
            "{}",
            CStr::from_ptr(mcp_error_message(err)).to_string_lossy()
        );
        let result: serde_json::Value = serde_json::from_str(&CStr::from_ptr(out).to_string_lossy()).unwrap();
        mcp_string_free(out);
        result["content"][0]["text"].as_str().unwrap().to_string()
    }

    trust_the_test_ca();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = HttpFixture::start(&["--era", "modern"]);
    let front = rt.block_on(H2Front::start(&server.1));
    let config = CString::new(json!({"url": front.url, "mode": "modern"}).to_string()).unwrap();
    unsafe {
        let (mut cfg, mut client) = (ptr::null_mut(), ptr::null_mut());
        assert_eq!(mcp_config_new(config.as_ptr(), &mut cfg, ptr::null_mut()), MCP_OK);
        assert_eq!(mcp_client_new(cfg, &mut client, ptr::null_mut()), MCP_OK);
        mcp_config_free(cfg);
        assert_eq!(
            mcp_client_connect(client, ptr::null(), ptr::null_mut(), ptr::null_mut()),
            MCP_OK
        );
        for i in 0..20 {
            assert_eq!(echo(client, &format!("lone {i}")), format!("lone {i}"));
        }
        let shared = Shared(client);
        std::thread::scope(|s| {
            for t in 0..16 {
                let shared = &shared;
                s.spawn(move || {
                    for i in 0..4 {
                        let word = format!("thread {t} call {i}");
                        assert_eq!(echo(shared.0, &word), word);
                    }
                });
            }
        });
        mcp_client_free(client);
    }
    assert_eq!(front.connections(), 1, "every call on the one HTTP/2 connection");
    assert!(front.streams() >= 20 + 64);
}

/// A span names the HTTP version its connection spoke: `network.protocol.version` is `2` here,
/// as is the session record's when the client closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_and_session_records_name_http_2() {
    use mcp_client::observe::{AttrValue, Observer, SessionRecord, Span};
    #[derive(Default)]
    struct Versions(std::sync::Mutex<Vec<Option<String>>>);
    impl Observer for Versions {
        fn span_ended(&self, span: &Span) {
            let v = span.attribute("network.protocol.version").and_then(AttrValue::as_str);
            self.0.lock().unwrap().push(v.map(str::to_string));
        }
        fn session_ended(&self, session: &SessionRecord) {
            let v = session
                .attribute("network.protocol.version")
                .and_then(AttrValue::as_str);
            self.0.lock().unwrap().push(v.map(str::to_string));
        }
    }
    let (_server, _front, client) = connected(&[], ConnectMode::Modern).await;
    let seen = Arc::new(Versions::default());
    client.set_observer(Some(seen.clone()));
    assert_eq!(echo(&client, "v").await.unwrap(), "v");
    client.close().await;
    let versions = seen.0.lock().unwrap().clone();
    assert_eq!(versions, vec![Some("2".to_string()), Some("2".to_string())]);
}
