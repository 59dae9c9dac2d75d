//! Network policy shared by the HTTP clients: address classes (`ranges`), the authorization
//! client's URL and address guard (`policy`), the resolver that applies it to every DNS answer
//! (`resolve`), the clients' TLS setup (`tls`) and, where the trust store is files, its
//! verifier (`trust_store`), direct connections to an MCP endpoint (`direct`, with its own
//! HTTP/1.1 exchange `h1`, and `reply`, the response the transport reads) over TCP or TLS
//! (`stream`), through a proxy or not (`proxy`), and URLs as errors and logs may show them
//! (`redact`).

pub(crate) mod direct;
pub(crate) mod h1;
pub(crate) mod policy;
pub(crate) mod proxy;
pub(crate) mod ranges;
pub mod redact;
pub(crate) mod reply;
pub(crate) mod request;
pub(crate) mod resolve;
pub(crate) mod stream;
pub(crate) mod tls;
#[cfg(all(unix, not(target_os = "android"), not(target_vendor = "apple")))]
pub(crate) mod trust_store;
