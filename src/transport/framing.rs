//! Newline-delimited framing with a size bound: memory stays bounded whatever the peer writes.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// How much of an oversized line is kept, to find its request id.
const OVERSIZE_PREFIX: usize = 4096;

#[derive(Debug, PartialEq)]
pub enum Line {
    /// A complete line, without its terminator.
    Data(Vec<u8>),
    /// A line longer than the bound: its start, and its full length.
    TooLong { prefix: Vec<u8>, len: usize },
    /// End of stream (a trailing unterminated fragment is returned as `Data` first).
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
                _ => Line::Data(buf),
            });
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
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
    let mut depth = 0i32;
    let mut i = 0;
    while i < prefix.len() {
        match prefix[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth -= 1,
            b'"' => {
                let end = string_end(prefix, i)?;
                if depth == 1 && &prefix[i..=end] == b"\"id\"" {
                    return value_after_colon(&prefix[end + 1..]);
                }
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Index of the closing quote of the string starting at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

fn value_after_colon(rest: &[u8]) -> Option<serde_json::Value> {
    let text = std::str::from_utf8(rest)
        .ok()?
        .trim_start()
        .strip_prefix(':')?
        .trim_start();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<serde_json::Value>();
    match stream.next()? {
        Ok(v @ (serde_json::Value::Number(_) | serde_json::Value::String(_))) => Some(v),
        _ => None,
    }
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
        assert_eq!(got[2], Line::Data(b"xy".to_vec()));
        assert_eq!(got[3], Line::Eof);
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
}
