//! `mcp_call_opts`: per-call options, a versioned by-value struct.

use super::boundary::{arg_opt, ffi_boundary, handle_opt, out};
use super::cancel::mcp_cancel_token;
use super::dispatcher::Dispatcher;
use super::error::Failure;
use super::status::{mcp_status, MCP_INVALID_ARG, MCP_NULL_ARG, MCP_OK};
use super::strings::{opt_json_object, opt_str};
use super::trace::TraceHook;
use crate::client::{timeout_ms, CancelToken, Progress, RequestOptions};
use crate::protocol::trace;
use serde_json::Value;
use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The newest `mcp_call_opts` layout this header describes. A struct only grows by appending
/// fields, each new layout with a new version; the library reads only the fields of the version
/// the caller initialised, so a program built against an older header keeps working.
pub const MCP_CALL_OPTS_VERSION: u32 = 1;

/// Timeouts (every `*_ms` argument and field of type `int64_t`): a positive value is the limit in
/// milliseconds (at most `MCP_MAX_TIMEOUT_MS`); `MCP_TIMEOUT_DEFAULT` (0) takes the documented
/// default; `MCP_TIMEOUT_NONE` (or any negative value) means no limit.
pub const MCP_TIMEOUT_DEFAULT: i64 = 0;
/// See `MCP_TIMEOUT_DEFAULT`.
pub const MCP_TIMEOUT_NONE: i64 = -1;

/// The longest timeout, total cap or grace period the library takes, in milliseconds (2^40,
/// about 34.8 years); longer values are refused with `MCP_INVALID_ARG`, never wrapped.
pub const MCP_MAX_TIMEOUT_MS: i64 = 1_099_511_627_776;
const _: () = assert!(MCP_MAX_TIMEOUT_MS as u64 == crate::client::MAX_TIMEOUT_MS);

/// Progress for one call: `total` is NaN when unknown, `message` NULL when absent.
pub type mcp_progress_fn =
    Option<unsafe extern "C" fn(userdata: *mut c_void, progress: f64, total: f64, message: *const c_char)>;

/// Per-call options. Initialise with `mcp_call_opts_init`, then set fields. Every pointer is
/// borrowed for the duration of the call only.
#[repr(C)]
pub struct mcp_call_opts {
    /// The layout version, set by `mcp_call_opts_init`; do not change it.
    pub version: u32,
    /// Per-request timeout (see `MCP_TIMEOUT_DEFAULT`; default: the client's request timeout).
    /// A `tools/call` the server answers with a task (`"tasks": true`) waits at most this long
    /// for the task's end, counted from the request the task answered (for
    /// `mcp_client_resume_task`, from its start) and started again by each answered input
    /// round; when it passes the call fails with `MCP_TIMEOUT`, `tasks/cancel` is sent (its
    /// answer awaited at most 1 s) and polling stops. Each `tasks/get` poll has this timeout too.
    pub timeout_ms: i64,
    /// Cap for the whole call, MRTR rounds and progress resets included (see
    /// `MCP_TIMEOUT_DEFAULT`; default: none). When it ends the wait for a task (`MCP_TIMEOUT`),
    /// the task is left running: `mcp_client_resume_task` follows it again.
    pub max_total_ms: i64,
    /// Restart the timeout on each progress notification (a progress token is sent); for a
    /// followed task, on each change of its status or status message too.
    pub reset_timeout_on_progress: bool,
    /// Cancels the call when cancelled; may be NULL.
    pub cancel: *const mcp_cancel_token,
    /// Extra `_meta` entries (a JSON object); may be NULL. Its `traceparent`, `tracestate` and
    /// `baggage` members (W3C Trace Context and Baggage, SEP-414) are the call's trace context:
    /// they go on every request the call sends (each MRTR retry, each task poll, each page,
    /// each retry after a reconnect); an invalid value (or `tracestate` without `traceparent`)
    /// fails the call with `MCP_INVALID_ARG` before anything is sent.
    pub meta_json: *const c_char,
    /// Modern servers: this request's log level ("debug" … "emergency"); may be NULL.
    pub log_level: *const c_char,
    /// Called on the dispatcher thread for each progress notification; never after the call
    /// returns. May be NULL.
    pub on_progress: mcp_progress_fn,
    pub progress_userdata: *mut c_void,
    /// Response cache use (SEP-2549) for `server/discover`, the list calls and
    /// `resources/read`: `MCP_CACHE_USE` (default), `MCP_CACHE_REFRESH` or `MCP_CACHE_BYPASS`.
    pub cache_mode: u32,
    /// `mcp_client_call_tool`: do not check `structuredContent` against the tool's
    /// `outputSchema` for this call (no `MCP_OUTPUT_SCHEMA_INVALID`).
    pub skip_output_validation: bool,
}

