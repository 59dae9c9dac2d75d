//! The C boundary: one macro every `extern "C"` function runs its body through, and the few
//! audited helpers that turn raw C arguments into Rust references, so export bodies are safe code.
//!
//! Usage (a test, `tests/ffi_boundary.rs`, fails when an export's body does not start with the
//! macro, or when `catch_unwind` appears outside the allowed places):
//!
//! ```text
//! #[no_mangle]
//! #[must_use] // MCP_WARN_UNUSED_RESULT in the header
//! pub unsafe extern "C" fn mcp_thing_do(thing: *const mcp_thing, name: *const c_char,
//!                                      out: *mut *mut c_char, err_out: *mut *mut mcp_error) -> mcp_status {
//!     ffi_boundary!(err_out, {                       // fallible: Result<(), Failure> → status
//!         let thing = handle(thing, "thing")?;       // &mcp_thing, or MCP_NULL_ARG
//!         let name = arg_str(name, "name")?;         // &str, or MCP_NULL_ARG / MCP_INVALID_UTF8
//!         give(out, thing.describe(name));           // library-owned string into *out
//!         Ok(())
//!     })
//! }
//! #[no_mangle]
//! pub unsafe extern "C" fn mcp_thing_count(thing: *const mcp_thing) -> u64 {
//!     ffi_boundary!({ handle(thing, "thing").map_or(0, |t| t.count()) })   // infallible
//! }
//! ```
//!
//! - `ffi_boundary!(err_out, { .. })`: the body returns `Result<(), Failure>`; the export returns
//!   `MCP_OK` or the failure's status, and stores an `mcp_error` in `*err_out` when it is not NULL.
//!   A panic becomes `MCP_PANIC` with its message.
//! - `ffi_boundary!({ .. })`: the body returns the export's type; on a panic the export returns
//!   that type's [`Fallback`] (NULL, false, 0, `MCP_PANIC` for a status, nothing for `()`).
//! - `ffi_boundary!(fallback = EXPR, { .. })`: as above with an explicit value on panic (for an
//!   `i32` that is not a status).
//! - Handles: [`handle`] borrows (`&T`, NULL is `MCP_NULL_ARG`), [`handle_opt`] borrows or gives
//!   `None`, [`into_handle`] hands a new object to C, [`take_handle`] takes it back (free,
//!   consuming calls), [`handle_mut`] borrows a builder. Only the library's own handle types are
//!   accepted: `unsafe impl Handle for mcp_thing {}` (boxed), or [`Borrowable`] for a handle
//!   lent to a callback from the library's stack (borrowed, never taken back).
//! - Out-parameters: [`out`] is a required `&mut T`, [`put`] writes when not NULL.
//! - Strings in: `strings::{arg_str, opt_str, opt_json, opt_json_object}`; out: `strings::give*`.
//! - Client calls: `client::on_client(client, |fc| ..)` inside the boundary checks the handle
//!   (NULL, fork, poisoned) and poisons the client when its body panics.
//! - Library threads running jobs (dispatcher, driver): [`contain`], never `catch_unwind`.
//!
//! Soundness: every helper here relies on the contract in `include/mcp_client.h` ("Pointers"):
//! a pointer argument is NULL or valid for its type for the duration of the call, handles are
//! ones this library returned and not yet freed, strings are NUL-terminated. That contract is
//! the C caller's to keep; the helpers are `pub(crate)` and are meant for arguments that came
//! across the C ABI only.

use super::error::{report, Failure};
use super::status::{mcp_status, MCP_OK, MCP_PANIC};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The one panic boundary; see the module documentation.
/// (Arm order matters: `fallback = X` would also parse as an assignment expression.)
macro_rules! ffi_boundary {
    (fallback = $fallback:expr, $body:block) => {
        $crate::ffi::boundary::infallible_or($fallback, move || $body)
    };
    ($body:block) => {
        $crate::ffi::boundary::infallible(move || $body)
    };
    ($err_out:expr, $body:block) => {
        $crate::ffi::boundary::fallible($err_out, move || $body)
    };
}
pub(crate) use ffi_boundary;

/// What an export returns when its body panicked.
pub(crate) trait Fallback {
    fn fallback() -> Self;
}

