//! Started calls: every operation that waits on the server also exists as `*_start`, which
//! returns at once with an `mcp_call` handle and later runs a completion callback exactly once,
//! on the client's delivery path (the dispatcher thread, or the host's loop in host-loop mode).
//!
//! Exactly once: each started call has its own cell, whose lock guards the call's pending
//! state. Whoever takes that state — the call's task with its result, `mcp_call_cancel`, or the
//! client's close — owns the one delivery (queued under the cell's lock, so none is queued after
//! `close_all` returns), and everyone else finds nothing to do. The client's `Registry` only
//! lists the cells for `close_all`: it is touched when a call starts, never when one completes,
//! so the runtime thread completing calls and the host thread starting them share no lock. A
//! delivery that is dropped unrun (the dispatcher stopped by `mcp_client_free`) runs its
//! callback as it drops, so `free` with calls in flight still completes each of them before
//! returning.

use super::boundary::{ffi_boundary, handle, into_handle, put, take_handle, Handle};
use super::client::{mcp_client, on_client, FfiClient};
use super::engine::Engine;
use super::error::{mcp_error, Failure};
use super::observe::span_sink;
use super::opts::{ask_now, mcp_call_opts, request_options_lazy};
use super::status::{mcp_status, MCP_CANCELLED, MCP_CLOSED, MCP_OK};
use super::strings::{arg_str, opt_json, opt_json_object, opt_raw_json_object, opt_str};
use super::subscription::mcp_subscription;
use crate::base::BoxFuture;
use crate::client::observe::SpanSink;
use crate::client::{CancelToken, Client, ListKind, Reply, RequestOptions, SubscriptionEvent};
use crate::error::Error;
use crate::protocol::methods;
use serde_json::{json, Map, Value};
use std::ffi::{c_char, c_void, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A started call's completion: `status` is `MCP_OK` with `result_json` (`result_len` bytes,
/// NUL-terminated), or a failure with `error` (status, message and the `mcp_error_*` accessors,
/// `MCP_INPUT_REQUIRED` included). Both are borrowed until the callback returns. Runs exactly
/// once per started call — also when it is cancelled (`MCP_CANCELLED`), times out
/// (`MCP_TIMEOUT`) or its client closes (`MCP_CLOSED`) — and never inside the `*_start` call.
pub type mcp_call_done_fn = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        status: mcp_status,
        result_json: *const c_char,
        result_len: usize,
        error: *const mcp_error,
    ),
>;

type DoneFn = unsafe extern "C" fn(*mut c_void, mcp_status, *const c_char, usize, *const mcp_error);

/// A started call. Owned by the caller (when `call_out` was given) and freed with
/// `mcp_call_free`, before or after its completion, from any thread (its own completion
/// callback included).
pub struct mcp_call {
    cell: Arc<CallCell>,
    registry: Arc<Registry>,
}

// SAFETY: crosses the ABI only as a `Box` made by `into_handle`, freed by `mcp_call_free`.
unsafe impl Handle for mcp_call {}

struct SendPtr(*mut c_void);
// SAFETY: the header requires completion userdata to be usable on the delivery thread.
unsafe impl Send for SendPtr {}

struct Pending {
    done: DoneFn,
    userdata: SendPtr,
    /// The call's progress gate: closed as the completion runs, so no progress follows it.
    progress: Option<Arc<Mutex<bool>>>,
    /// The call's spans, handed to the span listener just before the completion runs.
    spans: Option<Arc<SpanSink>>,
}

type Outcome = Result<Vec<u8>, Failure>;

/// One completion to run. Dropped unrun, it runs as it drops (see the module comment).
struct Delivery {
    pending: Pending,
    outcome: Option<Outcome>,
}

impl Delivery {
    fn run(mut self) {
        self.deliver();
    }

