//! Newline-framed messages into a pipe (a child's stdin), shared by many senders at once.
//!
//! C hosts send from many threads. Queueing them on a lock costs a sleep and a wake-up per
//! contended send; here a sender that finds a write in progress appends its line to a shared
//! buffer and returns, and the writer in progress writes that buffer after its own chunk. So
//! concurrent sends never wait for each other and share write(2) calls, and lines never
//! interleave: there is one writer at a time. Whoever took on the writing finishes it, even if
//! its own future is dropped mid-write (a task carries on), so a queued line is never stranded.

use std::future::Future;
use std::io;
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// The write end of the pipe, on the reactor.
#[cfg(unix)]
type Pipe = tokio::net::unix::pipe::Sender;
#[cfg(windows)]
type Pipe = tokio::net::windows::named_pipe::NamedPipeServer;
/// What [`LineWriter::new`] takes over: a descriptor (Unix), or the pipe already on the
/// reactor (Windows: `child_windows`).
#[cfg(unix)]
pub(crate) type RawPipe = std::os::fd::OwnedFd;
#[cfg(windows)]
pub(crate) type RawPipe = Pipe;

/// Most bytes that may wait behind the write in progress. A server that stops reading its
/// stdin makes the pipe full; lines queued past this bound are refused (`WriteError::Full`)
/// rather than held without limit (e.g. answers to a flood of server requests).
pub(crate) const MAX_QUEUED_BYTES: usize = 16 * 1024 * 1024;

/// Why a line was not written.
#[derive(Debug)]
pub(crate) enum WriteError {
    /// The writer was closed (or an earlier write failed); nothing more goes out.
    Closed,
    /// Writing failed (the reader end is gone); the writer is closed from now on.
    Io(io::Error),
    /// [`MAX_QUEUED_BYTES`] already wait behind a write the reader does not take: the line was
    /// not queued.
    Full,
}

pub(crate) struct LineWriter {
    inner: Arc<Inner>,
}

struct Inner {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Lines waiting for the writer in progress.
    queued: Vec<u8>,
    /// A writer is in progress (a sender, or a task finishing an abandoned write).
    writing: bool,
    /// `None` once closed. The writer in progress holds its own handle, so the pipe closes
    /// when the queued lines are out.
    pipe: Option<Arc<Pipe>>,
}

impl LineWriter {
    /// Takes over the write end of a pipe (needs a runtime context: the pipe joins its
    /// reactor).
    pub fn new(fd: RawPipe) -> io::Result<LineWriter> {
        #[cfg(unix)]
        let pipe = Pipe::from_owned_fd(fd)?;
        #[cfg(windows)]
        let pipe = fd;
        Ok(LineWriter {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    pipe: Some(Arc::new(pipe)),
                    ..State::default()
                }),
            }),
        })
    }

    /// Writes `line` (which ends with its newline), or hands it to the write in progress.
    /// `Ok` means written or queued behind a write that will carry it.
    pub async fn write(&self, line: Vec<u8>) -> Result<(), WriteError> {
        let (pipe, chunk) = {
            let mut st = self.inner.state.lock().unwrap();
            let Some(pipe) = st.pipe.clone() else {
                return Err(WriteError::Closed);
            };
            if st.writing {
                if !st.queued.is_empty() && st.queued.len() + line.len() > MAX_QUEUED_BYTES {
                    return Err(WriteError::Full);
                }
                st.queued.extend_from_slice(&line);
                return Ok(());
            }
            st.writing = true;
            let chunk = if st.queued.is_empty() {
                line
            } else {
                let mut earlier = std::mem::take(&mut st.queued);
                earlier.extend_from_slice(&line);
                earlier
            };
            (pipe, chunk)
        };
        Job {
            inner: &self.inner,
            pipe,
            chunk,
            written: 0,
            finished: false,
            carry_on: true,
        }
        .run()
        .await
    }

    /// As [`LineWriter::write`], but never waits for the reader: what does not fit in the pipe
    /// now is finished by a task (for messages nobody waits on: answers to the server,
    /// cancellations, notifications). Their count and size are bounded by `MAX_QUEUED_BYTES`.
    pub fn post(&self, line: Vec<u8>) -> Result<(), WriteError> {
        let mut write = pin!(self.write(line));
        // One poll writes what the pipe takes now; dropping the unfinished write hands the rest
        // to a task (see `Job`'s `Drop`).
        match write.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(result) => result,
            Poll::Pending => Ok(()),
        }
    }

    /// No more lines are accepted; the pipe closes once the write in progress (if any) has
    /// written what is queued.
    pub fn close(&self) {
        self.inner.state.lock().unwrap().pipe = None;
    }
}

