//! `mcp_hub`: many servers as one client (`crate::hub`), for C hosts. A hub runs every member
//! on the process's shared runtime and delivers its events on the shared dispatcher thread,
//! so threads stay flat however many members it has. Calls block the calling thread.

use super::boundary::{ffi_boundary, handle, into_handle, out, take_handle, Handle};
use super::call::{mcp_call, mcp_call_done_fn, start_for, Owner, Registry, Started};
use super::client::list_kind;
use super::dispatcher::Dispatcher;
use super::engine::Engine;
use super::error::{mcp_error, Failure};
use super::handlers::{mcp_userdata_free_fn, Userdata};
use super::opts::{mcp_call_opts, request_options};
use super::status::{mcp_status, MCP_CLOSED, MCP_FORKED, MCP_IO, MCP_REENTRANT_CALL};
use super::strings::{arg_str, give_json, give_json_bytes, opt_json, opt_json_object, to_c};
use crate::client::RequestOptions;
use crate::error::Error;
use crate::hub::{Hub, HubEvent, HubEventFn, HubOptions, HubSpec, InputAnswers, MemberSpec, ToolFilter};
use serde_json::Value;
use std::ffi::{c_char, c_void};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// A hub of MCP servers. Thread-safe except `mcp_hub_free`.
pub struct mcp_hub {
    engine: Option<Engine>,
    hub: Hub,
    pub(super) dispatcher: Arc<Dispatcher>,
    /// The host's trace context callback (`ffi/trace`), asked by started calls on the
    /// caller's thread (blocking calls leave it to the core hub, which has it as its source).
    pub(super) trace: std::sync::RwLock<Option<Arc<super::trace::TraceHook>>>,
    /// Started calls not yet completed (`ffi/call`).
    calls: Arc<Registry>,
    /// `fork::generation()` when created: another value means this is a forked child.
    fork_generation: u64,
    /// The `${input:…}` answers of the configuration reads that made and reloaded this hub.
    pub(super) input_answers: InputAnswers,
}

// SAFETY: crosses the ABI only as a `Box` made by `into_handle`, freed by `mcp_hub_free`.
unsafe impl Handle for mcp_hub {}

impl mcp_hub {
    pub(super) fn check(&self) -> Result<(), Failure> {
        if super::fork::generation() != self.fork_generation {
            return Err(Failure::new(
                MCP_FORKED,
                "this hub was created before fork(); create hubs after forking",
            ));
        }
        Ok(())
    }

    /// Runs a hub future to completion on the calling thread (never from a callback or a
    /// runtime thread: that would wait on itself).
    pub(super) fn block_on<T>(&self, fut: impl Future<Output = Result<T, Error>>) -> Result<T, Failure> {
        self.blocking_engine()?.block_on(fut).map_err(Failure::from)
    }

    /// The engine a blocking call runs on (not generic: one copy for every call's future).
    fn blocking_engine(&self) -> Result<&Engine, Failure> {
        self.check()?;
        if self.dispatcher.is_current() || tokio::runtime::Handle::try_current().is_ok() {
            return Err(Failure::new(
                MCP_REENTRANT_CALL,
                "a blocking mcp_hub call was made from a callback or a runtime thread",
            ));
        }
        self.engine
            .as_ref()
            .ok_or_else(|| Failure::new(MCP_CLOSED, "the hub is freed"))
    }
}

/// Creates an empty hub. `options_json` (may be NULL) is `{"separator"?: string (default
/// "__"), "prefix"?: bool (default true), "defaults"?: object}`: tool and prompt names are
/// exported as `<member><separator><name>` (or unprefixed), and `defaults` holds configuration
/// keys every member gets unless its own configuration sets them. Add members with
/// `mcp_hub_add_member`, then `mcp_hub_start`. Free with `mcp_hub_free`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_new(
    options_json: *const c_char,
    hub_out: *mut *mut mcp_hub,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let hub_out = out(hub_out, "hub_out")?;
        *hub_out = into_handle(mcp_hub::create(HubSpec::default(), options_json)?);
        Ok(())
    })
}

impl mcp_hub {
    /// A hub of `spec`'s members with `options_json` (`mcp_hub_new`'s), on the shared runtime.
    pub(super) fn create(spec: HubSpec, options_json: *const c_char) -> Result<mcp_hub, Failure> {
        let options = match opt_json(options_json, "options_json")? {
            Some(v) => HubOptions::from_json(&v)?,
            None => HubOptions::default(),
        };
        let hub = Hub::new(spec, options)?;
        let pool = super::shared_rt::pool()
            .map_err(|e| Failure::new(MCP_IO, format!("cannot start the shared runtime: {e}")))?;
        let dispatcher = Dispatcher::on_shared(&pool);
        Ok(mcp_hub {
            engine: Some(Engine::Shared(pool.runtime())),
            hub,
            calls: Registry::new(dispatcher.clone()),
            dispatcher,
            trace: Default::default(),
            fork_generation: super::fork::generation(),
            input_answers: InputAnswers::new(),
        })
    }

