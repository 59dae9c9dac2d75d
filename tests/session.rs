//! The JSON-RPC session: id allocation and multiplexing, notification routing, cancellation,
//! per-request timeouts (plain, reset on progress, total cap), progress callbacks, and what
//! happens to pending requests when the transport dies or the client closes.

mod common;

use common::*;
use mcp_client::{CancelToken, ErrorKind, Progress, RequestOptions};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

fn with_timeout(timeout: Duration) -> RequestOptions {
    RequestOptions {
        timeout: Some(timeout),
        ..Default::default()
    }
}

/// The ids the fixture says it saw in `notifications/cancelled`.
async fn cancelled_ids(client: &mcp_client::Client) -> Vec<Value> {
    let result = client
        .call_tool("cancelled_ids", None, &RequestOptions::default())
        .await
        .expect("cancelled_ids");
    serde_json::from_str(text(&result)).expect("cancelled_ids answers a JSON array")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_calls_from_many_tasks_are_multiplexed() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let mut tasks = Vec::new();
    for i in 0..50 {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let want = format!("message {i} ✓");
            let got = client
                .call_tool("echo", Some(json!({ "text": want })), &RequestOptions::default())
                .await
                .expect("echo");
            (want, text(&got).to_string())
        }));
    }
    for task in tasks {
        let (want, got) = within(Duration::from_secs(10), task).await.unwrap();
        assert_eq!(got, want, "a response reached the wrong caller");
    }

    let messages = fx.wire.messages();
    let requests: Vec<&Value> = messages.iter().filter(|m| m.get("id").is_some()).collect();
    assert_eq!(fx.wire.tool_calls("echo").len(), 50);
    let ids: HashSet<String> = requests.iter().map(|m| m["id"].to_string()).collect();
    assert_eq!(ids.len(), requests.len(), "request ids repeat: {requests:#?}");
    assert!(requests.iter().all(|m| m["jsonrpc"] == "2.0"));
    assert!(
        requests.iter().all(|m| m["id"].is_string() || m["id"].is_i64()),
        "ids must be strings or integers"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_calls_overlap_instead_of_queueing() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.connect().await.unwrap();
    let ((), elapsed) = timed(Duration::from_secs(5), async {
        let mut tasks = Vec::new();
        for _ in 0..5 {
            let client = client.clone();
            tasks.push(tokio::spawn(async move {
                client
                    .call_tool("slow", Some(json!({"ms": 300})), &RequestOptions::default())
                    .await
            }));
        }
        for task in tasks {
            assert_eq!(text(&task.await.unwrap().unwrap()), "slept 300");
        }
    })
    .await;
    assert!(
        elapsed < Duration::from_millis(1200),
        "5 × 300 ms calls took {elapsed:?}: they did not run concurrently"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_notifications_reach_the_listener() {
    let fx = Fixture::legacy(&[]);
    let client = fx.client();
    let seen = collect_notifications(&client);
    let result = client
        .call_tool("notify", None, &RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(text(&result), "notified");
    // The notifications precede the response on the wire, so they have been delivered.
    let methods: Vec<String> = seen.snapshot().into_iter().map(|(m, _)| m).collect();
    for method in [
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/message",
    ] {
        assert!(methods.iter().any(|m| m == method), "{method} missing: {methods:?}");
    }
    let (_, log) = seen
        .snapshot()
        .into_iter()
        .find(|(m, _)| m == "notifications/message")
        .unwrap();
    assert_eq!(log["data"], "notified");
    assert_eq!(log["level"], "info");
}

/// A request waiting alone reads the server's stdout itself (`transport/pump`); when it ends it
/// hands the reading back, so what the server sends afterwards, with no call waiting, still
/// arrives. (A current-thread runtime: on a multi-thread one the reader task does the reading.)
#[tokio::test(flavor = "current_thread")]
async fn output_after_a_lone_call_ends_is_still_read() {
    let fx = Fixture::legacy(&[]);
    let client = fx.client();
    let seen = collect_notifications(&client);
    client.connect().await.unwrap();
    let opts = RequestOptions {
        timeout: Some(Duration::from_millis(100)),
        ..RequestOptions::default()
    };
    let e = client
        .call_tool("progress", Some(json!({"steps": 2, "delay_ms": 300})), &opts)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert!(!seen.snapshot().iter().any(|(m, _)| m == "notifications/message"));
    // The tool logs once its steps are done, ~500 ms after the call gave up.
    let (_, params) = seen
        .wait_for("the log line sent after the call ended", |(m, _)| {
            m == "notifications/message"
        })
        .await;
    assert_eq!(params["data"], "progress tool ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_listen_notifications_reach_the_listener_too() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let seen = collect_notifications(&client);
    let sub = client
        .listen(json!({"toolsListChanged": true}), &RequestOptions::default())
        .await
        .unwrap();
    client
        .call_tool("notify", None, &RequestOptions::default())
        .await
        .unwrap();
    let (_, params) = seen
        .wait_for("tools/list_changed", |(m, _)| m == "notifications/tools/list_changed")
        .await;
    assert_eq!(params["_meta"][META_SUBSCRIPTION_ID], sub.id().to_value());
    assert!(
        seen.snapshot()
            .iter()
            .any(|(m, _)| m == "notifications/subscriptions/acknowledged"),
        "the acknowledgement is a notification too"
    );
    // Only what the filter asked for arrives.
    assert!(!seen
        .snapshot()
        .iter()
        .any(|(m, _)| m == "notifications/prompts/list_changed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_returns_at_once_sends_cancelled_and_ignores_the_late_answer() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.connect().await.unwrap();
    let token = CancelToken::new();
    let opts = RequestOptions {
        cancel: Some(token.clone()),
        ..Default::default()
    };
    let call = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("slow", Some(json!({"ms": 300})), &opts).await })
    };
    fx.wire
        .wait_for("the slow call", |w| w.iter().any(|m| m["params"]["name"] == "slow"))
        .await;
    let (outcome, elapsed) = timed(Duration::from_secs(2), async {
        token.cancel();
        call.await.unwrap()
    })
    .await;
    let err = expect_err(outcome, "cancelled slow call");
    assert_kind(&err, ErrorKind::Cancelled);
    assert!(elapsed < Duration::from_millis(250), "cancel took {elapsed:?}");

    // A call spanning the moment the cancelled call's late answer arrives gets its own answer.
    let later = client
        .call_tool("slow", Some(json!({"ms": 400})), &RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(text(&later), "slept 400");
    let echo = client
        .call_tool("echo", Some(json!({"text": "still fine"})), &RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(text(&echo), "still fine");

    let slow_id = fx.wire.tool_calls("slow")[0]["id"].clone();
    assert_eq!(cancelled_ids(&client).await, vec![slow_id.clone()]);
    let cancels = fx.wire.notifications("notifications/cancelled");
    assert_eq!(cancels.len(), 1, "{cancels:#?}");
    assert_eq!(cancels[0]["params"]["requestId"], slow_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_whose_future_is_dropped_is_cancelled_on_the_wire() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.connect().await.unwrap();
    let held = tokio::time::timeout(
        Duration::from_millis(200),
        client.call_tool("hang", None, &RequestOptions::default()),
    )
    .await;
    assert!(held.is_err(), "hang cannot have answered: {held:?}");
    // Written behind the cancellation, so the fixture has read it by then.
    let hang_id = fx.wire.tool_calls("hang")[0]["id"].clone();
    assert_eq!(cancelled_ids(&client).await, vec![hang_id.clone()]);
    let cancels = fx.wire.notifications("notifications/cancelled");
    assert_eq!(cancels.len(), 1, "{cancels:#?}");
    assert_eq!(cancels[0]["params"]["requestId"], hang_id);
    let reason = cancels[0]["params"]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("tools/call was abandoned"), "{reason}");
    // A call that ends normally is not cancelled.
    let echo = client
        .call_tool("echo", Some(json!({"text": "after"})), &RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(text(&echo), "after");
    assert_eq!(fx.wire.notifications("notifications/cancelled").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_token_before_the_call_fails_it() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let token = CancelToken::new();
    token.cancel();
    let opts = RequestOptions {
        cancel: Some(token),
        ..Default::default()
    };
    let (outcome, elapsed) = timed(
        Duration::from_secs(5),
        client.call_tool("slow", Some(json!({"ms": 1000})), &opts),
    )
    .await;
    assert_kind(&expect_err(outcome, "pre-cancelled call"), ErrorKind::Cancelled);
    assert!(elapsed < Duration::from_millis(900), "took {elapsed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_request_timeout_fails_promptly_and_cancels_on_the_wire() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.connect().await.unwrap();
    let (outcome, elapsed) = timed(
        Duration::from_secs(3),
        client.call_tool("hang", None, &with_timeout(Duration::from_millis(200))),
    )
    .await;
    let err = expect_err(outcome, "hang with a 200 ms timeout");
    assert_kind(&err, ErrorKind::Timeout);
    assert!(
        elapsed >= Duration::from_millis(190) && elapsed < Duration::from_millis(700),
        "timed out after {elapsed:?}"
    );
    let hang_id = fx.wire.tool_calls("hang")[0]["id"].clone();
    assert_eq!(cancelled_ids(&client).await, vec![hang_id]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_default_timeout_applies_and_zero_means_none() {
    let fx = Fixture::modern(&[]);
    let client = fx.client_with(|c| c.request_timeout = Duration::from_millis(200));
    let err = expect_err(
        client.call_tool("hang", None, &RequestOptions::default()).await,
        "hang under the client default",
    );
    assert_kind(&err, ErrorKind::Timeout);
    // An explicit zero disables the timeout: a 400 ms call outlives the 200 ms default.
    let slow = client
        .call_tool("slow", Some(json!({"ms": 400})), &with_timeout(Duration::ZERO))
        .await
        .unwrap();
    assert_eq!(text(&slow), "slept 400");
}

/// `progress{steps: 6, delay_ms: 100}` takes ≈ 600 ms with a report every 100 ms.
fn progress_args() -> Option<Value> {
    Some(json!({"steps": 6, "delay_ms": 100}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_resets_the_timeout_only_when_asked() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.connect().await.unwrap();

    let without = RequestOptions {
        timeout: Some(Duration::from_millis(250)),
        ..Default::default()
    };
    let err = expect_err(
        client.call_tool("progress", progress_args(), &without).await,
        "progress without reset",
    );
    assert_kind(&err, ErrorKind::Timeout);

    let with = RequestOptions {
        timeout: Some(Duration::from_millis(250)),
        reset_timeout_on_progress: true,
        ..Default::default()
    };
    let (outcome, elapsed) = timed(
        Duration::from_secs(5),
        client.call_tool("progress", progress_args(), &with),
    )
    .await;
    assert_eq!(text(&outcome.expect("progress with reset")), "progress done");
    assert!(elapsed > Duration::from_millis(250), "the call only took {elapsed:?}");

    // Resetting needs progress reports, so the request carried a progress token.
    let calls = fx.wire.tool_calls("progress");
    assert_eq!(calls.len(), 2);
    let token = &calls[1]["params"]["_meta"]["progressToken"];
    assert!(token.is_string() || token.is_i64(), "no progressToken: {}", calls[1]);
    assert!(calls[0]["params"]["_meta"].get("progressToken").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_total_caps_a_call_whose_timeout_keeps_resetting() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.connect().await.unwrap();
    let opts = RequestOptions {
        timeout: Some(Duration::from_millis(250)),
        reset_timeout_on_progress: true,
        max_total: Some(Duration::from_millis(400)),
        ..Default::default()
    };
    let (outcome, elapsed) = timed(
        Duration::from_secs(5),
        client.call_tool("progress", Some(json!({"steps": 10, "delay_ms": 100})), &opts),
    )
    .await;
    assert_kind(&expect_err(outcome, "capped progress"), ErrorKind::Timeout);
    assert!(
        elapsed >= Duration::from_millis(380) && elapsed < Duration::from_millis(900),
        "the total cap fired after {elapsed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_callback_receives_every_report() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let reports: Events<Progress> = Events::default();
    let sink = reports.clone();
    let opts = RequestOptions {
        on_progress: Some(Arc::new(move |p: &Progress| sink.push(p.clone()))),
        ..Default::default()
    };
    let result = client
        .call_tool("progress", Some(json!({"steps": 4, "delay_ms": 5})), &opts)
        .await
        .unwrap();
    assert_eq!(text(&result), "progress done");
    let got = reports.snapshot();
    let want: Vec<Progress> = (1..=4)
        .map(|i| Progress {
            progress: i as f64,
            total: Some(4.0),
            message: Some(format!("step {i}")),
        })
        .collect();
    assert_eq!(got, want);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_fails_every_pending_call_at_once_with_the_exit_status_and_stderr() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.connect().await.unwrap();
    let mut hangs = Vec::new();
    for _ in 0..5 {
        let client = client.clone();
        hangs.push(tokio::spawn(async move {
            client.call_tool("hang", None, &RequestOptions::default()).await
        }));
    }
    fx.wire
        .wait_for("five hang calls", |w| {
            w.iter().filter(|m| m["params"]["name"] == "hang").count() == 5
        })
        .await;
    let (errors, elapsed) = timed(Duration::from_secs(3), async {
        let crash = client.call_tool("crash", None, &RequestOptions::default()).await;
        let mut errors = vec![expect_err(crash, "crash")];
        for hang in hangs {
            errors.push(expect_err(hang.await.unwrap(), "hang during a crash"));
        }
        errors
    })
    .await;
    assert!(
        elapsed < Duration::from_millis(900),
        "pending calls failed after {elapsed:?}"
    );
    for err in &errors {
        assert_kind(err, ErrorKind::ServerExited);
        assert!(
            err.message().contains("exited with status 7"),
            "no exit status in {:?}",
            err.message()
        );
        assert!(
            err.message().contains("fixture: crashing on purpose"),
            "no stderr tail in {:?}",
            err.message()
        );
    }
    // The connection stays dead; later calls fail at once instead of hanging.
    let (later, elapsed) = timed(
        Duration::from_secs(3),
        client.call_tool("echo", Some(json!({"text": "x"})), &RequestOptions::default()),
    )
    .await;
    assert_kind(&expect_err(later, "call after the crash"), ErrorKind::ServerExited);
    assert!(elapsed < Duration::from_millis(500));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_on_stdout_fails_pending_calls_with_a_protocol_violation() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.connect().await.unwrap();
    let mut pending = Vec::new();
    for _ in 0..2 {
        let client = client.clone();
        pending.push(tokio::spawn(async move {
            client.call_tool("hang", None, &RequestOptions::default()).await
        }));
    }
    fx.wire
        .wait_for("two hang calls", |w| {
            w.iter().filter(|m| m["params"]["name"] == "hang").count() == 2
        })
        .await;
    let (errors, elapsed) = timed(Duration::from_secs(3), async {
        let garbage = client.call_tool("garbage", None, &RequestOptions::default()).await;
        let mut errors = vec![expect_err(garbage, "garbage")];
        for call in pending {
            errors.push(expect_err(call.await.unwrap(), "hang during garbage"));
        }
        errors
    })
    .await;
    assert!(elapsed < Duration::from_millis(900), "took {elapsed:?}");
    for err in &errors {
        assert_kind(err, ErrorKind::ProtocolViolation);
        assert!(err.message().contains("this is not json"), "{}", err.message());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_fails_pending_calls_and_later_calls_with_closed() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.connect().await.unwrap();
    let pending = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("hang", None, &RequestOptions::default()).await })
    };
    fx.wire
        .wait_for("the hang call", |w| w.iter().any(|m| m["params"]["name"] == "hang"))
        .await;
    within(Duration::from_secs(3), client.close()).await;
    assert!(client.is_closed());
    let err = expect_err(within(Duration::from_secs(1), pending).await.unwrap(), "pending");
    assert_kind(&err, ErrorKind::Closed);
    let err = expect_err(
        client
            .call_tool("echo", Some(json!({"text": "x"})), &RequestOptions::default())
            .await,
        "after close",
    );
    assert_kind(&err, ErrorKind::Closed);
    assert_kind(
        &expect_err(client.connect().await, "connect after close"),
        ErrorKind::Closed,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_close_returns_promptly() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.connect().await.unwrap();
    within(Duration::from_secs(3), client.close()).await;
    // close is documented as idempotent: the second one has nothing left to do.
    within(Duration::from_secs(1), client.close()).await;
    // Concurrent closes both return too.
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.connect().await.unwrap();
    within(Duration::from_secs(3), async {
        tokio::join!(client.close(), client.close());
    })
    .await;
}
