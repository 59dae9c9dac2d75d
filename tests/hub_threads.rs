//! A hub's threads stay flat in its member count: members run on the host's runtime, and every
//! stdio server of the process is reaped by one thread. Alone in its binary, so no other test's
//! threads come and go while it counts.

mod common;

use common::*;
use mcp_client::hub::{Hub, HubOptions, HubSpec, MemberSpec, MemberState, ToolFilter};
use serde_json::json;

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

fn spec(members: usize) -> HubSpec {
    let members = (0..members)
        .map(|i| MemberSpec {
            name: format!("m{i}"),
            enabled: true,
            client: json!({"command": fixture_str(), "probe_timeout_ms": 500, "shutdown_grace_ms": 500}),
            tools: ToolFilter::default(),
            lazy: false,
            max_concurrency: None,
        })
        .collect();
    HubSpec {
        members,
        warnings: vec![],
        failed: vec![],
    }
}

/// The process's threads with a hub of `members` members connected and listed.
async fn threads_with(members: usize) -> usize {
    let hub = Hub::new(spec(members), HubOptions::default()).unwrap();
    hub.start().await;
    assert!(hub.members().iter().all(|m| m.state == MemberState::Connected));
    let tools = hub.list_tools().await.unwrap();
    assert!(tools["tools"].as_array().unwrap().len() >= members);
    let out = hub
        .call_tool("m0__echo", Some(json!({"text": "hi"})), &none())
        .await
        .unwrap();
    assert_eq!(text(&out), "hi");
    let count = threads();
    hub.close().await;
    count
}

#[tokio::test]
async fn threads_stay_flat_from_one_member_to_ten() {
    fixture_bin();
    let one = threads_with(1).await;
    let ten = threads_with(10).await;
    eprintln!("threads: 1 member {one}, 10 members {ten}");
    assert!(ten <= one, "1 member: {one} threads, 10 members: {ten}");
}
