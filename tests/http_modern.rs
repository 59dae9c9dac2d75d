//! The modern (2026-07-28) Streamable HTTP transport against an in-test server: JSON and SSE
//! replies, the standard and `Mcp-Param-*` headers, invalid-tool filtering, cancellation by
//! closing the stream, the -32022 and -32020 retries, configured headers, HTTP errors, the
//! message bound, keep-alive speed and `subscriptions/listen`.

#[macro_use]
mod http_support;

use http_support::*;
use mcp_client::{CancelToken, ConnectMode, Era, ErrorKind, ListKind, RequestOptions, SubscriptionEvent};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

on_both_runtimes! {
    json_and_sse_replies_deliver_notifications_before_the_result
    cancelling_a_call_closes_its_response_stream
    a_call_whose_future_is_dropped_closes_its_stream
    a_header_mismatch_reloads_the_tools_and_retries_once
    http_errors_become_rpc_errors_or_io_errors
    oversized_messages_fail_only_their_request
    fifty_sequential_calls_reuse_the_connection_without_stalls
    concurrent_calls_get_a_connection_each_and_later_calls_reuse_them
    a_connection_the_server_hung_up_is_replaced
    large_sse_answers_in_many_small_chunks_arrive_whole
}

fn none() -> RequestOptions {
    RequestOptions::default()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// discover, the list calls and notifications; `None` for anything else.
fn basics(req: &Request, tools: &Value) -> Option<Reply> {
    let id = req.id();
    match req.rpc_method().as_deref() {
        Some("server/discover") => Some(Reply::json(result(&id, discover_result()))),
        Some("tools/list") => Some(Reply::json(result(
            &id,
            json!({"resultType": "complete", "tools": tools, "ttlMs": 0, "cacheScope": "public"}),
        ))),
        _ if req.is_notification() => Some(Reply::status(202)),
        _ => None,
    }
}

fn echo_tool() -> Value {
    json!([{"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}])
}

async fn json_and_sse_replies_deliver_notifications_before_the_result() {
    let server = Server::start(|req| async move {
        let tools = echo_tool();
        if let Some(reply) = basics(&req, &tools) {
            return reply;
        }
        let id = req.id();
        let body = req.json();
        let said = body["params"]["arguments"]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if said == "json" {
            return Reply::json(result(&id, text_result("plain json")));
        }
        let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
                          "params": {"level": "info", "data": "working"}});
        Reply::sse([
            ": a comment line\n\n".to_string(),
            ":keep-alive\n".to_string(),
            event(&log),
            format!("data: {}\r\n\r\n", result(&id, text_result("from sse"))),
        ])
    })
    .await;
    let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Auto);
    let notes = Notes::attach(&client);
    let info = client.connect().await.unwrap();
    assert_eq!(info.era, Era::Modern);
    assert_eq!(info.server_info.unwrap()["name"], "http-test");

    let r = client
        .call_tool("echo", Some(json!({"text": "sse"})), &none())
        .await
        .unwrap();
    assert_eq!(text(&r), "from sse");
    // The notification went to the session before the answer did.
    assert_eq!(notes.methods(), ["notifications/message"]);
    let r = client
        .call_tool("echo", Some(json!({"text": "json"})), &none())
        .await
        .unwrap();
    assert_eq!(text(&r), "plain json");
    assert_eq!(server.rpc_methods(), ["server/discover", "tools/call", "tools/call"]);
    client.close().await;
    // Modern servers have no session: nothing is deleted.
    assert!(server.of_method("DELETE").is_empty());
}

/// An SSE answer of `len` characters that JSON escapes in places, different for each `len`.
fn large_text(len: usize) -> String {
    (0..len)
        .map(|k| match (k * 7 + len) % 97 {
            0 => '"',
            1 => '\\',
            2 => '\n',
            3 => 'é',
            n => char::from(b'!' + (n % 90) as u8),
        })
        .collect()
}

/// Answers far larger than one read, sent as SSE in many small chunks cut anywhere (in the
/// field name, between CR and LF, inside a character, a byte and thousands of bytes), after a notification and
/// before one more event, arrive character for character, one call after another on the same
/// connection; and the connection was reused after each.
async fn large_sse_answers_in_many_small_chunks_arrive_whole() {
    let server = Server::start(|req| async move {
        if let Some(reply) = basics(&req, &echo_tool()) {
            return reply;
        }
        let id = req.id();
        let len = req.json()["params"]["arguments"]["len"].as_u64().unwrap_or(0) as usize;
        let log = |data: &str| {
            event(&json!({"jsonrpc": "2.0", "method": "notifications/message",
                          "params": {"level": "info", "data": data}}))
        };
        let stream = format!(
            "{}data: {}\r\n\r\n{}",
            log("before"),
            result(&id, text_result(&large_text(len))),
            log("after")
        )
        .into_bytes();
        let (reply, tx) = Reply::sse_stream();
        let (mut at, mut k) = (0, 0);
        while at < stream.len() {
            let size = [1, 2, 7, 100, 1500, 17_000, 3, 40_000][k % 8].min(stream.len() - at);
            tx.send(stream[at..at + size].to_vec()).unwrap();
            at += size;
            k += 1;
        }
        reply
    })
    .await;
    let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Modern);
    let notes = Notes::attach(&client);
    client.connect().await.unwrap();
    for (n, len) in [300_000, 1_000_000, 50_000].into_iter().enumerate() {
        let r = client
            .call_tool("echo", Some(json!({ "len": len })), &none())
            .await
            .unwrap();
        assert!(
            text(&r) == large_text(len),
            "{len}: {} characters came back",
            text(&r).chars().count()
        );
        assert_eq!(notes.methods()[0], "notifications/message");
        // The answer is delivered before the rest of its stream is read: the next call waits for
        // that rest (the "after" event, then the body's end), so on a loaded machine it does not
        // find the connection still busy and open a second one.
        within(Duration::from_secs(10), async {
            while notes
                .0
                .lock()
                .unwrap()
                .iter()
                .filter(|(_, p)| p["data"] == "after")
                .count()
                <= n
            {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.connections(), 1, "every call went on the one connection");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standard_headers_mirror_the_body() {
    let server = Server::start(|req| async move {
        let tools = json!([{"name": "test_headers", "inputSchema": {"type": "object"}},
                           {"name": "my-hyphenated-tool", "inputSchema": {"type": "object"}}]);
        if let Some(reply) = basics(&req, &tools) {
            // Modern clients must ignore a session id.
            return reply.with_header("Mcp-Session-Id", "ignored-session");
        }
        let id = req.id();
        let r = match req.rpc_method().as_deref() {
            Some("resources/read") => {
                json!({"resultType": "complete", "contents": [], "ttlMs": 0, "cacheScope": "public"})
            }
            Some("prompts/get") => json!({"resultType": "complete", "messages": []}),
            _ => text_result("ok"),
        };
        Reply::json(result(&id, r))
    })
    .await;
    let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Modern);
    client.list_all(ListKind::Tools, &none()).await.unwrap();
    client.call_tool("test_headers", None, &none()).await.unwrap();
    client
        .call_tool("my-hyphenated-tool", Some(json!({})), &none())
        .await
        .unwrap();
    client.call_tool("Région", None, &none()).await.unwrap();
    client
        .read_resource("file:///path/to/file%20name.txt", &none())
        .await
        .unwrap();
    client
        .read_resource("https://example.com/resource?id=123", &none())
        .await
        .unwrap();
    client.read_resource("file:///raw space ", &none()).await.unwrap();
    client.get_prompt("test_prompt", None, &none()).await.unwrap();
    // With `_meta` entries of its own, a request is built as a value: the same headers.
    let with_meta = RequestOptions {
        meta: Some(json!({"example.com/trace": "t-1"}).as_object().unwrap().clone()),
        ..none()
    };
    client
        .call_tool("my-hyphenated-tool", Some(json!({})), &with_meta)
        .await
        .unwrap();

    let posts = server.posts();
    assert_eq!(posts.len(), 10);
    assert_eq!(posts[9].json()["params"]["_meta"]["example.com/trace"], "t-1");
    for p in &posts {
        let method = p.rpc_method().unwrap();
        assert_eq!(p.header("mcp-method"), Some(method.as_str()), "{method}");
        assert_eq!(p.header("mcp-protocol-version"), Some(MODERN), "{method}");
        assert_eq!(p.meta_version().as_deref(), Some(MODERN), "{method}");
        assert_eq!(p.header("content-type"), Some("application/json"));
        let accept = p.header("accept").unwrap();
        assert!(
            accept.contains("application/json") && accept.contains("text/event-stream"),
            "{accept}"
        );
        assert_eq!(p.header("mcp-session-id"), None, "a modern client sends no session id");
    }
    let names: Vec<Option<&str>> = posts.iter().map(|p| p.header("mcp-name")).collect();
    assert_eq!(
        names,
        [
            None,
            None,
            Some("test_headers"),
            Some("my-hyphenated-tool"),
            Some("=?base64?UsOpZ2lvbg==?="),
            Some("file:///path/to/file%20name.txt"),
            Some("https://example.com/resource?id=123"),
            Some("=?base64?ZmlsZTovLy9yYXcgc3BhY2Ug?="),
            Some("test_prompt"),
            Some("my-hyphenated-tool"),
        ]
    );
}

fn custom_header_tools() -> Value {
    let props = json!({
        "region": {"type": "string", "x-mcp-header": "Region"},
        "priority": {"type": "integer", "x-mcp-header": "Priority"},
        "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
        "debug": {"type": "boolean", "x-mcp-header": "Debug"},
        "empty_val": {"type": "string", "x-mcp-header": "EmptyVal"},
        "method_val": {"type": "string", "x-mcp-header": "Method"},
        "float_val": {"type": "number"},
        "non_ascii_val": {"type": "string", "x-mcp-header": "NonAscii"},
        "whitespace_val": {"type": "string", "x-mcp-header": "Whitespace"},
        "leading_space_val": {"type": "string", "x-mcp-header": "LeadingSpace"},
        "trailing_space_val": {"type": "string", "x-mcp-header": "TrailingSpace"},
        "internal_space_val": {"type": "string", "x-mcp-header": "InternalSpace"},
        "control_char_val": {"type": "string", "x-mcp-header": "ControlChar"},
        "crlf_val": {"type": "string", "x-mcp-header": "CrLf"},
        "tab_val": {"type": "string", "x-mcp-header": "Tab"},
        "query": {"type": "string"}
    });
    let null_props = json!({
        "region": {"type": "string", "x-mcp-header": "Region"},
        "priority": {"type": "integer", "x-mcp-header": "Priority"},
        "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
        "query": {"type": "string"}
    });
    json!([
        {"name": "test_custom_headers", "inputSchema": {"type": "object", "properties": props}},
        {"name": "test_custom_headers_null", "inputSchema": {"type": "object", "properties": null_props}}
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_param_headers_follow_the_conformance_expectations() {
    let server = Server::start(|req| async move {
        if let Some(reply) = basics(&req, &custom_header_tools()) {
            return reply;
        }
        Reply::json(result(&req.id(), text_result("Custom headers test completed")))
    })
    .await;
    let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Modern);
    let tools = client.list_all(ListKind::Tools, &none()).await.unwrap();
    assert_eq!(tools["tools"].as_array().unwrap().len(), 2);
    // The arguments of the conformance scenario's MCP_CONFORMANCE_CONTEXT.
    let args = json!({
        "region": "us-west1", "priority": 42, "verbose": false, "debug": true, "empty_val": "",
        "method_val": "test-method", "float_val": 3.5, "non_ascii_val": "Hello, 世界",
        "whitespace_val": " padded ", "leading_space_val": " us-west1", "trailing_space_val": "us-west1 ",
        "internal_space_val": "us west 1", "control_char_val": "line1\nline2", "crlf_val": "line1\r\nline2",
        "tab_val": "\tindented", "query": "SELECT * FROM users"
    });
    client
        .call_tool("test_custom_headers", Some(args), &none())
        .await
        .unwrap();
    let null_args = json!({"region": "us-east1", "priority": 1, "verbose": null, "query": "SELECT 1"});
    client
        .call_tool("test_custom_headers_null", Some(null_args), &none())
        .await
        .unwrap();

    let calls = server.posts_of("tools/call");
    let got = calls[0].headers_with_prefix("mcp-param-");
    let expect: Vec<(String, String)> = [
        ("mcp-param-controlchar", "=?base64?bGluZTEKbGluZTI=?="),
        ("mcp-param-crlf", "=?base64?bGluZTENCmxpbmUy?="),
        ("mcp-param-debug", "true"),
        ("mcp-param-emptyval", ""),
        ("mcp-param-internalspace", "us west 1"),
        ("mcp-param-leadingspace", "=?base64?IHVzLXdlc3Qx?="),
        ("mcp-param-method", "test-method"),
        ("mcp-param-nonascii", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        ("mcp-param-priority", "42"),
        ("mcp-param-region", "us-west1"),
        ("mcp-param-tab", "=?base64?CWluZGVudGVk?="),
        ("mcp-param-trailingspace", "=?base64?dXMtd2VzdDEg?="),
        ("mcp-param-verbose", "false"),
        ("mcp-param-whitespace", "=?base64?IHBhZGRlZCA=?="),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(got, expect);
    assert_eq!(
        calls[0].header("mcp-method"),
        Some("tools/call"),
        "Mcp-Param-Method is not Mcp-Method"
    );
    let got_null = calls[1].headers_with_prefix("mcp-param-");
    assert_eq!(
        got_null,
        [
            ("mcp-param-priority".to_string(), "1".to_string()),
            ("mcp-param-region".into(), "us-east1".into())
        ]
    );
}

fn invalid_tools() -> Value {
    let t = |name: &str, props: Value| json!({"name": name, "inputSchema": {"type": "object", "properties": props}});
    json!([
        t(
            "valid_tool",
            json!({"region": {"type": "string", "x-mcp-header": "Region"}})
        ),
        t(
            "invalid_empty_header",
            json!({"value": {"type": "string", "x-mcp-header": ""}})
        ),
        t(
            "invalid_object_header",
            json!({"data": {"type": "object", "x-mcp-header": "Data"}})
        ),
        t(
            "invalid_array_header",
            json!({"items": {"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"}})
        ),
        t(
            "invalid_null_header",
            json!({"nil": {"type": "null", "x-mcp-header": "Nil"}})
        ),
        t(
            "invalid_duplicate_same_case",
            json!({"field1": {"type": "string", "x-mcp-header": "Region"}, "field2": {"type": "string", "x-mcp-header": "Region"}})
        ),
        t(
            "invalid_duplicate_diff_case",
            json!({"field1": {"type": "string", "x-mcp-header": "MyField"}, "field2": {"type": "string", "x-mcp-header": "myfield"}})
        ),
        t(
            "invalid_space_in_name",
            json!({"value": {"type": "string", "x-mcp-header": "My Region"}})
        ),
        t(
            "invalid_colon_in_name",
            json!({"value": {"type": "string", "x-mcp-header": "Region:Primary"}})
        ),
        t(
            "invalid_non_ascii_name",
            json!({"value": {"type": "string", "x-mcp-header": "Région"}})
        ),
        t(
            "invalid_control_char_name",
            json!({"value": {"type": "string", "x-mcp-header": "Region\t1"}})
        ),
        t(
            "invalid_number_header",
            json!({"n": {"type": "number", "x-mcp-header": "Num"}})
        ),
        t(
            "invalid_nested_in_items",
            json!({"list": {"type": "array", "items": {"type": "object", "properties": {"z": {"type": "string", "x-mcp-header": "Z"}}}}})
        ),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_with_invalid_annotations_are_left_out_with_a_warning() {
    let server = Server::start(|req| async move {
        if let Some(reply) = basics(&req, &invalid_tools()) {
            return reply;
        }
        Reply::json(result(&req.id(), text_result("Tool call received")))
    })
    .await;
    let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Modern);
    let logs = Logs::attach(&client);
    let tools = client.list_all(ListKind::Tools, &none()).await.unwrap();
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["valid_tool"]);
    let lines = logs.lines();
    assert_eq!(lines.len(), 12, "{lines:#?}");
    for tool in invalid_tools().as_array().unwrap().iter().skip(1) {
        let name = tool["name"].as_str().unwrap();
        assert!(
            lines
                .iter()
                .any(|l| l.contains("warning") && l.contains(&format!("\"{name}\""))),
            "no warning for {name}: {lines:#?}"
        );
    }
    client
        .call_tool("valid_tool", Some(json!({"region": "eu"})), &none())
        .await
        .unwrap();
    let call = &server.posts_of("tools/call")[0];
    assert_eq!(call.header("mcp-param-region"), Some("eu"));
}

type Feeders = Arc<Mutex<Vec<tokio::sync::mpsc::UnboundedSender<Vec<u8>>>>>;

/// A reply stream that never answers; its feeder is kept in `feeders`, so it stays open.
fn endless_stream(feeders: &Feeders) -> Reply {
    let (reply, tx) = Reply::sse_stream();
    tx.send(b": working\n\n".to_vec()).unwrap();
    feeders.lock().unwrap().push(tx);
    reply
}

async fn cancelling_a_call_closes_its_response_stream() {
    let feeders = Feeders::default();
    let f = feeders.clone();
    let server = Server::start(move |req| {
        let f = f.clone();
        async move {
            match basics(&req, &echo_tool()) {
                Some(reply) => reply,
                None => endless_stream(&f),
            }
        }
    })
    .await;
    let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Modern);
    client.connect().await.unwrap();
    let cancel = CancelToken::new();
    let opts = RequestOptions {
        cancel: Some(cancel.clone()),
        ..none()
    };
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("echo", Some(json!({"text": "x"})), &opts).await });
    server
        .wait_until(Duration::from_secs(5), "the call arrives", |s| {
            !s.posts_of("tools/call").is_empty()
        })
        .await;
    cancel.cancel();
    let err = within(Duration::from_secs(5), call).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Cancelled);
    server
        .wait_until(Duration::from_secs(5), "the stream is dropped", |s| {
            s.dropped().len() == 1
        })
        .await;
    // No notifications/cancelled on the modern wire: closing the stream is the cancellation.
    assert!(server.posts_of("notifications/cancelled").is_empty());
    // Timeouts cancel the same way.
    let opts = RequestOptions {
        timeout: Some(Duration::from_millis(300)),
        ..none()
    };
    let err = client.call_tool("echo", None, &opts).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
    server
        .wait_until(Duration::from_secs(5), "the second stream is dropped", |s| {
            s.dropped().len() == 2
        })
        .await;
}

/// A call whose future the host drops (no timeout of ours, no cancellation) leaves its request
/// running, as a request task always did: on a current-thread runtime the exchange its caller
/// was running goes on in a task of its own. Later calls work, and closing the client ends it.
async fn a_call_whose_future_is_dropped_closes_its_stream() {
    let feeders = Feeders::default();
    let f = feeders.clone();
    let server = Server::start(move |req| {
        let f = f.clone();
        async move {
            if let Some(reply) = basics(&req, &echo_tool()) {
                return reply;
            }
            match req.json()["params"]["arguments"]["text"] == "hold" {
                true => endless_stream(&f),
                false => Reply::json(result(&req.id(), text_result("ok"))),
            }
        }
    })
    .await;
    let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Modern);
    client.connect().await.unwrap();
    let held = tokio::time::timeout(
        Duration::from_millis(300),
        client.call_tool("echo", Some(json!({"text": "hold"})), &none()),
    )
    .await;
    assert!(held.is_err(), "the held call cannot have finished: {held:?}");
    // Dropping the future cancels the call: on this wire, its response stream is closed.
    server
        .wait_until(Duration::from_secs(2), "the held stream is dropped", |s| {
            s.dropped().len() == 1
        })
        .await;
    let r = within(Duration::from_secs(5), client.call_tool("echo", None, &none()))
        .await
        .unwrap();
    assert_eq!(text(&r), "ok");
    within(Duration::from_secs(5), client.close()).await;
    assert_eq!(server.dropped().len(), 1, "{:?}", server.summary());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_refusal_is_retried_with_header_and_meta_agreeing() {
    // Like the conformance `request-metadata` server: the first POST is refused with 400 and
    // -32022 listing the very version the client sent; so is the first tools/call.
    let refused = Arc::new(AtomicUsize::new(0));
    let r = refused.clone();
    let server = Server::start(move |req| {
        let r = r.clone();
        async move {
            let method = req.rpc_method().unwrap_or_default();
            if (r.load(Ordering::SeqCst) == 0) || (method == "tools/call" && r.load(Ordering::SeqCst) == 1) {
                r.fetch_add(1, Ordering::SeqCst);
                let requested = req.header("mcp-protocol-version").unwrap_or("").to_string();
                return Reply::json_status(
                    400,
                    json!({"jsonrpc": "2.0", "id": req.id(), "error": {"code": -32022,
                           "message": "Unsupported protocol version",
                           "data": {"supported": [MODERN], "requested": requested}}}),
                );
            }
            if let Some(reply) = basics(&req, &echo_tool()) {
                return reply;
            }
            Reply::json(result(&req.id(), text_result("ok")))
        }
    })
    .await;
    let client = client_for(http_config(&server.url("/")), ConnectMode::Auto);
    let info = client.connect().await.unwrap();
    assert_eq!(info.era, Era::Modern);
    client.list_all(ListKind::Tools, &none()).await.unwrap();
    client.call_tool("echo", None, &none()).await.unwrap();
    assert_eq!(
        server.rpc_methods(),
        [
            "server/discover",
            "server/discover",
            "tools/list",
            "tools/call",
            "tools/call"
        ]
    );
    for p in server.posts() {
        assert_eq!(p.header("mcp-protocol-version"), p.meta_version().as_deref());
        assert_eq!(p.meta_version().as_deref(), Some(MODERN));
    }
}

async fn a_header_mismatch_reloads_the_tools_and_retries_once() {
    // The tool's annotation moves from `region` to `zone` after the first listing.
    let listed = Arc::new(AtomicBool::new(false));
    let l = listed.clone();
    let server = Server::start(move |req| {
        let l = l.clone();
        async move {
            let v1 = json!([{"name": "deploy", "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"}, "zone": {"type": "string"}}}}]);
            let v2 = json!([{"name": "deploy", "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string"}, "zone": {"type": "string", "x-mcp-header": "Zone"}}}},
                {"name": "stubborn", "inputSchema": {"type": "object"}}]);
            let is_list = req.rpc_method().as_deref() == Some("tools/list");
            let tools = if is_list && !l.swap(true, Ordering::SeqCst) {
                v1
            } else {
                v2
            };
            if let Some(reply) = basics(&req, &tools) {
                return reply;
            }
            let body = req.json();
            let zone = body["params"]["arguments"]["zone"].as_str().unwrap_or_default();
            let tool = body["params"]["name"].as_str().unwrap_or_default();
            if tool == "stubborn" || req.header("mcp-param-zone") != Some(zone) {
                let msg = format!("Header mismatch: Mcp-Param-Zone header value does not match body value '{zone}'");
                return Reply::json_status(400, rpc_error(&req.id(), -32020, &msg));
            }
            Reply::json(result(&req.id(), text_result("deployed")))
        }
    })
    .await;
    let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Modern);
    let logs = Logs::attach(&client);
    client.list_all(ListKind::Tools, &none()).await.unwrap();
    let r = client
        .call_tool("deploy", Some(json!({"region": "eu", "zone": "b"})), &none())
        .await
        .unwrap();
    assert_eq!(text(&r), "deployed");
    assert_eq!(
        server.rpc_methods(),
        [
            "server/discover",
            "tools/list",
            "tools/call",
            "tools/list",
            "tools/call"
        ]
    );
    let posts = server.posts();
    assert_eq!(posts[2].header("mcp-param-region"), Some("eu"));
    assert_eq!(posts[4].header("mcp-param-zone"), Some("b"));
    assert_eq!(posts[4].header("mcp-param-region"), None);
    // The reload is the transport's own request, with the failed call's _meta.
    assert!(posts[3].id().is_string(), "{}", posts[3].id());
    assert_eq!(posts[3].meta_version().as_deref(), Some(MODERN));
    assert!(logs.lines().iter().any(|l| l.contains("-32020")), "{:?}", logs.lines());

    // Still refused after the reload: the -32020 reaches the caller, after exactly one retry.
    let err = client.call_tool("stubborn", None, &none()).await.unwrap_err();
    assert_eq!(err.rpc_error().unwrap().code, -32020);
    assert_eq!(server.posts_of("tools/call").len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_headers_and_the_bearer_token_go_on_every_request() {
    let server = Server::start(|req| async move {
        if let Some(reply) = basics(&req, &echo_tool()) {
            return reply;
        }
        Reply::json(result(&req.id(), text_result("ok")))
    })
    .await;
    let cfg = http_config(&server.url("/mcp?tenant=1"))
        .header("X-Tenant", "acme")
        .header("User-Agent", "mcp-test/1")
        .bearer_token("s3cret-token");
    let debug = format!("{cfg:?}");
    assert!(!debug.contains("s3cret") && !debug.contains("acme"), "{debug}");
    let client = client_for(cfg, ConnectMode::Auto);
    client.list_all(ListKind::Tools, &none()).await.unwrap();
    client.call_tool("echo", None, &none()).await.unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for r in requests {
        assert_eq!(r.path, "/mcp?tenant=1");
        assert_eq!(r.header("authorization"), Some("Bearer s3cret-token"));
        assert_eq!(r.header("x-tenant"), Some("acme"));
        assert_eq!(r.header("user-agent"), Some("mcp-test/1"));
        assert!(!r.path.contains("s3cret"));
    }
}

async fn http_errors_become_rpc_errors_or_io_errors() {
    let server = Server::start(|req| async move {
        if let Some(reply) = basics(&req, &echo_tool()) {
            return reply;
        }
        let body = req.json();
        match body["params"]["name"].as_str().unwrap_or_default() {
            "missing" => Reply::json_status(404, rpc_error(&req.id(), -32601, "Method not found")),
            "anonymous" => Reply::json_status(
                400,
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32602, "message": "bad"}}),
            ),
            "broken" => Reply::text(500, "database on fire"),
            "denied" => Reply::status(401),
            "accepted" => Reply::status(202),
            "garbage" => Reply::text(200, "not json"),
            "drop" => Reply::sse([": bye\n\n".to_string()]),
            _ => Reply::json(result(&req.id(), text_result("ok"))),
        }
    })
    .await;
    let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Modern);
    let call = |name: &'static str| {
        let client = client.clone();
        async move { client.call_tool(name, None, &none()).await.unwrap_err() }
    };
    let e = call("missing").await;
    assert_eq!((e.kind(), e.rpc_error().unwrap().code), (ErrorKind::Rpc, -32601));
    let e = call("anonymous").await;
    assert_eq!(
        e.rpc_error().unwrap().code,
        -32602,
        "an id-less error in a direct reply is ours"
    );
    let e = call("broken").await;
    assert_eq!(e.kind(), ErrorKind::HttpStatus);
    assert_eq!(e.http_status(), Some(500));
    assert!(
        e.message().contains("HTTP 500") && e.message().contains("database on fire"),
        "{}",
        e.message()
    );
    let e = call("denied").await;
    assert!(e.message().contains("HTTP 401"), "{}", e.message());
    let e = call("accepted").await;
    assert_eq!(e.kind(), ErrorKind::ProtocolViolation);
    let e = call("garbage").await;
    assert_eq!(e.kind(), ErrorKind::ProtocolViolation);
    let e = call("drop").await;
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(e.message().contains("before answering"), "{}", e.message());
    // The connection still works.
    client.call_tool("fine", None, &none()).await.unwrap();
}

