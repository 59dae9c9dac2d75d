//! MCP Apps (SEP-1865, extension `io.modelcontextprotocol/ui`): servers attach interactive
//! views to tools. A tool's `_meta.ui.resourceUri` names a `ui://` resource served as
//! `text/html;profile=mcp-app`; its `_meta.ui.visibility` says whether the model, the app, or
//! both may call it (both when absent). The host renders; the client's part is here:
//!
//! - declaring the extension when the host can render (configuration key `apps`, in
//!   `client::registration` with [`crate::protocol::meta::APPS_EXTENSION`]);
//! - [`tool_ui`](crate::apps::tool_ui): a tool's UI link (the nested `_meta.ui.resourceUri` wins over the deprecated
//!   flat `_meta["ui/resourceUri"]`; a link that is not `ui://` is no link, the tool stays a
//!   plain tool);
//! - [`read_app`](crate::apps::read_app): `resources/read` of the link, verified (the `ui://` scheme, the entry's URI,
//!   the MIME type, text or base64 content that is UTF-8, a size bound) before the host sees it;
//! - app-only tools are withheld from what `crate::export` gives the model ([`ToolUi::model`](crate::apps::ToolUi::model)).

use crate::client::{Client, RequestOptions};
use crate::error::{Error, ErrorKind, Result};
use base64::Engine;
use serde_json::{json, Value};

pub use crate::protocol::meta::{APPS_EXTENSION, APP_MIME_TYPE};
/// The default bound on an app's HTML, in bytes (decoded).
pub const DEFAULT_MAX_APP_BYTES: usize = 4 * 1024 * 1024;

/// A tool's UI link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolUi {
    /// The `ui://` resource that renders the tool's results.
    pub resource_uri: String,
    /// The model may see and call the tool.
    pub model: bool,
    /// The app may call the tool.
    pub app: bool,
}

impl ToolUi {
    /// As JSON: `{"resourceUri", "visibility": [...], "model": bool, "app": bool}`.
    pub fn to_json(&self) -> Value {
        let visibility: Vec<&str> = [("model", self.model), ("app", self.app)]
            .into_iter()
            .filter_map(|(name, on)| on.then_some(name))
            .collect();
        json!({"resourceUri": self.resource_uri, "visibility": visibility, "model": self.model, "app": self.app})
    }
}

/// Who may call a tool, from its `_meta.ui.visibility` (both when absent or not an array of
/// strings), with or without a UI link: `(model, app)`.
pub fn visibility(tool: &Value) -> (bool, bool) {
    let Some(list) = tool.pointer("/_meta/ui/visibility").and_then(Value::as_array) else {
        return (true, true);
    };
    let has = |name: &str| list.iter().any(|v| v == name);
    (has("model"), has("app"))
}

/// Whether the model may see and call `tool` (false for an app-only tool).
pub fn model_may_call(tool: &Value) -> bool {
    visibility(tool).0
}

/// A tool's UI link; `None` without one, or when it is not a `ui://` URI.
pub fn tool_ui(tool: &Value) -> Option<ToolUi> {
    let meta = tool.get("_meta")?;
    let uri = meta
        .pointer("/ui/resourceUri")
        .or_else(|| meta.get("ui/resourceUri"))
        .and_then(Value::as_str)?;
    if !is_ui_uri(uri) {
        return None;
    }
    let (model, app) = visibility(tool);
    Some(ToolUi {
        resource_uri: uri.to_string(),
        model,
        app,
    })
}

fn is_ui_uri(uri: &str) -> bool {
    uri.len() > 5 && uri[..5].eq_ignore_ascii_case("ui://")
}

/// An app's view, verified.
#[derive(Debug, Clone, PartialEq)]
pub struct AppResource {
    /// The `ui://` URI read.
    pub uri: String,
    /// The HTML document (from `text`, or the decoded `blob`).
    pub html: String,
    /// The entry's `_meta.ui` (CSP domains, permissions, domain, border), `null` without one:
    /// the host builds its sandbox from it.
    pub ui_meta: Value,
}

