//! A buffered reader whose buffer follows the traffic: small while messages are small, grown
//! (up to [`MAX_BUFFER`]) while reads fill it, and given back when the peer goes quiet.
//!
//! Every stdio client reads its server's stdout and stderr. With a fixed 64 KiB + 8 KiB
//! `BufReader` pair, 200 idle clients on the shared runtime held 14 MiB of buffers between
//! them (the target is ≤ 64 KiB per idle client). Here a reader that waits for data keeps at most
//! `keep_idle` bytes, and a burst of large messages still gets 64 KiB reads (as many syscalls
//! per megabyte as before, after a few doubling reads). The one exception: while the traffic
//! is long lines (longer than a read), a waiting reader keeps its burst buffer
//! ([`BURST_BUFFER`]) for the next one, until smaller traffic follows.
//!
//! The buffer is only (re)allocated when it is empty, so nothing is ever copied on growth, and
//! reads go straight into it as `BufReader`'s do: one copy, into the line.
//!
//! A long line's burst buffer leaves with the line (the C ABI hands a large result to the host
//! where it sits in it) and can come back: [`give_back`] keeps one such buffer for the process,
//! and the next burst takes it instead of allocating. At 256 KiB a burst buffer is above glibc's
//! mmap threshold, so without it every 100 KB answer cost an `mmap`, the `munmap` of the host's
//! free and the page faults of filling fresh pages.

use std::io;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, ReadBuf};

use super::framing::{read_line, Line, OVERSIZE_PREFIX};

/// Largest buffer: a pipe holds 64 KiB, so a bigger read never returns more.
pub(crate) const MAX_BUFFER: usize = 64 * 1024;
/// The capacity a buffer gets once reads fill [`MAX_BUFFER`] (a burst, or a long line): reads
/// still return at most what the pipe holds, but a line longer than one read then grows in
/// this allocation (see [`LeanReader::next_line`]) instead of being copied into a larger one.
/// Capacity is not memory until written; a reader keeps it while it waits between long lines,
/// and gives it back once smaller traffic follows.
pub(crate) const BURST_BUFFER: usize = 4 * MAX_BUFFER;
/// The first buffer, and the smallest a quiet stream shrinks back to.
pub(crate) const MIN_BUFFER: usize = 4 * 1024;
/// What a waiting stdout reader may keep: a buffer the size its answers need (`want`), up to
/// this, so a server answering 5–16 KiB at a time costs no allocation per answer.
pub(crate) const KEEP_IDLE: usize = 16 * 1024;

/// A burst buffer given back ([`give_back`]), empty, for the next burst of any reader; at most
/// one, so a process keeps no more than [`BURST_BUFFER`] this way.
static RETURNED: Mutex<Vec<u8>> = Mutex::new(Vec::new());

/// Whether `buf` is a burst buffer: the allocation a line longer than one read was assembled in,
/// which [`give_back`] keeps. What lies past the lines it carried was never written (no memory
/// where the allocator maps such blocks), so it is not shrunk while the host holds the line.
pub(crate) fn is_burst_buffer(buf: &Vec<u8>) -> bool {
    buf.capacity() == BURST_BUFFER
}

/// Takes back the buffer of a line whose bytes are no longer needed: a burst buffer is kept
/// for the next burst (when none is kept already), anything else is freed.
pub(crate) fn give_back(mut buf: Vec<u8>) {
    if !is_burst_buffer(&buf) {
        return;
    }
    buf.clear();
    let mut kept = returned();
    if kept.capacity() == 0 {
        *kept = buf;
    }
}

/// The kept burst buffer's slot (a panic while it was held left only a buffer behind).
fn returned() -> std::sync::MutexGuard<'static, Vec<u8>> {
    RETURNED.lock().unwrap_or_else(|e| e.into_inner())
}

/// The kept burst buffer, or a new one.
fn burst_buffer() -> Vec<u8> {
    let kept = std::mem::take(&mut *returned());
    if is_burst_buffer(&kept) {
        kept
    } else {
        Vec::with_capacity(BURST_BUFFER)
    }
}

