//! JSON-RPC message and error builders, and the `--record` file (a
//! byte-exact copy of every line read from stdin, or one JSON line per HTTP
//! request). Output goes through `sink.rs`.

use serde_json::{json, Map, Value};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::Mutex;

pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
pub const PARSE_ERROR: i64 = -32700;
pub const NOT_INITIALIZED: i64 = -32000;
pub const HEADER_MISMATCH: i64 = -32020;
pub const MISSING_CAPABILITY: i64 = -32021;
pub const UNSUPPORTED_VERSION: i64 = -32022;

/// A JSON-RPC error object.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
    /// Modern HTTP: the status this error is answered with, when the code
    /// alone does not decide it (a missing `_meta` key is 400). Not sent.
    pub http_status: Option<u16>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
            http_status: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// Marks the error as an HTTP 400 (modern HTTP only).
    pub fn bad_request(mut self) -> Self {
        self.http_status = Some(400);
        self
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        RpcError::new(INVALID_PARAMS, message)
    }

    pub fn method_not_found() -> Self {
        RpcError::new(METHOD_NOT_FOUND, "Method not found")
    }

    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("code".into(), json!(self.code));
        obj.insert("message".into(), json!(self.message));
        if let Some(data) = &self.data {
            obj.insert("data".into(), data.clone());
        }
        Value::Object(obj)
    }
}

/// What a request handler produces.
#[derive(Debug)]
pub enum Reply {
    /// A result body; in the modern era `resultType:"complete"` is added when
    /// absent, and `_meta.serverInfo` is merged in.
    Result(Map<String, Value>),
    /// Like `Result` but never given a `resultType` (deliberately malformed).
    ResultWithoutType(Map<String, Value>),
    Error(RpcError),
    /// Nothing is sent (yet): hanging tools, open listens, silent discover.
    Nothing,
}

impl From<RpcError> for Reply {
    fn from(e: RpcError) -> Self {
        Reply::Error(e)
    }
}

/// The `--record` file.
pub struct Recorder {
    file: Option<Mutex<File>>,
}

impl Recorder {
    pub fn new(path: Option<&Path>) -> io::Result<Recorder> {
        let file = match path {
            Some(path) => Some(Mutex::new(OpenOptions::new().create(true).append(true).open(path)?)),
            None => None,
        };
        Ok(Recorder { file })
    }

    pub fn enabled(&self) -> bool {
        self.file.is_some()
    }

    /// Appends one received line (without its terminator) plus "\n".
    pub fn record(&self, raw: &[u8]) {
        if let Some(file) = &self.file {
            let mut file = file.lock().unwrap_or_else(|p| p.into_inner());
            let mut line = Vec::with_capacity(raw.len() + 1);
            line.extend_from_slice(raw);
            line.push(b'\n');
            if let Err(e) = file.write_all(&line).and_then(|_| file.flush()) {
                eprintln!("fixture: cannot write record file: {e}");
            }
        }
    }

    /// Appends one JSON value as a line.
    pub fn record_json(&self, value: &Value) {
        if self.file.is_some() {
            self.record(serde_json::to_string(value).unwrap_or_default().as_bytes());
        }
    }
}

/// Builds an error response.
pub fn error_message(id: &Value, err: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": err.to_json()})
}

/// Builds a notification message (no `params` key when `params` is None).
pub fn notification(method: &str, params: Option<Value>) -> Value {
    let mut msg = Map::new();
    msg.insert("jsonrpc".into(), json!("2.0"));
    msg.insert("method".into(), json!(method));
    if let Some(p) = params {
        msg.insert("params".into(), p);
    }
    Value::Object(msg)
}

/// Builds a request message (no `params` key when `params` is None).
pub fn request(id: &str, method: &str, params: Option<Value>) -> Value {
    let mut msg = Map::new();
    msg.insert("jsonrpc".into(), json!("2.0"));
    msg.insert("id".into(), json!(id));
    msg.insert("method".into(), json!(method));
    if let Some(p) = params {
        msg.insert("params".into(), p);
    }
    Value::Object(msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_json_omits_absent_data() {
        assert_eq!(
            RpcError::method_not_found().to_json(),
            json!({"code": -32601, "message": "Method not found"})
        );
        let e = RpcError::new(-32050, "fixture error").with_data(json!({"detail": "on purpose"}));
        assert_eq!(
            serde_json::to_string(&e.to_json()).unwrap(),
            r#"{"code":-32050,"message":"fixture error","data":{"detail":"on purpose"}}"#
        );
    }

    #[test]
    fn builders_omit_absent_params() {
        assert_eq!(
            serde_json::to_string(&request("srv-1", "roots/list", None)).unwrap(),
            r#"{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}"#
        );
        assert_eq!(
            serde_json::to_string(&notification("notifications/x", Some(json!({})))).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/x","params":{}}"#
        );
    }
}
