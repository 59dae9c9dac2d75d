//! The POST body a request leaves behind for the next one: the session writes each request line
//! into the buffer an earlier exchange gave back ([`Transport::line_buffer`]), so a run of
//! large requests reuses one allocation.
//!
//! Why: with glibc, a request body freed at its exchange's end lay in the heap just below the
//! answer's body, which the host frees later (`mcp_string_free`); the two then made one free
//! region at the top of the heap, past the 128 KiB trim threshold, so every 100 KB echo gave
//! ~200 KiB back to the system and took it again on the next call (two `brk` calls and the page
//! faults of refilling it, ~50 µs a call). Kept, the body stays in place below the answer, and
//! the answer's region goes back to the top of the heap as it came, with nothing to trim.
//!
//! Bounded: a buffer above [`KEEP_MAX`] is freed as before, and a kept one is given back
//! once a request needing less than a quarter of it follows, so a client keeps no more than
//! its current traffic needs. Each request takes the buffer for itself (requests in flight
//! together write into buffers of their own); of those that come back, the largest is kept.
//!
//! [`Transport::line_buffer`]: crate::transport::Transport::line_buffer

use hyper::body::Bytes;
use std::sync::Mutex;

/// The largest buffer kept between requests.
pub(super) const KEEP_MAX: usize = 1024 * 1024;
/// Buffers up to this size are kept whatever request follows (typical requests are far
/// smaller; keeping one costs nothing worth giving back).
const KEEP_ANY: usize = 16 * 1024;

#[derive(Default)]
pub(super) struct SpareBody(Mutex<Vec<u8>>);

impl SpareBody {
    /// The kept buffer (empty), leaving none; a new empty one when none is kept.
    pub fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }

    /// Keeps the buffer of `body`, a request's body whose exchange ended, for the next request
    /// (see the module's bounds). A body still shared elsewhere is left to its other owners.
    pub fn keep(&self, body: Bytes) {
        let used = body.len();
        let Ok(mut body) = body.try_into_mut() else {
            return;
        };
        // Emptied first: only the allocation is kept (and nothing is moved into the vector).
        body.clear();
        let body = Vec::from(body);
        let cap = body.capacity();
        if cap > KEEP_MAX || (cap > KEEP_ANY && used < cap / 4) {
            return;
        }
        let mut kept = self.0.lock().unwrap();
        if kept.capacity() < cap {
            *kept = body;
        }
    }

    /// The capacity kept now (for tests).
    #[cfg(test)]
    fn held(&self) -> usize {
        self.0.lock().unwrap().capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body of `len` bytes in a buffer of `cap`, as the transport makes it from a line.
    fn body(len: usize, cap: usize) -> Bytes {
        let mut line = Vec::with_capacity(cap);
        line.resize(len, b'x');
        Bytes::from(line)
    }

    #[test]
    fn a_body_comes_back_as_the_next_requests_buffer() {
        let spare = SpareBody::default();
        assert_eq!(spare.take().capacity(), 0, "nothing kept yet");
        let sent = body(100_000, 100_300);
        let at = sent.as_ptr();
        spare.keep(sent);
        let next = spare.take();
        assert_eq!((next.as_ptr(), next.len(), next.capacity()), (at, 0, 100_300));
        assert_eq!(spare.held(), 0, "taken: the next request in flight gets a new one");
    }

    #[test]
    fn buffers_past_the_bound_are_freed() {
        let spare = SpareBody::default();
        spare.keep(body(8 * 1024 * 1024, 8 * 1024 * 1024 + 300));
        assert_eq!(spare.held(), 0, "an 8 MiB body is not kept");
        spare.keep(body(KEEP_MAX, KEEP_MAX));
        assert_eq!(spare.held(), KEEP_MAX, "the bound itself is kept");
        spare.keep(body(KEEP_MAX + 1, KEEP_MAX + 1));
        assert_eq!(spare.held(), KEEP_MAX);
    }

    #[test]
    fn a_large_buffer_is_given_back_when_small_requests_follow() {
        let spare = SpareBody::default();
        spare.keep(body(500_000, 500_000));
        let mut line = spare.take();
        line.extend_from_slice(b"{\"small\":true}");
        spare.keep(Bytes::from(line));
        assert_eq!(spare.held(), 0, "a 14-byte request does not keep 500 KB");
        // Small buffers stay, whatever they carried.
        spare.keep(body(10, KEEP_ANY));
        assert_eq!(spare.held(), KEEP_ANY);
    }

    #[test]
    fn the_largest_of_the_buffers_coming_back_is_kept() {
        let spare = SpareBody::default();
        spare.keep(body(200_000, 200_000));
        spare.keep(body(100_000, 100_000));
        assert_eq!(spare.held(), 200_000);
        spare.keep(body(300_000, 300_000));
        assert_eq!(spare.held(), 300_000);
    }

    #[test]
    fn a_body_still_shared_is_not_taken() {
        let spare = SpareBody::default();
        let sent = body(100_000, 100_000);
        let other = sent.clone();
        spare.keep(sent);
        assert_eq!(spare.held(), 0);
        assert_eq!(other.len(), 100_000, "its other owner still reads it");
    }
}