/// Fills `opts` with defaults for layout `version` (pass `MCP_CALL_OPTS_VERSION`). Call before
/// setting fields. `MCP_INVALID_ARG` for a version this library does not know (a header newer
/// than the library): `opts` is then left unchanged and must not be used.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_call_opts_init(opts: *mut mcp_call_opts, version: u32) -> mcp_status {
    ffi_boundary!({
        if !(1..=MCP_CALL_OPTS_VERSION).contains(&version) {
            return MCP_INVALID_ARG;
        }
        let Ok(opts) = out(opts, "opts") else {
            return MCP_NULL_ARG;
        };
        // Version 1 is the whole struct; a later version writes only its own prefix here.
        *opts = mcp_call_opts {
            version: MCP_CALL_OPTS_VERSION,
            timeout_ms: 0,
            max_total_ms: 0,
            reset_timeout_on_progress: false,
            cancel: std::ptr::null(),
            meta_json: std::ptr::null(),
            log_level: std::ptr::null(),
            on_progress: None,
            progress_userdata: std::ptr::null_mut(),
            cache_mode: super::cache::MCP_CACHE_USE,
            skip_output_validation: false,
        };
        MCP_OK
    })
}

struct SendPtr(*mut c_void);
// SAFETY: progress userdata is used on the dispatcher thread only while the call is running.
unsafe impl Send for SendPtr {}
// SAFETY: as for `Send`: the library never reads through the pointer, it only hands it back.
unsafe impl Sync for SendPtr {}

/// Closes the per-call progress gate when the call returns: no progress callback runs after.
/// Closes the per-call progress gate when the call returns: every progress notification that
/// arrived before the answer is delivered first, and none after.
/// (The dispatcher is `None` once `into_flag` took the gate over.)
pub(crate) struct ProgressGate(Arc<Mutex<bool>>, Option<Arc<Dispatcher>>);

impl ProgressGate {
    /// The gate's flag without the blocking drop: a started call closes it as its completion
    /// runs on the same serial queue, so no flush is needed (`ffi/call`).
    pub(crate) fn into_flag(mut self) -> Arc<Mutex<bool>> {
        self.1 = None;
        self.0.clone()
    }
}

/// How long a returning call waits for its queued progress callbacks.
const PROGRESS_FLUSH: Duration = Duration::from_secs(1);

impl Drop for ProgressGate {
    fn drop(&mut self) {
        let Some(dispatcher) = self.1.take() else {
            return; // a started call's gate: its completion closes it
        };
        // The dispatcher runs jobs in order: once this marker runs, earlier progress jobs ran.
        // (Never called on the dispatcher itself: blocking calls are refused there.)
        let (tx, rx) = std::sync::mpsc::channel();
        // In host-loop mode the host dispatches only between its calls: no flush to wait for.
        if dispatcher.host().is_none()
            && dispatcher.post(Box::new(move || {
                let _ = tx.send(());
            }))
        {
            let _ = rx.recv_timeout(PROGRESS_FLUSH);
        }
        // Taking the lock waits for a callback in flight.
        *self.0.lock().unwrap() = false;
    }
}

/// Converts C options (NULL: defaults) into core options plus the gate that must live until
/// the call returns; a call without its own trace context asks the client's callback for one,
/// now (on the caller's thread).
pub(crate) fn request_options(
    opts: *const mcp_call_opts,
    dispatcher: &Arc<Dispatcher>,
    trace_hook: Option<Arc<TraceHook>>,
) -> Result<(RequestOptions, Option<ProgressGate>), Failure> {
    let (mut ro, gate) = request_options_lazy(opts, dispatcher, trace_hook)?;
    ask_now(&mut ro)?;
    Ok((ro, gate))
}

