//! Reaping stdio servers without a signal handler (SIGCHLD belongs to the host): one thread
//! reaps every child of the process, so threads do not grow with the number of servers.
//!
//! Three implementations behind one seam:
//! - `pidfd` (Linux, the default there): a pidfd per child, readable when it exits;
//! - `polling` (portable POSIX: macOS, iOS, Linux with the `portable-posix` feature, and Linux
//!   kernels before 5.3): `waitpid(WNOHANG)` on a backing-off timer, nudged to look at once
//!   when an exit is expected (stdout ended, the close sequence);
//! - `windows`: process handles in `WaitForMultipleObjects`, up to 63 children per thread.

#[cfg(all(target_os = "linux", not(feature = "portable-posix")))]
mod pidfd;
#[cfg(unix)]
mod polling;
#[cfg(windows)]
mod windows;

use std::process::{Child, ExitStatus};
use tokio::sync::watch;

/// Hands `child` to the process's reaper thread, which sends its exit status on `exit` (`None`
/// when it cannot be read). Fails only when no thread can be started.
pub(crate) fn watch(child: Child, exit: watch::Sender<Option<ExitStatus>>) -> std::io::Result<()> {
    #[cfg(all(target_os = "linux", not(feature = "portable-posix")))]
    let Err((child, exit)) = pidfd::watch(child, exit) else {
        return Ok(());
    };
    #[cfg(unix)]
    return polling::watch(child, exit);
    #[cfg(windows)]
    return windows::watch(child, exit);
}

/// Tells the reaper that a child is about to exit (its stdout ended, or it is being closed), so
/// the exit status arrives without waiting for the next tick. Free when nothing is polled.
pub(crate) fn expect_exit() {
    #[cfg(unix)]
    polling::nudge();
}