impl Fallback for () {
    fn fallback() {}
}
impl Fallback for bool {
    fn fallback() -> bool {
        false
    }
}
impl Fallback for u64 {
    fn fallback() -> u64 {
        0
    }
}
impl Fallback for usize {
    fn fallback() -> usize {
        0
    }
}
impl Fallback for u32 {
    fn fallback() -> u32 {
        0
    }
}
/// `i32` is `mcp_status`; an `i32` that is not a status names its fallback explicitly.
impl Fallback for mcp_status {
    fn fallback() -> mcp_status {
        MCP_PANIC
    }
}
impl<T> Fallback for *const T {
    fn fallback() -> *const T {
        std::ptr::null()
    }
}
impl<T> Fallback for *mut T {
    fn fallback() -> *mut T {
        std::ptr::null_mut()
    }
}

/// Runs a fallible body: `MCP_OK`, or the failure's status with its details in `*err_out`.
pub(crate) fn fallible(
    err_out: *mut *mut super::error::mcp_error,
    body: impl FnOnce() -> Result<(), Failure>,
) -> mcp_status {
    let outcome = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|p| Err(Failure::panic(p)));
    match outcome {
        Ok(()) => MCP_OK,
        Err(failure) => report(err_out, failure),
    }
}

/// Runs an infallible body; a panic gives the return type's fallback.
pub(crate) fn infallible<T: Fallback>(body: impl FnOnce() -> T) -> T {
    infallible_or(T::fallback(), body)
}

/// Runs an infallible body; a panic gives `fallback`.
pub(crate) fn infallible_or<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// Runs work on a library thread that must not unwind further (a dispatcher job, a driver
/// spell): a panic there is dropped, as the thread must keep serving other calls.
pub(crate) fn contain(body: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(body));
}

/// A type the library hands to C as an opaque handle: boxed by [`into_handle`], taken back by
/// [`take_handle`] in its `_free` or consuming function.
///
/// # Safety
/// Implement only for the library's own opaque types that cross the ABI as such boxes, so a
/// handle the host passes back has the type its function names and may be freed as one.
pub(crate) unsafe trait Handle: Sized {}

/// A handle the library lends to a callback from its own stack (never boxed): it may be
/// borrowed ([`handle`], [`handle_mut`]) during the callback but never taken back.
///
/// # Safety
/// Implement only for the library's own opaque types; every [`Handle`] is one too.
pub(crate) unsafe trait Borrowable: Sized {}

// SAFETY: a boxed handle is live, and of its type, for as long as the host may pass it back.
unsafe impl<T: Handle> Borrowable for T {}

/// Borrows a handle argument; NULL is `MCP_NULL_ARG` naming `name`.
pub(crate) fn handle<'a, T: Borrowable>(ptr: *const T, name: &str) -> Result<&'a T, Failure> {
    handle_opt(ptr).ok_or_else(|| Failure::null(name))
}

/// Borrows a handle argument for a change (a builder, not shared between threads); NULL is
/// `MCP_NULL_ARG` naming `name`.
pub(crate) fn handle_mut<'a, T: Borrowable>(ptr: *mut T, name: &str) -> Result<&'a mut T, Failure> {
    // SAFETY: as `handle_opt`; the header also says such a handle is used by one thread at a
    // time, so no other reference to it exists during the call.
    unsafe { ptr.as_mut() }.ok_or_else(|| Failure::null(name))
}

/// Borrows a handle argument that may be NULL.
pub(crate) fn handle_opt<'a, T: Borrowable>(ptr: *const T) -> Option<&'a T> {
    // SAFETY: the header's contract: a non-NULL handle argument is one this library returned
    // (a live `Box<T>`, see `into_handle`) and not yet freed, for the duration of the call.
    unsafe { ptr.as_ref() }
}

/// Hands a new object to C as a handle; it comes back through `take_handle` (its `_free`).
pub(crate) fn into_handle<T: Handle>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

/// Takes a handle back (freeing or consuming calls); NULL gives `None`.
pub(crate) fn take_handle<T: Handle>(ptr: *mut T) -> Option<Box<T>> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: the header's contract: a handle passed to its freeing or consuming function was
    // made by `into_handle` (`Box::into_raw`) and is not used again by the caller.
    Some(unsafe { Box::from_raw(ptr) })
}

/// Takes back a string this library handed out (`CString::into_raw`); NULL gives `None`.
pub(crate) fn take_string(ptr: *mut std::ffi::c_char) -> Option<std::ffi::CString> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: the header's contract: strings passed to `mcp_string_free` were returned by this
    // library (made by `CString::into_raw`) and are freed once.
    Some(unsafe { std::ffi::CString::from_raw(ptr) })
}

