//! The runtime behind one C-ABI client, and who drives it.
//!
//! The runtime is a current-thread tokio runtime. A host thread that is alone in a call drives
//! it itself (I/O, timers, tasks), so the reply to its request is read, decoded and delivered on
//! that same thread: no wake-up of a worker thread by the kernel followed by a second wake-up of
//! the caller, which is what a multi-thread runtime costs per call.
//!
//! When several host threads are in calls at once, only the first drives; the others wait
//! without driving and are woken when their answers arrive. When the driving caller returns
//! while others still wait, the client's driver thread (`mcp-runtime`) takes over at once and
//! drives for as long as calls overlap, so the runtime never changes hands between waiting
//! callers (each hand-off would cost a thread wake-up with nobody reading meanwhile).
//!
//! Between calls the driver thread drives the runtime too, so background work goes on: server
//! output and exits, listeners, subscriptions, deferred responders. It takes over only after no
//! call has started for [`IDLE_GRACE`], so back-to-back calls from one thread never hand the
//! runtime back and forth.
//!
//! A lone call that starts while the driver drives could ask it to stand down and take over,
//! but that hand-off wakes a sleeping thread and waits for it to answer: two cross-CPU wake-ups,
//! which on a VM whose idle vCPUs halt took 100–300 µs, more than the call. So the lone call
//! leaves the driver asleep and polls its own future beside the runtime (`base::driving`): it
//! writes its request and reads the answer itself (a stdio server's pipe, a direct HTTP
//! connection's socket) when the kernel wakes it on that descriptor. The driver keeps its spell,
//! so a call that comes alone after an idle gap, quick or slow, wakes no other thread of the
//! client; calls that come back to back, or one only the reactor can serve, ask the driver to
//! stand down, and the caller takes over.
//!
//! The driver thread starts lazily, when something needs it: a caller leaving `block_on` with
//! callers left waiting or with background work (tasks alive beside the engine's own, less the
//! quiet ones waiting unwoken: `base::quiet`, the session's read loop), a started call, a spawn.
//! A client whose work between calls is known from the start (a stdio server's output and
//! exit: `eager`) starts it at the runtime's second park, during the connect's wait for the
//! server, so its spawn (some 15 µs) overlaps that wait instead of adding to the connect. An
//! HTTP client whose calls leave nothing running (a modern server's JSON or SSE replies over
//! HTTP/1.1) never starts one: its calls drive the runtime themselves, and nothing happens
//! between them (an idle connection's hang-up is read at checkout, `net::direct`). A client that
//! never needed it has none to stop. The shared engines start theirs at once (`with_driver`).
//!
//! Such a client, freed with nothing of its own left on the runtime, leaves the engine to the
//! next client made that needs no thread from its connect on (one kept per process, `SPARE`):
//! an HTTP client made, connected, called and freed in turn builds no runtime after the first.

use std::cell::RefCell;
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::task::Waker;
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};
use tokio::runtime::{Handle, Runtime};
use tokio::sync::{mpsc, Notify};

use crate::base::driving::{Beside, ThreadWake};
use crate::base::BoxFuture;

/// How long the runtime must have seen no new call before the driver thread drives it while
/// idle; also how often the driver looks while calls are running.
const IDLE_GRACE: Duration = Duration::from_millis(5);

/// A timer of the engine's own (a task started with the runtime) stays armed at most this far
/// ahead. tokio wakes its driver when a timer is registered earlier than any it had: with this
/// one armed, a lone call's request timer (60 s by default) is not, so the call's start leaves
/// the driver thread asleep in its spell, and a caller driving the runtime itself does not
/// write the runtime's wake-up descriptor for each deadline it arms. Costs one wake-up per
/// interval while idle. Also how long a call beside the spell waits without news before it
/// takes the runtime over.
const SPELL_TICK: Duration = Duration::from_secs(10);

