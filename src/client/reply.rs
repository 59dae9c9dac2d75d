//! A request's result, decoded only as far as the client needs it.
//!
//! An answer read from stdio arrives as its raw line (see `Inbound::Answer`). The client only
//! has to know its `resultType`; a complete result can then go to a C host as the server's own
//! bytes, without being built into a `Value` and written back out. Input-required results,
//! and every result a Rust caller asks for as a `Value`, are decoded in full.

use crate::error::{Error, Result};
use crate::protocol::result_probe::{locate_result, LocatedResult, ResultScan};
use crate::protocol::{Incoming, RequestId, ResultType};
use crate::transport::ResultAt;
use serde::Deserialize;
use serde_json::Value;
use std::ops::Range;

pub(crate) enum Reply {
    Value(Value),
    /// An answer line whose `result` member is `line[result]` (valid JSON, checked).
    Line {
        line: Vec<u8>,
        result: Range<usize>,
        scan: ResultScan,
    },
}

#[derive(Deserialize)]
struct Kind {
    #[serde(rename = "resultType")]
    result_type: Option<Value>,
}

impl Reply {
    /// The answer in `line` to request `id`, as a transport hands it over: its result where
    /// the transport's answer probe (`framing::probe_answer`) found one, kept as the server's
    /// text; otherwise (an error, a `null` or empty result, anything the probe left alone:
    /// duplicate members, bad JSON) the line through the full decoder, whose verdicts and
    /// messages are the ones every other message gets. No second check of a line the probe
    /// already read.
    pub fn from_answer(id: &RequestId, line: Vec<u8>, result: ResultAt) -> Result<Reply> {
        if let Some(at) = result {
            return Ok(Reply::located(line, at));
        }
        let value = serde_json::from_slice::<Value>(&line)
            .map_err(|e| Error::protocol(format!("the server's answer to request {id} is not JSON: {e}")))?;
        match Incoming::classify(value) {
            Ok(Incoming::Result { result, .. }) => Ok(Reply::Value(result)),
            Ok(Incoming::Error {
                code, message, data, ..
            }) => Err(Error::rpc(code, message, data)),
            Ok(_) => Err(Error::protocol(format!(
                "the server's answer to request {id} is not a response"
            ))),
            Err(why) => Err(Error::protocol(format!(
                "the server's answer to request {id} is unusable: {why}"
            ))),
        }
    }

    /// A result on its own (JSON text): kept as those bytes when it can be placed, else decoded.
    pub fn from_result_text(json: Vec<u8>) -> Result<Reply> {
        match locate_result(&json) {
            Some(at) => Ok(Reply::located(json, at)),
            None => serde_json::from_slice(&json)
                .map(Reply::Value)
                .map_err(|e| Error::protocol(format!("the result is not JSON: {e}"))),
        }
    }

    /// The result `at` places in `line`, kept as those bytes.
    fn located(line: Vec<u8>, at: LocatedResult) -> Reply {
        Reply::Line {
            line,
            result: at.range,
            scan: at.scan,
        }
    }

    /// Whether the result has a top-level `structuredContent` (read without decoding it).
    pub fn has_structured_content(&self) -> bool {
        match self {
            Reply::Line {
                scan:
                    ResultScan {
                        structured: Some(structured),
                        ..
                    },
                ..
            } => *structured,
            _ => super::output_schema::has_structured_content(&self.json_text()),
        }
    }

