//! Every message the client writes validates against the official JSON Schema of its era:
//! a modern session (every request kind, an MRTR retry with elicitation, sampling and roots
//! answers, a listen and its cancellation, a cancelled call) against
//! `tests/vectors/mcp-schema/2026-07-28/schema.json`, and a legacy session (the handshake, every request
//! kind, the client's answers to server→client requests, results and errors) against
//! `tests/vectors/mcp-schema/2025-11-25/schema.json`.
//!
//! Each message is checked against the `$defs` entry for its kind: a request or notification
//! by its `method` const, a response as `JSONRPCResultResponse` plus the result type of the
//! server request it answers (found through a tap of the server's output), or
//! `JSONRPCErrorResponse`.

mod common;

use common::*;
use jsonschema::{Draft, Validator};
use mcp_client::InputKind;
use mcp_client::{CancelToken, Client, ListKind, RequestOptions};
use serde_json::{json, Map, Value};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::time::Duration;

/// One era's schema and the validators built from it so far.
struct Schema {
    name: String,
    doc: Value,
    validators: HashMap<String, Validator>,
}

impl Schema {
    fn load(version: &str) -> Schema {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/vectors/mcp-schema")
            .join(version)
            .join("schema.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        Schema {
            name: version.to_string(),
            doc: serde_json::from_str(&text).expect("the schema is JSON"),
            validators: HashMap::new(),
        }
    }

    fn defs(&self) -> &Map<String, Value> {
        self.doc["$defs"].as_object().expect("$defs")
    }

    /// The request (`with_id`) or notification definitions whose `method` const is `method`.
    fn defs_for_method(&self, method: &str, with_id: bool) -> Vec<String> {
        self.defs()
            .iter()
            .filter(|(_, def)| def["properties"]["method"]["const"] == method)
            .filter(|(_, def)| {
                let required: Vec<&str> = def["required"]
                    .as_array()
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                // Wire messages (not the id-less embedded MRTR input requests) need jsonrpc.
                required.contains(&"jsonrpc") && required.contains(&"id") == with_id
            })
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Validates `instance` against `$defs/<def>` (the whole document, a root `$ref`).
    fn errors(&mut self, def: &str, instance: &Value) -> Vec<String> {
        assert!(self.defs().contains_key(def), "{} has no $defs/{def}", self.name);
        if !self.validators.contains_key(def) {
            let mut root = self.doc.clone();
            root["$ref"] = json!(format!("#/$defs/{def}"));
            let validator = jsonschema::options()
                .with_draft(Draft::Draft202012)
                .should_validate_formats(true)
                .build(&root)
                .unwrap_or_else(|e| panic!("cannot build a validator for {def}: {e}"));
            self.validators.insert(def.to_string(), validator);
        }
        self.validators[def]
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect()
    }
}

/// The result definition for an answer to a server→client request.
fn result_def(method: &str) -> &'static str {
    match method {
        "elicitation/create" => "ElicitResult",
        "sampling/createMessage" => "CreateMessageResult",
        "roots/list" => "ListRootsResult",
        "ping" => "EmptyResult",
        other => panic!("the client answered an unexpected server request {other}"),
    }
}

/// Validates every client message; returns the problems, one per failing check.
/// `server_requests` maps the ids of server→client requests to their methods.
fn validate_all(schema: &mut Schema, messages: &[Value], server_requests: &HashMap<String, String>) -> Vec<String> {
    let mut problems = Vec::new();
    for (n, message) in messages.iter().enumerate() {
        let checks: Vec<(String, Value)> = match (message.get("method"), message.get("id")) {
            (Some(method), id) => {
                let method = method.as_str().unwrap_or_default();
                let defs = schema.defs_for_method(method, id.is_some());
                if defs.is_empty() {
                    problems.push(format!(
                        "#{n}: no {} definition for method {method:?}: {message}",
                        if id.is_some() { "request" } else { "notification" }
                    ));
                }
                defs.into_iter().map(|d| (d, message.clone())).collect()
            }
            (None, _) if message.get("error").is_some() => {
                vec![("JSONRPCErrorResponse".to_string(), message.clone())]
            }
            (None, id) => {
                let key = id.map(Value::to_string).unwrap_or_default();
                match server_requests.get(&key) {
                    None => {
                        problems.push(format!("#{n}: a response to no server request: {message}"));
                        Vec::new()
                    }
                    Some(method) => vec![
                        ("JSONRPCResultResponse".to_string(), message.clone()),
                        (result_def(method).to_string(), message["result"].clone()),
                    ],
                }
            }
        };
        for (def, instance) in checks {
            for error in schema.errors(&def, &instance) {
                problems.push(format!("#{n} as {def}: {error}\n    message: {message}"));
            }
        }
    }
    problems
}

/// Fails with every problem found.
fn assert_valid(schema: &mut Schema, messages: &[Value], server_requests: &HashMap<String, String>) {
    let problems = validate_all(schema, messages, server_requests);
    assert!(
        problems.is_empty(),
        "{} of {} messages broke the {} schema:\n{}",
        problems.len(),
        messages.len(),
        schema.name,
        problems.join("\n")
    );
}

