//! `mcp_client`: creation, connection, calls, close and free. Each call blocks the calling
//! thread on the client's own runtime; callbacks run on the client's dispatcher thread.

use super::boundary::{ffi_boundary, handle, handle_opt, into_handle, out, take_handle, Handle};
use super::config::mcp_config;
use super::dispatcher::Dispatcher;
use super::engine::Engine;
use super::error::{mcp_error, Failure};
use super::observe::span_sink;
use super::opts::{mcp_call_opts, request_options_lazy, ProgressGate};
use super::status::{mcp_status, MCP_CLOSED, MCP_FORKED, MCP_NOT_CONNECTED, MCP_PANIC, MCP_REENTRANT_CALL};
use super::strings::{
    arg_str, give_json_bytes, give_json_in_place, opt_json, opt_json_object, opt_raw_json_object, opt_str,
};
use crate::client::observe::SpanSink;
use crate::client::{Client, ClientConfig, ListKind, Reply, RequestOptions};
use crate::error::Error;
use crate::protocol::Era;
use serde_json::Value;
use std::ffi::c_char;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// List kinds for `mcp_client_list` and `mcp_client_list_all`.
pub const MCP_LIST_TOOLS: i32 = 0;
pub const MCP_LIST_PROMPTS: i32 = 1;
pub const MCP_LIST_RESOURCES: i32 = 2;
pub const MCP_LIST_RESOURCE_TEMPLATES: i32 = 3;

/// Eras reported by `mcp_client_era`.
pub const MCP_ERA_NONE: i32 = 0;
pub const MCP_ERA_MODERN: i32 = 1;
pub const MCP_ERA_LEGACY: i32 = 2;

/// An MCP client. Thread-safe except `mcp_client_free`.
pub struct mcp_client {
    shared: Arc<FfiClient>,
}

pub(crate) struct FfiClient {
    /// The client's runtime and its driver thread (see `engine`).
    pub(crate) engine: Option<Engine>,
    pub(crate) client: Client,
    pub(crate) dispatcher: Arc<Dispatcher>,
    /// `fork::generation()` when created: another value means this is a forked child.
    fork_generation: u64,
    poisoned: AtomicBool,
    /// Started calls not yet completed (`ffi/call`).
    pub(crate) calls: Arc<super::call::Registry>,
    /// The host's trace context callback (`ffi/trace`).
    pub(crate) trace: std::sync::RwLock<Option<Arc<super::trace::TraceHook>>>,
}

impl FfiClient {
    /// The trace context callback, if the host set one.
    pub(crate) fn trace_hook(&self) -> Option<Arc<super::trace::TraceHook>> {
        self.trace.read().unwrap().clone()
    }

    pub(crate) fn forked(&self) -> bool {
        super::fork::generation() != self.fork_generation
    }

    pub(crate) fn check(&self) -> Result<(), Failure> {
        if self.forked() {
            return Err(Failure::new(
                MCP_FORKED,
                "this client was created before fork(); create clients after forking",
            ));
        }
        if self.poisoned.load(Ordering::SeqCst) {
            return Err(Failure::new(
                MCP_PANIC,
                "the client is poisoned by an earlier internal panic",
            ));
        }
        Ok(())
    }

    /// Runs a core future to completion on the calling thread.
    pub(crate) fn block_on<T>(&self, fut: impl Future<Output = Result<T, Error>>) -> Result<T, Failure> {
        self.blocking_engine()?.block_on(fut).map_err(Failure::from)
    }

    /// The engine a blocking call runs on (not generic: one copy for every call's future).
    fn blocking_engine(&self) -> Result<&Engine, Failure> {
        if self.dispatcher.is_current() || tokio::runtime::Handle::try_current().is_ok() {
            return Err(Failure::new(
                MCP_REENTRANT_CALL,
                "a blocking mcp_client call was made from a callback or a runtime thread",
            ));
        }
        self.engine
            .as_ref()
            .ok_or_else(|| Failure::new(MCP_CLOSED, "the client is freed"))
    }
}

