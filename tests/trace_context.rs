//! W3C trace context in `params._meta` (SEP-414): a call's `traceparent`, `tracestate` and
//! `baggage` reach the server exactly, on every request the call makes (each MRTR leg, each
//! task poll, each page), over stdio and HTTP, in both eras; invalid values are refused before
//! anything is sent. The fixture's `--record` file is what the server received.

mod common;

use common::*;
use mcp_client::{
    Client, ClientConfig, ConnectMode, ErrorKind, HttpConfig, ListKind, RequestOptions, TraceContext, TransportConfig,
};
use serde_json::{json, Map, Value};

const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const STATE: &str = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE";
const BAGGAGE: &str = "userId=alice,serverNode=DF%2028,isProduction=false";

fn traced() -> RequestOptions {
    RequestOptions {
        trace: TraceContext::new(Some(PARENT), Some(STATE), Some(BAGGAGE)).unwrap(),
        ..RequestOptions::default()
    }
}

/// The three members a request's `_meta` must carry.
fn assert_traced(request: &Value) {
    let meta = &request["params"]["_meta"];
    assert_eq!(meta["traceparent"], PARENT, "{request}");
    assert_eq!(meta["tracestate"], STATE, "{request}");
    assert_eq!(meta["baggage"], BAGGAGE, "{request}");
}

/// The JSON-RPC requests of `method` the HTTP fixture received (its `--record` lines).
fn http_requests(record: &TempPath, method: &str) -> Vec<Value> {
    record
        .lines()
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|r| r["body"].clone())
        .filter(|b| b["method"] == method && b.get("id").is_some())
        .collect()
}

fn http_client(url: &str, mode: ConnectMode, tweak: impl FnOnce(&mut ClientConfig)) -> Client {
    let mut config = ClientConfig::new(TransportConfig::Http(HttpConfig::new(url.to_string())));
    config.mode = mode;
    config.request_timeout = REQUEST_TIMEOUT;
    tweak(&mut config);
    Client::new(config)
}