impl AppResource {
    /// As JSON: `{"uri", "html", "meta"}`.
    pub fn to_json(&self) -> Value {
        json!({"uri": self.uri, "html": self.html, "meta": self.ui_meta})
    }
}

/// Reads `uri` (a `ui://` resource) and verifies it: the answer's entry for that URI has the
/// MIME type `text/html;profile=mcp-app` and its HTML as `text` or base64 `blob` (UTF-8), at
/// most `max_bytes` long. `InvalidArgument` for a URI that is not `ui://`, `MessageTooLarge`
/// over the bound, `ProtocolViolation` for any other failed check; the server's text is never
/// quoted.
pub async fn read_app(client: &Client, uri: &str, max_bytes: usize, opts: &RequestOptions) -> Result<AppResource> {
    if !is_ui_uri(uri) {
        return Err(Error::invalid("an app's resource URI must use the ui:// scheme"));
    }
    let result = client.read_resource(uri, opts).await?;
    verify(uri, &result, max_bytes)
}

fn violation(uri: &str, what: &str) -> Error {
    Error::new(
        ErrorKind::ProtocolViolation,
        format!("the app resource {}: {what}", crate::untrusted::shown(uri)),
    )
}

fn verify(uri: &str, result: &Value, max_bytes: usize) -> Result<AppResource> {
    let entry = result
        .get("contents")
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find(|e| e.get("uri").and_then(Value::as_str) == Some(uri)))
        .ok_or_else(|| violation(uri, "the answer has no entry for this URI"))?;
    let mime = entry.get("mimeType").and_then(Value::as_str).unwrap_or_default();
    if !is_app_mime(mime) {
        return Err(violation(uri, "its MIME type is not text/html;profile=mcp-app"));
    }
    let too_large = |n: usize| {
        Error::new(
            ErrorKind::MessageTooLarge,
            format!(
                "the app resource {} is {n} bytes, more than the bound of {max_bytes}",
                crate::untrusted::shown(uri)
            ),
        )
    };
    let html = match (entry.get("text"), entry.get("blob")) {
        (Some(Value::String(text)), _) => {
            if text.len() > max_bytes {
                return Err(too_large(text.len()));
            }
            text.clone()
        }
        (_, Some(Value::String(blob))) => {
            // Decoded size is at most 3/4 of the encoded one: refuse before decoding.
            if blob.len() / 4 * 3 > max_bytes.saturating_add(2) {
                return Err(too_large(blob.len() / 4 * 3));
            }
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(blob)
                .map_err(|_| violation(uri, "its blob is not base64"))?;
            if bytes.len() > max_bytes {
                return Err(too_large(bytes.len()));
            }
            String::from_utf8(bytes).map_err(|_| violation(uri, "its blob is not UTF-8 text"))?
        }
        _ => return Err(violation(uri, "it has neither text nor blob")),
    };
    Ok(AppResource {
        uri: uri.to_string(),
        html,
        ui_meta: entry.pointer("/_meta/ui").cloned().unwrap_or(Value::Null),
    })
}