/// Answers reach the caller undecoded when they are well-formed; a broken one still meets the
/// full decoder: a broken event is skipped (the stream goes on to the real answer), a broken
/// JSON body is a protocol violation, an error answer keeps its code, data and message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_answers_are_judged_as_before_the_undecoded_path() {
    let server = Server::start(|req| async move {
        if let Some(reply) = basics(&req, &echo_tool()) {
            return reply;
        }
        let id = req.id();
        let body = req.json();
        match body["params"]["name"].as_str().unwrap_or_default() {
            "broken-event" => Reply::sse([
                format!("data: {{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":tru}}}}\n\n"),
                event(&result(&id, text_result("the real one"))),
            ]),
            "broken-body" => Reply::text(200, &format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":tru}}")),
            "error" => Reply::json(
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32050, "message": "no", "data": {"k": 1}}}),
            ),
            _ => Reply::json(result(&id, json!({"content": [], "n": 12345678901234567890123u128}))),
        }
    })
    .await;
    let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Modern);
    let r = client.call_tool("broken-event", None, &none()).await.unwrap();
    assert_eq!(text(&r), "the real one");
    let e = client.call_tool("broken-body", None, &none()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ProtocolViolation);
    assert!(e.message().contains("body that is not JSON"), "{}", e.message());
    let e = client.call_tool("error", None, &none()).await.unwrap_err();
    let rpc = e.rpc_error().unwrap();
    assert_eq!((rpc.code, rpc.message.as_str()), (-32050, "no"));
    assert_eq!(rpc.data, Some(json!({"k": 1})));
    let r = client.call_tool("digits", None, &none()).await.unwrap();
    assert_eq!(
        r["n"].to_string(),
        "12345678901234567890123",
        "the server's digits are kept"
    );
    client.close().await;
}

