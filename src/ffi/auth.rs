//! OAuth host integration: the authorization callback (the browser step) answered through an
//! `mcp_responder`, the token store callbacks, and a redirect-reading helper for tests and
//! automation. Callbacks run on the client's dispatcher thread, like every other callback.

use super::boundary::{ffi_boundary, handle_mut, out, Borrowable};
use super::client::{on_client, FfiClient};
use super::dispatcher::Dispatcher;
use super::error::{mcp_error, Failure};
use super::handlers::{mcp_userdata_free_fn, Userdata};
use super::responder::ResponderState;
use super::responders::mcp_responder;
use super::status::{mcp_status, MCP_INVALID_JSON, MCP_REENTRANT_CALL};
use super::strings::{arg_str, give, to_c};
use crate::auth::{AuthorizationHandler, AuthorizationRequest, TokenStore};
use crate::client::HandlerError;
use crate::transport::BoxFuture;
use serde_json::Value;
use std::ffi::{c_char, c_void};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

/// The browser step of an OAuth authorization-code flow. Open `authorization_url` (borrowed
/// for the callback) in a browser; the authorization server will redirect it to
/// `redirect_uri`. Complete `responder` with the full URL the browser was redirected to
/// (`mcp_responder_reply_url`), or `mcp_responder_reply_error`, now or later from any thread
/// (after `mcp_responder_defer`). With the built-in loopback listener (no `redirect_uri`
/// configured) the callback may just open the browser and return: the listener receives the
/// redirect. Otherwise returning without replying or deferring ends the flow.
pub type mcp_authorization_fn = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        authorization_url: *const c_char,
        redirect_uri: *const c_char,
        responder: *mut mcp_responder,
    ),
>;

/// Loads the record of one authorization server (`issuer`, borrowed): call
/// `mcp_token_slot_set(slot, record_json)` during the callback, or leave the slot empty when
/// nothing is stored. The slot is valid only during the callback.
pub type mcp_token_load_fn =
    Option<unsafe extern "C" fn(userdata: *mut c_void, issuer: *const c_char, slot: *mut mcp_token_slot)>;

/// Stores the record of one authorization server (`record_json`, borrowed; it holds client
/// credentials and tokens: keep it secret), or forgets it (`record_json` NULL).
pub type mcp_token_save_fn =
    Option<unsafe extern "C" fn(userdata: *mut c_void, issuer: *const c_char, record_json: *const c_char)>;

// SAFETY: never boxed: the slot lives on the library's stack during the load callback, which
// is the only time the host may pass it back (`mcp_token_slot_set` only borrows it).
unsafe impl Borrowable for mcp_token_slot {}

struct FfiAuthorizationHandler {
    callback: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, *mut mcp_responder),
    userdata: Arc<Userdata>,
    dispatcher: Arc<Dispatcher>,
}

impl AuthorizationHandler for FfiAuthorizationHandler {
    fn authorize(&self, request: AuthorizationRequest) -> BoxFuture<'static, Result<Option<String>, HandlerError>> {
        let (state, rx) = ResponderState::new(request.cancel.clone());
        let (callback, userdata, loopback) = (self.callback, self.userdata.clone(), request.loopback);
        state.set_hook_poster(self.dispatcher.clone());
        let watch = super::handlers::Unwanted(state.clone(), self.dispatcher.clone(), request.cancel.clone());
        let (url, redirect_uri) = (to_c(request.url), to_c(request.redirect_uri));
        let posted = self.dispatcher.post(Box::new(move || {
            let responder = mcp_responder::authorization(state.clone());
            // SAFETY: host callback with the documented arguments; all borrowed for the call.
            unsafe { callback(userdata.ptr(), url.as_ptr(), redirect_uri.as_ptr(), responder) };
            let untouched = state.untouched();
            if untouched {
                // Neither consumed nor deferred: the handle is still live and ours.
                mcp_responder::release(responder);
                state.finish(if loopback {
                    Ok(None) // the loopback listener receives the redirect
                } else {
                    Err(HandlerError::new(
                        "the authorization callback returned without replying or deferring",
                    ))
                });
            }
        }));
        let mut rx = rx;
        Box::pin(async move {
            if !posted {
                return Err(HandlerError::new("the client is shutting down"));
            }
            let answer = tokio::select! {
                answer = &mut rx => answer,
                _ = watch.2.cancelled() => {
                    watch.announce();
                    rx.await
                }
            };
            drop(watch);
            answer.unwrap_or_else(|_| {
                Err(HandlerError::new(
                    "the authorization callback finished without answering",
                ))
            })
        })
    }
}

/// Registers the OAuth authorization callback (NULL `callback` unregisters). It runs when a
/// server needs an authorization-code flow (the "oauth" configuration). `userdata_free` runs
/// exactly once, even when this call fails.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_on_authorization(
    client: *mut super::client::mcp_client,
    callback: mcp_authorization_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let userdata = Userdata::new(userdata, userdata_free);
        on_client(client, move |fc: &FfiClient| {
            let handler = callback.map(|callback| {
                Arc::new(FfiAuthorizationHandler {
                    callback,
                    userdata,
                    dispatcher: fc.dispatcher.clone(),
                }) as Arc<dyn AuthorizationHandler>
            });
            fc.client.set_authorization_handler(handler);
            Ok(())
        })
    })
}

