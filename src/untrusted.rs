//! Text from a server (an MCP server, an authorization server it names) made safe to put into
//! a log line or an error message. Such text may carry CR/LF (a forged log line), terminal
//! escape sequences, or bidirectional and invisible controls (text that reads differently from
//! what it is), and may be arbitrarily long (CWE-117). Everything server-supplied that the
//! library logs or quotes goes through [`shown`].

/// How many characters of one server string are shown; the rest is cut off with `…`.
pub(crate) const SHOWN_MAX: usize = 200;

/// `text` as one printable line: backslashes doubled, control characters, bidirectional
/// overrides and invisible format characters written as escapes (`\n`, `\r`, `\t`,
/// `\u{1b}`), at most [`SHOWN_MAX`] characters of it kept.
pub(crate) fn shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(SHOWN_MAX + 8));
    for (i, c) in text.chars().enumerate() {
        if i == SHOWN_MAX {
            out.push('…');
            break;
        }
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || is_invisible(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Format characters that change how the surrounding text reads, or hide: bidirectional
/// embeddings, overrides and isolates, zero-width characters, line and paragraph separators,
/// the byte order mark.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}' | '\u{061c}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_printable_line() {
        assert_eq!(shown("plain text: ok"), "plain text: ok");
        assert_eq!(shown("a\r\nauth: forged\x1b[2J"), "a\\r\\nauth: forged\\u{1b}[2J");
        assert_eq!(shown("C:\\path"), "C:\\\\path");
        assert_eq!(shown("abc\u{202e}cba\u{200b}"), "abc\\u{202e}cba\\u{200b}");
        assert_eq!(shown("\u{85}x"), "\\u{85}x");
        let long = "é".repeat(SHOWN_MAX + 50);
        let cut = shown(&long);
        assert_eq!(cut.chars().count(), SHOWN_MAX + 1);
        assert!(cut.ends_with('…'));
    }
}