/// An elicitation handler answering each `three_rounds` step.
fn answer_steps(client: &Client) {
    client.on_elicitation(|_| async move { Ok(json!({"action": "accept", "content": {"value": "v"}})) });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_carries_the_exact_values_over_stdio_in_both_eras() {
    for fx in [Fixture::modern(&[]), Fixture::legacy(&[])] {
        let client = fx.client();
        let result = client.call_tool("echo_meta", None, &traced()).await.unwrap();
        // The server saw them as members of `_meta`, unprefixed.
        let seen = &result["structuredContent"];
        assert_eq!(seen["traceparent"], PARENT, "{result}");
        assert_eq!(seen["tracestate"], STATE);
        assert_eq!(seen["baggage"], BAGGAGE);
        let calls = fx.wire.tool_calls("echo_meta");
        assert_eq!(calls.len(), 1);
        assert_traced(&calls[0]);
        // A call without a context sends none.
        client
            .call_tool("echo", Some(json!({"text": "x"})), &none())
            .await
            .unwrap();
        let plain = &fx.wire.tool_calls("echo")[0];
        assert!(plain["params"]["_meta"].get("traceparent").is_none(), "{plain}");
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mrtr_leg_and_every_page_carries_it_over_stdio() {
    let fx = Fixture::modern(&["--page-size", "2"]);
    let client = fx.client();
    answer_steps(&client);
    client.call_tool("three_rounds", None, &traced()).await.unwrap();
    let legs = fx.wire.tool_calls("three_rounds");
    assert_eq!(legs.len(), 4, "{legs:#?}");
    legs.iter().for_each(assert_traced);
    client.list_all(ListKind::Tools, &traced()).await.unwrap();
    let pages = fx.wire.requests("tools/list");
    assert!(pages.len() >= 2, "{pages:#?}");
    pages.iter().for_each(assert_traced);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_task_poll_carries_it_over_stdio() {
    let fx = Fixture::modern(&[]);
    let client = fx.client_with(|c| c.tasks = true);
    let result = client
        .call_tool("task_echo", Some(json!({"text": "t"})), &traced())
        .await
        .unwrap();
    assert_eq!(text(&result), "task: t");
    assert_traced(&fx.wire.tool_calls("task_echo")[0]);
    let polls = fx.wire.requests("tasks/get");
    assert!(!polls.is_empty());
    polls.iter().for_each(assert_traced);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_both_eras_and_http_sse_mrtr_legs_and_task_polls_carry_it() {
    // Streamable HTTP in both eras, and the 2024-11-05 HTTP+SSE transport.
    for (mode, flags) in [
        (ConnectMode::Modern, &[][..]),
        (ConnectMode::Legacy, &[][..]),
        (ConnectMode::Auto, &["--legacy-sse"][..]),
    ] {
        let record = TempPath::new("trace-http.jsonl");
        let mut args = vec!["--record".to_string(), record.as_string()];
        args.extend(flags.iter().map(|f| f.to_string()));
        let server = HttpFixture::start(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let client = http_client(&server.1, mode.clone(), |_| {});
        let result = client.call_tool("echo_meta", None, &traced()).await.unwrap();
        assert_eq!(result["structuredContent"]["traceparent"], PARENT, "{mode:?}: {result}");
        let calls = http_requests(&record, "tools/call");
        assert_eq!(calls.len(), 1, "{mode:?}");
        assert_traced(&calls[0]);
        client.close().await;
    }
    let record = TempPath::new("trace-http-rounds.jsonl");
    let server = HttpFixture::start(&["--record", &record.as_string()]);
    let client = http_client(&server.1, ConnectMode::Modern, |c| c.tasks = true);
    answer_steps(&client);
    client.call_tool("three_rounds", None, &traced()).await.unwrap();
    client.call_tool("task_echo", None, &traced()).await.unwrap();
    let calls = http_requests(&record, "tools/call");
    assert_eq!(calls.len(), 5, "four legs and the task's call: {calls:#?}");
    calls.iter().for_each(assert_traced);
    let polls = http_requests(&record, "tasks/get");
    assert!(!polls.is_empty());
    polls.iter().for_each(assert_traced);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_context_replaces_caller_entries_and_invalid_values_are_never_sent() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let mut meta = Map::new();
    meta.insert(
        "traceparent".into(),
        json!("00-11111111111111111111111111111111-2222222222222222-00"),
    );
    meta.insert("other".into(), json!(1));
    let opts = RequestOptions {
        meta: Some(meta),
        ..traced()
    };
    client
        .call_tool("echo", Some(json!({"text": "a"})), &opts)
        .await
        .unwrap();
    let call = &fx.wire.tool_calls("echo")[0];
    assert_traced(call);
    assert_eq!(call["params"]["_meta"]["other"], 1);

    for bad in [json!("not-a-traceparent"), json!(7)] {
        let mut meta = Map::new();
        meta.insert("traceparent".into(), bad);
        let opts = RequestOptions {
            meta: Some(meta),
            ..RequestOptions::default()
        };
        let e = expect_err(
            client.call_tool("echo", Some(json!({"text": "b"})), &opts).await,
            "bad traceparent",
        );
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert!(e.message().contains("traceparent"), "{e}");
    }
    let mut meta = Map::new();
    meta.insert("baggage".into(), json!("k=a b"));
    let opts = RequestOptions {
        meta: Some(meta),
        ..RequestOptions::default()
    };
    let e = expect_err(
        client.call_tool("echo", Some(json!({"text": "c"})), &opts).await,
        "bad baggage",
    );
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert_eq!(fx.wire.tool_calls("echo").len(), 1, "nothing invalid went out");
    assert!(TraceContext::new(Some("00-zz"), None, None).is_err());
    client.close().await;
}

/// A legacy HTTP session the server drops is reconnected (a new `initialize`) and the idempotent
/// call that met the 404 goes again, with the same context.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_retry_after_a_reconnect_carries_it() {
    let record = TempPath::new("trace-reconnect.jsonl");
    let server = HttpFixture::start(&["--record", &record.as_string(), "--expire-session-after", "2"]);
    let client = http_client(&server.1, ConnectMode::Legacy, |c| {
        c.reconnect = Some(mcp_client::ReconnectPolicy::default())
    });
    for _ in 0..3 {
        client.list(ListKind::Tools, None, &traced()).await.unwrap();
    }
    let lists = http_requests(&record, "tools/list");
    assert_eq!(lists.len(), 4, "three calls, one of them sent twice: {lists:#?}");
    lists.iter().for_each(assert_traced);
    assert_eq!(http_requests(&record, "initialize").len(), 2, "one reconnect");
    client.close().await;
}