    /// The running hub (for `ffi/hub_file`).
    pub(super) fn hub(&self) -> &Hub {
        &self.hub
    }

    /// A span sink for one call when a span listener is set (`None` otherwise).
    fn span_sink(&self) -> Option<Arc<crate::client::observe::SpanSink>> {
        self.hub.observed().then(|| super::observe::sink(&self.dispatcher))
    }
}

/// Adds member `name` with `client_config_json`, the flat configuration `mcp_config_new` takes
/// (`{"command": …}` or `{"url": …}` and the other keys). It starts with `mcp_hub_start`. A
/// configuration the library refuses makes the member `failed` (see `mcp_hub_members_json`),
/// not this call; a name the hub already has is `MCP_INVALID_ARG`. Any thread.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_add_member(
    hub: *mut mcp_hub,
    name: *const c_char,
    client_config_json: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let h = handle(hub, "hub")?;
        h.check()?;
        h.hub.add_member(member_spec(name, client_config_json)?)?;
        Ok(())
    })
}

/// An enabled, eager member without a cap or a tool filter.
fn member_spec(name: *const c_char, client_config_json: *const c_char) -> Result<MemberSpec, Failure> {
    let name = arg_str(name, "name")?;
    let client =
        opt_json(client_config_json, "client_config_json")?.ok_or_else(|| Failure::null("client_config_json"))?;
    Ok(MemberSpec {
        name: name.to_string(),
        enabled: true,
        client,
        tools: ToolFilter::default(),
        lazy: false,
        max_concurrency: None,
    })
}

/// Connects every member not yet started, all at once, and returns when each has connected or
/// failed (each bounded by its `connect_timeout_ms`). A member that fails does not fail this
/// call: read the states with `mcp_hub_members_json`. Any thread; not from a callback.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_start(hub: *mut mcp_hub, err_out: *mut *mut mcp_error) -> mcp_status {
    ffi_boundary!(err_out, {
        let h = handle(hub, "hub")?;
        h.block_on(async {
            h.hub.start().await;
            Ok(())
        })
    })
}

/// The members' states as a JSON array, in the order they were added: `{"name", "state",
/// "error"?, "era"?, "protocolVersion"?, "serverInfo"?}` with `state` one of `idle`,
/// `connecting`, `connected`, `reconnecting`, `failed`, `disabled`, `closed`. Free the string
/// with `mcp_string_free`. Any thread, callbacks included (it does not block).
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_members_json(
    hub: *const mcp_hub,
    members_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let h = handle(hub, "hub")?;
        h.check()?;
        out(members_json_out, "members_json_out")?;
        give_json(members_json_out, &h.hub.members_json());
        Ok(())
    })
}

/// The merged list of `kind` (`MCP_LIST_*`) over the connected members: `{"tools": [...]}` (or
/// prompts, resources, resourceTemplates). Tool and prompt names are exported names
/// (`<member>__<name>`, rewritten to `^[a-zA-Z0-9_-]{1,64}$` when needed); each item's
/// `_meta` has `"mcp-client/server"` (its member) and, for tools and prompts,
/// `"mcp-client/name"` (its own name). Without prefixes, a name two members offer is
/// `MCP_INVALID_ARG`. Any thread; not from a callback.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_list(
    hub: *mut mcp_hub,
    kind: i32,
    result_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let h = handle(hub, "hub")?;
        out(result_json_out, "result_json_out")?;
        let kind = list_kind(kind)?;
        let ro = RequestOptions {
            spans: h.span_sink(),
            ..RequestOptions::default()
        };
        let text = h.block_on(h.hub.list_text(kind, &ro));
        if let Some(spans) = &ro.spans {
            spans.deliver();
        }
        give_json_bytes(result_json_out, text?);
        Ok(())
    })
}

/// Runs a routed call with per-call options and hands back its result JSON.
pub(super) fn routed<'a, F: Future<Output = Result<Value, Error>>>(
    hub: *mut mcp_hub,
    opts: *const mcp_call_opts,
    result_out: *mut *mut c_char,
    make: impl FnOnce(&'a Hub, RequestOptions) -> Result<F, Failure>,
) -> Result<(), Failure> {
    let h: &'a mcp_hub = handle(hub, "hub")?;
    out(result_out, "result_json_out")?;
    // The trace context callback, when set, is the core hub's source: asked while the call
    // runs on this thread, once per member operation.
    let (mut ro, gate) = request_options(opts, &h.dispatcher, None)?;
    let spans = h.span_sink();
    ro.spans = spans.clone();
    let fut = make(&h.hub, ro)?;
    let result = h.block_on(fut);
    drop(gate);
    if let Some(spans) = spans {
        spans.deliver();
    }
    give_json(result_out, &result?);
    Ok(())
}

