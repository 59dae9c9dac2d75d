//! How many times a large call's payload is allocated or grown into a larger allocation on its
//! way through the library: a 100 KB echo through the C ABI (`mcp_client_call_tool`, the result
//! string freed) over stdio and over plain HTTP with JSON and SSE answers. A counting global
//! allocator (this test binary's own) records every allocation and every growing reallocation
//! of at least half the payload while the calls run, with the stack that made it; a growth is a
//! copy of everything already there, so reading a long line into a vector that doubles, or
//! copying the payload once more, shows up here and fails the bound. The HTTP client's read
//! buffer (the HTTP/1.1 exchange's) is told apart by its stack and reported, not bounded: whether a call needs
//! a new one depends on how the reads fall (on a busy machine, a new one while the last is still
//! shared with a chunk being read, or a growth when a read filled it). Its own test binary: the
//! counts are the whole process's, and the tests here take turns, their servers included.

mod common;

use common::{fixture_str, HttpFixture};
use serde_json::json;
use std::alloc::{GlobalAlloc, Layout, System};
use std::backtrace::Backtrace;
use std::cell::Cell;
use std::ffi::{CStr, CString};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
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

/// A payload-sized block made while counting: a new one or a growth, and where.
struct Block {
    grown: bool,
    size: usize,
    at: Backtrace,
}

static BLOCKS: Mutex<Vec<Block>> = Mutex::new(Vec::new());

thread_local! {
    /// This thread is recording a block (whose own allocations are not counted).
    static RECORDING: Cell<bool> = const { Cell::new(false) };
}

/// Records a payload-sized block with the stack that made it (resolved to names after the
/// calls, outside the allocator).
fn record(grown: bool, size: usize) {
    if size < LARGE || !COUNTING.load(Relaxed) {
        return;
    }
    let _ = RECORDING.try_with(|recording| {
        if recording.replace(true) {
            return;
        }
        let at = Backtrace::force_capture();
        BLOCKS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Block { grown, size, at });
        recording.set(false);
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(false, layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(false, layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A growth may move (and copy) what is there; a shrink keeps its place.
        if new_size > layout.size() {
            record(true, new_size);
        }
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// One test at a time, from before its server starts to after it stops: the counts are the
/// whole process's.
static TURN: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// The echo's text: the base64 alphabet (nothing JSON escapes), as the bench's `--payload`.
fn payload() -> String {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    (0..PAYLOAD).map(|k| alphabet[(k * 7 + k / 64) % 64] as char).collect()
}

/// Payload-sized blocks per call, by who made them.
#[derive(Debug, Default)]
struct Counts {
    /// New blocks and growths made by this library's own code.
    allocs: f64,
    grows: f64,
    /// The HTTP client's read buffer: a new one when the last is still shared with a body
    /// chunk being read (hyper), and growths when a read filled it. How many a call sees depends
    /// on how the reads fall (on a busy machine, more), so these are reported, not bounded.
    read_buffer_allocs: f64,
    read_buffer_grows: f64,
    /// Where each block was made (for the failure message).
    sites: Vec<String>,
}

/// Whether a block was made by the HTTP client's buffered reader: the HTTP/1.1 exchange's
/// (`net::h1`, its buffer reserved as a read fills it) or hyper's I/O buffering.
fn read_buffer(stack: &str) -> bool {
    stack.contains("net::h1::Conn") && stack.contains("poll_fill") || stack.contains("hyper::proto::h1::io::")
}

/// The first frames of `stack` that are this library's, to name a block's maker.
fn site(stack: &str) -> String {
    let names: Vec<&str> = stack
        .lines()
        .map(str::trim)
        .filter_map(|l| l.split_once(": ").map(|(_, name)| name))
        .filter(|name| name.starts_with("mcp_client::") || name.starts_with("hyper::"))
        .take(2)
        .collect();
    names.join(" < ")
}

/// Payload-sized blocks per call, over `CALLS` calls after two untimed ones, each result
/// checked to carry the payload back.
fn counts_per_call(config: serde_json::Value) -> Counts {
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
        BLOCKS.lock().unwrap().clear();
        for _ in 0..CALLS {
            call(true);
        }
        let blocks = std::mem::take(&mut *BLOCKS.lock().unwrap());
        mcp_client_free(client);
        let mut counts = Counts::default();
        let per_call = 1.0 / CALLS as f64;
        for block in blocks {
            let stack = block.at.to_string();
            let which = match (read_buffer(&stack), block.grown) {
                (false, false) => &mut counts.allocs,
                (false, true) => &mut counts.grows,
                (true, false) => &mut counts.read_buffer_allocs,
                (true, true) => &mut counts.read_buffer_grows,
            };
            *which += per_call;
            let kind = if block.grown { "grown to" } else { "new" };
            counts.sites.push(format!("{kind} {}: {}", block.size, site(&stack)));
        }
        counts
    }
}

/// The calls' counts, printed, and checked against the library's own bounds.
fn check(wire: &str, counts: &Counts, allocs: f64) {
    eprintln!(
        "{wire}: {:.2} payload-sized allocations and {:.2} growths per call; the HTTP client's read buffer: {:.2} and {:.2}",
        counts.allocs, counts.grows, counts.read_buffer_allocs, counts.read_buffer_grows
    );
    let sites = counts.sites.join("\n  ");
    assert!(
        counts.allocs <= allocs,
        "{wire}: {} payload-sized allocations per call (at most {allocs}):\n  {sites}",
        counts.allocs
    );
    assert!(
        counts.grows == 0.0,
        "{wire}: {} growths per call:\n  {sites}",
        counts.grows
    );
}

/// stdio: the request line (the host's arguments copied in once) and the reader's buffer,
/// which becomes the answer line and then the host's string (no copy into a larger one).
#[test]
fn stdio_allocates_the_payload_twice_and_never_grows_it() {
    let _turn = turn();
    let counts = counts_per_call(json!({"command": fixture_str(), "args": ["--fast"]}));
    check("stdio", &counts, 2.0);
    assert_eq!(counts.read_buffer_allocs + counts.read_buffer_grows, 0.0);
}

/// HTTP with JSON answers: the request body and the body sized by its content length (read
/// once, then the host's string); the read buffer besides.
#[test]
fn http_json_allocates_the_payload_twice_and_never_grows_it() {
    let _turn = turn();
    let server = HttpFixture::start(&["--fast", "--era", "modern"]);
    check(
        "http json",
        &counts_per_call(json!({"url": server.1, "mode": "modern"})),
        2.0,
    );
}

/// HTTP with SSE answers: the request body and the event's data, which gets its room at once
/// (the last reply's event went over several chunks too), so it never grows; the read
/// buffer besides.
#[test]
fn http_sse_allocates_the_payload_twice_and_never_grows_it() {
    let _turn = turn();
    let server = HttpFixture::start(&["--fast", "--era", "modern", "--sse-responses"]);
    check(
        "http sse",
        &counts_per_call(json!({"url": server.1, "mode": "modern"})),
        2.0,
    );
}
