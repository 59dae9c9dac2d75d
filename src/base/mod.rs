//! Primitives every layer shares: the boxed future of the crate's traits, the cancellation
//! token, a host handler's refusal, the JSON-RPC error codes and the configuration defaults. This module imports nothing
//! of the crate, so any module may use it without tying the layers into a loop (`tests/layers.rs`
//! checks that).

pub mod cancel;
pub mod codes;
pub mod defaults;
pub mod driving;
#[cfg(unix)]
pub mod event_fd;
#[cfg(windows)]
#[path = "event_fd_windows.rs"]
pub mod event_fd;

pub use cancel::CancelToken;

use std::future::Future;
use std::pin::Pin;

/// The future the crate's object-safe async traits return (handlers, stores, transports).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A host handler's refusal; `code` becomes the JSON-RPC error code on legacy connections.
#[derive(Debug, Clone, PartialEq)]
pub struct HandlerError {
    /// The JSON-RPC error code to answer with (`None`: the library chooses).
    pub code: Option<i64>,
    /// Why the handler refused, for the server (legacy) or the caller's error.
    pub message: String,
}

impl HandlerError {
    /// A refusal without a code of its own.
    pub fn new(message: impl Into<String>) -> Self {
        HandlerError {
            code: None,
            message: message.into(),
        }
    }
}