/// The methods on the wire (requests and notifications).
fn method_set(messages: &[Value]) -> BTreeSet<String> {
    messages
        .iter()
        .filter_map(|m| m["method"].as_str().map(str::to_string))
        .collect()
}

/// Cancels a slow call once it is on the wire, so a `notifications/cancelled` goes out.
async fn cancel_a_slow_call(client: &Client, fx: &Fixture) {
    let token = CancelToken::new();
    let opts = RequestOptions {
        cancel: Some(token.clone()),
        ..Default::default()
    };
    let call = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("slow", Some(json!({"ms": 200})), &opts).await })
    };
    fx.wire
        .wait_for("the slow call", |w| w.iter().any(|m| m["params"]["name"] == "slow"))
        .await;
    token.cancel();
    assert!(call.await.unwrap().is_err());
}

/// Handlers for every input kind.
fn register_handlers(client: &Client) {
    accept_elicitation(
        client,
        json!({"name": "Ada", "confirmed": true, "topic": "schemas", "password": "pw", "value": "v"}),
    );
    answer_sampling(client, "A summary");
    answer_roots(client, &["file:///project", "file:///tmp/other"]);
}

/// The list calls, the second tools page included.
async fn list_everything(client: &Client) {
    for kind in [
        ListKind::Tools,
        ListKind::Prompts,
        ListKind::Resources,
        ListKind::ResourceTemplates,
    ] {
        client.list_all(kind, &none()).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_session_validates_against_the_2026_07_28_schema() {
    let fx = Fixture::modern(&["--page-size", "2"]);
    let client = fx.client();
    register_handlers(&client);

    list_everything(&client).await;
    client
        .call_tool("echo", Some(json!({"text": "hi"})), &none())
        .await
        .unwrap();
    for tool in [
        "elicit_and_sample",
        "roots",
        "three_rounds",
        "state_only",
        "elicit_once",
    ] {
        client.call_tool(tool, None, &none()).await.unwrap();
    }
    client
        .get_prompt("greeting", Some(json!({"name": "Ada"})), &none())
        .await
        .unwrap();
    client.get_prompt("needs_input", None, &none()).await.unwrap();
    client.read_resource("fixture://static", &none()).await.unwrap();
    client.read_resource("fixture://needs-input", &none()).await.unwrap();
    client
        .complete(
            json!({"ref": {"type": "ref/prompt", "name": "greeting"},
                   "argument": {"name": "name", "value": "a"},
                   "context": {"arguments": {}}}),
            &none(),
        )
        .await
        .unwrap();
    let progress = RequestOptions {
        on_progress: Some(std::sync::Arc::new(|_p: &mcp_client::Progress| {})),
        ..Default::default()
    };
    client
        .call_tool("progress", Some(json!({"steps": 2, "delay_ms": 1})), &progress)
        .await
        .unwrap();
    client.set_log_level("debug", &none()).await.unwrap();
    let sub = client
        .listen(
            json!({"toolsListChanged": true, "resourceSubscriptions": ["fixture://static"]}),
            &none(),
        )
        .await
        .unwrap();
    client.call_tool("notify", None, &none()).await.unwrap();
    sub.cancel().await;
    cancel_a_slow_call(&client, &fx).await;
    // The last answer proves every earlier line was recorded.
    client
        .call_tool("echo", Some(json!({"text": "done"})), &none())
        .await
        .unwrap();

    let messages = fx.wire.messages();
    let seen = method_set(&messages);
    for method in [
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "tools/call",
        "prompts/get",
        "resources/read",
        "completion/complete",
        "subscriptions/listen",
        "notifications/cancelled",
    ] {
        assert!(seen.contains(method), "the session never sent {method}");
    }
    assert!(
        messages.iter().any(|m| m["params"]["cursor"].is_string()),
        "no second page"
    );
    let retries: Vec<&Value> = messages
        .iter()
        .filter(|m| m["params"].get("inputResponses").is_some())
        .collect();
    let answered: BTreeSet<&str> = retries
        .iter()
        .flat_map(|m| m["params"]["inputResponses"].as_object().unwrap().keys())
        .map(String::as_str)
        .collect();
    for key in ["confirm", "summary", "roots", "topic", "password"] {
        assert!(answered.contains(key), "no MRTR retry answered {key}");
    }
    assert!(messages
        .iter()
        .any(|m| m["params"]["_meta"]["progressToken"].is_string() || m["params"]["_meta"]["progressToken"].is_i64()));
    assert!(messages.iter().any(|m| m["params"]["_meta"][META_LOG_LEVEL] == "debug"));
    assert!(
        fx.wire.responses().is_empty(),
        "a modern client never answers the server"
    );

    let mut schema = Schema::load("2026-07-28");
    assert_valid(&mut schema, &messages, &HashMap::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_session_validates_against_the_2025_11_25_schema() {
    let fx = Fixture::legacy(&["--page-size", "2"]).tapped();
    let client = fx.client();
    register_handlers(&client);

    list_everything(&client).await;
    client.ping(&none()).await.unwrap();
    client
        .call_tool("echo", Some(json!({"text": "hi"})), &none())
        .await
        .unwrap();
    for tool in ["elicit_once", "elicit_and_sample", "roots", "ping_client"] {
        let result = client.call_tool(tool, None, &none()).await.unwrap();
        assert!(result.get("isError").is_none(), "{tool}: {result}");
    }
    client.get_prompt("needs_input", None, &none()).await.unwrap();
    client.read_resource("fixture://needs-input", &none()).await.unwrap();
    client
        .complete(
            json!({"ref": {"type": "ref/resource", "uri": "fixture://items/{id}"},
                   "argument": {"name": "id", "value": "4"}}),
            &none(),
        )
        .await
        .unwrap();
    client.set_log_level("notice", &none()).await.unwrap();
    client.subscribe_resource("fixture://static", &none()).await.unwrap();
    client.unsubscribe_resource("fixture://static", &none()).await.unwrap();
    client.notify_roots_changed().await.unwrap();
    let progress = RequestOptions {
        reset_timeout_on_progress: true,
        timeout: Some(Duration::from_secs(5)),
        ..Default::default()
    };
    client
        .call_tool("progress", Some(json!({"steps": 2, "delay_ms": 1})), &progress)
        .await
        .unwrap();
    cancel_a_slow_call(&client, &fx).await;
    // With the handler gone (but the capability declared at initialize), the client answers
    // the server's elicitation with an error response.
    client.set_handler(InputKind::Elicitation, None);
    let refused = client.call_tool("elicit_once", None, &none()).await.unwrap();
    assert_eq!(refused["isError"], true);
    client
        .call_tool("echo", Some(json!({"text": "done"})), &none())
        .await
        .unwrap();

    let messages = fx.wire.messages();
    let seen = method_set(&messages);
    for method in [
        "initialize",
        "notifications/initialized",
        "ping",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "tools/call",
        "prompts/get",
        "resources/read",
        "completion/complete",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "notifications/roots/list_changed",
        "notifications/cancelled",
    ] {
        assert!(seen.contains(method), "the session never sent {method}");
    }

    // What the server asked, by id, from its own output.
    let server_requests: HashMap<String, String> = fx
        .tap()
        .messages()
        .into_iter()
        .filter(|m| m.get("id").is_some() && m["method"].is_string())
        .map(|m| (m["id"].to_string(), m["method"].as_str().unwrap().to_string()))
        .collect();
    let responses = fx.wire.responses();
    let answered: BTreeSet<&str> = responses
        .iter()
        .filter(|r| r.get("result").is_some())
        .filter_map(|r| server_requests.get(&r["id"].to_string()))
        .map(String::as_str)
        .collect();
    assert_eq!(
        answered,
        BTreeSet::from(["elicitation/create", "ping", "roots/list", "sampling/createMessage"]),
        "the session did not answer every kind of server request"
    );
    assert!(
        fx.wire.responses().iter().any(|r| r["error"]["code"] == -32601),
        "no error response was exercised"
    );

    let mut schema = Schema::load("2025-11-25");
    assert_valid(&mut schema, &messages, &server_requests);
}

/// The checker itself must catch broken messages, or the two tests above prove nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_checker_rejects_broken_messages() {
    let mut modern = Schema::load("2026-07-28");
    let envelope = json!({
        META_VERSION: MODERN_VERSION,
        META_CAPABILITIES: {},
        META_CLIENT_INFO: {"name": "t", "version": "1"},
    });
    let good = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"_meta": envelope, "name": "echo"}});
    assert_eq!(
        validate_all(&mut modern, std::slice::from_ref(&good), &HashMap::new()),
        Vec::<String>::new()
    );
    let broken = [
        // No _meta at all.
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo"}}),
        // A retry whose inputResponses entry is no known result.
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"_meta": envelope, "name": "x", "inputResponses": {"k": {"action": "maybe"}}}}),
        // requestState must be a string.
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
               "params": {"_meta": envelope, "name": "x", "requestState": 5}}),
        // ping does not exist in the modern era.
        json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}),
        // A notification without jsonrpc.
        json!({"method": "notifications/cancelled", "params": {"requestId": 1}}),
    ];
    for message in broken {
        let problems = validate_all(&mut modern, std::slice::from_ref(&message), &HashMap::new());
        assert!(!problems.is_empty(), "accepted {message}");
    }

    let mut legacy = Schema::load("2025-11-25");
    let asked = HashMap::from([("\"srv-1\"".to_string(), "elicitation/create".to_string())]);
    let good = json!({"jsonrpc": "2.0", "id": "srv-1", "result": {"action": "decline"}});
    assert!(validate_all(&mut legacy, &[good], &asked).is_empty());
    let bad = json!({"jsonrpc": "2.0", "id": "srv-1", "result": {"action": "later"}});
    assert!(!validate_all(&mut legacy, &[bad], &asked).is_empty());
    let unasked = json!({"jsonrpc": "2.0", "id": "srv-9", "result": {}});
    assert!(!validate_all(&mut legacy, &[unasked], &asked).is_empty());
}
