//! Multi Round-Trip Requests (SEP-2322) on a modern connection: automatic driving of
//! `tools/call`, `prompts/get` and `resources/read`; what every retry carries (a new id, the
//! original params, this round's bare `inputResponses`, the byte-exact `requestState`, nothing
//! invented); state-only rounds and their backoff; the round cap; missing handlers and manual
//! driving; isolation from unrelated calls; handler failures, timeouts and concurrency.
//!
//! Not covered: `input_required` answered to a method other than the three — the fixture
//! never does that, so the client's ProtocolViolation path is unreachable here.

mod common;

use common::*;
use mcp_client::{CancelToken, Client, ErrorKind, HandlerError, InputRequest, ManualInput, RequestOptions};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Barrier, Notify};

const ELICIT_ONCE_STATE: &str =
    "st\u{e9}:1 {\"flow\":\"elicit_once\",\"round\":1,\"values\":[]} +/=\\n \u{1F511}#4bf93ac3968345b1";
const PROMPT_STATE: &str =
    "st\u{e9}:1 {\"flow\":\"prompt:needs_input\",\"round\":1,\"values\":[]} +/=\\n \u{1F511}#6f3148e0fcc9ec09";
const RESOURCE_STATE: &str =
    "st\u{e9}:1 {\"flow\":\"resource:needs-input\",\"round\":1,\"values\":[]} +/=\\n \u{1F511}#6e57aa8f7932cf65";
const STATE_ONLY_1: &str =
    "st\u{e9}:1 {\"flow\":\"state_only\",\"round\":1,\"values\":[]} +/=\\n \u{1F511}#c6b94583174a10c3";
const STATE_ONLY_2: &str =
    "st\u{e9}:2 {\"flow\":\"state_only\",\"round\":2,\"values\":[]} +/=\\n \u{1F511}#302f6f6621b7e02c";

/// The `requestState` the server issued in answer to `leg` (read from the tap).
async fn issued_state(fx: &Fixture, leg: &Value) -> Value {
    let answer = fx.tap().wait_response(&leg["id"]).await;
    assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
    answer["result"]["requestState"].clone()
}

