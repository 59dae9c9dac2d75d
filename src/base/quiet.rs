//! Tasks that need no thread of their own between calls.
//!
//! A C client's runtime is driven between calls by a thread of its own only when a task there
//! has something to do meanwhile (`ffi/engine`): a stdio server's output, a GET stream, a
//! listener. A task that only ever waits for what other tasks or a caller give it (the
//! session's read loop: over HTTP, the requests' exchanges feed it) is no such work while it
//! waits: it runs [`quietly`], and the engine does not count it while it waits unwoken.
//!
//! A runtime that counts its quiet tasks says so on the thread that drives it ([`Counted`]);
//! a task first polled elsewhere is never counted (it then keeps the thread, as before).

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

thread_local! {
    /// The quiet tasks' count of the runtime this thread drives, if it keeps one.
    static COUNT: RefCell<Option<Arc<AtomicUsize>>> = const { RefCell::new(None) };
}

/// While alive, the runtime this thread drives counts its quiet tasks in `count`.
pub struct Counted(Option<Arc<AtomicUsize>>);

impl Counted {
    pub fn new(count: &Arc<AtomicUsize>) -> Counted {
        Counted(COUNT.with(|c| c.borrow_mut().replace(count.clone())))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let outer = self.0.take();
        COUNT.with(|c| *c.borrow_mut() = outer);
    }
}

/// `fut`, counted as quiet while it waits unwoken (see the module).
pub fn quietly<F: Future>(fut: F) -> Quiet<F> {
    Quiet {
        fut: Box::pin(fut),
        mark: None,
    }
}

pub struct Quiet<F> {
    /// Boxed once per task (it is made once per session).
    fut: Pin<Box<F>>,
    /// Found at the first poll: `None` outside a counting runtime.
    mark: Option<Option<Arc<Mark>>>,
}

/// One quiet task's standing: counted while `waiting`; its wake-up uncounts it.
struct Mark {
    count: Arc<AtomicUsize>,
    waiting: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Mark {
    fn uncount(&self) {
        if self.waiting.swap(false, SeqCst) {
            self.count.fetch_sub(1, SeqCst);
        }
    }
}

impl Wake for Mark {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref()
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.uncount();
        let waker = self.waker.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<F: Future> Future for Quiet<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let me = self.get_mut();
        let own = Mark::before_poll(&mut me.mark, cx.waker());
        // One poll site: the task's state machine is inlined where it is polled.
        let polled = me
            .fut
            .as_mut()
            .poll(&mut Context::from_waker(own.as_ref().unwrap_or(cx.waker())));
        if polled.is_ready() {
            Mark::ended(&me.mark);
        }
        polled
    }
}

impl Mark {
    /// Finds the counting runtime at the first poll, then counts the task as waiting (before
    /// the poll: a wake-up during it, from another thread, uncounts it again). The waker to
    /// poll with, when counted.
    fn before_poll(mark: &mut Option<Option<Arc<Mark>>>, task: &Waker) -> Option<Waker> {
        let mark = mark.get_or_insert_with(|| {
            COUNT.with(|c| c.borrow().clone()).map(|count| {
                Arc::new(Mark {
                    count,
                    waiting: AtomicBool::new(false),
                    waker: Mutex::new(None),
                })
            })
        });
        let mark = mark.as_ref()?;
        {
            let mut waker = mark.waker.lock().unwrap_or_else(PoisonError::into_inner);
            if !waker.as_ref().is_some_and(|w| w.will_wake(task)) {
                *waker = Some(task.clone());
            }
        }
        if !mark.waiting.swap(true, SeqCst) {
            mark.count.fetch_add(1, SeqCst);
        }
        Some(Waker::from(mark.clone()))
    }

    fn ended(mark: &Option<Option<Arc<Mark>>>) {
        if let Some(Some(mark)) = mark {
            mark.uncount();
        }
    }
}

impl<F> Drop for Quiet<F> {
    fn drop(&mut self) {
        Mark::ended(&self.mark);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counted_while_waiting_unwoken() {
        let count = Arc::new(AtomicUsize::new(0));
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<u8>();
        let task = {
            let _counted = Counted::new(&count);
            let task = rt.spawn(quietly(async move { while rx.recv().await.is_some() {} }));
            rt.block_on(tokio::task::yield_now());
            task
        };
        assert_eq!(count.load(SeqCst), 1, "waiting");
        tx.send(1).unwrap();
        assert_eq!(count.load(SeqCst), 0, "woken, not yet run");
        {
            let _counted = Counted::new(&count);
            rt.block_on(tokio::task::yield_now());
        }
        assert_eq!(count.load(SeqCst), 1, "waiting again");
        drop(tx);
        rt.block_on(task).unwrap();
        assert_eq!(count.load(SeqCst), 0, "ended");
    }

    #[test]
    fn not_counted_when_first_polled_outside_a_counting_runtime() {
        let count = Arc::new(AtomicUsize::new(0));
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<u8>();
        rt.spawn(quietly(async move { while rx.recv().await.is_some() {} }));
        rt.block_on(tokio::task::yield_now());
        tx.send(1).unwrap();
        let _counted = Counted::new(&count);
        rt.block_on(tokio::task::yield_now());
        assert_eq!(count.load(SeqCst), 0);
    }
}
