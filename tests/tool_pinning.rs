//! Tool pinning over real wires: the fixture server changes its tools under the client
//! (`redefine`: a new description, an added parameter, a rename, or only reordered JSON keys)
//! over stdio and HTTP in both eras, with and without `list_changed`; the policies `warn`,
//! `block` and `ask`; pins kept across restarts in the file store; `block` through a hub and
//! the export of its tool list.

mod common;

use common::*;
use mcp_client::export::{export_tools, ExportOptions};
use mcp_client::hub::{Hub, HubOptions, HubSpec, ReadContext};
use mcp_client::{
    Client, ClientConfig, ConnectMode, ErrorKind, HttpConfig, ListKind, PinChange, PinEvent, PinHook, PinPolicy,
    PinSettings, SubscriptionEvent, TransportConfig,
};
use serde_json::{json, Value};
use std::sync::Arc;

fn settings(policy: PinPolicy) -> PinSettings {
    PinSettings {
        policy,
        ..PinSettings::default()
    }
}

fn pinned(fx: &Fixture, policy: PinPolicy) -> Client {
    fx.client_with(|c| c.tool_pinning = Some(settings(policy)))
}

fn http_client(url: &str, mode: ConnectMode, pin: PinSettings) -> Client {
    let mut cfg = ClientConfig::new(TransportConfig::Http(HttpConfig::new(url)));
    cfg.mode = mode;
    cfg.probe_timeout = PROBE_TIMEOUT;
    cfg.request_timeout = REQUEST_TIMEOUT;
    cfg.tool_pinning = Some(pin);
    Client::new(cfg)
}

/// Collects every pin event; answers `approve` (only `ask` reads it).
fn events(client: &Client, approve: bool) -> Events<PinEvent> {
    let seen = Events::default();
    let sink = seen.clone();
    let hook: PinHook = Arc::new(move |e: PinEvent| {
        sink.push(e);
        Box::pin(async move { approve })
    });
    client.on_tool_pin(Some(hook));
    seen
}

