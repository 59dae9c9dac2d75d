//! Fork detection without a system call per call: a `pthread_atfork` child handler counts
//! forks, and each client remembers the count it was created under (`getpid` per call cost a
//! system call on every blocking call).

use super::boundary::ffi_boundary;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

static FORKS: AtomicU64 = AtomicU64::new(0);

#[cfg_attr(windows, allow(dead_code))]
extern "C" fn on_fork_child() {
    ffi_boundary!({ FORKS.fetch_add(1, Ordering::SeqCst) });
}

/// How many times this process image was forked since the first client (compare, never read
/// the number itself).
pub(crate) fn generation() -> u64 {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(watch_forks);
    FORKS.load(Ordering::SeqCst)
}

#[cfg(unix)]
fn watch_forks() {
    // SAFETY: registers a handler that only touches an atomic (async-signal-safe).
    unsafe { libc::pthread_atfork(None, None, Some(on_fork_child)) };
}

/// Windows has no fork: the generation never changes.
#[cfg(windows)]
fn watch_forks() {}
