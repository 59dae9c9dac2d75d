//! How many times a large call's payload is allocated or grown into a larger allocation on its
//! way through the library: a 100 KB echo through the C ABI (`mcp_client_call_tool`, the result
//! string freed) over stdio and over plain HTTP with JSON and SSE answers. A counting global
//! allocator (this test binary's own) records every allocation and every growing reallocation
//! of at least half the payload while the calls run; a growth is a copy of everything already
//! there, so reading a long line into a vector that doubles, or copying the payload once more,
//! shows up here and fails the bound. Its own test binary: the counts are process-wide, and the
//! tests here take turns. Not run a second time on the portable POSIX path (`make portable-test`),
//! where the counts came out above the bound in one run of two: the copies are the same code on
//! both paths, and the main run holds them.
#![cfg(not(feature = "portable-posix"))]

mod common;

use common::{fixture_str, HttpFixture};
use serde_json::json;
use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::{CStr, CString};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

use ::mcp_client::ffi::client::*;
use ::mcp_client::ffi::config::*;
use ::mcp_client::ffi::error::*;
use ::mcp_client::ffi::status::*;
use ::mcp_client::ffi::strings::mcp_string_free;

const PAYLOAD: usize = 100_000;
/// What counts as a payload-sized block.
const LARGE: usize = PAYLOAD / 2;
const CALLS: usize = 6;

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
static GROWS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= LARGE && COUNTING.load(Relaxed) {
            ALLOCS.fetch_add(1, Relaxed);
        }
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= LARGE && COUNTING.load(Relaxed) {
            ALLOCS.fetch_add(1, Relaxed);
        }
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A growth may move (and copy) what is there; a shrink keeps its place.
        if new_size > layout.size() && new_size >= LARGE && COUNTING.load(Relaxed) {
            GROWS.fetch_add(1, Relaxed);
        }
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// One test at a time: the counts are the whole process's.
static TURN: Mutex<()> = Mutex::new(());

/// The echo's text: the base64 alphabet (nothing JSON escapes), as the bench's `--payload`.
fn payload() -> String {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    (0..PAYLOAD).map(|k| alphabet[(k * 7 + k / 64) % 64] as char).collect()
}

/// Payload-sized allocations and growths per call, over `CALLS` calls after two untimed ones,
/// each result checked to carry the payload back.
fn counts_per_call(config: serde_json::Value) -> (f64, f64) {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let text = payload();
    let args = CString::new(json!({ "text": text }).to_string()).unwrap();
    let name = CString::new("echo").unwrap();
    let config = CString::new(config.to_string()).unwrap();
    unsafe {
        let (mut cfg, mut client) = (ptr::null_mut(), ptr::null_mut());
        assert_eq!(mcp_config_new(config.as_ptr(), &mut cfg, ptr::null_mut()), MCP_OK);
        assert_eq!(mcp_client_new(cfg, &mut client, ptr::null_mut()), MCP_OK);
        mcp_config_free(cfg);
        assert_eq!(
            mcp_client_connect(client, ptr::null(), ptr::null_mut(), ptr::null_mut()),
            MCP_OK
        );
        let call = |counted: bool| {
            let (mut out, mut err) = (ptr::null_mut(), ptr::null_mut());
            COUNTING.store(counted, Relaxed);
            let st = mcp_client_call_tool(
                client,
                name.as_ptr(),
                args.as_ptr(),
                ptr::null(),
                ptr::null(),
                ptr::null(),
                &mut out,
                &mut err,
            );
            COUNTING.store(false, Relaxed);
            assert_eq!(st, MCP_OK, "{:?}", CStr::from_ptr(mcp_error_message(err)));
            let result = CStr::from_ptr(out).to_str().unwrap();
            let start = result.find(&text[..64]).expect("the payload comes back");
            assert_eq!(&result[start..start + PAYLOAD], text, "the whole payload comes back");
            mcp_string_free(out);
        };
        call(false);
        call(false);
        let (allocs, grows) = (ALLOCS.load(Relaxed), GROWS.load(Relaxed));
        for _ in 0..CALLS {
            call(true);
        }
        let counted = (ALLOCS.load(Relaxed) - allocs, GROWS.load(Relaxed) - grows);
        mcp_client_free(client);
        (counted.0 as f64 / CALLS as f64, counted.1 as f64 / CALLS as f64)
    }
}

/// stdio: the request line (the host's arguments copied in once) and the reader's buffer,
/// which becomes the answer line and then the host's string (no copy into a larger one).
#[test]
fn stdio_allocates_the_payload_twice_and_never_grows_it() {
    let (allocs, grows) = counts_per_call(json!({"command": fixture_str(), "args": ["--fast"]}));
    eprintln!("stdio: {allocs} payload-sized allocations, {grows} growths per call");
    assert!(allocs <= 2.0, "{allocs} payload-sized allocations per call");
    assert_eq!(grows, 0.0, "payload-sized growths per call");
}

/// HTTP with JSON answers: the request body, and the response body read from the socket
/// straight into one vector sized by its content length (no read buffer in between), as many
/// as stdio.
#[test]
fn http_json_allocates_the_payload_twice_and_never_grows_it() {
    let server = HttpFixture::start(&["--fast", "--era", "modern"]);
    let (allocs, grows) = counts_per_call(json!({"url": server.1, "mode": "modern"}));
    eprintln!("http json: {allocs} payload-sized allocations, {grows} growths per call");
    assert!(allocs <= 2.0, "{allocs} payload-sized allocations per call");
    assert_eq!(grows, 0.0, "payload-sized growths per call");
}

/// HTTP with SSE answers: as JSON, but the event's data grows as its lines arrive.
#[test]
fn http_sse_allocates_and_grows_the_payload_within_bounds() {
    let server = HttpFixture::start(&["--fast", "--era", "modern", "--sse-responses"]);
    let (allocs, grows) = counts_per_call(json!({"url": server.1, "mode": "modern"}));
    eprintln!("http sse: {allocs} payload-sized allocations, {grows} growths per call");
    assert!(allocs <= 3.0, "{allocs} payload-sized allocations per call");
    assert!(grows <= 1.0, "{grows} payload-sized growths per call");
}
