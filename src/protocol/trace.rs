//! W3C trace context in `params._meta` (SEP-414): the `traceparent`, `tracestate` and `baggage`
//! members, unprefixed, in their W3C formats. A [`TraceContext`] is checked when it is made, so
//! nothing invalid is ever written; caller `_meta` holding these keys is checked the same way
//! ([`check_meta`]).

use serde_json::{Map, Value};
use std::sync::Arc;

pub const TRACEPARENT: &str = "traceparent";
pub const TRACESTATE: &str = "tracestate";
pub const BAGGAGE: &str = "baggage";

/// W3C Trace Context: at most 32 `tracestate` list members.
const MAX_TRACESTATE_MEMBERS: usize = 32;
/// W3C Baggage: at most 180 list members and 8192 bytes.
const MAX_BAGGAGE_MEMBERS: usize = 180;
const MAX_BAGGAGE_BYTES: usize = 8192;

/// The trace context one call sends in every request it makes (MRTR retries, task polls,
/// pages, retries after a reconnect). Cheap to clone: the `_meta` members are serialised once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: Option<Arc<str>>,
    tracestate: Option<Arc<str>>,
    baggage: Option<Arc<str>>,
    /// The members as JSON text (`"traceparent":"…","tracestate":"…"`), in that order.
    members: Arc<[u8]>,
}

impl TraceContext {
    /// A context from the W3C header values (`None` or empty: absent). `None` when all three are
    /// absent; an error naming the value and the rule when one is invalid, or when `tracestate`
    /// comes without `traceparent` (it means nothing alone).
    pub fn new(
        traceparent: Option<&str>,
        tracestate: Option<&str>,
        baggage: Option<&str>,
    ) -> Result<Option<TraceContext>, String> {
        let (traceparent, tracestate, baggage) = (present(traceparent), present(tracestate), present(baggage));
        if let Some(v) = traceparent {
            check_traceparent(v)?;
        }
        if let Some(v) = tracestate {
            if traceparent.is_none() {
                return Err("tracestate is set without traceparent".into());
            }
            check_tracestate(v)?;
        }
        if let Some(v) = baggage {
            check_baggage(v)?;
        }
        if traceparent.is_none() && baggage.is_none() {
            return Ok(None);
        }
        let entries = [(TRACEPARENT, traceparent), (TRACESTATE, tracestate), (BAGGAGE, baggage)];
        let mut members = Vec::new();
        for (key, value) in entries {
            if let Some(value) = value {
                if !members.is_empty() {
                    members.push(b',');
                }
                // Checked values are printable ASCII: writing them cannot fail.
                let _ = serde_json::to_writer(&mut members, key);
                members.push(b':');
                let _ = serde_json::to_writer(&mut members, value);
            }
        }
        Ok(Some(TraceContext {
            traceparent: traceparent.map(Arc::from),
            tracestate: tracestate.map(Arc::from),
            baggage: baggage.map(Arc::from),
            members: members.into(),
        }))
    }

    /// The `traceparent` value, when set.
    pub fn traceparent(&self) -> Option<&str> {
        self.traceparent.as_deref()
    }

    /// The `tracestate` value, when set.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The `baggage` value, when set.
    pub fn baggage(&self) -> Option<&str> {
        self.baggage.as_deref()
    }

    /// The `_meta` members as JSON text, comma-separated (see `jsonrpc::MetaParts`).
    #[doc(hidden)]
    pub fn members_text(&self) -> &[u8] {
        &self.members
    }

    /// The members, for a `_meta` map (they replace the caller's entries of the same keys).
    #[doc(hidden)]
    pub fn insert_into(&self, meta: &mut Map<String, Value>) {
        for (key, value) in [
            (TRACEPARENT, &self.traceparent),
            (TRACESTATE, &self.tracestate),
            (BAGGAGE, &self.baggage),
        ] {
            if let Some(value) = value {
                meta.insert(key.into(), Value::String(value.to_string()));
            }
        }
    }
}

