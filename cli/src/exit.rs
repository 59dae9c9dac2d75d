//! Exit codes, and how a failure is told on stderr.

use mcp_client::{Error, ErrorKind};

/// A failure of the program: its exit code and what to print.
pub struct Failure {
    pub code: u8,
    pub message: String,
    /// With `--json`: printed on stdout (the server's request for input in manual mode).
    pub json: Option<serde_json::Value>,
}

pub const ERROR: u8 = 1;
pub const USAGE: u8 = 2;
pub const CONNECTION: u8 = 3;
pub const TOOL_ERROR: u8 = 4;
pub const INPUT_REQUIRED: u8 = 5;
pub const TIMEOUT: u8 = 6;
pub const AUTH: u8 = 7;

impl Failure {
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure {
            code: USAGE,
            message: message.into(),
            json: None,
        }
    }

    /// A library error met while connecting.
    pub fn connect(e: Error) -> Failure {
        let code = match e.kind() {
            ErrorKind::Timeout => TIMEOUT,
            ErrorKind::AuthRequired => AUTH,
            ErrorKind::InvalidArgument => USAGE,
            _ => CONNECTION,
        };
        Failure {
            code,
            message: format!("cannot connect: {}", e.message()),
            json: None,
        }
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        let code = match e.kind() {
            ErrorKind::InvalidArgument => USAGE,
            ErrorKind::Timeout => TIMEOUT,
            ErrorKind::AuthRequired => AUTH,
            ErrorKind::InputRequired | ErrorKind::UrlElicitationRequired => INPUT_REQUIRED,
            ErrorKind::ServerExited | ErrorKind::Io | ErrorKind::Closed | ErrorKind::VersionMismatch => CONNECTION,
            _ => ERROR,
        };
        let json = e
            .input_required_data()
            .map(|d| serde_json::json!({"inputRequests": d.input_requests, "requestState": d.request_state}));
        let json = json.or_else(|| e.elicitations().map(|el| serde_json::json!({"elicitations": el})));
        let mut message = e.message().to_string();
        if let Some(rpc) = e.rpc_error() {
            if let Some(data) = &rpc.data {
                message = format!("{message} (data: {data})");
            }
        }
        Failure { code, message, json }
    }
}