    fn deliver(&mut self) {
        let Some(outcome) = self.outcome.take() else { return };
        if let Some(open) = &self.pending.progress {
            *open.lock().unwrap() = false;
        }
        if let Some(spans) = &self.pending.spans {
            spans.deliver();
        }
        let (f, ud) = (self.pending.done, self.pending.userdata.0);
        match outcome {
            Ok(mut bytes) => {
                let len = bytes.len();
                bytes.push(0);
                // JSON the library produced never holds a NUL (see strings::give_json_bytes).
                let text = CString::from_vec_with_nul(bytes).unwrap_or_default();
                // SAFETY: host callback; the arguments are borrowed for its duration.
                unsafe { f(ud, MCP_OK, text.as_ptr(), len, std::ptr::null()) };
            }
            Err(failure) => {
                let status = failure.status;
                let error = mcp_error::from_failure(failure);
                // SAFETY: host callback; the arguments are borrowed for its duration.
                unsafe { f(ud, status, std::ptr::null(), 0, &error) };
            }
        }
    }
}

impl Drop for Delivery {
    fn drop(&mut self) {
        self.deliver();
    }
}

/// One started call: its pending state until someone completes it.
struct CallCell {
    pending: Mutex<Option<Pending>>,
    /// Set (under `pending`'s lock) once completed: lets the registry prune without locking.
    finished: AtomicBool,
    /// The call's own token (what `mcp_call_cancel` cancels).
    cancel: CancelToken,
}

impl CallCell {
    /// Completes the call with `outcome` unless something completed it first; whether it won.
    /// The delivery is queued under the cell's lock (see the module comment); one the
    /// dispatcher refused (stopped) runs here once the lock is released.
    fn complete(&self, dispatcher: &super::dispatcher::Dispatcher, outcome: Outcome) -> bool {
        let refused = {
            let mut pending = self.pending.lock().unwrap();
            let Some(pending) = pending.take() else {
                return false;
            };
            self.finished.store(true, Ordering::Release);
            let delivery = Delivery {
                pending,
                outcome: Some(outcome),
            };
            // One allocation per delivery: the job owns it, and runs it as it drops if unrun.
            dispatcher.try_post(Box::new(move || delivery.run())).err()
        };
        drop(refused); // delivers inline, outside the lock, if the dispatcher had stopped
        true
    }
}

/// The pending started calls of one client, for `close_all`.
pub(crate) struct Registry {
    dispatcher: Arc<super::dispatcher::Dispatcher>,
    calls: Mutex<Calls>,
}

#[derive(Default)]
struct Calls {
    closed: bool,
    /// Every cell added since the last prune: finished ones are dropped when the list has
    /// doubled since then, so its length stays within twice the calls in flight (amortised
    /// O(1) per start).
    cells: Vec<Arc<CallCell>>,
    prune_at: usize,
}

impl Registry {
    pub fn new(dispatcher: Arc<super::dispatcher::Dispatcher>) -> Arc<Registry> {
        Arc::new(Registry {
            dispatcher,
            calls: Mutex::new(Calls::default()),
        })
    }

    fn add(&self, pending: Pending, cancel: CancelToken) -> Result<Arc<CallCell>, Failure> {
        let cell = Arc::new(CallCell {
            cancel,
            pending: Mutex::new(Some(pending)),
            finished: AtomicBool::new(false),
        });
        let mut calls = self.calls.lock().unwrap();
        if calls.closed {
            return Err(closed());
        }
        if calls.cells.len() >= calls.prune_at {
            calls.cells.retain(|c| !c.finished.load(Ordering::Acquire));
            calls.prune_at = (calls.cells.len() * 2).max(64);
        }
        calls.cells.push(cell.clone());
        Ok(cell)
    }

    /// Completes `cell` with `outcome` unless something completed it first; whether it won.
    fn complete(&self, cell: &CallCell, outcome: Outcome) -> bool {
        cell.complete(&self.dispatcher, outcome)
    }

    /// Completes every pending call with `MCP_CLOSED` and refuses new ones (`mcp_client_close`).
    pub fn close_all(&self) {
        let cells = {
            let mut calls = self.calls.lock().unwrap();
            calls.closed = true;
            std::mem::take(&mut calls.cells)
        };
        // No call is added from here on; each cell is completed under its own lock.
        for cell in cells {
            if self.complete(&cell, Err(closed())) {
                cell.cancel.cancel();
            }
        }
    }
}

