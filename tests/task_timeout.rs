//! The call's timeout bounds the wait for a task (tasks extension, SEP-2663), over stdio and
//! HTTP: a task that stays `working` ends the call with `Timeout` at the call's timeout (per
//! call or client-wide), `tasks/cancel` goes out, and nothing polls afterwards; progress (a
//! change of status or status message) restarts the bound only when the call asked for it;
//! `max_total` ends the wait and leaves the task for `resume_task`, whose own timeout bounds it
//! the same way. Timeout messages name the limit that expired and the setting controlling it.

mod common;

use common::*;
use mcp_client::{ClientConfig, ConnectMode, ErrorKind, HttpConfig, RequestOptions, TransportConfig};
use serde_json::{json, Value};
use std::time::Duration;

/// A safety cap on every call here: without the fix a task call waits until it.
const CAP: Duration = Duration::from_secs(6);

/// The methods and params of every request the fixture received.
type Sent = Box<dyn Fn() -> Vec<Value>>;

fn stdio_sent(fx: &Fixture) -> Sent {
    let path = fx.wire.path();
    Box::new(move || {
        std::fs::read_to_string(&path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|m| m.get("id").is_some() && m.get("method").is_some())
            .collect()
    })
}

fn http_sent(record: &TempPath) -> Sent {
    let path = record.as_string();
    Box::new(move || {
        std::fs::read_to_string(&path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .map(|r| r["body"].clone())
            .filter(|m| m.get("id").is_some() && m.get("method").is_some())
            .collect()
    })
}

fn count(sent: &Sent, method: &str, task: &str) -> usize {
    sent()
        .iter()
        .filter(|m| m["method"] == method && m["params"]["taskId"] == task)
        .count()
}

/// The id of the task the fixture created last (the newest `tasks/get` names it).
fn last_task(sent: &Sent) -> String {
    let all = sent();
    let get = all
        .iter()
        .rev()
        .find(|m| m["method"] == "tasks/get")
        .expect("a tasks/get");
    get["params"]["taskId"].as_str().unwrap().to_string()
}

/// After the call ended: `tasks/cancel` went out for `task`, and over a window of six poll
/// intervals no `tasks/get` follows.
async fn cancelled_and_quiet(sent: &Sent, task: &str) {
    assert_eq!(
        count(sent, "tasks/cancel", task),
        1,
        "tasks/cancel for {task}: {:#?}",
        sent()
    );
    let gets = count(sent, "tasks/get", task);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        count(sent, "tasks/get", task),
        gets,
        "still polling after the call ended"
    );
}

fn per_call(ms: u64) -> RequestOptions {
    RequestOptions {
        timeout: Some(Duration::from_millis(ms)),
        max_total: Some(CAP),
        ..none()
    }
}

fn capped() -> RequestOptions {
    RequestOptions {
        max_total: Some(CAP),
        ..none()
    }
}

