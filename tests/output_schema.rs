//! Output schema validation over real pipes: `structuredContent` is checked against the
//! `outputSchema` from the last `tools/list` (listed once when the client has none), with
//! `OutputSchemaInvalid` carrying the message and the raw result; off per client and per call.

mod common;

use common::*;
use mcp_client::{ErrorKind, ListKind, RequestOptions};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conforming_results_pass_and_others_fail_with_the_raw_result() {
    for fx in [Fixture::modern(&[]), Fixture::legacy(&[])] {
        let client = fx.client();
        // A result without structuredContent has nothing to check: no listing for it.
        client
            .call_tool("echo", Some(json!({"text": "hi"})), &none())
            .await
            .unwrap();
        assert!(fx.wire.requests("tools/list").is_empty());
        // No tools/list yet: the first structured result lists the tools once.
        let ok = client
            .call_tool("typed", Some(json!({"value": 5})), &none())
            .await
            .unwrap();
        assert_eq!(ok["structuredContent"]["result"], 5);
        assert_eq!(fx.wire.requests("tools/list").len(), 1);

        let e = expect_err(
            client.call_tool("typed", Some(json!({"value": "five"})), &none()).await,
            "a string where the schema wants an integer",
        );
        assert_kind(&e, ErrorKind::OutputSchemaInvalid);
        assert!(e.message().contains("/result"), "{}", e.message());
        assert_eq!(e.result().unwrap()["structuredContent"]["result"], "five");
        // The schema's other branch is a string with a `pattern`: digits pass, a letter fails.
        let digits = client
            .call_tool("typed", Some(json!({"value": "12"})), &none())
            .await
            .unwrap();
        assert_eq!(digits["structuredContent"]["result"], "12");
        let e = expect_err(
            client.call_tool("typed", Some(json!({"value": "12a"})), &none()).await,
            "a string the pattern refuses",
        );
        assert_kind(&e, ErrorKind::OutputSchemaInvalid);

        let e = expect_err(
            client
                .call_tool("typed", Some(json!({"value": 1, "omit": true})), &none())
                .await,
            "no structuredContent",
        );
        assert_kind(&e, ErrorKind::OutputSchemaInvalid);
        assert!(e.message().contains("no structuredContent"), "{}", e.message());

        // Tools without a schema are not checked; the tools were listed once only.
        client
            .call_tool("echo", Some(json!({"text": "hi"})), &none())
            .await
            .unwrap();
        assert_eq!(fx.wire.requests("tools/list").len(), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_tools_list_is_used_and_no_extra_list_is_sent() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.list_all(ListKind::Tools, &none()).await.unwrap();
    let e = expect_err(
        client.call_tool("typed", Some(json!({"value": 1.5})), &none()).await,
        "not an integer",
    );
    assert_kind(&e, ErrorKind::OutputSchemaInvalid);
    assert_eq!(fx.wire.requests("tools/list").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switchable_off_per_client_and_per_call() {
    let fx = Fixture::modern(&[]);
    let client = fx.client_with(|c| c.validate_output_schema = false);
    let r = client
        .call_tool("typed", Some(json!({"value": "five"})), &none())
        .await
        .unwrap();
    assert_eq!(r["structuredContent"]["result"], "five");
    assert!(
        fx.wire.requests("tools/list").is_empty(),
        "nothing to validate, nothing listed"
    );

    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let skip = RequestOptions {
        skip_output_validation: true,
        ..RequestOptions::default()
    };
    let r = client
        .call_tool("typed", Some(json!({"value": "five"})), &skip)
        .await
        .unwrap();
    assert_eq!(r["structuredContent"]["result"], "five");
    assert!(fx.wire.requests("tools/list").is_empty());
    assert!(client
        .call_tool("typed", Some(json!({"value": "five"})), &none())
        .await
        .is_err());
}