/// Takes the trace keys out of caller `_meta` entries as the call's context (each a string of
/// its W3C format): the C ABI's `meta_json` way of giving a call its context, which then goes on
/// every request of the call, task polls included (other caller entries go on the call's own
/// requests only).
pub fn take_from(meta: &mut Map<String, Value>) -> Result<Option<TraceContext>, String> {
    check_meta(meta)?;
    let mut take = |key: &str| match meta.remove(key) {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let (parent, state, baggage) = (take(TRACEPARENT), take(TRACESTATE), take(BAGGAGE));
    TraceContext::new(parent.as_deref(), state.as_deref(), baggage.as_deref())
}

/// Caller `_meta` entries with trace keys: each must be a valid string of its format.
pub fn check_meta(meta: &Map<String, Value>) -> Result<(), String> {
    for (key, check) in [
        (TRACEPARENT, check_traceparent as fn(&str) -> Result<(), String>),
        (TRACESTATE, check_tracestate),
        (BAGGAGE, check_baggage),
    ] {
        match meta.get(key) {
            None => {}
            Some(Value::String(s)) => check(s)?,
            Some(_) => return Err(format!("_meta {key} must be a string")),
        }
    }
    Ok(())
}

fn present(v: Option<&str>) -> Option<&str> {
    v.filter(|s| !s.is_empty())
}

fn is_lower_hex(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `version-traceid-parentid-flags`: lowercase hex of 2, 32, 16 and 2 digits; the ids not all
/// zeros, the version not `ff`. Version `00` is exactly that; a later version may append
/// `-`-separated fields, which are kept as they are.
fn check_traceparent(v: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("traceparent {v:?} is not a W3C traceparent: {why}"));
    if !v.is_ascii() || v.len() < 55 {
        return bad("expected 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>");
    }
    let (version, trace_id, parent_id, flags) = (&v[0..2], &v[3..35], &v[36..52], &v[53..55]);
    if [2, 35, 52].iter().any(|&i| v.as_bytes()[i] != b'-') {
        return bad("the fields are separated by '-'");
    }
    if ![version, trace_id, parent_id, flags].iter().all(|f| is_lower_hex(f)) {
        return bad("every field is lowercase hexadecimal");
    }
    if version == "ff" {
        return bad("version ff is invalid");
    }
    if version == "00" && v.len() != 55 {
        return bad("version 00 has exactly four fields");
    }
    if v.len() > 55 && v.as_bytes()[55] != b'-' {
        return bad("fields after the flags are separated by '-'");
    }
    if trace_id.bytes().all(|b| b == b'0') || parent_id.bytes().all(|b| b == b'0') {
        return bad("the trace id and the parent id are not all zeros");
    }
    Ok(())
}

/// `key=value` list members separated by commas (with optional spaces or tabs), at most 32;
/// keys lowercase (`a-z0-9_-*/`, optionally `tenant@system`), values printable ASCII without
/// `,` and `=` and not ending in a space, both at most 256 characters.
fn check_tracestate(v: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("tracestate {v:?} is not a W3C tracestate: {why}"));
    let mut count = 0;
    for member in v.split(',') {
        let member = member.trim_matches([' ', '\t']);
        if member.is_empty() {
            continue; // empty list members are allowed and ignored
        }
        count += 1;
        let Some((key, value)) = member.split_once('=') else {
            return bad("each member is key=value");
        };
        let key_char = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-*/".contains(&b);
        let key_ok = |k: &str, first_digit: bool| {
            !k.is_empty()
                && k.len() <= 256
                && k.bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_lowercase() || (first_digit && b.is_ascii_digit()))
                && k.bytes().all(key_char)
        };
        let key_valid = match key.split_once('@') {
            None => key_ok(key, false),
            Some((tenant, system)) => key_ok(tenant, true) && key_ok(system, false),
        };
        if !key_valid {
            return bad("keys are lowercase letters, digits and _-*/, starting with a letter");
        }
        let value_ok = !value.is_empty()
            && value.len() <= 256
            && value
                .bytes()
                .all(|b| (0x20..=0x7e).contains(&b) && b != b',' && b != b'=')
            && !value.ends_with(' ');
        if !value_ok {
            return bad("values are printable ASCII without ',' or '=', not ending in a space");
        }
    }
    if count > MAX_TRACESTATE_MEMBERS {
        return bad("at most 32 list members");
    }
    Ok(())
}

