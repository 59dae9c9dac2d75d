//! Internals the integration tests in `tests/` drive directly, only under the `testing` cargo
//! feature (the crate's own dev-dependency turns it on for `cargo test`; a shipped build never
//! has it): the one-shot redirect fetch (the C ABI's `ffi` module is public under the same
//! feature).

pub use crate::auth::fetch_redirect;
