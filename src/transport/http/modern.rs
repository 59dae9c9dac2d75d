//! Modern Streamable HTTP (2026-07-28): one POST per message with the standard headers
//! (`MCP-Protocol-Version` from `_meta`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), JSON or SSE
//! replies, cancellation by closing the response stream, `tools/list` filtering, and the one
//! reload-and-retry after a -32020 header mismatch.

use super::headers::{self, ToolHeaders};
use super::reply::Post;
use super::{header_value, Inner, Outcome, VERSION_HEADER};
use crate::error::{Error, ErrorKind, Result};
use crate::net::request::Fields;
use crate::protocol::{codes, jsonrpc, meta, methods, RequestId};
use crate::transport::RequestLine;
use hyper::body::Bytes;
use reqwest::header::{HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const VERSION: HeaderName = HeaderName::from_static(VERSION_HEADER);
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

/// Methods whose `Mcp-Method` value is their name as it is (plain ASCII, no sentinel form):
/// their header value is made without an allocation, and a request keeps their name without
/// a copy.
pub(super) const COMMON_METHODS: [&str; 6] = [
    methods::TOOLS_CALL,
    methods::TOOLS_LIST,
    methods::RESOURCES_READ,
    methods::RESOURCES_LIST,
    methods::PROMPTS_GET,
    methods::PING,
];

/// Pages of `tools/list` read when reloading the tool cache after a -32020.
const MAX_REFRESH_PAGES: usize = 20;

/// Ids of the transport's own `tools/list` requests (distinct from the session's integers).
static REFRESH_IDS: AtomicU64 = AtomicU64::new(1);

/// The members of a request that its modern headers mirror, read from the request's body
/// (the session's line or a serialised `Value`) without decoding the rest: one reading for
/// every request, however the transport got it.
#[derive(Deserialize)]
pub(super) struct RequestView<'a> {
    #[serde(borrow)]
    method: Option<&'a RawValue>,
    #[serde(default, borrow)]
    params: Option<ParamsView<'a>>,
}

#[derive(Deserialize)]
struct ParamsView<'a> {
    #[serde(borrow)]
    name: Option<&'a RawValue>,
    #[serde(borrow)]
    uri: Option<&'a RawValue>,
    #[serde(borrow, rename = "taskId")]
    task_id: Option<&'a RawValue>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
    /// Kept as text (read by [`MetaView`] when needed): whatever a caller put there, the
    /// request is still sent, as the server is the judge of its `_meta`.
    #[serde(borrow, rename = "_meta")]
    meta: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct MetaView<'a> {
    #[serde(borrow, rename = "io.modelcontextprotocol/protocolVersion")]
    version: Option<&'a RawValue>,
}

/// A member's text when it is a JSON string (anything else: none, as a header cannot mirror it).
fn text(raw: Option<&RawValue>) -> Option<Cow<'_, str>> {
    serde_json::from_str(raw?.get()).ok()
}

impl<'a> RequestView<'a> {
    fn of(body: &'a [u8]) -> Result<RequestView<'a>> {
        serde_json::from_slice(body)
            .map_err(|e| Error::protocol(format!("the request to send is not usable JSON: {e}")))
    }
}

/// What a request's modern headers are made from: the parts the session wrote its line from
/// (nothing to read back), or a view of its body (requests built as values, and a retry).
pub(super) enum HeaderSource<'a> {
    Parts(&'a RequestLine<'a>),
    Body(RequestView<'a>),
}

impl<'a> HeaderSource<'a> {
    fn method(&self) -> Option<Cow<'a, str>> {
        match self {
            HeaderSource::Parts(line) => Some(Cow::Borrowed(line.method)),
            HeaderSource::Body(view) => text(view.method),
        }
    }

    /// A member of the params as text (`headers::name_for`'s reading).
    fn member(&self, key: &str) -> Option<Cow<'a, str>> {
        match self {
            HeaderSource::Parts(line) => line.apart.text(line.params, key).map(Cow::Borrowed),
            HeaderSource::Body(view) => {
                let params = view.params.as_ref()?;
                text(match key {
                    "name" => params.name,
                    "uri" => params.uri,
                    "taskId" => params.task_id,
                    _ => None,
                })
            }
        }
    }

    fn version(&self) -> Option<Cow<'a, str>> {
        match self {
            HeaderSource::Parts(line) => line.version.map(Cow::Borrowed),
            HeaderSource::Body(view) => {
                let meta = view.params.as_ref()?.meta?;
                text(serde_json::from_str::<MetaView>(meta.get()).ok()?.version)
            }
        }
    }

    /// The arguments, decoded (only for a tool that declares `x-mcp-header` arguments).
    fn arguments(&self) -> Option<Value> {
        let raw = match self {
            HeaderSource::Parts(line) => match line.apart.arguments {
                Some(raw) => raw,
                None => return line.params.get(jsonrpc::ARGUMENTS).cloned(),
            },
            HeaderSource::Body(view) => view.params.as_ref()?.arguments?,
        };
        serde_json::from_str(raw.get()).ok()
    }
}