/// Calls the tool the merged list names `name` on its member. `arguments_json` (a JSON object)
/// may be NULL; `opts` (may be NULL) as for `mcp_client_call_tool`. A name the hub does not
/// have is `MCP_INVALID_ARG`, its message listing the nearest names. A tool error
/// (`isError: true`) is `MCP_OK` with the `CallToolResult` JSON. Any thread; not from a callback.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_call_tool(
    hub: *mut mcp_hub,
    name: *const c_char,
    arguments_json: *const c_char,
    opts: *const mcp_call_opts,
    result_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        routed(hub, opts, result_json_out, |hub, ro| {
            let name = arg_str(name, "name")?;
            let args = opt_json_object(arguments_json, "arguments_json")?;
            Ok(async move { hub.call_tool(name, args, &ro).await })
        })
    })
}

/// Gets the prompt the merged list names `name` from its member; `arguments_json` is an object
/// of strings (may be NULL). Any thread; not from a callback.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_get_prompt(
    hub: *mut mcp_hub,
    name: *const c_char,
    arguments_json: *const c_char,
    opts: *const mcp_call_opts,
    result_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        routed(hub, opts, result_json_out, |hub, ro| {
            let name = arg_str(name, "name")?;
            let args = opt_json_object(arguments_json, "arguments_json")?;
            Ok(async move { hub.get_prompt(name, args, &ro).await })
        })
    })
}

/// Reads resource `uri` from member `server`. Any thread; not from a callback.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_read_resource(
    hub: *mut mcp_hub,
    server: *const c_char,
    uri: *const c_char,
    opts: *const mcp_call_opts,
    result_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        routed(hub, opts, result_json_out, |hub, ro| {
            let (server, uri) = (arg_str(server, "server")?, arg_str(uri, "uri")?);
            Ok(async move { hub.read_resource(server, uri, &ro).await })
        })
    })
}

/// Starts `make`'s call of `h` (see `ffi/call`'s `start_for`).
pub(super) fn start_on_hub(
    hub: *mut mcp_hub,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    make: impl FnOnce(Hub, RequestOptions) -> Result<Started<Value>, Failure>,
) -> Result<(), Failure> {
    let h = handle(hub, "hub")?;
    h.check()?;
    let owner = Owner {
        engine: h.engine.as_ref(),
        dispatcher: &h.dispatcher,
        registry: &h.calls,
        trace: h.trace.read().unwrap().clone(),
        ask_now: &|_| true,
        spans: h.span_sink(),
        closed: &|| h.hub.is_closed(),
    };
    start_for(owner, opts, done, userdata, call_out, |ro| make(h.hub.clone(), ro))
}

/// Starts the tool call `mcp_hub_call_tool` makes (same arguments, copied now) and returns at
/// once; `done` runs exactly once with its outcome, on the shared dispatcher thread, as for
/// `mcp_client_call_tool_start` (`call_out`, may be NULL, receives the call: cancel it with
/// `mcp_call_cancel`, free it with `mcp_call_free`). A failure returned here means `done`
/// never runs. Any thread, callbacks included.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_call_tool_start(
    hub: *mut mcp_hub,
    name: *const c_char,
    arguments_json: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start_on_hub(hub, opts, done, userdata, call_out, |hub, ro| {
            let name = arg_str(name, "name")?.to_string();
            let args = opt_json_object(arguments_json, "arguments_json")?;
            Ok(Box::pin(async move { hub.call_tool(&name, args, &ro).await }))
        })
    })
}

/// Started `mcp_hub_get_prompt`, as `mcp_hub_call_tool_start`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_get_prompt_start(
    hub: *mut mcp_hub,
    name: *const c_char,
    arguments_json: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start_on_hub(hub, opts, done, userdata, call_out, |hub, ro| {
            let name = arg_str(name, "name")?.to_string();
            let args = opt_json_object(arguments_json, "arguments_json")?;
            Ok(Box::pin(async move { hub.get_prompt(&name, args, &ro).await }))
        })
    })
}

/// Started `mcp_hub_read_resource`, as `mcp_hub_call_tool_start`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_read_resource_start(
    hub: *mut mcp_hub,
    server: *const c_char,
    uri: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start_on_hub(hub, opts, done, userdata, call_out, |hub, ro| {
            let (server, uri) = (arg_str(server, "server")?.to_string(), arg_str(uri, "uri")?.to_string());
            Ok(Box::pin(async move { hub.read_resource(&server, &uri, &ro).await }))
        })
    })
}