/// A required out-parameter; NULL is `MCP_NULL_ARG` naming `name`.
pub(crate) fn out<'a, T>(ptr: *mut T, name: &str) -> Result<&'a mut T, Failure> {
    // SAFETY: the header's contract: a non-NULL out-parameter points to writable storage of its
    // type, not aliased by another argument, for the duration of the call.
    unsafe { ptr.as_mut() }.ok_or_else(|| Failure::null(name))
}

/// Writes an optional out-parameter (NULL: the caller does not want it).
pub(crate) fn put<T>(ptr: *mut T, value: T) {
    if let Ok(slot) = out(ptr, "") {
        *slot = value;
    }
}

/// Borrows a plain-data argument (an options struct) that may be NULL.
pub(crate) fn arg_opt<'a, T>(ptr: *const T) -> Option<&'a T> {
    // SAFETY: the header's contract: a non-NULL struct argument points to an initialised value
    // of its type, valid for the duration of the call.
    unsafe { ptr.as_ref() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::client::{mcp_client, mcp_client_free, mcp_client_new, mcp_client_server_info, on_client};
    use crate::ffi::config::{mcp_config_free, mcp_config_new};
    use crate::ffi::error::{mcp_error, mcp_error_free, mcp_error_message, mcp_error_status};
    use std::ffi::CStr;
    use std::ptr;

    fn message(err: *mut mcp_error) -> String {
        // SAFETY: `err` is a live error this test received; its message lives until it is freed.
        unsafe { CStr::from_ptr(mcp_error_message(err)) }
            .to_string_lossy()
            .into_owned()
    }

    /// A fallible body that panics.
    fn explode(what: &str) -> Result<(), Failure> {
        panic!("{what}")
    }

    #[test]
    fn a_panic_becomes_the_return_types_fallback() {
        let mut err: *mut mcp_error = ptr::null_mut();
        let st = ffi_boundary!(&mut err, { explode("boom in a fallible export") });
        assert_eq!(st, MCP_PANIC);
        assert!(!err.is_null());
        // SAFETY: `err` was just returned by the boundary.
        assert_eq!(unsafe { mcp_error_status(err) }, MCP_PANIC);
        assert!(message(err).contains("boom in a fallible export"), "{}", message(err));
        // SAFETY: freed once.
        unsafe { mcp_error_free(err) };

        // Without an err_out the status still says so.
        let none: *mut *mut mcp_error = ptr::null_mut();
        assert_eq!(ffi_boundary!(none, { explode("unseen") }), MCP_PANIC);
        let p: *mut u8 = ffi_boundary!({ panic!("pointer") });
        assert!(p.is_null());
        let flag: bool = ffi_boundary!({ panic!("bool") });
        assert!(!flag);
        let count: u64 = ffi_boundary!({ panic!("count") });
        assert_eq!(count, 0);
        let explicit: i32 = ffi_boundary!(fallback = 7, { panic!("explicit") });
        assert_eq!(explicit, 7);
        let unit: () = ffi_boundary!({ panic!("unit") });
        assert_eq!(unit, ());
        // And no panic leaves the value alone.
        assert_eq!(ffi_boundary!(fallback = 7, { 3 }), 3);
    }

    #[test]
    fn a_panic_on_a_client_poisons_it() {
        let mut config = ptr::null_mut();
        let mut client: *mut mcp_client = ptr::null_mut();
        let json = c"{\"command\":\"/nonexistent/never-started\"}";
        // SAFETY: valid arguments; nothing is started before a connect.
        unsafe {
            assert_eq!(mcp_config_new(json.as_ptr(), &mut config, ptr::null_mut()), MCP_OK);
            assert_eq!(mcp_client_new(config, &mut client, ptr::null_mut()), MCP_OK);
            mcp_config_free(config);
        }
        let none: *mut *mut mcp_error = ptr::null_mut();
        let st = ffi_boundary!(none, {
            on_client(client, |_| -> Result<(), Failure> { panic!("inside a call") })
        });
        assert_eq!(st, MCP_PANIC);
        let mut out = ptr::null_mut();
        let mut err: *mut mcp_error = ptr::null_mut();
        // SAFETY: the client is live; later calls fail fast instead of touching a broken client.
        unsafe {
            assert_eq!(mcp_client_server_info(client, &mut out, &mut err), MCP_PANIC);
            assert!(message(err).contains("poisoned"), "{}", message(err));
            mcp_error_free(err);
            mcp_client_free(client);
        }
        assert!(out.is_null());
    }
}
