//! `mcp_client_on_span`: each MCP operation's span by the OpenTelemetry semantic conventions
//! (`crate::client::observe`), handed to the host as JSON on the thread that completes the call
//! (the caller's, for a blocking call; the one running a started call's completion), just
//! before the call's result reaches the host.

use super::boundary::ffi_boundary;
use super::client::{mcp_client, on_client, FfiClient};
use super::dispatcher::Dispatcher;
use super::error::mcp_error;
use super::handlers::{mcp_userdata_free_fn, Userdata};
use super::status::mcp_status;
use super::strings::to_c;
use crate::client::observe::{Observer, SessionRecord, Span, SpanSink};
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// A span listener: `span_json` (borrowed, `span_len` bytes) is one record. A span record is
/// one ended CLIENT span — `{"record": "span", "name", "kind": "client", "start_unix_nano",
/// "end_unix_nano", "attributes": {…}, "events": [{"name", "time_unix_nano", "attributes"}],
/// "status": {"code": "unset"|"error", "message"}, "parent": {"traceparent", "tracestate"}}`
/// (`parent` when the operation carried a trace context) — with the OpenTelemetry MCP
/// conventions' attribute names (`mcp.method.name`, `gen_ai.tool.name`, `jsonrpc.request.id`,
/// `error.type`, `server.port`, …). Record its duration in the `mcp.client.operation.duration`
/// histogram (unit `s`, the convention's boundaries 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5,
/// 10, 30, 60, 120, 300). With `"span_tool_payloads": true` in the configuration a
/// `tools/call` record also has `gen_ai.tool.call.arguments` and (when it succeeded)
/// `gen_ai.tool.call.result`, each as JSON text. A session record — `{"record": "session",
/// "start_unix_nano", "end_unix_nano", "attributes": {"mcp.protocol.version",
/// "mcp.session.id"?, "network.transport", "network.protocol.name"?, "server.address"?,
/// "server.port"?, "error.type"?}}` — is one ended session (closed, lost, or a legacy HTTP
/// session the server expired and the client renewed), the value of the
/// `mcp.client.session.duration` histogram (same unit and boundaries; drop `mcp.session.id`
/// for it). Other `record` values may come: skip what you do not know.
pub type mcp_span_fn = Option<unsafe extern "C" fn(userdata: *mut c_void, span_json: *const c_char, span_len: usize)>;

/// Sets (NULL: removes) the client's span listener, called once for each MCP operation the
/// client sends (each `tools/call`, `prompts/get`, list page, … with its MRTR rounds, task
/// polls and reconnect retries as events), synchronously: on the thread that completes the call,
/// before its result reaches the host — a blocking call's own thread just before it returns, a
/// started call's delivery thread (the dispatcher, or the host's loop) just before its
/// completion callback. (The operation of a started call completed early by `mcp_call_cancel`
/// or a close reports on the dispatcher when it ends.) A slow listener delays only that call's
/// return; it may call this library's non-blocking functions only. Session records come on
/// the dispatcher thread (or the host's loop), a close's before `mcp_client_close` returns
/// (except in host-loop mode). With no listener nothing is built. `userdata_free` runs exactly
/// once, even when this call fails.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_on_span(
    client: *mut mcp_client,
    listener: mcp_span_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let userdata = Userdata::new(userdata, userdata_free);
        on_client(client, move |fc| {
            fc.client.set_observer(observer(listener, userdata, &fc.dispatcher));
            Ok(())
        })
    })
}

type SpanFn = unsafe extern "C" fn(*mut c_void, *const c_char, usize);

/// The host's span listener (`None`: none) as an observer whose session records go through
/// `dispatcher` (a client's, or a hub's).
pub(crate) fn observer(
    listener: mcp_span_fn,
    userdata: Arc<Userdata>,
    dispatcher: &Arc<Dispatcher>,
) -> Option<Arc<dyn Observer>> {
    listener.map(|f| {
        Arc::new(Listener {
            f,
            userdata,
            dispatcher: dispatcher.clone(),
        }) as Arc<dyn Observer>
    })
}

