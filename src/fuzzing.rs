//! Internals the property tests in `tests/fuzz` drive directly, re-exported only under the
//! `fuzzing` cargo feature (never in a shipped build): the parts of the header encoder that the
//! public `transport::http` re-exports leave out, the skills entry rules and `SKILL.md`
//! frontmatter parser. Everything else the fuzzers reach is public.

pub use crate::client::skills_fuzz::{check_entry as check_skill_entry, parse_frontmatter as parse_skill_frontmatter};
pub use crate::transport::http::headers::{name_for, param_headers, param_value, ToolCache};
