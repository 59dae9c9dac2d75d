//! The library's own HTTP/1.1 exchange on a direct connection (`net::direct`): a request
//! written as one head of bytes and its body in one vectored write (over TLS, one rustls
//! write), the response's head parsed by `httparse`, its body framed by `Content-Length`
//! (read straight into one vector of that length when wanted whole), by chunks (`httparse`'s
//! chunk-size parser; extensions and trailers skipped) or by the connection's end.
//!
//! Why: hyper's client connection builds a `Request` and a `HeaderMap` (hashing every header
//! name), runs its dispatcher on every poll (~3k instructions) and hands the body over in
//! chunks that are then copied into one buffer; none of it does anything for one request at a
//! time to one endpoint. Everything here is polled by the caller's task.
//!
//! Bounded and strict: a head longer than [`HEAD_MAX`] or with more than [`FIELDS_MAX`]
//! fields, a bad length, a bad chunk line or a connection that ends inside a framed body is an
//! error (never a panic, never a wait for bytes that cannot come). 1xx answers are skipped (a
//! 101 is an error: nothing here switches protocols).

use super::stream::Stream;
use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Longest response head (status line and fields) read.
pub(crate) const HEAD_MAX: usize = 64 * 1024;
/// Most fields in a response head.
pub(crate) const FIELDS_MAX: usize = 100;
/// Longest chunk-size line (with its extensions).
const CHUNK_LINE_MAX: usize = 4096;
/// Longest trailer section of a chunked body.
const TRAILERS_MAX: usize = 16 * 1024;
/// What a connection's first read asks the socket for.
const READ_SIZE: usize = 16 * 1024;
/// The most one read asks for: a read that fills what it asked for doubles the next one's
/// size up to this (as hyper's adaptive reads do), so a large body arrives in few pieces and
/// a reader assembling them (an event stream's long line) grows its buffer seldom.
const READ_MAX: usize = 256 * 1024;

/// One HTTP/1.1 connection: its stream and what was read from it and not yet used.
pub(crate) struct Conn {
    io: Stream,
    buf: Vec<u8>,
    /// Start of the unread bytes in `buf`.
    pos: usize,
    /// What the next read asks for.
    read_size: usize,
}

/// Why a request was not written: `sent_nothing` when no byte of it left.
pub(crate) struct WriteFailed {
    pub sent_nothing: bool,
    pub error: io::Error,
}

impl Conn {
    pub fn new(io: Stream) -> Conn {
        Conn {
            io,
            buf: Vec::with_capacity(READ_SIZE),
            pos: 0,
            read_size: READ_SIZE,
        }
    }

    /// Writes `head` then `body` (one vectored write where the stream takes it whole), then
    /// flushes.
    pub async fn write(&mut self, head: &[u8], body: &[u8]) -> Result<(), WriteFailed> {
        let total = head.len() + body.len();
        let mut done = 0;
        while done < total {
            let slices = if done < head.len() {
                [IoSlice::new(&head[done..]), IoSlice::new(body)]
            } else {
                [IoSlice::new(&body[done - head.len()..]), IoSlice::new(&[])]
            };
            let wrote = poll_fn(|cx| Pin::new(&mut self.io).poll_write_vectored(cx, &slices)).await;
            match wrote {
                Ok(0) => {
                    return Err(WriteFailed {
                        sent_nothing: done == 0,
                        error: io::ErrorKind::WriteZero.into(),
                    })
                }
                Ok(n) => done += n,
                Err(error) => {
                    return Err(WriteFailed {
                        sent_nothing: done == 0,
                        error,
                    })
                }
            }
        }
        poll_fn(|cx| Pin::new(&mut self.io).poll_flush(cx))
            .await
            .map_err(|error| WriteFailed {
                sent_nothing: false,
                error,
            })
    }

