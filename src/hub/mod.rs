//! The hub: every server of a host's configuration file as one client (merged catalogue,
//! routing, per-member state). Sits above `client`, below `ffi`.

mod file;
pub mod spec;

pub use file::{InputPrompt, ReadContext};
pub use spec::{HubSpec, MemberSpec, ToolFilter};
