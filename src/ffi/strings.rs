//! Strings across the boundary: borrowed NUL-terminated UTF-8 in, library-allocated out.

use super::boundary::{ffi_boundary, put, take_string};
use super::error::Failure;
use super::status::{MCP_INVALID_JSON, MCP_INVALID_UTF8, MCP_NULL_ARG};
use crate::transport::lean_reader::{give_back, is_burst_buffer};
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};
use std::mem::ManuallyDrop;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// A required string argument (one that came across the C ABI, see `boundary`).
pub(crate) fn arg_str<'a>(ptr: *const c_char, name: &str) -> Result<&'a str, Failure> {
    if ptr.is_null() {
        return Err(Failure::new(MCP_NULL_ARG, format!("{name} is NULL")));
    }
    // SAFETY: the header's contract: a non-NULL string argument is NUL-terminated and stays
    // valid and unchanged for the duration of the call.
    let text = unsafe { CStr::from_ptr(ptr) };
    text.to_str()
        .map_err(|e| Failure::new(MCP_INVALID_UTF8, format!("{name} is not UTF-8: {e}")))
}

/// An optional string argument (NULL → `None`).
pub(crate) fn opt_str<'a>(ptr: *const c_char, name: &str) -> Result<Option<&'a str>, Failure> {
    if ptr.is_null() {
        Ok(None)
    } else {
        arg_str(ptr, name).map(Some)
    }
}

/// An optional JSON argument (NULL → `None`); bad UTF-8 or JSON fails before anything is sent.
pub(crate) fn opt_json(ptr: *const c_char, name: &str) -> Result<Option<Value>, Failure> {
    match opt_str(ptr, name)? {
        None => Ok(None),
        Some(text) => serde_json::from_str(text)
            .map(Some)
            .map_err(|e| Failure::new(MCP_INVALID_JSON, format!("{name} is not valid JSON: {e}"))),
    }
}

/// An optional JSON object argument.
pub(crate) fn opt_json_object(ptr: *const c_char, name: &str) -> Result<Option<Value>, Failure> {
    match opt_json(ptr, name)? {
        Some(v) if !v.is_object() => Err(Failure::invalid(format!("{name} must be a JSON object"))),
        other => Ok(other),
    }
}

/// As [`opt_json_object`], kept as its text (nothing decoded): the same checks, statuses and
/// messages, without building the map (see `jsonrpc::raw_object`).
pub(crate) fn opt_raw_json_object<'a>(ptr: *const c_char, name: &str) -> Result<Option<&'a RawValue>, Failure> {
    if !ptr.is_null() {
        // SAFETY: as in `arg_str`.
        let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
        // A plain object (the usual arguments) is checked as JSON and UTF-8 in one quick pass;
        // anything else takes the checks below, with their statuses and messages.
        if let Some(raw) = crate::protocol::fast_json::plain_object_bytes(bytes) {
            return Ok(Some(raw));
        }
    }
    match opt_str(ptr, name)? {
        None => Ok(None),
        Some(text) => match crate::protocol::jsonrpc::raw_object(text) {
            Ok(Some(raw)) => Ok(Some(raw)),
            Ok(None) => Err(Failure::invalid(format!("{name} must be a JSON object"))),
            Err(e) => Err(Failure::new(MCP_INVALID_JSON, format!("{name} is not valid JSON: {e}"))),
        },
    }
}

/// A library-owned C string for text (messages, names, log lines). JSON never holds a raw NUL
/// (it escapes U+0000 as `\u0000`); other text shows each NUL as those six characters rather
/// than ending the C string there or losing it. Data that must be byte-exact (a
/// `requestState`, a string read by `mcp_json_string`) is refused instead, see `has_nul`.
pub(crate) fn to_c(text: impl Into<Vec<u8>>) -> CString {
    let bytes = text.into();
    if !has_nul(&bytes) {
        // SAFETY: no interior NUL, checked just above.
        return unsafe { CString::from_vec_unchecked(bytes) };
    }
    let mut shown = Vec::with_capacity(bytes.len() + 5);
    for b in bytes {
        match b {
            0 => shown.extend_from_slice(b"\\u0000"),
            b => shown.push(b),
        }
    }
    CString::new(shown).unwrap_or_default()
}

/// Whether text holds a NUL byte, which a C string cannot carry.
pub(crate) fn has_nul(bytes: &[u8]) -> bool {
    bytes.contains(&0)
}

/// Hands a string to the caller through `out` (which may be NULL when the caller wants none).
pub(crate) fn give(out: *mut *mut c_char, text: impl Into<Vec<u8>>) {
    if !out.is_null() {
        put(out, to_c(text).into_raw());
    }
}

pub(crate) fn give_json(out: *mut *mut c_char, value: &Value) {
    if out.is_null() {
        return;
    }
    let mut bytes = Vec::with_capacity(256);
    if serde_json::to_writer(&mut bytes, value).is_err() {
        bytes.clear();
        bytes.extend_from_slice(b"null");
    }
    give_json_bytes(out, bytes);
}

