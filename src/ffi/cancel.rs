//! `mcp_cancel_token`: a shared, thread-safe cancellation flag for calls.

use super::boundary::{ffi_boundary, handle_opt, into_handle, take_handle, Handle};
use crate::client::CancelToken;

/// Reference-counted; every clone cancels the same calls.
pub struct mcp_cancel_token {
    pub(crate) token: CancelToken,
}

// SAFETY: crosses the ABI only as a `Box` made by `into_handle`, freed by `mcp_cancel_token_free`.
unsafe impl Handle for mcp_cancel_token {}

/// A new, uncancelled token; free with `mcp_cancel_token_free`. NULL only on allocation panic.
#[no_mangle]
pub extern "C" fn mcp_cancel_token_new() -> *mut mcp_cancel_token {
    ffi_boundary!({
        into_handle(mcp_cancel_token {
            token: CancelToken::new(),
        })
    })
}

/// Another handle on the same token (free each handle once). NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn mcp_cancel_token_clone(token: *const mcp_cancel_token) -> *mut mcp_cancel_token {
    ffi_boundary!({
        match handle_opt(token) {
            None => std::ptr::null_mut(),
            Some(t) => into_handle(mcp_cancel_token { token: t.token.clone() }),
        }
    })
}

/// Cancels every call using this token, now and later. Idempotent; any thread; callbacks too.
/// Returns once no callback of those calls (input handler, progress) is running on another
/// thread, and none starts afterwards, so the host may then free what they use. Called from
/// such a callback, it does not wait for that callback itself.
#[no_mangle]
pub unsafe extern "C" fn mcp_cancel_token_cancel(token: *const mcp_cancel_token) {
    ffi_boundary!({
        if let Some(t) = handle_opt(token) {
            t.token.cancel_and_wait();
        }
    })
}

/// Whether this token (or a clone of it) was cancelled. Any thread; callbacks too. NULL: false.
#[no_mangle]
pub unsafe extern "C" fn mcp_cancel_token_is_cancelled(token: *const mcp_cancel_token) -> bool {
    ffi_boundary!({ handle_opt(token).is_some_and(|t| t.token.is_cancelled()) })
}

/// Releases this handle. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn mcp_cancel_token_free(token: *mut mcp_cancel_token) {
    ffi_boundary!({ drop(take_handle(token)) })
}
