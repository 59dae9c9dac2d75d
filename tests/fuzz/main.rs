//! Property-based fuzzing (proptest, stable Rust) of everything that parses bytes a peer or a
//! host controls: the stdio line framer and its answer scan, the SSE parser, the HTTP header
//! encoder, the `WWW-Authenticate` parser, the JSON configuration parsers, and the skills entry
//! rules and `SKILL.md` frontmatter parser.
//!
//! Properties: no input panics; outputs stay within their bounds; where an inverse exists the
//! round trip is exact (header encode → decode, SSE serialise → parse, a `Bearer` challenge
//! written → read); how a byte stream is split into reads never changes what comes out.
//!
//! The number of cases comes from `PROPTEST_CASES`: `make fuzz-smoke` (in `make test`) runs a
//! few seconds' worth, `make fuzz` runs many for a few minutes. Shrunk failures are saved next to
//! each module as `<module>.proptest-regressions` (commit them: they are replayed first on every
//! run); fixed bugs also keep a named unit test here.
//!
//! Built only with the `fuzzing` feature (see `src/fuzzing.rs`): `cargo test --features fuzzing
//! --test fuzz`.

mod challenge;
mod config;
mod framing;
mod headers;
mod skills;
mod sse;
