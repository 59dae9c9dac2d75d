//! A proxy named by the environment carries the MCP endpoint's requests over plain http too:
//! the transport's direct connections (`net::direct`) step aside when any proxy variable is
//! set, and reqwest's proxy rules decide. Its own test binary, because it sets the process's
//! proxy variables.

mod http_support;

use http_support::*;
use mcp_client::{ConnectMode, RequestOptions};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_endpoint_is_reached_through_the_environments_proxy() {
    // The "proxy" answers as the MCP server itself: what matters is that it is asked.
    let proxy = Server::start(|req| async move {
        let id = req.id();
        match req.rpc_method().as_deref() {
            Some("server/discover") => Reply::json(result(&id, discover_result())),
            Some("tools/call") => Reply::json(result(&id, text_result("via proxy"))),
            _ => Reply::status(202),
        }
    })
    .await;
    // This binary's only test: nothing else reads the environment meanwhile.
    std::env::set_var("http_proxy", proxy.url(""));
    // Never dialled: the proxy is asked for it.
    let client = client_for(http_config("http://mcp.test:9/mcp"), ConnectMode::Modern);
    client.connect().await.unwrap();
    let r = client
        .call_tool("echo", Some(json!({"text": "hi"})), &RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(r["content"][0]["text"], "via proxy");
    let posts = proxy.posts();
    assert_eq!(posts.len(), 2, "{:?}", proxy.summary());
    for post in posts {
        assert_eq!(post.path, "http://mcp.test:9/mcp", "absolute form, as to a proxy");
    }
}
