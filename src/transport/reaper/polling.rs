//! The portable reaper: one thread checks every child with `waitpid(WNOHANG)` (`try_wait`).
//! POSIX has no descriptor for a child's exit other than SIGCHLD, which the host owns, so the
//! thread looks on a timer that backs off from `FAST` to `SLOW` while nothing happens, and
//! `nudge` (a byte on a pipe) restarts it at `FAST` when an exit is expected. An idle process
//! with servers wakes once per `SLOW`; a process without children not at all.

use crate::base::event_fd::EventFd;
use std::process::{Child, ExitStatus};
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::watch;

/// The first look after a nudge or a new child.
const FAST: Duration = Duration::from_millis(2);
/// The longest gap between looks: how late an unexpected exit (a server that dies while
/// another process holds its stdout open) is noticed at worst.
const SLOW: Duration = Duration::from_millis(1000);

struct Watched {
    child: Child,
    exit: watch::Sender<Option<ExitStatus>>,
}

struct Reaper {
    /// The process that started the thread (a forked child needs its own: threads do not fork).
    pid: u32,
    new: Mutex<Vec<Watched>>,
    wake: EventFd,
}

static REAPER: Mutex<Option<&'static Reaper>> = Mutex::new(None);

/// Hands `child` to the reaper thread, started on first use.
pub(super) fn watch(child: Child, exit: watch::Sender<Option<ExitStatus>>) -> std::io::Result<()> {
    let reaper = reaper()?;
    reaper
        .new
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Watched { child, exit });
    reaper.wake.signal();
    Ok(())
}

/// Makes the thread look now and then poll fast again (no-op before its first child).
pub(super) fn nudge() {
    let slot = REAPER.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(r) = *slot {
        if r.pid == std::process::id() {
            r.wake.signal();
        }
    }
}

fn reaper() -> std::io::Result<&'static Reaper> {
    let mut slot = REAPER.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    if let Some(r) = *slot {
        if r.pid == pid {
            return Ok(r);
        }
    }
    // Lives for the process, like its thread (a parent's, in a forked child, is left alone).
    let r: &'static Reaper = Box::leak(Box::new(Reaper {
        pid,
        new: Mutex::new(Vec::new()),
        wake: EventFd::open()?,
    }));
    std::thread::Builder::new()
        .name("mcp-reaper".into())
        .stack_size(64 * 1024)
        .spawn(move || run(r))?;
    *slot = Some(r);
    Ok(r)
}

fn run(r: &'static Reaper) {
    let mut watched: Vec<Watched> = Vec::new();
    let mut gap = FAST;
    loop {
        watched.append(&mut r.new.lock().unwrap_or_else(|e| e.into_inner()));
        watched.retain_mut(|w| match w.child.try_wait() {
            Ok(None) => true,
            done => {
                let _ = w.exit.send(done.ok().flatten());
                false
            }
        });
        // No child: sleep until one is added.
        let timeout = if watched.is_empty() {
            -1
        } else {
            gap.as_millis() as libc::c_int
        };
        let mut fd = libc::pollfd {
            fd: r.wake.fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let woken = unsafe { libc::poll(&mut fd, 1, timeout) } > 0;
        if woken {
            r.wake.drain();
            gap = FAST;
        } else {
            gap = (gap * 2).min(SLOW);
        }
    }
}
