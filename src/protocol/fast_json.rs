//! A quick check of JSON text, for the checks that large messages pay per byte: a C host's
//! `arguments_json` and the answer probe. serde_json's validating pass finds the end of a
//! string 8 bytes at a time (~2.4 instructions a byte, most of a 100 KB echo's cost); this one
//! looks at 16 or 32 bytes at a time.
//!
//! It is a filter in front of serde, not a second judge: it accepts only text serde_json
//! accepts too, and gives up (`None`) on anything it does not handle itself: `\u` escapes
//! (serde's reading of surrogates decides those), nesting past [`MAX_JSON_DEPTH`], and every
//! error. The caller then takes serde's path, so verdicts and messages stay serde's. Byte for
//! byte it checks the JSON grammar (strings without raw control characters and with valid
//! escapes, numbers, literals, whitespace) and, for bytes not already known to be UTF-8, that
//! they are.

use std::ops::Range;

use serde_json::value::RawValue;

use super::result_probe::{Members, ProbedResult, NUMBER_TOKEN};
use super::MAX_JSON_DEPTH;

struct Scan<'a> {
    b: &'a [u8],
    i: usize,
    /// The text is not known to be UTF-8: non-ASCII bytes in strings are checked.
    check_utf8: bool,
}

impl<'a> Scan<'a> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// At a string's opening quote: skips the string. Its content's range, and whether it
    /// holds an escape.
    fn string(&mut self) -> Option<(Range<usize>, bool)> {
        let start = self.i + 1;
        let (mut i, mut escaped) = (start, false);
        loop {
            i = plain_run(self.b, i);
            match *self.b.get(i)? {
                b'"' => {
                    self.i = i + 1;
                    return Some((start..i, escaped));
                }
                b'\\' => match self.b.get(i + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                        escaped = true;
                        i += 2;
                    }
                    _ => return None, // `\u` (serde reads surrogates) or no escape at all
                },
                c if c < 0x20 => return None,
                _ if !self.check_utf8 => i += 1,
                c => {
                    let width = match c {
                        0xC2..=0xDF => 2,
                        0xE0..=0xEF => 3,
                        0xF0..=0xF4 => 4,
                        _ => return None,
                    };
                    std::str::from_utf8(self.b.get(i..i + width)?).ok()?;
                    i += width;
                }
            }
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word).then(|| self.i = end)
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.b.get(self.i) {
            self.i += 1;
        }
        self.i - start
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, as serde_json reads numbers it skips.
    fn number(&mut self) -> Option<()> {
        let _ = self.eat(b'-');
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.eat(b'.').is_some() && self.digits() == 0 {
            return None;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        Some(())
    }

    /// A value inside a container at `depth`.
    fn value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.object(depth + 1, |s, _, _| s.value(depth + 1)),
            b'[' => self.array(depth + 1),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_JSON_DEPTH {
            return None;
        }
        self.i += 1;
        self.ws();
        if self.eat(b']').is_some() {
            return Some(());
        }
        loop {
            self.value(depth)?;
            self.ws();
            match self.peek()? {
                b',' => {
                    self.i += 1;
                    self.ws();
                }
                b']' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// At an object's `{` (the object at `depth`): each member's key (range, escaped) goes to
    /// `member`, which reads the value (whitespace around it is skipped here).
    fn object(
        &mut self,
        depth: usize,
        mut member: impl FnMut(&mut Self, Range<usize>, bool) -> Option<()>,
    ) -> Option<()> {
        if depth > MAX_JSON_DEPTH {
            return None;
        }
        self.i += 1;
        self.ws();
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            if self.peek()? != b'"' {
                return None;
            }
            let (key, escaped) = self.string()?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            member(self, key, escaped)?;
            self.ws();
            match self.peek()? {
                b',' => {
                    self.i += 1;
                    self.ws();
                }
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Whitespace only from here to the end.
    fn at_end(&mut self) -> bool {
        self.ws();
        self.i == self.b.len()
    }

    /// The text at `range`, which this scan read as JSON (so it is UTF-8).
    fn text(&self, range: Range<usize>) -> &'a str {
        let bytes = &self.b[range];
        debug_assert!(std::str::from_utf8(bytes).is_ok());
        // SAFETY: the range is a value or key the scan read: its strings' bytes were checked
        // as UTF-8 (or came from a `str`) and everything outside strings is ASCII.
        unsafe { std::str::from_utf8_unchecked(bytes) }
    }
}

/// Where the run of bytes that need no attention inside a string ends, from `i`: the first
/// quote, backslash, control character or non-ASCII byte (or the end).
fn plain_run(b: &[u8], i: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is there (checked just above).
            return unsafe { simd::plain_run_avx2(b, i) };
        }
        // SAFETY: SSE2 is part of x86_64.
        unsafe { simd::plain_run_sse2(b, i) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        plain_run_bytes(b, i)
    }
}

fn plain_run_bytes(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' || !(0x20..0x80).contains(&c) {
            break;
        }
        i += 1;
    }
    i
}

