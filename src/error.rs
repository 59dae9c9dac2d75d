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
    /// The HTTP server answered with an unexpected status (kept on the error).
    HttpStatus,
    /// The HTTP server requires authorization the client could not obtain (401, or 403 with a
    /// Bearer challenge), or an OAuth step was refused; the challenge is kept on the error.
    AuthRequired,
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
    /// A legacy server answered -32042: the user must complete the URL elicitations in
    /// `data.elicitations` (see [`Error::elicitations`]), then the call may be retried.
    UrlElicitationRequired,
    /// A skill file or entry failed SEP-2640 verification (size, digest, frontmatter, or the
    /// entry's structural rules); nothing unverified was returned.
    SkillVerificationFailed,
    /// A tool's `structuredContent` does not match the `outputSchema` it declared (or is missing);
    /// the message says where, [`Error::result`] holds the raw result.
    OutputSchemaInvalid,
    /// The tool is withheld by tool pinning (`tool_pinning`): its listed definition differs from
    /// the pinned one, or it is new on a server whose tools were pinned, and the host has not
    /// approved it (`Client::approve_tool_pin`).
    ToolPinChanged,
    /// A blocking call was made from a context where it would deadlock.
    Reentrant,
    /// A bug in this library.
    Internal,
}

/// The JSON-RPC error object a server returned.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcErrorData {
    /// The error code (`-32601`: method not found, …).
    pub code: i64,
    /// The server's message.
    pub message: String,
    /// The server's `data`, if any.
    pub data: Option<Value>,
}

/// What a host needs to finish an `input_required` result by hand.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequiredData {
    /// The `inputRequests` map (key → `{method, params}`), `{}` when the server sent none.
    pub input_requests: Value,
    /// The opaque `requestState`, exactly as received.
    pub request_state: Option<String>,
    /// The raw `input_required` result (for a task: the task as `tasks/get` returned it).
    pub result: Value,
    /// The entries of `input_requests` no registered handler answers (key → request): all of
    /// them in manual mode, `{}` when the rounds cap was reached.
    pub unanswered: Value,
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
    /// The HTTP status behind the failure, when an HTTP answer caused it.
    http_status: Option<u16>,
    /// The `WWW-Authenticate` header of that answer (challenges carry no credentials).
    www_authenticate: Option<String>,
    /// The raw result behind the failure (`OutputSchemaInvalid`).
    result: Option<Value>,
    /// The registered OAuth error code an authorization server answered (`invalid_grant`, …).
    oauth_error: Option<String>,
}