fn closed() -> Failure {
    Failure::new(MCP_CLOSED, "the client was closed")
}

/// A started call's future, boxed where it is made: a call's future is several KiB, and a
/// boxed one moves as a pointer through `start_on` and the engine (each move of the future
/// itself was a copy of all of it, on the host's thread).
pub(crate) type Started<T> = BoxFuture<'static, Result<T, Error>>;

/// What a started call's future yields, as the bytes its completion hands over.
pub(crate) trait Completion: Send + 'static {
    fn into_bytes(self) -> Vec<u8>;
}

impl Completion for Vec<u8> {
    fn into_bytes(self) -> Vec<u8> {
        self
    }
}

impl Completion for serde_json::Value {
    fn into_bytes(self) -> Vec<u8> {
        serde_json::to_vec(&self).unwrap_or_else(|_| b"null".to_vec())
    }
}

impl Completion for Reply {
    fn into_bytes(self) -> Vec<u8> {
        self.into_json()
    }
}

/// What a started call needs of its owner, a client or a hub (`ffi/hub`).
pub(crate) struct Owner<'a> {
    /// The runtime the call runs on (`None`: the owner is freed).
    pub engine: Option<&'a Engine>,
    /// Where its completion (and progress) is delivered.
    pub dispatcher: &'a Arc<super::dispatcher::Dispatcher>,
    /// Its pending started calls.
    pub registry: &'a Arc<Registry>,
    /// The owner's trace context callback (`ffi/trace`).
    pub trace: Option<Arc<super::trace::TraceHook>>,
    /// Whether to ask the trace context callback now, on the caller's thread (the call will
    /// send an operation); otherwise it is left to the core, which asks it only if the call
    /// does send one.
    pub ask_now: &'a dyn Fn(&RequestOptions) -> bool,
    /// Where the call's spans wait for its completion (`None`: no span listener).
    pub spans: Option<Arc<SpanSink>>,
    /// Whether the owner was closed (checked once the call is made, before it is added).
    pub closed: &'a dyn Fn() -> bool,
}

/// Starts the future `make` returns (after checking the arguments) as a call of `owner`:
/// everything that can be checked now is checked now (a failure returns here, and `done` never
/// runs); from `MCP_OK` on, `done` runs exactly once.
///
/// Only `make` is the caller's own: the checks before it (`prepare`) and the start after it
/// (`launch`, one copy per completion type) are shared by every `*_start` function, which
/// otherwise each carried an inlined copy of them (about 4 KB apiece in the shipped library).
pub(crate) fn start_for<T: Completion>(
    owner: Owner<'_>,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    make: impl FnOnce(RequestOptions) -> Result<Started<T>, Failure>,
) -> Result<(), Failure> {
    let (ro, prepared) = prepare(&owner, opts, done)?;
    let fut = make(ro)?;
    launch(owner, prepared, userdata, call_out, fut)
}

/// What `prepare` made for `launch` beside the call's options.
struct Prepared<'a> {
    done: DoneFn,
    engine: &'a Engine,
    progress: Option<Arc<Mutex<bool>>>,
    /// The call's own token (what mcp_call_cancel cancels).
    own: CancelToken,
    /// A token from `opts`, which cancels the call too.
    shared: Option<CancelToken>,
}

/// `start_for`'s checks and the call's options, before its future is made.
#[inline(never)]
fn prepare<'a>(
    owner: &Owner<'a>,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
) -> Result<(RequestOptions, Prepared<'a>), Failure> {
    let done = done.ok_or_else(|| Failure::null("done"))?;
    let engine = owner.engine.ok_or_else(closed)?;
    let (mut ro, gate) = request_options_lazy(opts, owner.dispatcher, owner.trace.clone())?;
    if ro.trace_source.is_some() && (owner.ask_now)(&ro) {
        ask_now(&mut ro)?;
    }
    ro.spans = owner.spans.clone();
    let progress = gate.map(|g| g.into_flag());
    let own = CancelToken::new();
    let shared = ro.cancel.replace(own.clone());
    Ok((
        ro,
        Prepared {
            done,
            engine,
            progress,
            own,
            shared,
        },
    ))
}