impl Inner {
    /// The headers of a modern POST, derived from the request and the tool cache. Names are
    /// constants (a `&str` name is parsed again on every insert) and the version's header value
    /// is kept with the version it was made from.
    pub(super) fn modern_headers(&self, source: &HeaderSource<'_>) -> Fields {
        let mut map = Fields::with_capacity(8);
        let method = source.method().unwrap_or_default();
        let mut st = self.state.lock().unwrap();
        if let Some(v) = source.version() {
            if st.modern_version.as_ref().map(|(text, _)| text.as_str()) != Some(&*v) {
                st.modern_version = Some((v.to_string(), header_value(&v)));
            }
        }
        // Three distinct names into an empty map: appended, nothing to replace.
        if let Some((_, Some(v))) = &st.modern_version {
            map.append(VERSION, v.clone());
        }
        let method_value = match COMMON_METHODS.iter().find(|m| **m == method) {
            Some(known) => Some(HeaderValue::from_static(known)),
            None => header_value(&headers::encode_value(&method)),
        };
        if let Some(v) = method_value {
            map.append(MCP_METHOD, v);
        }
        if let Some(v) = headers::name_for(&method, |key| source.member(key)).and_then(|n| header_value(&n)) {
            map.append(MCP_NAME, v);
        }
        if method == methods::TOOLS_CALL {
            if let Some(ToolHeaders::Valid(declared)) = source.member("name").and_then(|t| st.tools.get(&t)) {
                for (name, value) in headers::param_headers(declared, source.arguments().as_ref()) {
                    if let (Ok(name), Some(value)) = (HeaderName::from_bytes(name.as_bytes()), header_value(&value)) {
                        map.insert(name, value);
                    }
                }
            }
        }
        map
    }

    /// One POST of a request (its JSON body, with its headers when already made), up to its
    /// answer (not yet delivered).
    async fn modern_exchange(
        self: &Arc<Self>,
        id: &RequestId,
        method: &str,
        body: &Bytes,
        headers: Option<Fields>,
    ) -> Result<Outcome> {
        let headers = match headers {
            Some(headers) => headers,
            None => self.modern_headers(&HeaderSource::Body(RequestView::of(body)?)),
        };
        let request = self.post_body(&self.url, body.clone(), headers);
        let response = self.send_for(request, &Post(method), Some(id)).await?;
        Ok(self.outcome(response, Some(id)).await?.outcome)
    }

    /// Serves one request: POST, answer, and the -32020 reload-and-retry for `tools/call`.
    pub(super) async fn modern_request(
        self: &Arc<Self>,
        id: RequestId,
        method: Cow<'static, str>,
        body: Bytes,
        mut headers: Option<Fields>,
    ) {
        let mut reloaded = false;
        loop {
            let outcome = match self.modern_exchange(&id, &method, &body, headers.take()).await {
                Ok(outcome) => outcome,
                Err(e) => return self.fail(id, e),
            };
            match outcome {
                Outcome::Answer { message: answer, rest } => {
                    if method == methods::TOOLS_CALL && !reloaded && answer.error_code() == Some(codes::HEADER_MISMATCH)
                    {
                        let answer = match answer.into_value() {
                            Ok(answer) => answer,
                            Err(e) => return self.fail(id, e),
                        };
                        // The server saw other Mcp-Param-* headers than the cached definition
                        // gave: the tool changed. Reload it, then retry once with new headers.
                        reloaded = true;
                        self.drain(rest).await;
                        let message = serde_json::from_slice::<Value>(&body).unwrap_or_default();
                        let tool = message
                            .get("params")
                            .and_then(|p| p.get("name"))
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string();
                        self.log(format!(
                            "the server rejected the headers of tools/call {tool:?} (-32020); reloading tools/list and retrying once"
                        ));
                        // Boxed: a rare path, which inline would make every request's future larger.
                        match Box::pin(self.refresh_tools(&message, &tool)).await {
                            Ok(()) => continue,
                            Err(e) => {
                                self.log(format!("reloading tools/list failed: {}", e.message()));
                                return self.deliver(answer);
                            }
                        }
                    }
                    if method == methods::TOOLS_LIST {
                        let mut answer = match answer.into_value() {
                            Ok(answer) => answer,
                            Err(e) => return self.fail(id, e),
                        };
                        self.filter_tools(&mut answer);
                        self.deliver(answer);
                    } else {
                        self.deliver_answer(answer);
                    }
                    return self.drain(rest).await;
                }
                other => return self.finish(&id, &method, other).await,
            }
        }
    }

