//! Newline-delimited framing with a size bound: memory stays bounded whatever the peer writes.

use std::ops::ControlFlow;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::protocol::RequestId;
pub use crate::protocol::MAX_JSON_DEPTH;

/// How much of an oversized line is kept, to find its request id.
const OVERSIZE_PREFIX: usize = 4096;

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

/// The `"id"` of a line that is an answer (a top-level `"result"` or `"error"` and no
/// `"method"`), found without decoding it: the reader hands answers to their waiting callers
/// undecoded, and each caller decodes its own on its own thread. Anything else (requests,
/// notifications, odd spellings such as escaped keys) gets `None` and is decoded by the reader.
#[cfg_attr(not(feature = "fuzzing"), allow(dead_code))] // the fuzzer checks it against the depth walk
pub fn scan_answer_id(line: &[u8]) -> Option<serde_json::Value> {
    scan_answer(line).map(|(id, _)| id)
}

/// As [`scan_answer_id`], with the line's nesting depth (the same walk measures it, so the
/// reader can refuse an answer nested deeper than [`MAX_JSON_DEPTH`] at no extra cost).
pub fn scan_answer(line: &[u8]) -> Option<(serde_json::Value, usize)> {
    let (rest, depth) = answer_id_rest(line)?;
    Some((value_after_colon(rest)?, depth))
}

/// As [`scan_answer`], with the id as a [`RequestId`]: an integer id (what this client sends) is
/// read from its digits, without decoding a JSON value (or checking the rest of the line).
pub fn scan_answer_request_id(line: &[u8]) -> Option<(RequestId, usize)> {
    let (rest, depth) = answer_id_rest(line)?;
    let id = match integer_after_colon(rest) {
        Some(n) => RequestId::Num(n),
        None => RequestId::from_value(&value_after_colon(rest)?)?,
    };
    Some((id, depth))
}

/// The text after an answer's top-level `"id"` key, and the line's depth.
fn answer_id_rest(line: &[u8]) -> Option<(&[u8], usize)> {
    let (mut id, mut answer, mut method) = (None, false, false);
    let depth = top_level_keys(line, |key, rest| {
        match key {
            b"id" => id = Some(rest),
            b"result" | b"error" => answer = true,
            b"method" => {
                method = true;
                return ControlFlow::Break(());
            }
            _ => {}
        }
        ControlFlow::Continue(())
    })?;
    if method || !answer || line.first() != Some(&b'{') {
        return None;
    }
    Some((id?, depth))
}

/// The text after a member's key (`: value, ...`) from its value on: whitespace, the colon and
/// whitespace skipped; `None` without the colon.
pub(crate) fn after_colon(rest: &[u8]) -> Option<&[u8]> {
    Some(rest.trim_ascii_start().strip_prefix(b":")?.trim_ascii_start())
}

