//! The C side of the authorization extensions: the host's source of assertions (the workload
//! JWT of `oauth.grant` `jwt_bearer`, the user's ID token of `enterprise`), a token store whose
//! lock keeps two processes from spending the same refresh token, and the OAuth error code of a
//! failure. DPoP needs nothing here: it is configured (`oauth.dpop*`) and its key never leaves
//! the library. Callbacks run on the client's dispatcher thread, like every other callback.

use super::auth::{mcp_token_load_fn, mcp_token_save_fn, FfiTokenStore};
use super::boundary::{ffi_boundary, handle_mut, handle_opt, Borrowable};
use super::client::{on_client, FfiClient};
use super::dispatcher::Dispatcher;
use super::error::{mcp_error, Failure};
use super::handlers::{mcp_userdata_free_fn, Userdata};
use super::status::mcp_status;
use super::strings::{arg_str, to_c};
use crate::auth::{AssertionProvider, AssertionRequest, StoreGuard, TokenStore};
use crate::client::HandlerError;
use crate::transport::BoxFuture;
use serde_json::Value;
use std::ffi::{c_char, c_void, CString};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// Asked for a JWT before each token request that needs one the configuration does not hold:
/// `kind` is `"workload_jwt"` (workload identity federation) or `"id_token"` (enterprise-managed
/// authorization), `audience` the authorization server (or identity provider) it is for; both
/// borrowed for the call. Call `mcp_assertion_slot_set(slot, jwt)` during the callback; leaving
/// the slot empty ends the flow (`MCP_AUTH_REQUIRED`). Read a rotated token each time.
pub type mcp_assertion_fn = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        kind: *const c_char,
        audience: *const c_char,
        slot: *mut mcp_assertion_slot,
    ),
>;

/// Takes (`acquire` true) or releases (false) the token store's lock for `issuer` (borrowed),
/// held while a refresh token is spent and its successor saved, so that processes sharing the
/// store never spend the same one (an advisory file lock, for instance). Taking it may block
/// until it is free; releasing must not block.
pub type mcp_token_lock_fn = Option<unsafe extern "C" fn(userdata: *mut c_void, issuer: *const c_char, acquire: bool)>;

/// Where an assertion callback puts the JWT. Valid only during that callback.
pub struct mcp_assertion_slot {
    value: Option<String>,
}

// SAFETY: never boxed (so not a `Handle`, never taken back): the slot lives on the library's
// stack during the assertion callback, the only time the host may pass it back
// (`mcp_assertion_slot_set` only borrows it).
unsafe impl Borrowable for mcp_assertion_slot {}

/// Sets the JWT an assertion callback was asked for (copied). Only valid inside the callback.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_assertion_slot_set(
    slot: *mut mcp_assertion_slot,
    jwt: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let slot = handle_mut(slot, "slot")?;
        let jwt = arg_str(jwt, "jwt")?;
        if jwt.is_empty() {
            return Err(Failure::invalid("jwt is empty"));
        }
        slot.value = Some(jwt.to_string());
        Ok(())
    })
}

struct FfiAssertionProvider {
    callback: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, *mut mcp_assertion_slot),
    userdata: Arc<Userdata>,
    dispatcher: Arc<Dispatcher>,
}

impl AssertionProvider for FfiAssertionProvider {
    fn assertion(&self, request: AssertionRequest) -> BoxFuture<'static, Result<String, HandlerError>> {
        let (tx, rx) = oneshot::channel();
        let (callback, userdata) = (self.callback, self.userdata.clone());
        let (kind, audience) = (to_c(request.kind.as_str()), to_c(request.audience));
        let posted = self.dispatcher.post(Box::new(move || {
            let mut slot = mcp_assertion_slot { value: None };
            // SAFETY: host callback; the strings and the slot are valid for its duration.
            unsafe { callback(userdata.ptr(), kind.as_ptr(), audience.as_ptr(), &mut slot) };
            let _ = tx.send(slot.value);
        }));
        Box::pin(async move {
            if !posted {
                return Err(HandlerError::new("the client is closing"));
            }
            rx.await
                .ok()
                .flatten()
                .ok_or_else(|| HandlerError::new("the assertion callback set no JWT"))
        })
    }
}