/// `start_for`'s start of the made future: registers the call, spawns it, hands out its handle.
#[inline(never)]
fn launch<T: Completion>(
    owner: Owner<'_>,
    prepared: Prepared<'_>,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    fut: Started<T>,
) -> Result<(), Failure> {
    let Prepared {
        done,
        engine,
        progress,
        own,
        shared,
    } = prepared;
    if (owner.closed)() {
        return Err(closed());
    }
    let registry = owner.registry.clone();
    let cell = registry.add(
        Pending {
            done,
            userdata: SendPtr(userdata),
            progress,
            spans: owner.spans,
        },
        own,
    )?;
    let (task_registry, task_cell) = (registry.clone(), cell.clone());
    engine.spawn_call(async move {
        let result = match shared {
            None => fut.await,
            Some(shared) => {
                let mut fut = fut;
                tokio::select! {
                    biased;
                    r = &mut fut => r,
                    _ = shared.cancelled() => {
                        // The core sees its token cancelled and tells the server, then returns.
                        task_cell.cancel.cancel();
                        fut.await
                    }
                }
            }
        };
        task_registry.complete(&task_cell, result.map(Completion::into_bytes).map_err(Failure::from));
    });
    if !call_out.is_null() {
        put(call_out, into_handle(mcp_call { cell, registry }));
    }
    Ok(())
}

/// `start_for` a call of client `fc`.
pub(crate) fn start_on<T: Completion>(
    fc: &FfiClient,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    make: impl FnOnce(Client, RequestOptions) -> Result<Started<T>, Failure>,
) -> Result<(), Failure> {
    start_asking(fc, opts, done, userdata, call_out, Ask::Now, make)
}

/// When a started call asks the client's trace context callback (see `Owner::ask_now`).
pub(crate) enum Ask<'a> {
    /// Now: the call sends an operation.
    Now,
    /// Only if the core starts an operation (the call may send none: a connect, a subscription's
    /// next event, a modern server's log level).
    Later,
    /// Now unless this request (method and params) would be answered from the response cache.
    UnlessCached(&'a str, Map<String, Value>),
}

/// `start_on`, asking the trace context callback as `ask` says.
pub(crate) fn start_asking<T: Completion>(
    fc: &FfiClient,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    ask: Ask<'_>,
    make: impl FnOnce(Client, RequestOptions) -> Result<Started<T>, Failure>,
) -> Result<(), Failure> {
    let ask_now = |ro: &RequestOptions| asks_now(fc, &ask, ro);
    let owner = Owner {
        engine: fc.engine.as_ref(),
        dispatcher: &fc.dispatcher,
        registry: &fc.calls,
        trace: fc.trace_hook(),
        ask_now: &ask_now,
        spans: span_sink(fc),
        closed: &|| fc.client.is_closed(),
    };
    start_for(owner, opts, done, userdata, call_out, |ro| make(fc.client.clone(), ro))
}

/// Whether `ask` asks the trace context callback now (outside the generic `start_asking`).
fn asks_now(fc: &FfiClient, ask: &Ask<'_>, ro: &RequestOptions) -> bool {
    match ask {
        Ask::Now => true,
        Ask::Later => false,
        Ask::UnlessCached(method, params) => !fc.client.answered_from_cache(method, params, ro),
    }
}

/// `start_on` for a client argument and a call whose result is a `Reply`.
pub(crate) fn start(
    client: *mut mcp_client,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    make: impl FnOnce(Client, RequestOptions) -> Result<Started<Reply>, Failure>,
) -> Result<(), Failure> {
    on_client(client, |fc| start_on(fc, opts, done, userdata, call_out, make))
}

