//! Newline-delimited framing with a size bound: memory stays bounded whatever the peer writes.

use std::ops::ControlFlow;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::ResultAt;
use crate::protocol::result_probe::ProbedResult;
use crate::protocol::RequestId;
pub use crate::protocol::MAX_JSON_DEPTH;

/// How much of an oversized line is kept, to find its request id.
pub(crate) const OVERSIZE_PREFIX: usize = 4096;

/// One line read by the bounded framer.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// A complete line, without its terminator.
    Data(Vec<u8>),
    /// A line longer than the bound: its start, and its full length.
    TooLong {
        /// The line's first bytes (enough to find its id).
        prefix: Vec<u8>,
        /// Its full length in bytes.
        len: usize,
    },
    /// The stream ended inside this line (no terminator): the writer died mid-message, or
    /// wrote its last line without a newline.
    Cut(Vec<u8>),
    /// End of stream.
    Eof,
}

/// Reads the next line, never buffering more than `max` bytes (plus the reader's own buffer).
pub async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R, max: usize) -> std::io::Result<Line> {
    let mut buf = Vec::new();
    let mut len = 0usize;
    loop {
        let chunk = reader.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(match (len, len > max) {
                (0, _) => Line::Eof,
                (_, true) => Line::TooLong { prefix: buf, len },
                _ => Line::Cut(buf),
            });
        }
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        let keep = if len + take <= max {
            take
        } else {
            OVERSIZE_PREFIX.saturating_sub(buf.len()).min(take)
        };
        if len + take > max && buf.len() > OVERSIZE_PREFIX {
            buf.truncate(OVERSIZE_PREFIX);
        }
        buf.extend_from_slice(&chunk[..keep]);
        len += take;
        reader.consume(if done { take + 1 } else { take });
        if done {
            if buf.last() == Some(&b'\r') && len <= max {
                buf.pop();
            }
            return Ok(if len > max {
                Line::TooLong { prefix: buf, len }
            } else {
                Line::Data(buf)
            });
        }
    }
}

/// Finds the top-level `"id"` of a (possibly truncated) JSON object, so an oversized response
/// can fail its own request instead of leaving it to time out.
pub fn scan_top_level_id(prefix: &[u8]) -> Option<serde_json::Value> {
    let mut id = None;
    top_level_keys(prefix, |key, rest| {
        if key != b"id" {
            return ControlFlow::Continue(());
        }
        id = value_after_colon(rest);
        ControlFlow::Break(())
    });
    id
}

/// An answer line, as the one pass over it found it: see [`probe_answer`].
pub struct ProbedAnswer<'a> {
    /// The request it answers.
    pub id: RequestId,
    /// Where its `result` sits and what it says, when it has one the probe could place (an
    /// object with members) and no `error`: the caller reads that text as it is. `None`: the
    /// caller decodes the line.
    pub result: ResultAt,
    /// Its `error` member's text, when it has one.
    pub error: Option<&'a RawValue>,
}

/// The members an answer probe reads; the rest are checked (the whole line is validated, its
/// nesting bounded as the decoder bounds it) and skipped without building anything.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "present")]
    result: Option<ProbedResult>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "present")]
    method: Option<IgnoredAny>,
}

/// A member that is there, `null` included (serde reads a plain `Option` of `null` as absent).
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// `line` as an answer, checked in one pass: a JSON object (well-formed, duplicate-free, within
/// [`MAX_JSON_DEPTH`]) with a `result` or an `error`, no `method`, and an integer or string
/// `id`. The reader hands such lines to their waiting callers with what the pass found, so
/// nothing reads them again to route or check them. Anything else (requests, notifications,
/// broken or odd lines) gets `None` and meets the full decoder, whose verdicts and messages
/// every other message gets.
pub fn probe_answer(line: &[u8]) -> Option<ProbedAnswer<'_>> {
    // Plain answers (no escaped keys, no `\u` escapes, no `error`) are read by the quick
    // check, which reads strings 32 bytes at a time; it gives up on anything else, and serde's
    // pass decides as before.
    quick_probe(line).or_else(|| serde_probe(line))
}

fn quick_probe(line: &[u8]) -> Option<ProbedAnswer<'_>> {
    let quick = crate::protocol::fast_json::answer(line)?;
    Some(ProbedAnswer {
        id: RequestId::from_json(quick.id)?,
        result: quick.result.locate(line),
        error: None,
    })
}

