//! The crate's single error type. Every failure carries a kind (mapped 1:1 to a C status code in
//! `ffi::status`), a human-readable message, and the structured data a host needs to act on it.

use serde_json::Value;
use std::fmt;

/// What went wrong, coarse enough to branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The caller passed something unusable (bad config, bad JSON shape, unknown option).
    InvalidArgument,
    /// The client was closed, or never connected.
    Closed,
    /// The operation is not available in this era or build.
    Unsupported,
    /// Reading from or writing to the transport failed.
    Io,
    /// The request timed out.
    Timeout,
    /// The request was cancelled by the caller.
    Cancelled,
    /// The server process exited (or its pipes closed).
    ServerExited,
    /// A message exceeded the configured size bound.
    MessageTooLarge,
    /// The server answered with a JSON-RPC error object.
    Rpc,
    /// The server broke the protocol (malformed message, unknown `resultType`, …).
    ProtocolViolation,
    /// No mutually supported protocol version.
    VersionMismatch,
    /// The server requires client capabilities that were not declared (-32021).
    CapabilityMissing,
    /// The server needs input that no registered handler can provide (or manual mode).
    InputRequired,
    /// The server kept answering `input_required` past `input_required_max_rounds`.
    InputRoundsExceeded,
    /// An input handler failed or refused.
    HandlerFailed,
    /// A blocking call was made from a context where it would deadlock.
    Reentrant,
    /// A bug in this library.
    Internal,
}

/// The JSON-RPC error object a server returned.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcErrorData {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

/// What a host needs to finish an `input_required` result by hand.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequiredData {
    /// The `inputRequests` map (key → `{method, params}`), `{}` when the server sent none.
    pub input_requests: Value,
    /// The opaque `requestState`, exactly as received.
    pub request_state: Option<String>,
    /// The raw `input_required` result.
    pub result: Value,
}

/// Boxed so `Result<T, Error>` stays one pointer wide on the hot path.
#[derive(Debug, Clone)]
pub struct Error(Box<Inner>);

#[derive(Debug, Clone)]
struct Inner {
    kind: ErrorKind,
    message: String,
    rpc: Option<RpcErrorData>,
    input: Option<InputRequiredData>,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error(Box::new(Inner {
            kind,
            message: message.into(),
            rpc: None,
            input: None,
        }))
    }

    /// A JSON-RPC error answer; -32021 and -32022 get their own kinds.
    pub fn rpc(code: i64, message: String, data: Option<Value>) -> Self {
        let kind = match code {
            crate::protocol::codes::MISSING_REQUIRED_CLIENT_CAPABILITY => ErrorKind::CapabilityMissing,
            _ => ErrorKind::Rpc,
        };
        Error(Box::new(Inner {
            kind,
            message: format!("server error {code}: {message}"),
            rpc: Some(RpcErrorData { code, message, data }),
            input: None,
        }))
    }

    pub fn input_required(kind: ErrorKind, message: impl Into<String>, data: InputRequiredData) -> Self {
        Error(Box::new(Inner {
            kind,
            message: message.into(),
            rpc: None,
            input: Some(data),
        }))
    }

    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }
    pub fn message(&self) -> &str {
        &self.0.message
    }
    pub fn rpc_error(&self) -> Option<&RpcErrorData> {
        self.0.rpc.as_ref()
    }
    pub fn input_required_data(&self) -> Option<&InputRequiredData> {
        self.0.input.as_ref()
    }

    /// The same error with context prepended to its message.
    pub fn context(mut self, what: &str) -> Self {
        self.0.message = format!("{what}: {}", self.0.message);
        self
    }

    pub(crate) fn closed() -> Self {
        Error::new(ErrorKind::Closed, "the client is closed")
    }
    pub(crate) fn protocol(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::ProtocolViolation, message)
    }
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidArgument, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for Error {}

impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        self.kind() == other.kind() && self.message() == other.message()
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