/// The write in progress: `chunk[written..]` still has to go out.
struct Job<'a> {
    inner: &'a Arc<Inner>,
    pipe: Arc<Pipe>,
    chunk: Vec<u8>,
    written: usize,
    finished: bool,
    /// If dropped unfinished, a task finishes the writing (false for that task itself, so a
    /// runtime shutting down does not respawn it forever).
    carry_on: bool,
}

impl Job<'_> {
    async fn run(&mut self) -> Result<(), WriteError> {
        loop {
            while self.written < self.chunk.len() {
                match self.pipe.try_write(&self.chunk[self.written..]) {
                    Ok(n) => self.written += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        if let Err(e) = self.pipe.writable().await {
                            return Err(self.fail(e));
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(self.fail(e)),
                }
            }
            let mut st = self.inner.state.lock().unwrap();
            if st.queued.is_empty() {
                st.writing = false;
                self.finished = true;
                return Ok(());
            }
            // Swap rather than take, so both buffers keep their capacity.
            self.chunk.clear();
            self.written = 0;
            std::mem::swap(&mut self.chunk, &mut st.queued);
        }
    }

    fn fail(&mut self, e: io::Error) -> WriteError {
        let mut st = self.inner.state.lock().unwrap();
        st.writing = false;
        st.pipe = None;
        st.queued = Vec::new();
        self.finished = true;
        WriteError::Io(e)
    }
}

