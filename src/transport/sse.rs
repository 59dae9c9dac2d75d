//! A Server-Sent Events parser (the `text/event-stream` format) with bounded memory.
//!
//! Bytes go in as they arrive ([`SseParser::feed`]); complete events come out. The rules are the
//! event-stream ones: lines end with CRLF, LF or CR (a CR at the end of one chunk and an LF at the
//! start of the next are one line end); a line starting with `:` is a comment; `field: value`
//! loses one space after the colon; `data` lines join with `\n`; a blank line dispatches the
//! event; `id` (without NUL) sets the last event id even when no event is dispatched; `retry`
//! takes ASCII digits only; a leading byte-order mark is skipped. An event whose data outgrows the
//! bound is reported as [`SseItem::TooLarge`] with its first bytes, so a caller can find the
//! JSON-RPC id and fail just that request. A reader that can put bytes where it is told (a
//! socket read) appends a long data line's next bytes to the event's data itself
//! ([`SseParser::data_to_extend`]), so they are not copied there from its own buffer.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

/// How much of an oversized event's data is kept, to find its request id.
const OVERSIZE_PREFIX: usize = 4096;
/// Slack above the data bound for one line's field name and separators.
const LINE_SLACK: usize = 64;
/// The least spare capacity [`SseParser::data_to_extend`] offers a reader (less only when the
/// bound is nearer).
const DIRECT_READ: usize = 16 * 1024;

/// The data length of the last event that went on past the end of a chunk, shared by the
/// parsers that use it ([`SseParser::sharing`]): each reply on an HTTP connection gets a parser of
/// its own, and what the last reply's event needed is the best guess for the next one's.
#[derive(Debug, Default)]
pub struct SpanHint(AtomicUsize);

