//! Host-loop delivery: instead of the dispatcher thread, the host's own loop thread runs every
//! callback of a client (completions, handlers, listeners, progress). The runtime still does the
//! I/O; only delivery moves, through one queue whose descriptor is readable exactly while work
//! waits (the c-ares event-thread / grpcio poller split, see ARCHITECTURE.md).

use super::boundary::{contain, ffi_boundary, out, put};
use super::client::{mcp_client, on_client};
use super::dispatcher::Job;
use super::error::{mcp_error, Failure};
use super::handlers::{mcp_userdata_free_fn, Userdata};
use super::status::{mcp_status, MCP_IO, MCP_REENTRANT_CALL};
use crate::base::event_fd::EventFd;
use std::collections::VecDeque;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::ThreadId;

/// Called (on a library thread, no library lock held) when the queue goes from empty to
/// non-empty: it must only signal the host's loop (e.g. `uv_async_send`,
/// `loop.call_soon_threadsafe`), never dispatch itself.
pub type mcp_wakeup_fn = Option<unsafe extern "C" fn(userdata: *mut c_void)>;

type Wakeup = (unsafe extern "C" fn(*mut c_void), Arc<Userdata>);

/// `HostQueue::state`: the jobs waiting, counted in steps of `ONE`, and `SIGNALLED`, set while
/// the descriptor is readable.
const SIGNALLED: u64 = 1;
const ONE: u64 = 2;

/// The jobs travel through a lock-free channel and a counter, so the runtime thread queuing a
/// completion never waits for the host thread (a lock shared by the two made each wait for the
/// other's system calls, and for the other being descheduled while holding it, under load).
/// Readiness follows the counter: the push taking it from 0 to 1 writes the descriptor and sets
/// `SIGNALLED`; the dispatch taking it back to 0 clears `SIGNALLED` and drains the descriptor.
/// Both happen under `fds`' lock, so the descriptor is readable exactly while work waits; while
/// a push that took the counter from 0 has not written yet, a dispatch runs nothing (the
/// descriptor becomes readable at once).
pub(crate) struct HostQueue {
    tx: mpsc::Sender<Job>,
    /// Taken by `close`; the dispatching thread locks it only to receive its batch.
    rx: Mutex<Option<mpsc::Receiver<Job>>>,
    state: AtomicU64,
    /// The descriptor; `None` once closed.
    fds: Mutex<Option<EventFd>>,
    /// The thread inside `mcp_client_dispatch`, if any (re-entrancy and "on the loop thread").
    dispatching: Mutex<Option<ThreadId>>,
    wakeup: Mutex<Option<Wakeup>>,
    /// Set by `close`: a dispatch in progress stops running its batch.
    closed: AtomicBool,
    /// The dispatcher's count of jobs posted and not finished: given back as each job runs or
    /// drops (a wrapper per job would cost an allocation per delivery).
    queued: Arc<AtomicUsize>,
    /// The last batch's emptied buffer, reused for the next (no allocation per dispatch).
    spare: Mutex<VecDeque<Job>>,
}

impl HostQueue {
    fn new(queued: Arc<AtomicUsize>) -> std::io::Result<HostQueue> {
        let (tx, rx) = mpsc::channel();
        Ok(HostQueue {
            tx,
            rx: Mutex::new(Some(rx)),
            state: AtomicU64::new(0),
            fds: Mutex::new(Some(EventFd::open()?)),
            dispatching: Mutex::new(None),
            wakeup: Mutex::new(None),
            closed: AtomicBool::new(false),
            queued,
            spare: Mutex::new(VecDeque::new()),
        })
    }

    pub fn fd(&self) -> c_int {
        self.fds.lock().unwrap().as_ref().map_or(-1, EventFd::fd)
    }