async fn oversized_messages_fail_only_their_request() {
    let server = Server::start(|req| async move {
        if let Some(reply) = basics(&req, &echo_tool()) {
            return reply;
        }
        let big = "x".repeat(20_000);
        let id = req.id();
        match req.json()["params"]["name"].as_str().unwrap_or_default() {
            "big_json" => Reply::json(result(&id, text_result(&big))),
            "big_sse" => Reply::sse([
                event(&json!({"jsonrpc": "2.0", "method": "notifications/message",
                              "params": {"level": "info", "data": big}})),
                event(&result(&id, text_result(&big))),
            ]),
            _ => Reply::json(result(&id, text_result("small"))),
        }
    })
    .await;
    let mut cfg = http_config(&server.url("/mcp"));
    cfg.max_message_bytes = 4096;
    let client = client_for(cfg, ConnectMode::Modern);
    let logs = Logs::attach(&client);
    for name in ["big_json", "big_sse"] {
        let e = client.call_tool(name, None, &none()).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::MessageTooLarge, "{name}: {e}");
    }
    // The oversized notification (no id) was skipped with a log line.
    assert!(
        logs.lines().iter().any(|l| l.contains("skipped an SSE event")),
        "{:?}",
        logs.lines()
    );
    let r = client.call_tool("small", None, &none()).await.unwrap();
    assert_eq!(text(&r), "small");
}

