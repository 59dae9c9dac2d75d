//! The legacy HTTP transports against an in-test server: Streamable HTTP sessions (session id,
//! version header, the GET stream with server→client requests answered by POST, DELETE on
//! close, re-initialisation after a 404), SSE resumption with `Last-Event-ID` after `retry:`,
//! cancellation by `notifications/cancelled`, the 2024-11-05 HTTP+SSE fallback, and era
//! detection in `auto` mode.

#[macro_use]
mod http_support;

use http_support::*;
use mcp_client::{CancelToken, ConnectMode, Era, ErrorKind, HandlerError, InputRequest, RequestOptions};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;

on_both_runtimes! {
    a_legacy_session_from_initialize_to_delete
    server_requests_on_a_post_stream_are_answered_before_the_result
    an_expired_session_is_renewed_once
    cancelling_a_legacy_call_posts_notifications_cancelled
    dropping_a_legacy_calls_future_posts_notifications_cancelled
    a_post_stream_cut_before_its_answer_is_resumed
    auto_mode_detects_a_legacy_server_over_http
}

fn none() -> RequestOptions {
    RequestOptions::default()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// A legacy server's shared state.
#[derive(Default)]
struct Legacy {
    sessions: AtomicUsize,
    expired: Mutex<HashSet<String>>,
    get_feeders: Mutex<Vec<UnboundedSender<Vec<u8>>>>,
    /// Responses the client POSTed to server→client requests.
    answers: Mutex<Vec<Value>>,
    /// Woken at each answer.
    answered: tokio::sync::Notify,
}

impl Legacy {
    /// The client's answer to the server→client request `id`, once it arrives (None after 5 s).
    async fn answer_to(&self, id: i64) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            // Registered before the check, so an answer landing in between still wakes us.
            let woken = self.answered.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            if let Some(answer) = self.answers.lock().unwrap().iter().find(|a| a["id"] == id) {
                return Some(answer.clone());
            }
            tokio::time::timeout_at(deadline, woken).await.ok()?;
        }
    }
}

impl Legacy {
    /// The legacy basics: `initialize` (a new session each time), expired sessions (404),
    /// notifications and client answers (202), DELETE (200). `None` for anything else.
    fn basics(&self, req: &Request, version: &str) -> Option<Reply> {
        if let Some(sid) = req.header("mcp-session-id") {
            if self.expired.lock().unwrap().contains(sid) {
                return Some(Reply::json_status(
                    404,
                    json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": "Session not found"}}),
                ));
            }
        }
        if req.method == "DELETE" {
            return Some(Reply::status(200));
        }
        if req.method != "POST" {
            return None;
        }
        let body = req.json();
        match body.get("method").and_then(Value::as_str) {
            Some("initialize") => {
                let n = self.sessions.fetch_add(1, Ordering::SeqCst) + 1;
                Some(
                    Reply::json(result(&req.id(), initialize_result(version)))
                        .with_header("Mcp-Session-Id", &format!("s{n}")),
                )
            }
            Some(_) if req.is_notification() => Some(Reply::status(202)),
            None => {
                self.answers.lock().unwrap().push(body);
                self.answered.notify_waiters();
                Some(Reply::status(202))
            }
            _ => None,
        }
    }

    fn push(&self, value: &Value) {
        for tx in self.get_feeders.lock().unwrap().iter() {
            let _ = tx.send(event(value).into_bytes());
        }
    }
}

fn elicitation_handler(client: &mcp_client::Client) {
    client.on_elicitation(|req: InputRequest| async move {
        let params = req.params.unwrap_or_default();
        if params["message"] == "refuse" {
            return Err(HandlerError::new("no"));
        }
        Ok(json!({"action": "accept", "content": {"name": "John Doe", "asked": params["message"]}}))
    });
}