/// A task that stays working, under the call's own timeout: `Timeout` at the bound, naming it.
async fn stuck_task_ends_at_the_call_timeout(client: &mcp_client::Client, sent: &Sent) {
    let (outcome, took) = timed(CAP * 2, client.call_tool("task_stuck", None, &per_call(400))).await;
    let err = expect_err(outcome, "task_stuck");
    assert_kind(&err, ErrorKind::Timeout);
    assert!(took >= Duration::from_millis(400), "ended early: {took:?}");
    assert!(took < Duration::from_millis(2500), "ended late: {took:?}");
    let task = last_task(sent);
    let message = err.message();
    assert!(
        message.starts_with(&format!(
            "tools/call (task {task:?}, still working) timed out after 400 ms: the limit is this call's timeout (timeout_ms"
        )),
        "{message}"
    );
    assert!(message.ends_with("; tasks/cancel sent"), "{message}");
    cancelled_and_quiet(sent, &task).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_task_ends_at_the_per_call_timeout_over_stdio() {
    let fx = Fixture::modern(&[]);
    let client = fx.client_with(|c| c.tasks = true);
    let sent = stdio_sent(&fx);
    stuck_task_ends_at_the_call_timeout(&client, &sent).await;
    // The server saw the cancel: the task ended there.
    let task = last_task(&sent);
    let now = client.get_task(&task, &none()).await.unwrap();
    assert_eq!(now["status"], "cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_task_ends_at_the_per_call_timeout_over_http() {
    let record = TempPath::new("task-timeout-http.jsonl");
    let server = HttpFixture::start(&["--record", &record.as_string()]);
    let mut config = ClientConfig::new(TransportConfig::Http(HttpConfig::new(server.1.clone())));
    config.mode = ConnectMode::Modern;
    config.tasks = true;
    let client = mcp_client::Client::new(config);
    let sent = http_sent(&record);
    stuck_task_ends_at_the_call_timeout(&client, &sent).await;
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_wide_request_timeout_bounds_a_task_call() {
    let fx = Fixture::modern(&[]);
    let client = fx.client_with(|c| {
        c.tasks = true;
        c.request_timeout = Duration::from_millis(500);
    });
    let sent = stdio_sent(&fx);
    let (outcome, took) = timed(CAP * 2, client.call_tool("task_slow", None, &capped())).await;
    let err = expect_err(outcome, "task_slow");
    assert_kind(&err, ErrorKind::Timeout);
    assert!(
        took >= Duration::from_millis(500) && took < Duration::from_millis(2500),
        "{took:?}"
    );
    assert!(
        err.message()
            .contains("timed out after 500 ms: the limit is request_timeout_ms in the configuration"),
        "{}",
        err.message()
    );
    cancelled_and_quiet(&sent, &last_task(&sent)).await;
}

/// `reset_timeout_on_progress`: a task whose status message changes on every poll outlives
/// the timeout until the total cap ends the wait (which leaves the task running); a task
/// whose status never changes still ends at the timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_restarts_the_bound_only_when_the_call_asked() {
    let fx = Fixture::modern(&[]);
    let client = fx.client_with(|c| c.tasks = true);
    let sent = stdio_sent(&fx);
    let resetting = RequestOptions {
        timeout: Some(Duration::from_millis(300)),
        reset_timeout_on_progress: true,
        max_total: Some(Duration::from_millis(1200)),
        ..none()
    };
    let (outcome, took) = timed(CAP, client.call_tool("task_slow", None, &resetting)).await;
    let err = expect_err(outcome, "task_slow");
    assert_kind(&err, ErrorKind::Timeout);
    assert!(
        took >= Duration::from_millis(1100),
        "the progress did not restart the bound: {took:?}"
    );
    assert!(
        err.message().contains("total cap of 1200 ms ran out (max_total_ms"),
        "{}",
        err.message()
    );
    assert!(err.message().contains("goes on: resume_task"), "{}", err.message());
    let slow = last_task(&sent);
    assert_eq!(
        count(&sent, "tasks/cancel", &slow),
        0,
        "the total cap leaves the task running"
    );

    let (outcome, took) = timed(CAP, client.call_tool("task_stuck", None, &resetting)).await;
    assert_kind(&expect_err(outcome, "task_stuck"), ErrorKind::Timeout);
    assert!(
        took < Duration::from_millis(1000),
        "no progress, yet the bound moved: {took:?}"
    );
    cancelled_and_quiet(&sent, &last_task(&sent)).await;

    // Without the request, the same changing task ends at the timeout.
    let plain = RequestOptions {
        reset_timeout_on_progress: false,
        ..resetting
    };
    let (outcome, took) = timed(CAP, client.call_tool("task_slow", None, &plain)).await;
    assert_kind(&expect_err(outcome, "task_slow"), ErrorKind::Timeout);
    assert!(took < Duration::from_millis(1000), "{took:?}");
    cancelled_and_quiet(&sent, &last_task(&sent)).await;
    // The task left by the total cap is still there, and a resume is bounded the same way.
    assert_eq!(client.get_task(&slow, &none()).await.unwrap()["status"], "working");
    let (outcome, took) = timed(CAP, client.resume_task(&slow, &per_call(300))).await;
    let err = expect_err(outcome, "resume_task");
    assert_kind(&err, ErrorKind::Timeout);
    assert!(took < Duration::from_millis(1500), "{took:?}");
    assert!(
        err.message().starts_with(&format!(
            "resume_task (task {slow:?}, still working) timed out after 300 ms"
        )),
        "{}",
        err.message()
    );
    cancelled_and_quiet(&sent, &slow).await;
}

/// A task within its bound completes as before; the per-poll bound does not cut it short.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_finishes_within_the_timeout_completes() {
    let fx = Fixture::modern(&[]);
    let client = fx.client_with(|c| c.tasks = true);
    let result = client
        .call_tool("task_echo", Some(json!({"text": "in time"})), &per_call(2000))
        .await
        .unwrap();
    assert_eq!(text(&result), "task: in time");
    assert!(fx.wire.requests("tasks/cancel").is_empty());
}

/// A plain call's timeout says which limit expired and the setting behind it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_timeout_names_its_limit_and_setting() {
    let fx = Fixture::modern(&[]);
    let client = fx.client_with(|c| c.request_timeout = Duration::from_millis(300));
    let slow = json!({"ms": 2000});
    let err = expect_err(client.call_tool("slow", Some(slow.clone()), &none()).await, "slow");
    assert_kind(&err, ErrorKind::Timeout);
    let id = fx.wire.tool_calls("slow")[0]["id"].clone();
    assert_eq!(
        err.message(),
        format!(
            "tools/call (request {id}) timed out after 300 ms: the limit is request_timeout_ms in the configuration \
             (per call: timeout_ms in the call options)"
        )
    );
    let err = expect_err(
        client.call_tool("slow", Some(slow.clone()), &per_call(200)).await,
        "slow",
    );
    assert!(
        err.message().ends_with(
            "timed out after 200 ms: the limit is this call's timeout (timeout_ms in its call options; \
             client-wide: request_timeout_ms)"
        ),
        "{}",
        err.message()
    );
    let total = RequestOptions {
        max_total: Some(Duration::from_millis(150)),
        ..none()
    };
    let err = expect_err(client.call_tool("slow", Some(slow), &total).await, "slow");
    assert!(
        err.message()
            .ends_with("timed out: the call's total cap of 150 ms ran out (max_total_ms in its call options)"),
        "{}",
        err.message()
    );
}
