//! "did you mean" for a mistyped configuration key: the known key nearest to it.
//!
//! The known keys come from serde's own "unknown field" error, which lists the struct's
//! fields, so the shipped library needs no second list of them (the schema's lives behind the
//! `schema` feature).

/// The field names serde lists in "unknown field `x`, expected one of `a`, `b`" (or "expected
/// `a` or `b`", "expected `a`"): every other backtick-quoted word after the unknown one.
pub(super) fn expected_fields(serde_message: &str) -> Vec<&str> {
    serde_message.split('`').skip(3).step_by(2).collect()
}

/// The key of `known` nearest to `typed`, when near enough to be a likely slip: up to a third of
/// its characters apart (one at least), comparing without case, `_` or `-`, so `requestTimeoutMs`
/// and `request-timeout` find `request_timeout_ms`.
pub(super) fn nearest<'k>(typed: &str, known: &[&'k str]) -> Option<&'k str> {
    let plain = |s: &str| -> Vec<char> {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let typed = plain(typed);
    let limit = (typed.len() / 3).max(1);
    known
        .iter()
        .map(|k| (distance(&typed, &plain(k)), *k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance: the fewest single-character insertions, deletions and substitutions
/// turning `a` into `b` (one row of the table at a time).
fn distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb)).min(above + 1).min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_lists_the_expected_fields() {
        let many = "unknown field `tries`, expected one of `max_attempts`, `initial_backoff_ms`, `max_backoff_ms`";
        assert_eq!(
            expected_fields(many),
            ["max_attempts", "initial_backoff_ms", "max_backoff_ms"]
        );
        assert_eq!(expected_fields("unknown field `x`, expected `a` or `b`"), ["a", "b"]);
        assert_eq!(expected_fields("unknown field `x`, expected `a`"), ["a"]);
        assert!(expected_fields("unknown field `x`, there are no fields").is_empty());
    }

    #[test]
    fn the_nearest_key_within_a_third() {
        let keys = [
            "command",
            "url",
            "request_timeout_ms",
            "probe_timeout_ms",
            "max_attempts",
        ];
        assert_eq!(nearest("request_timeout", &keys), Some("request_timeout_ms"));
        assert_eq!(nearest("requestTimeoutMs", &keys), Some("request_timeout_ms"));
        assert_eq!(nearest("comand", &keys), Some("command"));
        assert_eq!(nearest("uri", &keys), Some("url"));
        assert_eq!(nearest("tries", &keys), None);
        assert_eq!(nearest("timeout", &keys), None);
        assert_eq!(distance(&['a', 'b'], &[]), 2);
        assert_eq!(distance(&['k', 'i', 't'], &['s', 'i', 't', 't']), 2);
    }
}