/// `start_asking` for a client argument.
fn start_cacheable(
    client: *mut mcp_client,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    ask: Ask<'_>,
    make: impl FnOnce(Client, RequestOptions) -> Result<Started<Reply>, Failure>,
) -> Result<(), Failure> {
    on_client(client, |fc| start_asking(fc, opts, done, userdata, call_out, ask, make))
}

fn list_kind(kind: i32) -> Result<ListKind, Failure> {
    super::client::list_kind(kind)
}

fn with_input(
    mut ro: RequestOptions,
    input_responses_json: *const c_char,
    request_state: *const c_char,
) -> Result<RequestOptions, Failure> {
    ro.input_responses = opt_json_object(input_responses_json, "input_responses_json")?;
    ro.request_state = opt_str(request_state, "request_state")?.map(str::to_string);
    Ok(ro)
}

/// The members of a JSON object (empty for anything else).
fn json_map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Started `mcp_client_connect`: completes with the server info JSON. Calls started
/// before the connection is up wait for it (each call connects lazily).
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_connect_start(
    client: *mut mcp_client,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        on_client(client, |fc| {
            start_asking(fc, opts, done, userdata, call_out, Ask::Later, |c, ro| {
                Ok(Box::pin(async move { Ok(c.connected(&ro).await?.info_json()) }))
            })
        })
    })
}

/// Started `mcp_client_call_tool` (same arguments, copied now). MRTR input requests are
/// answered by the registered handlers, whose callbacks run on the delivery path like the
/// completion; a missing handler completes with `MCP_INPUT_REQUIRED`.
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_call_tool_start(
    client: *mut mcp_client,
    name: *const c_char,
    arguments_json: *const c_char,
    input_responses_json: *const c_char,
    request_state: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start(client, opts, done, userdata, call_out, |c, ro| {
            let name = arg_str(name, "name")?.to_string();
            // Checked and copied as text: one allocation instead of a decoded map.
            let args = opt_raw_json_object(arguments_json, "arguments_json")?.map(ToOwned::to_owned);
            let ro = with_input(ro, input_responses_json, request_state)?;
            Ok(Box::pin(
                async move { c.call_tool_raw(&name, args.as_deref(), &ro).await },
            ))
        })
    })
}

/// Started `mcp_client_get_prompt`.
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_get_prompt_start(
    client: *mut mcp_client,
    name: *const c_char,
    arguments_json: *const c_char,
    input_responses_json: *const c_char,
    request_state: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start(client, opts, done, userdata, call_out, |c, ro| {
            let name = arg_str(name, "name")?.to_string();
            let args = opt_json_object(arguments_json, "arguments_json")?;
            let ro = with_input(ro, input_responses_json, request_state)?;
            Ok(Box::pin(async move { c.get_prompt_reply(&name, args, &ro).await }))
        })
    })
}

/// Started `mcp_client_read_resource`.
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_read_resource_start(
    client: *mut mcp_client,
    uri: *const c_char,
    input_responses_json: *const c_char,
    request_state: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let manual = !input_responses_json.is_null() || !request_state.is_null();
        let probe = match arg_str(uri, "uri")? {
            uri if !manual => Ask::UnlessCached(methods::RESOURCES_READ, json_map(json!({"uri": uri}))),
            _ => Ask::Now,
        };
        start_cacheable(client, opts, done, userdata, call_out, probe, |c, ro| {
            let uri = arg_str(uri, "uri")?.to_string();
            let ro = with_input(ro, input_responses_json, request_state)?;
            Ok(Box::pin(async move { c.read_resource_reply(&uri, &ro).await }))
        })
    })
}