fn serde_probe(line: &[u8]) -> Option<ProbedAnswer<'_>> {
    // A struct also decodes from an array (its members in order): only objects are answers.
    if line.trim_ascii_start().first() != Some(&b'{') {
        return None;
    }
    // serde skips unread members without a depth bound: the bound is checked here.
    if crate::protocol::may_nest_too_deep(line) && json_depth(line) > MAX_JSON_DEPTH {
        return None;
    }
    let envelope: Envelope = serde_json::from_slice(line).ok()?;
    if envelope.method.is_some() || (envelope.result.is_none() && envelope.error.is_none()) {
        return None;
    }
    let id = RequestId::from_json(envelope.id?.get())?;
    let result = match (&envelope.result, envelope.error) {
        (Some(result), None) => result.locate(line),
        _ => None,
    };
    Some(ProbedAnswer {
        id,
        result,
        error: envelope.error,
    })
}

/// The text after a member's key (`: value, ...`) from its value on: whitespace, the colon and
/// whitespace skipped; `None` without the colon.
fn after_colon(rest: &[u8]) -> Option<&[u8]> {
    Some(rest.trim_ascii_start().strip_prefix(b":")?.trim_ascii_start())
}

/// How deeply `bytes` (JSON text) nests arrays and objects; 0 for a scalar.
pub fn json_depth(bytes: &[u8]) -> usize {
    top_level_keys(bytes, |_, _| ControlFlow::Continue(())).unwrap_or(0)
}

/// Walks the keys of a (possibly truncated) JSON object's top level, calling `visit` with each
/// key as written (no unescaping) and the bytes after it (its `:` and value onward) until it
/// breaks. Returns the deepest nesting seen (of the whole text when the walk did not break);
/// `None` when a string is cut off before the walk ended.
fn top_level_keys<'a>(bytes: &'a [u8], mut visit: impl FnMut(&'a [u8], &'a [u8]) -> ControlFlow<()>) -> Option<usize> {
    let (mut depth, mut deepest, mut i) = (0i32, 0i32, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth -= 1,
            b'"' => {
                let end = string_end(bytes, i)?;
                let rest = &bytes[end + 1..];
                // A string is a key when a colon follows it (a value spelled "id" is not).
                if depth == 1 && rest.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b':') {
                    if let ControlFlow::Break(()) = visit(&bytes[i + 1..end], rest) {
                        return Some(deepest as usize);
                    }
                }
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    Some(deepest.max(0) as usize)
}

/// Index of the closing quote of the string starting at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    loop {
        // Past an escape's second byte at the very end, `get` finds nothing: cut off.
        i += memchr::memchr2(b'"', b'\\', bytes.get(i..)?)?;
        if bytes[i] == b'"' {
            return Some(i);
        }
        i += 2;
    }
}