impl Error {
    /// An error of `kind` saying `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error(Box::new(Inner {
            kind,
            message: message.into(),
            rpc: None,
            input: None,
            http_status: None,
            www_authenticate: None,
            result: None,
            oauth_error: None,
        }))
    }

    /// A JSON-RPC error answer; -32021 and -32022 get their own kinds.
    pub fn rpc(code: i64, message: String, data: Option<Value>) -> Self {
        let kind = match code {
            crate::base::codes::MISSING_REQUIRED_CLIENT_CAPABILITY => ErrorKind::CapabilityMissing,
            crate::base::codes::URL_ELICITATION_REQUIRED => ErrorKind::UrlElicitationRequired,
            _ => ErrorKind::Rpc,
        };
        let hint = match kind {
            ErrorKind::CapabilityMissing => missing_capability_hint(data.as_ref()),
            _ => String::new(),
        };
        Error(Box::new(Inner {
            kind,
            message: format!("server error {code}: {message}{hint}"),
            rpc: Some(RpcErrorData { code, message, data }),
            input: None,
            http_status: None,
            www_authenticate: None,
            result: None,
            oauth_error: None,
        }))
    }

    /// An error carrying the `input_required` result it stopped at.
    pub fn input_required(kind: ErrorKind, message: impl Into<String>, data: InputRequiredData) -> Self {
        Error(Box::new(Inner {
            kind,
            message: message.into(),
            rpc: None,
            input: Some(data),
            http_status: None,
            www_authenticate: None,
            result: None,
            oauth_error: None,
        }))
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }
    /// The message, saying what failed and, where it helps, what to check.
    pub fn message(&self) -> &str {
        &self.0.message
    }
    /// The server's JSON-RPC error, when the failure is one.
    pub fn rpc_error(&self) -> Option<&RpcErrorData> {
        self.0.rpc.as_ref()
    }
    /// The unanswered input requests, for [`ErrorKind::InputRequired`] and its kin.
    pub fn input_required_data(&self) -> Option<&InputRequiredData> {
        self.0.input.as_ref()
    }
    /// For [`ErrorKind::UrlElicitationRequired`]: the server's `data.elicitations` array (each
    /// `{mode: "url", elicitationId, url, message}`), or `None`.
    pub fn elicitations(&self) -> Option<&Value> {
        if self.0.kind != ErrorKind::UrlElicitationRequired {
            return None;
        }
        self.0
            .rpc
            .as_ref()?
            .data
            .as_ref()?
            .get("elicitations")
            .filter(|e| e.is_array())
    }
    /// The raw result that failed a check (`OutputSchemaInvalid`); for the input-required kinds
    /// see [`Error::input_required_data`].
    pub fn result(&self) -> Option<&Value> {
        self.0.result.as_ref()
    }
    /// The HTTP status of the answer that caused this error, if any.
    pub fn http_status(&self) -> Option<u16> {
        self.0.http_status
    }
    /// The `WWW-Authenticate` header of that answer (for `AuthRequired`), if any.
    pub fn www_authenticate(&self) -> Option<&str> {
        self.0.www_authenticate.as_deref()
    }

    /// The same error, carrying the raw result that failed a check.
    pub(crate) fn with_result(mut self, result: Value) -> Self {
        self.0.result = Some(result);
        self
    }

    /// The registered OAuth error code behind an authorization failure (`invalid_grant`,
    /// `invalid_scope`, `unauthorized_client`, …), if an authorization server answered one.
    pub fn oauth_error(&self) -> Option<&str> {
        self.0.oauth_error.as_deref()
    }

    /// The same error, recording the OAuth error code behind it.
    pub(crate) fn with_oauth_error(mut self, code: Option<String>) -> Self {
        self.0.oauth_error = code;
        self
    }

    /// The same error, recording the HTTP status behind it.
    pub fn with_http_status(mut self, status: u16) -> Self {
        self.0.http_status = Some(status);
        self
    }

    /// The same error, recording the challenge of the answer behind it (kept if already set).
    pub fn with_www_authenticate(mut self, challenge: Option<String>) -> Self {
        if self.0.www_authenticate.is_none() {
            self.0.www_authenticate = challenge;
        }
        self
    }

    /// The same error with context prepended to its message.
    /// Prefixes `what: ` (once: a message that already starts with it is left alone).
    pub fn context(mut self, what: &str) -> Self {
        if !self.0.message.starts_with(&format!("{what}: ")) {
            self.0.message = format!("{what}: {}", self.0.message);
        }
        self
    }

    /// Appends `; note` (what to do about it, what was or was not done).
    pub(crate) fn note(mut self, note: &str) -> Self {
        self.0.message = format!("{}; {note}", self.0.message);
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
    /// A message that JSON could not carry (on the way out, before anything was sent).
    pub(crate) fn unserialisable(e: serde_json::Error) -> Self {
        Error::invalid(format!("unserialisable message: {e}"))
    }
    pub(crate) fn auth(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::AuthRequired, message)
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

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What declares the capabilities a -32021 answer's `data.requiredCapabilities` names: the
/// handler to register or the `manual_input` entry, in the C ABI's words and the bindings'.
/// Empty when the data names none of the input kinds.
fn missing_capability_hint(data: Option<&Value>) -> String {
    let Some(required) = data
        .and_then(|d| d.get("requiredCapabilities"))
        .and_then(Value::as_object)
    else {
        return String::new();
    };
    let mut hints = Vec::new();
    if let Some(elicitation) = required.get("elicitation") {
        hints.push(match elicitation.get("url") {
            Some(_) => {
                "it asked for URL-mode elicitation (`elicitation.url`): register the elicitation \
                 handler for URL mode (mcp_client_on_elicitation_modes with MCP_ELICITATION_URL; \
                 on_elicitation_modes in the bindings) or list \"elicitation.url\" in the \
                 configuration's manual_input"
            }
            None => {
                "register an elicitation handler for form mode (mcp_client_on_elicitation; \
                 on_elicitation in the bindings) or list \"elicitation\" in the configuration's \
                 manual_input"
            }
        });
    }
    if required.contains_key("sampling") {
        hints.push(
            "register a sampling handler (mcp_client_on_sampling; on_sampling in the bindings) or \
             list \"sampling\" in the configuration's manual_input",
        );
    }
    if required.contains_key("roots") {
        hints.push(
            "register a roots handler (mcp_client_on_roots; on_roots in the bindings) or list \
             \"roots\" in the configuration's manual_input",
        );
    }
    hints.iter().map(|h| format!("; {h}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_missing_capability_says_what_declares_it() {
        let missing = |data: Value| {
            Error::rpc(-32021, "Server requires it".into(), Some(data))
                .message()
                .to_string()
        };
        let form = missing(json!({"requiredCapabilities": {"elicitation": {}}}));
        assert!(form.starts_with("server error -32021: Server requires it; register an elicitation handler"));
        assert!(
            form.contains("\"elicitation\" in the configuration's manual_input"),
            "{form}"
        );
        let url = missing(json!({"requiredCapabilities": {"elicitation": {"url": {}}}}));
        assert!(
            url.contains("`elicitation.url`") && url.contains("MCP_ELICITATION_URL"),
            "{url}"
        );
        let two = missing(json!({"requiredCapabilities": {"sampling": {}, "roots": {}}}));
        assert!(
            two.contains("mcp_client_on_sampling") && two.contains("mcp_client_on_roots"),
            "{two}"
        );
        assert_eq!(missing(json!({})), "server error -32021: Server requires it");
        let other = Error::rpc(
            -32601,
            "nope".into(),
            Some(json!({"requiredCapabilities": {"roots": {}}})),
        );
        assert_eq!(other.message(), "server error -32601: nope");
    }
}