/// Started `mcp_client_list` (one page).
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_list_start(
    client: *mut mcp_client,
    kind: i32,
    cursor: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let list = list_kind(kind)?;
        let first = opt_str(cursor, "cursor")?.map(|c| json_map(json!({"cursor": c})));
        let probe = Ask::UnlessCached(list.method(), first.unwrap_or_default());
        start_cacheable(client, opts, done, userdata, call_out, probe, |c, ro| {
            let kind = list_kind(kind)?;
            let cursor = opt_str(cursor, "cursor")?.map(str::to_string);
            Ok(Box::pin(
                async move { c.list_reply(kind, cursor.as_deref(), &ro).await },
            ))
        })
    })
}

/// Started `mcp_client_list_all` (every page, merged).
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_list_all_start(
    client: *mut mcp_client,
    kind: i32,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let probe = Ask::UnlessCached(list_kind(kind)?.method(), Map::new());
        start_cacheable(client, opts, done, userdata, call_out, probe, |c, ro| {
            let kind = list_kind(kind)?;
            Ok(Box::pin(async move { c.list_all(kind, &ro).await.map(Reply::from) }))
        })
    })
}

/// Started `mcp_client_complete`.
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_complete_start(
    client: *mut mcp_client,
    params_json: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start(client, opts, done, userdata, call_out, |c, ro| {
            let params = opt_json_object(params_json, "params_json")?.ok_or_else(|| Failure::null("params_json"))?;
            Ok(Box::pin(async move { c.complete(params, &ro).await.map(Reply::from) }))
        })
    })
}

/// Started `mcp_client_request` (any method; MRTR driven for the three MRTR methods).
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_request_start(
    client: *mut mcp_client,
    method: *const c_char,
    params_json: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let first = match opt_json(params_json, "params_json")? {
            Some(Value::Object(m)) => Some(m),
            None | Some(Value::Null) => Some(Map::new()),
            Some(_) => None,
        };
        let probe = match first {
            Some(params) => Ask::UnlessCached(arg_str(method, "method")?, params),
            None => Ask::Now,
        };
        start_cacheable(client, opts, done, userdata, call_out, probe, |c, ro| {
            let method = arg_str(method, "method")?.to_string();
            let params = opt_json(params_json, "params_json")?;
            Ok(Box::pin(async move { c.request_reply(&method, params, &ro).await }))
        })
    })
}

/// Started `mcp_client_ping` (legacy `ping`): completes with `{}`, or `MCP_UNSUPPORTED` on
/// modern servers (which removed it).
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_ping_start(
    client: *mut mcp_client,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        on_client(client, |fc| {
            start_on(fc, opts, done, userdata, call_out, |c, ro| {
                Ok(Box::pin(async move { c.ping(&ro).await.map(|()| b"{}".to_vec()) }))
            })
        })
    })
}

/// Started `mcp_client_set_log_level`: completes with `{}` once legacy servers acknowledged
/// `logging/setLevel` (modern servers: at once, the level going into later requests' `_meta`).
/// An unknown level is refused here (`MCP_INVALID_ARG`, `done` never runs).
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_set_log_level_start(
    client: *mut mcp_client,
    level: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        on_client(client, |fc| {
            // Only a legacy server is sent a request.
            let legacy = fc
                .client
                .current()
                .is_some_and(|c| c.era() == crate::protocol::Era::Legacy);
            let ask = if legacy { Ask::Now } else { Ask::Later };
            start_asking(fc, opts, done, userdata, call_out, ask, |c, ro| {
                let level = arg_str(level, "level")?.to_string();
                Client::check_log_level(&level)?;
                Ok(Box::pin(async move {
                    c.set_log_level(&level, &ro).await.map(|()| b"{}".to_vec())
                }))
            })
        })
    })
}