#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::*;

    /// A byte needs attention when it is `"`, `\`, below 0x20 or above 0x7F: as signed bytes,
    /// the plain ones are exactly those greater than 0x1F that are neither quote nor backslash.
    #[target_feature(enable = "avx2")]
    pub unsafe fn plain_run_avx2(b: &[u8], mut i: usize) -> usize {
        let (quote, backslash, low) = (
            _mm256_set1_epi8(b'"' as i8),
            _mm256_set1_epi8(b'\\' as i8),
            _mm256_set1_epi8(0x1F),
        );
        // The bytes of `x` that need attention, as set bytes.
        let stops = |x: __m256i| {
            let special = _mm256_or_si256(_mm256_cmpeq_epi8(x, quote), _mm256_cmpeq_epi8(x, backslash));
            _mm256_or_si256(
                special,
                _mm256_cmpeq_epi8(_mm256_cmpgt_epi8(x, low), _mm256_setzero_si256()),
            )
        };
        // 64 bytes a round (one test for both halves), then 32.
        while i + 64 <= b.len() {
            // SAFETY: 64 bytes from `i` are within `b` (the loop's condition).
            let (x, y) = unsafe {
                let p = b.as_ptr().add(i);
                (_mm256_loadu_si256(p.cast()), _mm256_loadu_si256(p.add(32).cast()))
            };
            let (sx, sy) = (stops(x), stops(y));
            if _mm256_testz_si256(_mm256_or_si256(sx, sy), _mm256_or_si256(sx, sy)) == 0 {
                let mask = (_mm256_movemask_epi8(sx) as u32 as u64) | ((_mm256_movemask_epi8(sy) as u32 as u64) << 32);
                return i + mask.trailing_zeros() as usize;
            }
            i += 64;
        }
        while i + 32 <= b.len() {
            // SAFETY: 32 bytes from `i` are within `b` (the loop's condition).
            let x = unsafe { _mm256_loadu_si256(b.as_ptr().add(i).cast()) };
            let mask = _mm256_movemask_epi8(stops(x)) as u32;
            if mask != 0 {
                return i + mask.trailing_zeros() as usize;
            }
            i += 32;
        }
        // SAFETY: the caller's guarantee (SSE2 is part of x86_64).
        unsafe { plain_run_sse2(b, i) }
    }

    /// As [`plain_run_avx2`], 16 bytes at a time.
    #[target_feature(enable = "sse2")]
    pub unsafe fn plain_run_sse2(b: &[u8], mut i: usize) -> usize {
        let (quote, backslash, low) = (
            _mm_set1_epi8(b'"' as i8),
            _mm_set1_epi8(b'\\' as i8),
            _mm_set1_epi8(0x1F),
        );
        while i + 16 <= b.len() {
            // SAFETY: 16 bytes from `i` are within `b` (the loop's condition).
            let x = unsafe { _mm_loadu_si128(b.as_ptr().add(i).cast()) };
            let plain = _mm_movemask_epi8(_mm_cmpgt_epi8(x, low)) as u32;
            let special =
                _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash))) as u32;
            let stop = (plain ^ 0xFFFF) | special;
            if stop != 0 {
                return i + stop.trailing_zeros() as usize;
            }
            i += 16;
        }
        super::plain_run_bytes(b, i)
    }
}

