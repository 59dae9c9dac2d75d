//! `mcp_cancel_token`: a shared, thread-safe cancellation flag for calls.

use crate::client::CancelToken;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

/// Reference-counted; every clone cancels the same calls.
pub struct mcp_cancel_token {
    pub(crate) token: CancelToken,
}

/// A new, uncancelled token; free with `mcp_cancel_token_free`. NULL only on allocation panic.
#[no_mangle]
pub extern "C" fn mcp_cancel_token_new() -> *mut mcp_cancel_token {
    catch_unwind(|| {
        Box::into_raw(Box::new(mcp_cancel_token {
            token: CancelToken::new(),
        }))
    })
    .unwrap_or(ptr::null_mut())
}

/// Another handle on the same token (free each handle once). NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn mcp_cancel_token_clone(token: *const mcp_cancel_token) -> *mut mcp_cancel_token {
    match token.as_ref() {
        None => ptr::null_mut(),
        Some(t) => Box::into_raw(Box::new(mcp_cancel_token { token: t.token.clone() })),
    }
}

/// Cancels every call using this token, now and later. Idempotent; any thread; callbacks too.
/// Returns once no callback of those calls (input handler, progress) is running on another
/// thread, and none starts afterwards, so the host may then free what they use. Called from
/// such a callback, it does not wait for that callback itself.
#[no_mangle]
pub unsafe extern "C" fn mcp_cancel_token_cancel(token: *const mcp_cancel_token) {
    if let Some(t) = token.as_ref() {
        let _ = catch_unwind(AssertUnwindSafe(|| t.token.cancel_and_wait()));
    }
}

#[no_mangle]
pub unsafe extern "C" fn mcp_cancel_token_is_cancelled(token: *const mcp_cancel_token) -> bool {
    token.as_ref().is_some_and(|t| t.token.is_cancelled())
}

/// Releases this handle. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn mcp_cancel_token_free(token: *mut mcp_cancel_token) {
    if !token.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(token))));
    }
}
