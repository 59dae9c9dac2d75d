//! A `result` read in the same serde pass that checks its answer line: where it sits in the
//! line and what the client reads in it (`resultType`, whether it has `structuredContent`,
//! whether `isError` is `true`), so
//! a result kept as the server's bytes is never walked again.
//!
//! serde gives no offsets, but borrowed keys and member values (`RawValue`) point into the line:
//! the object runs from the `{` before its first key to the `}` after its last value, with only
//! whitespace (and the key's quote) between. Results this cannot place (empty objects, objects
//! whose first key has an escape, non-objects) are left to the decoder.

use std::fmt;
use std::ops::Range;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::ResultType;

/// What a result says of itself. `None` where the probe cannot be sure (escaped keys, a member
/// given twice, a `resultType` that is not a known string): the JSON decoder then decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultScan {
    pub kind: Option<ResultType>,
    /// A top-level `structuredContent` that is not `null`.
    pub structured: Option<bool>,
    /// A top-level `isError` that is `true` (a tool's error result).
    pub is_error: Option<bool>,
}

/// A result placed in its text: `text[range]` is the result, read as `scan` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocatedResult {
    pub range: Range<usize>,
    pub scan: ResultScan,
}

/// A `result` member as the probe deserialises it (validated like any other value).
pub struct ProbedResult {
    /// Addresses of the first key's text and of the end of the last member's value, when the
    /// result is an object whose first key is written without escapes.
    bounds: Option<(usize, usize)>,
    scan: ResultScan,
}

impl ProbedResult {
    /// Where the result sits in `text` (the buffer it was deserialised from), with its scan.
    pub fn locate(&self, text: &[u8]) -> Option<LocatedResult> {
        let (key, end) = self.bounds?;
        let base = text.as_ptr() as usize;
        let (key, end) = (key.checked_sub(base)?, end.checked_sub(base)?);
        if key == 0 || key > end || end > text.len() || text[key - 1] != b'"' {
            return None;
        }
        let start = text[..key - 1].trim_ascii_end().len().checked_sub(1)?;
        let close = end + (text.len() - end - text[end..].trim_ascii_start().len());
        (text[start] == b'{' && text.get(close) == Some(&b'}')).then(|| LocatedResult {
            range: start..close + 1,
            scan: self.scan,
        })
    }
}

/// `text`, a result on its own (a cached one), placed and scanned.
pub fn locate_result(text: &[u8]) -> Option<LocatedResult> {
    serde_json::from_slice::<ProbedResult>(text).ok()?.locate(text)
}

impl<'de> Deserialize<'de> for ProbedResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ResultVisitor)
    }
}

/// The one key of the map serde_json (with `arbitrary_precision`) presents a number as. An
/// object spelling it is only decoded instead (the fuzz tests would catch a change of name).
pub(crate) const NUMBER_TOKEN: &str = "$serde_json::private::Number";

const UNPLACED: ProbedResult = ProbedResult::UNPLACED;

impl ProbedResult {
    /// A result the caller decodes (not an object with members, or not sure).
    pub(crate) const UNPLACED: ProbedResult = ProbedResult {
        bounds: None,
        scan: ResultScan {
            kind: None,
            structured: None,
            is_error: None,
        },
    };
}

/// A result object's members as they are read, one by one (by the visitor below, or by
/// `fast_json`'s quick scan): keys as written (`None` with an escape) and values as their text,
/// both pointing into the line.
#[derive(Default)]
pub(crate) struct Members<'t> {
    first: Option<usize>,
    end: usize,
    members: usize,
    kind: Option<&'t str>,
    kinds: usize,
    structured: Option<&'t str>,
    structs: usize,
    error: Option<&'t str>,
    errors: usize,
    escaped: bool,
}

impl<'t> Members<'t> {
    pub(crate) fn is_empty(&self) -> bool {
        self.members == 0
    }

    pub(crate) fn add(&mut self, key: Option<&'t str>, text: &'t str) {
        if self.members == 0 {
            self.first = key.map(|k| k.as_ptr() as usize);
        }
        self.members += 1;
        self.end = text.as_ptr() as usize + text.len();
        match key {
            Some("resultType") => (self.kind, self.kinds) = (Some(text), self.kinds + 1),
            Some("structuredContent") => (self.structured, self.structs) = (Some(text), self.structs + 1),
            Some("isError") => (self.error, self.errors) = (Some(text), self.errors + 1),
            Some(_) => {}
            None => self.escaped = true,
        }
    }

    pub(crate) fn finish(self) -> ProbedResult {
        let Some(first) = self.first else {
            return UNPLACED;
        };
        let scan = match self.escaped {
            true => UNPLACED.scan,
            false => ResultScan {
                kind: match (self.kinds, self.kind) {
                    (0, _) => Some(ResultType::Complete),
                    (1, Some("null" | "\"complete\"")) => Some(ResultType::Complete),
                    (1, Some("\"input_required\"")) => Some(ResultType::InputRequired),
                    (1, Some("\"task\"")) => Some(ResultType::Task),
                    _ => None,
                },
                structured: match (self.structs, self.structured) {
                    (0, _) => Some(false),
                    (1, Some(text)) => Some(text != "null"),
                    _ => None,
                },
                is_error: match (self.errors, self.error) {
                    (0, _) => Some(false),
                    (1, Some(text)) => Some(text == "true"),
                    _ => None,
                },
            },
        };
        ProbedResult {
            bounds: Some((first, self.end)),
            scan,
        }
    }
}