struct Shared {
    runtime: Runtime,
    handle: Handle,
    /// Started `eager` (its first parks may start the driver thread).
    eager: bool,
    /// A blocking-pool thread has started on the runtime (a name lookup, a file read).
    threads: Arc<AtomicBool>,
    /// Host threads inside `block_on`, plus started calls in flight (shared with their tasks).
    active: Arc<AtomicUsize>,
    /// Quiet tasks waiting unwoken (`base::quiet`): not background work.
    quiet: Arc<AtomicUsize>,
    /// Calls started so far (tells the driver whether calls came and went while it slept).
    entries: AtomicU64,
    /// When the latest call beside the spell started, in µs since `epoch` (tells the next one
    /// whether calls come in a burst; a spell the driver begins follows `IDLE_GRACE` without a
    /// call, so only calls beside a spell that went on can be that close).
    last_beside: AtomicU64,
    epoch: Instant,
    /// A caller drives the runtime (or is about to).
    caller_drives: AtomicBool,
    /// The driver thread drives the runtime (or is about to).
    driving: AtomicBool,
    /// Asks the driver to give the runtime back.
    release: Notify,
    /// A lone caller polling beside the runtime (`beside_spell`), woken when a spell ends.
    spell_waiter: Mutex<Option<Waker>>,
    stop: AtomicBool,
    /// The driver thread, once started (`start_driver`).
    driver: OnceLock<Thread>,
    /// Its handle, for the join at shutdown; the lock orders a start against `stop`.
    joiner: Mutex<Option<JoinHandle<()>>>,
    /// Started calls on their way to the runtime (see `spawn_call`).
    starts: mpsc::UnboundedSender<Starts>,
}