pub struct LeanReader<R> {
    inner: R,
    /// Its capacity is the buffer, its length what the last read filled: reads go into the
    /// spare capacity, so a new buffer is never zeroed first (each connect gave two 4 KiB
    /// buffers, and every burst of a quiet stderr one more, to `memset`).
    buf: Vec<u8>,
    pos: usize,
    /// The size the next allocation gets.
    want: usize,
    /// The largest read of the current burst (reads since the reader last had to wait).
    burst_max: usize,
    /// A waiting reader keeps its buffer only up to this size (0: always gives it back).
    keep_idle: usize,
}

impl<R: AsyncRead + Unpin> LeanReader<R> {
    /// A reader over `inner` that holds at most `keep_idle` bytes while waiting.
    pub fn new(inner: R, keep_idle: usize) -> Self {
        LeanReader {
            inner,
            buf: Vec::new(),
            pos: 0,
            want: MIN_BUFFER,
            burst_max: 0,
            keep_idle,
        }
    }

    /// Bytes of buffer held now (for tests).
    #[cfg(test)]
    fn held(&self) -> usize {
        self.buf.capacity()
    }

    /// Where the buffer is (for tests: the same address means no new allocation).
    #[cfg(test)]
    fn buffer_at(&self) -> *const u8 {
        self.buf.as_ptr()
    }
}