/// Asks the call's trace source now, if it has one (`request_options_lazy`).
pub(crate) fn ask_now(ro: &mut RequestOptions) -> Result<(), Failure> {
    if let Some(source) = ro.trace_source.take() {
        ro.trace = source()?;
    }
    Ok(())
}

/// As `request_options`, the client's trace context callback left to the core as the call's
/// trace source (asked once per operation the call sends, never for an answer from the
/// response cache): for blocking calls, whose future runs on the caller's thread.
pub(crate) fn request_options_lazy(
    opts: *const mcp_call_opts,
    dispatcher: &Arc<Dispatcher>,
    trace_hook: Option<Arc<TraceHook>>,
) -> Result<(RequestOptions, Option<ProgressGate>), Failure> {
    let Some(o) = arg_opt(opts) else {
        return Ok((
            RequestOptions {
                trace_source: trace_hook.map(TraceHook::source),
                ..RequestOptions::default()
            },
            None,
        ));
    };
    if !(1..=MCP_CALL_OPTS_VERSION).contains(&o.version) {
        return Err(Failure::invalid(
            "mcp_call_opts has an unknown version: initialise it with mcp_call_opts_init",
        ));
    }
    let ms = |key: &str, ms: i64| timeout_ms(key, ms as u64).map_err(|e| Failure::invalid(e.message()));
    let mut ro = RequestOptions {
        timeout: match o.timeout_ms {
            MCP_TIMEOUT_DEFAULT => None,
            t if t <= MCP_TIMEOUT_NONE => Some(Duration::ZERO),
            t => Some(ms("timeout_ms", t)?),
        },
        max_total: match o.max_total_ms {
            t if t > 0 => Some(ms("max_total_ms", t)?),
            _ => None,
        },
        reset_timeout_on_progress: o.reset_timeout_on_progress,
        cancel: handle_opt(o.cancel).map(|c| c.token.clone()),
        log_level: opt_str(o.log_level, "log_level")?.map(str::to_string),
        cache: super::cache::mode(o.cache_mode)?,
        skip_output_validation: o.skip_output_validation,
        ..RequestOptions::default()
    };
    if let Some(Value::Object(mut meta)) = opt_json_object(o.meta_json, "meta_json")? {
        ro.trace = trace::take_from(&mut meta).map_err(|e| Failure::invalid(format!("meta_json: {e}")))?;
        ro.meta = (!meta.is_empty()).then_some(meta);
    }
    if let (None, Some(hook)) = (&ro.trace, trace_hook) {
        ro.trace_source = Some(hook.source());
    }
    let mut gate = None;
    if let Some(f) = o.on_progress {
        let open = Arc::new(Mutex::new(true));
        let dispatcher_for_gate = dispatcher.clone();
        let (dispatcher, ud) = (dispatcher.clone(), Arc::new(SendPtr(o.progress_userdata)));
        let flag = open.clone();
        let call = ro.cancel.clone();
        ro.on_progress = Some(Arc::new(move |p: &Progress| {
            let (flag, ud, p, call) = (flag.clone(), ud.clone(), p.clone(), call.clone());
            dispatcher.post_listener(Box::new(move || {
                // As for input handlers: cancelling the call waits for this, and stops it.
                let busy = call.as_ref().map(CancelToken::enter_callback);
                if busy.as_ref().is_some_and(|b| b.cancelled()) {
                    return;
                }
                let open = flag.lock().unwrap();
                if *open {
                    let message = p.message.map(super::strings::to_c);
                    let msg_ptr = message.as_ref().map_or(std::ptr::null(), |m| m.as_ptr());
                    // SAFETY: host callback; the gate guarantees the call (and its userdata) is live.
                    unsafe { f(ud.0, p.progress, p.total.unwrap_or(f64::NAN), msg_ptr) };
                }
            }));
        }));
        gate = Some(ProgressGate(open, Some(dispatcher_for_gate)));
    }
    Ok((ro, gate))
}
