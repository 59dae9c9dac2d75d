//! How a host thread waits on a current-thread runtime that another thread drives.
//!
//! A second caller (`Handle::block_on` in `ffi/engine`) waits "off the core": its request is
//! read by whoever drives. A guest read from such a thread (`transport/pump`) raced the reader
//! task on the driving thread and could miss the reply, leaving the call to its timeout (two
//! host threads on one client, until commit 77612cb), so it does not read.
//!
//! A lone caller that finds the driver thread in its idle spell waits "beside" the runtime
//! (below): it does read, and the pump makes that safe (a guest that cannot take the reader
//! while the task holds it polls again).

use super::event_fd::EventFd;
use std::cell::Cell;
use std::io;
#[cfg(unix)]
use std::os::fd::{AsRawFd, RawFd};
/// Windows: a read beside the runtime never names a handle to watch (see [`ReadBeside`]).
#[cfg(windows)]
pub type RawFd = std::os::raw::c_int;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

thread_local! {
    static OFF_CORE: Cell<bool> = const { Cell::new(false) };
}

/// Runs `wait` (a `Handle::block_on` on a runtime another thread drives) marked as such.
pub fn waiting_off_core<R>(wait: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            OFF_CORE.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(OFF_CORE.with(|c| c.replace(true)));
    wait()
}

/// True inside [`waiting_off_core`] on this thread.
pub fn off_core() -> bool {
    OFF_CORE.with(Cell::get)
}

// ----- waiting beside the runtime -----
//
// A lone call that finds the driver thread holding the runtime in its idle spell does not wait
// for it to stand down (a cross-CPU wake-up of a sleeping thread, then another back: 100–300 µs
// on a VM whose idle vCPUs halt, docs/performance.md "On one core"). It leaves
// the driver asleep and polls its own future on its own thread: the request is written there,
// and the answer is read there too, from a stdio server's pipe (`transport/pump`) or a direct
// HTTP connection's socket (`net::direct`), waiting in `poll(2)` on that descriptor, so the
// kernel wakes the caller directly when the answer arrives, as it wakes a blocking `read`. The
// reactor on the driver thread would report the same data only after its own wake-up, so such
// a read does not wait for it (`ReadBeside`).

thread_local! {
    /// Polling beside the runtime (inside [`ThreadWake::poll_beside`]).
    static BESIDE: Cell<bool> = const { Cell::new(false) };
    /// The descriptor this poll's guest read is waiting on, if any (see [`watch`]).
    static WATCH: Cell<Option<RawFd>> = const { Cell::new(None) };
    /// This thread's waker for polling beside the runtime (opened on first use).
    static WAKE: std::cell::OnceCell<Option<Arc<ThreadWake>>> = const { std::cell::OnceCell::new() };
}

/// True while this thread polls a future beside the runtime: readers may read without
/// waiting for the reactor's report.
#[cfg_attr(windows, allow(dead_code))]
pub fn beside() -> bool {
    BESIDE.with(Cell::get)
}

/// A reader polled beside the runtime has nothing to read yet and waits for `fd` to become
/// readable: the waiting thread watches it itself.
#[cfg_attr(windows, allow(dead_code))]
pub fn watch(fd: RawFd) {
    WATCH.with(|w| w.set(Some(fd)));
}

/// Wakes one thread out of `poll(2)`: the descriptor is written only when the thread may be
/// blocked (not while it polls its future, which it checks again afterwards).
pub struct ThreadWake {
    fd: EventFd,
    woken: AtomicBool,
    polling: AtomicBool,
}

impl Wake for ThreadWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.woken.swap(true, SeqCst) && !self.polling.load(SeqCst) {
            self.fd.signal();
        }
    }
}

impl ThreadWake {
    /// This thread's (`None` if no descriptor could be opened, or the thread is exiting).
    pub fn current() -> Option<Arc<ThreadWake>> {
        WAKE.try_with(|w| {
            w.get_or_init(|| {
                EventFd::open().ok().map(|fd| {
                    Arc::new(ThreadWake {
                        fd,
                        woken: AtomicBool::new(false),
                        polling: AtomicBool::new(false),
                    })
                })
            })
            .clone()
        })
        .ok()
        .flatten()
    }