/// Where a token load callback puts the record it found. Valid only during that callback.
pub struct mcp_token_slot {
    value: Option<Value>,
}

/// Sets the record a load callback found (`record_json`: a JSON object, copied, exactly as
/// the save callback received it). Only valid inside the load callback.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_token_slot_set(
    slot: *mut mcp_token_slot,
    record_json: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let slot = handle_mut(slot, "slot")?;
        let text = arg_str(record_json, "record_json")?;
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Failure::new(MCP_INVALID_JSON, format!("record_json is not valid JSON: {e}")))?;
        if !value.is_object() {
            return Err(Failure::invalid("record_json must be a JSON object"));
        }
        slot.value = Some(value);
        Ok(())
    })
}

pub(super) struct FfiTokenStore {
    pub(super) load: unsafe extern "C" fn(*mut c_void, *const c_char, *mut mcp_token_slot),
    pub(super) save: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char),
    pub(super) userdata: Arc<Userdata>,
    pub(super) dispatcher: Arc<Dispatcher>,
}

impl TokenStore for FfiTokenStore {
    fn load(&self, issuer: &str) -> BoxFuture<'static, Option<Value>> {
        let (tx, rx) = oneshot::channel();
        let (load, userdata, issuer) = (self.load, self.userdata.clone(), to_c(issuer));
        let posted = self.dispatcher.post(Box::new(move || {
            let mut slot = mcp_token_slot { value: None };
            // SAFETY: host callback; the issuer and the slot are valid for its duration.
            unsafe { load(userdata.ptr(), issuer.as_ptr(), &mut slot) };
            let _ = tx.send(slot.value);
        }));
        Box::pin(async move {
            if !posted {
                return None;
            }
            rx.await.ok().flatten()
        })
    }

    fn save(&self, issuer: &str, record: Option<Value>) -> BoxFuture<'static, ()> {
        let (tx, rx) = oneshot::channel::<()>();
        let (save, userdata, issuer) = (self.save, self.userdata.clone(), to_c(issuer));
        let record = record.map(|r| to_c(r.to_string()));
        let posted = self.dispatcher.post(Box::new(move || {
            let json = record.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
            // SAFETY: host callback; both strings are valid for its duration.
            unsafe { save(userdata.ptr(), issuer.as_ptr(), json) };
            let _ = tx.send(());
        }));
        Box::pin(async move {
            if posted {
                let _ = rx.await;
            }
        })
    }
}

/// Keeps OAuth credentials in the host's store (a keychain, a file): one record per
/// authorization-server issuer, loaded before a flow and saved after a registration or a new
/// token. Both callbacks NULL restores the in-memory default (credentials live as long as the
/// client). `userdata_free` runs exactly once, even when this call fails.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_set_token_store(
    client: *mut super::client::mcp_client,
    load: mcp_token_load_fn,
    save: mcp_token_save_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let userdata = Userdata::new(userdata, userdata_free);
        on_client(client, move |fc: &FfiClient| {
            let store = match (load, save) {
                (Some(load), Some(save)) => Some(Arc::new(FfiTokenStore {
                    load,
                    save,
                    userdata,
                    dispatcher: fc.dispatcher.clone(),
                }) as Arc<dyn TokenStore>),
                (None, None) => None,
                _ => return Err(Failure::invalid("give both load and save, or neither")),
            };
            fc.client.set_token_store(store);
            Ok(())
        })
    })
}

/// GETs `authorization_url` once, without following redirects, and returns the absolute
/// `Location` it redirects to (free with `mcp_string_free`); `timeout_ms` as
/// `MCP_TIMEOUT_DEFAULT` (default: 30 s).
/// FOR TESTS AND AUTOMATION ONLY: against an authorization server that redirects at once (the
/// conformance suite's), an authorization callback can reply with this. A real host opens a
/// browser. Blocking; not from a runtime thread (`MCP_REENTRANT_CALL`), callbacks are fine.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_auth_fetch_redirect(
    authorization_url: *const c_char,
    timeout_ms: i64,
    redirect_url_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let url = arg_str(authorization_url, "authorization_url")?;
        out(redirect_url_out, "redirect_url_out")?;
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(Failure::new(
                MCP_REENTRANT_CALL,
                "mcp_auth_fetch_redirect blocks; it cannot run on a runtime thread",
            ));
        }
        let timeout = match timeout_ms {
            0 => Duration::from_secs(30),
            t if t < 0 => crate::client::timeout_ms("timeout_ms", crate::client::MAX_TIMEOUT_MS)?,
            t => crate::client::timeout_ms("timeout_ms", t as u64)?,
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Failure::new(super::status::MCP_IO, format!("cannot start a runtime: {e}")))?;
        let location = runtime.block_on(crate::auth::fetch_redirect(url, timeout))?;
        give(redirect_url_out, location);
        Ok(())
    })
}
