//! The runtime behind one C-ABI client, and who drives it.
//!
//! The runtime is a current-thread tokio runtime. A host thread blocked in a call drives it
//! itself (I/O, timers, tasks), so the reply to its request is read, decoded and delivered on
//! that same thread: no wake-up of a worker thread by the kernel followed by a second wake-up of
//! the caller, which is what a multi-thread runtime costs per call. Several host threads may
//! call at once: one of them drives, the others are woken when their answers arrive (tokio
//! hands the runtime to the next waiting thread when the driving one returns).
//!
//! Between calls the client's driver thread (`mcp-runtime`) drives the runtime, so background
//! work goes on: server output and exits, listeners, subscriptions, deferred responders. It takes
//! over only after no call has started for [`IDLE_GRACE`], so back-to-back calls never hand the
//! runtime back and forth; a call that starts while the driver drives asks it to stand down and
//! takes over (one hand-off, on the first call after an idle period).

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use tokio::runtime::Runtime;
use tokio::sync::Notify;

/// How long the runtime must have seen no new call before the driver thread drives it; also how
/// often the driver looks while calls are running.
const IDLE_GRACE: Duration = Duration::from_millis(5);

struct Shared {
    runtime: Runtime,
    /// Host threads inside `block_on`.
    active: AtomicUsize,
    /// Calls started so far (tells the driver whether calls came and went while it slept).
    entries: AtomicU64,
    /// The driver thread is driving (or about to).
    driving: AtomicBool,
    /// Asks the driver to give the runtime back.
    release: Notify,
    stop: AtomicBool,
}

pub(crate) struct Engine {
    shared: Arc<Shared>,
    driver: Option<JoinHandle<()>>,
}

impl Engine {
    pub fn start() -> std::io::Result<Engine> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let shared = Arc::new(Shared {
            runtime,
            active: AtomicUsize::new(0),
            entries: AtomicU64::new(0),
            driving: AtomicBool::new(false),
            release: Notify::new(),
            stop: AtomicBool::new(false),
        });
        let for_driver = shared.clone();
        let driver = std::thread::Builder::new()
            .name("mcp-runtime".into())
            .spawn(move || drive(&for_driver))?;
        Ok(Engine {
            shared,
            driver: Some(driver),
        })
    }

    /// Runs `fut` to completion on the calling thread, driving the runtime meanwhile (or, when
    /// another caller drives it, being woken by that caller).
    pub fn block_on<F: Future>(&self, fut: F) -> F::Output {
        let s = &*self.shared;
        s.entries.fetch_add(1, SeqCst);
        s.active.fetch_add(1, SeqCst);
        let _active = Active(&s.active);
        if s.driving.load(SeqCst) {
            s.release.notify_one();
        }
        s.runtime.block_on(fut)
    }

    /// Starts a task; it runs while any thread drives the runtime.
    pub fn spawn<F>(&self, fut: F)
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.shared.runtime.spawn(fut);
    }

    /// Stops the driver thread, then the runtime (waiting at most `timeout` for blocking work).
    /// Not from a thread inside `block_on`. Every engine ends here or in `leak`.
    pub fn shutdown(self, timeout: Duration) {
        let Engine { shared, driver } = self;
        shared.stop.store(true, SeqCst);
        // A stored permit if the driver is not waiting yet: it then sees `stop` and returns.
        shared.release.notify_one();
        if let Some(driver) = driver {
            if driver.thread().id() == std::thread::current().id() {
                return; // inside the runtime: it cannot be shut down from here
            }
            driver.thread().unpark();
            let _ = driver.join();
        }
        if let Ok(shared) = Arc::try_unwrap(shared) {
            shared.runtime.shutdown_timeout(timeout);
        }
    }

    /// In a forked child: the driver thread does not exist there; leave everything as it is.
    pub fn leak(self) {
        std::mem::forget(self);
    }
}

struct Active<'a>(&'a AtomicUsize);

impl Drop for Active<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

/// The driver thread: drives the runtime whenever no call has started for a whole
/// `IDLE_GRACE`, until a call starts or the engine stops.
fn drive(s: &Shared) {
    let mut seen = s.entries.load(SeqCst);
    loop {
        std::thread::park_timeout(IDLE_GRACE);
        if s.stop.load(SeqCst) {
            return;
        }
        let now = s.entries.load(SeqCst);
        if now != seen || s.active.load(SeqCst) > 0 {
            seen = now;
            continue;
        }
        // Announce first, then look again: a call starting now either is seen here or sees
        // `driving` and asks for the runtime back (SeqCst orders the two).
        s.driving.store(true, SeqCst);
        if s.active.load(SeqCst) == 0 && s.entries.load(SeqCst) == now && !s.stop.load(SeqCst) {
            let _ = catch_unwind(AssertUnwindSafe(|| s.runtime.block_on(s.release.notified())));
        }
        s.driving.store(false, SeqCst);
        seen = s.entries.load(SeqCst);
    }
}