/// What the starter task receives: one call, or the calls a host's dispatch batch started.
enum Starts {
    One(BoxFuture<'static, ()>),
    Batch(Vec<BoxFuture<'static, ()>>),
}

/// Calls held back for one engine (see `HELD`).
type HeldCalls = (Weak<Shared>, Vec<BoxFuture<'static, ()>>);

thread_local! {
    /// While this thread runs a host-loop dispatch batch: the calls its callbacks started, per
    /// engine, sent when the batch ends (`hold_starts`).
    static HELD: RefCell<Option<Vec<HeldCalls>>> = const { RefCell::new(None) };
}

/// Runs `batch` (a host-loop dispatch running callbacks) with the calls it starts held back,
/// then hands them to their runtimes, one message and one wake-up per runtime: a loop starting
/// a call from each completion would otherwise wake the runtime on its first start, which then
/// takes the calls one or two at a time while the host is still starting the rest.
pub(crate) fn hold_starts<R>(batch: impl FnOnce() -> R) -> R {
    struct Release(bool);
    impl Drop for Release {
        fn drop(&mut self) {
            if !self.0 {
                return; // nested: the outer batch sends
            }
            let held = HELD.with(|h| h.borrow_mut().take()).unwrap_or_default();
            for (engine, calls) in held {
                // An engine shut down by a callback of the batch (its client freed): the calls
                // were completed by the close; their futures, never polled, just drop.
                if let Some(shared) = engine.upgrade() {
                    shared.send_starts(Starts::Batch(calls));
                }
            }
        }
    }
    let outer = HELD.with(|h| {
        let mut h = h.borrow_mut();
        let outer = h.is_none();
        if outer {
            *h = Some(Vec::new());
        }
        outer
    });
    let _release = Release(outer);
    batch()
}

impl Shared {
    fn wake_driver(self: &Arc<Self>) {
        self.need_driver();
        if let Some(driver) = self.driver.get() {
            driver.unpark();
        }
    }

    /// Something needs the driver thread: starts it unless it runs. One that cannot be spawned
    /// now leaves the engine without it (callers still drive the runtime); the next need tries
    /// again.
    fn need_driver(self: &Arc<Self>) {
        if self.driver.get().is_none() {
            let _ = self.start_driver();
        }
    }

    /// Starts the driver thread unless it runs or the engine stops.
    #[cold]
    fn start_driver(self: &Arc<Self>) -> std::io::Result<()> {
        let mut joiner = self.joiner.lock().unwrap_or_else(PoisonError::into_inner);
        if self.driver.get().is_some() || self.stop.load(SeqCst) {
            return Ok(());
        }
        let for_driver = self.clone();
        let driver = std::thread::Builder::new()
            .name("mcp-runtime".into())
            .spawn(move || drive(&for_driver))?;
        let _ = self.driver.set(driver.thread().clone());
        *joiner = Some(driver);
        Ok(())
    }

    /// Whether the runtime holds tasks besides the engine's own (`ENGINE_TASKS`) and the quiet
    /// ones waiting unwoken: work that goes on between calls, for the driver thread.
    fn background_work(&self) -> bool {
        self.handle.metrics().num_alive_tasks() > ENGINE_TASKS + self.quiet.load(SeqCst)
    }

    fn send_starts(self: &Arc<Self>, calls: Starts) {
        if let Err(refused) = self.starts.send(calls) {
            // The starter task is gone (runtime shut down): spawning drops the calls as before.
            match refused.0 {
                Starts::One(call) => drop(self.runtime.spawn(call)),
                Starts::Batch(calls) => calls.into_iter().for_each(|call| drop(self.runtime.spawn(call))),
            }
        }
        self.wake_driver();
    }
}

/// The engine's own tasks, alive for the runtime's life: the starter task and the tick.
const ENGINE_TASKS: usize = 2;

pub(crate) struct OwnEngine {
    shared: Arc<Shared>,
}

impl OwnEngine {
    /// `eager`: the client has work between calls from its connect on (see the module).
    pub fn start(eager: bool) -> std::io::Result<OwnEngine> {
        // The hook sees the engine once it exists (a weak reference: the runtime it belongs to
        // is the engine's). The park before a wait starts an eager engine's driver thread.
        let engine: Arc<OnceLock<Weak<Shared>>> = Arc::default();
        let parks = AtomicUsize::new(if eager { 0 } else { 2 });
        let for_hook = engine.clone();
        let threads = Arc::new(AtomicBool::new(false));
        let for_threads = threads.clone();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .on_thread_start(move || for_threads.store(true, SeqCst))
            .on_thread_park(move || {
                if parks.load(SeqCst) < 2 && parks.fetch_add(1, SeqCst) == 1 {
                    if let Some(s) = for_hook.get().and_then(Weak::upgrade) {
                        s.need_driver();
                    }
                }
            })
            .build()?;
        let (starts, mut started) = mpsc::unbounded_channel::<Starts>();
        // Both tasks are spawned from inside the runtime (no wake-up of it from outside).
        runtime.block_on(async {
            // The starter task: spawns started calls from inside the runtime (a local spawn, no
            // wake-up). Only its own wake-up crosses threads, once per batch of starts.
            drop(tokio::spawn(crate::base::boxed(async move {
                while let Some(calls) = started.recv().await {
                    match calls {
                        Starts::One(call) => drop(tokio::spawn(call)),
                        Starts::Batch(calls) => calls.into_iter().for_each(|call| drop(tokio::spawn(call))),
                    }
                }
            })));
            // A timer always armed, then one turn so the timer driver knows it: tokio writes
            // the runtime's wake-up descriptor whenever a timer is registered earlier than every
            // timer it knew at its last park (and for every timer before its first park), even
            // on the thread that drives it. With this one armed, the connect bound, the TCP and
            // TLS deadlines and the requests' timeouts (all longer by default) no longer do: a
            // connect and first call over HTTPS wrote it six times, now twice (here, and for the
            // era probe's shorter bound). It is also the driver spell's timer.
            drop(tokio::spawn(crate::base::boxed(async {
                loop {
                    tokio::time::sleep(SPELL_TICK).await;
                }
            })));
            tokio::task::yield_now().await;
        });
        let shared = Arc::new(Shared {
            handle: runtime.handle().clone(),
            runtime,
            eager,
            threads,
            active: Arc::new(AtomicUsize::new(0)),
            quiet: Arc::new(AtomicUsize::new(0)),
            entries: AtomicU64::new(0),
            last_beside: AtomicU64::new(0),
            epoch: Instant::now(),
            caller_drives: AtomicBool::new(false),
            driving: AtomicBool::new(false),
            release: Notify::new(),
            spell_waiter: Mutex::new(None),
            stop: AtomicBool::new(false),
            driver: OnceLock::new(),
            joiner: Mutex::new(None),
            starts,
        });
        let _ = engine.set(Arc::downgrade(&shared));
        Ok(OwnEngine { shared })
    }

    /// Starts the driver thread now (the shared engines, started once for the process, keep
    /// theirs from the start: their thread count does not grow with their clients).
    pub fn with_driver(self) -> std::io::Result<OwnEngine> {
        self.shared.start_driver()?;
        Ok(self)
    }

    /// Runs `fut` to completion on the calling thread: driving the runtime when no other call
    /// is in progress, else woken by whoever drives it.
    pub fn block_on<F: Future>(&self, fut: F) -> F::Output {
        // What follows runs one `dyn` future, not one copy per call's future type: the calls'
        // state machines were inlined into each path (beside the spell, on the runtime, off the
        // core), which cost the shipped library tens of KB.
        let mut out = None;
        {
            let task = pin!(async {
                out = Some(fut.await);
            });
            self.run(task);
        }
        out.expect("block_on returns once its future is done")
    }

    fn run(&self, mut fut: Pin<&mut (dyn Future<Output = ()> + '_)>) {
        let s = &self.shared;
        s.entries.fetch_add(1, SeqCst);
        let _counted = crate::base::quiet::Counted::new(&s.quiet);
        let others = s.active.fetch_add(1, SeqCst);
        if others > 0 {
            // Someone drives (a caller, or the driver thread once that caller returns).
            let _active = Leave {
                shared: s,
                drove: false,
            };
            return crate::base::driving::waiting_off_core(|| s.handle.block_on(fut));
        }
        // Alone: announce, then ask the driver thread to stand down if it drives (SeqCst orders
        // the two flags: either the driver sees `caller_drives` or this sees `driving`).
        s.caller_drives.store(true, SeqCst);
        let _active = Leave { shared: s, drove: true };
        if s.driving.load(SeqCst) && self.beside_spell(fut.as_mut()) {
            return;
        }
        s.runtime.block_on(fut)
    }

    /// While the driver thread holds the runtime in a spell: polls `fut` beside it, waiting on
    /// this thread's descriptor and the one its read watches (`base::driving::watch`). The
    /// driver keeps its spell unless calls come in a burst (this one started within
    /// `IDLE_GRACE` of the previous one beside it: the next ones should drive) or the future waits on
    /// something only the reactor reports (no descriptor watched); then it is asked, once, to
    /// stand down. Asking every call cost two driver wake-ups per call after an idle gap
    /// (asking, then the next spell), and asking at once put that wake-up beside the server's
    /// on the other CPU, ahead of the answer; a slow call that took the runtime over after
    /// `IDLE_GRACE` paid them too. True once `fut` is done; false once the spell is over (the
    /// caller then drives), or without a descriptor for this thread.
    fn beside_spell(&self, mut fut: Pin<&mut (dyn Future<Output = ()> + '_)>) -> bool {
        struct Unregister<'a>(&'a Shared);
        impl Drop for Unregister<'_> {
            fn drop(&mut self) {
                self.0
                    .spell_waiter
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
            }
        }
        let s = &*self.shared;
        let Some(wake) = ThreadWake::current() else {
            s.release.notify_one();
            return false;
        };
        let waker = Waker::from(wake.clone());
        let _context = s.handle.enter();
        let _unregister = Unregister(s);
        // Once: a second notification would be stored and end the driver's next spell at once.
        let mut asked = false;
        let mut ask = || {
            if !std::mem::replace(&mut asked, true) {
                s.release.notify_one();
            }
        };
        let now = s.epoch.elapsed().as_micros() as u64;
        if now.saturating_sub(s.last_beside.swap(now, SeqCst)) < IDLE_GRACE.as_micros() as u64 {
            ask(); // calls come back to back: the next ones drive
        }
        loop {
            *s.spell_waiter.lock().unwrap_or_else(PoisonError::into_inner) = Some(waker.clone());
            if !s.driving.load(SeqCst) {
                return false;
            }
            let watch = match wake.poll_beside(&waker, |cx| fut.as_mut().poll(cx)) {
                Beside::Ready(()) => return true,
                Beside::Pending(watch) => watch,
            };
            if watch.is_none() {
                ask();
            }
            // A slow call waits here too (every wake-up it needs reaches this thread: its
            // descriptor, timers and tasks through its waker, the spell's end); the bound is a
            // safety net, after which it takes the runtime over.
            if !wake.wait(watch, SPELL_TICK) {
                ask();
            }
        }
    }

    /// Starts a task; it runs while any thread drives the runtime.
    pub fn spawn<F>(&self, fut: F)
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        // Boxed: one copy of tokio's task code for all of them (`base::spawn`).
        let s = &self.shared;
        s.runtime.spawn(crate::base::boxed(fut));
        s.need_driver();
    }

    /// Starts a started call's task (`ffi/call`): it counts as a call in progress until it ends,
    /// so the driver thread drives at once (no caller drives for it) and a blocking caller
    /// arriving meanwhile waits instead of taking the runtime from the driver.
    ///
    /// The call goes through the starter task's channel rather than `Runtime::spawn`: a spawn
    /// from outside the runtime writes the runtime's wake-up descriptor every time, while a send
    /// wakes the starter task only when it is idle, so calls started back to back (a host's
    /// loop starting calls from its completions) cost one wake-up per batch. The future arrives
    /// boxed here (keep it small: `ffi/call` boxes the call's own large future first).
    ///
    /// Inside a host-loop dispatch batch the call is held until the batch ends (`hold_starts`).
    pub fn spawn_call<F: Future<Output = ()> + Send + 'static>(&self, fut: F) {
        let s = &self.shared;
        s.active.fetch_add(1, SeqCst);
        let started = InFlight(s.active.clone());
        let call: BoxFuture<'static, ()> = Box::pin(async move {
            let _in_flight = started;
            fut.await
        });
        let call = HELD.with(|h| match h.borrow_mut().as_mut() {
            Some(held) => {
                match held
                    .iter_mut()
                    .find(|(engine, _)| std::ptr::eq(engine.as_ptr(), Arc::as_ptr(s)))
                {
                    Some((_, calls)) => calls.push(call),
                    None => held.push((Arc::downgrade(s), vec![call])),
                }
                None
            }
            None => Some(call),
        });
        if let Some(call) = call {
            s.send_starts(Starts::One(call));
        }
    }

    /// Stops the driver thread, then the runtime (waiting at most `timeout` for blocking work).
    /// Not from a thread inside `block_on`. Every engine ends here or in `leak`.
    pub fn shutdown(self, timeout: Duration) {
        let OwnEngine { shared } = self;
        shared.stop.store(true, SeqCst);
        // A stored permit if the driver is not waiting yet: it then sees `stop` and returns.
        shared.release.notify_one();
        // Under the lock: a start either happened (joined here) or sees `stop` (none starts).
        let driver = shared.joiner.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(driver) = driver {
            if driver.thread().id() == std::thread::current().id() {
                return; // inside the runtime: it cannot be shut down from here
            }
            driver.thread().unpark();
            let _ = driver.join();
        }
        if let Ok(shared) = Arc::try_unwrap(shared) {
            shared.runtime.shutdown_timeout(timeout);
        }
    }

    /// Whether the engine is as `start(false)` made it: no client's task or call left, no
    /// thread ever started (neither the driver nor a blocking-pool thread), nobody inside it.
    fn bare(&self) -> bool {
        let s = &self.shared;
        !s.eager
            && s.driver.get().is_none()
            && !s.threads.load(SeqCst)
            && s.active.load(SeqCst) == 0
            && s.quiet.load(SeqCst) == 0
            && s.handle.metrics().num_alive_tasks() == ENGINE_TASKS
            && Arc::strong_count(s) == 1
    }
}

