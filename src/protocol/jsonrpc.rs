//! JSON-RPC 2.0 framing: request ids, classifying incoming messages, building outgoing ones.

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::fmt;

/// A JSON-RPC id: the client issues integers; servers may use strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// An integer id.
    Num(i64),
    /// A string id.
    Str(String),
}

impl RequestId {
    /// The id in a message's `id` member; `None` when it is neither an integer nor a string.
    pub fn from_value(v: &Value) -> Option<RequestId> {
        match v {
            Value::Number(n) => n.as_i64().map(RequestId::Num),
            Value::String(s) => Some(RequestId::Str(s.clone())),
            _ => None,
        }
    }
    /// The id written as `text` (a member's JSON value): an integer, what this client sends, is
    /// read from its digits without building a value.
    pub fn from_json(text: &str) -> Option<RequestId> {
        // JSON text has no `+` sign or leading zero, so Rust's integer syntax reads it the
        // JSON way; fractions, exponents and strings go to the decoder.
        match text.parse::<i64>() {
            Ok(n) => Some(RequestId::Num(n)),
            Err(_) => RequestId::from_value(&serde_json::from_str(text).ok()?),
        }
    }

    /// The id as JSON.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Num(n) => json!(n),
            RequestId::Str(s) => json!(s),
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Num(n) => write!(f, "{n}"),
            RequestId::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// A message from the server, classified.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A successful response.
    Result {
        id: RequestId,
        result: Value,
    },
    /// An error response (`id` absent or null when the server could not read the request).
    Error {
        id: Option<RequestId>,
        code: i64,
        message: String,
        data: Option<Value>,
    },
    /// A server→client request (legacy era).
    Request {
        id: RequestId,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
}

impl Incoming {
    /// Classifies one decoded JSON value; `Err` says why it is not a JSON-RPC message.
    pub fn classify(value: Value) -> Result<Incoming, String> {
        let Value::Object(mut obj) = value else {
            return Err("not a JSON object".into());
        };
        let id = obj.remove("id");
        if let Some(Value::String(method)) = obj.remove("method") {
            let params = obj.remove("params").unwrap_or(Value::Null);
            return match id {
                None | Some(Value::Null) => Ok(Incoming::Notification { method, params }),
                Some(id) => match RequestId::from_value(&id) {
                    Some(id) => Ok(Incoming::Request { id, method, params }),
                    None => Err(format!("request id {id} is neither a string nor an integer")),
                },
            };
        }
        let id = match id {
            None | Some(Value::Null) => None,
            Some(v) => Some(RequestId::from_value(&v).ok_or_else(|| format!("response id {v} is not usable"))?),
        };
        if let Some(err) = obj.remove("error") {
            let code = err
                .get("code")
                .and_then(Value::as_i64)
                .ok_or("error object without an integer code")?;
            let message = err.get("message").and_then(Value::as_str).unwrap_or("").to_string();
            let data = err.get("data").cloned();
            return Ok(Incoming::Error {
                id,
                code,
                message,
                data,
            });
        }
        match (id, obj.remove("result")) {
            (Some(id), Some(result)) => Ok(Incoming::Result { id, result }),
            (None, Some(_)) => Err("result without an id".into()),
            _ => Err("neither a request, a notification nor a response".into()),
        }
    }
}

/// Whether `message` is an answer (a `result` or an `error`, and no `method`), without
/// classifying it further: how a transport finds the answer among the messages of a reply.
pub fn is_response(message: &Value) -> bool {
    message.get("method").is_none() && (message.get("result").is_some() || message.get("error").is_some())
}

/// Whether `message` is a JSON-RPC error answer (`jsonrpc` and an integer `error.code`): how the
/// body of an HTTP error status is told from any other JSON.
pub fn is_error_answer(message: &Value) -> bool {
    message.get("jsonrpc").is_some()
        && message
            .get("error")
            .and_then(|e| e.get("code"))
            .is_some_and(Value::is_i64)
}

pub fn request(id: &RequestId, method: &str, params: Option<Value>) -> Value {
    let mut obj = Map::new();
    obj.insert("jsonrpc".into(), json!("2.0"));
    obj.insert("id".into(), id.to_value());
    obj.insert("method".into(), json!(method));
    if let Some(p) = params {
        obj.insert("params".into(), p);
    }
    Value::Object(obj)
}

/// The `_meta` members a request line gets after the caller's params, written as they are.
#[derive(Default, Clone, Copy)]
pub struct MetaParts<'a> {
    /// Members as JSON text (`"k":v,"k":v`), e.g. the connection's reserved keys; may be empty.
    pub head: &'a [u8],
    /// The call's trace context members as JSON text (`TraceContext::members_text`); may be empty.
    pub trace: &'a [u8],
    /// `io.modelcontextprotocol/logLevel`.
    pub log_level: Option<&'a str>,
    /// `progressToken`.
    pub progress_token: Option<&'a str>,
}