async fn names(client: &Client) -> Vec<String> {
    let list = client.list_all(ListKind::Tools, &none()).await.unwrap();
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

async fn redefine(client: &Client, mode: &str, notify: bool) {
    client
        .call_tool("redefine", Some(json!({"mode": mode, "notify": notify})), &none())
        .await
        .unwrap();
}

/// Block: the changed `echo` leaves the list and its calls fail with their own kind until
/// approved; then it is back, pinned with the new definition.
async fn blocks_a_changed_description(client: &Client) {
    let seen = events(client, true);
    assert!(names(client).await.contains(&"echo".to_string()));
    redefine(client, "description", false).await;
    let listed = names(client).await;
    assert!(!listed.contains(&"echo".to_string()), "withheld: {listed:?}");
    assert!(listed.contains(&"add".to_string()), "unchanged tools stay");
    let e = expect_err(
        client.call_tool("echo", Some(json!({"text": "x"})), &none()).await,
        "withheld",
    );
    assert_kind(&e, ErrorKind::ToolPinChanged);
    let events = seen.snapshot();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].change, PinChange::Changed);
    assert_eq!(events[0].old.as_ref().unwrap()["description"], "Returns its text");
    assert!(events[0].new.as_ref().unwrap()["description"]
        .as_str()
        .unwrap()
        .contains("id_rsa"));
    assert!(
        events[0].diff.starts_with("description: \"Returns its text\" → "),
        "{}",
        events[0].diff
    );
    let pins = client.tool_pins().await.unwrap();
    let echo = pins["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "echo")
        .unwrap();
    assert_eq!(echo["state"], "withheld");
    // Listing again reports nothing new (one event per definition).
    names(client).await;
    assert_eq!(seen.len(), 1);
    client.approve_tool_pin("echo").await.unwrap();
    assert!(names(client).await.contains(&"echo".to_string()));
    let r = client
        .call_tool("echo", Some(json!({"text": "x"})), &none())
        .await
        .unwrap();
    assert_eq!(text(&r), "x");
    assert_kind(
        &expect_err(client.approve_tool_pin("echo").await, "nothing waits"),
        ErrorKind::InvalidArgument,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_both_eras_block_a_changed_description_without_list_changed() {
    for fx in [Fixture::modern(&[]), Fixture::legacy(&[])] {
        let client = pinned(&fx, PinPolicy::Block);
        blocks_a_changed_description(&client).await;
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_both_eras_block_a_changed_description() {
    for (args, mode) in [
        (&["--era", "modern"][..], ConnectMode::Modern),
        (&["--era", "legacy"][..], ConnectMode::Legacy),
    ] {
        let http = HttpFixture::start(args);
        let client = http_client(&http.1, mode, settings(PinPolicy::Block));
        blocks_a_changed_description(&client).await;
        client.close().await;
    }
}

/// With the lists cached, the change is seen only after `list_changed` evicts them: the
/// refreshed listing is checked like any other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_announced_by_list_changed_is_caught_on_the_refresh() {
    let fx = Fixture::legacy(&["--cache-ttl-ms", "600000"]);
    let client = pinned(&fx, PinPolicy::Block);
    assert!(names(&client).await.contains(&"echo".to_string()));
    redefine(&client, "description", false).await;
    assert!(
        names(&client).await.contains(&"echo".to_string()),
        "still the cached list"
    );
    redefine(&client, "description", true).await;
    // (On stdio the notification is read before the answer to the call that sent it.)
    assert!(!names(&client).await.contains(&"echo".to_string()));
    client.close().await;

    let http = HttpFixture::start(&["--era", "legacy", "--cache-ttl-ms", "600000"]);
    let client = http_client(&http.1, ConnectMode::Legacy, settings(PinPolicy::Block));
    assert!(names(&client).await.contains(&"echo".to_string()));
    redefine(&client, "description", true).await;
    let mut gone = false;
    for _ in 0..100 {
        if !names(&client).await.contains(&"echo".to_string()) {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(
        gone,
        "the list_changed over the legacy GET stream evicts the cached list"
    );
    client.close().await;
}

/// Modern: the `list_changed` comes through `subscriptions/listen` and evicts the cached list
/// (stdio and HTTP); the refresh is checked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_list_changed_through_listen_is_caught_on_the_refresh() {
    let http = HttpFixture::start(&["--era", "modern", "--cache-ttl-ms", "600000"]);
    let fx = Fixture::modern(&["--cache-ttl-ms", "600000"]);
    let clients = [
        pinned(&fx, PinPolicy::Block),
        http_client(&http.1, ConnectMode::Modern, settings(PinPolicy::Block)),
    ];
    for client in clients {
        let sub = client.listen(json!({"toolsListChanged": true}), &none()).await.unwrap();
        assert!(names(&client).await.contains(&"echo".to_string()));
        redefine(&client, "description", false).await;
        assert!(
            names(&client).await.contains(&"echo".to_string()),
            "still the cached list"
        );
        redefine(&client, "description", true).await;
        loop {
            match within(std::time::Duration::from_secs(10), sub.next()).await {
                Some(SubscriptionEvent::Notification { method, .. })
                    if method == "notifications/tools/list_changed" =>
                {
                    break
                }
                Some(SubscriptionEvent::Closed(e)) => panic!("subscription closed: {e:?}"),
                None => panic!("subscription ended"),
                Some(_) => {}
            }
        }
        assert!(!names(&client).await.contains(&"echo".to_string()));
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warn_reports_an_added_parameter_and_the_tool_stays() {
    let fx = Fixture::modern(&[]);
    let client = pinned(&fx, PinPolicy::Warn);
    let seen = events(&client, false);
    let logs = collect_logs(&client);
    names(&client).await;
    redefine(&client, "param", false).await;
    assert!(names(&client).await.contains(&"echo".to_string()));
    client
        .call_tool("echo", Some(json!({"text": "x"})), &none())
        .await
        .unwrap();
    let events = seen.snapshot();
    assert_eq!(events.len(), 1);
    assert_eq!(
        events[0].diff,
        "inputSchema.properties.context: added {\"type\":\"string\"}"
    );
    assert_eq!(events[0].to_json()["policy"], "warn");
    assert!(logs
        .snapshot()
        .iter()
        .any(|l| l.message.contains("echo") && l.message.contains("inputSchema.properties.context")));
    let pins = client.tool_pins().await.unwrap();
    let echo = pins["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "echo")
        .unwrap();
    assert_eq!(echo["state"], "changed");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_is_a_new_tool_and_a_removed_one() {
    let fx = Fixture::legacy(&[]);
    let client = pinned(&fx, PinPolicy::Block);
    let seen = events(&client, false);
    names(&client).await;
    redefine(&client, "rename", false).await;
    let listed = names(&client).await;
    assert!(!listed.contains(&"echo_text".to_string()) && !listed.contains(&"echo".to_string()));
    let mut changes: Vec<(String, PinChange)> = seen.snapshot().into_iter().map(|e| (e.tool, e.change)).collect();
    changes.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        changes,
        [
            ("echo".to_string(), PinChange::Removed),
            ("echo_text".to_string(), PinChange::New)
        ]
    );
    let pins = client.tool_pins().await.unwrap();
    let states: Vec<(Value, Value)> = pins["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"].as_str().unwrap().starts_with("echo"))
        .map(|t| (t["name"].clone(), t["state"].clone()))
        .collect();
    assert!(states.contains(&(json!("echo"), json!("removed"))), "{states:?}");
    assert!(states.contains(&(json!("echo_text"), json!("withheld"))), "{states:?}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reordered_json_keys_are_no_change() {
    for fx in [Fixture::modern(&[]), Fixture::legacy(&[])] {
        let client = pinned(&fx, PinPolicy::Block);
        let seen = events(&client, false);
        let before = names(&client).await;
        redefine(&client, "reorder", false).await;
        let raw = client.list(ListKind::Tools, None, &none()).await.unwrap();
        let first = raw["tools"][0].as_object().unwrap().keys().next().unwrap().clone();
        assert_ne!(first, "name", "the server really reordered its keys");
        assert_eq!(names(&client).await, before);
        assert!(seen.is_empty(), "{:?}", seen.snapshot());
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_lets_the_host_decide() {
    for approve in [true, false] {
        let fx = Fixture::modern(&[]);
        let client = pinned(&fx, PinPolicy::Ask);
        let seen = events(&client, approve);
        names(&client).await;
        redefine(&client, "description", false).await;
        assert_eq!(names(&client).await.contains(&"echo".to_string()), approve);
        assert_eq!(seen.len(), 1);
        client.close().await;
    }
}

/// Pins in `store_dir` outlive the client: a restarted server that changed is caught at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pins_survive_restarts_in_the_file_store() {
    let dir = TempPath::dir("pins");
    let store = PinSettings {
        policy: PinPolicy::Block,
        identity: Some("fixture under test".into()),
        store_dir: Some(dir.path().to_path_buf()),
        ignore_meta: None,
    };
    let fx = Fixture::modern(&[]);
    let client = fx.client_with(|c| c.tool_pinning = Some(store.clone()));
    assert!(names(&client).await.contains(&"echo".to_string()));
    client.close().await;
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(
        files.iter().any(|f| f.extension().is_some_and(|e| e == "json")),
        "{files:?}"
    );
    #[cfg(unix)]
    for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "json")) {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(f).unwrap().permissions().mode() & 0o777, 0o600);
    }

    // The same server, restarted unchanged: nothing withheld.
    let client = Fixture::legacy(&[]).client_with(|c| c.tool_pinning = Some(store.clone()));
    assert!(names(&client).await.contains(&"echo".to_string()));
    client.close().await;
    // Restarted with a new description: withheld from the first listing.
    let client = Fixture::modern(&["--redefine", "description"]).client_with(|c| c.tool_pinning = Some(store.clone()));
    assert!(!names(&client).await.contains(&"echo".to_string()));
    client.approve_tool_pin("echo").await.unwrap();
    client.close().await;
    // The approval was stored.
    let client = Fixture::modern(&["--redefine", "description"]).client_with(|c| c.tool_pinning = Some(store.clone()));
    assert!(names(&client).await.contains(&"echo".to_string()));
    // Forgetting every pin makes the next listing a first use again.
    client.forget_tool_pin(None).await.unwrap();
    client.close().await;
    let client = Fixture::modern(&[]).client_with(|c| c.tool_pinning = Some(store));
    assert!(names(&client).await.contains(&"echo".to_string()));
    client.close().await;
}

/// `block` on a hub member read from a host's file: the changed tool leaves the hub's catalogue and the export made
/// from it, and calls fail (the hub has no route, the member refuses it) until approved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_through_the_hub_and_the_export() {
    let dir = TempPath::dir("hub-pins");
    let pinning = json!({"policy": "block", "identity": "hub member", "store_dir": dir.as_string()});
    // First use: pinned as the server is now.
    let first = Client::new(
        ClientConfig::from_json(&json!({"command": fixture_str(), "mode": "legacy", "tool_pinning": pinning})).unwrap(),
    );
    names(&first).await;
    first.close().await;

    // The member comes from a host's configuration file: this library's settings under the
    // entry's `mcp_client` key.
    let file = json!({"mcpServers": {"fx": {
        "command": fixture_str(), "args": ["--redefine", "param"],
        "mcp_client": {"mode": "legacy", "request_timeout_ms": 10_000, "tool_pinning": pinning}
    }}});
    let spec = HubSpec::from_text(&file.to_string(), &ReadContext::default()).unwrap();
    assert!(spec.failed.is_empty(), "{:?}", spec.failed);
    let hub = Hub::new(spec, HubOptions::default()).unwrap();
    hub.start().await;
    let tools = hub.list_tools().await.unwrap();
    let listed: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        listed.contains(&"fx__add") && !listed.contains(&"fx__echo"),
        "{listed:?}"
    );
    let exported = export_tools(&tools, None, &ExportOptions::default()).unwrap();
    assert!(exported.tools.iter().all(|t| t["function"]["name"] != "fx__echo"));
    assert!(exported.tools.iter().any(|t| t["function"]["name"] == "fx__add"));
    // The hub has no route to a withheld tool; the member's client refuses it by its own kind.
    let e = expect_err(
        hub.call_tool("fx__echo", Some(json!({"text": "x"})), &none()).await,
        "no route",
    );
    assert_kind(&e, ErrorKind::InvalidArgument);
    let member = hub.member_client("fx").unwrap();
    let e = expect_err(
        member.call_tool("echo", Some(json!({"text": "x"})), &none()).await,
        "withheld",
    );
    assert_kind(&e, ErrorKind::ToolPinChanged);
    hub.approve_tool_pin("fx", "echo").await.unwrap();
    let tools = hub.list_tools().await.unwrap();
    assert!(tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "fx__echo"));
    hub.call_tool("fx__echo", Some(json!({"text": "x"})), &none())
        .await
        .unwrap();
    hub.close().await;
}

/// The configuration key, through the JSON form (and its errors).
#[test]
fn the_configuration_key_parses_and_refuses_unknowns() {
    let ok = ClientConfig::from_json(
        &json!({"command": "x", "tool_pinning": {"policy": "warn", "ignore_meta": ["io.x/etag"]}}),
    )
    .unwrap();
    let s = ok.tool_pinning.unwrap();
    assert_eq!(s.policy, PinPolicy::Warn);
    assert_eq!(s.ignore_meta, Some(vec!["io.x/etag".to_string()]));
    let e = ClientConfig::from_json(&json!({"command": "x", "tool_pinning": {"policy": "sometimes"}})).unwrap_err();
    assert_kind(&e, ErrorKind::InvalidArgument);
    let e =
        ClientConfig::from_json(&json!({"command": "x", "tool_pinning": {"policy": "warn", "mode": 1}})).unwrap_err();
    assert!(e.message().contains("mode"), "{}", e.message());
}
