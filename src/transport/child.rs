//! Starting the stdio server and learning when it exits, without any signal handler.
//!
//! tokio's process driver reaps children through pidfd where the kernel offers it and otherwise
//! installs a SIGCHLD handler (without `SA_ONSTACK`). A Go host aborts on such a handler ("non-Go
//! code set up signal handler without SA_ONSTACK flag"), and any host may own SIGCHLD itself.
//! So the library never uses tokio's process driver (the `process` feature is off): the child
//! is started with `std::process`, its pipes join the reactor as plain pipes, and the process's
//! one reaper thread (`reaper`) waits for it. Safe on every host by construction.
//!
//! The platform seam of the stdio transport: `command`, `spawn`, [`Group`] and
//! `describe_exit` have one implementation per platform (Windows: `child_windows.rs`).

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus};
use tokio::net::unix::pipe;
use tokio::sync::watch;

/// The read end of a child's stdout or stderr, on the reactor.
pub(crate) type PipeReader = pipe::Receiver;

/// A started child: its process group, its pipes, and its exit status once reaped (`None`
/// until then).
pub(crate) struct Child {
    pub group: Group,
    pub stdin: OwnedFd,
    pub stdout: PipeReader,
    pub stderr: PipeReader,
    pub exit: watch::Receiver<Option<ExitStatus>>,
}

/// Nudges the reaper: this child's exit is expected soon (its stdout ended, or it was asked to
/// stop), so the portable reaper looks at once rather than at its next back-off tick.
pub(crate) use super::reaper::expect_exit;

/// The command for `program` (looked up on `PATH` when it has no slash), in a process group of
/// its own so that shutdown reaches what it starts.
pub(crate) fn command(program: &str) -> io::Result<Command> {
    let mut cmd = Command::new(program);
    cmd.process_group(0);
    Ok(cmd)
}

/// The child's process group: what shutdown signals.
pub(crate) struct Group(i32);

impl Group {
    /// Asks every member to stop (SIGTERM).
    pub fn terminate(&self) {
        self.signal(libc::SIGTERM);
    }

    /// Stops every member now (SIGKILL).
    pub fn kill(&self) {
        self.signal(libc::SIGKILL);
    }

    fn signal(&self, signal: i32) {
        // SAFETY: plain syscall on the group we created; ESRCH (already gone) is fine.
        unsafe {
            libc::killpg(self.0, signal);
        }
        super::reaper::expect_exit();
    }

    /// Whether a member is still running.
    pub fn alive(&self) -> bool {
        // SAFETY: killpg with signal 0 only probes for existence.
        if unsafe { libc::killpg(self.0, 0) } != 0 {
            return false;
        }
        // A zombie member still answers the probe. Where nobody reaps orphans (a container
        // whose PID 1 is not an init) zombies stay forever, and close would wait out every grace
        // period for them.
        live_group_member(self.0).unwrap_or(true)
    }
}

/// Whether process group `pgid` has a member that is not a zombie; `None` if `/proc` cannot
/// tell (not mounted). Linux only: the portable path has no way to tell a zombie from a live
/// member, and counts it as alive (a platform whose PID 1 reaps orphans, as macOS's launchd
/// does, leaves none).
#[cfg(all(target_os = "linux", not(feature = "portable-posix")))]
fn live_group_member(pgid: i32) -> Option<bool> {
    let mut found_any = false;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().filter(|n| n.bytes().all(|b| b.is_ascii_digit())) else {
            continue;
        };
        found_any = true;
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue; // gone meanwhile
        };
        // After the parenthesised command name: state, ppid, pgrp, ...
        let mut fields = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace();
        let (state, pgrp) = (fields.next(), fields.nth(1));
        if pgrp.and_then(|g| g.parse::<i32>().ok()) == Some(pgid) && !matches!(state, Some("Z" | "X")) {
            return Some(true);
        }
    }
    found_any.then_some(false)
}

#[cfg(not(all(target_os = "linux", not(feature = "portable-posix"))))]
fn live_group_member(_pgid: i32) -> Option<bool> {
    None
}

/// How the child ended, for error messages.
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        _ => "exited".to_string(),
    }
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
        group: Group(pid),
        stdin: OwnedFd::from(stdin),
        stdout,
        stderr,
        exit,
    })
}