impl FfiClient {
    fn new(engine: Engine, config: ClientConfig, dispatcher: Arc<Dispatcher>) -> Arc<FfiClient> {
        Arc::new(FfiClient {
            engine: Some(engine),
            client: Client::new(config),
            calls: super::call::Registry::new(dispatcher.clone()),
            dispatcher,
            fork_generation: super::fork::generation(),
            poisoned: AtomicBool::new(false),
            trace: Default::default(),
        })
    }
}

impl Drop for FfiClient {
    fn drop(&mut self) {
        if let Some(engine) = self.engine.take() {
            if !self.forked() {
                engine.shutdown(Duration::from_secs(2));
            } else {
                engine.leak(); // its threads do not exist in a forked child
            }
        }
    }
}

// SAFETY: crosses the ABI only as a `Box` made by `into_handle`, freed by `mcp_client_free`.
unsafe impl Handle for mcp_client {}

/// Runs `body` on a client argument (inside `ffi_boundary!`): NULL is `MCP_NULL_ARG`, a forked
/// or poisoned client fails, and a panic in `body` poisons the client on its way to the boundary.
pub(crate) fn on_client<'a, R>(
    client: *const mcp_client,
    body: impl FnOnce(&'a FfiClient) -> Result<R, Failure>,
) -> Result<R, Failure> {
    let fc: &'a FfiClient = &handle(client, "client")?.shared;
    fc.check()?;
    let poison = PoisonOnUnwind(fc);
    let result = body(fc);
    std::mem::forget(poison);
    result
}

/// Poisons its client when dropped, which only happens while a panic unwinds (`on_client`
/// forgets it on the normal path).
struct PoisonOnUnwind<'a>(&'a FfiClient);

impl Drop for PoisonOnUnwind<'_> {
    fn drop(&mut self) {
        self.0.poisoned.store(true, Ordering::SeqCst);
    }
}

pub(crate) fn shared(client: &mcp_client) -> Arc<FfiClient> {
    client.shared.clone()
}

/// A write to a server that went away must fail with EPIPE, not kill the host: SIGPIPE is
/// ignored unless the host installed its own disposition (documented in the header).
fn ignore_sigpipe() {
    // Windows has no signals: a write to a closed pipe fails with an error.
    #[cfg(unix)]
    // SAFETY: querying and setting a signal disposition; only the default is replaced.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut current) == 0 && current.sa_sigaction == libc::SIG_DFL
        {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
    }
}

/// Creates a client from `config` (copied; the caller still frees it). Nothing is started until
/// `mcp_client_connect` (or the first call, which connects). Free with `mcp_client_free`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_new(
    config: *const mcp_config,
    client_out: *mut *mut mcp_client,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let config = handle(config, "config")?;
        let client_out = out(client_out, "client_out")?;
        let config_settings = &config.settings;
        let config = ClientConfig::from_json(&Value::Object(config_settings.clone()))?;
        ignore_sigpipe();
        if super::shared_rt::wants_shared(config_settings) {
            let pool = super::shared_rt::pool()
                .map_err(|e| Failure::new(super::status::MCP_IO, format!("cannot start the shared runtime: {e}")))?;
            let dispatcher = Dispatcher::on_shared(&pool);
            *client_out = into_handle(mcp_client {
                shared: FfiClient::new(Engine::Shared(pool.runtime()), config, dispatcher),
            });
            return Ok(());
        }
        // A stdio server's output and exit are read between calls from the connect on.
        let eager = matches!(config.transport, crate::transport::TransportConfig::Stdio(_));
        let engine = Engine::start(eager)
            .map_err(|e| Failure::new(super::status::MCP_IO, format!("cannot start the runtime: {e}")))?;
        let shared = FfiClient::new(engine, config, Dispatcher::new());
        *client_out = into_handle(mcp_client { shared });
        Ok(())
    })
}