    /// Reads what the stream has into the buffer (compacted first); `Ok(0)` at its end. Only a
    /// body's reads (`adapt`) make the next read larger: a head's first read usually takes in
    /// the start of its body too, and a body with a length is read into its own vector.
    fn poll_fill(&mut self, cx: &mut Context<'_>, adapt: bool) -> Poll<io::Result<usize>> {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos > 0 && self.buf.capacity() - self.buf.len() < self.read_size / 2 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        if self.buf.capacity() - self.buf.len() < self.read_size / 2 {
            self.buf.reserve(self.read_size);
        }
        let mut spare = ReadBuf::uninit(self.buf.spare_capacity_mut());
        ready!(Pin::new(&mut self.io).poll_read(cx, &mut spare))?;
        let n = spare.filled().len();
        if adapt && n == spare.capacity() {
            self.read_size = (self.read_size * 2).min(READ_MAX);
        }
        // SAFETY: `poll_read` initialised (filled) exactly `n` bytes of the spare capacity.
        unsafe { self.buf.set_len(self.buf.len() + n) };
        Poll::Ready(Ok(n))
    }

    async fn fill(&mut self) -> io::Result<usize> {
        poll_fn(|cx| self.poll_fill(cx, false)).await
    }

    /// Whether an idle connection can take a request: nothing unread, not ended by the server.
    /// Registers `cx`'s task for the socket, as a read that found nothing does.
    pub fn poll_alive(&mut self, cx: &mut Context<'_>) -> bool {
        self.pos == self.buf.len() && self.poll_fill(cx, false).is_pending()
    }

    /// Reads the response's head (1xx answers skipped).
    pub async fn read_head(&mut self) -> Result<Head, String> {
        let mut got_any = false;
        loop {
            if self.pos < self.buf.len() {
                got_any = true;
                let unread = &self.buf[self.pos..];
                let mut fields = [httparse::EMPTY_HEADER; FIELDS_MAX];
                let mut response = httparse::Response::new(&mut fields);
                match response.parse(unread) {
                    Ok(httparse::Status::Complete(len)) => {
                        let code = response.code.unwrap_or(0);
                        if code == 101 {
                            return Err("the server answered HTTP 101 (switching protocols) to a request that asked for no switch".into());
                        }
                        if (100..200).contains(&code) {
                            self.pos += len;
                            continue;
                        }
                        let head = Head::new(code, response.version.unwrap_or(1), response.headers, &unread[..len])?;
                        self.pos += len;
                        return Ok(head);
                    }
                    Ok(httparse::Status::Partial) if unread.len() >= HEAD_MAX => {
                        return Err(format!("the response head is longer than {HEAD_MAX} bytes"))
                    }
                    Ok(httparse::Status::Partial) => {}
                    Err(httparse::Error::TooManyHeaders) => {
                        return Err(format!("the response head has more than {FIELDS_MAX} fields"))
                    }
                    Err(e) => return Err(format!("invalid HTTP response: {e}")),
                }
            }
            match self.fill().await {
                Ok(0) if got_any => return Err("the connection closed in the middle of the response head".into()),
                Ok(0) => return Err("connection closed before message completed".into()),
                Ok(_) => {}
                Err(e) => return Err(format!("reading the response failed: {e}")),
            }
        }
    }
}

/// How a response's body ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    Empty,
    Length(u64),
    Chunked,
    /// At the connection's end.
    Close,
}

/// A response's head: status, framing, and its fields kept (for the few the transport reads).
pub(crate) struct Head {
    pub status: u16,
    pub framing: Framing,
    /// The connection ends after this response (`Connection: close`, HTTP/1.0, or a body
    /// that ends with the connection).
    pub close: bool,
    /// The head's bytes, and where each field's name and value sit in them.
    raw: Vec<u8>,
    fields: Vec<[u32; 4]>,
}

fn has_token(value: &[u8], token: &str) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
}

