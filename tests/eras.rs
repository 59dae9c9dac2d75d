//! Era-specific behaviour. Modern: the `_meta` envelope on every request, `server/discover`,
//! capabilities derived from handlers, `resultType` rules, version and capability errors.
//! Legacy: the `initialize` handshake, version negotiation, server→client requests answered by
//! the same handlers, ping both ways, logging/setLevel, resource subscriptions, roots changes.

mod common;

use common::*;
use mcp_client::{ConnectMode, ElicitationModes, Era, ErrorKind, InputRequest, RequestOptions};
use serde_json::{json, Value};

fn fixture_server_info() -> Value {
    json!({"name": "mcp-fixture-server", "version": "0.1.0"})
}

// ---------------------------------------------------------------------------------------------
// Modern
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_modern_request_carries_the_envelope() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.list(mcp_client::ListKind::Tools, None, &none()).await.unwrap();
    client
        .call_tool("echo", Some(json!({"text": "hi"})), &none())
        .await
        .unwrap();
    client
        .get_prompt("greeting", Some(json!({"name": "x"})), &none())
        .await
        .unwrap();
    client.read_resource("fixture://static", &none()).await.unwrap();
    let echoed = client.call_tool("echo_meta", None, &none()).await.unwrap();

    let client_info = client.config().client_info.clone();
    let expected = json!({
        META_VERSION: MODERN_VERSION,
        META_CAPABILITIES: {},
        META_CLIENT_INFO: client_info,
    });
    // What the server saw, verbatim.
    assert_eq!(echoed["structuredContent"], expected);
    let requests: Vec<Value> = fx
        .wire
        .messages()
        .into_iter()
        .filter(|m| m.get("id").is_some())
        .collect();
    assert_eq!(requests[0]["method"], "server/discover");
    assert_eq!(requests.len(), 6);
    for request in &requests {
        assert_eq!(request["params"]["_meta"], expected, "envelope of {request}");
    }
    assert!(client_info["name"].is_string() && client_info["version"].is_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discover_fills_the_server_info() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let info = client.connect().await.unwrap();
    assert_eq!(info.era, Era::Modern);
    assert_eq!(info.protocol_version, MODERN_VERSION);
    assert_eq!(info.server_info, Some(fixture_server_info()));
    assert_eq!(
        info.instructions.as_deref(),
        Some("Fixture server for mcp_client tests.")
    );
    assert_eq!(info.capabilities["tools"], json!({"listChanged": true}));
    assert_eq!(info.capabilities["completions"], json!({}));
    assert_eq!(info.raw["supportedVersions"], json!([MODERN_VERSION]));
    assert_eq!(info.raw["_meta"][META_SERVER_INFO], fixture_server_info());
    assert_eq!(client.server_info(), Some(info));
    assert_eq!(fx.wire.methods(), ["server/discover"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capabilities_follow_the_registered_handlers() {
    // None registered: an empty object.
    let fx = Fixture::modern(&[]);
    let bare = fx.client();
    let meta = bare.call_tool("echo_meta", None, &none()).await.unwrap();
    assert_eq!(meta["structuredContent"][META_CAPABILITIES], json!({}));

    // Elicitation only.
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    accept_elicitation(&client, json!({}));
    let meta = client.call_tool("echo_meta", None, &none()).await.unwrap();
    let caps = &meta["structuredContent"][META_CAPABILITIES];
    assert!(caps.get("elicitation").is_some_and(Value::is_object), "{caps}");
    assert!(caps.get("sampling").is_none() && caps.get("roots").is_none(), "{caps}");
    let discover = &fx.wire.requests("server/discover")[0];
    assert_eq!(&discover["params"]["_meta"][META_CAPABILITIES], caps);

    // All three; registering later changes what the next request declares.
    answer_sampling(&client, "s");
    answer_roots(&client, &["file:///r"]);
    let meta = client.call_tool("echo_meta", None, &none()).await.unwrap();
    let caps = meta["structuredContent"][META_CAPABILITIES]
        .as_object()
        .unwrap()
        .clone();
    let mut keys: Vec<&String> = caps.keys().collect();
    keys.sort();
    assert_eq!(keys, ["elicitation", "roots", "sampling"]);
    assert!(caps.values().all(Value::is_object), "every declared value is an object");

    // The elicitation modes, and removing handlers, change it again (the request's `_meta`
    // text is reused only while nothing of this changed).
    let url_only = ElicitationModes {
        url: true,
        ..Default::default()
    };
    client
        .on_elicitation_modes(url_only, |_: InputRequest| async { Ok(json!({"action": "accept"})) })
        .unwrap();
    client.set_handler(mcp_client::InputKind::Sampling, None);
    let meta = client.call_tool("echo_meta", None, &none()).await.unwrap();
    let caps = &meta["structuredContent"][META_CAPABILITIES];
    assert_eq!(caps["elicitation"], json!({"url": {}}), "{caps}");
    assert!(caps.get("sampling").is_none() && caps.get("roots").is_some(), "{caps}");

    // An explicit override wins.
    let fx = Fixture::modern(&[]);
    let custom = fx.client_with(|c| c.capabilities = Some(json!({"experimental": {"x": {}}})));
    accept_elicitation(&custom, json!({}));
    let meta = custom.call_tool("echo_meta", None, &none()).await.unwrap();
    assert_eq!(
        meta["structuredContent"][META_CAPABILITIES],
        json!({"experimental": {"x": {}}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_without_result_type_is_final() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    accept_elicitation(&client, json!({}));
    let result = client.call_tool("no_result_type", None, &none()).await.unwrap();
    assert_eq!(text(&result), "no resultType");
    assert!(result.get("resultType").is_none());
    assert_eq!(fx.wire.tool_calls("no_result_type").len(), 1, "it must not be retried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_result_type_is_a_protocol_violation() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let err = expect_err(client.call_tool("bad_result_type", None, &none()).await, "bogus");
    assert_kind(&err, ErrorKind::ProtocolViolation);
    assert!(err.message().contains("bogus"), "{}", err.message());
    assert_eq!(fx.wire.tool_calls("bad_result_type").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_mode_without_a_mutual_version_fails_with_version_mismatch() {
    let fx = Fixture::modern(&["--supported-versions", "2099-01-01"]);
    let client = fx.client();
    let err = expect_err(client.connect().await, "connect");
    assert_kind(&err, ErrorKind::VersionMismatch);
    assert!(err.message().contains("2099-01-01"), "{}", err.message());
    // One discover (the -32022 offered nothing modern to retry with), and no fallback.
    assert_eq!(fx.wire.methods(), ["server/discover"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_modern_version_the_server_lacks_fails() {
    let fx = Fixture::new(&["--supported-versions", "2099-01-01"]).mode(ConnectMode::Pinned(MODERN_VERSION.into()));
    let client = fx.client();
    assert_kind(
        &expect_err(client.connect().await, "connect"),
        ErrorKind::VersionMismatch,
    );
    assert!(fx.wire.requests("initialize").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_mode_falls_back_to_legacy_on_a_version_error_listing_only_legacy() {
    let fx = Fixture::new(&["--supported-versions", "2099-01-01"]);
    let client = fx.client();
    let info = client.connect().await.unwrap();
    assert_eq!(info.era, Era::Legacy);
    assert_eq!(info.protocol_version, LATEST_LEGACY);
    let echo = client
        .call_tool("echo", Some(json!({"text": "legacy"})), &none())
        .await
        .unwrap();
    assert_eq!(text(&echo), "legacy");
    // (The echo's answer proves the server has read everything sent before it.)
    assert_eq!(
        fx.wire.methods(),
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/call"
        ]
    );
    // The -32022 data listed 2025-11-25, so that is what initialize offered.
    assert_eq!(
        fx.wire.requests("initialize")[0]["params"]["protocolVersion"],
        LATEST_LEGACY
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_capability_error_names_what_is_required() {
    let fx = Fixture::modern(&["--require-elicitation"]);
    let client = fx.client();
    let err = expect_err(client.call_tool("elicit_once", None, &none()).await, "elicit_once");
    assert_kind(&err, ErrorKind::CapabilityMissing);
    let rpc = err.rpc_error().expect("the JSON-RPC error");
    assert_eq!(rpc.code, -32021);
    assert_eq!(rpc.data, Some(json!({"requiredCapabilities": {"elicitation": {}}})));
    assert_eq!(fx.wire.tool_calls("elicit_once").len(), 1);

    // Declaring the capability (by registering the handler) fixes it.
    accept_elicitation(&client, json!({"name": "Cap"}));
    let result = client.call_tool("elicit_once", None, &none()).await.unwrap();
    assert_eq!(text(&result), "Hello, Cap!");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_log_level_travels_in_meta_and_gates_log_notifications() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let seen = collect_notifications(&client);
    let quiet = client
        .call_tool("progress", Some(json!({"steps": 1, "delay_ms": 0})), &none())
        .await;
    assert_eq!(text(&quiet.unwrap()), "progress done");
    assert!(!seen.snapshot().iter().any(|(m, _)| m == "notifications/message"));

    client.set_log_level("info", &none()).await.unwrap();
    assert!(
        fx.wire.requests("logging/setLevel").is_empty(),
        "modern has no setLevel"
    );
    let loud = client
        .call_tool("progress", Some(json!({"steps": 1, "delay_ms": 0})), &none())
        .await;
    assert_eq!(text(&loud.unwrap()), "progress done");
    let (_, log) = seen
        .wait_for("the log message", |(m, _)| m == "notifications/message")
        .await;
    assert_eq!(log["data"], "progress tool ran");
    let calls = fx.wire.tool_calls("progress");
    assert!(calls[0]["params"]["_meta"].get(META_LOG_LEVEL).is_none());
    assert_eq!(calls[1]["params"]["_meta"][META_LOG_LEVEL], "info");

    // A per-request level overrides the client's.
    let opts = RequestOptions {
        log_level: Some("error".into()),
        ..Default::default()
    };
    let meta = client.call_tool("echo_meta", None, &opts).await.unwrap();
    assert_eq!(meta["structuredContent"][META_LOG_LEVEL], "error");
    assert_kind(
        &expect_err(client.set_log_level("loud", &none()).await, "bad level"),
        ErrorKind::InvalidArgument,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_only_calls_are_refused_on_a_modern_connection() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    for err in [
        expect_err(client.ping(&none()).await, "ping"),
        expect_err(
            client.subscribe_resource("fixture://static", &none()).await,
            "subscribe",
        ),
        expect_err(client.unsubscribe_resource("fixture://static", &none()).await, "unsub"),
    ] {
        assert_kind(&err, ErrorKind::Unsupported);
    }
    answer_roots(&client, &["file:///r"]);
    client.notify_roots_changed().await.unwrap();
    client
        .call_tool("echo", Some(json!({"text": "sync"})), &none())
        .await
        .unwrap();
    assert_eq!(
        fx.wire.methods(),
        ["server/discover", "tools/call"],
        "nothing legacy went out"
    );
}

// ---------------------------------------------------------------------------------------------
// Legacy
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_handshake_is_initialize_then_initialized() {
    let fx = Fixture::legacy(&[]);
    let client = fx.client();
    accept_elicitation(&client, json!({}));
    let info = client.connect().await.unwrap();
    assert_eq!(info.era, Era::Legacy);
    assert_eq!(info.protocol_version, LATEST_LEGACY);
    assert_eq!(info.server_info, Some(fixture_server_info()));
    assert_eq!(
        info.instructions.as_deref(),
        Some("Fixture server for mcp_client tests.")
    );
    assert_eq!(info.capabilities["resources"]["subscribe"], true);
    client.list(mcp_client::ListKind::Tools, None, &none()).await.unwrap();

    let messages = fx.wire.messages();
    assert_eq!(messages[0]["method"], "initialize");
    let params = &messages[0]["params"];
    assert_eq!(params["protocolVersion"], LATEST_LEGACY);
    assert_eq!(params["clientInfo"], client.config().client_info);
    assert!(params["capabilities"]["elicitation"].is_object());
    assert!(params.get("_meta").is_none(), "no modern envelope in legacy");
    assert_eq!(
        messages[1],
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    );
    assert_eq!(messages[2]["method"], "tools/list");
    assert!(
        messages[2].get("params").is_none_or(|p| p.get("_meta").is_none()),
        "legacy requests carry no envelope: {}",
        messages[2]
    );
    assert!(fx.wire.requests("server/discover").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_legacy_version_is_offered_and_echoed() {
    for version in ["2025-06-18", "2024-11-05"] {
        let fx = Fixture::new(&["--era", "legacy"]).mode(ConnectMode::Pinned(version.into()));
        let client = fx.client();
        let info = client.connect().await.unwrap();
        assert_eq!(info.era, Era::Legacy);
        assert_eq!(info.protocol_version, version);
        assert_eq!(info.raw["protocolVersion"], version);
        assert_eq!(fx.wire.requests("initialize")[0]["params"]["protocolVersion"], version);
        assert!(
            fx.wire.requests("server/discover").is_empty(),
            "a pinned legacy version never probes"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_pinned_version_is_refused() {
    let fx = Fixture::new(&[]).mode(ConnectMode::Pinned("1999-01-01".into()));
    let client = fx.client();
    assert_kind(
        &expect_err(client.connect().await, "connect"),
        ErrorKind::InvalidArgument,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_server_requests_are_answered_by_the_same_handlers() {
    let fx = Fixture::legacy(&[]);
    let client = fx.client();
    let elicitations = accept_elicitation(&client, json!({"name": "Ada", "confirmed": true}));
    let samplings = answer_sampling(&client, "A legacy summary");
    let roots = answer_roots(&client, &["file:///a", "file:///b"]);

    let result = client.call_tool("elicit_once", None, &none()).await.unwrap();
    assert_eq!(text(&result), "Hello, Ada!");
    let result = client.call_tool("elicit_and_sample", None, &none()).await.unwrap();
    assert_eq!(text(&result), "confirm=accept; summary=A legacy summary");
    let result = client.call_tool("roots", None, &none()).await.unwrap();
    assert_eq!(text(&result), "roots: file:///a,file:///b");

    assert_eq!(elicitations.len(), 2);
    assert_eq!(elicitations.snapshot()[0].method, "elicitation/create");
    assert_eq!(
        elicitations.snapshot()[0].params.as_ref().unwrap()["message"],
        "What is your name?"
    );
    assert_eq!(samplings.snapshot()[0].method, "sampling/createMessage");
    assert_eq!(samplings.snapshot()[0].params.as_ref().unwrap()["maxTokens"], 50);
    assert_eq!(roots.snapshot()[0].method, "roots/list");

    // One tools/call each: legacy uses real requests, never MRTR retries.
    for tool in ["elicit_once", "elicit_and_sample", "roots"] {
        assert_eq!(fx.wire.tool_calls(tool).len(), 1, "{tool}");
    }
    // The answers went back as JSON-RPC responses to the server's srv-N ids.
    let responses = fx.wire.responses();
    assert_eq!(responses.len(), 4, "{responses:#?}");
    for r in &responses {
        assert_eq!(r["jsonrpc"], "2.0");
        assert!(r["id"].as_str().is_some_and(|id| id.starts_with("srv-")), "{r}");
        assert!(r.get("result").is_some(), "{r}");
    }
    assert!(responses
        .iter()
        .any(|r| r["result"] == json!({"action": "accept", "content": {"name": "Ada", "confirmed": true}})));
    assert!(responses
        .iter()
        .any(|r| r["result"] == sampling_result("A legacy summary")));
    assert!(responses
        .iter()
        .any(|r| r["result"] == roots_result(&["file:///a", "file:///b"])));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_multi_round_flows_work_over_server_requests() {
    let fx = Fixture::legacy(&[]);
    let client = fx.client();
    client.on_elicitation(|req: InputRequest| async move {
        let message = req.params.unwrap_or_default()["message"].to_string();
        let value = if message.contains("Step 1") {
            "a"
        } else if message.contains("Step 2") {
            "b"
        } else {
            "c"
        };
        Ok(json!({"action": "accept", "content": {"value": value, "topic": "legacy topic"}}))
    });
    let result = client.call_tool("three_rounds", None, &none()).await.unwrap();
    assert_eq!(text(&result), "steps: a,b,c");
    let prompt = client.get_prompt("needs_input", None, &none()).await.unwrap();
    assert_eq!(prompt["messages"][0]["content"]["text"], "Topic: legacy topic");
    assert_eq!(fx.wire.responses().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_request_without_a_handler_gets_method_not_found() {
    // Declares elicitation (so the server asks) without registering a handler.
    let fx = Fixture::legacy(&[]);
    let client = fx.client_with(|c| c.capabilities = Some(json!({"elicitation": {}})));
    let result = client.call_tool("elicit_once", None, &none()).await.unwrap();
    assert_eq!(result["isError"], true);
    assert!(
        text(&result).contains("client error") && text(&result).contains("elicitation/create"),
        "{result}"
    );
    let responses = fx.wire.responses();
    assert_eq!(responses.len(), 1);
    assert_eq!(responses[0]["error"]["code"], -32601);
    assert!(responses[0].get("result").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_legacy_handler_answers_with_an_error() {
    let fx = Fixture::legacy(&[]);
    let client = fx.client();
    client.on_elicitation(|_req: InputRequest| async {
        Err::<Value, _>(mcp_client::HandlerError {
            code: Some(-1),
            message: "the user refused".into(),
        })
    });
    let result = client.call_tool("elicit_once", None, &none()).await.unwrap();
    assert_eq!(result["isError"], true);
    assert_eq!(text(&result), "client error: the user refused");
    let responses = fx.wire.responses();
    assert_eq!(responses[0]["error"]["code"], -1);
    assert_eq!(responses[0]["error"]["message"], "the user refused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_works_both_ways() {
    let fx = Fixture::legacy(&[]);
    let client = fx.client();
    client.ping(&none()).await.unwrap();
    assert_eq!(fx.wire.requests("ping").len(), 1);
    let result = client.call_tool("ping_client", None, &none()).await.unwrap();
    assert_eq!(text(&result), "client answered ping");
    let responses = fx.wire.responses();
    assert_eq!(responses.len(), 1);
    assert_eq!(responses[0]["result"], json!({}));
    assert!(responses[0]["id"].as_str().is_some_and(|id| id.starts_with("srv-")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_log_level_reaches_the_legacy_server() {
    let fx = Fixture::legacy(&[]);
    let client = fx.client();
    let unset = client.call_tool("log_level", None, &none()).await.unwrap();
    assert_eq!(text(&unset), "unset");
    client.set_log_level("warning", &none()).await.unwrap();
    let set = client.call_tool("log_level", None, &none()).await.unwrap();
    assert_eq!(text(&set), "warning");
    let requests = fx.wire.requests("logging/setLevel");
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["params"], json!({"level": "warning"}));

    // At warning, the info message `notify` sends is filtered by the server.
    let seen = collect_notifications(&client);
    client.call_tool("notify", None, &none()).await.unwrap();
    assert!(!seen.snapshot().iter().any(|(m, _)| m == "notifications/message"));

    assert_kind(
        &expect_err(client.set_log_level("verbose", &none()).await, "bad level"),
        ErrorKind::InvalidArgument,
    );
    let still = client.call_tool("log_level", None, &none()).await.unwrap();
    assert_eq!(text(&still), "warning");
    assert_eq!(fx.wire.requests("logging/setLevel").len(), 1, "a bad level is not sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_subscriptions_deliver_updates_until_unsubscribed() {
    let fx = Fixture::legacy(&[]);
    let client = fx.client();
    let seen = collect_notifications(&client);
    let opts = none();
    let touch = || client.call_tool("touch", Some(json!({"uri": "fixture://static"})), &opts);

    assert_eq!(text(&touch().await.unwrap()), "touched");
    assert!(seen.is_empty(), "no update before subscribing: {:?}", seen.snapshot());

    client.subscribe_resource("fixture://static", &none()).await.unwrap();
    touch().await.unwrap();
    let updates: Vec<Value> = seen
        .snapshot()
        .into_iter()
        .filter(|(m, _)| m == "notifications/resources/updated")
        .map(|(_, p)| p)
        .collect();
    assert_eq!(updates, vec![json!({"uri": "fixture://static"})]);

    client.unsubscribe_resource("fixture://static", &none()).await.unwrap();
    touch().await.unwrap();
    assert_eq!(seen.len(), 1, "an update after unsubscribing: {:?}", seen.snapshot());
    assert_eq!(
        fx.wire.requests("resources/subscribe")[0]["params"],
        json!({"uri": "fixture://static"})
    );
    assert_eq!(fx.wire.requests("resources/unsubscribe").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roots_changes_are_announced_only_with_a_roots_handler() {
    let fx = Fixture::legacy(&[]);
    let client = fx.client();
    let opts = none();
    let count = || client.call_tool("roots_changed_count", None, &opts);

    // No roots handler: no roots capability, so nothing is sent.
    client.notify_roots_changed().await.unwrap();
    assert_eq!(text(&count().await.unwrap()), "0");

    let fx = Fixture::legacy(&[]);
    let client = fx.client();
    answer_roots(&client, &["file:///r"]);
    let count = || client.call_tool("roots_changed_count", None, &opts);
    client.notify_roots_changed().await.unwrap();
    client.notify_roots_changed().await.unwrap();
    assert_eq!(text(&count().await.unwrap()), "2");
    let sent = fx.wire.notifications("notifications/roots/list_changed");
    assert_eq!(sent.len(), 2);
    assert!(sent[0].get("id").is_none());
    let init = &fx.wire.requests("initialize")[0];
    assert_eq!(init["params"]["capabilities"]["roots"], json!({"listChanged": true}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_listen_is_unsupported() {
    let fx = Fixture::legacy(&[]);
    let client = fx.client();
    let err = expect_err(
        client
            .listen(json!({"toolsListChanged": true}), &none())
            .await
            .map(|s| s.id().clone()),
        "listen on legacy",
    );
    assert_kind(&err, ErrorKind::Unsupported);
}
