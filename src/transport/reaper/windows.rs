//! The Windows reaper: a process handle is signaled when the process exits, and one call of
//! `WaitForMultipleObjects` waits for up to 64 handles. So one thread waits for up to 63
//! children (the 64th handle is its wake-up event, set when a child is handed to it); a second
//! thread starts only when every running one is full, and a thread whose children have all
//! exited ends. Threads grow by one per 63 servers open at once, not by one per server.

use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::process::{Child, ExitStatus};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use windows_sys::Win32::Foundation::{HANDLE, WAIT_FAILED, WAIT_OBJECT_0};
use windows_sys::Win32::System::Threading::{CreateEventW, SetEvent, WaitForMultipleObjects, INFINITE};

/// Children per thread: the wait's limit (64, `MAXIMUM_WAIT_OBJECTS`) less the wake-up event.
const PER_THREAD: usize = 63;

struct Watched {
    child: Child,
    exit: watch::Sender<Option<ExitStatus>>,
}

/// One waiting thread: its wake-up event and what it was handed.
struct Waiter {
    wake: OwnedHandle,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Handed over, not yet taken into the thread's wait.
    new: Vec<Watched>,
    /// Children this thread has (waited for or handed over), not yet exited.
    count: usize,
    /// The thread ended (it had no child left): hand nothing more to it.
    ended: bool,
}

static WAITERS: Mutex<Vec<Arc<Waiter>>> = Mutex::new(Vec::new());

/// Hands `child` to a thread with room, or to a new one.
pub(super) fn watch(child: Child, exit: watch::Sender<Option<ExitStatus>>) -> std::io::Result<()> {
    let mut waiters = WAITERS.lock().unwrap_or_else(|e| e.into_inner());
    waiters.retain(|w| !w.state.lock().unwrap_or_else(|e| e.into_inner()).ended);
    let watched = Watched { child, exit };
    for w in waiters.iter() {
        let mut state = w.state.lock().unwrap_or_else(|e| e.into_inner());
        // Not one that has ended since the `retain` above (it would never take the child).
        if !state.ended && state.count < PER_THREAD {
            state.count += 1;
            state.new.push(watched);
            // SAFETY: the waiter's own open event.
            unsafe { SetEvent(w.wake.as_raw_handle()) };
            return Ok(());
        }
    }
    // SAFETY: an unnamed auto-reset event, initially set (the thread takes its first child at once).
    let event = unsafe { CreateEventW(std::ptr::null(), 0, 1, std::ptr::null()) };
    if event.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    let waiter = Arc::new(Waiter {
        // SAFETY: `event` was just created and is owned by nothing else.
        wake: unsafe { OwnedHandle::from_raw_handle(event) },
        state: Mutex::new(State {
            new: vec![watched],
            count: 1,
            ended: false,
        }),
    });
    let thread_waiter = waiter.clone();
    let started = std::thread::Builder::new()
        .name("mcp-child-wait".into())
        .spawn(move || run(&thread_waiter));
    if let Err(e) = started {
        // The child is dropped with its sender: the caller ends its job on this error.
        let mut state = waiter.state.lock().unwrap_or_else(|e| e.into_inner());
        drop(state.new.pop());
        return Err(e);
    }
    waiters.push(waiter);
    Ok(())
}

/// The thread: waits for its children's exits and sends each status; ends when none is left.
fn run(waiter: &Waiter) {
    let mut mine: Vec<Watched> = Vec::new();
    loop {
        {
            let mut state = waiter.state.lock().unwrap_or_else(|e| e.into_inner());
            mine.append(&mut state.new);
            if mine.is_empty() {
                state.ended = true;
                return;
            }
        }
        let mut handles: Vec<HANDLE> = Vec::with_capacity(mine.len() + 1);
        handles.push(waiter.wake.as_raw_handle());
        handles.extend(mine.iter().map(|w| w.child.as_raw_handle()));
        // SAFETY: waits on handles that stay open for the call: the event (owned by `waiter`)
        // and each child's process handle (owned by `mine`); at most 64 of them.
        let got = unsafe { WaitForMultipleObjects(handles.len() as u32, handles.as_ptr(), 0, INFINITE) };
        let index = got.wrapping_sub(WAIT_OBJECT_0) as usize;
        if got == WAIT_FAILED || index >= handles.len() {
            // Cannot happen with valid handles; look at each child rather than spin.
            std::thread::sleep(std::time::Duration::from_millis(50));
            finish_exited(waiter, &mut mine);
            continue;
        }
        if index == 0 {
            continue; // a new child was handed over
        }
        let mut done = mine.swap_remove(index - 1);
        let status = done.child.wait().ok();
        let _ = done.exit.send(status);
        waiter.state.lock().unwrap_or_else(|e| e.into_inner()).count -= 1;
    }
}

/// Sends the status of every child that has exited (or whose status cannot be read).
fn finish_exited(waiter: &Waiter, mine: &mut Vec<Watched>) {
    let mut i = 0;
    while i < mine.len() {
        match mine[i].child.try_wait() {
            Ok(None) => i += 1,
            result => {
                let done = mine.swap_remove(i);
                let _ = done.exit.send(result.ok().flatten());
                waiter.state.lock().unwrap_or_else(|e| e.into_inner()).count -= 1;
            }
        }
    }
}
