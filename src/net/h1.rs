//! The library's own HTTP/1.1 exchange on a direct connection (`net::direct`): a request
//! written as one head of bytes and its body in one vectored write (over TLS, one rustls
//! write), the response's head parsed by `httparse`, its body framed by `Content-Length`, by
//! chunks (`httparse`'s chunk-size parser; extensions and trailers skipped) or by the
//! connection's end. A body is read by pieces of the connection's buffer, or appended to a
//! caller's vector: then the bytes not yet buffered are read from the socket straight into it
//! (a body with a length wanted whole, an event's long data line), never copied.
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
/// The most one read into a connection's buffer asks the socket for. What it takes beyond a
/// response's head is copied out of the buffer; the rest of a body with a length, or of an
/// event's data line, is then read straight into the vector that keeps it
/// ([`Body::append`]), so a large answer is copied here at most this much.
const READ_SIZE: usize = 16 * 1024;

/// One HTTP/1.1 connection: its stream and what was read from it and not yet used.
pub(crate) struct Conn {
    io: Stream,
    buf: Vec<u8>,
    /// Start of the unread bytes in `buf`.
    pos: usize,
    /// The next request's head, written by the caller ([`Conn::write`] sends it): its buffer
    /// serves every request on the connection.
    pub head: Vec<u8>,
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
            head: Vec::new(),
        }
    }

    /// Writes [`Conn::head`] then `body` (one vectored write where the stream takes it whole),
    /// then flushes.
    pub async fn write(&mut self, body: &[u8]) -> Result<(), WriteFailed> {
        let head = &self.head[..];
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

    /// Reads what the stream has into the buffer (compacted first), at most [`READ_SIZE`];
    /// `Ok(0)` at its end.
    fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos > 0 && self.buf.capacity() - self.buf.len() < READ_SIZE / 2 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        if self.buf.capacity() - self.buf.len() < READ_SIZE / 2 {
            self.buf.reserve(READ_SIZE);
        }
        let want = (self.buf.capacity() - self.buf.len()).min(READ_SIZE);
        read_into(&mut self.io, cx, &mut self.buf, want)
    }

    async fn fill(&mut self) -> io::Result<usize> {
        poll_fn(|cx| self.poll_fill(cx)).await
    }

    /// Whether an idle connection can take a request: nothing unread, not ended by the server.
    /// Registers `cx`'s task for the socket, as a read that found nothing does. `look`: ask
    /// the socket itself first, not only the reactor's last report (`Stream::readable_now`).
    pub fn poll_alive(&mut self, cx: &mut Context<'_>, look: bool) -> bool {
        self.pos == self.buf.len() && !(look && self.io.readable_now()) && self.poll_fill(cx).is_pending()
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

/// Reads from `io` into `dst`'s spare capacity, at most `want` bytes of it (there must be that
/// much); the bytes read are added to `dst`.
fn read_into(io: &mut Stream, cx: &mut Context<'_>, dst: &mut Vec<u8>, want: usize) -> Poll<io::Result<usize>> {
    let mut spare = ReadBuf::uninit(&mut dst.spare_capacity_mut()[..want]);
    ready!(Pin::new(io).poll_read(cx, &mut spare))?;
    let n = spare.filled().len();
    // SAFETY: `poll_read` initialised (filled) exactly `n` bytes of the spare capacity.
    unsafe { dst.set_len(dst.len() + n) };
    Poll::Ready(Ok(n))
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

    /// Whether the body is read to its end, a body with a length whose bytes were all taken
    /// included (otherwise seen only by the next read).
    pub fn at_end(&mut self) -> bool {
        if self.state == State::Length(0) {
            self.state = State::Done;
        }
        self.is_done()
    }

    /// Read to its end, and the connection may take another request.
    pub fn reusable(&self) -> bool {
        self.is_done() && !self.close
    }

    /// How many bytes of data may come next without a framing line between (`u64::MAX` for a
    /// body that runs to the connection's end): a body with a length, or inside a chunk.
    fn data_ahead(&self) -> u64 {
        match self.state {
            State::Length(n) | State::ChunkData(n) => n,
            State::Close => u64::MAX,
            _ => 0,
        }
    }

    /// `n` bytes of data (at most [`Body::data_ahead`]) were taken.
    fn took(&mut self, n: usize) {
        let n = n as u64;
        self.state = match self.state {
            State::Length(left) => State::Length(left - n),
            State::ChunkData(left) if left == n => State::ChunkEnd,
            State::ChunkData(left) => State::ChunkData(left - n),
            other => other,
        };
    }

    /// What a read of the body's bytes from the connection came to: `Ok(0)` at the end of a body
    /// that runs to the connection's end; an end anywhere else, or a failed read, is an error
    /// (and the connection is not reused).
    fn read_result(&mut self, read: io::Result<usize>) -> Result<usize, String> {
        match read {
            Ok(0) if self.state == State::Close => {
                self.state = State::Done;
                Ok(0)
            }
            Ok(0) => {
                let missing = match self.state {
                    State::Length(left) => format!(" {left} bytes"),
                    _ => String::new(),
                };
                self.state = State::Done;
                self.close = true;
                Err(format!(
                    "the connection closed{missing} before the end of the response body"
                ))
            }
            Ok(n) => Ok(n),
            Err(e) => {
                self.state = State::Done;
                self.close = true;
                Err(format!("reading the response body failed: {e}"))
            }
        }
    }

    /// The next piece of the body (at most `max` bytes, `max` > 0), as a range of the
    /// connection's buffer; `None` at its end.
    fn poll_piece(&mut self, cx: &mut Context<'_>, max: usize) -> Poll<Result<Option<(usize, usize)>, String>> {
        loop {
            let conn = &mut self.conn;
            let (pos, avail) = (conn.pos, conn.buf.len() - conn.pos);
            match self.state {
                State::Done => return Poll::Ready(Ok(None)),
                State::Length(0) => self.state = State::Done,
                State::Length(_) | State::ChunkData(_) | State::Close if avail > 0 => {
                    let take = avail
                        .min(max)
                        .min(usize::try_from(self.data_ahead()).unwrap_or(usize::MAX));
                    self.conn.pos += take;
                    self.took(take);
                    return Poll::Ready(Ok(Some((pos, pos + take))));
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
            let read = ready!(self.conn.poll_fill(cx));
            if let Err(e) = self.read_result(read) {
                return Poll::Ready(Err(e));
            }
        }
    }

    /// The next piece of the body, as a range for [`Body::bytes`]; `None` at its end.
    pub async fn piece(&mut self) -> Result<Option<(usize, usize)>, String> {
        poll_fn(|cx| self.poll_piece(cx, usize::MAX)).await
    }

    /// Appends the body's next bytes to `dst`, at most `max` (> 0) of them; `Ok(0)` at its end.
    /// What the connection has buffered is copied; when it has nothing buffered and data comes
    /// next (not a chunk's framing), the socket is read straight into `dst`'s spare capacity,
    /// which the caller provides: those bytes are never copied.
    pub async fn append(&mut self, dst: &mut Vec<u8>, max: usize) -> Result<usize, String> {
        poll_fn(|cx| {
            let ahead = usize::try_from(self.data_ahead()).unwrap_or(usize::MAX);
            let want = max.min(ahead).min(dst.capacity() - dst.len());
            if want > 0 && self.conn.pos == self.conn.buf.len() {
                let read = ready!(read_into(&mut self.conn.io, cx, dst, want));
                let n = self.read_result(read)?;
                self.took(n);
                return Poll::Ready(Ok(n));
            }
            Poll::Ready(Ok(match ready!(self.poll_piece(cx, max))? {
                Some(range) => {
                    dst.extend_from_slice(self.bytes(range));
                    range.1 - range.0
                }
                None => 0,
            }))
        })
        .await
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
        while body.len() < len {
            let left = len - body.len();
            self.append(&mut body, left).await?;
        }
        self.state = State::Done;
        Ok(Ok(body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::driving::ReadBeside;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    /// How a test server ends after its pieces.
    #[derive(Clone, Copy, PartialEq)]
    enum Then {
        Close,
        Stay,
    }

    /// A connection to a server on 127.0.0.1 that reads a request head, then writes `pieces`
    /// one at a time (a pause between them, so each arrives as a read of its own), then closes
    /// or stays open. The request is written.
    async fn served(pieces: Vec<Vec<u8>>, then: Then) -> Conn {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 1024];
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                match socket.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            for piece in pieces {
                if socket.write_all(&piece).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(15)).await;
            }
            if then == Then::Stay {
                tokio::time::sleep(Duration::from_secs(10)).await;
            }
        });
        let tcp = TcpStream::connect(addr).await.unwrap();
        let mut conn = Conn::new(Stream::Plain(ReadBeside(tcp)));
        conn.head = b"GET / HTTP/1.1\r\nhost: t\r\n\r\n".to_vec();
        assert!(conn.write(b"").await.is_ok());
        conn
    }

    fn pieces(parts: &[&str]) -> Vec<Vec<u8>> {
        parts.iter().map(|p| p.as_bytes().to_vec()).collect()
    }

    /// The head, the body read piece by piece (or its error), and whether the connection could
    /// take another request; bounded in time, so a wait for bytes that cannot come fails.
    async fn exchange(parts: &[&str], then: Then) -> Result<(Head, Result<Vec<u8>, String>, bool), String> {
        let conn = served(pieces(parts), then).await;
        tokio::time::timeout(Duration::from_secs(5), async move {
            let mut conn = conn;
            let head = conn.read_head().await?;
            let mut body = Body::new(conn, &head);
            let mut got = Vec::new();
            let read = loop {
                match body.chunk().await {
                    Ok(Some(piece)) => got.extend_from_slice(piece),
                    Ok(None) => break Ok(got),
                    Err(e) => break Err(e),
                }
            };
            let reusable = body.reusable() && poll_fn(|cx| Poll::Ready(body.conn.poll_alive(cx, false))).await;
            Ok((head, read, reusable))
        })
        .await
        .expect("the exchange ends without waiting for bytes that cannot come")
    }

    /// As [`exchange`], the body read whole (`read_all`, bounded by `max`).
    async fn exchange_whole(parts: &[&str], then: Then, max: usize) -> Result<Result<Vec<u8>, usize>, String> {
        let conn = served(pieces(parts), then).await;
        tokio::time::timeout(Duration::from_secs(5), async move {
            let mut conn = conn;
            let head = conn.read_head().await?;
            Body::new(conn, &head).read_all(max).await
        })
        .await
        .expect("the exchange ends without waiting for bytes that cannot come")
    }

    #[tokio::test]
    async fn a_chunked_body_with_extensions_and_trailers_split_across_reads() {
        let (head, body, reusable) = exchange(
            &[
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Enc",
                "oding: chunked\r\n\r\n5;name=\"v\"\r\nhel",
                "lo\r\n6\r\n world\r",
                "\n0;end\r\nX-Trailer: 1\r\n",
                "\r\n",
            ],
            Then::Stay,
        )
        .await
        .unwrap();
        assert_eq!(head.status, 200);
        assert_eq!(head.framing, Framing::Chunked);
        assert_eq!(head.value("content-type"), Some("text/event-stream"));
        assert_eq!(body.unwrap(), b"hello world");
        assert!(reusable, "a complete chunked body leaves the connection reusable");
        // Whole, too.
        let whole = exchange_whole(
            &["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"],
            Then::Stay,
            3,
        )
        .await;
        assert_eq!(whole.unwrap().unwrap(), b"abc");
    }

    #[tokio::test]
    async fn a_head_split_across_reads_and_informational_answers_skipped() {
        let (head, body, reusable) = exchange(
            &[
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 2",
                "00 OK\r\nMcp-Session-Id: s1\r\nMcp-Session-Id: s2\r\nContent-Len",
                "gth: 2\r\n\r\nok",
            ],
            Then::Stay,
        )
        .await
        .unwrap();
        assert_eq!(head.status, 200);
        assert_eq!(head.values("mcp-session-id"), ["s1", "s2"]);
        assert_eq!(body.unwrap(), b"ok");
        assert!(reusable);
    }

    #[tokio::test]
    async fn a_body_longer_than_its_length_is_cut_there_and_the_connection_not_reused() {
        let (_, body, reusable) = exchange(&["HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloEXTRA"], Then::Stay)
            .await
            .unwrap();
        assert_eq!(body.unwrap(), b"hello");
        assert!(!reusable, "bytes beyond the body make the connection unusable");
        let whole = exchange_whole(
            &["HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloEXTRA"],
            Then::Stay,
            99,
        )
        .await;
        assert_eq!(whole.unwrap().unwrap(), b"hello");
    }

    #[tokio::test]
    async fn a_body_shorter_than_its_length_is_an_error_not_a_wait() {
        let (_, body, reusable) = exchange(&["HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello"], Then::Close)
            .await
            .unwrap();
        assert!(body
            .unwrap_err()
            .contains("closed 5 bytes before the end of the response body"));
        assert!(!reusable);
        let whole = exchange_whole(
            &["HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhel", "lo"],
            Then::Close,
            99,
        )
        .await;
        assert!(whole.unwrap_err().contains("5 bytes before the end"));
    }

    #[tokio::test]
    async fn a_server_closing_in_a_chunked_body_is_an_error() {
        for cut in [
            "5\r\nhel",
            "5\r\nhello",
            "5\r\nhello\r\n",
            "5\r\nhello\r\n0\r\nX-T: 1\r\n",
        ] {
            let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
            let (_, body, reusable) = exchange(&[head, cut], Then::Close).await.unwrap();
            assert!(body.unwrap_err().contains("closed"), "cut after {cut:?}");
            assert!(!reusable);
        }
    }

    #[tokio::test]
    async fn connection_close_and_http_1_0_are_not_reused() {
        for reply in [
            "HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 2\r\n\r\nok",
            "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
        ] {
            let (head, body, reusable) = exchange(&[reply], Then::Stay).await.unwrap();
            assert!(head.close);
            assert_eq!(body.unwrap(), b"ok");
            assert!(!reusable, "{reply:?}");
        }
    }

    #[tokio::test]
    async fn a_body_without_length_runs_to_the_close() {
        let (head, body, reusable) = exchange(&["HTTP/1.1 200 OK\r\n\r\nall ", "of it"], Then::Close)
            .await
            .unwrap();
        assert_eq!(head.framing, Framing::Close);
        assert_eq!(body.unwrap(), b"all of it");
        assert!(!reusable);
        // A coding other than chunked last: to the close as well.
        let (head, body, _) = exchange(
            &["HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, identity\r\nContent-Length: 3\r\n\r\nxyz"],
            Then::Close,
        )
        .await
        .unwrap();
        assert_eq!((head.framing, head.close), (Framing::Close, true));
        assert_eq!(body.unwrap(), b"xyz");
    }

    #[tokio::test]
    async fn no_content_has_no_body_and_keeps_the_connection() {
        let (head, body, reusable) = exchange(&["HTTP/1.1 204 No Content\r\n\r\n"], Then::Stay)
            .await
            .unwrap();
        assert_eq!(head.framing, Framing::Empty);
        assert_eq!(body.unwrap(), b"");
        assert!(reusable);
    }

    #[tokio::test]
    async fn an_oversized_head_is_refused_without_waiting_for_its_end() {
        let long = format!("HTTP/1.1 200 OK\r\nX-Long: {}", "a".repeat(HEAD_MAX + 10));
        let err = exchange(&[&long], Then::Stay).await.err().unwrap();
        assert!(err.contains("longer than"), "{err}");
        let many: String = (0..FIELDS_MAX + 1).map(|k| format!("X-{k}: v\r\n")).collect();
        let err = exchange(&[&format!("HTTP/1.1 200 OK\r\n{many}\r\n")], Then::Stay)
            .await
            .err()
            .unwrap();
        assert!(err.contains("more than"), "{err}");
    }

    #[tokio::test]
    async fn malformed_heads_and_framing_are_errors() {
        for (reply, says) in [
            ("HTTP/1.1 2x0 OK\r\n\r\n", "invalid HTTP response"),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n",
                "invalid Content-Length",
            ),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\n",
                "invalid Content-Length",
            ),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                "two different",
            ),
            ("HTTP/1.1 101 Switching Protocols\r\n\r\n", "101"),
            ("SSH-2.0-OpenSSH\r\n\r\n", "invalid HTTP response"),
        ] {
            let err = exchange(&[reply], Then::Stay).await.err().unwrap();
            assert!(err.contains(says), "{reply:?}: {err}");
        }
        for body in ["zz\r\n", "3\r\nabcX\r\n0\r\n\r\n", "fffffffffffffffff\r\n"] {
            let reply = format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{body}");
            let (_, read, reusable) = exchange(&[&reply], Then::Stay).await.unwrap();
            assert!(read.is_err(), "{body:?}");
            assert!(!reusable);
        }
    }

    #[tokio::test]
    async fn no_answer_at_all_and_a_cut_head_say_so() {
        let err = exchange(&[], Then::Close).await.err().unwrap();
        assert_eq!(err, "connection closed before message completed");
        let err = exchange(&["HTTP/1.1 200 OK\r\nContent-"], Then::Close)
            .await
            .err()
            .unwrap();
        assert!(err.contains("middle of the response head"), "{err}");
    }

    /// A body appended to a vector with spare capacity, `max` bytes at most each time, and
    /// whether the connection could take another request; the most one append gave.
    async fn appended(pieces: Vec<Vec<u8>>, then: Then, max: usize) -> (Result<Vec<u8>, String>, bool, usize) {
        let conn = served(pieces, then).await;
        tokio::time::timeout(Duration::from_secs(5), async move {
            let mut conn = conn;
            let head = conn.read_head().await.unwrap();
            let mut body = Body::new(conn, &head);
            let (mut got, mut most) = (Vec::with_capacity(64 * 1024), 0);
            let read = loop {
                match body.append(&mut got, max).await {
                    Ok(0) => break Ok(got),
                    Ok(n) => most = most.max(n),
                    Err(e) => break Err(e),
                }
                assert!(
                    got.capacity() == 64 * 1024,
                    "the caller's vector is filled, never grown"
                );
            };
            let reusable = body.reusable() && poll_fn(|cx| Poll::Ready(body.conn.poll_alive(cx, false))).await;
            (read, reusable, most)
        })
        .await
        .expect("the body ends without waiting for bytes that cannot come")
    }

    /// Appended to a caller's vector, a body is itself byte for byte whatever its framing and
    /// wherever its pieces and the caller's limits fall; what the connection has not buffered
    /// when data comes next is read into the vector at once, past what one read into the
    /// connection's buffer takes.
    #[tokio::test]
    async fn a_body_appended_to_a_vector_is_read_into_it_whatever_its_framing() {
        let text: Vec<u8> = (0..50_000u32).map(|k| b'a' + (k % 26) as u8).collect();
        let mut chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
        let mut from = 0;
        for size in [3, 40_000, 9_997] {
            chunked.extend_from_slice(format!("{size:x};ext=1\r\n").as_bytes());
            chunked.extend_from_slice(&text[from..from + size]);
            chunked.extend_from_slice(b"\r\n");
            from += size;
        }
        chunked.extend_from_slice(b"0\r\n\r\n");
        let length = [
            format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", text.len()).into_bytes(),
            text.clone(),
        ]
        .concat();
        let close = [b"HTTP/1.1 200 OK\r\n\r\n".to_vec(), text.clone()].concat();
        // Cut where the large chunk's data starts (so it arrives when nothing is buffered), and
        // in the middle of framing lines and data.
        let at_data = chunked.windows(9).position(|w| w == b";ext=1\r\nd").unwrap() + 8;
        let chunked_cuts = vec![40, at_data, at_data + 30_000, chunked.len() - 9_000, chunked.len() - 3];
        for (reply, cuts, then, reused) in [
            (&chunked, chunked_cuts, Then::Stay, true),
            (&length, vec![60, 70, 20_000], Then::Stay, true),
            (&close, vec![19, 30_000], Then::Close, false),
        ] {
            let mut pieces = Vec::new();
            let mut last = 0;
            for cut in cuts.into_iter().chain([reply.len()]) {
                pieces.push(reply[last..cut].to_vec());
                last = cut;
            }
            for max in [999, 20_000, usize::MAX] {
                let (read, reusable, most) = appended(pieces.clone(), then, max).await;
                let head = String::from_utf8_lossy(&reply[..40]);
                assert!(read.unwrap() == text, "{head:?}, at most {max}");
                assert_eq!(reusable, reused, "{head:?}");
                assert!(most <= max, "{most} > {max}");
                if max == usize::MAX {
                    assert!(most > READ_SIZE, "{head:?}: at most {most} bytes at once");
                }
            }
        }
        // Cut short: an error, and the connection is not reused.
        let cut = vec![length[..30_000].to_vec()];
        let (read, reusable, _) = appended(cut, Then::Close, usize::MAX).await;
        let missing = length.len() - 30_000;
        assert!(read
            .unwrap_err()
            .contains(&format!("closed {missing} bytes before the end")));
        assert!(!reusable);
        let (read, reusable, _) = appended(vec![chunked[..at_data + 500].to_vec()], Then::Close, usize::MAX).await;
        assert!(read.unwrap_err().contains("closed before the end"));
        assert!(!reusable);
    }

    #[tokio::test]
    async fn a_longer_body_than_allowed_is_not_read() {
        let whole = exchange_whole(&["HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"], Then::Stay, 99).await;
        assert_eq!(whole.unwrap(), Err(100));
        let whole = exchange_whole(
            &["HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n"],
            Then::Stay,
            3,
        )
        .await;
        assert_eq!(whole.unwrap(), Err(4));
    }

    /// An idle connection the server has since closed is seen as such before a request goes on it.
    #[tokio::test]
    async fn an_idle_connection_the_server_closed_is_not_alive() {
        let mut conn = served(pieces(&["HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"]), Then::Close).await;
        let head = conn.read_head().await.unwrap();
        let mut body = Body::new(conn, &head);
        assert_eq!(body.read_all(10).await.unwrap().unwrap(), b"ok");
        assert!(body.reusable());
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!poll_fn(|cx| Poll::Ready(body.conn.poll_alive(cx, false))).await);
    }

    /// A close that came while nothing drove the runtime (a C client's HTTP client between
    /// calls) is seen by a look at the socket, though the reactor has not reported it.
    #[tokio::test]
    async fn a_look_sees_a_close_the_reactor_has_not_reported() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (close, closing) = std::sync::mpsc::channel::<()>();
        let server = std::thread::spawn(move || {
            use std::io::{Read, Write};
            let (mut socket, _) = listener.accept().unwrap();
            let mut buf = [0u8; 1024];
            let _ = socket.read(&mut buf).unwrap();
            socket
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                .unwrap();
            let _ = closing.recv();
        });
        let tcp = TcpStream::connect(addr).await.unwrap();
        let mut conn = Conn::new(Stream::Plain(ReadBeside(tcp)));
        conn.head = b"GET / HTTP/1.1\r\nhost: t\r\n\r\n".to_vec();
        assert!(conn.write(b"").await.is_ok());
        let head = conn.read_head().await.unwrap();
        let mut body = Body::new(conn, &head);
        assert_eq!(body.read_all(10).await.unwrap().unwrap(), b"ok");
        let mut conn = body.conn;
        assert!(poll_fn(|cx| Poll::Ready(conn.poll_alive(cx, true))).await);
        // The server closes while this thread waits without turning the runtime.
        close.send(()).unwrap();
        server.join().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(!poll_fn(|cx| Poll::Ready(conn.poll_alive(cx, true))).await);
    }
}
