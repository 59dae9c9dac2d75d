//! MCP Apps (SEP-1865), with `--apps`: tools linked to `ui://` resources, and the resources
//! (a good one, and ones that break each rule a client checks).

use crate::tools::text_result;
use crate::wire::Reply;
use serde_json::{json, Value};

pub const MIME: &str = "text/html;profile=mcp-app";
pub const PAGE: &str = "<!DOCTYPE html><html><body>weather app</body></html>";

/// The tools `--apps` adds to `tools/list`.
pub fn tools() -> Vec<Value> {
    let tool = |name: &str, description: &str, meta: Value| json!({"name": name, "description": description, "inputSchema": {"type": "object"}, "_meta": meta});
    vec![
        tool(
            "weather_app",
            "Weather with a view",
            json!({"ui": {"resourceUri": "ui://fixture/weather"}}),
        ),
        tool(
            "refresh_app",
            "Refreshes the view (app only)",
            json!({"ui": {"resourceUri": "ui://fixture/weather", "visibility": ["app"]}}),
        ),
        tool(
            "legacy_link_app",
            "Linked with the flat key",
            json!({"ui/resourceUri": "ui://fixture/weather"}),
        ),
        tool(
            "not_ui_app",
            "A link that is not ui://",
            json!({"ui": {"resourceUri": "https://fixture.example/x"}}),
        ),
    ]
}

/// `tools/call` of an apps tool.
pub fn call(name: &str) -> Option<Reply> {
    tools()
        .iter()
        .any(|t| t["name"] == name)
        .then(|| Reply::Result(text_result(&format!("{name} ran"))))
}

/// The `contents` entry of a `ui://fixture/...` resource.
pub fn read(uri: &str) -> Option<Value> {
    let html = |mime: &str, text: &str| json!({"uri": uri, "mimeType": mime, "text": text});
    Some(match uri {
        "ui://fixture/weather" => {
            let mut c = html(MIME, PAGE);
            c["_meta"] = json!({"ui": {"csp": {"connectDomains": ["https://api.example"]}, "prefersBorder": true}});
            c
        }
        // base64 of PAGE
        "ui://fixture/blob" => json!({"uri": uri, "mimeType": MIME,
            "blob": "PCFET0NUWVBFIGh0bWw+PGh0bWw+PGJvZHk+d2VhdGhlciBhcHA8L2JvZHk+PC9odG1sPg=="}),
        "ui://fixture/plain-html" => html("text/html", PAGE),
        "ui://fixture/big" => html(MIME, &"x".repeat(300_000)),
        "ui://fixture/other-uri" => json!({"uri": "ui://fixture/weather", "mimeType": MIME, "text": PAGE}),
        "ui://fixture/empty" => json!({"uri": uri, "mimeType": MIME}),
        _ => return None,
    })
}