/// Checks a two-leg MRTR exchange of `method` on the wire: the retry re-sends the first leg
/// with exactly `responses` and the state the server issued, which is `state`.
async fn assert_one_round(fx: &Fixture, method: &str, responses: Value, state: &str) {
    let legs = fx.wire.requests(method);
    assert_eq!(legs.len(), 2, "{method}: {legs:#?}");
    assert_retry_of(&legs[0], &legs[1]);
    assert!(legs[0]["params"].get("inputResponses").is_none());
    assert!(legs[0]["params"].get("requestState").is_none());
    assert_eq!(legs[1]["params"]["inputResponses"], responses);
    let issued = issued_state(fx, &legs[0]).await;
    assert_eq!(issued, state, "the fixture issued an unexpected state");
    assert_eq!(
        legs[1]["params"]["requestState"], issued,
        "requestState was not echoed byte for byte"
    );
    // The retry fields are top-level params, never inside _meta.
    let meta = &legs[1]["params"]["_meta"];
    assert!(meta.get("inputResponses").is_none() && meta.get("requestState").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_call_round_is_driven_with_the_same_handler_answer() {
    let fx = Fixture::modern(&[]).tapped();
    let client = fx.client();
    let calls = accept_elicitation(&client, json!({"name": "Ada"}));
    let result = client
        .call_tool("elicit_once", Some(json!({"note": "kept as sent"})), &none())
        .await
        .unwrap();
    assert_eq!(text(&result), "Hello, Ada!");

    let calls = calls.snapshot();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].method, "elicitation/create");
    let params = calls[0].params.as_ref().expect("elicitation params");
    assert_eq!(params["message"], "What is your name?");
    assert_eq!(params["requestedSchema"]["required"], json!(["name"]));

    assert_one_round(
        &fx,
        "tools/call",
        json!({"name": {"action": "accept", "content": {"name": "Ada"}}}),
        ELICIT_ONCE_STATE,
    )
    .await;
    assert_eq!(
        fx.wire.tool_calls("elicit_once")[1]["params"]["arguments"],
        json!({"note": "kept as sent"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decline_is_an_ordinary_answer() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.on_elicitation(|_req: InputRequest| async { Ok(json!({"action": "decline"})) });
    let result = client.call_tool("elicit_once", None, &none()).await.unwrap();
    assert_eq!(text(&result), "Hello, stranger (declined)");
    let legs = fx.wire.tool_calls("elicit_once");
    assert_eq!(
        legs[1]["params"]["inputResponses"],
        json!({"name": {"action": "decline"}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_get_is_driven() {
    let fx = Fixture::modern(&[]).tapped();
    let client = fx.client();
    accept_elicitation(&client, json!({"topic": "rust"}));
    let result = client.get_prompt("needs_input", None, &none()).await.unwrap();
    assert_eq!(result["messages"][0]["content"]["text"], "Topic: rust");
    assert_one_round(
        &fx,
        "prompts/get",
        json!({"topic": {"action": "accept", "content": {"topic": "rust"}}}),
        PROMPT_STATE,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_read_is_driven() {
    let fx = Fixture::modern(&[]).tapped();
    let client = fx.client();
    accept_elicitation(&client, json!({"password": "hunter2"}));
    let result = client.read_resource("fixture://needs-input", &none()).await.unwrap();
    assert_eq!(result["contents"][0]["text"], "secret accepted");
    assert_one_round(
        &fx,
        "resources/read",
        json!({"password": {"action": "accept", "content": {"password": "hunter2"}}}),
        RESOURCE_STATE,
    )
    .await;
}

/// An elicitation handler answering each `three_rounds` step with a, b, c.
fn answer_steps(client: &Client) {
    client.on_elicitation(|req: InputRequest| async move {
        let message = req.params.unwrap_or_default()["message"].to_string();
        let value = ["a", "b", "c"]
            .into_iter()
            .enumerate()
            .find(|(i, _)| message.contains(&format!("Step {} of 3", i + 1)))
            .map(|(_, v)| v)
            .ok_or_else(|| HandlerError::new(format!("unexpected question {message}")))?;
        Ok(json!({"action": "accept", "content": {"value": value}}))
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_retry_carries_only_its_own_round() {
    let fx = Fixture::modern(&[]).tapped();
    let client = fx.client();
    answer_steps(&client);
    let result = client.call_tool("three_rounds", None, &none()).await.unwrap();
    assert_eq!(text(&result), "steps: a,b,c");

    let legs = fx.wire.tool_calls("three_rounds");
    assert_eq!(legs.len(), 4, "{legs:#?}");
    let mut ids: Vec<String> = legs.iter().map(|l| l["id"].to_string()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4, "every leg needs its own id");
    for (n, value) in [(1, "a"), (2, "b"), (3, "c")] {
        let (previous, retry) = (&legs[n - 1], &legs[n]);
        assert_retry_of(&legs[0], retry);
        assert_eq!(
            retry["params"]["inputResponses"],
            json!({ format!("step{n}"): {"action": "accept", "content": {"value": value}} }),
            "leg {n} must carry round {n}'s answer only"
        );
        assert_eq!(retry["params"]["requestState"], issued_state(&fx, previous).await);
    }
    let second = legs[2]["params"]["requestState"].as_str().unwrap();
    assert!(second.starts_with("st\u{e9}:2 {\"flow\":\"three_rounds\",\"round\":2,\"values\":[\"a\"]}"));
    assert!(second.ends_with("#786de8b116c83101"), "{second}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_state_issued_means_none_is_sent() {
    let fx = Fixture::modern(&[]).tapped();
    let client = fx.client();
    accept_elicitation(&client, json!({"ok": true}));
    let result = client.call_tool("no_state", None, &none()).await.unwrap();
    assert_eq!(text(&result), "no state ok");
    let legs = fx.wire.tool_calls("no_state");
    assert_eq!(legs.len(), 2);
    assert_retry_of(&legs[0], &legs[1]);
    let first_answer = fx.tap().wait_response(&legs[0]["id"]).await;
    assert!(first_answer["result"].get("requestState").is_none());
    assert!(
        legs[1]["params"].get("requestState").is_none(),
        "the client invented a requestState: {}",
        legs[1]
    );
    assert_eq!(
        legs[1]["params"]["inputResponses"],
        json!({"ok": {"action": "accept", "content": {"ok": true}}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_only_rounds_echo_the_state_after_a_backoff() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.connect().await.unwrap();
    let (outcome, elapsed) = timed(Duration::from_secs(5), client.call_tool("state_only", None, &none())).await;
    assert_eq!(text(&outcome.unwrap()), "done after 2 state-only rounds");
    assert!(
        elapsed >= Duration::from_millis(150),
        "two state-only rounds must back off 50 + 100 ms, took {elapsed:?}"
    );
    let legs = fx.wire.tool_calls("state_only");
    assert_eq!(legs.len(), 3);
    for (leg, state) in legs[1..].iter().zip([STATE_ONLY_1, STATE_ONLY_2]) {
        assert_retry_of(&legs[0], leg);
        assert_eq!(leg["params"]["requestState"], state);
        assert!(leg["params"].get("inputResponses").is_none(), "{leg}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_round_cap_stops_after_exactly_cap_plus_one_requests() {
    let fx = Fixture::modern(&[]);
    let client = fx.client_with(|c| c.input_required_max_rounds = 3);
    let calls = accept_elicitation(&client, json!({"value": "again"}));
    let err = expect_err(client.call_tool("always_input", None, &none()).await, "always_input");
    assert_kind(&err, ErrorKind::InputRoundsExceeded);
    let data = err.input_required_data().expect("the last round's data");
    assert_eq!(data.request_state.as_deref(), Some("loop-4"));
    assert_eq!(data.input_requests["again"]["method"], "elicitation/create");
    assert_eq!(data.result["resultType"], "input_required");
    assert_eq!(data.result["requestState"], "loop-4");

    let legs = fx.wire.tool_calls("always_input");
    assert_eq!(legs.len(), 4, "cap 3 means the first leg plus 3 retries");
    let states: Vec<Value> = legs.iter().map(|l| l["params"]["requestState"].clone()).collect();
    assert_eq!(
        states,
        vec![Value::Null, json!("loop-1"), json!("loop-2"), json!("loop-3")]
    );
    assert_eq!(calls.len(), 3, "the handler runs once per retried round");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_cap_is_ten_rounds() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    accept_elicitation(&client, json!({"value": "again"}));
    let err = expect_err(client.call_tool("always_input", None, &none()).await, "always_input");
    assert_kind(&err, ErrorKind::InputRoundsExceeded);
    assert_eq!(fx.wire.tool_calls("always_input").len(), 11);
    assert_eq!(
        err.input_required_data().unwrap().request_state.as_deref(),
        Some("loop-11")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_handler_the_call_returns_input_required_after_one_request() {
    let fx = Fixture::modern(&[]).tapped();
    // Declared as answered by hand: the fixture, like SDK servers, asks only for what is declared.
    let client = fx.client_with(|c| c.manual_input = ManualInput::from_json(&json!(["elicitation"])).unwrap());
    let err = expect_err(client.call_tool("elicit_once", None, &none()).await, "elicit_once");
    assert_kind(&err, ErrorKind::InputRequired);
    let data = err.input_required_data().expect("input required data");
    assert_eq!(data.request_state.as_deref(), Some(ELICIT_ONCE_STATE));
    assert_eq!(data.input_requests["name"]["method"], "elicitation/create");
    assert_eq!(data.input_requests["name"]["params"]["message"], "What is your name?");
    let legs = fx.wire.tool_calls("elicit_once");
    assert_eq!(legs.len(), 1, "nothing may be retried without answers");
    // The raw result is exactly what the server sent.
    let sent = fx.tap().wait_response(&legs[0]["id"]).await;
    assert_eq!(data.result, sent["result"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_with_one_unhandled_kind_runs_no_handler_at_all() {
    let fx = Fixture::modern(&[]);
    // Sampling is declared as answered by hand, elicitation by a handler.
    let client = fx.client_with(|c| c.manual_input = ManualInput::from_json(&json!(["sampling"])).unwrap());
    let calls = accept_elicitation(&client, json!({"confirmed": true}));
    let err = expect_err(
        client.call_tool("elicit_and_sample", None, &none()).await,
        "elicit_and_sample with only elicitation",
    );
    assert_kind(&err, ErrorKind::InputRequired);
    assert!(err.message().contains("sampling/createMessage"), "{}", err.message());
    let data = err.input_required_data().unwrap();
    let mut keys: Vec<&String> = data.input_requests.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["confirm", "summary"], "the full round is reported");
    assert!(
        calls.is_empty(),
        "no handler may run for a round that cannot be completed"
    );
    assert_eq!(fx.wire.tool_calls("elicit_and_sample").len(), 1);

    let err = expect_err(client.call_tool("sample_only", None, &none()).await, "sample_only");
    assert_kind(&err, ErrorKind::InputRequired);
    assert_eq!(fx.wire.tool_calls("sample_only").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manual_driving_finishes_the_call() {
    let fx = Fixture::modern(&[]);
    // Declared as answered by hand: the fixture, like SDK servers, asks only for what is declared.
    let client = fx.client_with(|c| c.manual_input = ManualInput::from_json(&json!(["elicitation"])).unwrap());
    let err = expect_err(client.call_tool("elicit_once", None, &none()).await, "first leg");
    let data = err.input_required_data().unwrap().clone();
    let responses = json!({"name": {"action": "accept", "content": {"name": "Manual"}}});
    let opts = RequestOptions {
        input_responses: Some(responses.clone()),
        request_state: data.request_state.clone(),
        ..Default::default()
    };
    let result = client.call_tool("elicit_once", None, &opts).await.unwrap();
    assert_eq!(text(&result), "Hello, Manual!");
    let legs = fx.wire.tool_calls("elicit_once");
    assert_eq!(legs.len(), 2);
    assert_retry_of(&legs[0], &legs[1]);
    assert_eq!(legs[1]["params"]["inputResponses"], responses);
    assert_eq!(legs[1]["params"]["requestState"], ELICIT_ONCE_STATE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manual_first_leg_then_automatic_rounds_drop_the_manual_fields() {
    let fx = Fixture::modern(&[]);
    // Declared as answered by hand: the fixture, like SDK servers, asks only for what is declared.
    let client = fx.client_with(|c| c.manual_input = ManualInput::from_json(&json!(["elicitation"])).unwrap());
    let err = expect_err(client.call_tool("three_rounds", None, &none()).await, "first leg");
    let data = err.input_required_data().unwrap().clone();
    answer_steps(&client);
    let opts = RequestOptions {
        input_responses: Some(json!({"step1": {"action": "accept", "content": {"value": "m"}}})),
        request_state: data.request_state.clone(),
        ..Default::default()
    };
    let result = client.call_tool("three_rounds", None, &opts).await.unwrap();
    assert_eq!(text(&result), "steps: m,b,c");
    let legs = fx.wire.tool_calls("three_rounds");
    assert_eq!(legs.len(), 4);
    for (n, leg) in legs.iter().enumerate().skip(2) {
        let keys: Vec<&String> = leg["params"]["inputResponses"].as_object().unwrap().keys().collect();
        assert_eq!(keys, [&format!("step{n}")], "leg {n} accumulated answers: {leg}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roots_rounds_pass_no_params_to_the_handler() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let calls = answer_roots(&client, &["file:///a", "file:///b"]);
    let result = client.call_tool("roots", None, &none()).await.unwrap();
    assert_eq!(text(&result), "roots: file:///a,file:///b");
    let calls = calls.snapshot();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].method, "roots/list");
    assert!(
        calls[0].params.is_none(),
        "roots/list carried no params: {:?}",
        calls[0].params
    );
    let legs = fx.wire.tool_calls("roots");
    assert_eq!(
        legs[1]["params"]["inputResponses"],
        json!({"roots": roots_result(&["file:///a", "file:///b"])})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unrelated_calls_never_carry_retry_fields() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let entered = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    {
        let (entered, release) = (entered.clone(), release.clone());
        client.on_elicitation(move |req: InputRequest| {
            let (entered, release) = (entered.clone(), release.clone());
            async move {
                let field = req.params.unwrap_or_default()["requestedSchema"]["required"][0]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                if field == "name" {
                    entered.notify_one();
                    release.notified().await;
                }
                Ok(json!({"action": "accept", "content": { field.clone(): format!("{field}-answer") }}))
            }
        });
    }
    let mrtr = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("elicit_once", None, &none()).await })
    };
    within(Duration::from_secs(5), entered.notified()).await;

    // While the MRTR call waits in its handler: unrelated calls, including another MRTR flow.
    let echo = client
        .call_tool("echo", Some(json!({"text": "unrelated"})), &none())
        .await
        .unwrap();
    assert_eq!(text(&echo), "unrelated");
    client.list(mcp_client::ListKind::Tools, None, &none()).await.unwrap();
    let prompt = client.get_prompt("needs_input", None, &none()).await.unwrap();
    assert_eq!(prompt["messages"][0]["content"]["text"], "Topic: topic-answer");
    release.notify_one();
    let result = within(Duration::from_secs(5), mrtr).await.unwrap().unwrap();
    assert_eq!(text(&result), "Hello, name-answer!");

    for m in fx.wire.messages() {
        let params = &m["params"];
        let retry = params.get("inputResponses").is_some() || params.get("requestState").is_some();
        let is_own_retry = match m["method"].as_str() {
            Some("tools/call") => params["name"] == "elicit_once",
            Some("prompts/get") => true,
            _ => false,
        };
        assert!(!retry || is_own_retry, "an unrelated request carries retry fields: {m}");
    }
    let prompt_legs = fx.wire.requests("prompts/get");
    assert_eq!(prompt_legs.len(), 2);
    assert_eq!(
        prompt_legs[1]["params"]["inputResponses"],
        json!({"topic": {"action": "accept", "content": {"topic": "topic-answer"}}})
    );
    let tool_legs = fx.wire.tool_calls("elicit_once");
    assert_eq!(
        tool_legs[1]["params"]["inputResponses"],
        json!({"name": {"action": "accept", "content": {"name": "name-answer"}}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_handler_ends_the_call_and_nothing_more_is_sent() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.on_elicitation(|_req: InputRequest| async { Err::<Value, _>(HandlerError::new("the user walked away")) });
    let err = expect_err(client.call_tool("elicit_once", None, &none()).await, "elicit_once");
    assert_kind(&err, ErrorKind::HandlerFailed);
    assert!(err.message().contains("the user walked away"), "{}", err.message());
    // A later request proves everything the client sent before it has been read.
    client
        .call_tool("echo", Some(json!({"text": "sync"})), &none())
        .await
        .unwrap();
    assert_eq!(fx.wire.tool_calls("elicit_once").len(), 1);
    assert!(fx.wire.notifications("notifications/cancelled").is_empty());
    assert_eq!(
        fx.wire.methods(),
        ["server/discover", "tools/call", "tools/call"],
        "unexpected traffic"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_handlers_of_one_round_run_concurrently() {
    let fx = Fixture::modern(&[]);
    let client = fx.client_with(|c| c.request_timeout = Duration::from_secs(3));
    let barrier = Arc::new(Barrier::new(2));
    {
        let barrier = barrier.clone();
        client.on_elicitation(move |_req: InputRequest| {
            let barrier = barrier.clone();
            async move {
                barrier.wait().await;
                Ok(json!({"action": "accept", "content": {"confirmed": true}}))
            }
        });
    }
    {
        let barrier = barrier.clone();
        client.on_sampling(move |_req: InputRequest| {
            let barrier = barrier.clone();
            async move {
                barrier.wait().await;
                Ok(sampling_result("Fixture summary"))
            }
        });
    }
    let result = within(
        Duration::from_secs(5),
        client.call_tool("elicit_and_sample", None, &none()),
    )
    .await
    .expect("both handlers must be running at the same time to pass the barrier");
    assert_eq!(text(&result), "confirm=accept; summary=Fixture summary");
    let legs = fx.wire.tool_calls("elicit_and_sample");
    assert_eq!(legs.len(), 2);
    assert_eq!(
        legs[1]["params"]["inputResponses"],
        json!({
            "confirm": {"action": "accept", "content": {"confirmed": true}},
            "summary": sampling_result("Fixture summary"),
        })
    );
}

/// An elicitation handler that keeps its request's cancel token and never answers.
fn hold_elicitation(client: &Client) -> Events<CancelToken> {
    let tokens = Events::default();
    let seen = tokens.clone();
    client.on_elicitation(move |req: InputRequest| {
        seen.push(req.cancel.clone());
        std::future::pending::<Result<Value, HandlerError>>()
    });
    tokens
}

/// Waits until the held handler runs and returns its cancel token.
async fn held_token(tokens: &Events<CancelToken>) -> CancelToken {
    tokens.wait_for("the elicitation handler", |_| true).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_sibling_cancels_the_other_handler() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let tokens = hold_elicitation(&client);
    {
        let tokens = tokens.clone();
        client.on_sampling(move |_req: InputRequest| {
            let tokens = tokens.clone();
            async move {
                held_token(&tokens).await;
                Err::<Value, _>(HandlerError::new("no model available"))
            }
        });
    }
    let (outcome, elapsed) = timed(
        Duration::from_secs(5),
        client.call_tool("elicit_and_sample", None, &none()),
    )
    .await;
    let err = expect_err(outcome, "elicit_and_sample");
    assert_kind(&err, ErrorKind::HandlerFailed);
    assert!(err.message().contains("no model available"), "{}", err.message());
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
    assert!(
        held_token(&tokens).await.is_cancelled(),
        "the sibling handler was not told its answer is no longer wanted"
    );
    assert_eq!(fx.wire.tool_calls("elicit_and_sample").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_timeout_bounds_the_handlers_and_cancels_them() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let tokens = hold_elicitation(&client);
    let opts = RequestOptions {
        timeout: Some(Duration::from_millis(300)),
        ..Default::default()
    };
    let (outcome, elapsed) = timed(Duration::from_secs(5), client.call_tool("elicit_once", None, &opts)).await;
    assert_kind(&expect_err(outcome, "elicit_once"), ErrorKind::Timeout);
    assert!(elapsed < Duration::from_secs(1), "took {elapsed:?}");
    assert!(held_token(&tokens).await.is_cancelled());
    assert_eq!(fx.wire.tool_calls("elicit_once").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_call_cancels_its_handlers() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let tokens = hold_elicitation(&client);
    let token = CancelToken::new();
    let opts = RequestOptions {
        cancel: Some(token.clone()),
        ..Default::default()
    };
    let call = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("elicit_once", None, &opts).await })
    };
    let handler_token = held_token(&tokens).await;
    token.cancel();
    let err = expect_err(within(Duration::from_secs(2), call).await.unwrap(), "cancelled");
    assert_kind(&err, ErrorKind::Cancelled);
    assert!(handler_token.is_cancelled());
    assert_eq!(fx.wire.tool_calls("elicit_once").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_interrupts_a_call_waiting_on_its_handlers() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let tokens = hold_elicitation(&client);
    let call = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("elicit_once", None, &none()).await })
    };
    let handler_token = held_token(&tokens).await;
    within(Duration::from_secs(3), client.close()).await;
    let err = expect_err(within(Duration::from_secs(1), call).await.unwrap(), "closed mid-round");
    assert_kind(&err, ErrorKind::Closed);
    assert!(handler_token.is_cancelled(), "the handler was not told to stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manual_mrtr_fields_on_a_legacy_connection_fail_before_anything_is_sent() {
    let fx = Fixture::legacy(&[]);
    let client = fx.client();
    client.connect().await.unwrap();
    for opts in [
        RequestOptions {
            input_responses: Some(json!({"a": {"action": "accept"}})),
            ..Default::default()
        },
        RequestOptions {
            request_state: Some("s".into()),
            ..Default::default()
        },
    ] {
        let err = expect_err(
            client.call_tool("echo", Some(json!({"text": "x"})), &opts).await,
            "legacy",
        );
        assert_kind(&err, ErrorKind::InvalidArgument);
        assert!(err.message().contains("modern"), "{}", err.message());
    }
    assert!(fx.wire.requests("tools/call").is_empty());
}