async fn a_legacy_session_from_initialize_to_delete() {
    let st = Arc::new(Legacy::default());
    let s = st.clone();
    let server = Server::start(move |req| {
        let s = s.clone();
        async move {
            if let Some(reply) = s.basics(&req, LATEST_LEGACY) {
                return reply;
            }
            if req.method == "GET" {
                let (reply, tx) = Reply::sse_stream();
                tx.send(b": open\n\n".to_vec()).unwrap();
                s.get_feeders.lock().unwrap().push(tx);
                return reply;
            }
            Reply::json(result(
                &req.id(),
                json!({"content": [{"type": "text", "text": "legacy ok"}]}),
            ))
        }
    })
    .await;
    let cfg = http_config(&server.url("/mcp"))
        .bearer_token("tok")
        .header("X-Tenant", "acme");
    let client = client_for(cfg, ConnectMode::Legacy);
    elicitation_handler(&client);
    let notes = Notes::attach(&client);
    let info = client.connect().await.unwrap();
    assert_eq!((info.era, info.protocol_version.as_str()), (Era::Legacy, LATEST_LEGACY));

    // After notifications/initialized the client opens the GET stream.
    server
        .wait_until(Duration::from_secs(5), "the GET stream", |s| {
            !s.of_method("GET").is_empty()
        })
        .await;
    let get = &server.of_method("GET")[0];
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    // A server→client request and a notification arrive on the GET stream; the handler's answer
    // goes back by POST.
    st.push(&json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}));
    st.push(&json!({"jsonrpc": "2.0", "id": "srv-1", "method": "elicitation/create",
        "params": {"message": "your name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}));
    st.push(&json!({"jsonrpc": "2.0", "id": "srv-2", "method": "ping"}));
    server
        .wait_until(Duration::from_secs(5), "both answers", |s| {
            s.posts().iter().filter(|r| r.rpc_method().is_none()).count() == 2
        })
        .await;
    let answers = st.answers.lock().unwrap().clone();
    let elicit = answers
        .iter()
        .find(|a| a["id"] == "srv-1")
        .unwrap_or_else(|| panic!("{answers:?}"));
    assert_eq!(elicit["result"]["action"], "accept");
    assert_eq!(elicit["result"]["content"]["asked"], "your name?");
    assert!(answers.iter().any(|a| a["id"] == "srv-2" && a["result"] == json!({})));
    assert!(notes.methods().contains(&"notifications/message".to_string()));

    let r = client.call_tool("echo", None, &none()).await.unwrap();
    assert_eq!(text(&r), "legacy ok");
    client.close().await;
    server
        .wait_until(Duration::from_secs(5), "the DELETE", |s| {
            !s.of_method("DELETE").is_empty()
        })
        .await;

    let requests = server.requests();
    let init = &requests[0];
    assert_eq!(init.rpc_method().as_deref(), Some("initialize"));
    assert_eq!(init.header("mcp-session-id"), None);
    assert_eq!(init.header("mcp-protocol-version"), None);
    for r in &requests[1..] {
        let what = format!("{} {:?}", r.method, r.rpc_method());
        assert_eq!(r.header("mcp-session-id"), Some("s1"), "{what}");
        assert_eq!(r.header("mcp-protocol-version"), Some(LATEST_LEGACY), "{what}");
        assert_eq!(
            r.header("mcp-method"),
            None,
            "{what}: legacy requests carry no modern headers"
        );
    }
    for r in &requests {
        assert_eq!(r.header("authorization"), Some("Bearer tok"));
        assert_eq!(r.header("x-tenant"), Some("acme"));
    }
    assert_eq!(server.of_method("DELETE").len(), 1);
}

async fn server_requests_on_a_post_stream_are_answered_before_the_result() {
    // Like the conformance `elicitation-sep1034-client-defaults` server: the tool call's own SSE
    // stream carries an elicitation/create, and the result follows the client's answer.
    let st = Arc::new(Legacy::default());
    let s = st.clone();
    let server = Server::start(move |req| {
        let s = s.clone();
        async move {
            if let Some(reply) = s.basics(&req, LATEST_LEGACY) {
                return reply;
            }
            if req.method == "GET" {
                return Reply::status(405);
            }
            let call_id = req.id();
            let (reply, tx) = Reply::sse_stream();
            let elicit = json!({"jsonrpc": "2.0", "id": 77, "method": "elicitation/create",
                "params": {"message": "defaults?", "requestedSchema": {"type": "object", "properties": {}}}});
            tx.send(event(&elicit).into_bytes()).unwrap();
            tokio::spawn(async move {
                if let Some(answer) = s.answer_to(77).await {
                    let name = answer["result"]["content"]["name"].clone();
                    let done = result(&call_id, json!({"content": [{"type": "text", "text": name}]}));
                    let _ = tx.send(event(&done).into_bytes());
                }
            });
            reply
        }
    })
    .await;
    let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Legacy);
    elicitation_handler(&client);
    let r = within(
        Duration::from_secs(10),
        client.call_tool("test_client_elicitation_defaults", None, &none()),
    )
    .await
    .unwrap();
    assert_eq!(text(&r), "John Doe");
    // 405 on GET means no stream, quietly: one GET (sent after `initialize`, in the
    // background, so possibly after the call), never tried again.
    server
        .wait_until(Duration::from_secs(5), "the GET stream is tried", |s| {
            !s.of_method("GET").is_empty()
        })
        .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(server.of_method("GET").len(), 1);
}

async fn an_expired_session_is_renewed_once() {
    let st = Arc::new(Legacy::default());
    let calls_gone = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (s, gone) = (st.clone(), calls_gone.clone());
    let server = Server::start(move |req| {
        let (s, gone) = (s.clone(), gone.clone());
        async move {
            if gone.load(Ordering::SeqCst) && req.rpc_method().as_deref() == Some("tools/call") {
                return Reply::json_status(404, rpc_error(&Value::Null, -32001, "Session not found"));
            }
            if let Some(reply) = s.basics(&req, LATEST_LEGACY) {
                return reply;
            }
            if req.method == "GET" {
                return Reply::status(405);
            }
            let sid = req.header("mcp-session-id").unwrap_or("none").to_string();
            Reply::json(result(&req.id(), json!({"content": [{"type": "text", "text": sid}]})))
        }
    })
    .await;
    let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Legacy);
    let logs = Logs::attach(&client);
    let r = client.call_tool("whoami", None, &none()).await.unwrap();
    assert_eq!(text(&r), "s1");
    st.expired.lock().unwrap().insert("s1".into());
    let r = client.call_tool("whoami", None, &none()).await.unwrap();
    assert_eq!(text(&r), "s2");
    assert_eq!(
        server.rpc_methods(),
        [
            "initialize",
            "notifications/initialized",
            "tools/call",
            "tools/call",
            "initialize",
            "notifications/initialized",
            "tools/call"
        ]
    );
    let inits = server.posts_of("initialize");
    assert_eq!(
        inits[1].header("mcp-session-id"),
        None,
        "a new session starts without an id"
    );
    assert_eq!(
        inits[1].json()["params"],
        inits[0].json()["params"],
        "the same initialize is replayed"
    );
    let calls = server.posts_of("tools/call");
    assert_eq!(calls[1].id(), calls[2].id(), "the request is retried as it was");
    assert_eq!(calls[2].header("mcp-session-id"), Some("s2"));
    assert!(
        logs.lines().iter().any(|l| l.contains("session expired")),
        "{:?}",
        logs.lines()
    );

    // Only once per request: if the call finds the new session gone too, it fails.
    calls_gone.store(true, Ordering::SeqCst);
    let e = client.call_tool("whoami", None, &none()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Rpc);
    assert_eq!(server.posts_of("initialize").len(), 3);
}

async fn cancelling_a_legacy_call_posts_notifications_cancelled() {
    legacy_call_ended_early(false).await;
}

async fn dropping_a_legacy_calls_future_posts_notifications_cancelled() {
    legacy_call_ended_early(true).await;
}

/// A legacy call to a tool that never answers, ended by its cancel token or by dropping its
/// future (a host's own timeout): either way the server gets `notifications/cancelled`.
async fn legacy_call_ended_early(drop_it: bool) {
    let st = Arc::new(Legacy::default());
    let s = st.clone();
    let server = Server::start(move |req| {
        let s = s.clone();
        async move {
            if let Some(reply) = s.basics(&req, LATEST_LEGACY) {
                return reply;
            }
            if req.method == "GET" {
                return Reply::status(405);
            }
            let (reply, tx) = Reply::sse_stream();
            s.get_feeders.lock().unwrap().push(tx);
            reply
        }
    })
    .await;
    let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Legacy);
    client.connect().await.unwrap();
    if drop_it {
        let held = tokio::time::timeout(Duration::from_millis(300), client.call_tool("slow", None, &none())).await;
        assert!(held.is_err(), "the silent tool cannot have answered: {held:?}");
    } else {
        let cancel = CancelToken::new();
        let opts = RequestOptions {
            cancel: Some(cancel.clone()),
            ..none()
        };
        let c = client.clone();
        let call = tokio::spawn(async move { c.call_tool("slow", None, &opts).await });
        server
            .wait_until(Duration::from_secs(5), "the call", |s| {
                !s.posts_of("tools/call").is_empty()
            })
            .await;
        cancel.cancel();
        assert_eq!(
            within(Duration::from_secs(5), call).await.unwrap().unwrap_err().kind(),
            ErrorKind::Cancelled
        );
    }
    server
        .wait_until(Duration::from_secs(5), "the cancellation", |s| {
            !s.posts_of("notifications/cancelled").is_empty()
        })
        .await;
    let note = &server.posts_of("notifications/cancelled")[0];
    assert_eq!(
        note.json()["params"]["requestId"],
        server.posts_of("tools/call")[0].id()
    );
    assert_eq!(note.header("mcp-session-id"), Some("s1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_get_stream_reconnects_after_the_retry_interval_with_last_event_id() {
    // The conformance `sse-retry` server: every stream opens with a priming event (an id,
    // `retry: 2000`, empty data) and is closed 100 ms later.
    let counter = Arc::new(AtomicUsize::new(0));
    let c = counter.clone();
    let server = Server::start(move |req| {
        let c = c.clone();
        async move {
            let priming = |c: &AtomicUsize| {
                format!(
                    "id: event-{}\nretry: 2000\ndata: \n\n",
                    c.fetch_add(1, Ordering::SeqCst) + 1
                )
            };
            let close_soon = |tx: UnboundedSender<Vec<u8>>| {
                tokio::spawn(async move {
                    // The conformance server's timing, which the retry measurement includes.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    drop(tx);
                });
            };
            if req.method == "GET" {
                let (reply, tx) = Reply::sse_stream();
                tx.send(priming(&c).into_bytes()).unwrap();
                close_soon(tx);
                return reply;
            }
            if req.rpc_method().as_deref() == Some("initialize") {
                let (reply, tx) = Reply::sse_stream();
                tx.send(priming(&c).into_bytes()).unwrap();
                let n = c.fetch_add(1, Ordering::SeqCst) + 1;
                tx.send(
                    event_with_id(
                        &format!("event-{n}"),
                        &result(&req.id(), initialize_result("2025-06-18")),
                    )
                    .into_bytes(),
                )
                .unwrap();
                close_soon(tx);
                return reply;
            }
            if req.is_notification() {
                return Reply::status(202);
            }
            Reply::json(result(&req.id(), json!({})))
        }
    })
    .await;
    let client = client_for(http_config(&server.url("")), ConnectMode::Legacy);
    let info = client.connect().await.unwrap();
    assert_eq!(info.protocol_version, "2025-06-18");
    server
        .wait_until(Duration::from_secs(6), "a second GET", |s| {
            s.of_method("GET").len() >= 2
        })
        .await;
    let gets = server.of_method("GET");
    let delay = gets[1].at.duration_since(gets[0].at);
    // The conformance check: no more than 50 ms early, up to 200 ms late (the stream itself
    // stays open 100 ms of that); a little more slack for a loaded machine.
    assert!(
        delay >= Duration::from_millis(1950) && delay <= Duration::from_millis(2500),
        "reconnected after {delay:?}"
    );
    assert_eq!(gets[0].header("last-event-id"), None);
    assert_eq!(gets[1].header("last-event-id"), Some("event-3"));
    assert_eq!(gets[1].header("mcp-protocol-version"), Some("2025-06-18"));
    client.close().await;
}

async fn a_post_stream_cut_before_its_answer_is_resumed() {
    let pending: Arc<Mutex<Option<Value>>> = Arc::default();
    let st = Arc::new(Legacy::default());
    let (p, s) = (pending.clone(), st.clone());
    let server = Server::start(move |req| {
        let (p, s) = (p.clone(), s.clone());
        async move {
            if let Some(reply) = s.basics(&req, LATEST_LEGACY) {
                return reply;
            }
            if req.method == "GET" {
                return match req.header("last-event-id") {
                    Some("c-1") => {
                        let id = p.lock().unwrap().clone().unwrap();
                        Reply::sse([event_with_id(
                            "c-2",
                            &result(&id, json!({"content": [{"type": "text", "text": "resumed"}]})),
                        )])
                    }
                    _ => Reply::status(405),
                };
            }
            *p.lock().unwrap() = Some(req.id());
            Reply::sse(["id: c-1\nretry: 300\ndata: \n\n".to_string()])
        }
    })
    .await;
    let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Legacy);
    let r = within(Duration::from_secs(5), client.call_tool("slow", None, &none()))
        .await
        .unwrap();
    assert_eq!(text(&r), "resumed");
    let gets = server.of_method("GET");
    let resume = gets.iter().find(|g| g.header("last-event-id").is_some()).unwrap();
    let call = &server.posts_of("tools/call")[0];
    assert!(
        resume.at.duration_since(call.at) >= Duration::from_millis(290),
        "waited the retry interval"
    );
    assert_eq!(resume.header("mcp-session-id"), Some("s1"));
}

/// A 2024-11-05 HTTP+SSE server at `/sse` posting to `/messages?sessionId=abc`.
async fn sse_2024_server() -> (Server, Arc<Mutex<Option<UnboundedSender<Vec<u8>>>>>) {
    let stream: Arc<Mutex<Option<UnboundedSender<Vec<u8>>>>> = Arc::default();
    let s = stream.clone();
    let server = Server::start(move |req| {
        let s = s.clone();
        async move {
            match (req.method.as_str(), req.path.as_str()) {
                ("GET", "/sse") => {
                    let (reply, tx) = Reply::sse_stream();
                    tx.send(b"event: endpoint\ndata: /messages?sessionId=abc\n\n".to_vec())
                        .unwrap();
                    *s.lock().unwrap() = Some(tx);
                    reply
                }
                ("POST", "/messages?sessionId=abc") => {
                    let body = req.json();
                    let answer = match body["method"].as_str() {
                        Some("initialize") => Some(result(&req.id(), initialize_result("2024-11-05"))),
                        // Never answered: a call that stays in flight.
                        Some("tools/call") if body["params"]["name"] == "hang" => None,
                        Some("tools/call") => Some(result(
                            &req.id(),
                            json!({"content": [{"type": "text", "text": "over sse"}]}),
                        )),
                        _ => None,
                    };
                    if let (Some(answer), Some(tx)) = (answer, s.lock().unwrap().as_ref()) {
                        tx.send(event(&answer).into_bytes()).unwrap();
                    }
                    Reply::text(202, "Accepted")
                }
                ("POST", _) => Reply::text(405, "Method Not Allowed"),
                _ => Reply::status(404),
            }
        }
    })
    .await;
    (server, stream)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_initialize_falls_back_to_http_sse_2024() {
    for mode in [ConnectMode::Legacy, ConnectMode::Auto] {
        let (server, _stream) = sse_2024_server().await;
        let client = client_for(http_config(&server.url("/sse")), mode.clone());
        let logs = Logs::attach(&client);
        let info = client.connect().await.unwrap();
        assert_eq!(
            (info.era, info.protocol_version.as_str()),
            (Era::Legacy, "2024-11-05"),
            "{mode:?}"
        );
        let r = client.call_tool("echo", None, &none()).await.unwrap();
        assert_eq!(text(&r), "over sse");
        let paths: Vec<String> = server.posts().iter().map(|r| r.path.clone()).collect();
        let tail: Vec<&str> = paths.iter().rev().take(4).rev().map(String::as_str).collect();
        assert_eq!(
            tail,
            [
                "/sse",
                "/messages?sessionId=abc",
                "/messages?sessionId=abc",
                "/messages?sessionId=abc"
            ],
            "{mode:?}"
        );
        assert_eq!(
            server.rpc_methods().iter().rev().take(3).rev().collect::<Vec<_>>(),
            ["initialize", "notifications/initialized", "tools/call"]
        );
        assert!(
            logs.lines().iter().any(|l| l.contains("2024-11-05")),
            "{:?}",
            logs.lines()
        );
        client.close().await;
        assert!(server.of_method("DELETE").is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_of_the_http_sse_stream_closes_the_connection() {
    let (server, stream) = sse_2024_server().await;
    let client = client_for(http_config(&server.url("/sse")), ConnectMode::Legacy);
    client.connect().await.unwrap();
    // A call in flight (its POST reached the server, which never answers it) when the stream
    // ends: the end wakes it with the stream's error, and later calls get the same.
    let pending = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("hang", None, &none()).await }
    });
    server
        .wait_until(Duration::from_secs(5), "the hang call's POST", |s| {
            !s.posts_of("tools/call").is_empty()
        })
        .await;
    stream.lock().unwrap().take();
    let e = within(Duration::from_secs(5), pending).await.unwrap().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io | ErrorKind::Closed), "{e:?}");
    assert!(e.message().contains("HTTP+SSE stream"), "{}", e.message());
    let e = client.call_tool("echo", None, &none()).await.unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io | ErrorKind::Closed), "{e:?}");
    assert!(e.message().contains("HTTP+SSE stream"), "{}", e.message());
}

