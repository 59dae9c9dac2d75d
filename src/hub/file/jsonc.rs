//! JSON with comments (JSONC, as VS Code reads its settings files) to plain JSON: `//` and
//! `/* */` comments and trailing commas before `]` or `}` become spaces, outside strings only.
//! Every other byte stays where it was, so serde_json's line and column in an error still
//! point into the file as written.

/// The JSON text of `text`, comments and trailing commas blanked.
pub(super) fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    // Blanks `out[from..to]`, keeping line breaks (for error positions).
    let mut blank = |from: usize, to: usize| {
        for byte in &mut out[from..to] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
    };
    let mut last_comma: Option<usize> = None;
    let mut i = 0;
    while i < b.len() {
        match (b[i], b.get(i + 1)) {
            (b'"', _) => {
                i += 1;
                while i < b.len() {
                    match b[i] {
                        b'\\' => i += 2,
                        b'"' => break,
                        _ => i += 1,
                    }
                }
                last_comma = None;
            }
            (b'/', Some(b'/')) => {
                let end = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |n| i + n);
                blank(i, end);
                i = end;
                continue;
            }
            (b'/', Some(b'*')) => {
                let end = b[i + 2..]
                    .windows(2)
                    .position(|w| w == b"*/")
                    .map_or(b.len(), |n| i + 2 + n + 2);
                blank(i, end);
                i = end;
                continue;
            }
            (b',', _) => last_comma = Some(i),
            (b']' | b'}', _) => {
                if let Some(comma) = last_comma.take() {
                    blank(comma, comma + 1);
                }
            }
            (c, _) if c.is_ascii_whitespace() => {}
            _ => last_comma = None,
        }
        i += 1;
    }
    // Only whole ASCII-delimited ranges were blanked (every byte of a multi-byte character in a
    // comment became a space), so the text is still UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::strip;
    use serde_json::{json, Value};

    fn read(text: &str) -> Value {
        serde_json::from_str(&strip(text)).unwrap()
    }

    #[test]
    fn comments_and_trailing_commas_go_strings_stay() {
        let text = r#"{
            // a line comment, with "quotes" and a trailing comma,
            "a": "http://x/*not a comment*/", /* block
            comment */ "b": [1, 2, /* c */ ], "c": "\"// still a string\\",
            "é": { "d": "ü", }, // é
        }"#;
        assert_eq!(
            read(text),
            json!({"a": "http://x/*not a comment*/", "b": [1, 2], "c": "\"// still a string\\", "é": {"d": "ü"}})
        );
    }

    #[test]
    fn positions_are_kept_and_bad_text_stays_bad() {
        let text = "{\n// x\n\"a\": 1,\n\"b\": }";
        let e = serde_json::from_str::<Value>(&strip(text)).unwrap_err();
        assert_eq!(e.line(), 4);
        for bad in ["{\"a\": 1,,}", "[1 /* unterminated", "\"open", "{,}x"] {
            assert!(serde_json::from_str::<Value>(&strip(bad)).is_err(), "{bad}");
        }
    }
}
