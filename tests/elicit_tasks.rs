//! Against the fixture server: URL-mode elicitation (modern
//! `inputRequests` with `mode: "url"`, legacy pushed requests, -32042 and its completion
//! notification), the tasks extension (SEP-2663: polling at `pollIntervalMs`, status
//! listeners, input through the MRTR handlers with de-duplicated keys, failure, cancel,
//! resume by id), and manual input mode against a server that enforces declared capabilities.

mod common;

use common::*;
use mcp_client::{
    CancelToken, ElicitationModes, ErrorKind, InputRequest, ManualInput, RequestOptions, SubscriptionEvent,
    TaskStatusFn,
};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

fn url_handler(
    calls: Calls,
    answer: Value,
) -> impl Fn(InputRequest) -> std::future::Ready<Result<Value, mcp_client::HandlerError>> {
    move |req: InputRequest| {
        calls.push(req);
        std::future::ready(Ok(answer.clone()))
    }
}

fn caps_of(request: &Value) -> Value {
    request["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"].clone()
}

// --- URL-mode elicitation -----------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_url_elicitation_reaches_a_url_handler_and_accept_carries_no_content() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let calls = Calls::default();
    // The handler "accepts" with content: the library drops it (URL accepts carry none).
    let answer = json!({"action": "accept", "content": {"ignored": true}});
    client
        .on_elicitation_modes(ElicitationModes::URL, url_handler(calls.clone(), answer))
        .unwrap();
    let result = client.call_tool("url_login", None, &none()).await.unwrap();
    assert_eq!(text(&result), "url login: accept");
    let seen = calls.snapshot();
    assert_eq!(seen.len(), 1);
    let params = seen[0].params.clone().unwrap();
    assert_eq!(params["mode"], "url");
    assert!(params["url"].as_str().unwrap().starts_with("https://"));
    let legs = fx.wire.tool_calls("url_login");
    assert_eq!(caps_of(&legs[0])["elicitation"], json!({"url": {}}));
    assert_eq!(
        legs[1]["params"]["inputResponses"]["login"],
        json!({"action": "accept"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_only_handler_declares_form_and_is_never_handed_a_url_request() {
    let fx = Fixture::modern(&["--lax-capabilities"]);
    let client = fx.client();
    let calls = accept_elicitation(&client, json!({"name": "Ada"}));
    let err = expect_err(client.call_tool("url_login", None, &none()).await, "url_login");
    assert_kind(&err, ErrorKind::InputRequired);
    assert!(calls.is_empty(), "a form handler must not answer a URL request");
    let data = err.input_required_data().unwrap();
    assert_eq!(data.unanswered["login"]["params"]["mode"], "url");
    assert!(err.message().contains("mode url"), "{}", err.message());
    assert_eq!(
        caps_of(&fx.wire.tool_calls("url_login")[0])["elicitation"],
        json!({"form": {}})
    );
}

/// A URL-only handler declares URL mode alone, so a server that checks capabilities never asks
/// it for form input: the form request goes down the "not declared" path (-32021), and the
/// handler is not called.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_only_handler_declares_url_alone_and_is_never_handed_a_form_request() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let calls = Calls::default();
    let url_only = ElicitationModes {
        url: true,
        ..Default::default()
    };
    client
        .on_elicitation_modes(url_only, url_handler(calls.clone(), json!({"action": "accept"})))
        .unwrap();
    let err = expect_err(client.call_tool("elicit_once", None, &none()).await, "elicit_once");
    assert_kind(&err, ErrorKind::CapabilityMissing);
    assert!(
        err.message().contains("register an elicitation handler for form mode"),
        "{}",
        err.message()
    );
    assert!(calls.is_empty(), "a URL handler must not answer a form request");
    assert_eq!(
        caps_of(&fx.wire.tool_calls("elicit_once")[0])["elicitation"],
        json!({"url": {}})
    );
    // Its own mode still reaches it.
    assert_eq!(
        text(&client.call_tool("url_login", None, &none()).await.unwrap()),
        "url login: accept"
    );
    assert_eq!(calls.snapshot().len(), 1);

    // Legacy: initialize declares URL mode alone, and a pushed form request is not handed over
    // (it gets the answer of a request without a handler).
    let fx = Fixture::legacy(&[]);
    let legacy = fx.client();
    let calls = Calls::default();
    legacy
        .on_elicitation_modes(
            ElicitationModes::URL,
            url_handler(calls.clone(), json!({"action": "accept"})),
        )
        .unwrap();
    // The legacy fixture asks anyway (it checks only that `elicitation` is declared) and turns
    // the client's refusal into a tool error.
    let refused = legacy.call_tool("elicit_once", None, &none()).await.unwrap();
    assert_eq!(refused["isError"], true);
    assert!(
        text(&refused).contains("Method not found: elicitation/create"),
        "{refused}"
    );
    assert!(calls.is_empty(), "a URL handler must not answer a form request");
    assert_eq!(
        fx.wire.requests("initialize")[0]["params"]["capabilities"]["elicitation"],
        json!({"url": {}})
    );
}

/// A handler that could never be asked is refused at registration, and nothing is registered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_no_request_could_reach_is_refused() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let calls = Calls::default();
    let err = client
        .on_elicitation_modes(ElicitationModes::default(), url_handler(calls.clone(), json!({})))
        .unwrap_err();
    assert_kind(&err, ErrorKind::InvalidArgument);
    assert!(err.message().contains("one mode at least"), "{}", err.message());
    assert_eq!(client.capabilities(mcp_client::Era::Modern), json!({}));

    // An override that declares form mode alone cannot carry a URL handler's requests.
    let custom = fx.client_with(|c| c.capabilities = Some(json!({"elicitation": {}})));
    let err = custom
        .on_elicitation_modes(ElicitationModes::URL, url_handler(calls.clone(), json!({})))
        .unwrap_err();
    assert_kind(&err, ErrorKind::InvalidArgument);
    assert!(err.message().contains("lacks `elicitation.url`"), "{}", err.message());
    custom
        .on_elicitation_modes(ElicitationModes::FORM, url_handler(calls, json!({})))
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_modes_are_declared_when_registered_for_both() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let calls = Calls::default();
    client
        .on_elicitation_modes(
            ElicitationModes::BOTH,
            url_handler(calls.clone(), json!({"action": "accept", "content": {"name": "Ada"}})),
        )
        .unwrap();
    assert_eq!(
        text(&client.call_tool("elicit_once", None, &none()).await.unwrap()),
        "Hello, Ada!"
    );
    assert_eq!(
        text(&client.call_tool("url_login", None, &none()).await.unwrap()),
        "url login: accept"
    );
    let caps = caps_of(&fx.wire.tool_calls("url_login")[0]);
    assert_eq!(caps["elicitation"], json!({"form": {}, "url": {}}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_url_elicitation_is_pushed_to_the_handler_and_completion_is_notified() {
    let fx = Fixture::legacy(&[]);
    let client = fx.client();
    let notes: Events<(String, Value)> = Events::default();
    let seen = notes.clone();
    client.on_notification(Some(Arc::new(move |m: &str, p: &Value| {
        seen.push((m.to_string(), p.clone()))
    })));
    let calls = Calls::default();
    client
        .on_elicitation_modes(
            ElicitationModes::URL,
            url_handler(calls.clone(), json!({"action": "accept"})),
        )
        .unwrap();
    let result = client.call_tool("url_login", None, &none()).await.unwrap();
    assert_eq!(text(&result), "url login: accept");
    let params = calls.snapshot()[0].params.clone().unwrap();
    assert_eq!(params["elicitationId"], "fixture-elicitation-1");
    let (_, p) = notes
        .wait_for("elicitation/complete", |(m, _)| {
            m == "notifications/elicitation/complete"
        })
        .await;
    assert_eq!(p["elicitationId"], "fixture-elicitation-1");
    let init = &fx.wire.requests("initialize")[0];
    assert_eq!(init["params"]["capabilities"]["elicitation"], json!({"url": {}}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_minus_32042_is_url_elicitation_required_with_its_elicitations() {
    let fx = Fixture::legacy(&[]);
    let client = fx.client();
    let err = expect_err(client.call_tool("url_required", None, &none()).await, "url_required");
    assert_kind(&err, ErrorKind::UrlElicitationRequired);
    assert_eq!(err.rpc_error().unwrap().code, -32042);
    let list = err.elicitations().expect("data.elicitations");
    assert_eq!(list[0]["mode"], "url");
    assert_eq!(list[0]["elicitationId"], "fixture-elicitation-1");
    assert!(list[0]["url"].as_str().unwrap().starts_with("https://"));
    // Other errors have none.
    let other = expect_err(client.call_tool("rpc_error", None, &none()).await, "rpc_error");
    assert!(other.elicitations().is_none());
}

// --- Manual input mode ------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_declaration_an_enforcing_server_answers_minus_32021() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let err = expect_err(client.call_tool("elicit_once", None, &none()).await, "elicit_once");
    assert_kind(&err, ErrorKind::CapabilityMissing);
    assert_eq!(err.rpc_error().unwrap().code, -32021);
    // The message says what declares it.
    assert!(
        err.message().ends_with(
            "; register an elicitation handler for form mode (mcp_client_on_elicitation; \
             on_elicitation in the bindings) or list \"elicitation\" in the configuration's manual_input"
        ),
        "{}",
        err.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_request_to_a_form_only_client_names_elicitation_url() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let calls = accept_elicitation(&client, json!({"name": "Ada"}));
    let err = expect_err(client.call_tool("url_login", None, &none()).await, "url_login");
    assert_kind(&err, ErrorKind::CapabilityMissing);
    assert_eq!(
        err.rpc_error().unwrap().data,
        Some(json!({"requiredCapabilities": {"elicitation": {"url": {}}}}))
    );
    let m = err.message();
    assert!(m.contains("URL-mode elicitation (`elicitation.url`)"), "{m}");
    assert!(
        m.contains("\"elicitation.url\" in the configuration's manual_input"),
        "{m}"
    );
    assert!(calls.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manual_input_declares_the_kind_and_lists_the_unanswered_requests() {
    let fx = Fixture::modern(&[]);
    let client = fx.client_with(|c| {
        c.manual_input = ManualInput::from_json(&json!(["elicitation"])).unwrap();
    });
    let err = expect_err(client.call_tool("elicit_once", None, &none()).await, "elicit_once");
    assert_kind(&err, ErrorKind::InputRequired);
    let data = err.input_required_data().unwrap().clone();
    assert_eq!(data.unanswered, data.input_requests);
    assert_eq!(data.unanswered["name"]["method"], "elicitation/create");
    assert_eq!(
        caps_of(&fx.wire.tool_calls("elicit_once")[0])["elicitation"],
        json!({"form": {}})
    );
    let retry = RequestOptions {
        input_responses: Some(json!({"name": {"action": "accept", "content": {"name": "Bo"}}})),
        request_state: data.request_state.clone(),
        ..none()
    };
    let done = client.call_tool("elicit_once", None, &retry).await.unwrap();
    assert_eq!(text(&done), "Hello, Bo!");
}

// --- Tasks ------------------------------------------------------------------------------------

fn task_client(fx: &Fixture) -> mcp_client::Client {
    fx.client_with(|c| c.tasks = true)
}

/// Tasks declared, elicitation answered by hand: `task_input` ends the call with its task
/// waiting in `input_required`.
fn manual_task_client(fx: &Fixture) -> mcp_client::Client {
    fx.client_with(|c| {
        c.tasks = true;
        c.manual_input = ManualInput {
            elicitation: Some(ElicitationModes::FORM),
            ..ManualInput::default()
        };
    })
}

fn recorder() -> (Events<Value>, TaskStatusFn) {
    let events: Events<Value> = Events::default();
    let sink = events.clone();
    (events, Arc::new(move |task: &Value| sink.push(task.clone())))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_polled_at_its_interval_to_its_result_with_status_callbacks() {
    let fx = Fixture::modern(&[]);
    let client = task_client(&fx);
    let (client_events, on_client) = recorder();
    client.on_task_status(Some(on_client));
    let (call_events, on_call) = recorder();
    let opts = RequestOptions {
        on_task_status: Some(on_call),
        ..none()
    };
    let result = client
        .call_tool("task_echo", Some(json!({"text": "hi"})), &opts)
        .await
        .unwrap();
    assert_eq!(text(&result), "task: hi", "{result}");
    assert_ne!(
        result["isError"], true,
        "the fixture saw polls faster than pollIntervalMs"
    );
    let statuses: Vec<Value> = call_events.snapshot().iter().map(|t| t["status"].clone()).collect();
    assert_eq!(statuses, [json!("working"), json!("working"), json!("completed")]);
    assert_eq!(client_events.len(), 3);
    let first = &call_events.snapshot()[0];
    assert_eq!(first["pollIntervalMs"], 50);
    assert_eq!(first["ttlMs"], 60000);
    let call = &fx.wire.tool_calls("task_echo")[0];
    assert_eq!(caps_of(call)["extensions"]["io.modelcontextprotocol/tasks"], json!({}));
    let gets = fx.wire.requests("tasks/get");
    assert_eq!(gets.len(), 2);
    assert!(gets.iter().all(|g| g["params"]["taskId"] == first["taskId"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_declaration_the_call_is_synchronous() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let result = client
        .call_tool("task_echo", Some(json!({"text": "x"})), &none())
        .await
        .unwrap();
    assert_eq!(text(&result), "sync: task_echo x");
    assert_kind(
        &expect_err(client.get_task("task-1", &none()).await, "get_task"),
        ErrorKind::InvalidArgument,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_task_is_its_json_rpc_error() {
    let fx = Fixture::modern(&[]);
    let client = task_client(&fx);
    let err = expect_err(client.call_tool("task_fail", None, &none()).await, "task_fail");
    assert_kind(&err, ErrorKind::Rpc);
    assert_eq!(err.rpc_error().unwrap().code, -32603);
    assert!(err.message().contains("failed"), "{}", err.message());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_input_is_answered_once_per_key_through_tasks_update() {
    let fx = Fixture::modern(&[]);
    let client = task_client(&fx);
    let calls = accept_elicitation(&client, json!({"confirmed": true}));
    let result = client.call_tool("task_input", None, &none()).await.unwrap();
    assert_eq!(
        text(&result),
        "confirmed: {\"action\":\"accept\",\"content\":{\"confirmed\":true}}"
    );
    assert_eq!(calls.len(), 1, "a repeated key must not prompt again");
    let updates = fx.wire.requests("tasks/update");
    assert_eq!(updates.len(), 1);
    assert_eq!(updates[0]["params"]["inputResponses"]["confirm"]["action"], "accept");
}

/// Manual input on a task: the call fails with the unanswered key, the host answers with
/// `update_task`, and `resume_task` follows the task to its end without asking again for the
/// key the server may still list once (its acknowledgement is eventually consistent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_answered_by_hand_is_resumed_to_its_result() {
    let fx = Fixture::modern(&[]);
    let client = manual_task_client(&fx);
    let (events, on_call) = recorder();
    let opts = RequestOptions {
        on_task_status: Some(on_call),
        ..none()
    };
    let err = expect_err(client.call_tool("task_input", None, &opts).await, "manual");
    assert_kind(&err, ErrorKind::InputRequired);
    let id = events.snapshot()[0]["taskId"].as_str().unwrap().to_string();
    client
        .update_task(
            &id,
            json!({"confirm": {"action": "accept", "content": {"confirmed": true}}}),
            &none(),
        )
        .await
        .unwrap();
    // The fixture flags polls closer than its pollIntervalMs (a protocol rule, not a wait for
    // another thread): the resumed follow starts with a tasks/get.
    tokio::time::sleep(Duration::from_millis(60)).await;
    let result = client.resume_task(&id, &none()).await.unwrap();
    assert_eq!(
        text(&result),
        "confirmed: {\"action\":\"accept\",\"content\":{\"confirmed\":true}}"
    );
    assert_eq!(fx.wire.requests("tasks/update").len(), 1, "the key is answered once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_followed_call_sends_tasks_cancel() {
    let fx = Fixture::modern(&[]);
    let client = task_client(&fx);
    let cancel = CancelToken::new();
    let (events, on_call) = recorder();
    let opts = RequestOptions {
        cancel: Some(cancel.clone()),
        on_task_status: Some(on_call),
        ..none()
    };
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("task_slow", None, &opts).await }
    });
    let created = events.wait_for("task created", |t| t["status"] == "working").await;
    cancel.cancel();
    let err = expect_err(call.await.unwrap(), "task_slow");
    assert_kind(&err, ErrorKind::Cancelled);
    fx.wire
        .wait_for("tasks/cancel", |m| m.iter().any(|x| x["method"] == "tasks/cancel"))
        .await;
    let sent = &fx.wire.requests("tasks/cancel")[0];
    assert_eq!(sent["params"]["taskId"], created["taskId"]);
    let now = client
        .get_task(created["taskId"].as_str().unwrap(), &none())
        .await
        .unwrap();
    assert_eq!(now["status"], "cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_id_kept_by_the_host_is_resumed_after_the_call_gave_up() {
    let fx = Fixture::modern(&[]);
    let client = task_client(&fx);
    let (events, on_call) = recorder();
    // Connected first: the cap below is for the task, not for starting the server.
    client.connect().await.unwrap();
    // A total cap shorter than the task: the call ends, the task goes on server-side.
    let opts = RequestOptions {
        max_total: Some(Duration::from_millis(30)),
        on_task_status: Some(on_call),
        ..none()
    };
    let err = expect_err(
        client
            .call_tool("task_echo", Some(json!({"text": "later"})), &opts)
            .await,
        "capped",
    );
    assert_kind(&err, ErrorKind::Timeout);
    let id = events.snapshot()[0]["taskId"].as_str().unwrap().to_string();
    let result = client.resume_task(&id, &none()).await.unwrap();
    assert_eq!(text(&result), "task: later");
    let unknown = expect_err(client.resume_task("task-none", &none()).await, "unknown");
    assert_eq!(unknown.rpc_error().unwrap().code, -32602);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_modern_http_task_requests_carry_the_task_id_as_mcp_name() {
    use mcp_client::HttpConfig;
    use mcp_client::{ClientConfig, ConnectMode, TransportConfig};
    let record = TempPath::new("tasks-http.jsonl");
    let server = HttpFixture::start(&["--record", &record.as_string()]);
    let mut config = ClientConfig::new(TransportConfig::Http(HttpConfig::new(server.1.clone())));
    config.mode = ConnectMode::Modern;
    config.tasks = true;
    let client = mcp_client::Client::new(config);
    let calls = accept_elicitation(&client, json!({"confirmed": true}));
    let result = client.call_tool("task_input", None, &none()).await.unwrap();
    assert!(text(&result).starts_with("confirmed: "), "{result}");
    assert_eq!(calls.len(), 1);
    client.close().await;
    let sent: Vec<Value> = record
        .lines()
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let header = |req: &Value, name: &str| {
        req["http"]["headers"]
            .as_object()
            .and_then(|h| h.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)))
            .map(|(_, v)| v.as_str().unwrap().to_string())
    };
    for method in ["tasks/get", "tasks/update"] {
        let req = sent.iter().find(|r| r["body"]["method"] == method).expect(method);
        let id = req["body"]["params"]["taskId"].as_str().unwrap();
        assert_eq!(header(req, "Mcp-Name").as_deref(), Some(id), "{req}");
        assert_eq!(header(req, "Mcp-Method").as_deref(), Some(method), "{req}");
    }
}

/// The extension's push: a listen naming `taskIds` hears each status change of those tasks as
/// `notifications/tasks` (the whole task, tagged with the subscription id), nothing for a poll
/// that changes nothing, and nothing of other tasks; a client that did not declare the
/// extension has such a listen refused with -32021.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_with_task_ids_hears_each_status_change_of_those_tasks() {
    let fx = Fixture::modern(&[]);
    let undeclared = expect_err(
        fx.client()
            .listen(json!({"taskIds": ["task-1"]}), &none())
            .await
            .map(|_| ()),
        "listen without the extension",
    );
    assert_eq!(undeclared.rpc_error().unwrap().code, -32021, "{}", undeclared.message());

    let client = manual_task_client(&fx);
    let (events, on_call) = recorder();
    let opts = RequestOptions {
        on_task_status: Some(on_call),
        ..none()
    };
    // Three tasks left waiting for input, their ids from the calls' status events.
    let mut ids = Vec::new();
    for _ in 0..3 {
        let err = expect_err(client.call_tool("task_input", None, &opts).await, "manual");
        assert_kind(&err, ErrorKind::InputRequired);
        ids.push(
            events.snapshot().last().unwrap()["taskId"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    let (answered, cancelled, unfollowed) = (&ids[0], &ids[1], &ids[2]);
    let sub = client
        .listen(json!({"taskIds": [answered, cancelled]}), &none())
        .await
        .unwrap();
    assert_eq!(sub.acknowledged()["taskIds"], json!([answered, cancelled]));

    let accept = json!({"confirm": {"action": "accept", "content": {"confirmed": true}}});
    client.update_task(answered, accept, &none()).await.unwrap();
    // A poll sooner than pollIntervalMs after the call's last one would be flagged.
    tokio::time::sleep(Duration::from_millis(60)).await;
    // Two polls: the first still shows input_required (no change, no push), the second the end.
    let result = client.resume_task(answered, &none()).await.unwrap();
    assert!(text(&result).starts_with("confirmed: "), "{result}");
    client.cancel_task(unfollowed, &none()).await.unwrap();
    client.cancel_task(cancelled, &none()).await.unwrap();
    let mut pushed = Vec::new();
    for _ in 0..2 {
        match within(Duration::from_secs(5), sub.next())
            .await
            .expect("the subscription ended")
        {
            SubscriptionEvent::Notification { method, params } => {
                assert_eq!(method, "notifications/tasks");
                assert_eq!(params["_meta"][META_SUBSCRIPTION_ID], sub.id().to_value());
                pushed.push(params);
            }
            other => panic!("expected notifications/tasks, got {other:?}"),
        }
    }
    assert_eq!(pushed[0]["taskId"], json!(answered));
    assert_eq!(pushed[0]["status"], "completed");
    assert_eq!(text(&pushed[0]["result"]), text(&result));
    assert_eq!(pushed[1]["taskId"], json!(cancelled));
    assert_eq!(pushed[1]["status"], "cancelled");
    // Nothing else is queued: the unfollowed task's cancel and the unchanged poll pushed nothing.
    assert!(
        tokio::time::timeout(Duration::from_millis(200), sub.next())
            .await
            .is_err(),
        "an unexpected event"
    );
}