/// A request line (with its newline) written from borrowed parts: byte for byte what
/// serialising [`request`] gives for `params` with a `_meta` object of `meta`'s members appended
/// (none when `meta` is empty), without building that map. `params` must not hold a `_meta`
/// member (callers with one build the map instead). `apart.name` goes in as a `name` member
/// before `params`' own; `apart.arguments` as an `arguments` member after them, as it is apart
/// from line breaks (insignificant whitespace there, as JSON strings cannot hold them raw),
/// which become spaces so the message stays one line. Written into `out`, emptied first: a
/// buffer an earlier request used keeps its allocation (see `Transport::line_buffer`).
pub fn request_line(
    mut out: Vec<u8>,
    id: &RequestId,
    method: &str,
    params: &Map<String, Value>,
    apart: Apart<'_>,
    meta: MetaParts<'_>,
) -> serde_json::Result<Vec<u8>> {
    debug_assert!(!params.contains_key("_meta"));
    debug_assert!(apart.arguments.is_none() || !params.contains_key(ARGUMENTS));
    debug_assert!(apart.name.is_none() || !params.contains_key(NAME));
    let raw_len = apart.arguments.map_or(0, |a| a.get().len());
    out.clear();
    out.reserve(192 + meta.head.len() + raw_len);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    match id {
        RequestId::Num(n) => serde_json::to_writer(&mut out, n)?,
        RequestId::Str(s) => serde_json::to_writer(&mut out, s)?,
    }
    out.extend_from_slice(b",\"method\":");
    serde_json::to_writer(&mut out, method)?;
    out.extend_from_slice(b",\"params\":{");
    let mut first = true;
    if let Some(name) = apart.name {
        push_key(&mut out, &mut first, NAME)?;
        serde_json::to_writer(&mut out, name)?;
    }
    push_members(&mut out, &mut first, params.iter().map(|(k, v)| (k.as_str(), v)))?;
    if let Some(arguments) = apart.arguments {
        push_key(&mut out, &mut first, ARGUMENTS)?;
        let mut at = out.len();
        out.extend_from_slice(arguments.get().as_bytes());
        // Found with memchr (a byte loop cost ~7 instructions a byte: 0.7M for 100 KB).
        while let Some(i) = memchr::memchr2(b'\n', b'\r', &out[at..]) {
            out[at + i] = b' ';
            at += i + 1;
        }
    }
    let extra = [
        (crate::protocol::meta::LOG_LEVEL, meta.log_level),
        (crate::protocol::meta::PROGRESS_TOKEN, meta.progress_token),
    ];
    if !meta.head.is_empty() || !meta.trace.is_empty() || extra.iter().any(|(_, v)| v.is_some()) {
        push_key(&mut out, &mut first, "_meta")?;
        out.push(b'{');
        out.extend_from_slice(meta.trace);
        if !meta.trace.is_empty() && !meta.head.is_empty() {
            out.push(b',');
        }
        out.extend_from_slice(meta.head);
        let mut first_in_meta = meta.head.is_empty() && meta.trace.is_empty();
        for (key, value) in extra {
            if let Some(value) = value {
                push_key(&mut out, &mut first_in_meta, key)?;
                serde_json::to_writer(&mut out, value)?;
            }
        }
        out.push(b'}');
    }
    out.extend_from_slice(b"}}\n");
    Ok(out)
}