/// Registers the host's source of assertions for `oauth.grant` `jwt_bearer` and `enterprise`
/// (used when the configuration has no `workload_jwt*` / `id_token*`); NULL removes it.
/// `userdata_free` runs exactly once, even when this call fails.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_set_assertion_provider(
    client: *mut super::client::mcp_client,
    callback: mcp_assertion_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let userdata = Userdata::new(userdata, userdata_free);
        on_client(client, move |fc: &FfiClient| {
            let provider = callback.map(|callback| {
                Arc::new(FfiAssertionProvider {
                    callback,
                    userdata,
                    dispatcher: fc.dispatcher.clone(),
                }) as Arc<dyn AssertionProvider>
            });
            fc.client.set_assertion_provider(provider);
            Ok(())
        })
    })
}

/// A host token store with its lock.
struct LockingFfiStore {
    store: FfiTokenStore,
    lock: unsafe extern "C" fn(*mut c_void, *const c_char, bool),
}

/// Releases the host's lock when dropped (however the refresh ended).
struct Release {
    lock: unsafe extern "C" fn(*mut c_void, *const c_char, bool),
    userdata: Arc<Userdata>,
    dispatcher: Arc<Dispatcher>,
    issuer: Mutex<Option<CString>>,
}

impl Drop for Release {
    fn drop(&mut self) {
        let (lock, userdata) = (self.lock, self.userdata.clone());
        let Some(issuer) = self.issuer.lock().unwrap().take() else {
            return;
        };
        self.dispatcher.post(Box::new(move || {
            // SAFETY: host callback; the issuer is valid for its duration.
            unsafe { lock(userdata.ptr(), issuer.as_ptr(), false) };
        }));
    }
}

impl TokenStore for LockingFfiStore {
    fn load(&self, issuer: &str) -> BoxFuture<'static, Option<Value>> {
        self.store.load(issuer)
    }

    fn save(&self, issuer: &str, record: Option<Value>) -> BoxFuture<'static, ()> {
        self.store.save(issuer, record)
    }

    fn lock(&self, issuer: &str) -> BoxFuture<'static, Option<StoreGuard>> {
        let (tx, rx) = oneshot::channel::<()>();
        let (lock, userdata, name) = (self.lock, self.store.userdata.clone(), to_c(issuer));
        let release = Release {
            lock,
            userdata: userdata.clone(),
            dispatcher: self.store.dispatcher.clone(),
            issuer: Mutex::new(Some(name.clone())),
        };
        let posted = self.store.dispatcher.post(Box::new(move || {
            // SAFETY: host callback; the issuer is valid for its duration.
            unsafe { lock(userdata.ptr(), name.as_ptr(), true) };
            let _ = tx.send(());
        }));
        Box::pin(async move {
            if !posted || rx.await.is_err() {
                // Never taken: nothing to release.
                release.issuer.lock().unwrap().take();
                return None;
            }
            Some(Box::new(release) as StoreGuard)
        })
    }
}

/// `mcp_client_set_token_store` with the store's lock (`lock` may be NULL: no lock). Both load
/// and save NULL restores the in-memory default. `userdata_free` runs exactly once, even when
/// this call fails.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_set_locking_token_store(
    client: *mut super::client::mcp_client,
    load: mcp_token_load_fn,
    save: mcp_token_save_fn,
    lock: mcp_token_lock_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let userdata = Userdata::new(userdata, userdata_free);
        on_client(client, move |fc: &FfiClient| {
            let store = match (load, save) {
                (Some(load), Some(save)) => {
                    let store = FfiTokenStore {
                        load,
                        save,
                        userdata,
                        dispatcher: fc.dispatcher.clone(),
                    };
                    Some(match lock {
                        Some(lock) => Arc::new(LockingFfiStore { store, lock }) as Arc<dyn TokenStore>,
                        None => Arc::new(store) as Arc<dyn TokenStore>,
                    })
                }
                (None, None) if lock.is_none() => None,
                _ => return Err(Failure::invalid("give load and save (and maybe lock), or none of them")),
            };
            fc.client.set_token_store(store);
            Ok(())
        })
    })
}

/// The registered OAuth error code behind an authorization failure (`invalid_grant`,
/// `invalid_scope`, `unauthorized_client`, `access_denied`, `invalid_target`, …), or NULL.
/// Borrowed from `error`.
#[no_mangle]
pub unsafe extern "C" fn mcp_error_oauth_error(error: *const mcp_error) -> *const c_char {
    ffi_boundary!({ handle_opt(error).map_or(std::ptr::null(), |e| e.oauth_error_ptr()) })
}
