//! `mcp_client_set_trace_context_fn`: the host's current trace context (SEP-414), asked on the
//! calling thread at the start of each call that has none of its own.

use super::boundary::{ffi_boundary, handle_mut, Borrowable};
use super::client::{on_client, FfiClient};
use super::error::{mcp_error, Failure};
use super::handlers::{mcp_userdata_free_fn, Userdata};
use super::status::mcp_status;
use super::strings::opt_str;
use crate::client::TraceSource;
use crate::protocol::trace::TraceContext;
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// Where a trace context callback puts the host's current context. Valid only during that
/// callback.
pub struct mcp_trace_slot {
    context: Result<Option<TraceContext>, String>,
}

// SAFETY: never boxed: the slot lives on the library's stack during the trace context callback,
// which is the only time the host may pass it back (`mcp_trace_slot_set` only borrows it).
unsafe impl Borrowable for mcp_trace_slot {}

/// Asked for the host's current trace context: call `mcp_trace_slot_set` during the callback,
/// or leave the slot empty when there is none.
pub type mcp_trace_context_fn = Option<unsafe extern "C" fn(userdata: *mut c_void, slot: *mut mcp_trace_slot)>;

/// A client's trace context callback.
pub(crate) struct TraceHook {
    callback: unsafe extern "C" fn(*mut c_void, *mut mcp_trace_slot),
    userdata: Arc<Userdata>,
}

impl TraceHook {
    /// Asks the host (on this thread) for its current context.
    pub(crate) fn ask(&self) -> Result<Option<TraceContext>, Failure> {
        let mut slot = mcp_trace_slot { context: Ok(None) };
        // SAFETY: host callback; the slot is valid for its duration.
        unsafe { (self.callback)(self.userdata.ptr(), &mut slot) };
        slot.context
            .map_err(|e| Failure::invalid(format!("the trace context callback gave an invalid value: {e}")))
    }

    /// The hook as the core's trace source, asked when the call's first uncached operation
    /// starts (on the thread that polls the call).
    pub(crate) fn source(self: Arc<Self>) -> TraceSource {
        Arc::new(move || self.ask().map_err(|f| crate::error::Error::invalid(f.message)))
    }
}

/// Sets (NULL `callback`: removes) the callback that gives the host's current W3C trace
/// context (SEP-414). It runs on the thread that calls a request function of this client
/// (blocking or `*_start`), for a call whose `mcp_call_opts.meta_json` has no `traceparent` or
/// `baggage`: once for each operation the call sends (a request that goes out, with its MRTR
/// retries, task polls and retry after a reconnect), before it is sent, and never for an answer
/// from the response cache or for a connect — so each context it gives has its span record
/// (`mcp_client_on_span`). A blocking all-pages list asks per page, a started one once for all
/// its pages. A started call that may be answered from the cache asks only when it will not be
/// (should the entry expire before the call runs, it is asked on the client's runtime thread).
/// What it sets goes on every request of that operation. It must not call this library except
/// `mcp_trace_slot_set`. An invalid value fails the call with `MCP_INVALID_ARG`, nothing sent.
/// `userdata_free` runs exactly once, even when this call fails; the callback is never called
/// after it.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_set_trace_context_fn(
    client: *mut super::client::mcp_client,
    callback: mcp_trace_context_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let userdata = Userdata::new(userdata, userdata_free);
        on_client(client, move |fc: &FfiClient| {
            let hook = callback.map(|callback| Arc::new(TraceHook { callback, userdata }));
            *fc.trace.write().unwrap() = hook;
            Ok(())
        })
    })
}

/// Sets the current context inside a trace context callback: `traceparent`, `tracestate` and
/// `baggage` in their W3C formats (each borrowed, copied; NULL or "" for none). `MCP_INVALID_ARG`
/// for an invalid value (the call then fails the same way). Only valid inside the callback.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_trace_slot_set(
    slot: *mut mcp_trace_slot,
    traceparent: *const c_char,
    tracestate: *const c_char,
    baggage: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let slot = handle_mut(slot, "slot")?;
        let (parent, state, bag) = (
            opt_str(traceparent, "traceparent")?,
            opt_str(tracestate, "tracestate")?,
            opt_str(baggage, "baggage")?,
        );
        slot.context = TraceContext::new(parent, state, bag);
        slot.context.clone().map(drop).map_err(Failure::invalid)
    })
}

/// Sets (NULL `callback`: removes) the hub's trace context callback: the host's current W3C
/// trace context (SEP-414) for the hub's calls, as `mcp_client_set_trace_context_fn` gives it
/// to a client's. A hub call whose `mcp_call_opts.meta_json` has no `traceparent` or `baggage`
/// asks it, and what it gives goes in the `_meta` of the member requests the call sends:
///
/// - a blocking call (`mcp_hub_call_tool`, `mcp_hub_get_prompt`, `mcp_hub_read_resource`,
///   `mcp_hub_list`) asks it on the calling thread once for each member operation it sends (the
///   routed request with its MRTR retries, task polls and retry after a reconnect; each
///   member's list request (`tools/list`, …) fetched for a merged list or for routing), before that operation is sent,
///   never for an answer from a cache or for a connect: each context it gives has its span
///   record (`mcp_hub_on_span`), whose `parent` it is;
/// - a started call (`*_start`) asks it once, on the calling thread, inside the `*_start` call;
///   every member operation of that call then carries that one context.
///
/// Requests the hub sends on its own (`mcp_hub_start`'s connects, a modern member's
/// `subscriptions/listen`) ask nothing. The callback must not call this library except
/// `mcp_trace_slot_set`; it may run on several threads at once. An invalid value fails the
/// call with `MCP_INVALID_ARG`, nothing sent. Ownership: `userdata_free` (may be NULL) runs
/// exactly once — when the callback is replaced or removed and no call can still ask it, when
/// the hub is freed, or at once if this call fails — and the callback is never called after
/// it. Any thread; not from a callback of this hub's.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_set_trace_context_fn(
    hub: *mut super::hub::mcp_hub,
    callback: mcp_trace_context_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let userdata = Userdata::new(userdata, userdata_free);
        let h = super::boundary::handle(hub, "hub")?;
        h.check()?;
        let hook = callback.map(|callback| Arc::new(TraceHook { callback, userdata }));
        h.hub().set_trace_source(hook.clone().map(TraceHook::source));
        *h.trace.write().unwrap() = hook;
        Ok(())
    })
}