/// The `arguments` member of `tools/call` and `prompts/get` params.
pub const ARGUMENTS: &str = "arguments";
/// The `name` member of `tools/call` and `prompts/get` params.
pub const NAME: &str = "name";

/// Members of a request's params kept out of its map and written from where they are: the
/// tool's `name` (before the map's members) and the `arguments` as validated JSON object text
/// (see [`raw_object`]; after them). A `tools/call` from the C ABI builds no map for them.
#[derive(Default, Clone, Copy)]
pub struct Apart<'a> {
    pub name: Option<&'a str>,
    pub arguments: Option<&'a RawValue>,
}

impl<'a> Apart<'a> {
    pub fn is_empty(&self) -> bool {
        self.name.is_none() && self.arguments.is_none()
    }

    /// The params member `key` as text: the name kept apart, else `params`' own (none when
    /// absent or not a string).
    pub fn text<'b>(&self, params: &'b Map<String, Value>, key: &str) -> Option<&'b str>
    where
        'a: 'b,
    {
        match self.name {
            Some(name) if key == NAME => Some(name),
            _ => params.get(key)?.as_str(),
        }
    }
}

/// `text` checked to be one JSON object, kept as text (nothing built). `None` when it is valid
/// JSON but not an object. The syntax check of a raw parse neither looks inside `\u` escapes
/// (a lone surrogate passes it) nor limits nesting (the decoder stops at 128 levels), so text
/// holding an escape or enough brackets for that depth is checked by the full decoder too,
/// giving the same verdict and message as decoding it would.
pub fn raw_object(text: &str) -> serde_json::Result<Option<&RawValue>> {
    // Most arguments are plain objects the quick check accepts (a large text is read 32 bytes
    // at a time there); anything else gets serde's checks and messages.
    if let Some(raw) = super::fast_json::plain_object(text) {
        return Ok(Some(raw));
    }
    let bytes = text.as_bytes();
    let escape = memchr::memchr_iter(b'\\', bytes).any(|i| bytes.get(i + 1) == Some(&b'u'));
    if escape || super::may_nest_too_deep(bytes) {
        serde_json::from_str::<Value>(text)?;
    }
    let raw: &RawValue = serde_json::from_str(text)?;
    Ok(raw.get().starts_with('{').then_some(raw))
}

/// `"key":value` members as JSON text, comma-separated (a [`MetaParts::head`]).
pub fn members_text<'a>(members: impl IntoIterator<Item = (&'a str, &'a Value)>) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::new();
    push_members(&mut out, &mut true, members)?;
    Ok(out)
}

/// Writes `"key":value` members of an object being written (see [`push_key`]).
fn push_members<'a>(
    out: &mut Vec<u8>,
    first: &mut bool,
    members: impl IntoIterator<Item = (&'a str, &'a Value)>,
) -> serde_json::Result<()> {
    for (key, value) in members {
        push_key(out, first, key)?;
        serde_json::to_writer(&mut *out, value)?;
    }
    Ok(())
}

/// Writes `"key":` for the next member of an object being written (a comma first unless it is
/// the first); the caller writes the value.
fn push_key(out: &mut Vec<u8>, first: &mut bool, key: &str) -> serde_json::Result<()> {
    if !std::mem::take(first) {
        out.push(b',');
    }
    serde_json::to_writer(&mut *out, key)?;
    out.push(b':');
    Ok(())
}

