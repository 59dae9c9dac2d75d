//! The client's public API against a modern server: server info, paginated lists (one page at
//! a time and all pages), tools, prompts, resources, completion, `subscriptions/listen`
//! (acknowledgement, notifications, client and server cancellation), the generic `request`,
//! and how server errors surface.

mod common;

use common::*;
use mcp_client::{Client, ErrorKind, ListKind, RequestOptions, SubscriptionEvent};
use serde_json::{json, Value};
use std::time::Duration;

fn names(items: &Value, field: &str) -> Vec<String> {
    items
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {items}"))
        .iter()
        .map(|i| i[field].as_str().unwrap().to_string())
        .collect()
}

const KINDS: [(ListKind, &str, &str); 4] = [
    (ListKind::Tools, "tools", "name"),
    (ListKind::Prompts, "prompts", "name"),
    (ListKind::Resources, "resources", "uri"),
    (ListKind::ResourceTemplates, "resourceTemplates", "uriTemplate"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_page_by_cursor_and_list_all_merges_every_page() {
    // The reference: everything on one page.
    let whole_fx = Fixture::modern(&[]);
    let whole = whole_fx.client();
    let paged_fx = Fixture::modern(&["--page-size", "2"]);
    let paged = paged_fx.client();
    for (kind, key, field) in KINDS {
        let reference = whole.list(kind, None, &none()).await.unwrap();
        assert!(reference.get("nextCursor").is_none(), "{reference}");
        let want = names(&reference[key], field);
        assert!(!want.is_empty(), "{key} is empty");

        // One page at a time.
        let mut got = Vec::new();
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let page = paged.list(kind, cursor.as_deref(), &none()).await.unwrap();
            let items = names(&page[key], field);
            assert!(items.len() <= 2, "page too big: {page}");
            got.extend(items);
            pages += 1;
            match page.get("nextCursor") {
                Some(Value::String(next)) => cursor = Some(next.clone()),
                None => break,
                Some(other) => panic!("bad nextCursor {other}"),
            }
        }
        assert_eq!(got, want, "{key} page by page");
        assert_eq!(pages, want.len().div_ceil(2));

        // All at once.
        let all = paged.list_all(kind, &none()).await.unwrap();
        assert_eq!(names(&all[key], field), want, "{key} via list_all");
    }
    // The cursors went out as sent: page-2, page-3, … on the right method.
    let tools = paged_fx.wire.requests("tools/list");
    let cursors: Vec<Value> = tools.iter().map(|r| r["params"]["cursor"].clone()).collect();
    assert_eq!(cursors[0], Value::Null);
    assert_eq!(cursors[1], "page-2");
    assert!(tools
        .iter()
        .all(|r| r["params"]["_meta"][META_VERSION] == MODERN_VERSION));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_cursor_is_a_server_error() {
    let fx = Fixture::modern(&["--page-size", "2"]);
    let client = fx.client();
    let err = expect_err(
        client.list(ListKind::Tools, Some("page-99"), &none()).await,
        "bad cursor",
    );
    assert_kind(&err, ErrorKind::Rpc);
    assert_eq!(err.rpc_error().unwrap().code, -32602);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_all_respects_max_pages() {
    let fx = Fixture::modern(&["--page-size", "2"]);
    let client = fx.client_with(|c| c.max_pages = 2);
    let err = expect_err(client.list_all(ListKind::Tools, &none()).await, "capped list_all");
    assert_kind(&err, ErrorKind::ProtocolViolation);
    assert_eq!(fx.wire.requests("tools/list").len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_prompts_and_resources() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let sum = client
        .call_tool("add", Some(json!({"a": 2, "b": 3})), &none())
        .await
        .unwrap();
    assert_eq!(text(&sum), "5");
    assert_eq!(sum["structuredContent"], json!({"result": 5}));
    assert_eq!(sum["resultType"], "complete");

    let failed = client.call_tool("fail", None, &none()).await.unwrap();
    assert_eq!(failed["isError"], true, "a tool error is a result, not an Err");
    assert_eq!(text(&failed), "tool failed on purpose");

    let prompt = client
        .get_prompt("greeting", Some(json!({"name": "Ada"})), &none())
        .await
        .unwrap();
    assert_eq!(prompt["messages"][0]["content"]["text"], "Hello, Ada!");
    assert_eq!(prompt["messages"][0]["role"], "user");
    assert_kind(
        &expect_err(
            client.get_prompt("greeting", Some(json!({"name": 7})), &none()).await,
            "non-string prompt argument",
        ),
        ErrorKind::InvalidArgument,
    );

    let stat = client.read_resource("fixture://static", &none()).await.unwrap();
    assert_eq!(stat["contents"][0]["text"], "static content");
    assert_eq!(stat["contents"][0]["uri"], "fixture://static");
    let item = client.read_resource("fixture://items/42", &none()).await.unwrap();
    assert_eq!(item["contents"][0]["text"], "item 42");
    let blob = client.read_resource("fixture://binary", &none()).await.unwrap();
    assert_eq!(blob["contents"][0]["blob"], "AAECAw==");

    let missing = expect_err(client.read_resource("fixture://nope", &none()).await, "missing");
    assert_eq!(missing.rpc_error().unwrap().code, -32602);
    assert_eq!(
        missing.rpc_error().unwrap().data,
        Some(json!({"uri": "fixture://nope"}))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_keep_code_message_and_data() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let err = expect_err(client.call_tool("rpc_error", None, &none()).await, "rpc_error");
    assert_kind(&err, ErrorKind::Rpc);
    let rpc = err.rpc_error().unwrap();
    assert_eq!(rpc.code, -32050);
    assert_eq!(rpc.message, "fixture error");
    assert_eq!(rpc.data, Some(json!({"detail": "on purpose"})));
    assert!(err.message().contains("-32050"), "{}", err.message());

    let unknown = expect_err(client.call_tool("no_such_tool", None, &none()).await, "unknown");
    assert_eq!(unknown.rpc_error().unwrap().code, -32602);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completion_completes_prompt_and_template_arguments() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let names = client
        .complete(
            json!({"ref": {"type": "ref/prompt", "name": "greeting"},
                   "argument": {"name": "name", "value": "al"}}),
            &none(),
        )
        .await
        .unwrap();
    assert_eq!(
        names["completion"],
        json!({"values": ["alice", "albert"], "total": 2, "hasMore": false})
    );
    let ids = client
        .complete(
            json!({"ref": {"type": "ref/resource", "uri": "fixture://items/{id}"},
                   "argument": {"name": "id", "value": "4"}}),
            &none(),
        )
        .await
        .unwrap();
    assert_eq!(ids["completion"]["values"], json!(["42"]));
    let sent = &fx.wire.requests("completion/complete")[0]["params"];
    assert_eq!(sent["ref"], json!({"type": "ref/prompt", "name": "greeting"}));
    assert_eq!(sent["argument"], json!({"name": "name", "value": "al"}));
}

async fn next_event(sub: &mcp_client::Subscription) -> SubscriptionEvent {
    within(Duration::from_secs(5), sub.next())
        .await
        .expect("the subscription ended early")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_acknowledges_delivers_and_cancels() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let filter = json!({
        "toolsListChanged": true,
        "resourceSubscriptions": ["fixture://static"],
        "bogusKey": true,
    });
    let sub = client.listen(filter, &none()).await.unwrap();
    // The server honours the known keys only.
    assert_eq!(
        sub.acknowledged(),
        &json!({"toolsListChanged": true, "resourceSubscriptions": ["fixture://static"]})
    );
    let listen = &fx.wire.requests("subscriptions/listen")[0];
    assert_eq!(listen["id"], sub.id().to_value());
    assert_eq!(listen["params"]["notifications"]["toolsListChanged"], true);
    assert_eq!(listen["params"]["_meta"][META_VERSION], MODERN_VERSION);

    client.call_tool("notify", None, &none()).await.unwrap();
    match next_event(&sub).await {
        SubscriptionEvent::Notification { method, params } => {
            assert_eq!(method, "notifications/tools/list_changed");
            assert_eq!(params["_meta"][META_SUBSCRIPTION_ID], sub.id().to_value());
        }
        other => panic!("expected tools/list_changed, got {other:?}"),
    }
    client
        .call_tool("touch", Some(json!({"uri": "fixture://static"})), &none())
        .await
        .unwrap();
    match next_event(&sub).await {
        SubscriptionEvent::Notification { method, params } => {
            assert_eq!(method, "notifications/resources/updated");
            assert_eq!(params["uri"], "fixture://static");
        }
        other => panic!("expected resources/updated, got {other:?}"),
    }

    sub.cancel().await;
    match next_event(&sub).await {
        SubscriptionEvent::Closed(Some(e)) => assert_kind(&e, ErrorKind::Cancelled),
        other => panic!("expected a cancelled close, got {other:?}"),
    }
    assert!(sub.next().await.is_none());
    // The server was told, by the listen's id.
    client
        .call_tool("echo", Some(json!({"text": "sync"})), &none())
        .await
        .unwrap();
    let cancels = fx.wire.notifications("notifications/cancelled");
    assert_eq!(cancels.len(), 1);
    assert_eq!(cancels[0]["params"]["requestId"], sub.id().to_value());
    // And it stopped sending: no listen is left to end.
    let ended = client.call_tool("end_listens", None, &none()).await.unwrap();
    assert_eq!(text(&ended), "ended 0 listens");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_ended_listen_closes_gracefully_and_others_are_independent() {
    let fx = Fixture::modern(&[]);
    let client: Client = fx.client();
    let tools = client.listen(json!({"toolsListChanged": true}), &none()).await.unwrap();
    let prompts = client
        .listen(json!({"promptsListChanged": true}), &none())
        .await
        .unwrap();
    assert_ne!(tools.id(), prompts.id());
    client.call_tool("notify", None, &none()).await.unwrap();
    let method_of = |e: SubscriptionEvent| match e {
        SubscriptionEvent::Notification { method, .. } => method,
        other => panic!("expected a notification, got {other:?}"),
    };
    assert_eq!(method_of(next_event(&tools).await), "notifications/tools/list_changed");
    assert_eq!(
        method_of(next_event(&prompts).await),
        "notifications/prompts/list_changed"
    );

    let ended = client.call_tool("end_listens", None, &none()).await.unwrap();
    assert_eq!(text(&ended), "ended 2 listens");
    for sub in [&tools, &prompts] {
        assert!(matches!(next_event(sub).await, SubscriptionEvent::Closed(None)));
        assert!(sub.next().await.is_none());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_subscription_cancels_it() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let sub = client.listen(json!({"toolsListChanged": true}), &none()).await.unwrap();
    let id = sub.id().to_value();
    drop(sub);
    fx.wire
        .wait_for("the cancellation of the dropped listen", |w| {
            w.iter()
                .any(|m| m["method"] == "notifications/cancelled" && m["params"]["requestId"] == id)
        })
        .await;
    let ended = client.call_tool("end_listens", None, &none()).await.unwrap();
    assert_eq!(text(&ended), "ended 0 listens");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_rejects_a_non_object_filter_without_sending() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let err = expect_err(client.listen(json!(["tools"]), &none()).await.map(|_| ()), "filter");
    assert_kind(&err, ErrorKind::InvalidArgument);
    assert!(fx.wire.requests("subscriptions/listen").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generic_request_sends_any_method() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    accept_elicitation(&client, json!({"topic": "generic"}));
    let tools = client.request("tools/list", None, &none()).await.unwrap();
    assert!(tools["tools"].as_array().is_some_and(|t| !t.is_empty()));
    // The three MRTR methods are driven through the generic path too.
    let prompt = client
        .request("prompts/get", Some(json!({"name": "needs_input"})), &none())
        .await
        .unwrap();
    assert_eq!(prompt["messages"][0]["content"]["text"], "Topic: generic");
    assert_eq!(fx.wire.requests("prompts/get").len(), 2);

    let err = expect_err(client.request("no/such/method", None, &none()).await, "unknown");
    assert_eq!(err.rpc_error().unwrap().code, -32601);
    let err = expect_err(client.request("tools/list", Some(json!([1])), &none()).await, "array");
    assert_kind(&err, ErrorKind::InvalidArgument);
    let opts = RequestOptions {
        request_state: Some("x".into()),
        ..Default::default()
    };
    let err = expect_err(client.request("tools/list", None, &opts).await, "state on list");
    assert_kind(&err, ErrorKind::InvalidArgument);
    let wanted = client.request("tools/list", None, &none()).await.unwrap();
    assert_eq!(wanted["tools"], tools["tools"]);
    // Stamped like every modern request; the invalid ones never left.
    let methods = fx.wire.methods();
    assert_eq!(
        methods,
        [
            "server/discover",
            "tools/list",
            "prompts/get",
            "prompts/get",
            "no/such/method",
            "tools/list"
        ]
    );
    let extra = RequestOptions {
        meta: Some(
            json!({"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", META_VERSION: "1900-01-01"})
                .as_object()
                .unwrap()
                .clone(),
        ),
        ..Default::default()
    };
    let meta = client.call_tool("echo_meta", None, &extra).await.unwrap();
    assert_eq!(
        meta["structuredContent"]["traceparent"],
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    );
    assert_eq!(
        meta["structuredContent"][META_VERSION], MODERN_VERSION,
        "the reserved keys win over caller _meta"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_arguments_are_refused_locally() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    for err in [
        expect_err(client.call_tool("echo", Some(json!("text")), &none()).await, "args"),
        expect_err(
            client.get_prompt("greeting", Some(json!([])), &none()).await,
            "prompt args",
        ),
        expect_err(
            client
                .call_tool(
                    "elicit_once",
                    None,
                    &RequestOptions {
                        input_responses: Some(json!([])),
                        ..Default::default()
                    },
                )
                .await,
            "input_responses",
        ),
    ] {
        assert_kind(&err, ErrorKind::InvalidArgument);
    }
    assert!(fx.wire.requests("tools/call").is_empty());
    assert!(fx.wire.requests("prompts/get").is_empty());
}