    /// Queues a job; the descriptor becomes readable (and the wakeup runs) on empty → non-empty.
    /// Handed back once closed (the caller drops it outside its locks).
    ///
    /// Pushed from a task on a runtime (a started call completing), the signal waits for a task
    /// spawned behind the ones already ready there: the completions of one batch of answers are
    /// then announced once, so the host wakes for all of them instead of for the first one and
    /// again for the rest.
    pub fn push(self: &Arc<Self>, job: Job) -> Result<(), Job> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(job);
        }
        self.tx.send(job).map_err(|e| e.0)?;
        if self.state.fetch_add(ONE, Ordering::SeqCst) != 0 {
            return Ok(()); // readable already, or made so by the push that found it empty
        }
        // Inside a task only: that thread drives the runtime, so the spawned task runs this turn.
        match tokio::task::try_id().and_then(|_| tokio::runtime::Handle::try_current().ok()) {
            Some(runtime) => {
                let later = SignalLater(self.clone());
                drop(runtime.spawn(crate::base::boxed(async move { drop(later) })));
            }
            None => self.signal(),
        }
        Ok(())
    }

    /// Makes the descriptor readable and runs the wakeup (the push that found the queue empty).
    fn signal(&self) {
        {
            // Marked before the write: whoever sees the descriptor readable finds the mark.
            let fds = self.fds.lock().unwrap();
            self.state.fetch_or(SIGNALLED, Ordering::SeqCst);
            if let Some(fd) = fds.as_ref() {
                fd.signal();
            }
        }
        let wakeup = self.wakeup.lock().unwrap().clone();
        if let Some((f, ud)) = wakeup {
            contain(|| {
                // SAFETY: host callback with its own userdata; no library lock is held.
                unsafe { f(ud.ptr()) }
            });
        }
    }

    pub fn is_current(&self) -> bool {
        *self.dispatching.lock().unwrap() == Some(std::thread::current().id())
    }

    /// Runs at most `max` queued jobs (0: those queued at entry) on this thread; the number
    /// still queued afterwards. `None` when a dispatch is already running (re-entry).
    fn dispatch(&self, max: u32) -> Option<usize> {
        {
            let mut d = self.dispatching.lock().unwrap();
            if d.is_some() {
                return None;
            }
            *d = Some(std::thread::current().id());
        }
        let left = super::engine::hold_starts(|| self.run_batch(max));
        *self.dispatching.lock().unwrap() = None;
        Some(left)
    }

    fn run_batch(&self, max: u32) -> usize {
        let state = self.state.load(Ordering::SeqCst);
        let waiting = (state / ONE) as usize;
        if state & SIGNALLED == 0 {
            // Empty, or its first push has not made the descriptor readable yet (a completion
            // announced at the end of the runtime's turn): nothing to run until it is, and
            // nothing reported, so a host looping while jobs remain waits on the descriptor.
            return 0;
        }
        let n = if max == 0 { waiting } else { waiting.min(max as usize) };
        let mut batch = std::mem::take(&mut *self.spare.lock().unwrap());
        if let Some(rx) = self.rx.lock().unwrap().as_ref() {
            // Each counted job was sent before it was counted: all n are in the channel.
            batch.extend(rx.try_iter().take(n));
        }
        let taken = batch.len() as u64;
        while let Some(job) = batch.pop_front() {
            contain(job);
            self.queued.fetch_sub(1, Ordering::SeqCst);
            if self.closed.load(Ordering::SeqCst) {
                break; // a callback freed the client: the rest is dropped (completions still run)
            }
        }
        for job in batch.drain(..) {
            contain(|| drop(job));
            self.queued.fetch_sub(1, Ordering::SeqCst);
        }
        *self.spare.lock().unwrap() = batch;
        // Give the batch back from the count; the dispatch that empties it drains the
        // descriptor, under the lock a push finding it empty takes before writing.
        let fds = self.fds.lock().unwrap();
        let mut cur = self.state.load(Ordering::SeqCst);
        loop {
            let next = if cur / ONE == taken { 0 } else { cur - taken * ONE };
            match self
                .state
                .compare_exchange(cur, next, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => {
                    if let (0, Some(fd)) = (next, fds.as_ref()) {
                        fd.drain();
                    }
                    return (next / ONE) as usize;
                }
                Err(actual) => cur = actual,
            }
        }
    }

    /// No job is queued after this; the ones waiting are dropped on this thread (completions
    /// deliver themselves when dropped, see `call`), then the descriptor is closed.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.fds.lock().unwrap().take(); // closes the descriptor
        let rx = self.rx.lock().unwrap().take();
        if let Some(rx) = rx {
            for job in rx.try_iter() {
                contain(|| drop(job));
                self.queued.fetch_sub(1, Ordering::SeqCst);
            }
            // A push racing this one is dropped with the channel (its delivery runs here), or
            // finds it gone and is handed back to its caller.
            contain(|| drop(rx));
        }
        self.wakeup.lock().unwrap().take();
    }
}

/// Signals its queue when dropped: run as a task, or dropped unrun by a runtime shutting down.
struct SignalLater(Arc<HostQueue>);

impl Drop for SignalLater {
    fn drop(&mut self) {
        self.0.signal();
    }
}