impl Head {
    fn new(status: u16, minor: u8, parsed: &[httparse::Header<'_>], raw: &[u8]) -> Result<Head, String> {
        let base = raw.as_ptr() as usize;
        let at = |s: &[u8]| (s.as_ptr() as usize - base) as u32;
        let mut fields = Vec::with_capacity(parsed.len());
        let mut length: Option<u64> = None;
        let mut encodings = false;
        let mut chunked = false;
        let mut close = minor == 0;
        for field in parsed {
            let (name, value) = (field.name.as_bytes(), field.value);
            fields.push([at(name), name.len() as u32, at(value), value.len() as u32]);
            if name.eq_ignore_ascii_case(b"content-length") {
                let parsed = std::str::from_utf8(value)
                    .ok()
                    .map(str::trim)
                    .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|v| v.parse::<u64>().ok())
                    .ok_or_else(|| "invalid Content-Length in the response".to_string())?;
                if length.is_some_and(|l| l != parsed) {
                    return Err("the response has two different Content-Length values".into());
                }
                length = Some(parsed);
            } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
                encodings = true;
                // The last coding decides: chunked, or the body runs to the connection's end.
                chunked = value
                    .rsplit(|&b| b == b',')
                    .next()
                    .is_some_and(|t| t.trim_ascii().eq_ignore_ascii_case(b"chunked"));
            } else if name.eq_ignore_ascii_case(b"connection") && has_token(value, "close") {
                close = true;
            }
        }
        let framing = if status == 204 || status == 304 {
            Framing::Empty
        } else if encodings {
            if length.is_some() {
                // Both: the coding wins, and the connection is not trusted with another request.
                close = true;
            }
            match chunked {
                true => Framing::Chunked,
                false => Framing::Close,
            }
        } else {
            match length {
                Some(0) => Framing::Empty,
                Some(n) => Framing::Length(n),
                None => Framing::Close,
            }
        };
        if framing == Framing::Close {
            close = true;
        }
        Ok(Head {
            status,
            framing,
            close,
            raw: raw.to_vec(),
            fields,
        })
    }

    /// Each field as (name, value).
    pub fn fields(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.fields.iter().map(|&[n, nl, v, vl]| {
            (
                &self.raw[n as usize..(n + nl) as usize],
                &self.raw[v as usize..(v + vl) as usize],
            )
        })
    }

    /// The values of the fields named `name` (any case), as text (others skipped).
    pub fn values(&self, name: &str) -> Vec<&str> {
        self.fields()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
            .filter_map(|(_, v)| std::str::from_utf8(v).ok())
            .collect()
    }

    /// The first field named `name` (any case), when its value is text.
    pub fn value(&self, name: &str) -> Option<&str> {
        let (_, value) = self.fields().find(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))?;
        std::str::from_utf8(value).ok()
    }

}

/// Where a body's reading stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Length(u64),
    ChunkSize,
    ChunkData(u64),
    ChunkEnd,
    Trailers,
    Close,
    Done,
}

/// A response body being read from its connection.
pub(crate) struct Body {
    pub conn: Conn,
    state: State,
    close: bool,
}

impl Body {
    pub fn new(conn: Conn, head: &Head) -> Body {
        let state = match head.framing {
            Framing::Empty => State::Done,
            Framing::Length(n) => State::Length(n),
            Framing::Chunked => State::ChunkSize,
            Framing::Close => State::Close,
        };
        Body {
            conn,
            state,
            close: head.close,
        }
    }

    /// Read to its end.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Read to its end, and the connection may take another request.
    pub fn reusable(&self) -> bool {
        self.is_done() && !self.close
    }

    /// The next piece of the body, as a range of the connection's buffer; `None` at its end.
    fn poll_piece(&mut self, cx: &mut Context<'_>) -> Poll<Result<Option<(usize, usize)>, String>> {
        loop {
            let conn = &mut self.conn;
            let (pos, avail) = (conn.pos, conn.buf.len() - conn.pos);
            match self.state {
                State::Done => return Poll::Ready(Ok(None)),
                State::Length(0) => self.state = State::Done,
                State::Length(n) | State::ChunkData(n) if avail > 0 => {
                    let take = avail.min(usize::try_from(n).unwrap_or(usize::MAX));
                    conn.pos += take;
                    let left = n - take as u64;
                    self.state = match self.state {
                        State::Length(_) => State::Length(left),
                        _ if left == 0 => State::ChunkEnd,
                        _ => State::ChunkData(left),
                    };
                    return Poll::Ready(Ok(Some((pos, pos + take))));
                }
                State::Close if avail > 0 => {
                    conn.pos += avail;
                    return Poll::Ready(Ok(Some((pos, pos + avail))));
                }
                State::ChunkSize if avail > 0 => match httparse::parse_chunk_size(&conn.buf[pos..]) {
                    Ok(httparse::Status::Complete((used, size))) => {
                        conn.pos += used;
                        self.state = if size == 0 {
                            State::Trailers
                        } else {
                            State::ChunkData(size)
                        };
                        continue;
                    }
                    Ok(httparse::Status::Partial) if avail > CHUNK_LINE_MAX => {
                        return Poll::Ready(Err("a chunk-size line of the response is too long".into()))
                    }
                    Ok(httparse::Status::Partial) => {}
                    Err(_) => return Poll::Ready(Err("invalid chunk size in the response".into())),
                },
                State::ChunkEnd if avail > 0 && (avail >= 2 || conn.buf[pos] != b'\r') => {
                    if !conn.buf[pos..].starts_with(b"\r\n") {
                        return Poll::Ready(Err("a chunk of the response does not end where its size says".into()));
                    }
                    conn.pos += 2;
                    self.state = State::ChunkSize;
                    continue;
                }
                State::Trailers if avail >= 2 => {
                    let unread = &conn.buf[pos..];
                    let end = if unread.starts_with(b"\r\n") {
                        Some(2)
                    } else {
                        memchr::memmem::find(unread, b"\r\n\r\n").map(|at| at + 4)
                    };
                    match end {
                        Some(end) => {
                            conn.pos += end;
                            self.state = State::Done;
                            continue;
                        }
                        None if avail > TRAILERS_MAX => {
                            return Poll::Ready(Err("the response's trailer section is too long".into()))
                        }
                        None => {}
                    }
                }
                _ => {}
            }
            if self.state == State::Done {
                continue;
            }
            // More bytes are needed.
            match ready!(self.conn.poll_fill(cx, true)) {
                Ok(0) if self.state == State::Close => self.state = State::Done,
                Ok(0) => {
                    self.state = State::Done;
                    self.close = true;
                    return Poll::Ready(Err("the connection closed before the response body ended".into()));
                }
                Ok(_) => {}
                Err(e) => {
                    self.state = State::Done;
                    self.close = true;
                    return Poll::Ready(Err(format!("reading the response body failed: {e}")));
                }
            }
        }
    }

