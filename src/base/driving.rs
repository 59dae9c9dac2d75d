//! Whether this thread waits on a current-thread runtime that another thread drives (a second
//! caller in `Handle::block_on`, `ffi/engine`). A request waiting alone reads the transport
//! itself (`transport/pump`) only where its thread drives the runtime: a guest read from a
//! thread that does not drive it raced the reader task on the driving thread and could miss
//! the reply, leaving the call to its timeout (two host threads on one client, session 9).

use std::cell::Cell;

thread_local! {
    static OFF_CORE: Cell<bool> = const { Cell::new(false) };
}

/// Runs `wait` (a `Handle::block_on` on a runtime another thread drives) marked as such.
pub fn waiting_off_core<R>(wait: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            OFF_CORE.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(OFF_CORE.with(|c| c.replace(true)));
    wait()
}

/// True inside [`waiting_off_core`] on this thread.
pub fn off_core() -> bool {
    OFF_CORE.with(Cell::get)
}
