//! The SSE parser: any split of the byte stream, bounded events, and serialise → parse.

use mcp_client::fuzzing::sse::{SseEvent, SseItem, SseParser};
use proptest::prelude::*;

/// What the parser keeps of an oversized event's data.
const OVERSIZE_PREFIX: usize = 4096;

struct Parsed {
    items: Vec<SseItem>,
    last_id: Option<String>,
    retry: Option<std::time::Duration>,
}

fn parse(chunks: &[&[u8]], max: usize) -> Parsed {
    let mut p = SseParser::new(max);
    let mut items = Vec::new();
    for c in chunks {
        p.feed(c);
        while let Some(item) = p.next_item() {
            items.push(item);
        }
    }
    p.finish();
    while let Some(item) = p.next_item() {
        items.push(item);
    }
    Parsed {
        items,
        last_id: p.last_event_id().map(str::to_string),
        retry: p.retry(),
    }
}

/// Event-stream-shaped bytes: field names, separators, every line end, a BOM, digits.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just(&b"data"[..]),
        Just(&b"data: "[..]),
        Just(&b"event:"[..]),
        Just(&b"id: "[..]),
        Just(&b"retry:"[..]),
        Just(&b": comment"[..]),
        Just(&b"\n"[..]),
        Just(&b"\r"[..]),
        Just(&b"\r\n"[..]),
        Just(&b"\n\n"[..]),
        Just(&b"\xEF\xBB\xBF"[..]),
        Just(&b"\xEF\xBB"[..]),
        Just(&b"12"[..]),
        Just(&b"\0"[..]),
        Just(&b" "[..]),
        Just(&b":"[..]),
    ];
    let piece = prop_oneof![
        3 => token.prop_map(<[u8]>::to_vec),
        2 => prop::collection::vec(any::<u8>(), 0..8),
        1 => (1usize..6000).prop_map(|n| vec![b'y'; n]),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

fn max_data() -> impl Strategy<Value = usize> {
    prop_oneof![
        0usize..8,
        8usize..256,
        4000usize..5000,
        Just(usize::MAX - 1),
        Just(usize::MAX)
    ]
}

/// `data` cut at the given offsets.
fn split<'a>(data: &'a [u8], cuts: &[prop::sample::Index]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c.index(data.len() + 1)).collect();
    at.sort_unstable();
    let mut out = Vec::new();
    let mut start = 0;
    for end in at.into_iter().chain([data.len()]) {
        out.push(&data[start..end]);
        start = end;
    }
    out
}

/// One event as a server writes it.
#[derive(Debug, Clone)]
struct Written {
    event: Option<String>,
    id: Option<String>,
    data: String,
}

fn written() -> impl Strategy<Value = Written> {
    // Field values cannot hold a line end; data can (it spans several data lines) but not a CR,
    // which would end a line where the writer meant none.
    let field = "[^\r\n\0]{0,12}";
    (
        prop::option::of(field.prop_filter("a name", |s: &String| !s.is_empty())),
        prop::option::of(field),
        "[^\r]{0,40}",
    )
        .prop_map(|(event, id, data)| Written { event, id, data })
}

fn serialise(events: &[Written], crlf: bool) -> Vec<u8> {
    let eol = if crlf { "\r\n" } else { "\n" };
    let mut out = String::new();
    for e in events {
        if let Some(event) = &e.event {
            out += &format!("event: {event}{eol}");
        }
        if let Some(id) = &e.id {
            out += &format!("id: {id}{eol}");
        }
        for line in e.data.split('\n') {
            out += &format!("data: {line}{eol}");
        }
        out += eol;
    }
    out.into_bytes()
}

proptest! {
    #[test]
    fn any_split_parses_like_the_whole(
        data in stream(),
        max in max_data(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let whole = parse(&[&data], max);
        let parts = parse(&split(&data, &cuts), max);
        prop_assert_eq!(&whole.items, &parts.items);
        prop_assert_eq!(&whole.last_id, &parts.last_id);
        prop_assert_eq!(whole.retry, parts.retry);
        for item in &whole.items {
            match item {
                SseItem::Event(e) => {
                    // The data's bytes as they came (no decoding), within the bound.
                    prop_assert!(e.data.len() <= max.min(data.len()));
                    prop_assert!(e.id.as_ref().is_none_or(|id| id.len() <= data.len() * 3));
                }
                SseItem::TooLarge { prefix, len } => {
                    prop_assert!(prefix.len() <= OVERSIZE_PREFIX);
                    prop_assert!(*len > max && *len <= data.len());
                }
            }
        }
    }

    #[test]
    fn written_events_read_back_exactly(
        events in prop::collection::vec(written(), 0..6),
        crlf in any::<bool>(),
        bom in any::<bool>(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let mut bytes = if bom { b"\xEF\xBB\xBF".to_vec() } else { Vec::new() };
        bytes.extend(serialise(&events, crlf));
        let parsed = parse(&split(&bytes, &cuts), 1 << 20);
        let mut last_id = None;
        let expected: Vec<SseItem> = events
            .iter()
            .map(|e| {
                if e.id.is_some() {
                    last_id = e.id.clone();
                }
                // The default type reads as none.
                let event = e.event.clone().filter(|t| t != "message");
                SseItem::Event(SseEvent { event, data: e.data.clone().into_bytes(), id: last_id.clone() })
            })
            .collect();
        prop_assert_eq!(parsed.items, expected);
    }
}

/// Found by `any_split_parses_like_the_whole`: a data bound near `usize::MAX` (a configured
/// `max_message_bytes`) overflowed the line cap, which panicked, or in a release build wrapped to
/// a tiny cap that silently cut every data line.
#[test]
fn a_huge_bound_neither_panics_nor_cuts_lines() {
    let line = format!("data: {}\n\n", "z".repeat(200));
    for max in [usize::MAX, usize::MAX - 10] {
        let got = parse(&[line.as_bytes()], max);
        assert_eq!(
            got.items,
            vec![SseItem::Event(SseEvent {
                event: None,
                data: "z".repeat(200).into_bytes(),
                id: None
            })]
        );
    }
}