impl<R: AsyncRead + Unpin> LeanReader<R> {
    /// The next line, as [`read_line`] reads it (same bound, same outcomes), but a line longer
    /// than what is buffered is read straight into its own buffer: the buffer's bytes become
    /// the line's start (taken over, not copied, when the line starts the buffer), and the
    /// reads that follow go into the line's spare capacity. A 100 KB answer is then copied
    /// nowhere on its way in; through the buffer it was copied once into the line and about
    /// once more as the line's vector grew. Bytes read past the newline go back into the
    /// buffer for the next line.
    pub async fn next_line(&mut self, max: usize) -> io::Result<Line> {
        let chunk = self.fill_buf().await?;
        if let Some(i) = memchr::memchr(b'\n', chunk) {
            if i > max {
                return read_line(self, max).await;
            }
            // The usual case: the whole line is buffered.
            let mut line = chunk[..i].to_vec();
            self.consume(i + 1);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(Line::Data(line));
        }
        if chunk.is_empty() || chunk.len() > max {
            return read_line(self, max).await;
        }
        // A line longer than a read: traffic worth full-size buffers (this line's reads go
        // around the buffer, so they are counted here), the next one allocated at
        // `BURST_BUFFER` so that the next such line grows in place.
        self.want = MAX_BUFFER;
        self.burst_max = MAX_BUFFER;
        let mut line = if self.pos == 0 {
            // The whole buffer is this line's start: it becomes the line.
            std::mem::take(&mut self.buf)
        } else {
            let rest = &self.buf[self.pos..];
            let mut line = Vec::with_capacity(2 * rest.len().max(MIN_BUFFER));
            line.extend_from_slice(rest);
            self.pos = self.buf.len();
            line
        };
        loop {
            if line.capacity() - line.len() < MIN_BUFFER {
                // Doubling: at most `max` plus one read, so an endless line is caught below.
                line.reserve(line.len().max(MAX_BUFFER));
            }
            let start = line.len();
            let n = std::future::poll_fn(|cx| {
                let mut rb = ReadBuf::uninit(line.spare_capacity_mut());
                ready!(Pin::new(&mut self.inner).poll_read(cx, &mut rb))?;
                Poll::Ready(Ok::<_, io::Error>(rb.filled().len()))
            })
            .await?;
            // SAFETY: the read filled the first `n` bytes of the spare capacity.
            unsafe { line.set_len(start + n) };
            if n == 0 {
                return Ok(if line.len() > max {
                    let len = line.len();
                    line.truncate(OVERSIZE_PREFIX);
                    line.shrink_to_fit();
                    Line::TooLong { prefix: line, len }
                } else {
                    Line::Cut(line)
                });
            }
            if let Some(i) = memchr::memchr(b'\n', &line[start..]) {
                let end = start + i;
                // What follows the newline is the next line's: back into the buffer.
                self.buf.clear();
                self.buf.extend_from_slice(&line[end + 1..]);
                self.pos = 0;
                line.truncate(end);
                if line.len() > max {
                    let len = line.len();
                    line.truncate(OVERSIZE_PREFIX);
                    line.shrink_to_fit();
                    return Ok(Line::TooLong { prefix: line, len });
                }
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Line::Data(line));
            }
            if line.len() > max {
                // Past the bound: keep the prefix and skip the rest of the line, counting it.
                let mut len = line.len();
                line.truncate(OVERSIZE_PREFIX);
                line.shrink_to_fit();
                loop {
                    let chunk = self.fill_buf().await?;
                    if chunk.is_empty() {
                        return Ok(Line::TooLong { prefix: line, len });
                    }
                    let (take, done) = match memchr::memchr(b'\n', chunk) {
                        Some(i) => (i, true),
                        None => (chunk.len(), false),
                    };
                    len += take;
                    self.consume(if done { take + 1 } else { take });
                    if done {
                        return Ok(Line::TooLong { prefix: line, len });
                    }
                }
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LeanReader<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, out: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let chunk = ready!(self.as_mut().poll_fill_buf(cx))?;
        let n = chunk.len().min(out.remaining());
        out.put_slice(&chunk[..n]);
        self.consume(n);
        Poll::Ready(Ok(()))
    }
}

impl<R: AsyncRead + Unpin> AsyncBufRead for LeanReader<R> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let me = self.get_mut();
        if me.pos >= me.buf.len() {
            me.pos = 0;
            me.buf.clear();
            if me.buf.capacity() < me.want {
                me.buf = Vec::new(); // freed before the bigger one is allocated
                me.buf = if me.want == MAX_BUFFER {
                    burst_buffer()
                } else {
                    Vec::with_capacity(me.want)
                };
            }
            let mut rb = ReadBuf::uninit(me.buf.spare_capacity_mut());
            match Pin::new(&mut me.inner).poll_read(cx, &mut rb) {
                Poll::Pending => {
                    // Quiet: the burst is over. Shrink the next buffer if the burst's reads
                    // stayed well under it, and give back a buffer that is larger than the
                    // traffic needs or than a waiting reader may keep.
                    // (A wait with no read since the last one was no burst: nothing to learn.)
                    if me.burst_max > 0 && me.burst_max <= me.want / 4 {
                        if me.want == MAX_BUFFER {
                            // This reader's long lines are over: no burst buffer kept for them.
                            drop(std::mem::take(&mut *returned()));
                        }
                        me.want = (me.want / 2).max(MIN_BUFFER);
                    }
                    me.burst_max = 0;
                    // Between long lines (`want` still at its largest) the burst buffer waits
                    // for the next one: freed and allocated again at every wait it cost a
                    // 256 KiB allocation each time. Small traffic ends that (`want` halves).
                    let long_lines = me.want == MAX_BUFFER && me.buf.capacity() == BURST_BUFFER;
                    if !long_lines && (me.buf.capacity() > me.keep_idle || me.buf.capacity() > me.want) {
                        me.buf = Vec::new();
                    }
                    return Poll::Pending;
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) => {
                    let n = rb.filled().len();
                    // SAFETY: `ReadBuf` over the spare capacity: its first `n` bytes are what
                    // the read filled, so they are initialised.
                    unsafe { me.buf.set_len(n) };
                    me.burst_max = me.burst_max.max(n);
                    if n == me.buf.capacity() {
                        // The reader had more than fitted: read more at once next time.
                        me.want = (me.want * 2).min(MAX_BUFFER);
                    }
                }
            }
        }
        Poll::Ready(Ok(&me.buf[me.pos..]))
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        let me = self.get_mut();
        me.pos = (me.pos + amt).min(me.buf.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::framing::{read_line, Line};
    use tokio::io::AsyncWriteExt;

    /// Held by the tests that read lines longer than a read: they take and give back burst
    /// buffers, which the process shares.
    static LONG_LINES: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

    #[tokio::test]
    async fn lines_across_reads_and_buffer_sizes() {
        let _long_lines = LONG_LINES.lock().await;
        let (mut w, r) = tokio::io::duplex(256 * 1024);
        let mut reader = LeanReader::new(r, MIN_BUFFER);
        let big = vec![b'x'; 200 * 1024];
        let writer = tokio::spawn(async move {
            w.write_all(b"{\"a\":1}\n{\"b\":2}\r\n").await.unwrap();
            w.write_all(&big).await.unwrap();
            w.write_all(b"\nlast").await.unwrap();
        });
        assert_eq!(
            read_line(&mut reader, 1 << 20).await.unwrap(),
            Line::Data(b"{\"a\":1}".to_vec())
        );
        assert_eq!(
            read_line(&mut reader, 1 << 20).await.unwrap(),
            Line::Data(b"{\"b\":2}".to_vec())
        );
        match read_line(&mut reader, 1 << 20).await.unwrap() {
            Line::Data(bytes) => assert!(bytes.len() == 200 * 1024 && bytes.iter().all(|&b| b == b'x')),
            other => panic!("{other:?}"),
        }
        writer.await.unwrap();
        assert_eq!(
            read_line(&mut reader, 1 << 20).await.unwrap(),
            Line::Cut(b"last".to_vec())
        );
        assert_eq!(read_line(&mut reader, 1 << 20).await.unwrap(), Line::Eof);
    }

    /// `next_line` gives what `read_line` gives, for lines within a buffer and lines spanning
    /// many reads (with and without their start at the buffer's start), lines past the bound,
    /// a last line cut off, CRLF, and what follows a long line's newline.
    #[tokio::test]
    async fn next_line_reads_long_lines_as_read_line_does() {
        let _long_lines = LONG_LINES.lock().await;
        let long = |c: u8, n: usize| vec![c; n];
        let mut input = Vec::new();
        for part in [
            b"{\"a\":1}\n".to_vec(),
            [long(b'x', 200_000), b"\r\nshort\n".to_vec()].concat(),
            [long(b'y', 70_000), b"\n".to_vec()].concat(),
            [long(b'z', 300_000), b"\nafter\r\n".to_vec()].concat(),
            [long(b'w', 9_000), b"\n".to_vec()].concat(),
            b"\n".to_vec(),
            long(b'v', 90_000),
        ] {
            input.extend_from_slice(&part);
        }
        for (max, pipe) in [
            (1 << 20, 4096),
            (1 << 20, 64 * 1024),
            (100_000, 3000),
            (250_000, 64 * 1024),
        ] {
            let (mut w, r) = tokio::io::duplex(pipe);
            let bytes = input.clone();
            let writer = tokio::spawn(async move {
                for piece in bytes.chunks(5000) {
                    w.write_all(piece).await.unwrap();
                }
            });
            let mut lean = LeanReader::new(r, KEEP_IDLE);
            let mut plain = tokio::io::BufReader::with_capacity(7, &input[..]);
            loop {
                let (got, want) = (
                    lean.next_line(max).await.unwrap(),
                    read_line(&mut plain, max).await.unwrap(),
                );
                let eof = want == Line::Eof;
                assert_eq!(got, want, "max {max}, pipe {pipe}");
                if eof {
                    break;
                }
            }
            writer.await.unwrap();
        }
    }

    /// `n` small answers, each read and followed by a wait (nothing more to read).
    async fn small_answers<W, R>(w: &mut W, reader: &mut LeanReader<R>, n: usize)
    where
        W: tokio::io::AsyncWrite + Unpin,
        R: AsyncRead + Unpin,
    {
        for _ in 0..n {
            w.write_all(b"{}\n").await.unwrap();
            assert_eq!(read_line(reader, 1 << 20).await.unwrap(), Line::Data(b"{}".to_vec()));
            assert!(waits(reader));
        }
    }

    /// Whether the reader has nothing to give now (it waits for the peer), polled once.
    fn waits<R: AsyncRead + Unpin>(reader: &mut LeanReader<R>) -> bool {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        Pin::new(reader).poll_fill_buf(&mut cx).is_pending()
    }

    #[tokio::test]
    async fn grows_for_a_burst_and_gives_the_buffer_back_when_quiet() {
        let _long_lines = LONG_LINES.lock().await;
        let (mut w, r) = tokio::io::duplex(256 * 1024);
        let mut reader = LeanReader::new(r, MIN_BUFFER);
        w.write_all(&vec![b'y'; 150 * 1024]).await.unwrap();
        w.write_all(b"\n").await.unwrap();
        assert!(matches!(read_line(&mut reader, 1 << 20).await.unwrap(), Line::Data(b) if b.len() == 150 * 1024));
        assert_eq!(
            reader.held(),
            BURST_BUFFER,
            "reads that fill the buffer double it, up to a burst's"
        );
        // Nothing more to read: the reader waits, keeping its burst buffer for the next long
        // line (only small traffic gives it back, below).
        assert!(waits(&mut reader));
        assert_eq!(reader.held(), BURST_BUFFER);
        // Small messages after the burst: the next buffer shrinks back step by step, and a
        // small one is kept while waiting.
        small_answers(&mut w, &mut reader, 8).await;
        assert_eq!(reader.held(), MIN_BUFFER);
    }

    /// The burst buffer a long line left in comes back (as the host's free gives it) and the next
    /// long line is read into it; other buffers are not kept, and small traffic ends the keeping.
    #[tokio::test]
    async fn a_burst_buffer_given_back_carries_the_next_long_line() {
        let _long_lines = LONG_LINES.lock().await;
        drop(burst_buffer());
        // A pipe's reads: at most 64 KiB each, so a 100 KB line spans reads.
        let (w, r) = tokio::io::duplex(MAX_BUFFER);
        let mut reader = LeanReader::new(r, KEEP_IDLE);
        let w = std::sync::Arc::new(tokio::sync::Mutex::new(w));
        let long_line = async |reader: &mut LeanReader<_>| {
            let w = w.clone();
            let writer = tokio::spawn(async move {
                let answer = [vec![b'L'; 100_000], b"\n".to_vec()].concat();
                w.lock().await.write_all(&answer).await.unwrap();
            });
            let line = match reader.next_line(1 << 20).await.unwrap() {
                Line::Data(line) => line,
                other => panic!("{other:?}"),
            };
            writer.await.unwrap();
            line
        };
        long_line(&mut reader).await; // the first grows from the small first buffer
        let first = long_line(&mut reader).await;
        assert!(is_burst_buffer(&first) && first.len() == 100_000);
        let at = first.as_ptr();
        give_back(first);
        let second = long_line(&mut reader).await;
        assert_eq!(second.as_ptr(), at, "read into the buffer given back");
        assert!(waits(&mut reader), "waits in a burst buffer of its own");
        give_back(Vec::with_capacity(100_000));
        assert_eq!(RETURNED.lock().unwrap().capacity(), 0, "only burst buffers are kept");
        give_back(second);
        assert_eq!(RETURNED.lock().unwrap().capacity(), BURST_BUFFER);
        let mut w = w.lock().await;
        small_answers(&mut *w, &mut reader, 2).await;
        assert_eq!(RETURNED.lock().unwrap().capacity(), 0, "small traffic: nothing kept");
    }

    #[tokio::test]
    async fn steady_medium_answers_reuse_one_buffer_and_small_ones_shrink_it() {
        let (mut w, r) = tokio::io::duplex(256 * 1024);
        let mut reader = LeanReader::new(r, KEEP_IDLE);
        let answer = |n: usize| [vec![b'm'; n], b"\n".to_vec()].concat();
        let mut at = Vec::new();
        for _ in 0..6 {
            w.write_all(&answer(6000)).await.unwrap();
            assert!(matches!(read_line(&mut reader, 1 << 20).await.unwrap(), Line::Data(b) if b.len() == 6000));
            assert!(waits(&mut reader));
            at.push((reader.buffer_at(), reader.held()));
        }
        // The first answer filled the first 4 KiB buffer; from then on an 8 KiB one is kept.
        assert!(
            at[1..].iter().all(|&(p, n)| p == at[1].0 && n == 2 * MIN_BUFFER),
            "{at:?}"
        );
        // Small answers: the kept buffer is larger than they need, so it shrinks back.
        small_answers(&mut w, &mut reader, 4).await;
        assert_eq!(reader.held(), MIN_BUFFER);
    }

    #[tokio::test]
    async fn keep_idle_zero_holds_nothing_while_waiting() {
        let (mut w, r) = tokio::io::duplex(1024);
        let mut reader = LeanReader::new(r, 0);
        assert!(waits(&mut reader));
        assert_eq!(reader.held(), 0);
        w.write_all(b"warn\n").await.unwrap();
        assert_eq!(
            read_line(&mut reader, 1024).await.unwrap(),
            Line::Data(b"warn".to_vec())
        );
        assert!(waits(&mut reader));
        assert_eq!(reader.held(), 0);
    }
}