impl SpanHint {
    pub const fn new() -> Self {
        SpanHint(AtomicUsize::new(0))
    }
}

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event` field (`None` means the default type, `message`).
    pub event: Option<String>,
    /// The data lines joined with `\n`, as they came: bytes, not checked as UTF-8 here (an
    /// answer's bytes are checked once, by the JSON reading that takes them).
    pub data: Vec<u8>,
    /// The last event id in force when this event was dispatched.
    pub id: Option<String>,
}

impl SseEvent {
    /// The event type, `message` when the stream named none.
    pub fn kind(&self) -> &str {
        self.event.as_deref().unwrap_or("message")
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseItem {
    Event(SseEvent),
    /// An event whose data exceeded the bound: its first bytes and its full data length.
    TooLarge {
        prefix: Vec<u8>,
        len: usize,
    },
}

#[derive(Debug)]
pub struct SseParser {
    max_data: usize,
    /// The current line (capped; see `line_len`).
    line: Vec<u8>,
    /// The current line's full length, which may exceed what `line` kept.
    line_len: usize,
    /// The previous chunk ended in CR: an LF starting the next one belongs to it.
    after_cr: bool,
    /// Still at the stream's very start (a BOM may follow).
    at_start: bool,
    data: Vec<u8>,
    data_len: usize,
    /// Some `data` line was seen for the pending event (even an empty one).
    has_data: bool,
    /// The current line is a `data` line whose value goes straight into `data`.
    data_line: bool,
    /// The pending event's data went on past the end of a chunk.
    spans: bool,
    /// The data length of the last event that went on past a chunk: what the next such event
    /// gets room for at once.
    spanned_len: usize,
    /// Where `spanned_len` comes from and goes to, when parsers share it.
    hint: Option<&'static SpanHint>,
    /// The pending event's data was given room by `spanned_len`.
    hinted: bool,
    event: Option<String>,
    last_id: Option<String>,
    retry: Option<Duration>,
    /// The first completed item not yet taken; later ones wait in `more` (a reply's one event
    /// then needs no queue).
    ready: Option<SseItem>,
    more: VecDeque<SseItem>,
}

impl SseParser {
    /// A parser whose events carry at most `max_data` bytes of data.
    pub fn new(max_data: usize) -> Self {
        SseParser {
            max_data,
            line: Vec::new(),
            line_len: 0,
            after_cr: false,
            at_start: true,
            data: Vec::new(),
            data_len: 0,
            has_data: false,
            data_line: false,
            spans: false,
            spanned_len: 0,
            hint: None,
            hinted: false,
            event: None,
            last_id: None,
            retry: None,
            ready: None,
            more: VecDeque::new(),
        }
    }

    /// A parser that starts from what `hint` knows about events over several chunks and keeps
    /// it up to date (one parser per reply, the hint shared by the replies).
    pub fn sharing(max_data: usize, hint: &'static SpanHint) -> Self {
        SseParser {
            spanned_len: hint.0.load(Relaxed),
            hint: Some(hint),
            ..SseParser::new(max_data)
        }
    }

    /// The last event id the stream set (for `Last-Event-ID` on reconnection).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The reconnection time the stream asked for with `retry:`.
    pub fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// Consumes bytes; completed events are queued for [`SseParser::next_item`].
    pub fn feed(&mut self, mut bytes: &[u8]) {
        if self.at_start {
            // A UTF-8 BOM may open the stream; it may also arrive split across chunks.
            const BOM: &[u8] = b"\xEF\xBB\xBF";
            let have = self.line.len();
            let take = (BOM.len() - have).min(bytes.len());
            if have < BOM.len() && bytes[..take] == BOM[have..have + take] {
                if have + take == BOM.len() {
                    self.line.clear();
                    self.at_start = false;
                } else {
                    self.line.extend_from_slice(&bytes[..take]);
                }
                bytes = &bytes[take..];
                if self.at_start {
                    return;
                }
            } else {
                // Not a BOM after all: what was held back is ordinary line content.
                self.at_start = false;
                self.line_len = self.line.len();
            }
        }
        // A run of line content at a time (not byte by byte): the run up to the next CR or LF,
        // found with memchr (a byte loop cost ~8 instructions a byte), is copied at once, as much
        // of it as the cap allows. Each byte is searched once: a data line's field name is taken
        // off the front of the run already found.
        while let Some(&b) = bytes.first() {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    bytes = &bytes[1..];
                    continue;
                }
            }
            match b {
                b'\n' => {
                    self.end_line();
                    bytes = &bytes[1..];
                }
                b'\r' => {
                    self.end_line();
                    self.after_cr = true;
                    bytes = &bytes[1..];
                }
                _ => {
                    let run = memchr::memchr2(b'\n', b'\r', bytes).unwrap_or(bytes.len());
                    let (mut content, rest) = bytes.split_at(run);
                    bytes = rest;
                    // The line goes on in the next chunk when the run reaches this one's end.
                    let goes_on = rest.is_empty();
                    if !self.data_line {
                        if let Some(name) = self.data_field_ends_in(content) {
                            // A data line whose field name is here (or completed here): its value
                            // goes straight into the event's data, as `handle_line` would put it
                            // there at the line's end, without passing through the line buffer
                            // (a copy of a large answer saved).
                            self.start_data_line();
                            content = &content[name..];
                            if content[0] == b' ' {
                                content = &content[1..];
                                self.line_len += 1;
                            }
                        }
                    }
                    if self.data_line {
                        // As much as the line buffer would have kept of it (see below).
                        let cap = self.max_data.saturating_add(LINE_SLACK);
                        let keep = cap.saturating_sub(self.line_len).min(content.len());
                        self.line_len += content.len();
                        if goes_on {
                            self.expect_more_data(keep);
                        }
                        self.push_data(&content[..keep], content.len());
                        continue;
                    }
                    // Saturating: a bound near usize::MAX must not wrap to a tiny cap.
                    let cap = self.max_data.saturating_add(LINE_SLACK);
                    if !goes_on && self.line_len == 0 && content.len() <= cap {
                        // A whole line in this chunk (`event: message`): handled where it is,
                        // with its line end, not copied into the line buffer first.
                        self.handle_line(content, content.len());
                        self.after_cr = rest[0] == b'\r';
                        bytes = &rest[1..];
                        continue;
                    }
                    self.line_len += content.len();
                    let keep = cap.saturating_sub(self.line.len()).min(content.len());
                    self.line.extend_from_slice(&content[..keep]);
                }
            }
        }
    }

    /// When the line so far and `content` (the next run of it) make a data line whose field
    /// name ends in `content` with at least one byte after the colon (so that the optional space
    /// can be told), how many of `content`'s bytes are the rest of the name.
    fn data_field_ends_in(&self, content: &[u8]) -> Option<usize> {
        const NAME: &[u8] = b"data:";
        let held = self.line.len();
        // Nothing dropped from the line so far, and no more of it than a partial name.
        if self.line_len != held || held > NAME.len() || held + content.len() <= NAME.len() {
            return None;
        }
        let rest = &NAME[held..];
        (self.line[..] == NAME[..held] && content.starts_with(rest)).then_some(rest.len())
    }

    /// The current line is a data line from here on: its value goes into the event's data.
    fn start_data_line(&mut self) {
        self.at_start = false;
        self.line.clear();
        if self.has_data {
            self.push_data(b"\n", 1);
        }
        self.has_data = true;
        self.data_line = true;
        self.line_len = 5;
    }

    /// A data value goes on past this chunk, and `next` more bytes of it are about to be
    /// appended: the event's data is given room once for what an event that went on past a
    /// chunk needed last time (with an eighth more), so that it grows in place instead of being
    /// copied into larger and larger blocks as the chunks arrive. Never past the bound.
    fn expect_more_data(&mut self, next: usize) {
        self.spans = true;
        if self.data_len.saturating_add(next) > self.max_data {
            return;
        }
        let want = self.spanned_len.saturating_add(self.spanned_len / 8).min(self.max_data);
        // Less known than that: the vector's own (doubling) growth.
        if want > self.data.len() + next && want > self.data.capacity() {
            self.data.reserve(want - self.data.len());
            self.hinted = true;
        }
    }

    /// When what was fed ends inside a data line whose value still fits the bound: the
    /// pending event's data, with spare capacity for the line's next bytes, and how many of
    /// them may go there. A reader appends them to it directly (no more than that, and only
    /// at its end), then calls [`SseParser::data_added`]: a large value read from a socket
    /// this way is never copied from a read buffer.
    pub fn data_to_extend(&mut self) -> Option<(&mut Vec<u8>, usize)> {
        if !self.data_line || self.data_len >= self.max_data {
            return None;
        }
        let room = self.max_data - self.data_len;
        // Less room than a socket read's worth: the vector's own (doubling) growth.
        let want = room.min(DIRECT_READ);
        if self.data.capacity() - self.data.len() < want {
            self.data.reserve(want);
        }
        Some((&mut self.data, room))
    }

    /// The bytes from `from` on in the event's data were appended by a reader (see
    /// [`SseParser::data_to_extend`]): they are parsed as if fed, the line's value staying where
    /// it is, and whatever follows its end (usually the blank line that ends the event) fed on.
    pub fn data_added(&mut self, from: usize) {
        let added = &self.data[from..];
        let (value, rest) = match memchr::memchr2(b'\n', b'\r', added) {
            Some(end) => (end, added[end..].to_vec()),
            None => (added.len(), Vec::new()),
        };
        self.data.truncate(from + value);
        self.line_len += value;
        self.data_len += value;
        self.feed(&rest);
    }

    /// The next completed item, if any.
    pub fn next_item(&mut self) -> Option<SseItem> {
        self.ready.take().or_else(|| self.more.pop_front())
    }

    /// Whether completed items wait to be taken.
    pub fn has_items(&self) -> bool {
        self.ready.is_some() || !self.more.is_empty()
    }

    /// End of stream: an event without its closing blank line is discarded, as the format says.
    pub fn finish(&mut self) {
        self.line.clear();
        self.line_len = 0;
        self.data_line = false;
        self.reset_event();
    }

    fn reset_event(&mut self) {
        self.data.clear();
        self.data_len = 0;
        self.has_data = false;
        self.spans = false;
        self.hinted = false;
        self.event = None;
    }

    /// Handles the line collected so far; its buffer is kept (cleared) for the next line.
    fn end_line(&mut self) {
        if std::mem::take(&mut self.data_line) {
            self.line_len = 0;
            return;
        }
        let mut line = std::mem::take(&mut self.line);
        let line_len = std::mem::replace(&mut self.line_len, 0);
        self.handle_line(&line, line_len);
        line.clear();
        self.line = line;
    }

    fn handle_line(&mut self, line: &[u8], line_len: usize) {
        self.at_start = false;
        if line_len == 0 {
            self.dispatch();
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&c| c == b':') {
            Some(i) => {
                let rest = &line[i + 1..];
                (&line[..i], rest.strip_prefix(b" ").unwrap_or(rest))
            }
            None => (line, &[][..]),
        };
        let truncated = line_len > line.len();
        match field {
            b"data" => {
                let value_len = if truncated {
                    line_len - (line.len() - value.len())
                } else {
                    value.len()
                };
                if self.has_data {
                    self.push_data(b"\n", 1);
                }
                self.has_data = true;
                self.push_data(value, value_len);
            }
            // Other fields never need more than a short value; a truncated one is garbage.
            _ if truncated => {}
            // The default type is kept as none: no allocation for the usual `event: message`.
            b"event" => self.event = (value != b"message").then(|| String::from_utf8_lossy(value).into_owned()),
            b"id" if !value.contains(&0) => {
                self.last_id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Some(ms) = std::str::from_utf8(value).ok().and_then(|s| s.parse::<u64>().ok()) {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
    }

    /// Appends `bytes` (the kept part of a value whose full length is `len`) to the event data.
    fn push_data(&mut self, bytes: &[u8], len: usize) {
        self.data_len += len;
        let room = if self.data_len <= self.max_data {
            usize::MAX
        } else {
            OVERSIZE_PREFIX.saturating_sub(self.data.len())
        };
        if self.data_len > self.max_data && self.data.len() > OVERSIZE_PREFIX {
            self.data.truncate(OVERSIZE_PREFIX);
        }
        self.data.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn dispatch(&mut self) {
        if !self.has_data {
            // Nothing to dispatch (an id or retry alone, or a bare blank line).
            self.reset_event();
            return;
        }
        let item = if self.data_len > self.max_data {
            SseItem::TooLarge {
                prefix: std::mem::take(&mut self.data),
                len: self.data_len,
            }
        } else {
            if self.spans {
                self.spanned_len = self.data_len;
                if let Some(hint) = self.hint {
                    hint.0.store(self.data_len, Relaxed);
                }
            }
            // Room given by a guess much larger than the event needed is handed back, not held
            // by the event's data while it is used (glibc's allocator shrinks a block in place).
            let spare = self.data.capacity() - self.data.len();
            if self.hinted && spare > (self.data.len() / 4).max(64 * 1024) {
                self.data.shrink_to_fit();
            }
            // The buffer becomes the event's data as it is (no copy, no check).
            SseItem::Event(SseEvent {
                event: self.event.take(),
                data: std::mem::take(&mut self.data),
                id: self.last_id.clone(),
            })
        };
        if self.has_items() {
            self.more.push_back(item);
        } else {
            self.ready = Some(item);
        }
        self.reset_event();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_chunks(chunks: &[&[u8]], max: usize) -> (Vec<SseItem>, SseParser) {
        let mut p = SseParser::new(max);
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c);
            while let Some(item) = p.next_item() {
                out.push(item);
            }
        }
        (out, p)
    }

    fn data(items: &[SseItem]) -> Vec<String> {
        items
            .iter()
            .map(|i| match i {
                SseItem::Event(e) => String::from_utf8(e.data.clone()).unwrap(),
                SseItem::TooLarge { len, .. } => format!("<too large: {len}>"),
            })
            .collect()
    }

    #[test]
    fn fields_comments_and_multiline_data() {
        let input = b": a comment\nevent: message\nid: 7\ndata: {\"a\":\ndata:1}\n\n:keepalive\n\ndata:x\n\n";
        let (items, p) = parse_chunks(&[input], 1024);
        assert_eq!(data(&items), ["{\"a\":\n1}", "x"]);
        let SseItem::Event(first) = &items[0] else { panic!() };
        assert_eq!(first.event, None);
        assert_eq!(first.kind(), "message");
        assert_eq!(first.id.as_deref(), Some("7"));
        let SseItem::Event(second) = &items[1] else { panic!() };
        assert_eq!(second.kind(), "message");
        assert_eq!(second.id.as_deref(), Some("7"), "the last id stays in force");
        assert_eq!(p.last_event_id(), Some("7"));
    }

    #[test]
    fn every_line_ending_and_split_points() {
        let input: &[u8] = b"data: a\r\ndata: b\rdata: c\n\r\nid: 9\r\n\r\n";
        // Byte-by-byte feeding must give the same result as one chunk.
        let whole = parse_chunks(&[input], 1024).0;
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        let split = parse_chunks(&bytes, 1024).0;
        assert_eq!(whole, split);
        assert_eq!(data(&whole), ["a\nb\nc"]);
    }

    #[test]
    fn priming_event_sets_id_and_retry_without_dispatching_json() {
        // The SEP-1699 priming event: an id, a retry and an empty data line.
        let (items, p) = parse_chunks(&[b"id: event-1\nretry: 2000\ndata: \n\n"], 1024);
        assert_eq!(data(&items), [""]);
        assert_eq!(p.last_event_id(), Some("event-1"));
        assert_eq!(p.retry(), Some(Duration::from_millis(2000)));
        // An id alone dispatches nothing but still counts.
        let (items, p) = parse_chunks(&[b"id: 3\n\nretry: soon\n\n"], 1024);
        assert!(items.is_empty());
        assert_eq!(p.last_event_id(), Some("3"));
        assert_eq!(p.retry(), None, "a non-numeric retry is ignored");
    }

    #[test]
    fn field_without_colon_and_no_space_strip_beyond_one() {
        let (items, _) = parse_chunks(&[b"data\ndata:  two\n\n"], 1024);
        assert_eq!(data(&items), ["\n two"]);
    }

    #[test]
    fn bom_is_skipped_even_when_split() {
        let (items, _) = parse_chunks(&[b"\xEF", b"\xBB", b"\xBFdata: x\n\n"], 1024);
        assert_eq!(data(&items), ["x"]);
        let (items, _) = parse_chunks(&[b"\xEFdata: x\n\n"], 1024);
        assert_eq!(items.len(), 0, "a broken BOM makes the first line garbage");
    }

    #[test]
    fn an_unterminated_event_is_dropped_at_the_end() {
        let (mut items, mut p) = parse_chunks(&[b"data: done\n\ndata: half"], 1024);
        p.finish();
        while let Some(i) = p.next_item() {
            items.push(i);
        }
        assert_eq!(data(&items), ["done"]);
    }

    #[test]
    fn oversized_events_are_bounded_and_keep_a_prefix() {
        let big = format!(
            "data: {{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":\"{}\"}}\n\n",
            "x".repeat(10_000)
        );
        let mut p = SseParser::new(100);
        for chunk in big.as_bytes().chunks(333) {
            p.feed(chunk);
        }
        p.feed(b"data: small\n\n");
        let first = p.next_item().unwrap();
        let SseItem::TooLarge { prefix, len } = first else {
            panic!("{first:?}")
        };
        assert!(len > 10_000);
        assert!(prefix.len() <= OVERSIZE_PREFIX);
        assert!(prefix.starts_with(b"{\"jsonrpc\":\"2.0\",\"id\":5"));
        assert!(p.line.capacity() < 10_000, "the line buffer stayed bounded");
        assert_eq!(
            p.next_item(),
            Some(SseItem::Event(SseEvent {
                event: None,
                data: b"small".to_vec(),
                id: None
            }))
        );
        // Many data lines that only together exceed the bound.
        let mut p = SseParser::new(10);
        p.feed(b"data: 123456\ndata: 123456\n\n");
        assert!(matches!(p.next_item(), Some(SseItem::TooLarge { len: 13, .. })));
    }

    /// Data lines whose field name arrives whole go straight into the event's data: the events
    /// (data, ids, sizes, oversized prefixes) are the ones a byte at a time gives.
    #[test]
    fn data_lines_straight_into_the_data_match_byte_by_byte() {
        let long = "y".repeat(5000);
        let inputs = [
            format!("data: {long}\n\n"),
            format!("data:{long}\r\ndata: two\rdata:\n\nevent: e\ndata:  sp\nid: 7\n\n"),
            format!(": c\ndata: a\n\ndata: {long}\r\n\r\ndata\ndata: x\n\n"),
            "data: \n\ndata:\n\ndata: 12345\n\n".to_string(),
            format!("\u{feff}data: {long}\n\n"),
            format!("data: {long}\ndata: {long}\n\ndata: end"),
        ];
        for input in &inputs {
            for max in [10, 4999, 5000, 5010, 20_000] {
                let one: Vec<&[u8]> = input.as_bytes().chunks(1).collect();
                let (want, _) = parse_chunks(&one, max);
                for size in [2, 6, 7, 333, 4096, input.len()] {
                    let chunks: Vec<&[u8]> = input.as_bytes().chunks(size).collect();
                    let (got, _) = parse_chunks(&chunks, max);
                    assert_eq!(got, want, "max {max}, chunks of {size}: {input:.40}");
                }
            }
        }
    }

    /// `input` read as a socket reader does: `step` bytes fed at a time, except that inside a
    /// data line the next bytes are appended to the event's data directly (at most `step` and
    /// the room offered); the items, and how many bytes went the direct way.
    fn read_extending(input: &[u8], max: usize, step: usize) -> (Vec<SseItem>, usize) {
        let mut p = SseParser::new(max);
        let (mut at, mut direct, mut out) = (0, 0, Vec::new());
        while at < input.len() {
            let end = (at + step).min(input.len());
            match p.data_to_extend() {
                Some((data, room)) => {
                    assert!(room > 0 && data.capacity() > data.len(), "room is offered");
                    let n = (end - at).min(room).min(data.capacity() - data.len());
                    let from = data.len();
                    data.extend_from_slice(&input[at..at + n]);
                    p.data_added(from);
                    at += n;
                    direct += n;
                }
                None => {
                    p.feed(&input[at..end]);
                    at = end;
                }
            }
            assert!(p.data.len() <= max.max(OVERSIZE_PREFIX), "the data stays bounded");
            while let Some(item) = p.next_item() {
                out.push(item);
            }
        }
        (out, direct)
    }

    /// A data line's bytes appended to the event's data by the reader give exactly the events
    /// that feeding them gives (data, types, ids, oversized events and their prefixes), wherever
    /// the reads end, and the data never outgrows the bound.
    #[test]
    fn data_appended_by_the_reader_matches_feeding_it() {
        let long = "z".repeat(5000);
        let inputs = [
            format!("data: {long}\n\n"),
            format!(": c\nevent: e\nid: 4\ndata:{long}\r\ndata: two\rdata:\n\ndata: x\n\n"),
            format!("data: {long}\r\n\r\ndata: {long}\ndata: {long}\n\ndata: end"),
            format!("data: a\r\r\ndata: {long}\r"),
            format!("\u{feff}data: {long}\n\nid: 9\n\ndata: {long}\n\n"),
        ];
        for input in &inputs {
            for max in [10, 4999, 5000, 5010, 20_000] {
                let one: Vec<&[u8]> = input.as_bytes().chunks(1).collect();
                let (want, _) = parse_chunks(&one, max);
                for step in [1, 2, 6, 7, 333, 4096, 70_000] {
                    let (got, direct) = read_extending(input.as_bytes(), max, step);
                    assert_eq!(got, want, "max {max}, reads of {step}: {input:.40}");
                    if max >= 5000 && step < 4000 {
                        assert!(direct >= 4000, "max {max}, reads of {step}: {direct} bytes direct");
                    }
                }
            }
        }
    }

    /// Every way to cut `input` in two and in three gives exactly the `want` events (data,
    /// type, id), the last id and the retry time.
    fn at_every_cut(input: &[u8], want: &[(&str, Option<&str>, Option<&str>)], last: Option<&str>, retry: Option<u64>) {
        let want: Vec<SseItem> = want
            .iter()
            .map(|(data, event, id)| {
                SseItem::Event(SseEvent {
                    event: event.map(str::to_string),
                    data: data.as_bytes().to_vec(),
                    id: id.map(str::to_string),
                })
            })
            .collect();
        for i in 0..=input.len() {
            for j in i..=input.len() {
                let chunks = [&input[..i], &input[i..j], &input[j..]];
                let (got, p) = parse_chunks(&chunks, 1024);
                let at = format!("cut at {i} and {j}: {:?}", String::from_utf8_lossy(input));
                assert_eq!(got, want, "{at}");
                assert_eq!(p.last_event_id(), last, "{at}");
                assert_eq!(p.retry(), retry.map(Duration::from_millis), "{at}");
            }
        }
    }

    #[test]
    fn line_ends_across_chunks() {
        // A CR ending one chunk and an LF starting the next are one line end; two CRs are two.
        at_every_cut(
            b"data: a\r\ndata: b\r\r\ndata: c\n\n",
            &[("a\nb", None, None), ("c", None, None)],
            None,
            None,
        );
        at_every_cut(b"data: a\rdata: b\n\r\n\r\n", &[("a\nb", None, None)], None, None);
        at_every_cut(
            b"data:x\r\r\r\rdata:y\n\n",
            &[("x", None, None), ("y", None, None)],
            None,
            None,
        );
    }

    #[test]
    fn field_names_and_the_space_across_chunks() {
        // `data:` with and without its space, and a second space kept, wherever the cuts fall.
        at_every_cut(
            b"data: one\ndata:two\ndata:  three\n\n",
            &[("one\ntwo\n three", None, None)],
            None,
            None,
        );
        // An empty value, a field without a colon, a name that only starts like `data`.
        at_every_cut(
            b"data:\ndata\ndatax: no\ndat: no\ndata: end\n\n",
            &[("\n\nend", None, None)],
            None,
            None,
        );
        // A comment that holds `data:` is still a comment.
        at_every_cut(
            b":data: no\n: data: no\ndata: yes\n\n",
            &[("yes", None, None)],
            None,
            None,
        );
        // Other fields around data lines (an `id` without a value empties the last id).
        at_every_cut(
            b"event: tick\nid: 5\nretry: 300\ndata: a\n\nid\ndata: b\n\n",
            &[("a", Some("tick"), Some("5")), ("b", None, Some(""))],
            Some(""),
            Some(300),
        );
        at_every_cut(
            b"id: 7\r\ndata: {\"x\":1}\r\n\r\n",
            &[("{\"x\":1}", None, Some("7"))],
            Some("7"),
            None,
        );
    }

    /// Wherever a chunk boundary cuts `data: ` (or `data:`), the value goes into the event's data
    /// without passing through the line buffer.
    #[test]
    fn a_cut_field_name_still_sends_the_value_straight_to_the_data() {
        for head in ["data: ", "data:"] {
            let text = format!("{head}{}\n\n", "v".repeat(5000));
            for cut in 0..=head.len() + 1 {
                let mut p = SseParser::new(1 << 20);
                p.feed(&text.as_bytes()[..cut]);
                p.feed(&text.as_bytes()[cut..text.len() - 2]);
                assert!(p.line.capacity() < 64, "{head:?} cut at {cut}: {}", p.line.capacity());
                p.feed(b"\n\n");
                let Some(SseItem::Event(e)) = p.next_item() else {
                    panic!()
                };
                assert_eq!(e.data, "v".repeat(5000).into_bytes(), "{head:?} cut at {cut}");
            }
        }
    }

    #[test]
    fn a_bom_then_a_data_line_across_chunks() {
        at_every_cut(b"\xEF\xBB\xBFdata: x\n\n", &[("x", None, None)], None, None);
        // A BOM after the start is line content: `\u{feff}data` is no data field.
        at_every_cut(
            b"data: x\n\n\xEF\xBB\xBFdata: y\n\ndata: z\n\n",
            &[("x", None, None), ("z", None, None)],
            None,
            None,
        );
    }

    #[test]
    fn data_is_passed_on_as_bytes() {
        // Not checked or decoded here: whoever reads the JSON checks it once.
        let (items, _) = parse_chunks(&[b"data: \xFF\xFEok\xC3", b"\xA9\n\n"], 1024);
        assert_eq!(
            items,
            [SseItem::Event(SseEvent {
                event: None,
                data: b"\xFF\xFEok\xC3\xA9".to_vec(),
                id: None
            })]
        );
    }

    /// An event's data that goes on over several chunks gets room for what the last such event
    /// needed when it starts: it then grows in place (one block from the first chunk to the
    /// event), never past the bound.
    #[test]
    fn data_over_many_chunks_grows_in_place_after_the_first_such_event() {
        let event = |n: usize| format!("data: {}\n\n", "q".repeat(n));
        for (max, n) in [(1 << 20, 40_000), (20_000, 15_000)] {
            let mut p = SseParser::new(max);
            // The first one: nothing known, the vector's own growth.
            for chunk in event(n).as_bytes().chunks(1000) {
                p.feed(chunk);
            }
            assert!(matches!(p.next_item(), Some(SseItem::Event(e)) if e.data.len() == n));
            // The next ones, a little longer or shorter: one block, at most the bound.
            for n in [n + 100, n - 5000, n - 5000] {
                let text = event(n);
                let mut chunks = text.as_bytes().chunks(1000);
                p.feed(chunks.next().unwrap());
                let (at, room) = (p.data.as_ptr(), p.data.capacity());
                assert!(room >= n.min(max) && room <= max, "room {room} for {n} (bound {max})");
                for chunk in chunks {
                    p.feed(chunk);
                    if p.data.capacity() > 0 {
                        assert_eq!(p.data.as_ptr(), at, "the data moved");
                    }
                }
                let Some(SseItem::Event(e)) = p.next_item() else {
                    panic!()
                };
                assert_eq!((e.data.len(), e.data.as_ptr()), (n, at));
            }
        }
        // Within one chunk nothing is reserved beyond the data.
        let mut p = SseParser::new(1 << 20);
        p.feed(event(30_000).as_bytes());
        let Some(SseItem::Event(e)) = p.next_item() else {
            panic!()
        };
        assert_eq!(e.data.capacity(), 30_000);
    }

    /// Parsers that follow each other (one per reply) share what an event over several chunks
    /// needed; a guess far above what an event needs is handed back when it is dispatched.
    #[test]
    fn replies_share_what_the_last_long_event_needed() {
        static HINT: SpanHint = SpanHint::new();
        let event = |n: usize| format!("data: {}\n\n", "w".repeat(n));
        let reply = |n: usize| {
            let mut p = SseParser::sharing(1 << 20, &HINT);
            let text = event(n);
            let mut chunks = text.as_bytes().chunks(4000);
            p.feed(chunks.next().unwrap());
            let (at, room) = (p.data.as_ptr(), p.data.capacity());
            for chunk in chunks {
                p.feed(chunk);
            }
            let Some(SseItem::Event(e)) = p.next_item() else {
                panic!()
            };
            assert_eq!(e.data.len(), n);
            (at == e.data.as_ptr(), room, e.data.capacity())
        };
        // Nothing known yet: room for the first chunk only, the vector grows as the rest comes.
        let (_, room, _) = reply(100_000);
        assert!(room < 10_000, "{room}");
        // Known from the last reply: room at once, no move.
        let (stayed, room, _) = reply(100_050);
        assert!(stayed && room >= 100_050, "{room}");
        // Much less than that: the room is handed back at the end.
        let (stayed, room, kept) = reply(8_000);
        assert!(stayed && room > 100_000 && kept < 8_000 + 64 * 1024, "{room} {kept}");
        // And the guess follows: a short event now gets short room.
        let (_, room, _) = reply(8_000);
        assert!(room < 10_000, "{room}");
    }
}
