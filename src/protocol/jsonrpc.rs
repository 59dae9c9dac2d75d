//! JSON-RPC 2.0 framing: request ids, classifying incoming messages, building outgoing ones.

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
}
