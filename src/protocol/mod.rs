//! Wire vocabulary: JSON-RPC framing, protocol eras and versions, `_meta` keys, method names,
//! error codes and result types. No I/O here.

pub mod codes;
pub mod era;
pub mod jsonrpc;
pub mod meta;
pub mod methods;
pub mod result_type;

pub use era::Era;
pub use jsonrpc::{Incoming, RequestId};
pub use result_type::ResultType;
