//! Tool names to each API's rule, with a deterministic shortening kept in the export's routes.
//!
//! Every API takes `^[a-zA-Z0-9_-]{1,64}$` (the strictest of their rules); Gemini also wants the
//! first character to be a letter or an underscore. A name that breaks the rule has its other
//! characters replaced by `_`, is cut to leave room, and gets `_` plus the first 8 hex digits of
//! the SHA-256 of the original name: the same name exports the same way in every run, and two
//! names that clean up alike (`a.b`, `a b`) still differ.

use super::Format;

/// The longest name every API accepts.
pub(crate) const MAX_NAME: usize = 64;
/// `_` and 8 hex digits.
const SUFFIX: usize = 9;

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn good_start(name: &str, format: Format) -> bool {
    format != Format::Gemini || name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
}

/// Whether `name` is exported as it is.
pub(crate) fn valid(name: &str, format: Format) -> bool {
    !name.is_empty() && name.len() <= MAX_NAME && name.chars().all(allowed) && good_start(name, format)
}

/// `_` and the first 8 hex digits of the SHA-256 of `text`.
pub(crate) fn hash_suffix(text: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    let hex: String = digest.as_ref()[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("_{hex}")
}

/// The name `name` is exported under: itself when valid, else cleaned, cut and suffixed.
pub(crate) fn exported(name: &str, format: Format) -> String {
    if valid(name, format) {
        return name.to_string();
    }
    let mut clean: String = name.chars().map(|c| if allowed(c) { c } else { '_' }).collect();
    if !good_start(&clean, format) {
        clean.insert(0, '_');
    }
    clean.truncate(MAX_NAME - SUFFIX); // ASCII only by now: any byte is a boundary
    clean.push_str(&hash_suffix(name));
    clean
}

/// A name for `name` that differs from every name in `taken` (a valid name that collides with
/// another tool's cleaned name gets the suffix too).
pub(crate) fn unique(name: &str, format: Format, taken: &dyn Fn(&str) -> bool) -> Option<String> {
    let first = exported(name, format);
    if !taken(&first) {
        return Some(first);
    }
    // The suffix of the name together with a counter: still deterministic for a given list.
    (1..100u32).find_map(|n| {
        let mut base: String = exported(name, format);
        base.truncate(MAX_NAME - SUFFIX);
        base.push_str(&hash_suffix(&format!("{name}\u{0}{n}")));
        (!taken(&base)).then_some(base)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_names_are_kept_and_others_shortened_stably() {
        assert_eq!(exported("get_weather", Format::Anthropic), "get_weather");
        assert_eq!(exported("a-b_C9", Format::Gemini), "a-b_C9");
        let dotted = exported("files.read", Format::ChatCompletions);
        assert!(
            dotted.starts_with("files_read_") && dotted.len() == "files_read_".len() + 8,
            "{dotted}"
        );
        assert_eq!(dotted, exported("files.read", Format::ChatCompletions), "stable");
        assert_ne!(dotted, exported("files read", Format::ChatCompletions), "distinct");
        let long = "x".repeat(200);
        let short = exported(&long, Format::Responses);
        assert_eq!(short.len(), MAX_NAME);
        assert!(valid(&short, Format::Gemini));
        // Gemini: first character a letter or an underscore.
        assert!(valid("9lives", Format::ChatCompletions));
        let g = exported("9lives", Format::Gemini);
        assert!(g.starts_with("_9lives_") && valid(&g, Format::Gemini), "{g}");
        assert!(valid(&exported("", Format::Anthropic), Format::Anthropic));
        assert!(valid(&exported("日本語", Format::Anthropic), Format::Anthropic));
    }

    #[test]
    fn a_collision_gets_another_suffix() {
        let taken = |n: &str| n == "echo";
        let other = unique("echo", Format::Anthropic, &taken).unwrap();
        assert!(
            other.starts_with("echo_") && valid(&other, Format::Anthropic),
            "{other}"
        );
    }
}
