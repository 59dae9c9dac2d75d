//! Wire vocabulary: JSON-RPC framing, protocol eras and versions, `_meta` keys, method names,
//! error codes and result types. No I/O here.

pub use crate::base::codes;
pub mod era;
pub mod fast_json;
pub mod jsonrpc;
pub mod meta;
pub mod methods;
pub mod result_probe;
pub mod result_type;
pub mod trace;

pub use era::Era;
pub use jsonrpc::{Incoming, RequestId};
pub use result_type::ResultType;

/// The deepest nesting of arrays and objects a message may have: the JSON decoder's own limit
/// (serde_json refuses deeper text). One constant, so nothing the library accepts is something
/// it cannot read again (`mcp_json_pointer`, the bindings): a message nested deeper fails alone
/// (its request, or it is skipped with a log line), and the connection carries on.
pub const MAX_JSON_DEPTH: usize = 127;

/// Whether JSON text may nest deeper than [`MAX_JSON_DEPTH`]: false, after one search, when it
/// is too short or holds too few brackets for that (most messages); true otherwise, and the
/// caller then measures or decodes it.
pub fn may_nest_too_deep(text: &[u8]) -> bool {
    text.len() > 2 * MAX_JSON_DEPTH && memchr::memchr2_iter(b'{', b'[', text).nth(MAX_JSON_DEPTH).is_some()
}