    fn raw<'a>(line: &'a [u8], result: &Range<usize>) -> &'a str {
        // The range is a placed result of text serde checked: valid UTF-8.
        std::str::from_utf8(&line[result.clone()]).unwrap_or("null")
    }

    pub fn result_type(&self) -> Result<ResultType> {
        match self {
            Reply::Value(v) => ResultType::of(v),
            Reply::Line {
                scan: ResultScan { kind: Some(kind), .. },
                ..
            } => Ok(*kind),
            Reply::Line { line, result, .. } => {
                let raw = Self::raw(line, result);
                if !raw.starts_with('{') {
                    return Ok(ResultType::Complete); // not an object: nothing to read
                }
                match serde_json::from_str::<Kind>(raw) {
                    Ok(kind) => ResultType::of_member(kind.result_type.as_ref()),
                    Err(_) => ResultType::of(&serde_json::from_str::<Value>(raw).unwrap_or(Value::Null)),
                }
            }
        }
    }

    pub fn into_value(self) -> Result<Value> {
        match self {
            Reply::Value(v) => Ok(v),
            Reply::Line { line, result, .. } => serde_json::from_str(Self::raw(&line, &result))
                .map_err(|e| Error::protocol(format!("the server's result is not JSON: {e}"))),
        }
    }

    /// The result as JSON text without consuming it (the cache keeps a copy).
    pub fn json_text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Reply::Value(v) => v.to_string().into(),
            Reply::Line { line, result, .. } => Self::raw(line, result).into(),
        }
    }

    /// Whether the result is a tool's error result (`isError: true`): as the transport's probe
    /// read it, else from the server's text without building the result (its other members are
    /// skipped, not decoded); the same answer as [`super::observe::is_tool_error`] on the
    /// decoded result.
    pub fn is_tool_error(&self) -> bool {
        #[derive(Deserialize)]
        struct IsError {
            #[serde(rename = "isError")]
            is_error: Option<bool>,
        }
        match self {
            Reply::Value(v) => super::observe::is_tool_error(v),
            // The transport's probe read it in the pass that checked the line.
            Reply::Line {
                scan:
                    ResultScan {
                        is_error: Some(is_error),
                        ..
                    },
                ..
            } => *is_error,
            Reply::Line { line, result, .. } => match serde_json::from_str::<IsError>(Self::raw(line, result)) {
                Ok(r) => r.is_error == Some(true),
                // Not an object, `isError` not a boolean or given twice: as the decoded result says.
                Err(_) => self.value().is_ok_and(|v| super::observe::is_tool_error(&v)),
            },
        }
    }

    /// The result as a `Value` without consuming it (a check that must not cost the bytes).
    pub fn value(&self) -> Result<std::borrow::Cow<'_, Value>> {
        match self {
            Reply::Value(v) => Ok(std::borrow::Cow::Borrowed(v)),
            Reply::Line { line, result, .. } => serde_json::from_str(Self::raw(line, result))
                .map(std::borrow::Cow::Owned)
                .map_err(|e| Error::protocol(format!("the server's result is not JSON: {e}"))),
        }
    }

    /// The result as JSON text: the server's own bytes when it was never decoded.
    pub fn into_json(self) -> Vec<u8> {
        let (mut text, at) = self.into_json_in_place();
        text.truncate(at.end);
        text.drain(..at.start);
        text
    }

    /// The result as JSON text where it sits: the answer line it came in and its place there
    /// (nothing moved), or a decoded result written out (all of it).
    pub fn into_json_in_place(self) -> (Vec<u8>, Range<usize>) {
        match self {
            Reply::Value(v) => {
                let text = serde_json::to_vec(&v).unwrap_or_else(|_| b"null".to_vec());
                let len = text.len();
                (text, 0..len)
            }
            Reply::Line { line, result, .. } => (line, result),
        }
    }
}