/// One bare engine, kept when its client is freed, for the next client made without a driver
/// thread: building a runtime and shutting it down cost each client some 10 system calls (its
/// epoll and eventfd descriptors made, registered and closed, the first timer's wake-up) and
/// tens of allocations. It is kept only when nothing of its client remains on it (`bare`), and
/// per fork generation (a child never touches its parent's descriptors).
static SPARE: Mutex<Option<(u64, OwnEngine)>> = Mutex::new(None);

fn take_spare() -> Option<OwnEngine> {
    let mut slot = SPARE.lock().unwrap_or_else(PoisonError::into_inner);
    match slot.take() {
        Some((made, engine)) if made == super::fork::generation() => Some(engine),
        Some(inherited) => {
            std::mem::forget(inherited); // the parent's
            None
        }
        None => None,
    }
}

/// Keeps `engine` as the spare if it is bare and the slot is free; otherwise shuts it down.
fn keep_or_shutdown(engine: OwnEngine, timeout: Duration) {
    if engine.bare() {
        let mut slot = SPARE.lock().unwrap_or_else(PoisonError::into_inner);
        let generation = super::fork::generation();
        if !matches!(slot.as_ref(), Some((made, _)) if *made == generation) {
            if let Some(inherited) = slot.replace((generation, engine)) {
                std::mem::forget(inherited); // the parent's
            }
            return;
        }
    }
    engine.shutdown(timeout)
}