    /// Polls `fut` once beside the runtime with this waker. `Pending` carries the descriptor
    /// its guest read watches, if any (see [`watch`]). Call on the thread that owns this waker.
    pub fn poll_beside<T>(&self, waker: &Waker, poll: impl FnOnce(&mut Context<'_>) -> Poll<T>) -> Beside<T> {
        struct Restore<'a>(bool, &'a AtomicBool);
        impl Drop for Restore<'_> {
            fn drop(&mut self) {
                BESIDE.with(|b| b.set(self.0));
                self.1.store(false, SeqCst);
            }
        }
        WATCH.with(|w| w.set(None));
        self.polling.store(true, SeqCst);
        let polled = {
            let _restore = Restore(BESIDE.with(|b| b.replace(true)), &self.polling);
            poll(&mut Context::from_waker(waker))
        };
        match polled {
            Poll::Ready(out) => Beside::Ready(out),
            Poll::Pending => Beside::Pending(WATCH.with(Cell::take)),
        }
    }

    /// After a `Pending` poll: waits (at most `bound`) until this waker is woken or `watch`
    /// becomes readable; at once if it was woken meanwhile. False when `bound` ran out.
    pub fn wait(&self, watch: Option<RawFd>, bound: Duration) -> bool {
        if self.woken.swap(false, SeqCst) {
            return true;
        }
        #[cfg(windows)]
        {
            let _ = watch; // never set on Windows
            let woken = self.fd.wait(bound.as_millis().clamp(1, u32::MAX as u128 - 1) as u32);
            self.fd.drain();
            woken
        }
        #[cfg(unix)]
        {
            let mut fds = [
                libc::pollfd {
                    fd: self.fd.fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: watch.unwrap_or(-1),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let count = if watch.is_some() { 2 } else { 1 };
            // SAFETY: polls descriptors listed in a local array of `count` entries.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), count, bound.as_millis().max(1) as libc::c_int) };
            if fds[0].revents != 0 {
                self.fd.drain();
            }
            ready != 0
        }
    }
}

/// What one poll beside the runtime gave.
pub enum Beside<T> {
    Ready(T),
    /// Not yet; the descriptor the guest read waits on, if one does.
    Pending(Option<RawFd>),
}

/// A descriptor-backed reader (a child's stdout pipe, a TCP connection) that reads without the
/// reactor's report when polled beside the runtime ([`beside`]): a read the reactor has no
/// readiness for yet goes to the descriptor anyway, and if that finds nothing the waiting thread
/// watches the descriptor itself ([`watch`]), since the report would come only after the driver
/// thread woke up. Elsewhere it is the inner reader. Writes pass through.
pub struct ReadBeside<T>(pub T);

/// Windows: pipes and sockets complete through the reactor's completion port, which only the
/// driver thread reads, so a read beside the runtime is the inner read (it waits for the driver).
#[cfg(windows)]
impl<T: AsyncRead + Unpin> AsyncRead for ReadBeside<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

#[cfg(unix)]
impl<T: AsyncRead + AsRawFd + Unpin> AsyncRead for ReadBeside<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        let polled = Pin::new(&mut me.0).poll_read(cx, buf);
        if polled.is_ready() || !beside() {
            return polled;
        }
        let fd = me.0.as_raw_fd();
        // SAFETY: reads into the buffer's unfilled part, then marks as filled exactly the bytes
        // `read` wrote.
        unsafe {
            let spare = buf.unfilled_mut();
            loop {
                let n = libc::read(fd, spare.as_mut_ptr().cast(), spare.len());
                if n >= 0 {
                    let n = n as usize;
                    buf.assume_init(n);
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::Interrupted => continue,
                    io::ErrorKind::WouldBlock => {
                        watch(fd);
                        return Poll::Pending; // the reactor has this task's waker too
                    }
                    _ => return Poll::Ready(Err(e)),
                }
            }
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for ReadBeside<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;
    use tokio::net::unix::pipe;

    /// Data the reactor has not reported yet: the pipe's own read waits for the reactor, a read
    /// beside the runtime takes it at once; with nothing there, it names the pipe to watch.
    #[tokio::test]
    async fn beside_the_runtime_a_read_takes_what_the_reactor_has_not_reported() {
        let (rx, tx) = std::io::pipe().unwrap();
        let rx = pipe::Receiver::from_owned_fd(std::os::fd::OwnedFd::from(rx)).unwrap();
        let fd = rx.as_raw_fd();
        let mut guest = ReadBeside(rx);
        let mut buf = [0u8; 16];
        let mut read = |beside: bool| {
            let mut rb = ReadBuf::new(&mut buf);
            let wake = ThreadWake::current().unwrap();
            let waker = Waker::from(wake.clone());
            let polled = if beside {
                wake.poll_beside(&waker, |cx| Pin::new(&mut guest).poll_read(cx, &mut rb))
            } else {
                match Pin::new(&mut guest).poll_read(&mut Context::from_waker(&waker), &mut rb) {
                    Poll::Ready(r) => Beside::Ready(r),
                    Poll::Pending => Beside::Pending(None),
                }
            };
            match polled {
                Beside::Ready(r) => Ok(r.map(|()| rb.filled().to_vec())),
                Beside::Pending(watch) => Err(watch),
            }
        };
        // Nothing written: beside, the caller is told which pipe to watch.
        assert!(matches!(read(true), Err(Some(f)) if f == fd));
        (&tx).write_all(b"answer\n").unwrap();
        // No runtime turn since the write: the reactor has not seen it.
        assert!(matches!(read(false), Err(None)));
        assert_eq!(read(true).unwrap().unwrap(), b"answer\n");
        drop(tx);
        // End of stream beside the runtime: an empty read, as the pipe's own.
        assert_eq!(read(true).unwrap().unwrap(), b"");
    }
}
