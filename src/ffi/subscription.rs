//! `mcp_subscription`: a `subscriptions/listen` stream (modern servers), read by polling.

use super::boundary::{ffi_boundary, handle, into_handle, out, take_handle, Handle};
use super::client::{mcp_client, on_client, shared, FfiClient};
use super::error::{mcp_error, Failure};
use super::opts::{mcp_call_opts, request_options_lazy};
use super::status::{mcp_status, MCP_CLOSED, MCP_TIMEOUT};
use super::strings::{give_json, opt_json_object};
use crate::client::{CancelToken, Subscription, SubscriptionEvent};
use serde_json::json;
use std::ffi::c_char;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// A live subscription. Safe to use from any thread, one reader at a time.
pub struct mcp_subscription {
    client: Arc<FfiClient>,
    stream: Stream,
    /// A started listen's own token (`mcp_client_listen_start`): freeing the handle before the
    /// acknowledgement gives the listen up.
    listen: Option<CancelToken>,
}

/// The stream behind a subscription handle: there at once for `mcp_client_listen`, set by a
/// started listen's task once the server acknowledged (a task finishing after the handle was
/// freed drops it, which tells the server).
#[derive(Clone, Default)]
pub(crate) struct Stream(Arc<OnceLock<Subscription>>);

impl Stream {
    pub(crate) fn get(&self) -> Result<&Subscription, Failure> {
        self.0.get().ok_or_else(|| {
            Failure::invalid(
                "the subscription is not acknowledged yet: wait for its mcp_client_listen_start completion",
            )
        })
    }

    /// Keeps the acknowledged subscription (once: a stream is set by one listen).
    pub(crate) fn set(&self, subscription: Subscription) {
        let _ = self.0.set(subscription);
    }
}

impl mcp_subscription {
    /// A handle over `stream` on the client `client`; `listen` as the field.
    pub(crate) fn new(client: Arc<FfiClient>, stream: Stream, listen: Option<CancelToken>) -> mcp_subscription {
        mcp_subscription { client, stream, listen }
    }

    /// The client and the stream, for a started `next` (`ffi/call`).
    pub(crate) fn parts(&self) -> (&FfiClient, Stream) {
        (&self.client, self.stream.clone())
    }
}

// SAFETY: crosses the ABI only as a `Box` made by `into_handle`, freed by `mcp_subscription_free`.
unsafe impl Handle for mcp_subscription {}

/// Opens `subscriptions/listen` with `filter_json` (a `SubscriptionFilter`, e.g.
/// `{"toolsListChanged":true,"resourceSubscriptions":["file:///x"]}`) and waits for the
/// server's acknowledgement. With the tasks extension on (`mcp_config_set_tasks`),
/// `{"taskIds":["<id>"]}` follows those tasks: each status change is a `notifications/tasks`
/// event whose params are the whole task. Free with `mcp_subscription_free`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_listen(
    client: *mut mcp_client,
    filter_json: *const c_char,
    opts: *const mcp_call_opts,
    subscription_out: *mut *mut mcp_subscription,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        on_client(client, |fc| {
            let subscription_out = out(subscription_out, "subscription_out")?;
            let filter = opt_json_object(filter_json, "filter_json")?.ok_or_else(|| Failure::null("filter_json"))?;
            let (mut ro, _gate) = request_options_lazy(opts, &fc.dispatcher, fc.trace_hook())?;
            let spans = super::observe::span_sink(fc);
            ro.spans = spans.clone();
            let subscription = fc.block_on(fc.client.listen(filter, &ro));
            if let Some(spans) = spans {
                spans.deliver();
            }
            let subscription = subscription?;
            let client = shared(handle(client, "client")?);
            let stream = Stream::default();
            stream.set(subscription);
            *subscription_out = into_handle(mcp_subscription::new(client, stream, None));
            Ok(())
        })
    })
}

/// The filter the server acknowledged (the subset it honours), as JSON.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_subscription_acknowledged(
    subscription: *const mcp_subscription,
    filter_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let sub = handle(subscription, "subscription")?;
        out(filter_json_out, "filter_json_out")?;
        give_json(filter_json_out, sub.stream.get()?.acknowledged());
        Ok(())
    })
}

/// Waits up to `timeout_ms` (`MCP_TIMEOUT_NONE`: no limit; 0, the default: no wait) for the next
/// notification and writes it as
/// `{"method": ..., "params": ...}`. `MCP_TIMEOUT` when none arrived in time; `MCP_CLOSED`
/// once the subscription ended gracefully; another status when it ended with an error
/// (`MCP_IO` when 1024 events waited untaken and more came).
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_subscription_next(
    subscription: *mut mcp_subscription,
    timeout_ms: i64,
    event_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let sub = handle(subscription, "subscription")?;
        sub.client.check()?;
        out(event_json_out, "event_json_out")?;
        if timeout_ms >= 0 {
            crate::client::timeout_ms("timeout_ms", timeout_ms as u64).map_err(|e| Failure::invalid(e.message()))?;
        }
        let next = sub.stream.get()?.next();
        let event = sub.client.block_on(async {
            if timeout_ms < 0 {
                return Ok(Some(next.await));
            }
            Ok(tokio::time::timeout(Duration::from_millis(timeout_ms as u64), next)
                .await
                .ok())
        })?;
        match event {
            None => Err(Failure::new(MCP_TIMEOUT, "no notification arrived within the timeout")),
            Some(Some(SubscriptionEvent::Notification { method, params })) => {
                give_json(event_json_out, &json!({"method": method, "params": params}));
                Ok(())
            }
            Some(Some(SubscriptionEvent::Closed(Some(e)))) => Err(e.into()),
            Some(Some(SubscriptionEvent::Closed(None)) | None) => {
                Err(Failure::new(MCP_CLOSED, "the subscription has ended"))
            }
        }
    })
}

/// Ends the subscription (the server is told); pending and later `next` calls return
/// `MCP_CANCELLED`/`MCP_CLOSED`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_subscription_cancel(
    subscription: *mut mcp_subscription,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let sub = handle(subscription, "subscription")?;
        sub.client.check()?;
        if let Some(listen) = &sub.listen {
            listen.cancel(); // a listen not acknowledged yet ends here
        }
        let Ok(stream) = sub.stream.get() else {
            return Ok(());
        };
        sub.client.block_on(async {
            stream.cancel().await;
            Ok(())
        })
    })
}

/// Cancels (if still open) and frees. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn mcp_subscription_free(subscription: *mut mcp_subscription) {
    ffi_boundary!({
        let Some(sub) = take_handle(subscription) else {
            return;
        };
        if sub.client.forked() {
            std::mem::forget(sub); // inherited through fork(): see mcp_client_free
            return;
        }
        if let Some(listen) = &sub.listen {
            listen.cancel();
        }
        if let Ok(stream) = sub.stream.get() {
            let _ = sub.client.block_on(async {
                stream.cancel().await;
                Ok(())
            });
        }
        drop(sub);
    })
}