/// `text/html;profile=mcp-app`, compared as a media type: case-insensitive type and parameter
/// name, spaces around the `;` allowed, the profile value optionally quoted.
fn is_app_mime(mime: &str) -> bool {
    let mut parts = mime.split(';').map(str::trim);
    let essence = parts.next().unwrap_or_default();
    if !essence.eq_ignore_ascii_case("text/html") {
        return false;
    }
    let params: Vec<&str> = parts.filter(|p| !p.is_empty()).collect();
    params.len() == 1
        && params[0].split_once('=').is_some_and(|(name, value)| {
            name.trim().eq_ignore_ascii_case("profile") && value.trim().trim_matches('"') == "mcp-app"
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_visibility() {
        let t = |meta: Value| json!({"name": "t", "_meta": meta});
        let ui = tool_ui(&t(json!({"ui": {"resourceUri": "ui://a/b"}}))).unwrap();
        assert_eq!((ui.resource_uri.as_str(), ui.model, ui.app), ("ui://a/b", true, true));
        let app_only = tool_ui(&t(json!({"ui": {"resourceUri": "ui://a", "visibility": ["app"]}}))).unwrap();
        assert!(!app_only.model && app_only.app);
        assert_eq!(app_only.to_json()["visibility"], json!(["app"]));
        let both = t(json!({"ui": {"resourceUri": "ui://n"}, "ui/resourceUri": "ui://flat"}));
        assert_eq!(tool_ui(&both).unwrap().resource_uri, "ui://n", "the nested key wins");
        assert_eq!(
            tool_ui(&t(json!({"ui/resourceUri": "ui://flat"})))
                .unwrap()
                .resource_uri,
            "ui://flat"
        );
        assert!(tool_ui(&t(json!({"ui": {"resourceUri": "https://x/y"}}))).is_none());
        assert!(tool_ui(&t(json!({"ui": {"resourceUri": 3}}))).is_none());
        assert!(tool_ui(&json!({"name": "plain"})).is_none());
        assert!(!model_may_call(&t(json!({"ui": {"visibility": ["app"]}}))));
        assert!(
            model_may_call(&t(json!({"ui": {"visibility": "app"}}))),
            "malformed: the default"
        );
        assert!(model_may_call(&json!({"name": "plain"})));
    }

    #[test]
    fn mime_types() {
        for ok in [
            APP_MIME_TYPE,
            "TEXT/HTML; profile=mcp-app",
            "text/html;profile=\"mcp-app\"",
        ] {
            assert!(is_app_mime(ok), "{ok}");
        }
        for bad in [
            "text/html",
            "text/plain;profile=mcp-app",
            "text/html;profile=mcp-app;x=y",
            "",
            "text/html;profile=app",
        ] {
            assert!(!is_app_mime(bad), "{bad}");
        }
    }

    #[test]
    fn verification() {
        let ok = json!({"contents": [{"uri": "ui://a", "mimeType": APP_MIME_TYPE, "text": "<p>",
                                      "_meta": {"ui": {"prefersBorder": true}}}]});
        let app = verify("ui://a", &ok, 10).unwrap();
        assert_eq!(
            (app.html.as_str(), &app.ui_meta),
            ("<p>", &json!({"prefersBorder": true}))
        );
        assert_eq!(verify("ui://a", &ok, 2).unwrap_err().kind(), ErrorKind::MessageTooLarge);
        let blob = json!({"contents": [{"uri": "ui://a", "mimeType": APP_MIME_TYPE, "blob": "PHA+"}]});
        assert_eq!(verify("ui://a", &blob, 10).unwrap().html, "<p>");
        for (bad, why) in [
            (
                json!({"contents": [{"uri": "ui://b", "mimeType": APP_MIME_TYPE, "text": "x"}]}),
                "no entry",
            ),
            (
                json!({"contents": [{"uri": "ui://a", "mimeType": "text/html", "text": "x"}]}),
                "MIME",
            ),
            (
                json!({"contents": [{"uri": "ui://a", "mimeType": APP_MIME_TYPE}]}),
                "neither",
            ),
            (
                json!({"contents": [{"uri": "ui://a", "mimeType": APP_MIME_TYPE, "blob": "%%"}]}),
                "base64",
            ),
            (
                json!({"contents": [{"uri": "ui://a", "mimeType": APP_MIME_TYPE, "blob": "/w=="}]}),
                "UTF-8",
            ),
            (json!({}), "no entry"),
        ] {
            let e = verify("ui://a", &bad, 100).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::ProtocolViolation, "{bad}");
            assert!(e.message().contains(why), "{}", e.message());
        }
    }
}