pub fn notification(method: &str, params: Option<Value>) -> Value {
    let mut obj = Map::new();
    obj.insert("jsonrpc".into(), json!("2.0"));
    obj.insert("method".into(), json!(method));
    if let Some(p) = params {
        obj.insert("params".into(), p);
    }
    Value::Object(obj)
}

pub fn result_response(id: &RequestId, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.to_value(), "result": result})
}

pub fn error_response(id: &RequestId, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id.to_value(), "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::MAX_JSON_DEPTH;

    #[test]
    fn classifies_every_shape() {
        let r = Incoming::classify(json!({"jsonrpc":"2.0","id":3,"result":{}})).unwrap();
        assert_eq!(
            r,
            Incoming::Result {
                id: RequestId::Num(3),
                result: json!({})
            }
        );
        let e = Incoming::classify(json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}})).unwrap();
        assert!(matches!(
            e,
            Incoming::Error {
                id: None,
                code: -32700,
                ..
            }
        ));
        let q = Incoming::classify(json!({"jsonrpc":"2.0","id":"s1","method":"ping"})).unwrap();
        assert!(matches!(q, Incoming::Request { method, .. } if method == "ping"));
        let n = Incoming::classify(json!({"jsonrpc":"2.0","method":"notifications/progress","params":{}})).unwrap();
        assert!(matches!(n, Incoming::Notification { .. }));
        assert!(Incoming::classify(json!([1, 2])).is_err());
        assert!(Incoming::classify(json!({"jsonrpc":"2.0","id":1})).is_err());
    }

    /// The line written from parts equals the serialised map the slow path builds.
    #[test]
    fn request_lines_from_parts_match_the_serialised_map() {
        let params = json!({"name": "echo", "arguments": {"text": "h\u{e9}\"\n\u{1}", "n": [1, 2.5, null, true]}});
        let params = params.as_object().unwrap().clone();
        let head_members = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}});
        let head_map = head_members.as_object().unwrap();
        let head = members_text(head_map.iter().map(|(k, v)| (k.as_str(), v))).unwrap();
        let cases: Vec<(Map<String, Value>, MetaParts, Option<Value>)> = vec![
            (params.clone(), MetaParts::default(), None),
            (Map::new(), MetaParts::default(), None),
            (
                params.clone(),
                MetaParts {
                    head: &head,
                    ..MetaParts::default()
                },
                Some(head_members.clone()),
            ),
            (
                Map::new(),
                MetaParts {
                    head: &head,
                    trace: br#""traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01""#,
                    log_level: Some("debug"),
                    progress_token: Some("mcp-7"),
                },
                Some({
                    let mut m = Map::new();
                    m.insert(
                        "traceparent".into(),
                        json!("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
                    );
                    m.extend(head_map.clone());
                    m.insert("io.modelcontextprotocol/logLevel".into(), json!("debug"));
                    m.insert("progressToken".into(), json!("mcp-7"));
                    Value::Object(m)
                }),
            ),
            (
                params.clone(),
                MetaParts {
                    trace: br#""baggage":"k=v""#,
                    ..MetaParts::default()
                },
                Some(json!({"baggage": "k=v"})),
            ),
            (
                params.clone(),
                MetaParts {
                    progress_token: Some("mcp-8"),
                    ..MetaParts::default()
                },
                Some(json!({"progressToken": "mcp-8"})),
            ),
        ];
        let ids = [RequestId::Num(42), RequestId::Num(-3), RequestId::Str("s\"1".into())];
        // A buffer an earlier line used: none of its bytes remain.
        let stale = br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"stale":true}}"#.to_vec();
        for (id, (params, parts, meta)) in ids.iter().flat_map(|id| cases.iter().map(move |c| (id, c))) {
            let mut full = params.clone();
            if let Some(m) = meta {
                full.insert("_meta".into(), m.clone());
            }
            let mut want = serde_json::to_vec(&request(id, "tools/call", Some(Value::Object(full)))).unwrap();
            want.push(b'\n');
            assert_eq!(
                String::from_utf8(
                    request_line(stale.clone(), id, "tools/call", params, Apart::default(), *parts).unwrap()
                )
                .unwrap(),
                String::from_utf8(want).unwrap()
            );
        }
    }

    /// Arguments kept as text (and a name kept apart) give the line the decoded map gives, as
    /// JSON (byte for byte when the text is compact); line breaks between tokens become spaces.
    #[test]
    fn raw_arguments_lines_match_the_decoded_ones() {
        let shapes = [
            r#"{}"#,
            r#"{"text":"hello"}"#,
            r#"{"t":"caf\u00e9 \ud83d\ude00 \"q\" \\u","n":[1,2.5,-0,1e400,null,true],"o":{"a":{"b":[{}]}}}"#,
            "{\n  \"a\" : 1,\r\n\t\"b\": [ 2 , 3 ]\n}",
            r#"{"_meta":{"k":"v"},"arguments":{"x":1}}"#,
        ];
        let meta = MetaParts {
            head: br#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#,
            trace: b"",
            log_level: Some("info"),
            progress_token: Some("p"),
        };
        let mut base = Map::new();
        base.insert("name".into(), json!("t\u{e9}"));
        for text in shapes {
            let raw = raw_object(text).unwrap().expect("an object");
            let cases = [
                (Map::new(), None, MetaParts::default()),
                (base.clone(), None, meta),
                (Map::new(), Some("t\u{e9}"), meta),
            ];
            for (params, name, parts) in cases {
                let apart = Apart {
                    name,
                    arguments: Some(raw),
                };
                let line = request_line(Vec::new(), &RequestId::Num(7), "tools/call", &params, apart, parts).unwrap();
                assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1, "one line");
                assert_eq!(line.last(), Some(&b'\n'));
                let mut full = Map::new();
                if let Some(name) = name {
                    full.insert(NAME.into(), json!(name));
                }
                full.extend(params.clone());
                full.insert(ARGUMENTS.into(), serde_json::from_str(text).unwrap());
                let want = request_line(
                    Vec::new(),
                    &RequestId::Num(7),
                    "tools/call",
                    &full,
                    Apart::default(),
                    parts,
                )
                .unwrap();
                let got: Value = serde_json::from_slice(&line).unwrap();
                assert_eq!(got, serde_json::from_slice::<Value>(&want).unwrap(), "{text}");
                if !text.contains(['\n', ' ']) {
                    assert_eq!(String::from_utf8(line).unwrap(), String::from_utf8(want).unwrap());
                }
            }
        }
    }

    /// The checks on text kept raw agree with decoding it: objects pass, other JSON is `None`,
    /// broken JSON (a lone surrogate escape or too deep nesting included) fails as the decoder
    /// fails.
    #[test]
    fn raw_objects_are_checked_like_decoded_ones() {
        for ok in [" {\"a\":1} ", "{\"s\":\"\\ud83d\\ude00\"}"] {
            assert_eq!(raw_object(ok).unwrap().unwrap().get(), ok.trim());
        }
        for other in ["null", "[1]", "\"{}\"", " 3"] {
            assert!(raw_object(other).unwrap().is_none(), "{other}");
        }
        let nested = |n: usize| format!("{{\"a\":{}{}}}", "[".repeat(n), "]".repeat(n));
        assert!(raw_object(&nested(MAX_JSON_DEPTH - 1)).unwrap().is_some());
        let too_deep = nested(MAX_JSON_DEPTH);
        for bad in [
            "",
            "{",
            "{\"a\":}",
            "{} {}",
            "{\"s\":\"\\ud800\"}",
            "{\"s\":\"\\uzzzz\"}",
            "{'a':1}",
            &too_deep,
        ] {
            let want = serde_json::from_str::<Value>(bad).unwrap_err().to_string();
            assert_eq!(raw_object(bad).unwrap_err().to_string(), want, "{bad:?}");
        }
    }
}
