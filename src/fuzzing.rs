//! Internals the property tests in `tests/fuzz` drive directly, re-exported only under the
//! `fuzzing` cargo feature (never in a shipped build): the framer, its reader, the id scan and the answer probe (with the `resultType` it reads), the SSE parser,
//! the header encoder, the `WWW-Authenticate` parser, the skills entry rules and `SKILL.md`
//! frontmatter parser. (The configuration's keys come from `config::keys`.)

pub use crate::client::skills_fuzz::{check_entry as check_skill_entry, parse_frontmatter as parse_skill_frontmatter};
pub use crate::protocol::ResultType;
pub use crate::transport::http::headers::{
    encode_value as encode_header_value, name_for, param_headers, param_value, tool_headers, ToolCache, ToolHeaders,
};
pub use crate::transport::http::Challenge;
pub use crate::transport::lean_reader::LeanReader;
pub use crate::transport::{framing, sse};