async fn fifty_sequential_calls_reuse_the_connection_without_stalls() {
    let server = Server::start(|req| async move {
        if let Some(reply) = basics(&req, &echo_tool()) {
            return reply;
        }
        Reply::json(result(&req.id(), text_result("ok")))
    })
    .await;
    let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Modern);
    client.connect().await.unwrap();
    // Warm up, then time 50 calls: a delayed-ACK stall would cost ~40 ms each (2 s in all).
    client.call_tool("echo", None, &none()).await.unwrap();
    let start = Instant::now();
    for _ in 0..50 {
        client.call_tool("echo", None, &none()).await.unwrap();
    }
    let took = start.elapsed();
    assert!(took < Duration::from_secs(1), "50 calls took {took:?}");
    assert_eq!(server.connections(), 1, "keep-alive reuses one connection");
}

/// Calls in flight at once each get a connection (HTTP/1.1 has one request per connection at a
/// time), and those connections serve the next calls: the server answers only once all four
/// calls have reached it, so calls queued behind one another would never finish.
async fn concurrent_calls_get_a_connection_each_and_later_calls_reuse_them() {
    let all_in = Arc::new(tokio::sync::Barrier::new(4));
    let server = Server::start(move |req| {
        let all_in = all_in.clone();
        async move {
            if let Some(reply) = basics(&req, &echo_tool()) {
                return reply;
            }
            all_in.wait().await;
            Reply::json(result(&req.id(), text_result(&format!("conn {}", req.conn))))
        }
    })
    .await;
    let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Modern);
    client.connect().await.unwrap();
    for round in 0..2 {
        let calls: Vec<_> = (0..4)
            .map(|_| {
                let c = client.clone();
                tokio::spawn(async move { c.call_tool("echo", None, &none()).await })
            })
            .collect();
        let mut conns = Vec::new();
        for call in calls {
            let r = within(Duration::from_secs(10), call).await.unwrap().unwrap();
            conns.push(text(&r).to_string());
        }
        conns.sort();
        conns.dedup();
        assert_eq!(
            conns.len(),
            4,
            "round {round}: four calls on four connections: {conns:?}"
        );
    }
    // discover's connection is one of the first four; the second round opened none.
    assert_eq!(server.connections(), 4, "{:?}", server.summary());
}