/// Switches `client` to host-loop delivery and writes the descriptor to watch for reading
/// (an eventfd on Linux, a pipe on other Unix systems; on Windows a manual-reset event's
/// `HANDLE` in the int: `(HANDLE)(intptr_t)fd`, to wait on with `WaitForSingleObject` or
/// `MsgWaitForMultipleObjects`; signaled while work is queued. Owned by the client, closed by
/// `mcp_client_free`, so stop watching it before freeing). From then on every callback of this client —
/// completions of started calls, input handlers, listeners, progress — runs only inside
/// `mcp_client_dispatch` on the host's thread, never on a library thread. Call it once, right
/// after `mcp_client_new` (callbacks already queued for the dispatcher thread still run there);
/// again it returns the same descriptor. Blocking calls stay usable, but an input handler or
/// progress callback they need runs only when the host dispatches: host-loop programs should
/// use the started calls (`*_start`).
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_use_host_loop(
    client: *mut mcp_client,
    fd_out: *mut c_int,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        on_client(client, |fc| {
            let fd_out = out(fd_out, "fd_out")?;
            let queue = fc
                .dispatcher
                .use_host(HostQueue::new)
                .map_err(|e| Failure::new(MCP_IO, format!("cannot create the event descriptor: {e}")))?;
            *fd_out = queue.fd();
            Ok(())
        })
    })
}

/// Optional for host-loop clients: `wakeup` runs (on a library thread, no lock held) each time
/// work is queued onto an empty queue; use it where the descriptor cannot be watched (e.g. to
/// call `uv_async_send`). Wakeups coalesce: on each, dispatch until nothing remains. NULL
/// removes it. `userdata_free` runs exactly once. `MCP_INVALID_ARG` before
/// `mcp_client_use_host_loop`.
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_set_wakeup(
    client: *mut mcp_client,
    wakeup: mcp_wakeup_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let userdata = Userdata::new(userdata, userdata_free);
        on_client(client, move |fc| {
            let queue = fc
                .dispatcher
                .host()
                .ok_or_else(|| Failure::invalid("call mcp_client_use_host_loop first"))?;
            *queue.wakeup.lock().unwrap() = wakeup.map(|f| (f, userdata));
            Ok(())
        })
    })
}