/// Started `mcp_subscription_next`: completes with the next notification
/// (`{"method","params"}`), `MCP_TIMEOUT` after `timeout_ms` (negative: no limit),
/// `MCP_CLOSED` once the subscription ended, or its error. One `next` at a time per
/// subscription; the subscription may be freed while one is in flight (it then completes with
/// `MCP_CLOSED` or `MCP_CANCELLED`).
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_subscription_next_start(
    subscription: *mut mcp_subscription,
    timeout_ms: i64,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let sub = handle(subscription, "subscription")?;
        let (fc, stream) = sub.parts();
        fc.check()?;
        if timeout_ms >= 0 {
            crate::client::timeout_ms("timeout_ms", timeout_ms as u64).map_err(|e| Failure::invalid(e.message()))?;
        }
        stream.get()?;
        start_asking(fc, std::ptr::null(), done, userdata, call_out, Ask::Later, |_, ro| {
            let cancel = ro.cancel.clone().unwrap_or_default();
            Ok(Box::pin(async move {
                let Ok(stream) = stream.get() else {
                    return Err(Error::closed());
                };
                let next = async {
                    if timeout_ms < 0 {
                        return Some(stream.next().await);
                    }
                    tokio::time::timeout(Duration::from_millis(timeout_ms as u64), stream.next())
                        .await
                        .ok()
                };
                let event = tokio::select! {
                    e = next => e,
                    _ = cancel.cancelled() => {
                        return Err(Error::new(crate::error::ErrorKind::Cancelled, "the call was cancelled"));
                    }
                };
                match event {
                    None => Err(Error::new(
                        crate::error::ErrorKind::Timeout,
                        "no notification arrived within the timeout",
                    )),
                    Some(Some(SubscriptionEvent::Notification { method, params })) => {
                        Ok(serde_json::to_vec(&json!({"method": method, "params": params})).unwrap_or_default())
                    }
                    Some(Some(SubscriptionEvent::Closed(Some(e)))) => Err(e),
                    Some(Some(SubscriptionEvent::Closed(None)) | None) => Err(Error::closed()),
                }
            }))
        })
    })
}

/// Cancels a started call: unless it already completed, its completion runs (soon, on the
/// delivery path) with `MCP_CANCELLED` and the server is told. Never waits for a callback
/// (not even a running one of this call); any thread, callbacks included. After completion a
/// no-op. `MCP_OK`, or `MCP_NULL_ARG` for NULL.
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_call_cancel(call: *mut mcp_call) -> mcp_status {
    ffi_boundary!({
        match handle(call, "call") {
            Ok(call) => {
                cancel(call);
                MCP_OK
            }
            Err(failure) => failure.status,
        }
    })
}

fn cancel(call: &mcp_call) {
    call.registry
        .complete(&call.cell, Err(Failure::new(MCP_CANCELLED, "the call was cancelled")));
    call.cell.cancel.cancel();
}

/// Frees the handle. Before completion this cancels the call (as `mcp_call_cancel`); its
/// completion still runs exactly once, so free userdata there. NULL is a no-op.
#[no_mangle]
pub extern "C" fn mcp_call_free(call: *mut mcp_call) {
    ffi_boundary!({
        if let Some(call) = take_handle(call) {
            cancel(&call);
        }
    })
}

/// A responder's cancel hook (`mcp_responder_on_cancel`).
pub type mcp_responder_cancel_fn = Option<unsafe extern "C" fn(userdata: *mut c_void)>;