/// Applies a changed configuration to one member, as a reload does: a new `name` is added and
/// started, an existing one whose `client_config_json` differs is closed and started again
/// from it (a `failed` one is started again even when it is equal), and an equal one keeps
/// its connection. Returns once the member has connected or failed. Any thread; not from a
/// callback.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_set_member(
    hub: *mut mcp_hub,
    name: *const c_char,
    client_config_json: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let h = handle(hub, "hub")?;
        let member = member_spec(name, client_config_json)?;
        let mut spec = h.hub.spec();
        spec.failed.retain(|(name, _)| *name != member.name);
        match spec.members.iter_mut().find(|m| m.name == member.name) {
            Some(slot) => *slot = member,
            None => spec.members.push(member),
        }
        h.block_on(h.hub.reload(spec)).map(drop)
    })
}

/// Removes member `name` and closes it (its server is shut down); an unknown name is
/// `MCP_INVALID_ARG`. Any thread; not from a callback.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_remove_member(
    hub: *mut mcp_hub,
    name: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let h = handle(hub, "hub")?;
        let name = arg_str(name, "name")?;
        let mut spec = h.hub.spec();
        let before = spec.members.len() + spec.failed.len();
        spec.members.retain(|m| m.name != name);
        spec.failed.retain(|(n, _)| n != name);
        if spec.members.len() + spec.failed.len() == before {
            return Err(Failure::invalid(format!("no member is named `{name}`")));
        }
        h.block_on(h.hub.reload(spec)).map(drop)
    })
}

/// A hub event listener: `event_json` (borrowed for the callback's duration) is one of
/// `{"type": "state", "server", "state", "error"?}`, `{"type": "list_changed", "server",
/// "list"}`, `{"type": "resource_updated", "server", "uri"}`, `{"type": "log", "server",
/// "source", "level", "message"}`, `{"type": "notification", "server", "method", "params"}`.
/// Runs on the shared dispatcher thread, in order.
pub type mcp_hub_event_fn = Option<unsafe extern "C" fn(userdata: *mut c_void, event_json: *const c_char)>;

/// Sets (NULL: removes) the hub's listener: every member's state changes, list changes (the
/// merged lists already reflect them), resource updates, stderr lines and notifications.
/// `userdata_free` runs exactly once. Any thread.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_on_event(
    hub: *mut mcp_hub,
    listener: mcp_hub_event_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let userdata = Userdata::new(userdata, userdata_free);
        let h = handle(hub, "hub")?;
        h.check()?;
        let listener = listener.map(|f| {
            let dispatcher = h.dispatcher.clone();
            Arc::new(move |event: &HubEvent| {
                let (ud, text) = (userdata.clone(), to_c(event.to_json().to_string()));
                dispatcher.post_listener(Box::new(move || {
                    // SAFETY: host callback; `text` borrowed for its duration.
                    unsafe { f(ud.ptr(), text.as_ptr()) }
                }));
            }) as HubEventFn
        });
        h.hub.on_event(listener);
        Ok(())
    })
}

/// Closes every member: their servers are shut down and no process is left. Started calls not
/// yet completed complete with `MCP_CLOSED`; later calls fail with `MCP_CLOSED`. Idempotent. Any thread; not from a callback.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_close(hub: *mut mcp_hub, err_out: *mut *mut mcp_error) -> mcp_status {
    ffi_boundary!(err_out, {
        let h = handle(hub, "hub")?;
        h.calls.close_all();
        h.block_on(async {
            h.hub.close().await;
            Ok(())
        })
    })
}

/// Closes the hub (as `mcp_hub_close`) and frees it; queued events are dropped and the
/// listener's `userdata_free` runs. NULL is a no-op. Not from a callback; no other call on
/// this hub may run or start.
#[no_mangle]
pub unsafe extern "C" fn mcp_hub_free(hub: *mut mcp_hub) {
    ffi_boundary!({
        let Some(mut h) = take_handle(hub) else { return };
        if h.check().is_err() {
            // Inherited through fork(): its threads and its servers belong to the parent.
            std::mem::forget(h);
            return;
        }
        h.calls.close_all();
        if !h.dispatcher.is_current() && tokio::runtime::Handle::try_current().is_err() {
            if let Some(engine) = &h.engine {
                let hub = h.hub.clone();
                engine.block_on(async move { hub.close().await });
            }
        }
        h.hub.on_event(None);
        h.hub.set_observer(None);
        h.hub.set_trace_source(None);
        *h.trace.write().unwrap() = None;
        h.dispatcher.stop();
        if let Some(engine) = h.engine.take() {
            engine.shutdown(Duration::from_secs(2));
        }
    })
}