/// Runs queued callbacks on the calling thread: at most `max` (0: all that were queued when it
/// started). `*remaining_out` (may be NULL) gets how many still wait; while it is non-zero the
/// descriptor stays readable (level-triggered loops need nothing more; edge-triggered ones
/// dispatch again). Callbacks count from the moment the descriptor announces them: completions
/// of started calls are announced when the library's runtime ends its turn, all of one turn at
/// once, and calls started by the callbacks of one dispatch are sent when it returns. Spurious
/// calls are harmless. Callbacks may start, cancel and free calls and
/// close the client; calling this from a callback or a wakeup returns `MCP_REENTRANT_CALL`, as
/// does a second thread dispatching the same client at the same time. `MCP_INVALID_ARG` for a
/// client not in host-loop mode.
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_dispatch(
    client: *mut mcp_client,
    max: u32,
    remaining_out: *mut usize,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        on_client(client, |fc| {
            // Our own reference: a callback may free the client while this runs.
            let queue =
                fc.dispatcher.host().cloned().ok_or_else(|| {
                    Failure::invalid("the client is not in host-loop mode (mcp_client_use_host_loop)")
                })?;
            let left = queue.dispatch(max).ok_or_else(|| {
                Failure::new(
                    MCP_REENTRANT_CALL,
                    "mcp_client_dispatch was called from a callback, or while another thread dispatches",
                )
            })?;
            put(remaining_out, left);
            Ok(())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering::SeqCst;

    fn poll_in(fd: c_int, timeout_ms: c_int) -> bool {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: polls the event descriptor (the queue's, open) through a local pollfd.
        unsafe { libc::poll(&mut p, 1, timeout_ms) == 1 }
    }

    /// Counts a job as finished when it runs or is dropped unrun (as a delivery does).
    struct Finish(Arc<AtomicUsize>);

    impl Drop for Finish {
        fn drop(&mut self) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    fn job(ran: &Arc<AtomicUsize>, finished: &Arc<AtomicUsize>) -> Job {
        let (ran, finish) = (ran.clone(), Finish(finished.clone()));
        Box::new(move || {
            let _finish = finish;
            ran.fetch_add(1, SeqCst);
        })
    }

    /// Pushes from several threads race the dispatching thread (bounded and unbounded batches):
    /// each job runs once, the descriptor is readable whenever work waits (no lost wake-up), and
    /// once everything ran it is not readable.
    #[test]
    fn pushes_racing_dispatch_lose_no_wakeup() {
        const THREADS: usize = 4;
        const PER: usize = 20_000;
        let queued = Arc::new(AtomicUsize::new(THREADS * PER));
        let q = Arc::new(HostQueue::new(queued.clone()).unwrap());
        let (ran, finished) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let pushers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (q, ran, finished) = (q.clone(), ran.clone(), finished.clone());
                std::thread::spawn(move || {
                    for i in 0..PER {
                        assert!(q.push(job(&ran, &finished)).is_ok());
                        if i % 97 == t {
                            std::thread::yield_now(); // let the queue run empty now and then
                        }
                    }
                })
            })
            .collect();
        let fd = q.fd();
        let mut round = 0u32;
        while ran.load(SeqCst) < THREADS * PER {
            if !poll_in(fd, 100) {
                // Nothing readable: then nothing may wait, bar a push between its count and its
                // write, which makes the descriptor readable at once.
                if q.state.load(SeqCst) / ONE > 0 {
                    assert!(poll_in(fd, 5000), "work waits but the descriptor stays unreadable");
                }
                continue;
            }
            round += 1;
            let left = q.dispatch(round % 4).unwrap(); // 0: all waiting; else at most 1..3
            assert!(left <= THREADS * PER);
        }
        for p in pushers {
            p.join().unwrap();
        }
        assert_eq!(q.dispatch(0), Some(0));
        assert_eq!(ran.load(SeqCst), THREADS * PER);
        assert_eq!(finished.load(SeqCst), THREADS * PER);
        assert_eq!(queued.load(SeqCst), 0);
        assert!(!poll_in(fd, 0), "readable with nothing queued");
    }

    /// Pushed from inside a task, the jobs are announced once, when the runtime's turn reaches
    /// the signalling task: until then the descriptor is not readable and a dispatch runs and
    /// reports nothing; afterwards one dispatch runs them all.
    #[test]
    fn pushes_from_a_task_are_announced_at_the_end_of_the_turn() {
        let queued = Arc::new(AtomicUsize::new(10));
        let q = Arc::new(HostQueue::new(queued.clone()).unwrap());
        let (ran, finished) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let fd = q.fd();
        let (tq, tran, tfinished) = (q.clone(), ran.clone(), finished.clone());
        rt.block_on(async move {
            tokio::spawn(async move {
                for _ in 0..10 {
                    assert!(tq.push(job(&tran, &tfinished)).is_ok());
                }
                assert!(!poll_in(fd, 0), "readable before the turn ended");
                assert_eq!(tq.dispatch(0), Some(0), "a dispatch reported unannounced jobs");
            })
            .await
            .unwrap();
            tokio::task::yield_now().await; // the signalling task's turn
        });
        assert!(poll_in(fd, 5000), "never announced");
        assert_eq!(ran.load(SeqCst), 0);
        assert_eq!(q.dispatch(0), Some(0));
        assert_eq!(ran.load(SeqCst), 10);
        assert_eq!(queued.load(SeqCst), 0);
        assert!(!poll_in(fd, 0), "readable with nothing queued");
    }

    /// Pushes racing `close`: every job runs, is dropped by the close, or is handed back to its
    /// pusher (who drops it) — none stays in the queue — and nothing is queued after close.
    #[test]
    fn pushes_racing_close_are_never_lost() {
        for _ in 0..20 {
            const THREADS: usize = 3;
            const PER: usize = 2_000;
            let queued = Arc::new(AtomicUsize::new(THREADS * PER));
            let q = Arc::new(HostQueue::new(queued).unwrap());
            let (ran, finished) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
            let pushers: Vec<_> = (0..THREADS)
                .map(|_| {
                    let (q, ran, finished) = (q.clone(), ran.clone(), finished.clone());
                    std::thread::spawn(move || {
                        for _ in 0..PER {
                            // A refused job comes back and is dropped here (finished all the same).
                            drop(q.push(job(&ran, &finished)));
                        }
                    })
                })
                .collect();
            while ran.load(SeqCst) < PER / 2 {
                q.dispatch(0).unwrap();
            }
            q.close();
            for p in pushers {
                p.join().unwrap();
            }
            assert_eq!(finished.load(SeqCst), THREADS * PER, "a job stayed in the closed queue");
            let before = ran.load(SeqCst);
            q.dispatch(0).unwrap();
            assert_eq!(ran.load(SeqCst), before, "a job ran after close");
        }
    }
}