/// Pushed cancellation for an input handler or the authorization callback: `on_cancel(userdata)`
/// runs once, on the delivery path (the dispatcher thread, or the host's loop), when the answer
/// stops being wanted (the call was cancelled, timed out or closed, a sibling input failed, or
/// the authorization flow ended) — at once if that
/// already happened — so a handler answering later need not poll
/// `mcp_responder_is_cancelled`. It never runs once the responder was answered. It does not
/// consume the responder, which must still be completed (a reply then returns
/// `MCP_CANCELLED`); it must not touch a responder another thread may have completed. Only
/// while the host owns the responder (in the handler, or deferred). One hook per responder (a
/// new one replaces it); `userdata_free` runs exactly once, when the hook ran or can no longer
/// run.
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_responder_on_cancel(
    responder: *mut super::responders::mcp_responder,
    on_cancel: mcp_responder_cancel_fn,
    userdata: *mut c_void,
    userdata_free: super::handlers::mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let userdata = super::handlers::Userdata::new(userdata, userdata_free);
        let r = handle(responder, "responder")?;
        let f = on_cancel.ok_or_else(|| Failure::null("on_cancel"))?;
        let hook: super::responder::CancelHook = Box::new(move || {
            // SAFETY: host callback with its own userdata.
            unsafe { f(userdata.ptr()) }
        });
        r.on_cancel(hook)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::atomic::Ordering::SeqCst;

    /// Completions per call, by the index passed as userdata (the race test uses the first
    /// `CALLS`, the prune test the last slot); `BAD`: completions with an unexpected status.
    static COUNTS: std::sync::LazyLock<Vec<AtomicUsize>> =
        std::sync::LazyLock::new(|| (0..=CALLS).map(|_| AtomicUsize::new(0)).collect());
    static BAD: AtomicUsize = AtomicUsize::new(0);
    const CALLS: usize = 2_000;

    extern "C" fn count(ud: *mut c_void, status: mcp_status, _: *const c_char, _: usize, _: *const mcp_error) {
        ffi_boundary!({
            COUNTS[ud as usize].fetch_add(1, SeqCst);
            if status != MCP_OK && status != MCP_CANCELLED && status != MCP_CLOSED {
                BAD.fetch_add(1, SeqCst);
            }
        })
    }

    fn pending(index: usize) -> Pending {
        Pending {
            done: count,
            userdata: SendPtr(index as *mut c_void),
            progress: None,
            spans: None,
        }
    }

    /// The task's result, cancels and close race for each call from three threads: every call
    /// completes exactly once, and once the dispatcher stopped all completions have run.
    #[test]
    fn result_cancel_and_close_race_to_one_completion() {
        for round in 0..10 {
            let dispatcher = super::super::dispatcher::Dispatcher::new();
            let registry = Registry::new(dispatcher.clone());
            for n in COUNTS[..CALLS].iter() {
                n.store(0, SeqCst);
            }
            let cells: Arc<Vec<Arc<CallCell>>> = Arc::new(
                (0..CALLS)
                    .map(|i| registry.add(pending(i), CancelToken::new()).unwrap())
                    .collect(),
            );
            let racer = |cancel: bool| {
                let (registry, cells) = (registry.clone(), cells.clone());
                std::thread::spawn(move || {
                    for cell in cells.iter() {
                        let outcome = if cancel {
                            Err(Failure::new(MCP_CANCELLED, "cancelled"))
                        } else {
                            Ok(b"{}".to_vec())
                        };
                        registry.complete(cell, outcome);
                    }
                })
            };
            let (results, cancels) = (racer(false), racer(true));
            // Close somewhere early, in the middle or late.
            for _ in 0..(round * 20_000) {
                std::hint::spin_loop();
            }
            registry.close_all();
            let late = registry.add(pending(CALLS), CancelToken::new());
            assert!(matches!(late, Err(f) if f.status == MCP_CLOSED));
            results.join().unwrap();
            cancels.join().unwrap();
            dispatcher.stop();
            for (i, n) in COUNTS[..CALLS].iter().enumerate() {
                assert_eq!(n.load(SeqCst), 1, "call {i} completed {} times", n.load(SeqCst));
            }
            assert_eq!(BAD.load(SeqCst), 0);
        }
    }

    /// Finished calls leave the registry's list as calls start, so it stays bounded by the
    /// calls in flight (10,000 started calls from one thread do not make it grow).
    #[test]
    fn the_registry_prunes_finished_calls() {
        let dispatcher = super::super::dispatcher::Dispatcher::new();
        let registry = Registry::new(dispatcher.clone());
        for _ in 0..10_000 {
            let cell = registry.add(pending(CALLS), CancelToken::new()).unwrap();
            assert!(registry.complete(&cell, Ok(b"1".to_vec())));
            assert!(!registry.complete(&cell, Ok(b"2".to_vec())), "completed twice");
        }
        assert!(registry.calls.lock().unwrap().cells.len() <= 64);
        dispatcher.stop();
        assert_eq!(COUNTS[CALLS].load(SeqCst), 10_000);
    }
}