/// A client's runtime: its own (isolated, the default) or one of the shared set
/// (`ffi/shared_rt`), pinned for the client's life. A shared runtime works as an own one (a
/// lone caller drives it, the driver thread otherwise), its callers being any of its clients'.
pub(crate) enum Engine {
    Own(OwnEngine),
    Shared(Arc<OwnEngine>),
}

impl Engine {
    /// A client's own engine: the spare one (`SPARE`) when the client needs no driver thread
    /// from its connect on, else a new one.
    pub fn start(eager: bool) -> std::io::Result<Engine> {
        match (!eager).then(take_spare).flatten() {
            Some(engine) => Ok(Engine::Own(engine)),
            None => OwnEngine::start(eager).map(Engine::Own),
        }
    }

    pub fn block_on<F: Future>(&self, fut: F) -> F::Output {
        match self {
            Engine::Own(e) => e.block_on(fut),
            Engine::Shared(e) => e.block_on(fut),
        }
    }

    pub fn spawn<F>(&self, fut: F)
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match self {
            Engine::Own(e) => e.spawn(fut),
            Engine::Shared(e) => e.spawn(fut),
        }
    }

    pub fn spawn_call<F: Future<Output = ()> + Send + 'static>(&self, fut: F) {
        match self {
            Engine::Own(e) => e.spawn_call(fut),
            Engine::Shared(e) => e.spawn_call(fut),
        }
    }

    /// A shared runtime outlives its clients (the client's tasks end with its close).
    pub fn shutdown(self, timeout: Duration) {
        if let Engine::Own(e) = self {
            keep_or_shutdown(e, timeout)
        }
    }

    /// In a forked child: the driver threads do not exist there; leave everything as it is.
    pub fn leak(self) {
        std::mem::forget(self);
    }
}

