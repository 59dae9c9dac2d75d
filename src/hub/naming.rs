//! The names a hub exports and the patterns of tool filters.
//!
//! A member's tool (or prompt) `t` is exported as `<member><separator>t` (or `t` unprefixed).
//! Model APIs accept at most `^[a-zA-Z0-9_-]{1,64}$`, so a name outside that rule is rewritten:
//! every other character becomes `_`, the result is cut to 55 characters and `_` plus the first
//! 8 hex digits of the SHA-256 of the whole unrewritten name is appended. The suffix makes two
//! names that rewrite alike (`a.b`, `a b`) differ, and depends on nothing but the name, so the
//! exported name is the same in every run and every process.

use super::spec::ToolFilter;

/// The longest exported name.
pub const MAX_NAME: usize = 64;
/// `_` and 8 hex digits.
const SUFFIX: usize = 9;

fn legal(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Whether `name` satisfies `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_legal(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_NAME && name.chars().all(legal)
}

/// The name a host shows a model for `full` (the prefixed name): `full` itself when legal, else
/// its rewrite (see the module's documentation).
pub fn exported(full: &str) -> String {
    if is_legal(full) {
        return full.to_string();
    }
    let clean: String = full.chars().map(|c| if legal(c) { c } else { '_' }).collect();
    let digest = ring::digest::digest(&ring::digest::SHA256, full.as_bytes());
    let hex: String = digest.as_ref()[..4].iter().map(|b| format!("{b:02x}")).collect();
    // `clean` is ASCII: any byte index is a character boundary.
    let head = &clean[..clean.len().min(MAX_NAME - SUFFIX)];
    format!("{head}_{hex}")
}

/// The unrewritten name of a member's item: prefixed with the member's name and the separator,
/// or the item's own name.
pub fn full_name(member: &str, separator: &str, prefix: bool, item: &str) -> String {
    if prefix {
        format!("{member}{separator}{item}")
    } else {
        item.to_string()
    }
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters (none
/// included) and every other character for itself.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni) = (0, 0);
    // Where the last `*` was, and the name position it currently stands up to.
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if pi < p.len() && p[pi] == n[ni] {
            pi += 1;
            ni += 1;
        } else if let Some((sp, sn)) = star {
            // Let the last `*` take one more character and try again after it.
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

impl ToolFilter {
    /// Whether the hub shows and routes to the member's tool `name` (its own name).
    pub fn allows(&self, name: &str) -> bool {
        let allowed = match &self.allow {
            None => true,
            Some(patterns) => patterns.iter().any(|p| glob_match(p, name)),
        };
        allowed && !self.deny.iter().any(|p| glob_match(p, name))
    }
}

/// Edit distance (insertions, deletions, substitutions) between `a` and `b`.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb)).min(row[j] + 1).min(above + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

/// Up to three of `known` that look like `wanted` (close in edit distance, or containing it or
/// contained in it), nearest first.
pub fn near_matches<'a>(wanted: &str, known: impl Iterator<Item = &'a str>) -> Vec<String> {
    let wanted_lower = wanted.to_ascii_lowercase();
    let limit = (wanted.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = known
        .filter_map(|k| {
            let lower = k.to_ascii_lowercase();
            let d = distance(&wanted_lower, &lower);
            let related = lower.contains(&wanted_lower) || wanted_lower.contains(&lower);
            (d <= limit || related).then_some((d, k))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, k)| k.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legal_names_pass_through_and_others_are_rewritten_stably() {
        assert_eq!(exported("files__read"), "files__read");
        let dotted = exported("files__read.file");
        assert!(dotted.starts_with("files__read_file_") && is_legal(&dotted), "{dotted}");
        assert_ne!(dotted, exported("files__read file"), "same rewrite, different names");
        assert_eq!(dotted, exported("files__read.file"), "deterministic");
        let long = "s__".to_string() + &"x".repeat(80);
        let short = exported(&long);
        assert_eq!(short.len(), MAX_NAME);
        assert!(is_legal(&short));
        assert_ne!(
            short,
            exported(&(long.clone() + "y")),
            "names sharing 55 characters differ"
        );
        assert!(is_legal(&exported("")), "an empty name gets a legal one");
        assert!(is_legal(&exported("ünïcode")));
    }

    #[test]
    fn globs_match_runs_of_any_characters() {
        for (p, n) in [
            ("*", ""),
            ("*", "abc"),
            ("read_*", "read_file"),
            ("*_file", "read_file"),
            ("a*b*c", "aXbYbZc"),
            ("exact", "exact"),
        ] {
            assert!(glob_match(p, n), "{p} {n}");
        }
        for (p, n) in [("read_*", "write_file"), ("a*b", "ac"), ("exact", "exactly"), ("", "x")] {
            assert!(!glob_match(p, n), "{p} {n}");
        }
    }

    #[test]
    fn filters_allow_then_deny() {
        let f = ToolFilter {
            allow: Some(vec!["read_*".into(), "echo".into()]),
            deny: vec!["read_secret*".into()],
        };
        assert!(f.allows("echo") && f.allows("read_file"));
        assert!(!f.allows("write_file") && !f.allows("read_secrets"));
        assert!(ToolFilter::default().allows("anything"));
    }

    #[test]
    fn near_matches_are_close_or_related() {
        let known = ["fix__echo", "fix__add", "web__fetch", "fix__elicit_once"];
        assert_eq!(near_matches("fix__ecko", known.into_iter()), ["fix__echo"]);
        assert_eq!(near_matches("fetch", known.into_iter()), ["web__fetch"]);
        assert!(near_matches("zzzzzzzz", known.into_iter()).is_empty());
    }
}
