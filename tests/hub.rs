//! The hub over real members: fixture servers over stdio (both eras) and HTTP, and members that
//! cannot work (a command that does not exist, one that exits at start, one that never answers,
//! one disabled). Server pids come from the `PID_SCRIPT` wrapper's stderr line, which reaches the
//! hub's listener as a member's log event.

mod common;

use common::*;
use mcp_client::hub::{Hub, HubEvent, HubEventFn, HubOptions, HubSpec, MemberSpec, MemberState, ToolFilter};
use mcp_client::observe::{AttrValue, Observer, SessionRecord, Span, SERVER_NAME};
use mcp_client::TraceContext;
use mcp_client::{ErrorKind, InputKind, InputRequest, ListKind, RequestOptions};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A member with the test timeouts over `client` (a flat client configuration).
fn member(name: &str, mut client: Value) -> MemberSpec {
    let obj = client.as_object_mut().unwrap();
    obj.entry("probe_timeout_ms").or_insert(json!(500));
    obj.entry("request_timeout_ms").or_insert(json!(10_000));
    if obj.contains_key("command") {
        obj.entry("shutdown_grace_ms").or_insert(json!(500));
    }
    MemberSpec {
        name: name.into(),
        enabled: true,
        client,
        tools: ToolFilter::default(),
        lazy: false,
        max_concurrency: None,
    }
}

/// The fixture over stdio with `args`, reporting its pid on stderr first.
fn fixture(args: &[&str]) -> Value {
    let mut all = vec!["-c".to_string(), PID_SCRIPT.to_string(), fixture_str()];
    all.extend(args.iter().map(|s| s.to_string()));
    json!({"command": "/bin/sh", "args": all})
}

/// Collects every event of `hub`.
fn collect(hub: &Hub) -> Events<HubEvent> {
    let events = Events::default();
    let sink = events.clone();
    let f: HubEventFn = Arc::new(move |e: &HubEvent| sink.push(e.clone()));
    hub.on_event(Some(f));
    events
}

/// The pids member `server` reported, in order.
fn pids(events: &Events<HubEvent>, server: &str) -> Vec<u32> {
    events
        .snapshot()
        .iter()
        .filter_map(|e| match e {
            HubEvent::Log { server: s, line } if s == server => line.message.strip_prefix("wrapper pid ")?.parse().ok(),
            _ => None,
        })
        .collect()
}

async fn pid_of(events: &Events<HubEvent>, server: &str) -> u32 {
    let what = format!("the pid of {server}");
    events
        .wait_for(&what, |e| matches!(e, HubEvent::Log { server: s, line } if s == server && line.message.starts_with("wrapper pid ")))
        .await;
    *pids(events, server).last().unwrap()
}

fn state(hub: &Hub, server: &str) -> MemberState {
    hub.members().into_iter().find(|m| m.name == server).unwrap().state
}

