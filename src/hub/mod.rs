//! The hub: every server of a host's configuration file as one client (merged catalogue,
//! routing, per-member state). Sits above `client`, below `ffi`.

pub mod spec;
