//! The Windows form of `event_fd`: a manual-reset event object that one thread sets to wake
//! another out of `WaitForSingleObject`. Used by the host-loop queue (`ffi/event_loop`: the
//! handle a host waits on) and by a caller waiting beside the runtime (`base::driving`).

use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use windows_sys::Win32::Foundation::WAIT_OBJECT_0;
use windows_sys::Win32::System::Threading::{CreateEventW, ResetEvent, SetEvent, WaitForSingleObject};

pub struct EventFd {
    event: OwnedHandle,
}

impl EventFd {
    /// A new event, unset, not inherited by children.
    pub fn open() -> std::io::Result<EventFd> {
        // SAFETY: creates an unnamed manual-reset event with default security (no pointers in).
        let handle = unsafe { CreateEventW(std::ptr::null(), 1, 0, std::ptr::null()) };
        if handle.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `handle` was just created and is owned by nothing else.
        let event = unsafe { OwnedHandle::from_raw_handle(handle) };
        Ok(EventFd { event })
    }

    /// The event's handle as a C `int`: kernel handles fit in 32 bits and are sign-extended
    /// back (`HandleToLong`/`LongToHandle`), so a host turns it into a `HANDLE` to wait on.
    pub fn fd(&self) -> std::os::raw::c_int {
        self.event.as_raw_handle() as isize as std::os::raw::c_int
    }

    /// Sets the event (it stays set until `drain`).
    pub fn signal(&self) {
        // SAFETY: sets our own open event.
        unsafe { SetEvent(self.event.as_raw_handle()) };
    }

    /// Resets the event.
    pub fn drain(&self) {
        // SAFETY: resets our own open event.
        unsafe { ResetEvent(self.event.as_raw_handle()) };
    }

    /// Waits at most `ms` milliseconds for the event to be set; true if it is.
    pub fn wait(&self, ms: u32) -> bool {
        // SAFETY: waits on our own open event.
        unsafe { WaitForSingleObject(self.event.as_raw_handle(), ms) == WAIT_OBJECT_0 }
    }
}
