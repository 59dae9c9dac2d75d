//! One plain OS thread per client runs every host callback, serially, with no library lock
//! held. A slow callback therefore never stalls network I/O, and "no callback in flight" has
//! one place to be waited for. The thread starts with the first callback: a client that only
//! makes blocking calls without handlers, or one in host-loop mode, never has it. Should it
//! fail to start (the process out of threads), that callback is refused as after `stop` (a
//! started call's completion then runs where it was completed) and the next one tries again.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{JoinHandle, ThreadId};

use super::event_loop::HostQueue;

pub(crate) type Job = Box<dyn FnOnce() + Send>;

/// Listener and progress callbacks that may wait for the dispatcher thread. Past this, new
/// ones are dropped and counted (`mcp_client_dropped_callbacks`): a host callback slower than
/// the server's flow must not make the queue grow without bound. Input handlers and
/// authorization callbacks are never dropped (their number is bounded by the requests).
pub(crate) const LISTENER_QUEUE: usize = 4096;

pub(crate) struct Dispatcher {
    lane: Mutex<Lane>,
    /// The thread running this client's callbacks, once there is one.
    thread_id: OnceLock<ThreadId>,
    stopped: Arc<AtomicBool>,
    /// Jobs posted and not yet finished.
    queued: Arc<AtomicUsize>,
    dropped: AtomicU64,
    /// Host-loop mode (`ffi/event_loop`): jobs go to the host's queue instead of the thread.
    host: OnceLock<Arc<HostQueue>>,
    /// On the shared dispatcher thread (`ffi/shared_rt`): `stop` waits for this client's jobs
    /// already queued there instead of joining a thread of its own.
    shared: bool,
}

/// Where jobs go.
enum Lane {
    /// No callback yet: the own thread starts with the first one, so a client that never
    /// runs host code (blocking calls only, or host-loop mode) never has one.
    Unstarted,
    /// The own thread (with its handle) or the shared one (none).
    Running(mpsc::Sender<Job>, Option<JoinHandle<()>>),
    Stopped,
}

impl Dispatcher {
    /// A client's own dispatcher; its thread starts with the first callback posted.
    pub fn new() -> Arc<Dispatcher> {
        Dispatcher::with(Lane::Unstarted, OnceLock::new(), false)
    }

    fn with(lane: Lane, thread_id: OnceLock<ThreadId>, shared: bool) -> Arc<Dispatcher> {
        Arc::new(Dispatcher {
            lane: Mutex::new(lane),
            thread_id,
            stopped: Arc::new(AtomicBool::new(false)),
            queued: Arc::new(AtomicUsize::new(0)),
            dropped: AtomicU64::new(0),
            host: OnceLock::new(),
            shared,
        })
    }

    /// Starts the own thread (under the lane's lock).
    fn start_thread(&self) -> std::io::Result<Lane> {
        let (tx, rx) = mpsc::channel::<Job>();
        let (flag, in_queue) = (self.stopped.clone(), self.queued.clone());
        let thread = std::thread::Builder::new().name("mcp-dispatch".into()).spawn(move || {
            for job in rx {
                if !flag.load(Ordering::SeqCst) {
                    // (stopped: queued callbacks are dropped, never run)
                    super::boundary::contain(job);
                }
                in_queue.fetch_sub(1, Ordering::SeqCst);
            }
        })?;
        let _ = self.thread_id.set(thread.thread().id());
        Ok(Lane::Running(tx, Some(thread)))
    }

    /// A client's dispatcher on the shared thread: its jobs run there in posting order among
    /// every shared client's (so this client's stay serial), skipped once it stopped.
    pub fn on_shared(pool: &super::shared_rt::Pool) -> Arc<Dispatcher> {
        let (tx, thread_id) = pool.dispatcher();
        Dispatcher::with(Lane::Running(tx, None), OnceLock::from(thread_id), true)
    }

    /// Queues a callback; false once stopped or when the thread cannot start (the job is
    /// dropped unrun).
    pub fn post(&self, job: Job) -> bool {
        self.try_post(job).is_ok()
    }

