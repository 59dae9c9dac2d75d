//! A descriptor that one thread makes readable to wake another out of `poll`: an eventfd on
//! Linux, a pipe elsewhere (and on Linux with the `portable-posix` feature). Used by the host-loop queue (`ffi/event_loop`: the descriptor a host
//! watches) and by a caller waiting beside the runtime (`base::driving`: woken by a task's
//! waker while it polls its server's output itself).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub struct EventFd {
    read: OwnedFd,
    /// A pipe's write end; `None` for an eventfd (one descriptor both ways).
    write: Option<OwnedFd>,
}

impl EventFd {
    /// A new descriptor, non-blocking and close-on-exec.
    #[cfg(all(target_os = "linux", not(feature = "portable-posix")))]
    pub fn open() -> std::io::Result<EventFd> {
        // SAFETY: creates the event descriptor (a plain syscall, no pointers).
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and is owned by nothing else.
        let read = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(EventFd { read, write: None })
    }

    /// A new descriptor, non-blocking and close-on-exec.
    #[cfg(not(all(target_os = "linux", not(feature = "portable-posix"))))]
    pub fn open() -> std::io::Result<EventFd> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: creates a pipe into a local array, then sets flags on its two new descriptors.
        unsafe {
            if libc::pipe(fds.as_mut_ptr()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            for fd in fds {
                libc::fcntl(fd, libc::F_SETFL, libc::fcntl(fd, libc::F_GETFL) | libc::O_NONBLOCK);
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
            Ok(EventFd {
                read: OwnedFd::from_raw_fd(fds[0]),
                write: Some(OwnedFd::from_raw_fd(fds[1])),
            })
        }
    }

    /// The descriptor to watch for reading.
    pub fn fd(&self) -> RawFd {
        self.read.as_raw_fd()
    }

    /// Makes the descriptor readable.
    pub fn signal(&self) {
        let one: u64 = 1;
        let fd = self.write.as_ref().unwrap_or(&self.read).as_raw_fd();
        // SAFETY: writes from a local (8 bytes: an eventfd increment; a pipe takes 1). A full
        // pipe or counter already means "readable", so the result does not matter.
        unsafe {
            libc::write(
                fd,
                (&one as *const u64).cast(),
                if self.write.is_none() { 8 } else { 1 },
            )
        };
    }

    /// Makes the descriptor unreadable again (what `signal` wrote is read back).
    pub fn drain(&self) {
        let mut buf = [0u8; 64];
        // SAFETY: non-blocking reads into a local buffer until it is empty. One read empties an
        // eventfd (it returns and resets the whole counter); a pipe may need more.
        unsafe {
            while libc::read(self.fd(), buf.as_mut_ptr().cast(), buf.len()) > 0 {
                if self.write.is_none() {
                    break;
                }
            }
        }
    }
}