/// A started call's share of `active`, given back when its task ends or is dropped.
struct InFlight(Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

/// Leaving `block_on` (also by unwinding): a driving caller that leaves others waiting hands
/// the runtime to the driver thread at once; the last caller out starts the driver thread if
/// background work needs it and no park did.
struct Leave<'a> {
    shared: &'a Arc<Shared>,
    drove: bool,
}

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        let s = self.shared;
        if self.drove {
            s.caller_drives.store(false, SeqCst);
        }
        let left = s.active.fetch_sub(1, SeqCst) - 1;
        if self.drove && left > 0 {
            s.wake_driver();
        } else if s.driver.get().is_none() && (left > 0 || s.background_work()) {
            s.need_driver();
        }
    }
}

/// The driver thread: drives the runtime while calls overlap and no caller drives, and while no
/// call has started for a whole `IDLE_GRACE`; each spell ends when a lone call starts (it asks
/// for the runtime) or the engine stops.
fn drive(s: &Shared) {
    let mut seen = s.entries.load(SeqCst);
    loop {
        if s.stop.load(SeqCst) {
            return;
        }
        if s.active.load(SeqCst) > 0 && !s.caller_drives.load(SeqCst) {
            spell(s, |s| !s.caller_drives.load(SeqCst));
            seen = s.entries.load(SeqCst);
            continue;
        }
        std::thread::park_timeout(IDLE_GRACE);
        let now = s.entries.load(SeqCst);
        if now == seen && s.active.load(SeqCst) == 0 {
            spell(s, |s| s.active.load(SeqCst) == 0 && s.entries.load(SeqCst) == now);
        }
        seen = s.entries.load(SeqCst);
    }
}

