//! Network policy shared by the HTTP clients: address classes (`ranges`), the authorization
//! client's URL and address guard (`policy`), the resolver that applies it to every DNS answer
//! (`resolve`), the clients' TLS setup (`tls`) and, where the trust store is files, its
//! verifier (`trust_store`), direct HTTP/1.1 connections to an MCP endpoint (`direct`) over TCP
//! or TLS (`stream`), through a proxy or not (`proxy`), and URLs as errors and logs may show
//! them (`redact`).

pub(crate) mod direct;
pub(crate) mod policy;
pub(crate) mod proxy;
pub(crate) mod ranges;
pub mod redact;
pub(crate) mod resolve;
pub(crate) mod stream;
pub(crate) mod tls;
#[cfg(all(unix, not(target_os = "android"), not(target_vendor = "apple")))]
pub(crate) mod trust_store;
