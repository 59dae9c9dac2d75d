//! How one request waits ([`Wait`]) and what its error says when a limit passes: which limit
//! expired and the setting that controls it.

use super::cancel::CancelToken;
use super::options::ProgressFn;
use crate::error::{Error, ErrorKind};
use std::time::Duration;
use tokio::time::Instant;

/// How one request waits.
#[derive(Clone, Default)]
pub(crate) struct Wait {
    /// Per-request timeout; `None` waits as long as `deadline` allows.
    pub timeout: Option<Duration>,
    /// Where `timeout` comes from, named when it expires.
    pub timeout_from: TimeoutFrom,
    pub reset_on_progress: bool,
    /// Absolute cap (whole call, across resets and rounds).
    pub deadline: Option<Instant>,
    /// The span `deadline` was set from (the call's `max_total`), named when it expires.
    pub total: Option<Duration>,
    pub cancel: Option<CancelToken>,
    pub on_progress: Option<ProgressFn>,
    /// Tell the server when the request is abandoned (never before `initialize` completes).
    pub notify_cancel: bool,
    /// What an observed operation collects (`observe::Trail`); `None` when unobserved.
    pub trail: Option<std::sync::Arc<super::observe::Trail>>,
}

/// The setting a [`Wait`]'s `timeout` comes from.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) enum TimeoutFrom {
    /// A bound of the library's own (era detection, the `tasks/cancel` of a call that ended).
    #[default]
    Library,
    /// The configuration's `request_timeout_ms`.
    Client,
    /// The call's own options (`timeout_ms`).
    Call,
}

impl Wait {
    /// `what` outlived the per-request timeout: the error names the limit and its setting.
    pub(crate) fn timed_out(&self, what: &str) -> Error {
        let ms = self.timeout.unwrap_or_default().as_millis();
        let quiet = if self.reset_on_progress {
            " without progress"
        } else {
            ""
        };
        let setting = match self.timeout_from {
            TimeoutFrom::Library => String::new(),
            TimeoutFrom::Client => {
                ": the limit is request_timeout_ms in the configuration (per call: timeout_ms in the call options)"
                    .to_string()
            }
            TimeoutFrom::Call => {
                ": the limit is this call's timeout (timeout_ms in its call options; client-wide: request_timeout_ms)"
                    .to_string()
            }
        };
        Error::new(
            ErrorKind::Timeout,
            format!("{what} timed out after {ms} ms{quiet}{setting}"),
        )
    }

    /// `what` outlived the call's total cap (`deadline`).
    pub(crate) fn total_ran_out(&self, what: &str) -> Error {
        let cap = match self.total {
            Some(total) => format!(
                "the call's total cap of {} ms ran out (max_total_ms in its call options)",
                total.as_millis()
            ),
            None => "the call's total cap ran out (max_total_ms in its call options)".to_string(),
        };
        Error::new(ErrorKind::Timeout, format!("{what} timed out: {cap}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expired_limits_name_their_setting() {
        let client = Wait {
            timeout: Some(Duration::from_millis(1000)),
            timeout_from: TimeoutFrom::Client,
            ..Wait::default()
        };
        assert_eq!(
            client.timed_out("tools/call (request 2)").message(),
            "tools/call (request 2) timed out after 1000 ms: the limit is request_timeout_ms in the \
             configuration (per call: timeout_ms in the call options)"
        );
        let call = Wait {
            timeout: Some(Duration::from_millis(500)),
            timeout_from: TimeoutFrom::Call,
            reset_on_progress: true,
            ..Wait::default()
        };
        let text = call.timed_out("x").message().to_string();
        assert!(
            text.starts_with("x timed out after 500 ms without progress: the limit is this call's timeout"),
            "{text}"
        );
        let library = Wait {
            timeout: Some(Duration::from_millis(20)),
            ..Wait::default()
        };
        assert_eq!(
            library.timed_out("tasks/cancel").message(),
            "tasks/cancel timed out after 20 ms"
        );
        let capped = Wait {
            total: Some(Duration::from_millis(300)),
            ..Wait::default()
        };
        let err = capped.total_ran_out("tools/call (request 4)");
        assert_eq!(err.kind(), ErrorKind::Timeout);
        assert!(
            err.message().contains("total cap of 300 ms ran out (max_total_ms"),
            "{}",
            err.message()
        );
    }
}