/// `key=value[;property]…` list members separated by commas, at most 180 and 8192 bytes; keys
/// are HTTP tokens, values baggage octets (percent-encode anything else).
fn check_baggage(v: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("baggage {v:?} is not W3C baggage: {why}"));
    if v.len() > MAX_BAGGAGE_BYTES {
        return bad("at most 8192 bytes");
    }
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    let octets = |s: &str| {
        s.bytes().all(|b| {
            b == 0x21
                || (0x23..=0x2b).contains(&b)
                || (0x2d..=0x3a).contains(&b)
                || (0x3c..=0x5b).contains(&b)
                || (0x5d..=0x7e).contains(&b)
        })
    };
    let ows = [' ', '\t'];
    let members: Vec<&str> = v.split(',').collect();
    if members.len() > MAX_BAGGAGE_MEMBERS {
        return bad("at most 180 list members");
    }
    for member in members {
        let mut parts = member.split(';');
        let pair = parts.next().unwrap_or_default();
        let Some((key, value)) = pair.split_once('=') else {
            return bad("each member is key=value");
        };
        if !token(key.trim_matches(ows)) || !octets(value.trim_matches(ows)) {
            return bad("keys are tokens and values percent-encoded octets");
        }
        for property in parts {
            let property = property.trim_matches(ows);
            let ok = match property.split_once('=') {
                None => token(property),
                Some((k, val)) => token(k.trim_matches(ows)) && octets(val.trim_matches(ows)),
            };
            if !ok {
                return bad("properties are key or key=value");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn valid_contexts_are_kept_and_written_in_order() {
        let ctx = TraceContext::new(
            Some(PARENT),
            Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"),
            Some("userId=alice,serverNode=DF%2028;p=1"),
        )
        .unwrap()
        .unwrap();
        let text = std::str::from_utf8(ctx.members_text()).unwrap();
        assert_eq!(
            text,
            format!("\"traceparent\":\"{PARENT}\",\"tracestate\":\"rojo=00f067aa0ba902b7,congo=t61rcWkgMzE\",\"baggage\":\"userId=alice,serverNode=DF%2028;p=1\"")
        );
        assert_eq!(TraceContext::new(None, None, None), Ok(None));
        assert_eq!(TraceContext::new(Some(""), None, Some("")), Ok(None));
        let only_baggage = TraceContext::new(None, None, Some("k=v")).unwrap().unwrap();
        assert_eq!(only_baggage.members_text(), b"\"baggage\":\"k=v\"");
        // A later version may carry more fields.
        assert!(TraceContext::new(Some(&format!("01{}-ab", &PARENT[2..])), None, None).is_ok());
        assert!(TraceContext::new(Some(PARENT), Some("t1@sys=x, a=b"), None).is_ok());
    }

    #[test]
    fn invalid_values_are_refused_with_the_rule() {
        let zero_trace = "00-00000000000000000000000000000000-00f067aa0ba902b7-01";
        let zero_parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01";
        for bad in [
            "garbage",
            zero_trace,
            zero_parent,
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0\u{e9}",
        ] {
            let e = TraceContext::new(Some(bad), None, None).unwrap_err();
            assert!(e.starts_with("traceparent"), "{e}");
        }
        assert!(TraceContext::new(None, Some("a=b"), None)
            .unwrap_err()
            .contains("without traceparent"));
        for bad in ["A=b", "a", "a=b=c", "a=\"x\u{1}\"", "a=", &vec!["a=b"; 33].join(",")] {
            let e = TraceContext::new(Some(PARENT), Some(bad), None).unwrap_err();
            assert!(e.starts_with("tracestate"), "{bad}: {e}");
        }
        for bad in ["k", "k=a b", "k=\"v\"", "k=v;=x", &"k=v,".repeat(181), "k\u{e9}=v"] {
            let e = TraceContext::new(None, None, Some(bad)).unwrap_err();
            assert!(e.starts_with("baggage"), "{bad}: {e}");
        }
        let mut meta = Map::new();
        meta.insert(TRACEPARENT.into(), Value::from(7));
        assert!(check_meta(&meta).unwrap_err().contains("must be a string"));
        meta.insert(TRACEPARENT.into(), Value::from("x"));
        assert!(check_meta(&meta).is_err());
        meta.insert(TRACEPARENT.into(), Value::from(PARENT));
        assert!(check_meta(&meta).is_ok());
        meta.insert("other".into(), Value::from(1));
        let taken = take_from(&mut meta).unwrap().unwrap();
        assert_eq!(taken.traceparent(), Some(PARENT));
        assert_eq!(meta.len(), 1, "the other entry stays");
        meta.insert(TRACESTATE.into(), Value::from("a=b"));
        assert!(take_from(&mut meta).unwrap_err().contains("without traceparent"));
    }
}