fn value_after_colon(rest: &[u8]) -> Option<serde_json::Value> {
    // JSON's whitespace only (`after_colon`): a Unicode space before the value is no JSON.
    let text = std::str::from_utf8(after_colon(rest)?).ok()?;
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<serde_json::Value>();
    let value = stream.next()?.ok()?;
    // A number running to the end of a cut-off prefix may be cut itself ("12" of "12345"): it
    // would name another request. A string is whole once its closing quote is there.
    if value.is_number() && stream.byte_offset() == text.len() {
        return None;
    }
    matches!(value, serde_json::Value::Number(_) | serde_json::Value::String(_)).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn lines(input: &[u8], max: usize) -> Vec<Line> {
        let mut r = tokio::io::BufReader::with_capacity(7, input);
        let mut out = Vec::new();
        loop {
            let l = read_line(&mut r, max).await.unwrap();
            let eof = l == Line::Eof;
            out.push(l);
            if eof {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn bounded_lines() {
        let got = lines(b"abc\n0123456789abcdef\r\nxy", 10).await;
        assert_eq!(got[0], Line::Data(b"abc".to_vec()));
        assert!(matches!(&got[1], Line::TooLong { len: 17, .. }));
        assert_eq!(got[2], Line::Cut(b"xy".to_vec()));
        assert_eq!(got[3], Line::Eof);
    }

    #[test]
    fn the_depth_limit_is_the_decoders() {
        let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(json_depth(nest(MAX_JSON_DEPTH).as_bytes()), MAX_JSON_DEPTH);
        assert!(serde_json::from_str::<serde_json::Value>(&nest(MAX_JSON_DEPTH)).is_ok());
        assert!(serde_json::from_str::<serde_json::Value>(&nest(MAX_JSON_DEPTH + 1)).is_err());
        assert_eq!(json_depth(br#"{"a":"[[[{{","b":[{}]}"#), 3);
        let answer = |depth: usize| format!(r#"{{"id":1,"result":{}}}"#, nest(depth - 1));
        let id = |line: String| probe_answer(line.as_bytes()).map(|answer| answer.id);
        assert_eq!(id(answer(MAX_JSON_DEPTH)), Some(RequestId::Num(1)));
        assert_eq!(id(answer(MAX_JSON_DEPTH + 1)), None, "too deep: the decoder's verdict");
    }

    #[test]
    fn the_id_follows_json_whitespace_only() {
        assert_eq!(scan_top_level_id(b"{\"id\": \t\"a\",\"result\":{"), Some(json!("a")));
        // U+2003 (em space) is whitespace to Rust's `trim`, not to JSON.
        assert_eq!(scan_top_level_id("{\"id\":\u{2003}\"a\",\"result\":{".as_bytes()), None);
        assert!(probe_answer("{\"id\":\u{2003}\"a\",\"result\":{}}".as_bytes()).is_none());
    }

    #[test]
    fn finds_top_level_id_only() {
        assert_eq!(
            scan_top_level_id(br#"{"jsonrpc":"2.0","id":42,"result":{"x"#),
            Some(json!(42))
        );
        assert_eq!(
            scan_top_level_id(br#"{"result":{"id":1,"t":"\"id\""},"id":"a"}"#),
            Some(json!("a"))
        );
        assert_eq!(scan_top_level_id(br#"{"result":{"id":1,"text":"xxxx"#), None);
    }

    #[test]
    fn answers_are_told_from_requests_and_notifications() {
        let answer = |s: &str| probe_answer(s.as_bytes()).map(|answer| answer.id);
        let num = |n| Some(RequestId::Num(n));
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","id":7,"result":{"method":"x","id":9}}"#),
            num(7)
        );
        assert_eq!(
            answer(r#"{"result":{"id":1},"id":"a b","jsonrpc":"2.0"}"#),
            Some(RequestId::Str("a b".into()))
        );
        assert_eq!(answer(r#" {"error":{"code":-1,"message":"id"},"id" : 3}"#), num(3));
        assert_eq!(answer(r#"{"error":{"code":-1,"message":"\"id\""}, "id" : 3}"#), num(3));
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","\u0069d":9,"result":{}}"#),
            num(9),
            "keys unescaped"
        );
        // A value spelled like a key is not a key.
        assert_eq!(answer(r#"{"jsonrpc":"2.0","id":4,"result":"method"}"#), num(4));
        // Requests and notifications (a top-level "method" anywhere) are not answers.
        assert_eq!(answer(r#"{"id":5,"result":{},"method":"ping"}"#), None);
        assert_eq!(answer(r#"{"jsonrpc":"2.0","id":6,"method":"roots/list"}"#), None);
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"result":1}}"#),
            None
        );
        // No result/error, no usable id, duplicates, a cut or broken line: the decoder's.
        assert_eq!(answer(r#"{"jsonrpc":"2.0","id":8}"#), None);
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#),
            None
        );
        assert_eq!(answer(r#"{"jsonrpc":"2.0","id":{"a":1},"result":{}}"#), None);
        assert_eq!(answer(r#"{"id":1,"id":2,"result":{}}"#), None);
        assert_eq!(answer(r#"{"id":1,"result":{},"result":{}}"#), None);
        assert_eq!(answer(r#"[{"id":1,"result":{}}]"#), None);
        assert_eq!(answer(r#"[1,{}]"#), None, "a struct's array form");
        assert_eq!(answer(r#"{"id":1,"result":{"text":"unterminated"#), None);
        assert_eq!(answer(r#"{"id":1,"result":{"a":tru}}"#), None);
        assert_eq!(
            answer("{\"id\":1,\"result\":\"\u{0}\"}"),
            None,
            "a raw control character"
        );
    }

    /// Where the caller reads the result: only an object with members and no `error` (an
    /// empty or non-object result is decoded).
    #[test]
    fn the_probe_points_at_a_plain_result_only() {
        let line = r#"{"id":1, "result" : {"content":[]} }"#;
        let probed = probe_answer(line.as_bytes()).unwrap();
        assert_eq!(&line[probed.result.unwrap().range], r#"{"content":[]}"#);
        assert!(probed.error.is_none());
        for line in [
            r#"{"id":1,"result":null}"#,
            r#"{"id":1,"result":{}}"#,
            r#"{"id":1,"result":[{"a":1}]}"#,
            r#"{"id":1,"result":-1.5e300}"#,
            r#"{"id":1,"result":{},"error":{"code":1}}"#,
            r#"{"id":1,"error":null}"#,
        ] {
            let probed = probe_answer(line.as_bytes()).unwrap();
            assert_eq!(probed.result, None, "{line}");
        }
        let probed = probe_answer(br#"{"id":2,"error":{"code":-32020,"message":"m"}}"#).unwrap();
        assert_eq!(probed.error.map(|e| e.get()), Some(r#"{"code":-32020,"message":"m"}"#));
    }

    /// The quick check reads only answers serde's pass reads, and reads them the same way: for
    /// answers, near-answers and their byte-level mutations, whatever it accepts serde accepts
    /// with the same id, the same place for the result and the same scan.
    #[test]
    fn the_quick_probe_agrees_with_serdes() {
        let results = [
            r#"{"content":[{"type":"text","text":"hi"}]}"#,
            r#"{"content":[],"resultType":"task","structuredContent":{"a":[1,2]}}"#,
            r#"{"resultType":"input_required","inputRequests":{}}"#,
            r#"{"resultType":null,"structuredContent":null}"#,
            r#"{"resultType":"x","resultType":"task"}"#,
            r#"{"a\nb":1,"resultType":"task"}"#,
            r#"{"$serde_json::private::Number":"1"}"#,
            r#"{"t":"é ✓ \" \\ \/ \b\f\n\r\t","n":-0.5e+10}"#,
            r#"{"t":"\u00e9"}"#,
            r#"{}"#,
            r#"[1,{"a":2}]"#,
            r#""text""#,
            r#"-1.5e300"#,
            r#"null"#,
            r#"true"#,
        ];
        let ids = ["1", "-7", "\"a b\"", "1.0", "9223372036854775808", "true", "null", "{}"];
        let mut lines = Vec::new();
        for result in results {
            for id in ids {
                lines.push(format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#));
                lines.push(format!(r#" {{ "result" : {result} , "id" : {id} }} "#));
            }
        }
        let long = "QUJD".repeat(2000);
        lines.extend([
            format!(r#"{{"jsonrpc":"2.0","id":3,"result":{{"content":[{{"type":"text","text":"{long}"}}]}}}}"#),
            r#"{"id":1,"id":2,"result":{"a":1}}"#.into(),
            r#"{"id":1,"result":{"a":1},"result":{"b":2}}"#.into(),
            r#"{"id":1,"result":{"a":1},"error":{"code":1,"message":"m"}}"#.into(),
            r#"{"id":1,"result":{"a":1},"method":"x"}"#.into(),
            r#"{"\u0069d":1,"result":{"a":1}}"#.into(),
            r#"{"id":1,"result":{"a":1},"jsonrpc":"2.0","jsonrpc":"1"}"#.into(),
            r#"{"id":1}"#.into(),
            r#"{"result":{"a":1}}"#.into(),
            "\u{c}{\"id\":1,\"result\":{\"a\":1}}".into(),
        ]);
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let specials = [
            b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', 0, 0x1f, 0x80, 0xc3, 0xff, b'u', b'e', b'-', b' ',
        ];
        let mut inputs: Vec<Vec<u8>> = lines.iter().map(|l| l.clone().into_bytes()).collect();
        for line in &lines {
            for _ in 0..40 {
                let mut bytes = line.clone().into_bytes();
                let at = (next() as usize) % bytes.len();
                match next() % 3 {
                    0 => bytes[at] = specials[(next() as usize) % specials.len()],
                    1 => {
                        bytes.remove(at);
                    }
                    _ => bytes.insert(at, specials[(next() as usize) % specials.len()]),
                }
                inputs.push(bytes);
            }
        }
        let mut quick_count = 0;
        for input in &inputs {
            let Some(quick) = quick_probe(input) else { continue };
            quick_count += 1;
            let text = String::from_utf8_lossy(input);
            let slow = serde_probe(input).unwrap_or_else(|| panic!("quick accepted what serde did not: {text:.200}"));
            assert_eq!(quick.id, slow.id, "{text:.200}");
            assert_eq!(quick.result, slow.result, "{text:.200}");
            assert!(slow.error.is_none(), "{text:.200}");
        }
        assert!(
            quick_count > lines.len(),
            "the quick probe took {quick_count} of {}",
            inputs.len()
        );
    }

    /// Ids are read as the JSON decoder reads them (`RequestId::from_value`).
    #[test]
    fn ids_are_read_as_the_decoder_would() {
        for id in [
            "0",
            "7",
            "-7",
            "-0",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "12345678901234567890",
            "1.0",
            "1e3",
            "\"7\"",
            "\"\"",
            "\"a\\u0062\"",
            "true",
        ] {
            let line = format!("{{\"result\":{{}},\"id\": {id} }}");
            let decoded: serde_json::Value = serde_json::from_str(&line).unwrap();
            let expected = RequestId::from_value(&decoded["id"]);
            assert_eq!(
                probe_answer(line.as_bytes()).map(|answer| answer.id),
                expected,
                "{line}"
            );
        }
    }
}