/// Hands over JSON text that was serialised or validated as JSON: it never holds a NUL byte
/// (JSON escapes every control character inside strings and allows none outside), so it is
/// terminated and handed over without another scan or copy.
pub(crate) fn give_json_bytes(out: *mut *mut c_char, mut bytes: Vec<u8>) {
    if out.is_null() {
        return;
    }
    bytes.push(0);
    debug_assert!(!bytes[..bytes.len() - 1].contains(&0));
    // SAFETY: JSON text holds no NUL byte (see above) and `bytes` now ends with one.
    let text = unsafe { CString::from_vec_with_nul_unchecked(bytes) };
    put(out, text.into_raw());
}

/// Results at least this long go to the host where they sit in their answer's buffer (see
/// [`give_json_in_place`]); shorter ones are moved to its start, which costs little.
const IN_PLACE_MIN: usize = 16 * 1024;

/// Strings handed out from inside a larger allocation: the host's pointer → the allocation's
/// start and capacity, which `mcp_string_free` gives back. Looked up only while some exist.
static IN_PLACE: Mutex<Option<HashMap<usize, (usize, usize)>>> = Mutex::new(None);
static IN_PLACE_COUNT: AtomicUsize = AtomicUsize::new(0);

/// Hands over JSON text at `at` in `bytes` (a result in its answer line, see
/// `Reply::into_json_in_place`). A large result is not moved to the start of the buffer (a copy
/// of all of it): the byte after it becomes its NUL, the host gets a pointer into the buffer,
/// and `mcp_string_free` frees the buffer by that pointer (a stdio reader's burst buffer goes back
/// to the readers instead, unshrunk: see `transport::lean_reader`). What the host sees is the
/// same NUL-terminated JSON text either way.
pub(crate) fn give_json_in_place(out: *mut *mut c_char, (mut bytes, at): (Vec<u8>, Range<usize>)) {
    if out.is_null() {
        return;
    }
    if at.start == 0 || at.len() < IN_PLACE_MIN {
        bytes.truncate(at.end);
        bytes.drain(..at.start);
        return give_json_bytes(out, bytes);
    }
    bytes.truncate(at.end);
    bytes.push(0); // within the capacity: the answer went on past its result
    debug_assert!(!bytes[at.start..at.end].contains(&0));
    if !is_burst_buffer(&bytes) {
        bytes.shrink_to_fit(); // a shrink keeps the block where it is
    }
    let mut bytes = ManuallyDrop::new(bytes);
    let (base, capacity) = (bytes.as_mut_ptr(), bytes.capacity());
    // SAFETY: `at.start` is within the buffer (`at` is a range of it).
    let text = unsafe { base.add(at.start) };
    let mut map = IN_PLACE.lock().unwrap_or_else(|e| e.into_inner());
    map.get_or_insert_with(HashMap::new)
        .insert(text as usize, (base as usize, capacity));
    IN_PLACE_COUNT.fetch_add(1, Ordering::SeqCst);
    drop(map);
    put(out, text.cast::<c_char>());
}

/// The allocation behind a string [`give_json_in_place`] handed out from inside it, if `s` is
/// one (removed from the table).
fn take_in_place(s: *mut c_char) -> Option<Vec<u8>> {
    if s.is_null() || IN_PLACE_COUNT.load(Ordering::SeqCst) == 0 {
        return None;
    }
    let mut map = IN_PLACE.lock().unwrap_or_else(|e| e.into_inner());
    let (base, capacity) = map.as_mut()?.remove(&(s as usize))?;
    IN_PLACE_COUNT.fetch_sub(1, Ordering::SeqCst);
    // SAFETY: `base` and `capacity` are those of the vector `give_json_in_place` kept alive
    // (`ManuallyDrop`) and registered once; removed here, it is freed once.
    Some(unsafe { Vec::from_raw_parts(base as *mut u8, 0, capacity) })
}

/// Frees a string the library returned. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn mcp_string_free(s: *mut c_char) {
    ffi_boundary!({
        match take_in_place(s) {
            Some(buffer) => give_back(buffer),
            None => drop(take_string(s)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A large result goes out where it sits and comes back through `mcp_string_free`; a small
    /// one is moved to its buffer's start as before.
    #[test]
    fn results_in_place_read_and_free_as_any_string() {
        let result = format!("{{\"text\":\"{}\"}}", "x".repeat(IN_PLACE_MIN));
        for (prefix, in_place) in [("{\"id\":1,\"result\":", true), ("", false)] {
            let line = format!("{prefix}{result}}}").into_bytes();
            let at = prefix.len()..prefix.len() + result.len();
            let mut out: *mut c_char = std::ptr::null_mut();
            give_json_in_place(&mut out, (line, at));
            // SAFETY: `out` is the NUL-terminated string just handed out.
            assert_eq!(unsafe { CStr::from_ptr(out) }.to_str().unwrap(), result);
            let registered = |p: *mut c_char| {
                let map = IN_PLACE.lock().unwrap();
                map.as_ref().is_some_and(|m| m.contains_key(&(p as usize)))
            };
            assert_eq!(registered(out), in_place);
            // SAFETY: a string this library handed out, freed once.
            unsafe { mcp_string_free(out) };
            assert!(!registered(out));
        }
        let small = b"{\"id\":1,\"result\":{\"a\":1}}".to_vec();
        let mut out: *mut c_char = std::ptr::null_mut();
        give_json_in_place(&mut out, (small, 17..24));
        // SAFETY: as above.
        assert_eq!(unsafe { CStr::from_ptr(out) }.to_str().unwrap(), "{\"a\":1}");
        // SAFETY: as above.
        unsafe { mcp_string_free(out) };
    }
}
