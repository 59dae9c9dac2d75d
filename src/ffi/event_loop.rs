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
use std::collections::VecDeque;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

/// Called (on a library thread, no library lock held) when the queue goes from empty to
/// non-empty: it must only signal the host's loop (e.g. `uv_async_send`,
/// `loop.call_soon_threadsafe`), never dispatch itself.
pub type mcp_wakeup_fn = Option<unsafe extern "C" fn(userdata: *mut c_void)>;

type Wakeup = (unsafe extern "C" fn(*mut c_void), Arc<Userdata>);

struct Queue {
    jobs: VecDeque<Job>,
    /// The descriptor pair (read end, write end; the same eventfd twice on Linux); -1 once closed.
    fds: (c_int, c_int),
}

pub(crate) struct HostQueue {
    queue: Mutex<Queue>,
    /// The thread inside `mcp_client_dispatch`, if any (re-entrancy and "on the loop thread").
    dispatching: Mutex<Option<ThreadId>>,
    wakeup: Mutex<Option<Wakeup>>,
    /// Set by `close`: a dispatch in progress stops running its batch.
    closed: AtomicBool,
    /// The dispatcher's count of jobs posted and not finished: given back as each job runs or
    /// drops (a wrapper per job would cost an allocation per delivery).
    queued: Arc<AtomicUsize>,
    /// The last batch's emptied buffer, swapped in for the next (no allocation per dispatch).
    spare: Mutex<VecDeque<Job>>,
}

impl HostQueue {
    fn new(queued: Arc<AtomicUsize>) -> std::io::Result<HostQueue> {
        Ok(HostQueue {
            queue: Mutex::new(Queue {
                jobs: VecDeque::new(),
                fds: open_fds()?,
            }),
            dispatching: Mutex::new(None),
            wakeup: Mutex::new(None),
            closed: AtomicBool::new(false),
            queued,
            spare: Mutex::new(VecDeque::new()),
        })
    }

    pub fn fd(&self) -> c_int {
        self.queue.lock().unwrap().fds.0
    }

    /// Queues a job; the descriptor becomes readable (and the wakeup runs) on empty → non-empty.
    /// False once closed (the job is handed back dropped by the caller).
    pub fn push(&self, job: Job) -> Result<(), Job> {
        let first = {
            let mut q = self.queue.lock().unwrap();
            if q.fds.0 < 0 {
                return Err(job);
            }
            q.jobs.push_back(job);
            if q.jobs.len() == 1 {
                signal(q.fds.1);
                true
            } else {
                false
            }
        };
        if first {
            let wakeup = self.wakeup.lock().unwrap().clone();
            if let Some((f, ud)) = wakeup {
                contain(|| {
                    // SAFETY: host callback with its own userdata; no library lock is held.
                    unsafe { f(ud.ptr()) }
                });
            }
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.queue.lock().unwrap().jobs.len()
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
        // One batch per lock: the runtime thread pushes while this runs. All that waits is
        // taken by swapping buffers; a bounded batch moves its part out.
        let mut batch = std::mem::take(&mut *self.spare.lock().unwrap());
        {
            let mut q = self.queue.lock().unwrap();
            if max == 0 || q.jobs.len() <= max as usize {
                std::mem::swap(&mut q.jobs, &mut batch);
            } else {
                batch.extend(q.jobs.drain(..max as usize));
            }
            if q.jobs.is_empty() && q.fds.0 >= 0 {
                drain(q.fds.0); // readable exactly while work waits
            }
        }
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
        *self.dispatching.lock().unwrap() = None;
        Some(self.len())
    }

    /// No job is queued after this; the ones waiting are dropped on this thread (completions
    /// deliver themselves when dropped, see `call`), then the descriptor is closed.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let jobs = {
            let mut q = self.queue.lock().unwrap();
            let fds = std::mem::replace(&mut q.fds, (-1, -1));
            close_fds(fds);
            std::mem::take(&mut q.jobs)
        };
        for job in jobs {
            contain(|| drop(job));
            self.queued.fetch_sub(1, Ordering::SeqCst);
        }
        self.wakeup.lock().unwrap().take();
    }
}

impl Drop for HostQueue {
    fn drop(&mut self) {
        let q = self.queue.get_mut().unwrap();
        close_fds(std::mem::replace(&mut q.fds, (-1, -1)));
    }
}

#[cfg(target_os = "linux")]
fn open_fds() -> std::io::Result<(c_int, c_int)> {
    // SAFETY: creates the event descriptor (a plain syscall, no pointers).
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((fd, fd))
}

#[cfg(not(target_os = "linux"))]
fn open_fds() -> std::io::Result<(c_int, c_int)> {
    let mut fds = [0 as c_int; 2];
    // SAFETY: creates the event descriptor (syscalls on descriptors the queue owns).
    unsafe {
        if libc::pipe(fds.as_mut_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        for fd in fds {
            libc::fcntl(fd, libc::F_SETFL, libc::fcntl(fd, libc::F_GETFL) | libc::O_NONBLOCK);
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    Ok((fds[0], fds[1]))
}

fn close_fds((r, w): (c_int, c_int)) {
    // SAFETY: closes the event descriptor, owned by the queue, once (replaced by -1 first).
    unsafe {
        if r >= 0 {
            libc::close(r);
        }
        if w >= 0 && w != r {
            libc::close(w);
        }
    }
}

fn signal(fd: c_int) {
    let one: u64 = 1;
    // SAFETY: writes to the event descriptor from a local (8 bytes: an eventfd increment; a pipe
    // takes 1). A full pipe or counter already means "readable", so the result does not matter.
    unsafe {
        libc::write(
            fd,
            (&one as *const u64).cast(),
            if cfg!(target_os = "linux") { 8 } else { 1 },
        )
    };
}

fn drain(fd: c_int) {
    let mut buf = [0u8; 64];
    // SAFETY: reads the event descriptor (non-blocking) into a local buffer until it is empty.
    // One read empties an eventfd (it returns and resets the whole counter); a pipe may need more.
    unsafe {
        while libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) > 0 {
            if cfg!(target_os = "linux") {
                break;
            }
        }
    }
}

/// Switches `client` to host-loop delivery and writes the descriptor to watch for reading
/// (an eventfd on Linux, a pipe elsewhere; owned by the client, closed by `mcp_client_free`,
/// so stop watching it before freeing). From then on every callback of this client —
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
/// dispatch again). Spurious calls are harmless. Callbacks may start, cancel and free calls and
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