/// Connects: starts the server and settles the era (auto: `server/discover`, falling back to
/// `initialize`). Idempotent. `server_info_json_out` (may be NULL) receives the server info
/// JSON: `{"era","protocolVersion","capabilities","serverInfo","instructions","raw"}`.
/// Under per-call options (`opts` may be NULL): the cancel token, and `timeout_ms` and
/// `max_total_ms` (each capping the whole connect), end this call with `MCP_CANCELLED` or
/// `MCP_TIMEOUT`. The attempt itself goes on in the background for later calls, bounded by the
/// configured timeouts, until the client is closed; with a token that is already cancelled
/// nothing starts. Any thread; not from a callback.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_connect(
    client: *mut mcp_client,
    opts: *const mcp_call_opts,
    server_info_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        on_client(client, |fc| {
            // A connect sends no operation: the trace context callback is not asked.
            let (ro, gate) = request_options_lazy(opts, &fc.dispatcher, None)?;
            let conn = fc.block_on(fc.client.connected(&ro));
            drop(gate);
            let conn = conn?;
            if !server_info_json_out.is_null() {
                give_json_bytes(server_info_json_out, conn.info_json());
            }
            Ok(())
        })
    })
}

/// The server info JSON (see `mcp_client_connect`); `MCP_NOT_CONNECTED` before connecting.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_server_info(
    client: *const mcp_client,
    server_info_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        on_client(client, |fc| {
            out(server_info_json_out, "server_info_json_out")?;
            let conn = fc
                .client
                .current()
                .ok_or_else(|| Failure::new(MCP_NOT_CONNECTED, "call mcp_client_connect first"))?;
            give_json_bytes(server_info_json_out, conn.info_json());
            Ok(())
        })
    })
}

/// How many listener and progress callbacks were dropped, not run, because 4096 callbacks
/// already waited for the dispatcher thread (host callbacks slower than the server's flow; the
/// queue is bounded so memory stays bounded). 0 for NULL. Input handlers are never dropped.
#[no_mangle]
pub unsafe extern "C" fn mcp_client_dropped_callbacks(client: *const mcp_client) -> u64 {
    ffi_boundary!({ handle_opt(client).map_or(0, |c| c.shared.dispatcher.dropped()) })
}

/// `MCP_ERA_MODERN`, `MCP_ERA_LEGACY`, or `MCP_ERA_NONE` before connecting (or for NULL).
#[no_mangle]
pub unsafe extern "C" fn mcp_client_era(client: *const mcp_client) -> i32 {
    ffi_boundary!(fallback = MCP_ERA_NONE, {
        match handle_opt(client)
            .and_then(|c| c.shared.client.current())
            .map(|c| c.era())
        {
            Some(Era::Modern) => MCP_ERA_MODERN,
            Some(Era::Legacy) => MCP_ERA_LEGACY,
            None => MCP_ERA_NONE,
        }
    })
}

/// Runs one blocking call with per-call options. The call's future stays on this thread's
/// stack: boxing it (a few KiB, above malloc's per-thread cache) cost an arena allocation per
/// call, which many host threads at once contend on.
pub(crate) fn call<'a, F: Future<Output = Result<Reply, Error>>>(
    client: *const mcp_client,
    opts: *const mcp_call_opts,
    result_out: *mut *mut c_char,
    make: impl FnOnce(&'a Client, RequestOptions) -> Result<F, Failure>,
) -> Result<(), Failure> {
    on_client(client, |fc| {
        // Only `make` and the wait are the caller's own: what comes before and after is one
        // copy for every blocking call (inlined into each, it cost about 1.5 KB apiece).
        let (ro, after) = call_prepare(fc, opts, result_out)?;
        // Pinned where it is made: the future (KiBs) then moves into `block_on` as a pointer.
        let fut = std::pin::pin!(make(&fc.client, ro)?);
        call_finish(fc.block_on(fut), after, result_out)
    })
}

/// What `call_finish` closes after the call: its progress gate and its spans.
struct AfterCall(Option<ProgressGate>, Option<Arc<SpanSink>>);

/// `call`'s checks and the call's options.
#[inline(never)]
fn call_prepare(
    fc: &FfiClient,
    opts: *const mcp_call_opts,
    result_out: *mut *mut c_char,
) -> Result<(RequestOptions, AfterCall), Failure> {
    out(result_out, "result_json_out")?;
    let (mut ro, gate): (RequestOptions, Option<ProgressGate>) =
        request_options_lazy(opts, &fc.dispatcher, fc.trace_hook())?;
    let spans = span_sink(fc);
    ro.spans = spans.clone();
    Ok((ro, AfterCall(gate, spans)))
}

