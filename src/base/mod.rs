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
pub mod quiet;

pub use cancel::CancelToken;

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The future the crate's object-safe async traits return (handlers, stores, transports).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// `fut` boxed, for a `JoinSet` or a runtime handle's `spawn`: see [`spawn`].
pub fn boxed<'a, T>(fut: impl Future<Output = T> + Send + 'a) -> BoxFuture<'a, T> {
    Box::pin(fut)
}

/// A boxed future that is ready with `Ok(())` at once (a send whose work already started
/// elsewhere). It has no size, so boxing it allocates nothing: `std::future::ready(Ok(()))`
/// cost an allocation per request.
pub fn done<E: 'static>() -> BoxFuture<'static, Result<(), E>> {
    Box::pin(Done(PhantomData))
}

struct Done<E>(PhantomData<fn() -> E>);

impl<E> Future for Done<E> {
    type Output = Result<(), E>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Ready(Ok(()))
    }
}

/// `tokio::spawn` of `fut` boxed: tokio's task code (its poll, completion, join and abort
/// paths) is then compiled once per output type rather than once per future type, about 2.5 KB
/// of the shipped library for each task kind (docs/performance.md, "Sizes and build"). For the
/// background tasks that start once per connection or on rare paths; the per-message loops
/// (the stdio pump, the session's read loop) keep `tokio::spawn`.
pub fn spawn<T: Send + 'static>(fut: impl Future<Output = T> + Send + 'static) -> tokio::task::JoinHandle<T> {
    tokio::spawn(boxed(fut))
}

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
