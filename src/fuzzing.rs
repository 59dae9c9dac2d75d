//! Internals the property tests in `tests/fuzz` drive directly, re-exported only under the
//! `fuzzing` cargo feature (never in a shipped build): the framer and id scans, the SSE parser,
//! the header encoder, the `WWW-Authenticate` parser, the skills entry rules and `SKILL.md`
//! frontmatter parser, and the configuration parsers' key lists (so the fuzzer follows new keys).

pub use crate::auth::CONFIG_KEYS as OAUTH_CONFIG_KEYS;
pub use crate::client::skills_fuzz::{check_entry as check_skill_entry, parse_frontmatter as parse_skill_frontmatter};
pub use crate::client::CONFIG_KEYS as CLIENT_CONFIG_KEYS;
pub use crate::transport::http::headers::{
    encode_value as encode_header_value, name_for, param_headers, param_value, tool_headers, ToolCache, ToolHeaders,
};
pub use crate::transport::http::Challenge;
pub use crate::transport::{framing, sse};
