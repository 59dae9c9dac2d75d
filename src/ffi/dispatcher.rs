//! One plain OS thread per client runs every host callback, serially, with no library lock
//! held. A slow callback therefore never stalls network I/O, and "no callback in flight" has
//! one place to be waited for.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::{JoinHandle, ThreadId};

pub(crate) type Job = Box<dyn FnOnce() + Send>;

pub(crate) struct Dispatcher {
    tx: Mutex<Option<mpsc::Sender<Job>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    thread_id: ThreadId,
    stopped: Arc<AtomicBool>,
}

impl Dispatcher {
    pub fn start() -> std::io::Result<Arc<Dispatcher>> {
        let (tx, rx) = mpsc::channel::<Job>();
        let stopped = Arc::new(AtomicBool::new(false));
        let flag = stopped.clone();
        let thread = std::thread::Builder::new().name("mcp-dispatch".into()).spawn(move || {
            for job in rx {
                if flag.load(Ordering::SeqCst) {
                    continue; // stopped: queued callbacks are dropped, never run
                }
                let _ = catch_unwind(AssertUnwindSafe(job));
            }
        })?;
        Ok(Arc::new(Dispatcher {
            tx: Mutex::new(Some(tx)),
            thread_id: thread.thread().id(),
            thread: Mutex::new(Some(thread)),
            stopped,
        }))
    }

    /// Queues a callback; false once stopped (the job is dropped unrun).
    pub fn post(&self, job: Job) -> bool {
        if self.stopped.load(Ordering::SeqCst) {
            return false;
        }
        match self.tx.lock().unwrap().as_ref() {
            Some(tx) => tx.send(job).is_ok(),
            None => false,
        }
    }

    pub fn is_current(&self) -> bool {
        std::thread::current().id() == self.thread_id
    }

    /// No callback starts after this returns; waits for a running one unless called from it.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.tx.lock().unwrap().take();
        let thread = self.thread.lock().unwrap().take();
        if let Some(thread) = thread {
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }
}