    /// Records a `tools/list` answer in the cache and removes tools with invalid annotations.
    fn filter_tools(&self, answer: &mut Value) {
        let Some(result) = answer.get_mut("result") else {
            return;
        };
        let warnings = self.state.lock().unwrap().tools.absorb(result);
        for w in warnings {
            self.log(w);
        }
    }

    /// Reloads `tools/list` (with the failed request's `_meta`) until `tool` is seen again or the
    /// pages run out.
    async fn refresh_tools(self: &Arc<Self>, failed: &Value, tool: &str) -> Result<()> {
        let mut meta_obj = Map::new();
        if let Some(Value::Object(m)) = failed.get("params").and_then(|p| p.get("_meta")) {
            for key in [meta::PROTOCOL_VERSION, meta::CLIENT_CAPABILITIES, meta::CLIENT_INFO] {
                if let Some(v) = m.get(key) {
                    meta_obj.insert(key.into(), v.clone());
                }
            }
        }
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_REFRESH_PAGES {
            let id = RequestId::Str(format!(
                "mcp-client-tools-refresh-{}",
                REFRESH_IDS.fetch_add(1, Ordering::Relaxed)
            ));
            let mut params = Map::new();
            params.insert("_meta".into(), Value::Object(meta_obj.clone()));
            if let Some(c) = &cursor {
                params.insert("cursor".into(), Value::String(c.clone()));
            }
            let request = jsonrpc::request(&id, methods::TOOLS_LIST, Some(Value::Object(params)));
            let body = Bytes::from(serde_json::to_vec(&request).map_err(Error::unserialisable)?);
            let mut answer = match self.modern_exchange(&id, methods::TOOLS_LIST, &body, None).await? {
                Outcome::Answer { message, rest } => {
                    self.drain(rest).await;
                    message.into_value()?
                }
                Outcome::Status { status, excerpt } => return Err(self.status_error("tools/list", status, &excerpt)),
                Outcome::Accepted => return Err(Error::protocol("tools/list got HTTP 202 and no answer")),
                Outcome::Ended { why, .. } => return Err(Error::new(ErrorKind::Io, format!("tools/list: {why}"))),
            };
            if let Some(err) = answer.get("error") {
                return Err(Error::rpc(
                    err.get("code").and_then(Value::as_i64).unwrap_or(0),
                    err.get("message").and_then(Value::as_str).unwrap_or("").to_string(),
                    err.get("data").cloned(),
                ));
            }
            self.filter_tools(&mut answer);
            if self.state.lock().unwrap().tools.get(tool).is_some() {
                return Ok(());
            }
            match answer
                .get("result")
                .and_then(|r| r.get("nextCursor"))
                .and_then(Value::as_str)
            {
                Some(next) if cursor.as_deref() != Some(next) => cursor = Some(next.to_string()),
                _ => return Ok(()),
            }
        }
        Ok(())
    }

    /// A notification (none are defined for modern HTTP, but the wire allows them): 202 expected.
    pub(super) async fn modern_notification(self: &Arc<Self>, method: &str, message: &Value) -> Result<()> {
        let body = Bytes::from(serde_json::to_vec(message).map_err(Error::unserialisable)?);
        let headers = self.modern_headers(&HeaderSource::Body(RequestView::of(&body)?));
        let request = self.post_body(&self.url, body, headers);
        let response = self.send_http(request, &Post(method)).await?;
        match self.outcome(response, None).await?.outcome {
            Outcome::Status { status, excerpt } => Err(self.status_error(method, status, &excerpt)),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn common_methods_are_sent_as_they_are() {
        for method in COMMON_METHODS {
            assert_eq!(headers::encode_value(method), method);
        }
    }

    #[test]
    fn a_body_is_read_for_its_headers_whatever_its_members_hold() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t\u00e9","arguments":{"a":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let view = HeaderSource::Body(RequestView::of(body).unwrap());
        assert_eq!(view.method().as_deref(), Some("tools/call"));
        assert_eq!(view.member("name").as_deref(), Some("té"));
        assert_eq!(view.version().as_deref(), Some("2026-07-28"));
        assert_eq!(view.arguments(), Some(json!({"a": 1})));
        // Members a header cannot mirror give no header; the request is still readable.
        let odd = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"_meta":5}}"#;
        let view = HeaderSource::Body(RequestView::of(odd).unwrap());
        assert_eq!(view.member("name"), None);
        assert_eq!(view.version(), None);
        assert!(RequestView::of(b"{\"method\":").is_err());
    }
}