struct ResultVisitor;

impl<'de> Visitor<'de> for ResultVisitor {
    type Value = ProbedResult;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<ProbedResult, E> {
        Ok(UNPLACED)
    }

    fn visit_i64<E>(self, _: i64) -> Result<ProbedResult, E> {
        Ok(UNPLACED)
    }

    fn visit_u64<E>(self, _: u64) -> Result<ProbedResult, E> {
        Ok(UNPLACED)
    }

    fn visit_f64<E>(self, _: f64) -> Result<ProbedResult, E> {
        Ok(UNPLACED)
    }

    fn visit_str<E>(self, _: &str) -> Result<ProbedResult, E> {
        Ok(UNPLACED)
    }

    fn visit_unit<E>(self) -> Result<ProbedResult, E> {
        Ok(UNPLACED)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ProbedResult, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(UNPLACED)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ProbedResult, A::Error> {
        let mut members = Members::default();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            if members.is_empty() && key.0 == Some(NUMBER_TOKEN) {
                // A number: its text comes as a string, not as JSON text of the line.
                map.next_value::<IgnoredAny>()?;
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                return Ok(UNPLACED);
            }
            let value: &'de RawValue = map.next_value()?;
            members.add(key.0, value.get());
        }
        Ok(members.finish())
    }
}

/// A member's key: borrowed from the text when written without escapes, else `None`.
struct Key<'de>(Option<&'de str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Some(key)))
            }
            fn visit_str<E>(self, _: &str) -> Result<Key<'de>, E> {
                Ok(Key(None))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn located(text: &str) -> Option<(String, ResultScan)> {
        locate_result(text.as_bytes()).map(|at| (text[at.range].to_string(), at.scan))
    }

    #[test]
    fn objects_are_placed_where_they_stand() {
        let text = "  {\"a\" : [1, {\"b\":\"}\"}] , \"resultType\":\"task\" }  ";
        let (found, scan) = located(text).unwrap();
        assert_eq!(found, text.trim());
        assert_eq!(scan.kind, Some(ResultType::Task));
        assert_eq!(scan.structured, Some(false));
        assert_eq!(scan.is_error, Some(false));
        let (found, _) = located(r#"{"":1}"#).unwrap();
        assert_eq!(found, r#"{"":1}"#);
    }

    #[test]
    fn what_cannot_be_placed_is_left_to_the_decoder() {
        for text in ["{}", " { } ", "[1]", "\"s\"", "5", "null", "true", r#"{"\u0061":1}"#] {
            assert_eq!(located(text), None, "{text}");
        }
        assert!(locate_result(b"{\"a\":1").is_none());
    }

    #[test]
    fn an_escaped_later_key_leaves_the_scan_unsure() {
        let (_, scan) = located(r#"{"a":1,"result\u0054ype":"task"}"#).unwrap();
        assert_eq!(scan, UNPLACED.scan);
    }

    /// What the scan is sure of, and where it leaves the decoder to decide (the answers it
    /// gives agree with the decoder: `client::reply`'s tests and the fuzzer check that).
    #[test]
    fn the_scan_reads_the_top_level_only_and_says_when_it_is_unsure() {
        use ResultType::*;
        let cases = [
            (r#"{"content":[],"resultType":"complete"}"#, Some(Complete), Some(false)),
            (
                r#"{"a":{"resultType":"task","structuredContent":1}}"#,
                Some(Complete),
                Some(false),
            ),
            (r#"{"resultType" : "input_required"}"#, Some(InputRequired), Some(false)),
            (
                r#"{"resultType":null,"structuredContent":[]}"#,
                Some(Complete),
                Some(true),
            ),
            (r#"{"structuredContent": null}"#, Some(Complete), Some(false)),
            (r#"{"resultType":"later"}"#, None, Some(false)),
            (r#"{"resultType":"comp\u006cete"}"#, None, Some(false)),
            (r#"{"resultType":"task","resultType":"task"}"#, None, Some(false)),
            (
                r#"{"structuredContent":null,"structuredContent":{}}"#,
                Some(Complete),
                None,
            ),
        ];
        for (text, kind, structured) in cases {
            let (_, scan) = located(text).unwrap();
            let is_error = Some(false);
            assert_eq!(
                scan,
                ResultScan {
                    kind,
                    structured,
                    is_error
                },
                "{text}"
            );
        }
        let errors = [
            (r#"{"content":[],"isError":true}"#, Some(true)),
            (r#"{"isError" : true , "content":[]}"#, Some(true)),
            (r#"{"isError":false}"#, Some(false)),
            (r#"{"isError":"true"}"#, Some(false)),
            (r#"{"isError":null}"#, Some(false)),
            (r#"{"a":{"isError":true}}"#, Some(false)),
            (r#"{"isError":false,"isError":true}"#, None),
        ];
        for (text, is_error) in errors {
            assert_eq!(located(text).unwrap().1.is_error, is_error, "{text}");
        }
    }
}
