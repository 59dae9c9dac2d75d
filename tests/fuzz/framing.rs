//! The stdio line framer (`read_line`, through tokio's `BufReader` and through the stdio
//! transport's `LeanReader`) and the id scans over a line or an oversized prefix.

use mcp_client::fuzzing::framing::{probe_answer, read_line, scan_top_level_id, Line};
use mcp_client::fuzzing::{LeanReader, ResultType};
use mcp_client::RequestId;
use proptest::prelude::*;
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, BufReader, ReadBuf};

/// What `read_line` keeps of an oversized line (its first bytes, to find the request id).
const OVERSIZE_PREFIX: usize = 4096;

/// A reader that hands out `data` in the given read sizes (then the rest at once).
struct Chunked {
    data: Vec<u8>,
    pos: usize,
    sizes: VecDeque<usize>,
}

impl AsyncRead for Chunked {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let left = this.data.len() - this.pos;
        if this.sizes.front() == Some(&0) {
            // A read size of 0: nothing yet (as a pipe the server has not written to), ready
            // again at once.
            this.sizes.pop_front();
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let want = this.sizes.pop_front().unwrap_or(left).max(1);
        let n = want.min(left).min(buf.remaining());
        buf.put_slice(&this.data[this.pos..this.pos + n]);
        this.pos += n;
        Poll::Ready(Ok(()))
    }
}

/// Every `Line` of `data` read through a buffer of `capacity` with reads of `sizes`.
fn frame(data: &[u8], max: usize, capacity: usize, sizes: Vec<usize>) -> Vec<Line> {
    let reader = Chunked {
        data: data.to_vec(),
        pos: 0,
        sizes: sizes.into(),
    };
    frame_with(data, max, BufReader::with_capacity(capacity, reader))
}

/// The same through the stdio transport's reader, keeping at most `keep_idle` while waiting;
/// a 0 in `sizes` is a read that finds nothing yet.
fn frame_lean(data: &[u8], max: usize, keep_idle: usize, sizes: Vec<usize>) -> Vec<Line> {
    let reader = Chunked {
        data: data.to_vec(),
        pos: 0,
        sizes: sizes.into(),
    };
    frame_with(data, max, LeanReader::new(reader, keep_idle))
}

fn frame_with<R: tokio::io::AsyncBufRead + Unpin>(data: &[u8], max: usize, mut reader: R) -> Vec<Line> {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        let mut out = Vec::new();
        loop {
            let line = read_line(&mut reader, max).await.unwrap();
            let eof = line == Line::Eof;
            out.push(line);
            if eof {
                return out;
            }
            assert!(out.len() <= data.len() + 1, "more lines than bytes");
        }
    })
}

/// The framing rules written plainly: lines end at LF; a CR before the LF is dropped; a line over
/// `max` bytes (its CR counted) is reported with its length and first bytes; a final fragment
/// without LF is a line of its own.
fn model(mut data: &[u8], max: usize) -> Vec<Line> {
    let mut out = Vec::new();
    while !data.is_empty() {
        let (line, terminated) = match data.iter().position(|&b| b == b'\n') {
            Some(i) => {
                let line = &data[..i];
                data = &data[i + 1..];
                (line, true)
            }
            None => (std::mem::take(&mut data), false),
        };
        out.push(if line.len() > max {
            Line::TooLong {
                prefix: line[..line.len().min(OVERSIZE_PREFIX)].to_vec(),
                len: line.len(),
            }
        } else if !terminated {
            Line::Cut(line.to_vec())
        } else if line.last() == Some(&b'\r') {
            Line::Data(line[..line.len() - 1].to_vec())
        } else {
            Line::Data(line.to_vec())
        });
    }
    out.push(Line::Eof);
    out
}

/// Bytes with many line ends, CRs and JSON punctuation.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        4 => any::<u8>(),
        2 => Just(b'\n'),
        1 => Just(b'\r'),
        2 => prop::sample::select(b"{}[]\":, \\idresultmethod0123456789".to_vec()),
    ];
    prop_oneof![
        3 => prop::collection::vec(byte, 0..400),
        // Long lines, across the 4096-byte prefix and typical bounds.
        1 => (prop::collection::vec(any::<u8>(), 0..64), 3000usize..9000, any::<bool>())
            .prop_map(|(head, n, lf)| {
                let mut v = head;
                v.extend(std::iter::repeat_n(b'x', n));
                if lf {
                    v.extend_from_slice(b"\r\nnext\n");
                }
                v
            }),
    ]
}

fn max_len() -> impl Strategy<Value = usize> {
    prop_oneof![0usize..16, 16usize..512, 4000usize..5000, Just(usize::MAX)]
}

/// A JSON-RPC-like object: the keys the scans look for, others, and values of every kind.
fn message() -> impl Strategy<Value = Map<String, Value>> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
        Just(Value::from("\"id\":1,\"method\":\"x\"")),
        prop::sample::select(vec!["complete", "input_required", "task"]).prop_map(Value::from),
    ];
    let value = leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::vec((key(), inner), 0..4).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    });
    prop::collection::vec((key(), value), 0..6).prop_map(|kv| kv.into_iter().collect())
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "id", "result", "error", "method", "jsonrpc", "params", "resultType", "structuredContent",
        ])
        .prop_map(String::from),
        1 => ".{0,6}",
    ]
}