fn tool_names(list: &Value) -> Vec<String> {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

async fn gone(pid: u32) -> bool {
    eventually(Duration::from_secs(5), || !process_alive(pid)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hub_merges_its_members_routes_calls_and_survives_broken_ones() {
    let http = HttpFixture::start(&[]);
    let mut disabled = member("off", fixture(&[]));
    disabled.enabled = false;
    let never = json!({"command": "/bin/sh", "args": ["-c", "echo \"wrapper pid $$\" >&2; exec sleep 300"],
                       "connect_timeout_ms": 1500});
    let spec = HubSpec {
        members: vec![
            member("fix", fixture(&["--era", "modern"])),
            member("web", json!({"url": http.1})),
            member("old", fixture(&["--era", "legacy"])),
            member("missing", json!({"command": "/nonexistent/mcp-server"})),
            member("exits", json!({"command": "/bin/sh", "args": ["-c", "exit 3"]})),
            member("silent", never),
            disabled,
        ],
        warnings: vec!["`autoApprove` of fix is ignored".into()],
        failed: vec![],
    };
    let hub = Hub::new(spec, HubOptions::default()).unwrap();
    let events = collect(&hub);
    for m in hub.members() {
        assert!(matches!(m.state, MemberState::Idle | MemberState::Disabled), "{m:?}");
    }
    let (_, took) = timed(Duration::from_secs(20), hub.start()).await;
    assert!(
        took < Duration::from_secs(8),
        "members connect concurrently, bounded: {took:?}"
    );

    let states: Vec<(String, MemberState)> = hub.members().into_iter().map(|m| (m.name, m.state)).collect();
    use MemberState::*;
    assert_eq!(
        states,
        [
            ("fix", Connected),
            ("web", Connected),
            ("old", Connected),
            ("missing", Failed),
            ("exits", Failed),
            ("silent", Failed),
            ("off", Disabled)
        ]
        .map(|(n, s)| (n.to_string(), s))
    );
    let error = |name: &str| {
        hub.members()
            .into_iter()
            .find(|m| m.name == name)
            .unwrap()
            .error
            .unwrap()
    };
    assert!(
        error("missing").message().starts_with("member `missing`: "),
        "{}",
        error("missing").message()
    );
    assert_eq!(
        error("silent").kind(),
        ErrorKind::Timeout,
        "{}",
        error("silent").message()
    );
    let status = hub.members_json();
    assert_eq!(status[0]["era"], "modern");
    assert_eq!(status[2]["era"], "legacy");
    assert_eq!(status[6], json!({"name": "off", "state": "disabled"}));
    assert_eq!(hub.warnings(), ["`autoApprove` of fix is ignored"]);
    assert!(events.snapshot().contains(&HubEvent::State {
        server: "fix".into(),
        state: Connected,
        error: None
    }));

    // The merged catalogue: every working member's tools, namespaced, each naming its member.
    let tools = hub.list_tools().await.unwrap();
    let names = tool_names(&tools);
    for name in ["fix__echo", "web__echo", "old__echo", "old__notify"] {
        assert!(names.contains(&name.to_string()), "{name} in {names:?}");
    }
    assert!(names
        .iter()
        .all(|n| ["fix__", "web__", "old__"].iter().any(|p| n.starts_with(p))));
    let echo = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "web__echo")
        .unwrap();
    assert_eq!(echo["_meta"]["mcp-client/server"], "web");
    assert_eq!(echo["_meta"]["mcp-client/name"], "echo");
    let resources = hub.list_resources().await.unwrap();
    let statics: Vec<&Value> = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["uri"] == "fixture://static")
        .collect();
    assert_eq!(statics.len(), 3, "one per connected member");
    let prompts = hub.list(ListKind::Prompts).await.unwrap();
    assert!(prompts["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "old__greeting"));
    let templates = hub.list_resource_templates().await.unwrap();
    assert_eq!(templates["resourceTemplates"][0]["_meta"]["mcp-client/server"], "fix");

    // Routing: each name to its member, over its own transport and era.
    let out = hub
        .call_tool("web__add", Some(json!({"a": 2, "b": 3})), &none())
        .await
        .unwrap();
    assert_eq!(text(&out), "5");
    let out = hub
        .call_tool("old__echo", Some(json!({"text": "legacy"})), &none())
        .await
        .unwrap();
    assert_eq!(text(&out), "legacy");
    let prompt = hub
        .get_prompt("fix__greeting", Some(json!({"name": "Ada"})), &none())
        .await
        .unwrap();
    assert_eq!(prompt["messages"][0]["content"]["text"], "Hello, Ada!");
    let read = hub.read_resource("old", "fixture://static", &none()).await.unwrap();
    assert_eq!(read["contents"][0]["text"], "static content");

    // Clear errors: a near miss, an unknown member, a failed member.
    let err = expect_err(hub.call_tool("fix__ecko", None, &none()).await, "unknown tool");
    assert_kind(&err, ErrorKind::InvalidArgument);
    assert!(err.message().contains("`fix__echo`"), "{}", err.message());
    let err = expect_err(
        hub.read_resource("nobody", "fixture://static", &none()).await,
        "unknown member",
    );
    assert!(
        err.message().contains("no member is named `nobody`"),
        "{}",
        err.message()
    );
    let err = expect_err(
        hub.read_resource("missing", "fixture://static", &none()).await,
        "failed member",
    );
    assert!(err.message().starts_with("member `missing`"), "{}", err.message());
    let err = expect_err(
        hub.read_resource("off", "fixture://static", &none()).await,
        "disabled member",
    );
    assert_kind(&err, ErrorKind::Unsupported);

    // Close: every server is gone, the one that never answered included.
    let servers: Vec<u32> = ["fix", "old", "silent"].iter().map(|s| pids(&events, s)[0]).collect();
    hub.close().await;
    for pid in servers {
        assert!(gone(pid).await, "server {pid} still runs after close");
    }
    assert_kind(&expect_err(hub.list_tools().await, "closed"), ErrorKind::Closed);
    assert!(hub.members().iter().all(|m| m.state == Closed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_that_crashes_leaves_the_catalogue() {
    let hub = Hub::new(
        HubSpec {
            members: vec![member("a", fixture(&[])), member("b", fixture(&[]))],
            warnings: vec![],
            failed: vec![],
        },
        HubOptions::default(),
    )
    .unwrap();
    let events = collect(&hub);
    hub.start().await;
    let names = tool_names(&hub.list_tools().await.unwrap());
    let of = |p: &str| names.iter().filter(|n| n.starts_with(p)).count();
    assert!(of("a__") > 0 && of("a__") == of("b__"), "{names:?}");
    let err = expect_err(hub.call_tool("a__crash", None, &none()).await, "crash");
    assert!(err.message().starts_with("member `a`: "), "{}", err.message());
    assert_eq!(state(&hub, "a"), MemberState::Failed);
    events
        .wait_for(
            "a failed",
            |e| matches!(e, HubEvent::State { server, state: MemberState::Failed, .. } if server == "a"),
        )
        .await;
    let names = tool_names(&hub.list_tools().await.unwrap());
    assert!(
        names.iter().all(|n| n.starts_with("b__")) && !names.is_empty(),
        "{names:?}"
    );
    let pid = pids(&events, "b")[0];
    hub.close().await;
    assert!(gone(pid).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_collide_without_prefixes_and_are_shortened_past_64_characters() {
    let spec = || HubSpec {
        members: vec![member("one", fixture(&[])), member("two", fixture(&[]))],
        warnings: vec![],
        failed: vec![],
    };
    let options = HubOptions {
        prefix: false,
        ..HubOptions::default()
    };
    let hub = Hub::new(spec(), options).unwrap();
    hub.start().await;
    let err = expect_err(hub.list_tools().await, "collision");
    assert_kind(&err, ErrorKind::InvalidArgument);
    assert!(
        err.message()
            .contains("`echo` of member `one` and `echo` of member `two`"),
        "{}",
        err.message()
    );
    hub.close().await;

    // A member name that makes names too long and one with characters models refuse.
    let long = "a".repeat(70);
    let spec = HubSpec {
        members: vec![member(&long, fixture(&[])), member("my.server", fixture(&[]))],
        warnings: vec![],
        failed: vec![],
    };
    let hub = Hub::new(spec.clone(), HubOptions::default()).unwrap();
    hub.start().await;
    let tools = hub.list_tools().await.unwrap();
    let names = tool_names(&tools);
    let legal = |n: &str| {
        !n.is_empty() && n.len() <= 64 && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    assert!(names.iter().all(|n| legal(n)), "{names:?}");
    let unique: std::collections::HashSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "shortened names stay distinct");
    let echo_of = |member: &str| {
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["_meta"]["mcp-client/server"] == member && t["_meta"]["mcp-client/name"] == "echo")
            .unwrap()["name"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (long_echo, dotted_echo) = (echo_of(&long), echo_of("my.server"));
    assert_eq!(long_echo.len(), 64);
    assert!(dotted_echo.starts_with("my_server__echo_"), "{dotted_echo}");
    let out = hub
        .call_tool(&long_echo, Some(json!({"text": "long"})), &none())
        .await
        .unwrap();
    assert_eq!(text(&out), "long");
    let out = hub
        .call_tool(&dotted_echo, Some(json!({"text": "dotted"})), &none())
        .await
        .unwrap();
    assert_eq!(text(&out), "dotted");
    hub.close().await;
    // Stable: another hub of the same spec exports the same names.
    let again = Hub::new(spec, HubOptions::default()).unwrap();
    again.start().await;
    assert_eq!(tool_names(&again.list_tools().await.unwrap()), names);
    again.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_and_deny_lists_hide_tools_from_the_list_and_from_calls() {
    let mut m = member("fix", fixture(&[]));
    m.tools = ToolFilter {
        allow: Some(vec!["e*".into(), "add".into()]),
        deny: vec!["elicit*".into()],
    };
    let options = HubOptions {
        separator: "-".into(),
        ..HubOptions::default()
    };
    let hub = Hub::new(
        HubSpec {
            members: vec![m],
            warnings: vec![],
            failed: vec![],
        },
        options,
    )
    .unwrap();
    hub.start().await;
    let mut names = tool_names(&hub.list_tools().await.unwrap());
    names.sort();
    assert_eq!(names, ["fix-add", "fix-echo", "fix-echo_meta", "fix-end_listens"]);
    let err = expect_err(hub.call_tool("fix-elicit_once", None, &none()).await, "denied");
    assert_kind(&err, ErrorKind::InvalidArgument);
    let out = hub
        .call_tool("fix-add", Some(json!({"a": 1, "b": 1})), &none())
        .await
        .unwrap();
    assert_eq!(text(&out), "2");
    hub.close().await;
}

/// `list_changed` from one member reaches the merged list: the member's list is fetched again
/// (and only then), and the host hears of it. Modern members through `subscriptions/listen`,
/// legacy ones through their notifications.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_from_one_member_reaches_the_merged_list() {
    let modern = Fixture::modern(&[]);
    let legacy = Fixture::legacy(&[]);
    let with_record = |f: &Fixture, mode: &str| json!({"command": fixture_str(), "args": f.args(), "mode": mode});
    let spec = HubSpec {
        members: vec![
            member("new", with_record(&modern, "modern")),
            member("old", with_record(&legacy, "legacy")),
        ],
        warnings: vec![],
        failed: vec![],
    };
    let hub = Hub::new(spec, HubOptions::default()).unwrap();
    let events = collect(&hub);
    hub.start().await;
    assert_eq!(
        modern.wire.requests("subscriptions/listen").len(),
        1,
        "the hub listens for list changes"
    );
    hub.list_tools().await.unwrap();
    hub.list_tools().await.unwrap();
    assert_eq!(
        modern.wire.requests("tools/list").len(),
        1,
        "the second list is the hub's"
    );
    assert_eq!(legacy.wire.requests("tools/list").len(), 1);

    for (server, wire) in [("new", &modern.wire), ("old", &legacy.wire)] {
        hub.call_tool(&format!("{server}__notify"), None, &none())
            .await
            .unwrap();
        events
            .wait_for(
                "the list change",
                |e| matches!(e, HubEvent::ListChanged { server: s, kind: ListKind::Tools } if s == server),
            )
            .await;
        hub.list_tools().await.unwrap();
        assert_eq!(
            wire.requests("tools/list").len(),
            2,
            "{server}: listed again after its change"
        );
    }
    assert_eq!(
        modern.wire.requests("tools/list").len(),
        2,
        "the other member's change did not re-list it"
    );
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_starts_added_stops_removed_and_restarts_only_changed_members() {
    let keep = Fixture::new(&[]);
    let keep_args = [vec!["-c".to_string(), PID_SCRIPT.into(), fixture_str()], keep.args()].concat();
    let keep_member = member("keep", json!({"command": "/bin/sh", "args": keep_args}));
    let spec = HubSpec {
        members: vec![
            keep_member.clone(),
            member("change", fixture(&[])),
            member("drop", fixture(&[])),
            member("broken", json!({"command": "/nonexistent/mcp-server"})),
        ],
        warnings: vec![],
        failed: vec![],
    };
    let hub = Hub::new(spec, HubOptions::default()).unwrap();
    let events = collect(&hub);
    hub.start().await;
    hub.list_tools().await.unwrap();
    let (keep_pid, change_pid, drop_pid) = (
        pid_of(&events, "keep").await,
        pid_of(&events, "change").await,
        pid_of(&events, "drop").await,
    );

    let next = HubSpec {
        members: vec![
            member("add", fixture(&[])),
            keep_member,
            member("change", fixture(&["--page-size", "5"])),
            member("broken", json!({"command": "/nonexistent/mcp-server"})),
        ],
        warnings: vec![],
        failed: vec![],
    };
    let report = hub.reload(next).await.unwrap();
    assert_eq!(report.added, ["add"]);
    assert_eq!(report.removed, ["drop"]);
    assert_eq!(report.restarted, ["change", "broken"], "a failed member is tried again");
    assert_eq!(report.unchanged, ["keep"]);
    let names: Vec<String> = hub.members().into_iter().map(|m| m.name).collect();
    assert_eq!(names, ["add", "keep", "change", "broken"]);
    let states: Vec<MemberState> = hub.members().iter().map(|m| m.state).collect();
    use MemberState::*;
    assert_eq!(states, [Connected, Connected, Connected, Failed]);

    assert!(gone(drop_pid).await, "the removed member's server stopped");
    assert!(gone(change_pid).await, "the changed member's old server stopped");
    assert!(process_alive(keep_pid), "the unchanged member kept its server");
    assert_eq!(pids(&events, "keep"), [keep_pid], "and was not started again");
    events
        .wait_for("the new server's pid", |_| pids(&events, "change").len() == 2)
        .await;
    let new_change = pids(&events, "change")[1];
    assert_ne!(new_change, change_pid);

    let tools = tool_names(&hub.list_tools().await.unwrap());
    assert!(tools.contains(&"add__echo".to_string()) && !tools.iter().any(|t| t.starts_with("drop__")));
    assert_eq!(
        keep.wire.requests("tools/list").len(),
        1,
        "the unchanged member's list was kept"
    );
    let out = hub
        .call_tool("keep__echo", Some(json!({"text": "still here"})), &none())
        .await
        .unwrap();
    assert_eq!(text(&out), "still here");

    let err = expect_err(
        hub.reload(HubSpec {
            members: vec![member("x", fixture(&[])), member("x", fixture(&[]))],
            warnings: vec![],
            failed: vec![],
        })
        .await,
        "twins",
    );
    assert_kind(&err, ErrorKind::InvalidArgument);
    let all = [keep_pid, new_change, pid_of(&events, "add").await];
    hub.close().await;
    for pid in all {
        assert!(gone(pid).await);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lazy_members_connect_on_first_use_and_calls_respect_the_cap() {
    let mut lazy = member("lazy", fixture(&[]));
    lazy.lazy = true;
    let mut capped = member("capped", fixture(&[]));
    capped.max_concurrency = Some(1);
    let hub = Hub::new(
        HubSpec {
            members: vec![lazy, capped],
            warnings: vec![],
            failed: vec![],
        },
        HubOptions::default(),
    )
    .unwrap();
    let events = collect(&hub);
    hub.start().await;
    assert_eq!(state(&hub, "lazy"), MemberState::Idle);
    assert!(pids(&events, "lazy").is_empty(), "not started");
    // The hub's futures are Send: a host may spawn them.
    let listing = tokio::spawn({
        let hub = hub.clone();
        async move { hub.list_tools().await }
    });
    let names = tool_names(&listing.await.unwrap().unwrap());
    assert!(names.contains(&"lazy__echo".to_string()));
    assert_eq!(state(&hub, "lazy"), MemberState::Connected);

    let opts = none();
    let slow = || hub.call_tool("capped__slow", Some(json!({"ms": 300})), &opts);
    let (both, took) = timed(Duration::from_secs(10), async { tokio::join!(slow(), slow()) }).await;
    assert!(both.0.is_ok() && both.1.is_ok());
    assert!(took >= Duration::from_millis(600), "one call at a time: {took:?}");
    let free = || hub.call_tool("lazy__slow", Some(json!({"ms": 300})), &opts);
    let (_, took) = timed(Duration::from_secs(10), async { tokio::join!(free(), free()) }).await;
    assert!(took < Duration::from_millis(600), "no cap: {took:?}");
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handlers_registered_on_the_hub_answer_every_member() {
    let spec = HubSpec {
        members: vec![
            member("new", fixture(&["--era", "modern"])),
            member("old", fixture(&["--era", "legacy"])),
        ],
        warnings: vec![],
        failed: vec![],
    };
    let hub = Hub::new(spec, HubOptions::default()).unwrap();
    // A member's own handler, registered on its client: the hub's registrations of other
    // kinds leave it alone.
    let sampled = answer_sampling(&hub.member_client("new").unwrap(), "mine");
    hub.set_handler(
        InputKind::Elicitation,
        Some(Arc::new(|_req: InputRequest| async {
            Ok(json!({"action": "accept", "content": {"name": "Hub"}}))
        })),
    );
    hub.start().await;
    for server in ["new", "old"] {
        let out = hub
            .call_tool(&format!("{server}__elicit_once"), None, &RequestOptions::default())
            .await
            .unwrap();
        assert_eq!(text(&out), "Hello, Hub!", "{server}");
    }
    let out = hub.call_tool("new__sample_only", None, &none()).await.unwrap();
    assert_eq!(text(&out), "sampled: mine");
    assert_eq!(sampled.len(), 1);
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_whose_configuration_is_refused_fails_alone() {
    let spec = HubSpec {
        members: vec![
            member("both", json!({"command": "x", "url": "http://127.0.0.1:1/mcp"})),
            member("fix", fixture(&[])),
        ],
        warnings: vec![],
        failed: vec![],
    };
    let hub = Hub::new(spec, HubOptions::default()).unwrap();
    let refused = hub.members().into_iter().next().unwrap();
    assert_eq!(refused.state, MemberState::Failed);
    let message = refused.error.unwrap().message().to_string();
    assert!(message.starts_with("member `both`: "), "{message}");
    assert!(hub.member_client("both").is_none());
    hub.start().await;
    assert_eq!(state(&hub, "fix"), MemberState::Connected);
    assert_eq!(state(&hub, "both"), MemberState::Failed);
    hub.add_member(member("late", fixture(&[]))).unwrap();
    assert_eq!(state(&hub, "late"), MemberState::Idle);
    assert_kind(
        &hub.add_member(member("fix", fixture(&[]))).unwrap_err(),
        ErrorKind::InvalidArgument,
    );
    hub.start().await;
    assert_eq!(state(&hub, "late"), MemberState::Connected);
    assert_eq!(
        hub.spec().members.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(),
        ["both", "fix", "late"]
    );
    let twins = HubSpec {
        members: vec![member("x", fixture(&[])), member("x", fixture(&[]))],
        warnings: vec![],
        failed: vec![],
    };
    assert!(Hub::new(twins, HubOptions::default()).is_err());
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_updates_of_subscribed_resources_reach_the_listener() {
    let spec = HubSpec {
        members: vec![
            member("new", fixture(&["--era", "modern"])),
            member("old", fixture(&["--era", "legacy"])),
        ],
        warnings: vec![],
        failed: vec![],
    };
    let hub = Hub::new(spec, HubOptions::default()).unwrap();
    let events = collect(&hub);
    hub.start().await;
    for server in ["new", "old"] {
        hub.subscribe_resource(server, "fixture://static", &none())
            .await
            .unwrap();
        let args = json!({"uri": "fixture://static"});
        hub.call_tool(&format!("{server}__touch"), Some(args), &none())
            .await
            .unwrap();
        events
            .wait_for("the update", |e| {
                *e == HubEvent::ResourceUpdated {
                    server: server.into(),
                    uri: "fixture://static".into(),
                }
            })
            .await;
    }
    let err = expect_err(
        hub.subscribe_resource("nobody", "fixture://static", &none()).await,
        "unknown member",
    );
    assert_kind(&err, ErrorKind::InvalidArgument);
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hub_dropped_without_close_leaves_no_server_behind() {
    let spec = HubSpec {
        members: vec![
            member("new", fixture(&["--era", "modern"])),
            member("old", fixture(&["--era", "legacy"])),
        ],
        warnings: vec![],
        failed: vec![],
    };
    let hub = Hub::new(spec, HubOptions::default()).unwrap();
    let events = collect(&hub);
    hub.start().await;
    hub.subscribe_resource("new", "fixture://static", &none())
        .await
        .unwrap();
    let servers = [pid_of(&events, "new").await, pid_of(&events, "old").await];
    drop(hub);
    for pid in servers {
        assert!(gone(pid).await, "server {pid} outlived its hub");
    }
}

/// A configuration file's entry that could not be built (here an unset variable) is a member in
/// state `failed` with the file's message; the file's other members run.
#[tokio::test]
async fn an_entry_a_file_could_not_build_fails_alone() {
    let ctx = mcp_client::hub::ReadContext::new().env(|_| None);
    let text = json!({"mcpServers": {
        "good": {"command": fixture_str()},
        "bad": {"command": fixture_str(), "env": {"TOKEN": "${HUB_TEST_UNSET}"}},
    }})
    .to_string();
    let spec = HubSpec::from_text(&text, &ctx).unwrap();
    assert_eq!(spec.failed.len(), 1, "{:?}", spec.failed);
    let hub = Hub::new(spec, HubOptions::default()).unwrap();
    hub.start().await;
    let members = hub.members();
    let state = |name: &str| members.iter().find(|m| m.name == name).map(|m| m.state);
    assert_eq!(state("good"), Some(MemberState::Connected));
    assert_eq!(state("bad"), Some(MemberState::Failed));
    let bad = members.iter().find(|m| m.name == "bad").unwrap();
    let message = bad.error.as_ref().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("HUB_TEST_UNSET"), "{message}");
    let tools = hub.list_tools().await.unwrap();
    assert!(tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "good__echo"));
    hub.close().await;
}

/// The hub's observer as records of spans and sessions.
#[derive(Default)]
struct Recorder {
    spans: Mutex<Vec<Span>>,
    sessions: Mutex<Vec<SessionRecord>>,
}

impl Observer for Recorder {
    fn span_ended(&self, span: &Span) {
        self.spans.lock().unwrap().push(span.clone());
    }

    fn session_ended(&self, session: &SessionRecord) {
        self.sessions.lock().unwrap().push(session.clone());
    }
}

fn server_of(attribute: Option<&AttrValue>) -> &str {
    attribute.and_then(AttrValue::as_str).unwrap_or_default()
}

/// One observer and one trace context source on the hub cover every member, present and added
/// by a reload: each record names its member, the routed call's request carries the context
/// the source gave (asked on the thread polling the call, once per member operation, each
/// context with its record), the lists the call routes by included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_observer_and_trace_source_cover_every_member_and_name_it() {
    let spec = HubSpec {
        members: vec![
            member("fix", fixture(&["--era", "modern"])),
            member("old", fixture(&["--era", "legacy"])),
        ],
        ..HubSpec::default()
    };
    let hub = Hub::new(spec.clone(), HubOptions::default()).unwrap();
    let recorder = Arc::new(Recorder::default());
    hub.set_observer(Some(recorder.clone()));
    let asked: Arc<Mutex<Vec<(String, std::thread::ThreadId)>>> = Arc::default();
    let log = asked.clone();
    hub.set_trace_source(Some(Arc::new(move || {
        let mut log = log.lock().unwrap();
        let parent = format!("00-4bf92f3577b34da6a3ce929d0e0e4736-{:016x}-01", log.len() + 1);
        log.push((parent.clone(), std::thread::current().id()));
        Ok(TraceContext::new(Some(&parent), None, Some("hub=yes")).unwrap())
    })));
    hub.start().await;
    // The start's connects are the members' operations, without a parent; nothing is asked.
    {
        let spans = recorder.spans.lock().unwrap();
        let mut servers: Vec<&str> = spans.iter().map(|s| server_of(s.attribute(SERVER_NAME))).collect();
        servers.sort();
        servers.dedup();
        assert_eq!(servers, ["fix", "old"]);
        assert!(spans.iter().all(|s| s.parent.is_none()));
    }
    assert!(asked.lock().unwrap().is_empty());
    recorder.spans.lock().unwrap().clear();

    let result = hub
        .call_tool("old__echo_meta", None, &RequestOptions::default())
        .await
        .unwrap();
    let asked_now = asked.lock().unwrap().clone();
    let spans = recorder.spans.lock().unwrap().clone();
    // Both members' tool lists (to route by), then the call: each under a context of its own,
    // each asked on this thread.
    assert_eq!(asked_now.len(), 3, "{asked_now:?}");
    assert!(asked_now.iter().all(|(_, t)| *t == std::thread::current().id()));
    for (parent, _) in &asked_now {
        assert!(
            spans
                .iter()
                .any(|s| s.parent.as_ref().is_some_and(|p| &p.traceparent == parent)),
            "no record under {parent}"
        );
    }
    let call = spans.iter().find(|s| s.name == "tools/call echo_meta").unwrap();
    assert_eq!(server_of(call.attribute(SERVER_NAME)), "old");
    assert!(call.metric_attributes().any(|(k, _)| *k == SERVER_NAME));
    let parent = &call.parent.as_ref().unwrap().traceparent;
    assert_eq!(result["structuredContent"]["traceparent"], json!(parent));
    assert_eq!(result["structuredContent"]["baggage"], "hub=yes");
    let lists: Vec<&str> = spans
        .iter()
        .filter(|s| s.name == "tools/list")
        .map(|s| server_of(s.attribute(SERVER_NAME)))
        .collect();
    assert_eq!(lists.len(), 2);
    assert!(lists.contains(&"fix") && lists.contains(&"old"));

    // A per-call context wins: nothing asked.
    let own = TraceContext::new(
        Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        None,
        None,
    )
    .unwrap();
    let opts = RequestOptions {
        trace: own,
        ..RequestOptions::default()
    };
    let result = hub.call_tool("fix__echo_meta", None, &opts).await.unwrap();
    assert_eq!(
        result["structuredContent"]["traceparent"],
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    );
    assert_eq!(asked.lock().unwrap().len(), 3);

    // A member a reload adds has them too.
    let mut more = spec.clone();
    more.members.push(member("late", fixture(&[])));
    hub.reload(more).await.unwrap();
    recorder.spans.lock().unwrap().clear();
    let result = hub
        .call_tool("late__echo_meta", None, &RequestOptions::default())
        .await
        .unwrap();
    let last = asked.lock().unwrap().last().unwrap().0.clone();
    assert_eq!(result["structuredContent"]["traceparent"], json!(last));
    let spans = recorder.spans.lock().unwrap().clone();
    let call = spans.iter().find(|s| s.name == "tools/call echo_meta").unwrap();
    assert_eq!(server_of(call.attribute(SERVER_NAME)), "late");
    assert_eq!(call.parent.as_ref().unwrap().traceparent, last);

    // Each member's session ends with the close, named by it.
    hub.close().await;
    let mut ended: Vec<String> = recorder
        .sessions
        .lock()
        .unwrap()
        .iter()
        .map(|s| server_of(s.attribute(SERVER_NAME)).to_string())
        .collect();
    ended.sort();
    assert_eq!(ended, ["fix", "late", "old"]);

    // Removed: the members' clients have no observer left.
    hub.set_observer(None);
    assert_eq!(Arc::strong_count(&recorder), 1);
}