/// A kept-alive connection the server has closed since (its idle timeout) is not used again:
/// the next call goes on a new connection and succeeds.
async fn a_connection_the_server_hung_up_is_replaced() {
    let server = Server::start(|req| async move {
        if let Some(reply) = basics(&req, &echo_tool()) {
            return reply;
        }
        Reply::json(result(&req.id(), text_result("ok"))).hanging_up()
    })
    .await;
    let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Modern);
    client.connect().await.unwrap();
    for _ in 0..3 {
        let r = client.call_tool("echo", None, &none()).await.unwrap();
        assert_eq!(text(&r), "ok");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // discover and the first call shared a connection; each call after a hang-up opened one.
    assert_eq!(server.connections(), 3, "{:?}", server.summary());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_delivers_notifications_as_they_arrive() {
    let feeder: Arc<Mutex<Option<tokio::sync::mpsc::UnboundedSender<Vec<u8>>>>> = Arc::default();
    let f = feeder.clone();
    let server = Server::start(move |req| {
        let f = f.clone();
        async move {
            if let Some(reply) = basics(&req, &echo_tool()) {
                return reply;
            }
            let id = req.id();
            let (reply, tx) = Reply::sse_stream();
            let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id}, "notifications": {"toolsListChanged": true}}});
            tx.send(event(&ack).into_bytes()).unwrap();
            *f.lock().unwrap() = Some(tx);
            reply
        }
    })
    .await;
    let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Modern);
    let sub = client.listen(json!({"toolsListChanged": true}), &none()).await.unwrap();
    assert_eq!(sub.acknowledged(), &json!({"toolsListChanged": true}));
    let id = sub.id().to_value();
    let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id}}});
    feeder
        .lock()
        .unwrap()
        .as_ref()
        .unwrap()
        .send(event(&changed).into_bytes())
        .unwrap();
    let ev = within(Duration::from_secs(5), sub.next()).await.unwrap();
    assert!(
        matches!(ev, SubscriptionEvent::Notification { ref method, .. } if method == "notifications/tools/list_changed"),
        "{ev:?}"
    );
    assert_eq!(
        server.posts_of("subscriptions/listen")[0].header("mcp-method"),
        Some("subscriptions/listen")
    );
    sub.cancel().await;
    server
        .wait_until(Duration::from_secs(5), "the listen stream is closed", |s| {
            s.dropped().len() == 1
        })
        .await;
}