/// One spell of driving, if `still` holds once `driving` is announced: a lone call starting now
/// either is seen by `still` or sees `driving` and asks for the runtime back (SeqCst orders the
/// two flags).
fn spell(s: &Shared, still: impl Fn(&Shared) -> bool) {
    s.driving.store(true, SeqCst);
    if !s.stop.load(SeqCst) && !s.caller_drives.load(SeqCst) && still(s) {
        let _counted = crate::base::quiet::Counted::new(&s.quiet);
        super::boundary::contain(|| s.runtime.block_on(released(s)));
    }
    s.driving.store(false, SeqCst);
    let waiter = s.spell_waiter.lock().unwrap_or_else(PoisonError::into_inner).take();
    if let Some(waiter) = waiter {
        waiter.wake(); // a lone caller beside the spell takes the runtime now
    }
}

/// Until the driver is asked to stand down (the engine's tick keeps a timer armed meanwhile, see
/// [`SPELL_TICK`]).
async fn released(s: &Shared) {
    s.release.notified().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_bare_engine_is_kept_for_the_next_client() {
        let fresh = OwnEngine::start(false).unwrap();
        assert!(fresh.bare(), "a new engine without a driver thread is bare");
        fresh.block_on(async { tokio::task::yield_now().await });
        assert!(fresh.bare(), "a call that leaves nothing behind keeps it bare");

        fresh.spawn(std::future::pending::<()>());
        assert!(!fresh.bare(), "a task left alive (and the driver thread it started)");
        fresh.shutdown(Duration::from_secs(1));

        let eager = OwnEngine::start(true).unwrap();
        assert!(!eager.bare(), "an eager engine may start its driver at any park");
        eager.shutdown(Duration::from_secs(1));

        let blocking = OwnEngine::start(false).unwrap();
        blocking.block_on(async { tokio::task::spawn_blocking(|| ()).await.unwrap() });
        assert!(!blocking.bare(), "a blocking-pool thread was started");
        blocking.shutdown(Duration::from_secs(1));
    }
}