/// `text` as one JSON object within the nesting bound and without `\u` escapes: its place in
/// `text` (surrounding whitespace left out), as a raw value. `None`: not sure, ask serde.
pub fn plain_object(text: &str) -> Option<&RawValue> {
    object_in(text.as_bytes(), false)
}

/// As [`plain_object`], for bytes not known to be UTF-8 (a C host's string): what it accepts
/// is UTF-8 too (every string's bytes checked, everything else ASCII), so the caller needs no
/// separate UTF-8 check for it.
pub fn plain_object_bytes(bytes: &[u8]) -> Option<&RawValue> {
    object_in(bytes, true)
}

fn object_in(bytes: &[u8], check_utf8: bool) -> Option<&RawValue> {
    let mut s = Scan {
        b: bytes,
        i: 0,
        check_utf8,
    };
    s.ws();
    let start = s.i;
    if s.peek()? != b'{' {
        return None;
    }
    s.object(1, |s, _, _| s.value(1))?;
    let end = s.i;
    if !s.at_end() {
        return None;
    }
    let json = s.text(start..end);
    // SAFETY: `RawValue` is `#[repr(transparent)]` over `str` (serde_json makes its own
    // borrowed raw values this same way), and `json` is one JSON value, checked above: what
    // a `&RawValue` promises. `raw_values_made_here_are_serdes` checks the layout.
    Some(unsafe { std::mem::transmute::<&str, &RawValue>(json) })
}

/// What a quick reading of an answer line found: see [`answer`].
pub struct QuickAnswer<'a> {
    /// The `id` member's text.
    pub id: &'a str,
    /// The `result` member, read as the answer probe's visitor reads it.
    pub result: ProbedResult,
}

/// `line` as a plain answer: one JSON object whose keys are written without escapes, with one
/// `id`, one `result`, no `error` and no `method` (what `framing::probe_answer` hands to
/// callers, read as its serde pass reads it). `None`: anything else, or not sure.
pub fn answer(line: &[u8]) -> Option<QuickAnswer<'_>> {
    let mut s = Scan {
        b: line,
        i: 0,
        check_utf8: true,
    };
    s.ws();
    if s.peek()? != b'{' {
        return None;
    }
    let (mut id, mut result) = (None, None);
    s.object(1, |s, key, escaped| {
        if escaped {
            return None; // it may spell one of the members read below
        }
        let start = s.i;
        match &s.b[key] {
            b"id" if id.is_none() => {
                s.value(1)?;
                id = Some(start..s.i);
            }
            b"result" if result.is_none() => result = Some(result_value(s)?),
            b"id" | b"result" | b"error" | b"method" => return None,
            _ => s.value(1)?,
        }
        Some(())
    })?;
    if !s.at_end() {
        return None;
    }
    Some(QuickAnswer {
        id: s.text(id?),
        result: result?,
    })
}

