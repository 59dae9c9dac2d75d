//! MRTR `requestState` strings.
//!
//! The strings are deliberately awkward (non-ASCII, quotes, a backslash,
//! spaces, `+/=` and an astral-plane character) so that a client which does
//! not echo them byte for byte is caught. They carry the flow id, the round
//! and any values gathered so far, and end with a keyed FNV-1a checksum:
//!
//! `sté:<round> {"flow":"<id>","round":<round>,"values":[...]} +/=\n 🔑#<16 hex>`
//!
//! (`\n` above is a literal backslash followed by `n`, not a newline.)
//! Decoding re-encodes the parsed content and demands byte equality.

use serde_json::{json, Value};

const PREFIX: &str = "st\u{e9}:";
const SUFFIX: &str = " +/=\\n \u{1F511}#";
const KEY: &[u8] = b"mcp-fixture-server/requestState/v1";

fn checksum(payload: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in KEY.iter().chain(payload.as_bytes()) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// Encodes the state issued after asking round `round` of flow `flow`.
pub fn encode(flow: &str, round: u32, values: &[String]) -> String {
    let payload = json!({"flow": flow, "round": round, "values": values}).to_string();
    let sum = checksum(&payload);
    format!("{PREFIX}{round} {payload}{SUFFIX}{sum:016x}")
}

/// Decodes a state issued by [`encode`] for `flow`; None unless byte-exact.
pub fn decode(flow: &str, state: &str) -> Option<(u32, Vec<String>)> {
    let rest = state.strip_prefix(PREFIX)?;
    let (_, rest) = rest.split_once(' ')?;
    let end = rest.rfind(SUFFIX)?;
    let payload: Value = serde_json::from_str(&rest[..end]).ok()?;
    if payload.get("flow")?.as_str()? != flow {
        return None;
    }
    let round = u32::try_from(payload.get("round")?.as_u64()?).ok()?;
    let values = payload
        .get("values")?
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect::<Option<Vec<String>>>()?;
    (encode(flow, round, &values) == state).then_some((round, values))
}

/// The state of `always_input` leg `n`: exactly `loop-<n>`.
pub fn loop_state(n: u32) -> String {
    format!("loop-{n}")
}

/// Parses `loop-<n>` (canonical decimal, n >= 1).
pub fn parse_loop(state: &str) -> Option<u32> {
    let n: u32 = state.strip_prefix("loop-")?.parse().ok()?;
    (n >= 1 && loop_state(n) == state).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let values = vec!["a \"quoted\" vålue\\".to_string(), String::new()];
        let s = encode("three_rounds", 3, &values);
        assert!(s.starts_with("sté:3 {\"flow\":\"three_rounds\",\"round\":3,"));
        assert!(s.contains(" +/=\\n 🔑#"));
        assert_eq!(decode("three_rounds", &s), Some((3, values)));
    }

    #[test]
    fn exact_string_for_first_round() {
        let s = encode("elicit_once", 1, &[]);
        let expected_prefix = "st\u{e9}:1 {\"flow\":\"elicit_once\",\"round\":1,\"values\":[]} +/=\\n \u{1F511}#";
        assert!(s.starts_with(expected_prefix), "{s}");
        assert_eq!(s.len(), expected_prefix.len() + 16);
    }

    #[test]
    fn exact_strings_issued_by_the_flows() {
        // Pinned: README.md lists these and client tests may hard-code them.
        let tail = " +/=\\n \u{1F511}#";
        for (flow, round, sum) in [
            ("elicit_once", 1, "4bf93ac3968345b1"),
            ("three_rounds", 1, "3ca41149c919ad5b"),
            ("elicit_and_sample", 1, "5aba1d9d4fd39a2c"),
            ("roots", 1, "834eeac450e06050"),
            ("state_only", 1, "c6b94583174a10c3"),
            ("state_only", 2, "302f6f6621b7e02c"),
            ("sample_only", 1, "9fbc21247441f708"),
            ("prompt:needs_input", 1, "6f3148e0fcc9ec09"),
            ("resource:needs-input", 1, "6e57aa8f7932cf65"),
        ] {
            let expected =
                format!("st\u{e9}:{round} {{\"flow\":\"{flow}\",\"round\":{round},\"values\":[]}}{tail}{sum}");
            assert_eq!(encode(flow, round, &[]), expected);
        }
        assert_eq!(
            encode("three_rounds", 2, &["a".to_string()]),
            "st\u{e9}:2 {\"flow\":\"three_rounds\",\"round\":2,\"values\":[\"a\"]} +/=\\n \u{1F511}#786de8b116c83101"
        );
    }

    #[test]
    fn rejects_any_change() {
        let s = encode("elicit_once", 1, &[]);
        assert_eq!(decode("elicit_once", &s), Some((1, vec![])));
        // wrong flow
        assert_eq!(decode("roots", &s), None);
        // trailing / leading whitespace, case change, escaped newline turned real
        assert_eq!(decode("elicit_once", &format!("{s} ")), None);
        assert_eq!(decode("elicit_once", &format!(" {s}")), None);
        assert_eq!(decode("elicit_once", &s.replace("sté", "STÉ")), None);
        assert_eq!(decode("elicit_once", &s.replace("\\n", "\n")), None);
        // NFD form of é (e + combining acute) is not byte-equal
        assert_eq!(decode("elicit_once", &s.replace('\u{e9}', "e\u{301}")), None);
        // forged round without a valid checksum
        assert_eq!(decode("elicit_once", &s.replacen("round\":1", "round\":2", 1)), None);
        // changed checksum
        let mut forged = s.clone();
        let last = forged.pop().unwrap();
        forged.push(if last == '0' { '1' } else { '0' });
        assert_eq!(decode("elicit_once", &forged), None);
        assert_eq!(decode("elicit_once", ""), None);
    }

    #[test]
    fn loop_states() {
        assert_eq!(loop_state(1), "loop-1");
        assert_eq!(parse_loop("loop-7"), Some(7));
        assert_eq!(parse_loop("loop-0"), None);
        assert_eq!(parse_loop("loop-07"), None);
        assert_eq!(parse_loop("loop-+7"), None);
        assert_eq!(parse_loop("loop-7 "), None);
        assert_eq!(parse_loop("Loop-7"), None);
    }
}