/// `call`'s end: closes the gate, hands over the spans, then the result.
#[inline(never)]
fn call_finish(result: Result<Reply, Failure>, after: AfterCall, result_out: *mut *mut c_char) -> Result<(), Failure> {
    let AfterCall(gate, spans) = after;
    drop(gate);
    if let Some(spans) = spans {
        spans.deliver();
    }
    give_json_in_place(result_out, result?.into_json_in_place());
    Ok(())
}

pub(crate) fn list_kind(kind: i32) -> Result<ListKind, Failure> {
    match kind {
        MCP_LIST_TOOLS => Ok(ListKind::Tools),
        MCP_LIST_PROMPTS => Ok(ListKind::Prompts),
        MCP_LIST_RESOURCES => Ok(ListKind::Resources),
        MCP_LIST_RESOURCE_TEMPLATES => Ok(ListKind::ResourceTemplates),
        _ => Err(Failure::invalid(format!("unknown list kind {kind}"))),
    }
}

/// One page of tools, prompts, resources or templates (`MCP_LIST_*`). `cursor` (may be NULL)
/// is the previous page's `nextCursor`. Result: the raw list result JSON.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_list(
    client: *mut mcp_client,
    kind: i32,
    cursor: *const c_char,
    opts: *const mcp_call_opts,
    result_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        call(client, opts, result_json_out, |c, ro| {
            let (kind, cursor) = (list_kind(kind)?, opt_str(cursor, "cursor")?);
            Ok(async move { c.list_reply(kind, cursor, &ro).await })
        })
    })
}

/// Every page of a list, merged: `{"tools": [...]}` (or prompts, resources,
/// resourceTemplates). Bounded by the `max_pages` setting.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_list_all(
    client: *mut mcp_client,
    kind: i32,
    opts: *const mcp_call_opts,
    result_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        call(client, opts, result_json_out, |c, ro| {
            let kind = list_kind(kind)?;
            Ok(async move { c.list_all(kind, &ro).await.map(Reply::from) })
        })
    })
}

/// Manual MRTR fields for the first leg.
fn with_input(
    mut ro: RequestOptions,
    input_responses_json: *const c_char,
    request_state: *const c_char,
) -> Result<RequestOptions, Failure> {
    ro.input_responses = opt_json_object(input_responses_json, "input_responses_json")?;
    ro.request_state = opt_str(request_state, "request_state")?.map(str::to_string);
    Ok(ro)
}

/// `tools/call`. `arguments_json` (a JSON object) may be NULL. For manual MRTR, pass the
/// `inputResponses` object and the `requestState` from an earlier `MCP_INPUT_REQUIRED` error
/// (each may be NULL). Input requests are answered by the registered handlers; when one is
/// missing the call fails with `MCP_INPUT_REQUIRED` (see `mcp_error_input_requests_json`).
/// A tool error (`isError: true`) is `MCP_OK` with the `CallToolResult` JSON.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_call_tool(
    client: *mut mcp_client,
    name: *const c_char,
    arguments_json: *const c_char,
    input_responses_json: *const c_char,
    request_state: *const c_char,
    opts: *const mcp_call_opts,
    result_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        call(client, opts, result_json_out, |c, ro| {
            let name = arg_str(name, "name")?;
            // Kept as its text, borrowed: the call blocks while the string is valid.
            let args = opt_raw_json_object(arguments_json, "arguments_json")?;
            let ro = with_input(ro, input_responses_json, request_state)?;
            Ok(async move { c.call_tool_raw(name, args, &ro).await })
        })
    })
}

