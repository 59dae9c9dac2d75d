//! MCP Apps (SEP-1865) against the fixture with `--apps`, both eras: the extension declared
//! when the host can render, each tool's UI link, the verified read of a view (and every way a
//! view can fail the checks), and app-only tools kept out of what is exported to the model, for
//! one client and through a hub.

mod common;

use common::*;
use mcp_client::apps::{read_app, tool_ui, DEFAULT_MAX_APP_BYTES};
use mcp_client::export::{export_tools, ExportOptions};
use mcp_client::hub::{Hub, HubOptions, HubSpec, MemberSpec, ToolFilter};
use mcp_client::{Client, ErrorKind, ListKind, RequestOptions};
use serde_json::{json, Value};

const PAGE: &str = "<!DOCTYPE html><html><body>weather app</body></html>";

fn tool<'a>(tools: &'a Value, name: &str) -> &'a Value {
    tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap()
}

fn exported_names(exported: &Value) -> Vec<String> {
    exported["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t["function"]["name"]
                .as_str()
                .or(t["name"].as_str())
                .unwrap()
                .to_string()
        })
        .collect()
}

async fn read(client: &Client, uri: &str, max: usize) -> mcp_client::Result<mcp_client::apps::AppResource> {
    read_app(client, uri, max, &RequestOptions::default()).await
}

#[tokio::test]
async fn links_views_and_the_declaration_on_both_eras() {
    for fx in [Fixture::modern(&["--apps"]), Fixture::legacy(&["--apps"])] {
        let client = fx.client_with(|c| c.apps = true);
        let tools = client.list_all(ListKind::Tools, &none()).await.unwrap();

        let link = tool_ui(tool(&tools, "weather_app")).unwrap();
        assert_eq!(
            (link.resource_uri.as_str(), link.model, link.app),
            ("ui://fixture/weather", true, true)
        );
        let app_only = tool_ui(tool(&tools, "refresh_app")).unwrap();
        assert!(!app_only.model && app_only.app);
        assert_eq!(
            tool_ui(tool(&tools, "legacy_link_app")).unwrap().resource_uri,
            "ui://fixture/weather"
        );
        assert!(
            tool_ui(tool(&tools, "not_ui_app")).is_none(),
            "an https link is no link"
        );
        assert!(tool_ui(tool(&tools, "echo")).is_none());

        let view = read(&client, &link.resource_uri, DEFAULT_MAX_APP_BYTES).await.unwrap();
        assert_eq!(view.html, PAGE);
        assert_eq!(view.ui_meta["prefersBorder"], true);
        assert_eq!(view.ui_meta["csp"]["connectDomains"], json!(["https://api.example"]));
        assert_eq!(read(&client, "ui://fixture/blob", 1000).await.unwrap().html, PAGE);
        assert_eq!(
            read(&client, "ui://fixture/big", DEFAULT_MAX_APP_BYTES)
                .await
                .unwrap()
                .html
                .len(),
            300_000
        );

        for (uri, max, kind, why) in [
            (
                "ui://fixture/plain-html",
                1000,
                ErrorKind::ProtocolViolation,
                "MIME type",
            ),
            ("ui://fixture/other-uri", 1000, ErrorKind::ProtocolViolation, "no entry"),
            (
                "ui://fixture/empty",
                1000,
                ErrorKind::ProtocolViolation,
                "neither text nor blob",
            ),
            (
                "ui://fixture/big",
                100_000,
                ErrorKind::MessageTooLarge,
                "more than the bound of 100000",
            ),
            ("ui://fixture/blob", 10, ErrorKind::MessageTooLarge, "bound"),
        ] {
            let err = expect_err(read(&client, uri, max).await, uri);
            assert_kind(&err, kind);
            assert!(err.message().contains(why), "{uri}: {}", err.message());
        }
        let before = fx.wire.requests("resources/read").len();
        let err = expect_err(read(&client, "https://fixture.example/x", 1000).await, "https");
        assert_kind(&err, ErrorKind::InvalidArgument);
        assert_eq!(fx.wire.requests("resources/read").len(), before, "nothing is sent");

        // The model never sees the app-only tool; the others export.
        let exported = export_tools(&tools, None, &ExportOptions::default())
            .unwrap()
            .to_value();
        let names = exported_names(&exported);
        assert!(
            names.contains(&"weather_app".to_string()) && !names.contains(&"refresh_app".to_string()),
            "{names:?}"
        );
        assert!(exported["report"].to_string().contains("app-only"), "{exported}");
        client.close().await;

        let sent = fx.wire.messages();
        let declared = sent.iter().any(|m| {
            let caps = match m["params"]["capabilities"].is_object() {
                true => &m["params"]["capabilities"],
                false => &m["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
            };
            caps["extensions"]["io.modelcontextprotocol/ui"] == json!({"mimeTypes": ["text/html;profile=mcp-app"]})
        });
        assert!(declared, "{sent:?}");
    }
}

#[tokio::test]
async fn not_declared_unless_the_host_renders() {
    let fx = Fixture::legacy(&["--apps"]);
    let client = fx.client();
    client.connect().await.unwrap();
    client.close().await;
    let init = &fx.wire.requests("initialize")[0];
    assert!(
        init["params"]["capabilities"]["extensions"]["io.modelcontextprotocol/ui"].is_null(),
        "{init}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hub_exports_no_app_only_tool() {
    let member = |name: &str, era: &str| MemberSpec {
        name: name.into(),
        enabled: true,
        client: json!({"command": fixture_str(), "args": ["--apps", "--era", era], "apps": true,
                       "request_timeout_ms": 10000, "shutdown_grace_ms": 500}),
        tools: ToolFilter::default(),
        lazy: false,
        max_concurrency: None,
    };
    let spec = HubSpec {
        members: vec![member("new", "modern"), member("old", "legacy")],
        warnings: vec![],
        failed: vec![],
    };
    let hub = Hub::new(spec, HubOptions::default()).unwrap();
    hub.start().await;
    let tools = hub.list_tools().await.unwrap();
    let listed: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        listed.contains(&"new__refresh_app") && listed.contains(&"old__refresh_app"),
        "{listed:?}"
    );
    let exported = export_tools(&tools, None, &ExportOptions::default())
        .unwrap()
        .to_value();
    let names = exported_names(&exported);
    assert!(names.iter().all(|n| !n.ends_with("refresh_app")), "{names:?}");
    assert!(
        names.iter().any(|n| n == "new__weather_app") && names.iter().any(|n| n == "old__weather_app"),
        "{names:?}"
    );
    hub.close().await;
}