async fn auto_mode_detects_a_legacy_server_over_http() {
    // Two legacy answers to the modern probe: the JSON-RPC "not initialized" error (fallback on
    // the same connection) and a bare 400 (the probe counts as failed; a fresh connection
    // initializes).
    for bare in [false, true] {
        let st = Arc::new(Legacy::default());
        let s = st.clone();
        let server = Server::start(move |req| {
            let s = s.clone();
            async move {
                if req.rpc_method().as_deref() == Some("server/discover") {
                    return if bare {
                        Reply::status(400)
                    } else {
                        Reply::json_status(
                            400,
                            json!({"jsonrpc": "2.0", "id": null,
                                   "error": {"code": -32000, "message": "Bad Request: Server not initialized"}}),
                        )
                    };
                }
                if let Some(reply) = s.basics(&req, "2025-03-26") {
                    return reply;
                }
                if req.method == "GET" {
                    return Reply::status(405);
                }
                Reply::json(result(&req.id(), json!({"tools": []})))
            }
        })
        .await;
        let client = client_for(http_config(&server.url("/mcp")), ConnectMode::Auto);
        let info = client.connect().await.unwrap();
        assert_eq!((info.era, info.protocol_version.as_str()), (Era::Legacy, "2025-03-26"));
        client.list_all(mcp_client::ListKind::Tools, &none()).await.unwrap();
        assert_eq!(
            server.rpc_methods(),
            [
                "server/discover",
                "initialize",
                "notifications/initialized",
                "tools/list"
            ]
        );
        // 2025-03-26 has no version header.
        assert_eq!(server.posts_of("tools/list")[0].header("mcp-protocol-version"), None);
        assert_eq!(server.posts_of("tools/list")[0].header("mcp-session-id"), Some("s1"));
    }
}
