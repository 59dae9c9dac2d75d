//! Starting the stdio server and learning when it exits, without any signal handler.
//!
//! tokio's process driver reaps children through pidfd where the kernel offers it and otherwise
//! installs a SIGCHLD handler (without `SA_ONSTACK`). A Go host aborts on such a handler ("non-Go
//! code set up signal handler without SA_ONSTACK flag"), and any host may own SIGCHLD itself.
//! So the library never uses tokio's process driver (the `process` feature is off): the child
//! is started with `std::process`, its pipes join the reactor as plain pipes, and the process's
//! one reaper thread (`reaper`) waits for it. Safe on every host by construction.

use std::io;
use std::os::fd::OwnedFd;
use std::process::{Command, ExitStatus};
use tokio::net::unix::pipe;
use tokio::sync::watch;

/// A started child: its pid (also its process group), its pipes, and its exit status once
/// reaped (`None` until then).
pub(crate) struct Child {
    pub pid: i32,
    pub stdin: OwnedFd,
    pub stdout: pipe::Receiver,
    pub stderr: pipe::Receiver,
    pub exit: watch::Receiver<Option<ExitStatus>>,
}

/// Spawns `cmd` (whose stdio must all be piped) and hands it to the reaper. Needs a runtime
/// context (the pipes join its reactor).
pub(crate) fn spawn(cmd: &mut Command) -> io::Result<Child> {
    let mut child = cmd.spawn()?;
    let pid = child.id() as i32;
    let taken = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let (Some(stdin), Some(stdout), Some(stderr)) = taken else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(io::Error::other("the child's stdio is not piped"));
    };
    let pipes = (|| {
        let stdout = pipe::Receiver::from_owned_fd(OwnedFd::from(stdout))?;
        let stderr = pipe::Receiver::from_owned_fd(OwnedFd::from(stderr))?;
        Ok::<_, io::Error>((stdout, stderr))
    })();
    let (exit_tx, exit) = watch::channel(None);
    // Reaped whatever happens next, so no zombie is left behind: by the process's one reaper
    // thread (`reaper`).
    if let Err(e) = super::reaper::watch(child, exit_tx) {
        // SAFETY: plain syscall on the group we just created (the child is not reaped: no
        // thread could be started, so its zombie stays, as any unreaped child would).
        unsafe { libc::killpg(pid, libc::SIGKILL) };
        return Err(e);
    }
    let (stdout, stderr) = match pipes {
        Ok(p) => p,
        Err(e) => {
            // SAFETY: plain syscall on the group we just created.
            unsafe { libc::killpg(pid, libc::SIGKILL) };
            return Err(e);
        }
    };
    Ok(Child {
        pid,
        stdin: OwnedFd::from(stdin),
        stdout,
        stderr,
        exit,
    })
}
