//! `mcp_client`: a Model Context Protocol client that speaks the modern (2026-07-28, stateless)
//! and legacy (2024-11-05 … 2025-11-25, `initialize`) protocol eras, drives Multi Round-Trip
//! Requests (SEP-2322), and is exported through a C ABI (`src/ffi`, header `include/mcp_client.h`).
//!
//! Rust programs use [`Client`] directly; see `ARCHITECTURE.md` for the module map.

pub mod auth;
pub mod client;
pub mod config;
pub mod error;
pub mod ffi;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub(crate) mod net;
pub mod protocol;
pub mod transport;
mod untrusted;

pub use client::{
    CancelToken, Client, ClientConfig, ConnectMode, HandlerError, InputHandler, InputRequest, ListKind, LogLine,
    Progress, RequestOptions, ServerInfo, Subscription, SubscriptionEvent, SKILLS_EXTENSION,
};
pub use error::{Error, ErrorKind, InputRequiredData};
pub use protocol::Era;
pub use transport::stdio::{EnvMode, StdioConfig};
pub use transport::TransportConfig;

// README.md's Rust examples are compiled and run as doctests (`cargo test --doc`), so they
// cannot rot; tests/docs/check.py covers the other languages.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