impl From<Value> for Reply {
    fn from(v: Value) -> Reply {
        Reply::Value(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use serde_json::json;

    /// `line` as the reader hands it to the caller: probed, then the reply.
    fn answer(line: Vec<u8>) -> Result<Reply> {
        let result = crate::transport::framing::probe_answer(&line).and_then(|answer| answer.result);
        Reply::from_answer(&RequestId::Num(1), line, result)
    }

    fn reply(line: &str) -> Result<Reply> {
        answer(line.as_bytes().to_vec())
    }

    #[test]
    fn a_result_passes_through_as_the_servers_bytes() {
        let line = r#"{"jsonrpc":"2.0","id":1,"result":{"z":1, "a" : [1.50,"\u00e9"],"resultType":"complete"}}"#;
        let r = reply(line).unwrap();
        assert!(matches!(r, Reply::Line { .. }));
        assert_eq!(r.result_type().unwrap(), ResultType::Complete);
        let text = String::from_utf8(r.into_json()).unwrap();
        assert_eq!(text, r#"{"z":1, "a" : [1.50,"\u00e9"],"resultType":"complete"}"#);
    }

    #[test]
    fn a_tool_error_is_read_as_the_decoded_result_says() {
        let cases = [
            (r#"{"content":[{"type":"text","text":"x"}],"isError":true}"#, true),
            (r#"{"content":[],"isError":false}"#, false),
            (r#"{"content":[{"type":"text","text":"{\"isError\":true}"}]}"#, false),
            (r#"{"isError":"true"}"#, false),
            (r#"{"isError":null}"#, false),
            (r#"{"isError":1}"#, false),
            (r#"{"isError":false,"isError":true}"#, true),
            (r#"{"structuredContent":{"isError":true},"n":1.50e3}"#, false),
            (r#"[true]"#, false),
            (r#"{"a":1,"\u0069sError":true}"#, true),
            (r#"{"a":1,"result\u0054ype":"complete","isError":false}"#, false),
        ];
        for (result, want) in cases {
            let r = reply(&format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#)).unwrap();
            let decoded = crate::client::observe::is_tool_error(&r.value().unwrap());
            assert_eq!((r.is_tool_error(), decoded), (want, want), "{result}");
        }
    }

    #[test]
    fn result_types_are_read_without_decoding_the_rest() {
        let ir = reply(r#"{"id":1,"result":{"inputRequests":{"a":{}},"resultType":"input_required"}}"#).unwrap();
        assert_eq!(ir.result_type().unwrap(), ResultType::InputRequired);
        assert_eq!(ir.into_value().unwrap()["inputRequests"], json!({"a": {}}));
        assert_eq!(
            reply(r#"{"id":1,"result":{}}"#).unwrap().result_type().unwrap(),
            ResultType::Complete
        );
        assert_eq!(
            reply(r#"{"id":1,"result":[1]}"#).unwrap().result_type().unwrap(),
            ResultType::Complete
        );
        let unknown = reply(r#"{"id":1,"result":{"resultType":"later"}}"#).unwrap();
        assert_eq!(unknown.result_type().unwrap_err().kind(), ErrorKind::ProtocolViolation);
    }

    #[test]
    fn a_raw_nul_never_reaches_a_host_and_an_escaped_one_stays_escaped() {
        // JSON forbids raw control characters in strings: such a line fails its request.
        let raw_nul = b"{\"id\":1,\"result\":{\"s\":\"a\x00b\"}}".to_vec();
        let e = answer(raw_nul).err().unwrap();
        assert_eq!(e.kind(), ErrorKind::ProtocolViolation);
        let escaped = reply(r#"{"id":1,"result":{"s":"a\u0000b"}}"#).unwrap();
        assert_eq!(escaped.into_json(), br#"{"s":"a\u0000b"}"#.to_vec());
        let decoded = reply(r#"{"id":1,"result":{"s":"a\u0000b"}}"#)
            .unwrap()
            .into_value()
            .unwrap();
        assert_eq!(serde_json::to_vec(&decoded).unwrap(), br#"{"s":"a\u0000b"}"#.to_vec());
    }

    #[test]
    fn big_numbers_keep_their_digits_on_every_path() {
        let line = r#"{"id":1,"result":{"n":123456789012345678901234567890,"m":18446744073709551616,"f":1.000000000000000000001}}"#;
        let kept = r#"{"n":123456789012345678901234567890,"m":18446744073709551616,"f":1.000000000000000000001}"#;
        assert_eq!(reply(line).unwrap().into_json(), kept.as_bytes());
        let value = reply(line).unwrap().into_value().unwrap();
        assert_eq!(serde_json::to_string(&value).unwrap(), kept);
    }

    #[test]
    fn errors_and_odd_answers_take_the_full_decoder() {
        let e = reply(r#"{"id":1,"error":{"code":-32602,"message":"bad","data":{"x":1}}}"#)
            .err()
            .unwrap();
        let rpc = e.rpc_error().unwrap();
        assert_eq!((rpc.code, rpc.message.as_str()), (-32602, "bad"));
        // An error member wins over a result member, as in the full decoder.
        assert!(reply(r#"{"id":1,"result":{},"error":{"code":1,"message":"m"}}"#).is_err());
        // Duplicate members: the full decoder keeps the last one.
        let dup = reply(r#"{"id":1,"result":{"a":1},"result":{"b":2}}"#).unwrap();
        assert_eq!(dup.into_value().unwrap(), json!({"b": 2}));
        for bad in [r#"{"id":1,"result":{}"#, r#"{"id":1,"result":{}} trailing"#] {
            assert_eq!(reply(bad).err().unwrap().kind(), ErrorKind::ProtocolViolation, "{bad}");
        }
        let invalid_utf8 = b"{\"id\":1,\"result\":\"\xff\"}".to_vec();
        let e = answer(invalid_utf8).err().unwrap();
        assert_eq!(e.kind(), ErrorKind::ProtocolViolation);
        let no_code = reply(r#"{"id":1,"error":{"message":"m"}}"#).err().unwrap();
        assert_eq!(no_code.kind(), ErrorKind::ProtocolViolation);
    }

    /// The probe's scan agrees with the decoder on `resultType` and `structuredContent`, or
    /// leaves the case to it.
    #[test]
    fn the_probe_agrees_with_the_decoder() {
        let results = [
            r#"{}"#,
            r#"[1,{"resultType":"task"}]"#,
            r#""text""#,
            r#"{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}"#,
            r#"{"a":{"resultType":"task","structuredContent":1},"b":"\"resultType\":"}"#,
            r#"{"resultType" : "input_required","inputRequests":{}}"#,
            r#"{"resultType":"task"}"#,
            r#"{"resultType":null}"#,
            r#"{"resultType":"later"}"#,
            r#"{"resultType":"comp\u006cete"}"#,
            r#"{"result\u0054ype":"task"}"#,
            r#"{"resultType":"task","resultType":"complete"}"#,
            r#"{"resultType":7}"#,
            r#"{"structuredContent":{"x":1}}"#,
            r#"{"structuredContent": null}"#,
            r#"{"structuredContent":null,"structuredContent":{}}"#,
            r#"{"structuredContent":[]}"#,
            r#"{"structured\u0043ontent":{}}"#,
        ];
        for result in results {
            let line = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#);
            let fast = reply(&line).unwrap();
            let value: Value = serde_json::from_str(result).unwrap();
            let want = ResultType::of(&value).map_err(|e| e.kind());
            assert_eq!(fast.result_type().map_err(|e| e.kind()), want, "{result}");
            assert_eq!(
                fast.has_structured_content(),
                crate::client::output_schema::has_structured_content(result),
                "{result}"
            );
        }
    }
}