    /// Queues a callback, or hands it back once stopped (or when the thread cannot start), for
    /// the caller to drop where it may (a started call's delivery runs as it drops: never under
    /// the caller's locks).
    pub fn try_post(&self, job: Job) -> Result<(), Job> {
        if self.stopped.load(Ordering::SeqCst) {
            return Err(job);
        }
        self.queued.fetch_add(1, Ordering::SeqCst);
        if let Some(host) = self.host.get() {
            // The host queue gives the count back as each job runs or drops (no wrapper).
            let pushed = host.push(job);
            if pushed.is_err() {
                self.queued.fetch_sub(1, Ordering::SeqCst);
            }
            return pushed;
        }
        let job = if self.shared {
            // What the own thread's loop does around each job.
            let (stopped, done) = (self.stopped.clone(), Queued(self.queued.clone()));
            Box::new(move || {
                let _done = done;
                if !stopped.load(Ordering::SeqCst) {
                    job()
                }
            })
        } else {
            job
        };
        let sent = {
            let mut lane = self.lane.lock().unwrap();
            if matches!(*lane, Lane::Unstarted) {
                // A thread that cannot start now is tried again with the next callback; this
                // one is handed back (as when stopped).
                if let Ok(running) = self.start_thread() {
                    *lane = running;
                }
            }
            match &*lane {
                Lane::Running(tx, _) => tx.send(job).map_err(|e| e.0),
                Lane::Unstarted | Lane::Stopped => Err(job),
            }
        };
        if sent.is_err() && !self.shared {
            // (a shared job's own `Queued` gives its count back as it drops)
            self.queued.fetch_sub(1, Ordering::SeqCst);
        }
        sent
    }

    /// Queues a listener or progress callback, unless `LISTENER_QUEUE` callbacks already
    /// wait: then it is dropped and counted.
    pub fn post_listener(&self, job: Job) -> bool {
        if self.queued.load(Ordering::SeqCst) >= LISTENER_QUEUE {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        self.post(job)
    }

    /// Waits (at most `limit`) until the callbacks queued so far have run; at once in host-loop
    /// mode (the host dispatches between its calls) or on the dispatcher itself.
    pub fn flush(&self, limit: std::time::Duration) {
        if self.host().is_some() || self.is_current() {
            return;
        }
        let (tx, rx) = std::sync::mpsc::channel();
        if self.post(Box::new(move || {
            let _ = tx.send(());
        })) {
            let _ = rx.recv_timeout(limit);
        }
    }

    /// Listener and progress callbacks dropped so far.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    pub fn is_current(&self) -> bool {
        self.thread_id.get() == Some(&std::thread::current().id()) || self.host.get().is_some_and(|h| h.is_current())
    }

    /// The host's queue, once in host-loop mode.
    pub fn host(&self) -> Option<&Arc<HostQueue>> {
        self.host.get()
    }

    /// Switches to host-loop mode (once; later calls return the same queue).
    pub fn use_host(
        &self,
        make: impl FnOnce(Arc<AtomicUsize>) -> std::io::Result<HostQueue>,
    ) -> std::io::Result<Arc<HostQueue>> {
        if let Some(host) = self.host.get() {
            return Ok(host.clone());
        }
        let queue = Arc::new(make(self.queued.clone())?);
        Ok(self.host.get_or_init(|| queue).clone())
    }

    /// No callback starts after this returns; waits for a running one unless called from it.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        if let Some(host) = self.host.get() {
            host.close();
        }
        let lane = std::mem::replace(&mut *self.lane.lock().unwrap(), Lane::Stopped);
        let Lane::Running(tx, thread) = lane else {
            return; // no callback ever posted, or stopped before
        };
        let here = std::thread::current().id();
        if self.shared {
            // Every job of this client queued before `stopped` was set runs (or is dropped
            // unrun, completing started calls as it drops) before this marker.
            if self.thread_id.get() != Some(&here) {
                let (done_tx, done) = mpsc::channel::<()>();
                if tx
                    .send(Box::new(move || {
                        let _ = done_tx.send(());
                    }))
                    .is_ok()
                {
                    let _ = done.recv();
                }
            }
            return;
        }
        drop(tx);
        if let Some(thread) = thread {
            if thread.thread().id() != here {
                let _ = thread.join();
            }
        }
    }
}

/// Counts a host-loop job as waiting until it ran or was dropped.
struct Queued(Arc<AtomicUsize>);

impl Drop for Queued {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