proptest! {
    #[test]
    fn framing_matches_the_model_for_any_split(
        data in stream(),
        max in max_len(),
        capacity in 1usize..64,
        sizes in prop::collection::vec(1usize..80, 0..40),
    ) {
        let whole = frame(&data, max, 8192, Vec::new());
        let split = frame(&data, max, capacity, sizes);
        prop_assert_eq!(&whole, &split);
        prop_assert_eq!(&whole, &model(&data, max));
        for line in &whole {
            match line {
                Line::Data(d) | Line::Cut(d) => prop_assert!(d.len() <= max),
                Line::TooLong { prefix, len } => prop_assert!(prefix.len() <= OVERSIZE_PREFIX && *len > max),
                Line::Eof => {}
            }
        }
    }

    #[test]
    fn the_lean_reader_frames_as_the_model_for_any_split_and_stall(
        data in stream(),
        max in max_len(),
        keep_idle in prop::sample::select(vec![0usize, 4096, 16384]),
        sizes in prop::collection::vec(prop_oneof![Just(0usize), 1usize..80, 4000usize..70_000], 0..40),
    ) {
        prop_assert_eq!(frame_lean(&data, max, keep_idle, sizes), model(&data, max));
    }

    #[test]
    fn scans_never_panic_on_any_bytes(data in stream()) {
        let _ = probe_answer(&data).map(|answer| answer.id);
        let _ = scan_top_level_id(&data);
    }

    /// On a serialised object, the answer probe agrees with a full decode: `Some(id)` exactly
    /// when the object is an answer (a `result` or `error`, no `method`) with an integer or
    /// string id, and it points at the `result` the decoder reads.
    #[test]
    fn answer_scan_agrees_with_the_decoder(obj in message()) {
        let line = serde_json::to_vec(&Value::Object(obj)).unwrap();
        // Compare with what the decoder reads back (floats may not round-trip bit for bit).
        let obj: Map<String, Value> = serde_json::from_slice(&line).unwrap();
        let is_answer = (obj.contains_key("result") || obj.contains_key("error")) && !obj.contains_key("method");
        let id = obj.get("id").and_then(RequestId::from_value);
        let expected = if is_answer { id } else { None };
        let probed = probe_answer(&line);
        prop_assert_eq!(probed.as_ref().map(|answer| answer.id.clone()), expected);
        if let Some(at) = probed.and_then(|answer| answer.result) {
            let result: Value = serde_json::from_slice(&line[at.range]).unwrap();
            prop_assert_eq!(Some(&result), obj.get("result"));
            prop_assert!(!obj.contains_key("error") && !result.is_null());
            // What the client reads in it, where the probe is sure, is what the decoder reads.
            if let Some(kind) = at.scan.kind {
                prop_assert_eq!(Some(kind), ResultType::of(&result).ok());
            }
            if let Some(structured) = at.scan.structured {
                prop_assert_eq!(structured, result.get("structuredContent").is_some_and(|v| !v.is_null()));
            }
            if let Some(is_error) = at.scan.is_error {
                prop_assert_eq!(is_error, result.get("isError").and_then(Value::as_bool) == Some(true));
            }
        }
    }

    /// On any cut of a serialised object (what an oversized line keeps), the id scan finds the
    /// object's own id or nothing, never a different one.
    #[test]
    fn id_scan_on_a_prefix_never_names_another_request(
        mut obj in message(),
        id in prop::option::of(prop_oneof![any::<i64>().prop_map(Value::from), ".{0,8}".prop_map(Value::from)]),
        cut in any::<prop::sample::Index>(),
    ) {
        if let Some(id) = id {
            obj.shift_remove("id");
            obj.insert("id".into(), id);
        }
        let line = serde_json::to_vec(&Value::Object(obj)).unwrap();
        let obj: Map<String, Value> = serde_json::from_slice(&line).unwrap();
        let prefix = &line[..cut.index(line.len() + 1)];
        if let Some(found) = scan_top_level_id(prefix) {
            prop_assert_eq!(Some(&found), obj.get("id"));
        }
        if prefix.len() == line.len() {
            let id = obj.get("id").filter(|id| id.is_number() || id.is_string());
            let found = scan_top_level_id(prefix);
            prop_assert_eq!(found.as_ref(), id);
        }
    }
}

/// Found by `id_scan_on_a_prefix_never_names_another_request`: a prefix cut inside a numeric id
/// (`"id":12` of `"id":12345`) named request 12.
#[test]
fn a_number_cut_by_the_prefix_is_no_id() {
    assert_eq!(scan_top_level_id(br#"{"jsonrpc":"2.0","id":12"#), None);
    assert_eq!(
        scan_top_level_id(br#"{"jsonrpc":"2.0","id":12,"#),
        Some(serde_json::json!(12))
    );
    assert_eq!(scan_top_level_id(br#"{"id":"ab"#), None);
}
