//! The defaults of the JSON configuration's keys (`crate::config`), here so that the internal
//! types' constructors (in the layers below `config`) use the same values. Each is named after
//! its key.
#![allow(missing_docs)]

/// The longest timeout (or total cap, or grace period) the library takes, in milliseconds:
/// 2^40 ms, about 34.8 years. Longer values are refused, not wrapped or clamped (a host
/// converting seconds to milliseconds can overflow).
pub const MAX_TIMEOUT_MS: u64 = 1 << 40;

pub const REQUEST_TIMEOUT_MS: u64 = 60_000;
pub const PROBE_TIMEOUT_MS: u64 = 5_000;
pub const CONNECT_TIMEOUT_MS: u64 = 60_000;
pub const INPUT_REQUIRED_MAX_ROUNDS: u32 = 10;
pub const MAX_PAGES: u64 = 1000;
pub const MAX_MESSAGE_BYTES: u64 = 8 * 1024 * 1024;
pub const STDERR_TAIL_LINES: u64 = 20;
pub const SHUTDOWN_GRACE_MS: u64 = 2_000;
pub const RECONNECT_MAX_ATTEMPTS: u32 = 5;
pub const RECONNECT_INITIAL_BACKOFF_MS: u64 = 100;
pub const RECONNECT_MAX_BACKOFF_MS: u64 = 5_000;
pub const LOOPBACK_PATH: &str = "/callback";
pub const AUTHORIZATION_TIMEOUT_MS: u64 = 300_000;
pub const MAX_STEP_UP: u64 = 2;
pub const RESPONSE_CACHE_MAX_ENTRIES: u64 = 512;