    /// The next piece of the body, as a range for [`Body::bytes`]; `None` at its end.
    pub async fn piece(&mut self) -> Result<Option<(usize, usize)>, String> {
        poll_fn(|cx| self.poll_piece(cx)).await
    }

    /// The bytes of a piece [`Body::piece`] just gave.
    pub fn bytes(&self, (start, end): (usize, usize)) -> &[u8] {
        &self.conn.buf[start..end]
    }

    /// The next piece of the body; `None` at its end.
    pub async fn chunk(&mut self) -> Result<Option<&[u8]>, String> {
        let range = self.piece().await?;
        Ok(range.map(|range| self.bytes(range)))
    }

    /// The whole body, up to `max` bytes; `Ok(Err(len))` when it is longer (read no further).
    /// A body with a length is read straight into one vector of that length.
    pub async fn read_all(&mut self, max: usize) -> Result<Result<Vec<u8>, usize>, String> {
        let State::Length(len) = self.state else {
            let mut body = Vec::new();
            while let Some(piece) = self.chunk().await? {
                if body.len() + piece.len() > max {
                    return Ok(Err(body.len() + piece.len()));
                }
                body.extend_from_slice(piece);
            }
            return Ok(Ok(body));
        };
        let len = match usize::try_from(len) {
            Ok(len) if len <= max => len,
            _ => return Ok(Err(usize::try_from(len).unwrap_or(usize::MAX))),
        };
        let mut body = Vec::with_capacity(len);
        let conn = &mut self.conn;
        let have = (conn.buf.len() - conn.pos).min(len);
        body.extend_from_slice(&conn.buf[conn.pos..conn.pos + have]);
        conn.pos += have;
        while body.len() < len {
            let got = poll_fn(|cx| {
                let want = len - body.len();
                let mut spare = ReadBuf::uninit(&mut body.spare_capacity_mut()[..want]);
                ready!(Pin::new(&mut conn.io).poll_read(cx, &mut spare))?;
                let n = spare.filled().len();
                // SAFETY: `poll_read` initialised (filled) exactly `n` bytes of the spare capacity.
                unsafe { body.set_len(body.len() + n) };
                Poll::Ready(Ok::<usize, io::Error>(n))
            })
            .await;
            match got {
                Ok(0) => {
                    self.state = State::Done;
                    self.close = true;
                    return Err(format!(
                        "the connection closed {} bytes before the end of the response body",
                        len - body.len()
                    ));
                }
                Ok(_) => {}
                Err(e) => {
                    self.state = State::Done;
                    self.close = true;
                    return Err(format!("reading the response body failed: {e}"));
                }
            }
        }
        self.state = State::Done;
        Ok(Ok(body))
    }
}