/// `prompts/get`; `arguments_json` is an object of strings (may be NULL). MRTR as for
/// `mcp_client_call_tool`. Result: the `GetPromptResult` JSON.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_get_prompt(
    client: *mut mcp_client,
    name: *const c_char,
    arguments_json: *const c_char,
    input_responses_json: *const c_char,
    request_state: *const c_char,
    opts: *const mcp_call_opts,
    result_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        call(client, opts, result_json_out, |c, ro| {
            let name = arg_str(name, "name")?;
            let args = opt_json_object(arguments_json, "arguments_json")?;
            let ro = with_input(ro, input_responses_json, request_state)?;
            Ok(async move { c.get_prompt_reply(name, args, &ro).await })
        })
    })
}

/// `resources/read`. MRTR as for `mcp_client_call_tool`. Result: the `ReadResourceResult` JSON.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_read_resource(
    client: *mut mcp_client,
    uri: *const c_char,
    input_responses_json: *const c_char,
    request_state: *const c_char,
    opts: *const mcp_call_opts,
    result_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        call(client, opts, result_json_out, |c, ro| {
            let uri = arg_str(uri, "uri")?;
            let ro = with_input(ro, input_responses_json, request_state)?;
            Ok(async move { c.read_resource_reply(uri, &ro).await })
        })
    })
}

/// `completion/complete` with `params_json` `{ref, argument, context?}`. Result: the
/// `CompleteResult` JSON.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_complete(
    client: *mut mcp_client,
    params_json: *const c_char,
    opts: *const mcp_call_opts,
    result_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        call(client, opts, result_json_out, |c, ro| {
            let params = opt_json_object(params_json, "params_json")?.ok_or_else(|| Failure::null("params_json"))?;
            Ok(async move { c.complete(params, &ro).await.map(Reply::from) })
        })
    })
}

/// Any request by method name, for methods this library does not model; `params_json` (a JSON
/// object, may be NULL) gets the era's `_meta`. MRTR is driven for the three MRTR methods.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_request(
    client: *mut mcp_client,
    method: *const c_char,
    params_json: *const c_char,
    opts: *const mcp_call_opts,
    result_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        call(client, opts, result_json_out, |c, ro| {
            let method = arg_str(method, "method")?;
            let params = opt_json(params_json, "params_json")?;
            Ok(async move { c.request_reply(method, params, &ro).await })
        })
    })
}

/// Runs a call whose result is not JSON (its future on this thread's stack, as in `call`).
pub(crate) fn act<'a, F: Future<Output = Result<(), Error>>>(
    client: *const mcp_client,
    opts: *const mcp_call_opts,
    make: impl FnOnce(&'a Client, RequestOptions) -> Result<F, Failure>,
) -> Result<(), Failure> {
    on_client(client, |fc| {
        let (mut ro, gate) = request_options_lazy(opts, &fc.dispatcher, fc.trace_hook())?;
        let spans = span_sink(fc);
        ro.spans = spans.clone();
        let fut = std::pin::pin!(make(&fc.client, ro)?);
        let result = fc.block_on(fut);
        drop(gate);
        if let Some(spans) = spans {
            spans.deliver();
        }
        result
    })
}

/// Legacy `ping` (`MCP_UNSUPPORTED` on modern servers, which removed it).
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_ping(
    client: *mut mcp_client,
    opts: *const mcp_call_opts,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        act(client, opts, |c, ro| Ok(async move { c.ping(&ro).await }))
    })
}

/// Sets the server log level ("debug" … "emergency"): legacy `logging/setLevel`; modern
/// servers get it in every later request's `_meta`. Logging is deprecated by the 2026-07-28
/// specification (SEP-2577, removal no earlier than the first release after 2027-07-28): it
/// keeps working, on both eras.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_set_log_level(
    client: *mut mcp_client,
    level: *const c_char,
    opts: *const mcp_call_opts,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        act(client, opts, |c, ro| {
            let level = arg_str(level, "level")?;
            Ok(async move { c.set_log_level(level, &ro).await })
        })
    })
}

/// Legacy `resources/subscribe`; updates arrive at the notification listener
/// (modern servers: use `mcp_client_listen`).
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_subscribe_resource(
    client: *mut mcp_client,
    uri: *const c_char,
    opts: *const mcp_call_opts,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        act(client, opts, |c, ro| {
            let uri = arg_str(uri, "uri")?;
            Ok(async move { c.subscribe_resource(uri, &ro).await })
        })
    })
}

