//! Linux's reaper: each child gets a pidfd (Linux 5.3+), which becomes readable when the child
//! exits; one thread polls them all, plus a pipe that wakes it for new children, and `wait`s
//! the ones that exited. Where `pidfd_open` is unavailable the caller falls back to the
//! portable reaper (`polling`).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Child, ExitStatus};
use std::sync::Mutex;
use tokio::sync::watch;

struct Watched {
    pidfd: OwnedFd,
    child: Child,
    exit: watch::Sender<Option<ExitStatus>>,
}

struct Reaper {
    /// The process that started the thread (a forked child needs its own: threads do not fork).
    pid: u32,
    new: Mutex<Vec<Watched>>,
    wake: OwnedFd,
}

static REAPER: Mutex<Option<&'static Reaper>> = Mutex::new(None);

/// Hands `child` to the reaper thread; gives it back when this kernel has no pidfd (or the
/// thread cannot start), for the caller's fallback.
pub(crate) fn watch(
    child: Child,
    exit: watch::Sender<Option<ExitStatus>>,
) -> Result<(), (Child, watch::Sender<Option<ExitStatus>>)> {
    // SAFETY: plain system call; the descriptor returned is ours alone.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, child.id() as libc::pid_t, 0) };
    if fd < 0 {
        return Err((child, exit));
    }
    // SAFETY: `fd` is a fresh descriptor owned by nobody else.
    let pidfd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    let Some(reaper) = reaper() else {
        return Err((child, exit));
    };
    reaper
        .new
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Watched { pidfd, child, exit });
    // SAFETY: one byte into our own non-blocking pipe (full pipe: the thread is awake anyway).
    unsafe { libc::write(reaper.wake.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
    Ok(())
}

fn reaper() -> Option<&'static Reaper> {
    let mut slot = REAPER.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    if let Some(r) = *slot {
        if r.pid == pid {
            return Some(r);
        }
    }
    let mut fds = [0; 2];
    // SAFETY: plain system call filling `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return None;
    }
    // SAFETY: both descriptors are fresh and ours.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // Lives for the process, like its thread (a parent's, in a forked child, is left alone).
    let r: &'static Reaper = Box::leak(Box::new(Reaper {
        pid,
        new: Mutex::new(Vec::new()),
        wake: write,
    }));
    std::thread::Builder::new()
        .name("mcp-reaper".into())
        .spawn(move || run(r, read))
        .ok()?;
    *slot = Some(r);
    Some(r)
}

fn run(r: &'static Reaper, wake: OwnedFd) {
    let mut watched: Vec<Watched> = Vec::new();
    loop {
        watched.append(&mut r.new.lock().unwrap_or_else(|e| e.into_inner()));
        let mut fds: Vec<libc::pollfd> = std::iter::once(wake.as_raw_fd())
            .chain(watched.iter().map(|w| w.pidfd.as_raw_fd()))
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: `fds` is a valid array of its length.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if n < 0 {
            continue; // EINTR
        }
        if fds[0].revents != 0 {
            let mut buf = [0u8; 64];
            // SAFETY: reads into our buffer from our non-blocking pipe.
            while unsafe { libc::read(wake.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
        }
        let exited: Vec<bool> = fds[1..].iter().map(|p| p.revents != 0).collect();
        let mut i = 0;
        watched.retain_mut(|w| {
            let done = exited[i];
            i += 1;
            if done {
                let status = w.child.wait().ok();
                let _ = w.exit.send(status);
            }
            !done
        });
    }
}