impl Drop for Job<'_> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        // Dropped while waiting for room in the pipe: a task finishes the writing, from
        // `written` on in the same chunk (a large line is not copied again), with what others
        // queued after it. Without a runtime (or if that task is dropped too), the rest goes
        // back in front of the queue for the next sender.
        let mut st = self.inner.state.lock().unwrap();
        let mut chunk = std::mem::take(&mut self.chunk);
        chunk.append(&mut st.queued);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) if self.carry_on => {
                let inner = self.inner.clone();
                let pipe = self.pipe.clone();
                let written = self.written;
                drop(st);
                runtime.spawn(crate::base::boxed(async move {
                    let _ = Job {
                        inner: &inner,
                        pipe,
                        chunk,
                        written,
                        finished: false,
                        carry_on: false,
                    }
                    .run()
                    .await;
                }));
            }
            _ => {
                chunk.drain(..self.written);
                st.queued = chunk;
                st.writing = false;
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read};
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::time::Duration;

    fn pipe_pair() -> (std::fs::File, OwnedFd) {
        let mut fds = [0; 2];
        // SAFETY: pipe(2) fills both descriptors, which are then owned here.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both descriptors are fresh from pipe(2) and owned by nothing else.
        unsafe { (std::fs::File::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_senders_never_interleave_and_lose_nothing() {
        let (reader, fd) = pipe_pair();
        let writer = Arc::new(LineWriter::new(fd).unwrap());
        let lines = std::thread::spawn(move || BufReader::new(reader).lines().map(Result::unwrap).collect::<Vec<_>>());
        let mut tasks = Vec::new();
        for sender in 0..32 {
            let writer = writer.clone();
            tasks.push(tokio::spawn(async move {
                for n in 0..300 {
                    // Lines of different lengths, some longer than a pipe buffer.
                    let pad = "x".repeat(if n % 50 == 0 { 70_000 } else { n * 7 % 400 });
                    writer
                        .write(format!("{sender} {n} {pad}\n").into_bytes())
                        .await
                        .unwrap();
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        writer.close();
        drop(writer);
        let lines = lines.join().unwrap();
        assert_eq!(lines.len(), 32 * 300);
        let mut next = [0usize; 32];
        for line in lines {
            let mut parts = line.splitn(3, ' ');
            let sender: usize = parts.next().unwrap().parse().unwrap();
            let n: usize = parts.next().unwrap().parse().unwrap();
            let pad = parts.next().unwrap();
            assert_eq!(n, next[sender], "each sender's lines arrive in its order");
            assert!(pad.bytes().all(|b| b == b'x'));
            assert_eq!(pad.len(), if n % 50 == 0 { 70_000 } else { n * 7 % 400 });
            next[sender] += 1;
        }
    }

    #[tokio::test]
    async fn an_abandoned_write_is_finished_with_what_queued_behind_it() {
        let (mut reader, fd) = pipe_pair();
        let writer = Arc::new(LineWriter::new(fd).unwrap());
        // Nobody reads yet: a line larger than the pipe buffer cannot be written at once.
        let big = format!("{}\n", "a".repeat(1 << 20));
        let first = tokio::time::timeout(Duration::from_millis(100), writer.write(big.clone().into_bytes())).await;
        assert!(first.is_err(), "the write waits for room, and is abandoned here");
        // Queued behind the unfinished line: written after it, never in its middle.
        writer.write(b"second\n".to_vec()).await.unwrap();
        let read = tokio::task::spawn_blocking(move || {
            let mut buf = vec![0; big.len() + 7];
            reader.read_exact(&mut buf).unwrap();
            buf
        });
        let buf = tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .unwrap()
            .unwrap();
        assert!(buf[..1 << 20].iter().all(|&b| b == b'a'));
        assert_eq!(&buf[1 << 20..], b"\nsecond\n");
    }

    #[tokio::test]
    async fn post_never_waits_and_what_waits_is_bounded() {
        let (_reader, fd) = pipe_pair();
        let writer = LineWriter::new(fd).unwrap();
        // Nobody reads: the pipe takes part of the first line, a task is left with the rest.
        writer.post(vec![b'a'; 1 << 20]).unwrap();
        let mut accepted = 0;
        loop {
            match writer.post(vec![b'b'; 1 << 20]) {
                Ok(()) => accepted += 1,
                Err(WriteError::Full) => break,
                Err(e) => panic!("unexpected {e:?}"),
            }
            assert!(accepted <= MAX_QUEUED_BYTES >> 20, "the queue grows past its bound");
        }
        assert_eq!(accepted, MAX_QUEUED_BYTES >> 20);
    }

    #[tokio::test]
    async fn a_failed_write_closes_the_writer() {
        let (reader, fd) = pipe_pair();
        let writer = LineWriter::new(fd).unwrap();
        drop(reader);
        // Rust programs ignore SIGPIPE, so the write fails with EPIPE.
        match writer.write(b"lost\n".to_vec()).await {
            Err(WriteError::Io(e)) => assert_eq!(e.kind(), io::ErrorKind::BrokenPipe),
            other => panic!("expected EPIPE, got {other:?}"),
        }
        assert!(matches!(
            writer.write(b"later\n".to_vec()).await,
            Err(WriteError::Closed)
        ));
    }

    #[tokio::test]
    async fn close_refuses_new_lines_and_ends_the_pipe() {
        let (reader, fd) = pipe_pair();
        let writer = LineWriter::new(fd).unwrap();
        writer.write(b"one\n".to_vec()).await.unwrap();
        writer.close();
        assert!(matches!(writer.write(b"two\n".to_vec()).await, Err(WriteError::Closed)));
        let mut text = String::new();
        // EOF arrives (read_to_string returns) although `writer` itself is still alive.
        BufReader::new(reader).read_to_string(&mut text).unwrap();
        assert_eq!(text, "one\n");
    }
}
