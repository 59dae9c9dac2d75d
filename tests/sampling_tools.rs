//! Sampling with tools (SEP-1577) against the fixture's unlisted `sample_with_tools` flow, on
//! both eras and over stdio and HTTP: the host declares `sampling.tools`; the request's `tools`
//! and `toolChoice` reach the sampling handler; its `tool_use` answer goes back to the server
//! (MRTR `inputResponses` on a modern server, the answer to a real server→client request on a
//! legacy one), which follows with a second round carrying the `tool_result`. A client that did
//! not declare `sampling.tools` is not offered tools (the server's -32021 or "lacks"), refuses
//! them when a lax server offers them anyway, and a malformed `tool_use` answer never reaches
//! the server.

mod common;

use common::*;
use mcp_client::{Client, ClientConfig, ConnectMode, ErrorKind, HttpConfig, InputRequest, TransportConfig};
use serde_json::{json, Value};

const FINAL: &str = "weather: 18 degrees and sunny, says the model; tool get_weather({\"city\":\"Paris\"}) id call-1";

/// A sampling handler that uses `get_weather` when the request allows tools and answers text
/// once it is given the tool's result; `tool` names the tool it uses.
fn weather_model(client: &Client, tool: &'static str) -> Calls {
    let calls = Calls::default();
    let seen = calls.clone();
    client.on_sampling(move |req: InputRequest| {
        seen.push(req.clone());
        let params = req.params.unwrap_or(Value::Null);
        async move {
            if params["toolChoice"]["mode"] == "none" {
                return Ok(json!({"role": "assistant", "model": "m", "stopReason": "endTurn",
                    "content": {"type": "text", "text": "18 degrees and sunny, says the model"}}));
            }
            Ok(
                json!({"role": "assistant", "model": "m", "stopReason": "toolUse", "content": [
                    {"type": "text", "text": "Let me look that up."},
                    {"type": "tool_use", "id": "call-1", "name": tool, "input": {"city": "Paris"}},
                ]}),
            )
        }
    });
    calls
}

/// What the handler saw: two rounds, tools offered in both, the second carrying the use and its
/// result.
fn assert_rounds(calls: &Calls) {
    let seen = calls.snapshot();
    assert_eq!(seen.len(), 2, "{seen:?}");
    let first = seen[0].params.as_ref().unwrap();
    assert_eq!(first["tools"][0]["name"], "get_weather", "{first}");
    assert_eq!(first["tools"][0]["inputSchema"]["required"], json!(["city"]), "{first}");
    assert_eq!(first["toolChoice"], json!({"mode": "auto"}), "{first}");
    let second = seen[1].params.as_ref().unwrap();
    assert_eq!(second["toolChoice"], json!({"mode": "none"}), "{second}");
    assert_eq!(second["messages"][1]["content"][0]["type"], "tool_use", "{second}");
    let result = &second["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result", "{second}");
    assert_eq!(result["toolUseId"], "call-1", "{second}");
}

fn with_tools(c: &mut ClientConfig) {
    c.sampling_tools = true;
}

#[tokio::test]
async fn tools_reach_the_handler_and_tool_use_reaches_the_server_over_stdio() {
    for fx in [Fixture::modern(&[]), Fixture::legacy(&[])] {
        let client = fx.client_with(with_tools);
        let calls = weather_model(&client, "get_weather");
        let result = client.call_tool("sample_with_tools", None, &none()).await.unwrap();
        assert_eq!(text(&result), FINAL, "{result}");
        assert_rounds(&calls);
        client.close().await;
        // The declaration on the wire: every modern request's capabilities, or `initialize`.
        let sent = fx.wire.messages();
        let declared: Vec<&Value> = sent
            .iter()
            .filter_map(|m| {
                m["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
                    .as_object()
                    .or_else(|| m["params"]["capabilities"].as_object())
                    .and_then(|c| c.get("sampling"))
            })
            .collect();
        assert!(!declared.is_empty(), "{sent:?}");
        assert!(declared.iter().all(|s| **s == json!({"tools": {}})), "{declared:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_on_both_eras() {
    for (args, mode) in [
        (vec![], ConnectMode::Modern),
        (vec!["--era", "legacy"], ConnectMode::Legacy),
    ] {
        let server = HttpFixture::start(&args);
        let mut config = ClientConfig::new(TransportConfig::Http(HttpConfig::new(server.1.clone())));
        config.mode = mode;
        with_tools(&mut config);
        let client = Client::new(config);
        let calls = weather_model(&client, "get_weather");
        let result = client.call_tool("sample_with_tools", None, &none()).await.unwrap();
        assert_eq!(text(&result), FINAL, "{result}");
        assert_rounds(&calls);
        client.close().await;
    }
}

#[tokio::test]
async fn a_client_without_sampling_tools_is_not_offered_tools() {
    // Modern: the server asks for the capability (-32021), and no handler runs.
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let calls = weather_model(&client, "get_weather");
    let err = expect_err(client.call_tool("sample_with_tools", None, &none()).await, "modern");
    assert_kind(&err, ErrorKind::CapabilityMissing);
    assert!(err.message().contains("sampling"), "{}", err.message());
    assert!(calls.is_empty());
    client.close().await;

    // Legacy: the server does not send the request.
    let fx = Fixture::legacy(&[]);
    let client = fx.client();
    let calls = weather_model(&client, "get_weather");
    let result = client.call_tool("sample_with_tools", None, &none()).await.unwrap();
    assert_eq!(text(&result), "client lacks sampling.tools", "{result}");
    assert!(calls.is_empty());
    client.close().await;

    // A lax server offers tools anyway: the client refuses before its handler runs.
    let fx = Fixture::modern(&["--lax-capabilities"]);
    let client = fx.client();
    let calls = weather_model(&client, "get_weather");
    let err = expect_err(client.call_tool("sample_with_tools", None, &none()).await, "lax");
    assert_kind(&err, ErrorKind::HandlerFailed);
    assert!(
        err.message().contains("did not declare sampling.tools"),
        "{}",
        err.message()
    );
    assert!(calls.is_empty());
    client.close().await;
}

#[tokio::test]
async fn a_malformed_tool_use_answer_never_reaches_the_server() {
    // Modern: the call fails; no retry carries the answer.
    let fx = Fixture::modern(&[]);
    let client = fx.client_with(with_tools);
    let calls = weather_model(&client, "rm_rf");
    let err = expect_err(client.call_tool("sample_with_tools", None, &none()).await, "modern");
    assert_kind(&err, ErrorKind::HandlerFailed);
    assert!(
        err.message().contains("\"rm_rf\", which the request did not offer"),
        "{}",
        err.message()
    );
    assert_eq!(calls.len(), 1);
    client.close().await;
    assert_eq!(fx.wire.tool_calls("sample_with_tools").len(), 1, "no retry was sent");

    // Legacy: the server's request gets an error instead of the answer.
    let fx = Fixture::legacy(&[]);
    let client = fx.client_with(with_tools);
    weather_model(&client, "rm_rf");
    let result = client.call_tool("sample_with_tools", None, &none()).await.unwrap();
    assert!(
        text(&result).starts_with("client error: the sampling handler's answer is malformed"),
        "{result}"
    );
    client.close().await;
    let answers: Vec<Value> = fx
        .wire
        .messages()
        .into_iter()
        .filter(|m| m.get("id").is_some() && m.get("method").is_none())
        .collect();
    assert!(answers.iter().all(|a| a.get("result").is_none()), "{answers:?}");
}
