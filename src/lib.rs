//! `mcp_client`: a Model Context Protocol client that speaks the modern (2026-07-28, stateless)
//! and legacy (2024-11-05 … 2025-11-25, `initialize`) protocol eras, drives Multi Round-Trip
//! Requests (SEP-2322), and is exported through a C ABI (header `include/mcp_client.h`).
//!
//! Rust programs use [`Client`], configured by a [`ClientConfig`]:
//!
//! ```
//! use mcp_client::{Client, ClientConfig, ListKind, RequestOptions, StdioConfig, TransportConfig};
//!
//! # #[tokio::main]
//! # async fn main() -> mcp_client::Result<()> {
//! # let command = "target/debug/mcp-fixture-server"; // the repository's test server
//! let client = Client::new(ClientConfig::new(TransportConfig::Stdio(StdioConfig::new(command))));
//! let info = client.connect().await?; // auto: server/discover, else initialize
//! println!("{} server, protocol {}", info.era.as_str(), info.protocol_version);
//! let tools = client.list_all(ListKind::Tools, &RequestOptions::default()).await?;
//! assert!(tools["tools"].as_array().is_some_and(|t| !t.is_empty()));
//! client.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! This page is the whole Rust API: the crate's modules (transports, protocol, the C ABI) are
//! internal; `ARCHITECTURE.md` maps them.

// Every unsafe operation sits in its own block with a `// SAFETY:` comment saying why it holds
// (the C boundary keeps them in `ffi::boundary` and the callback call sites).
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
// Every public item is documented; the `fuzzing` feature opens internals to tests/fuzz, which
// the rule does not cover.
#![cfg_attr(not(feature = "fuzzing"), deny(missing_docs))]

/// MCP Apps (SEP-1865): tools' UI links, the verified read of an app's view, and the
/// visibility that keeps app-only tools away from the model.
pub mod apps;
mod auth;
mod base;
mod client;
/// The JSON configuration's one definition (keys, types, defaults) and its JSON Schema.
pub mod config;
mod error;
/// Tools for the model: export to the OpenAI, Anthropic and Gemini function-calling formats,
/// and dispatch of the model's tool calls back to the servers.
pub mod export;
/// Many servers as one client: the [`hub::Hub`], its options, events and member states, and a
/// host's configuration file read into a [`hub::HubSpec`] ([`hub::HubSpec::from_file`]).
pub mod hub;
// The C ABI: its documentation is the header's. Rust reaches it only in the crate's own tests.
#[cfg(not(feature = "testing"))]
mod ffi;
#[cfg(feature = "testing")]
#[doc(hidden)]
#[allow(missing_docs)]
pub mod ffi;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod net;
mod pin;
mod protocol;
#[cfg(feature = "testing")]
#[doc(hidden)]
#[allow(missing_docs)] // internals for tests/*.rs
pub mod testing;
mod transport;
mod untrusted;

pub use auth::{AuthorizationHandler, AuthorizationRequest, Grant, MemoryTokenStore, OAuthConfig, TokenStore};
// Authorization extensions (DPoP, assertion grants, locked token stores).
pub use auth::{
    AssertionKind, AssertionProvider, AssertionRequest, AssertionSource, DpopKeySource, FileTokenStore, IdpConfig,
    StoreGuard,
};
pub use base::BoxFuture;
pub use client::{
    CacheMode, CancelToken, Client, ClientConfig, ConnectMode, ConnectionState, ConnectionStateFn, EraCache,
    HandlerError, InputHandler, InputKind, InputRequest, ListKind, LogFn, LogLine, NotificationFn, Progress,
    ProgressFn, ReconnectPolicy, RequestOptions, ServerInfo, Subscription, SubscriptionEvent, SKILLS_EXTENSION,
};
// URL elicitation, manual input mode, the tasks extension.
/// Spans and the `mcp.client.operation.duration` histogram by the OpenTelemetry semantic
/// conventions for MCP: an [`observe::Observer`] set with [`Client::set_observer`].
pub use client::observe;
pub use client::{ElicitationModes, ManualInput, TaskStatusFn, TASKS_EXTENSION};
pub use error::{Error, ErrorKind, InputRequiredData, Result, RpcErrorData};
pub use pin::{PinChange, PinEvent, PinHook, PinPolicy, PinSettings};
pub use protocol::trace::TraceContext;
pub use protocol::{Era, RequestId};
pub use transport::http::HttpConfig;
pub use transport::stdio::{EnvMode, StdioConfig, ENV_ALLOWLIST};
pub use transport::TransportConfig;

// The Rust examples of README.md, docs/rust.md and docs/hub.md are compiled and run as doctests
// (`cargo test --doc`), so they cannot rot; tests/docs/check.py covers the other languages.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(doctest)]
#[doc = include_str!("../docs/rust.md")]
struct RustGuideDoctests;

#[cfg(doctest)]
#[doc = include_str!("../docs/hub.md")]
struct HubGuideDoctests;