/// `: 123,` → 123: a plain JSON integer (no sign but `-`, no leading zero, no fraction or
/// exponent) that fits an `i64` and is followed by a delimiter (not cut off). Anything else is
/// `None`, for the JSON decoder to judge.
fn integer_after_colon(rest: &[u8]) -> Option<i64> {
    let rest = after_colon(rest)?;
    let negative = rest.first() == Some(&b'-');
    let start = usize::from(negative);
    let digits = rest[start..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || digits > 18 || (digits > 1 && rest[start] == b'0') {
        return None;
    }
    if !matches!(
        rest.get(start + digits),
        Some(b',' | b'}' | b' ' | b'\t' | b'\r' | b'\n')
    ) {
        return None;
    }
    let mut n: i64 = 0;
    for &c in &rest[start..start + digits] {
        n = n * 10 + i64::from(c - b'0');
    }
    Some(if negative { -n } else { n })
}

/// Visits the members of a JSON object's top level: each key's raw bytes (escapes as written)
/// and the text after its closing quote; `Break` stops the walk. Accurate on valid JSON.
pub(crate) fn top_level_members<'a>(bytes: &'a [u8], visit: impl FnMut(&'a [u8], &'a [u8]) -> ControlFlow<()>) {
    top_level_keys(bytes, visit);
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
        let line = format!(r#"{{"id":1,"result":{}}}"#, nest(5));
        assert_eq!(scan_answer(line.as_bytes()), Some((json!(1), 6)));
        assert_eq!(scan_answer_request_id(line.as_bytes()), Some((RequestId::Num(1), 6)));
    }

    #[test]
    fn the_id_follows_json_whitespace_only() {
        assert_eq!(scan_top_level_id(b"{\"id\": \t\"a\",\"result\":{"), Some(json!("a")));
        // U+2003 (em space) is whitespace to Rust's `trim`, not to JSON.
        assert_eq!(scan_top_level_id("{\"id\":\u{2003}\"a\",\"result\":{".as_bytes()), None);
        assert_eq!(scan_answer("{\"id\":\u{2003}\"a\",\"result\":{}}".as_bytes()), None);
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
    fn answers_are_told_from_requests_and_notifications_without_decoding() {
        let answer = |s: &str| scan_answer_id(s.as_bytes());
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","id":7,"result":{"method":"x","id":9}}"#),
            Some(json!(7))
        );
        assert_eq!(
            answer(r#"{"result":{"id":1},"id":"a b","jsonrpc":"2.0"}"#),
            Some(json!("a b"))
        );
        assert_eq!(
            answer(r#" {"error":{"code":-1,"message":"id"},"id" : 3}"#),
            None,
            "leading space: not an object start"
        );
        assert_eq!(
            answer(r#"{"error":{"code":-1,"message":""id""}, "id" : 3}"#),
            Some(json!(3))
        );
        // A value spelled like a key is not a key.
        assert_eq!(answer(r#"{"jsonrpc":"2.0","id":4,"result":"method"}"#), Some(json!(4)));
        // Requests and notifications (a top-level "method" anywhere) are not answers.
        assert_eq!(answer(r#"{"id":5,"result":{},"method":"ping"}"#), None);
        assert_eq!(answer(r#"{"jsonrpc":"2.0","id":6,"method":"roots/list"}"#), None);
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"result":1}}"#),
            None
        );
        // No result/error, no usable id, or escaped keys: left to the full decoder.
        assert_eq!(answer(r#"{"jsonrpc":"2.0","id":8}"#), None);
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#),
            None
        );
        assert_eq!(answer(r#"{"jsonrpc":"2.0","id":{"a":1},"result":{}}"#), None);
        assert_eq!(answer(r#"{"jsonrpc":"2.0","\u0069d":9,"result":{}}"#), None);
        assert_eq!(answer(r#"[{"id":1,"result":{}}]"#), None);
        assert_eq!(answer(r#"{"id":1,"result":{"text":"unterminated"#), None);
    }

    /// The integer fast path reads exactly the ids the JSON decoder would, and leaves the rest
    /// to it.
    #[test]
    fn integer_ids_are_read_from_their_digits_as_the_decoder_would() {
        for id in [
            "0",
            "7",
            "-7",
            "123456789012345678",
            "-123456789012345678",
            "9223372036854775807",
            "1.0",
            "1e3",
            "01",
            "-0",
            "\"7\"",
            "\"\"",
            "12345678901234567890",
            "-",
            "true",
            "7 ",
        ] {
            for tail in [",\"result\":{}}", "}", " ,\"result\":1}"] {
                let line = format!("{{\"result\":{{}},\"id\": {id}{tail}");
                let slow = scan_answer(line.as_bytes()).and_then(|(v, d)| Some((RequestId::from_value(&v)?, d)));
                assert_eq!(scan_answer_request_id(line.as_bytes()), slow, "{line}");
            }
        }
        assert_eq!(integer_after_colon(b": 42,"), Some(42));
        assert_eq!(integer_after_colon(b":42"), None, "cut off: the decoder decides");
    }
}
