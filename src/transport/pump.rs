//! A reader future shared by its own task and, while a request waits alone, by the task of
//! that request's caller (a "guest").
//!
//! Why: on a current-thread runtime, `block_on` polls its future only after parking the
//! driver, and a future woken by another task (the reader handing over the answer) rather than
//! by the reactor makes that park a zero-timeout one: one `epoll_wait` per call for nothing,
//! plus the reader task's turn. A caller that polls the reader itself is woken by the reactor
//! when its answer arrives and reads it in the same turn.
//!
//! The pipe remembers one waker for readiness: whoever polled the reader last. So while a guest
//! reads, the task stands aside (it keeps its waker here instead), and a guest leaving wakes the
//! task, whose next poll registers its own waker again: server output between calls is read as
//! before.
//!
//! A guest may also read from a thread that does not drive the runtime: a lone caller beside
//! the driver thread's idle spell (`base::driving`). The task may then hold the reader on the
//! driver thread while the guest tries to take it; a guest that has joined polls again rather
//! than wait for a wake-up that was meant for it and went to nobody. Its reads go straight to
//! the pipe (`base::driving::ReadBeside`), since the reactor that reports readiness runs on the
//! other thread.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

type Reader = Pin<Box<dyn Future<Output = ()> + Send>>;

pub(crate) struct Pump {
    /// The reader; `None` once it ended (end of stream) or was stopped.
    reader: Mutex<Option<Reader>>,
    /// Guests reading now.
    guests: AtomicUsize,
    /// The task's waker, woken when the last guest leaves.
    task: Mutex<Option<Waker>>,
}

impl Pump {
    pub fn new(reader: impl Future<Output = ()> + Send + 'static) -> Arc<Pump> {
        Arc::new(Pump {
            reader: Mutex::new(Some(Box::pin(reader))),
            guests: AtomicUsize::new(0),
            task: Mutex::new(None),
        })
    }

    fn reader(&self) -> MutexGuard<'_, Option<Reader>> {
        self.reader.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The task that polls the reader while no guest does; it ends with the reader.
    pub fn task(self: Arc<Pump>) -> impl Future<Output = ()> + Send + 'static {
        std::future::poll_fn(move |cx| {
            *self.task.lock().unwrap_or_else(PoisonError::into_inner) = Some(cx.waker().clone());
            let mut reader = self.reader();
            if self.guests.load(SeqCst) > 0 {
                // A guest polls (and is woken by the pipe); it wakes this task when it leaves.
                return if reader.is_some() {
                    Poll::Pending
                } else {
                    Poll::Ready(())
                };
            }
            poll_reader(&mut reader, cx)
        })
    }

    /// Polls the reader on a guest's behalf. `joined` says whether this guest counts among
    /// `guests` (set on its first poll that got the reader; pass it to [`Pump::leave`]). Does
    /// nothing while the task polls the reader on another thread: that guest's answer comes
    /// through the task as usual.
    pub fn poll_guest(&self, cx: &mut Context<'_>, joined: &mut bool) {
        let Ok(mut reader) = self.reader.try_lock() else {
            if *joined {
                // Beside the runtime, the task holds the reader for a moment on the driver
                // thread (it stands aside for joined guests): the pipe's readiness may have
                // woken this guest, so poll again.
                cx.waker().wake_by_ref();
            }
            return;
        };
        if !*joined {
            *joined = true;
            self.guests.fetch_add(1, SeqCst);
        }
        if poll_reader(&mut reader, cx).is_ready() {
            drop(reader);
            self.wake_task(); // it ends now
        }
    }

    /// A guest is done: the last one hands the pipe back to the task.
    pub fn leave(&self, joined: bool) {
        if joined && self.guests.fetch_sub(1, SeqCst) == 1 {
            self.wake_task();
        }
    }

    /// Drops the reader (the transport is closing); the task ends.
    pub fn stop(&self) {
        let reader = self.reader().take();
        drop(reader);
        self.wake_task();
    }

    fn wake_task(&self) {
        let waker = self.task.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

fn poll_reader(reader: &mut Option<Reader>, cx: &mut Context<'_>) -> Poll<()> {
    let Some(fut) = reader.as_mut() else {
        return Poll::Ready(());
    };
    let done = fut.as_mut().poll(cx);
    if done.is_ready() {
        *reader = None;
    }
    done
}