/// The host's span listener as the client's observer: span records go to it on the thread
/// completing the call (through the call's span sink); session records, which end with no
/// call of the host's, through the dispatcher.
struct Listener {
    f: SpanFn,
    userdata: Arc<Userdata>,
    dispatcher: Arc<Dispatcher>,
}

impl Observer for Listener {
    fn span_ended(&self, span: &Span) {
        // JSON text escapes every control character of its strings (NUL as `\u0000`) and has
        // no other NUL byte: the terminator goes on as it is, no scan, no copy into a CString.
        let mut text = span.to_json_bytes();
        debug_assert!(!text.contains(&0));
        let len = text.len();
        text.push(0);
        // SAFETY: host callback; `text` (NUL-terminated, `len` bytes before it) borrowed for
        // its duration.
        unsafe { (self.f)(self.userdata.ptr(), text.as_ptr().cast::<c_char>(), len) }
    }

    fn session_ended(&self, session: &SessionRecord) {
        let (f, ud, text) = (self.f, self.userdata.clone(), to_c(session.to_json().to_string()));
        self.dispatcher.post(Box::new(move || {
            // SAFETY: host callback; `text` borrowed for its duration.
            unsafe { f(ud.ptr(), text.as_ptr(), text.as_bytes().len()) }
        }));
    }
}

/// A span sink for one call of `fc` when a listener is set (`None` otherwise: nothing to
/// hold). Spans that end after the call completed go to the dispatcher.
pub(crate) fn span_sink(fc: &FfiClient) -> Option<Arc<SpanSink>> {
    fc.client.observed().then(|| sink(&fc.dispatcher))
}

/// A span sink whose late spans go to `dispatcher`.
pub(crate) fn sink(dispatcher: &Arc<Dispatcher>) -> Arc<SpanSink> {
    let dispatcher = dispatcher.clone();
    SpanSink::new(Arc::new(move |job| {
        dispatcher.post(job);
    }))
}

/// Sets (NULL: removes) the hub's span listener: the records of every member's operations
/// and sessions, present members and those added later (`mcp_hub_add_member`,
/// `mcp_hub_set_member`, a configuration reload), in the format `mcp_span_fn` describes, each
/// with the attribute `"mcp.server.name"`: the member's name (its key in the configuration
/// file).
///
/// Which operations: a routed call (`mcp_hub_call_tool`, `mcp_hub_get_prompt`,
/// `mcp_hub_read_resource`, their `*_start` forms) is its member's operation, with the
/// handshake of a connect it starts and the member's `tools/list` it may need first; a merged
/// list (`mcp_hub_list`) is one list operation (`tools/list`, …) per member whose list is not held (a list
/// the hub holds sends nothing). The hub's own background requests (a modern member's
/// `subscriptions/listen`, a connect by `mcp_hub_start` or a reload) have records too.
///
/// Threads, as for a client: a record of a blocking hub call arrives on the calling thread
/// just before the call returns; one of a started call on the dispatcher thread just before
/// its completion callback; the others (session records, the records of `mcp_hub_start`'s and
/// a reload's connects, of background requests) on the shared dispatcher thread or a runtime
/// thread. The listener may run on several threads at once, must return quickly, and may call
/// this library's non-blocking functions only (not a blocking `mcp_hub_*` or `mcp_client_*`
/// call). With no listener nothing is built.
///
/// Ownership: `userdata` belongs to the hub from this call on; `userdata_free` (may be NULL)
/// runs exactly once — when the listener is replaced or removed and no member can still call
/// it, when the hub is freed, or at once if this call fails — and the listener is never called
/// after it. Any thread; not from a callback of this hub's.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_on_span(
    hub: *mut super::hub::mcp_hub,
    listener: mcp_span_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let userdata = Userdata::new(userdata, userdata_free);
        let h = super::boundary::handle(hub, "hub")?;
        h.check()?;
        h.hub().set_observer(observer(listener, userdata, &h.dispatcher));
        Ok(())
    })
}
