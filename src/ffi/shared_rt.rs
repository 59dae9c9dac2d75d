//! The shared runtime: clients created with `"runtime": "shared"` (or
//! `mcp_config_set_runtime(config, MCP_RUNTIME_SHARED)`) use a process-wide set of
//! [`RUNTIMES`] engines (`ffi/engine`: a current-thread runtime and its driver thread each) and
//! one dispatcher thread for all their callbacks. Library threads then stay flat however many
//! clients a host connects (an isolated client owns its driver thread and, once a callback has
//! run, a dispatcher thread: ~59 KiB resident when idle with both, against ~25 KiB for a shared
//! one; `bench/results/many.md`).
//!
//! A client is pinned to one engine (round robin) for its life, so its tasks, pipes and timers
//! stay on one runtime. The engine works as for an isolated client: a caller alone in a call on
//! that runtime (whichever client it calls) drives it, so the reply is read on its own thread;
//! the driver thread drives while calls overlap and between calls. One dispatcher thread runs every shared client's
//! callbacks in the order they were posted, so each client's callbacks stay serial; a slow
//! callback delays other clients' callbacks too (that is what isolation is for).
//!
//! Fork: the threads do not exist in a forked child, so the set is made per fork generation
//! (the parent's set is leaked in the child, never touched).

use super::boundary::{contain, ffi_boundary, handle_mut};
use super::config::mcp_config;
use super::dispatcher::Job;
use super::engine::OwnEngine;
use super::error::{mcp_error, Failure};
use super::status::{mcp_status, MCP_INVALID_ARG};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::ThreadId;

/// Each client owns its runtime thread and, from its first callback on, its dispatcher thread
/// (the default).
pub const MCP_RUNTIME_ISOLATED: i32 = 0;
/// The client shares the process-wide runtime threads and dispatcher thread.
pub const MCP_RUNTIME_SHARED: i32 = 1;

/// Engines of the shared set: enough that one busy runtime does not serialize every client's
/// I/O, few enough that a 2-core host is not oversubscribed.
const RUNTIMES: usize = 2;

/// The process-wide set for one fork generation.
pub(crate) struct Pool {
    runtimes: Vec<Arc<OwnEngine>>,
    next: Mutex<usize>,
    dispatch_tx: Mutex<mpsc::Sender<Job>>,
    dispatch_thread: ThreadId,
}

impl Pool {
    fn start() -> std::io::Result<Pool> {
        // Never shut down: they live as long as the process (or are leaked in a forked child).
        let runtimes = (0..RUNTIMES)
            .map(|_| OwnEngine::start(true).and_then(OwnEngine::with_driver).map(Arc::new))
            .collect::<std::io::Result<Vec<_>>>()?;
        let (tx, rx) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("mcp-shared-dispatch".into())
            .spawn(move || {
                for job in rx {
                    contain(job);
                }
            })?;
        Ok(Pool {
            runtimes,
            next: Mutex::new(0),
            dispatch_tx: Mutex::new(tx),
            dispatch_thread: thread.thread().id(),
        })
    }

    /// The engine a new client is pinned to.
    pub fn runtime(&self) -> Arc<OwnEngine> {
        let mut next = self.next.lock().unwrap();
        *next = (*next + 1) % self.runtimes.len();
        self.runtimes[*next].clone()
    }

    /// A sender onto the shared dispatcher thread.
    pub fn dispatcher(&self) -> (mpsc::Sender<Job>, ThreadId) {
        (self.dispatch_tx.lock().unwrap().clone(), self.dispatch_thread)
    }
}

/// The set for this fork generation, started on first use.
pub(crate) fn pool() -> std::io::Result<Arc<Pool>> {
    static POOL: Mutex<Option<(u64, Arc<Pool>)>> = Mutex::new(None);
    let generation = super::fork::generation();
    let mut slot = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((made, pool)) = slot.as_ref() {
        if *made == generation {
            return Ok(pool.clone());
        }
    }
    let pool = Arc::new(Pool::start()?);
    if let Some(old) = slot.replace((generation, pool.clone())) {
        std::mem::forget(old); // the parent's: its threads are not in this process
    }
    Ok(pool)
}

/// Whether a configuration asks for the shared runtime (`"runtime": "shared"`; checked by
/// `ClientConfig::from_json`).
pub(crate) fn wants_shared(settings: &serde_json::Map<String, serde_json::Value>) -> bool {
    settings.get("runtime").and_then(|v| v.as_str()) == Some("shared")
}

/// `MCP_RUNTIME_ISOLATED` (default: the client owns a runtime thread and, once a callback runs, a dispatcher thread,
/// and a lone caller drives the runtime itself: lowest latency) or `MCP_RUNTIME_SHARED` (the
/// client uses the process-wide runtime and dispatcher threads: threads stay flat as clients
/// grow; every shared client's callbacks run on one thread, in order, so a slow callback
/// delays other shared clients' callbacks, and a blocking call from any shared client's
/// callback is `MCP_REENTRANT_CALL`). Same as the `"runtime": "isolated" | "shared"` key.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_set_runtime(
    config: *mut mcp_config,
    runtime: i32,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let config = handle_mut(config, "config")?;
        let value = match runtime {
            MCP_RUNTIME_ISOLATED => "isolated",
            MCP_RUNTIME_SHARED => "shared",
            other => {
                return Err(Failure::new(
                    MCP_INVALID_ARG,
                    format!("unknown runtime {other} (MCP_RUNTIME_ISOLATED or MCP_RUNTIME_SHARED)"),
                ))
            }
        };
        config.settings.insert("runtime".into(), value.into());
        Ok(())
    })
}