/// Legacy `resources/unsubscribe`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_unsubscribe_resource(
    client: *mut mcp_client,
    uri: *const c_char,
    opts: *const mcp_call_opts,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        act(client, opts, |c, ro| {
            let uri = arg_str(uri, "uri")?;
            Ok(async move { c.unsubscribe_resource(uri, &ro).await })
        })
    })
}

/// Tells a legacy server the host's roots changed (no-op on modern servers). Roots are
/// deprecated by the 2026-07-28 specification (SEP-2577); this keeps working.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_notify_roots_changed(
    client: *mut mcp_client,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        act(client, std::ptr::null(), |c, _| {
            Ok(async move { c.notify_roots_changed().await })
        })
    })
}

/// Closes the connection: every blocked call returns `MCP_CLOSED`, subscriptions end, the
/// server is shut down (stdin closed, then SIGTERM, then SIGKILL to its process group).
/// Idempotent; any thread, callbacks included (from a callback it does not wait for the
/// server to exit). Later calls return `MCP_CLOSED`.
#[no_mangle]
pub unsafe extern "C" fn mcp_client_close(client: *mut mcp_client) {
    ffi_boundary!({
        if let Some(c) = handle_opt(client) {
            close(&c.shared);
        }
    })
}

fn close(fc: &Arc<FfiClient>) {
    if fc.check().is_err() {
        return;
    }
    let Some(engine) = fc.engine.as_ref() else {
        return;
    };
    let client = fc.client.clone();
    client.mark_closed();
    fc.calls.close_all();
    if fc.dispatcher.is_current() || tokio::runtime::Handle::try_current().is_ok() {
        engine.spawn(async move { client.close().await });
    } else {
        // Then a turn for what the close woke (the session's read loop ending, aborted tasks):
        // it runs while this caller drives, rather than as background work that would start
        // the driver thread (`engine`) only to end.
        engine.block_on(async {
            client.close().await;
            tokio::task::yield_now().await
        });
        if fc.client.observed() {
            // The session record the close made is on the dispatcher: delivered before return.
            fc.dispatcher.flush(SESSION_FLUSH);
        }
    }
}

/// How long a close waits for its session record to reach the span listener.
const SESSION_FLUSH: Duration = Duration::from_secs(1);

/// Closes (as `mcp_client_close`), stops the dispatcher and releases handlers: after it returns
/// no callback runs again and every `userdata_free` not still needed by a live responder or
/// subscription has run. NULL is a no-op. Subscriptions and deferred responders stay valid and
/// must still be freed/completed. Calling it from a callback is allowed.
#[no_mangle]
pub unsafe extern "C" fn mcp_client_free(client: *mut mcp_client) {
    ffi_boundary!({
        let Some(client) = take_handle(client) else {
            return;
        };
        if client.shared.forked() {
            // Inherited through fork(): its threads and its server belong to the parent. Touching
            // them (joining, signalling the server's group) would harm the parent: leak instead.
            std::mem::forget(client);
            return;
        }
        let release = move || {
            close(&client.shared);
            client.shared.dispatcher.stop();
            client.shared.client.clear_handlers();
            drop(client);
        };
        if thread_exiting() {
            // Called from a thread-exit destructor (a pthread key's, a C++ thread_local's): this
            // thread's Rust thread-locals, tokio's runtime context among them, may already be
            // gone, and driving the runtime here would panic and skip the graceful close. A fresh
            // thread has them all; joining it keeps `free` synchronous (the helper thread's own
            // panic stays on it: `join` returns it as an error).
            if let Ok(helper) = std::thread::Builder::new().name("mcp-free".into()).spawn(release) {
                let _ = helper.join();
            }
            return;
        }
        release();
    })
}

/// Whether this thread is running its thread-local destructors (tokio's context is gone).
fn thread_exiting() -> bool {
    matches!(tokio::runtime::Handle::try_current(), Err(e) if e.is_thread_local_destroyed())
}