/// The `result` member's value, read as `result_probe`'s visitor reads it: an object's members
/// one by one; anything else is left unplaced.
fn result_value(s: &mut Scan<'_>) -> Option<ProbedResult> {
    if s.peek()? != b'{' {
        s.value(1)?;
        return Some(ProbedResult::UNPLACED);
    }
    let mut members = Members::default();
    let mut number = false;
    s.object(2, |s, key, escaped| {
        let key = (!escaped).then(|| s.text(key));
        if members.is_empty() && key == Some(NUMBER_TOKEN) {
            number = true; // serde's form of a number: the visitor leaves it unplaced
        }
        let start = s.i;
        s.value(2)?;
        members.add(key, s.text(start..s.i));
        Some(())
    })?;
    Some(if number {
        ProbedResult::UNPLACED
    } else {
        members.finish()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_values_made_here_are_serdes() {
        let text = " {\"a\": [1, \"b\\n\", {\"c\": null}]} ";
        let raw = plain_object(text).unwrap();
        assert_eq!(raw.get(), text.trim());
        let parsed: &RawValue = serde_json::from_str(text).unwrap();
        assert_eq!(std::mem::size_of_val(raw), std::mem::size_of_val(parsed));
        assert_eq!(raw.get(), parsed.get());
    }

    /// Everything the quick check accepts, serde accepts; what it gives up on includes every
    /// text serde refuses.
    #[test]
    fn accepts_only_what_serde_accepts() {
        let nest = |n: usize| format!("{}{}", "{\"a\":".repeat(n), "1".to_string() + &"}".repeat(n));
        let cases = [
            r#"{}"#,
            r#" { "a" : 1 } "#,
            r#"{"a":[1,2.5,-0,1e5,1E+5,-1.5e-7,true,false,null,"x"]}"#,
            r#"{"a":"\"\\\/\b\f\n\r\t"}"#,
            r#"{"a":"é ✓ 😀"}"#,
            r#"{"a":"\u00e9"}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":.5}"#,
            r#"{"a":-}"#,
            r#"{"a":1e}"#,
            r#"{"a":tru}"#,
            r#"{"a":nul}"#,
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"{a:1}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":"\x"}"#,
            "{\"a\":\"\u{1}\"}",
            "{\"a\":\"\u{7f}\"}",
            r#"{"a":1} x"#,
            r#"{"a":1}}"#,
            r#"{"a":"unterminated}"#,
            r#"[1]"#,
            r#""s""#,
            "",
            " ",
            "{\"a\":1}\u{a0}",
        ];
        for text in cases
            .iter()
            .map(|s| s.to_string())
            .chain([nest(MAX_JSON_DEPTH), nest(MAX_JSON_DEPTH + 1)])
        {
            let quick = plain_object(&text);
            let serde = serde_json::from_str::<serde_json::Value>(&text);
            if let Some(raw) = quick {
                assert!(serde.as_ref().is_ok_and(|v| v.is_object()), "{text:.60}");
                assert_eq!(raw.get(), text.trim_matches([' ', '\t', '\n', '\r']), "{text:.60}");
            }
        }
        assert!(plain_object(&nest(MAX_JSON_DEPTH)).is_some());
        assert!(plain_object(&nest(MAX_JSON_DEPTH + 1)).is_none());
        assert!(plain_object(r#"{"a":"\u00e9"}"#).is_none(), "\\u is serde's");
        assert!(plain_object(r#"{"a":"é","b":[1,{"c":-2.5e3}]}"#).is_some());
        // Bytes from a C host: UTF-8 checked in strings.
        assert!(plain_object_bytes("{\"a\":\"é ✓ 😀\"}".as_bytes()).is_some());
        for bad in [
            &b"{\"a\":\"\xff\"}"[..],
            b"{\"a\":\"\xc3\"}",
            b"{\"a\":\"\xed\xa0\x80\"}",
            b"{\"a\":\"\xc0\x80\"}",
        ] {
            assert!(plain_object_bytes(bad).is_none(), "{bad:?}");
            assert!(std::str::from_utf8(bad).is_err());
        }
    }

    #[test]
    fn plain_runs_stop_where_a_string_needs_attention() {
        let mut text = vec![b'a'; 100];
        for (at, byte) in [
            (0, b'"'),
            (5, b'\\'),
            (16, 0x1F),
            (31, 0x80),
            (32, 0xFF),
            (47, b'"'),
            (99, 0),
        ] {
            let mut t = text.clone();
            t[at] = byte;
            assert_eq!(plain_run(&t, 0), at, "byte {byte:#x} at {at}");
            assert_eq!(plain_run_bytes(&t, 0), at);
        }
        text[50] = 0x7F; // DEL is plain in JSON strings
        assert_eq!(plain_run(&text, 0), 100);
        assert_eq!(plain_run(&text, 100), 100);
    }
}
