//! The byte stream under a direct connection (`net::direct`): TCP, or TLS over TCP. A lone
//! call beside the driver thread's idle spell reads the socket itself (`ReadBeside`), under
//! TLS as well: rustls asks the socket for its records the same way.

use crate::base::driving::ReadBeside;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

pub(crate) enum Stream {
    Plain(ReadBeside<TcpStream>),
    Tls(Box<TlsStream<ReadBeside<TcpStream>>>),
}

impl Stream {
    /// Whether the socket has bytes to read or has ended, asked of the socket itself: the
    /// reactor learns of either only while something drives the runtime, which between a
    /// C client's HTTP calls may be nothing (`ffi/engine`).
    pub fn readable_now(&self) -> bool {
        let tcp = match self {
            Stream::Plain(s) => &s.0,
            Stream::Tls(s) => &s.get_ref().0 .0,
        };
        let mut byte = [std::mem::MaybeUninit::uninit()];
        !matches!(socket2::SockRef::from(tcp).peek(&mut byte), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            // Nothing decrypted is waiting, no close_notify came, and the reactor has no news of
            // the socket: the TLS reader's pass (its buffers, the socket's read) would end
            // pending too, and register the task as this does. Every call's first look for its
            // answer, and a pooled connection's checkout, end so. Beside the runtime the read
            // goes to the socket itself (`ReadBeside`), so it takes that pass.
            Stream::Tls(s)
                if s.get_ref().1.wants_read()
                    && !crate::base::driving::beside()
                    && s.get_ref().0 .0.poll_read_ready(cx).is_pending() =>
            {
                Poll::Pending
            }
            // A server that closes without TLS's close_notify (as most do an idle connection)
            // ends the stream as a TCP end does: a request not sent yet then goes on a new
            // connection, as for a plain connection, instead of failing. HTTP's own framing
            // (lengths, chunks, HTTP/2 frames) still tells a complete message from a cut one.
            Stream::Tls(s) => match Pin::new(&mut **s).poll_read(cx, buf) {
                Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::UnexpectedEof => Poll::Ready(Ok(())),
                polled => polled,
            },
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(&mut **s).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Tls(s) => Pin::new(&mut **s).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(s) => s.is_write_vectored(),
            Stream::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(&mut **s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(&mut **s).poll_shutdown(cx),
        }
    }
}
