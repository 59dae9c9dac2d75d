//! `WWW-Authenticate` parsing (RFC 9110 §11.6.1): the `Bearer` challenge's `resource_metadata`
//! (RFC 9728), `scope`, `error` and `error_description`. A header may carry several challenges
//! (`Bearer …, DPoP …`) and a response several headers; `Bearer` is read, else `DPoP` (RFC 9449
//! §7.1, the same parameters), and a `DPoP` challenge's `error` is kept apart (a nonce request).

/// What a `Bearer` challenge asked for. Empty when the answer had none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// A `Bearer` challenge was present.
    pub bearer: bool,
    /// Where the protected resource metadata is (RFC 9728 §5.1).
    pub resource_metadata: Option<String>,
    /// The scopes the resource wants, space-separated.
    pub scope: Option<String>,
    /// `invalid_token`, `insufficient_scope`, …
    pub error: Option<String>,
    /// The server's explanation of `error`.
    pub error_description: Option<String>,
    /// A `DPoP` challenge was present.
    pub dpop: bool,
    /// The `DPoP` challenge's `error` (`use_dpop_nonce`, `invalid_dpop_proof`, …).
    pub dpop_error: Option<String>,
}

impl Challenge {
    /// Reads every `WWW-Authenticate` value of one answer; the first `Bearer` challenge wins,
    /// else the first `DPoP` one.
    pub fn parse<'a>(values: impl IntoIterator<Item = &'a str>) -> Challenge {
        let mut bearer = None;
        let mut dpop = None;
        for value in values {
            for (scheme, params) in challenges(value) {
                if scheme.eq_ignore_ascii_case("bearer") && bearer.is_none() {
                    bearer = Some(params);
                } else if scheme.eq_ignore_ascii_case("dpop") && dpop.is_none() {
                    dpop = Some(params);
                }
            }
        }
        let get = |params: &[(String, String)], name: &str| {
            params
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        let Some(primary) = bearer.as_deref().or(dpop.as_deref()) else {
            return Challenge::default();
        };
        Challenge {
            bearer: bearer.is_some(),
            resource_metadata: get(primary, "resource_metadata").filter(|v| !v.is_empty()),
            scope: get(primary, "scope").filter(|v| !v.trim().is_empty()),
            error: get(primary, "error").filter(|v| !v.is_empty()),
            error_description: get(primary, "error_description"),
            dpop: dpop.is_some(),
            dpop_error: dpop.as_deref().and_then(|p| get(p, "error")).filter(|v| !v.is_empty()),
        }
    }

    /// The challenged scopes, split on spaces.
    pub fn scopes(&self) -> Vec<String> {
        split_scopes(self.scope.as_deref())
    }

    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

pub(crate) fn split_scopes(scope: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in scope.unwrap_or_default().split_ascii_whitespace() {
        if !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    }
    out
}

/// The challenges of one header value: `(scheme, [(param, value)])`. Token68 credentials are
/// skipped; malformed tails end the parse.
fn challenges(value: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut p = Parser {
        s: value.as_bytes(),
        i: 0,
    };
    let mut out: Vec<(String, Vec<(String, String)>)> = Vec::new();
    loop {
        p.skip(|c| c == b' ' || c == b'\t' || c == b',');
        let Some(scheme) = p.token() else {
            return out;
        };
        let mut params = Vec::new();
        loop {
            p.skip(|c| c == b' ' || c == b'\t');
            let save = p.i;
            let Some(name) = p.token() else {
                // token68 (`Basic dXNlcg==`) or the end of this challenge.
                p.skip(|c| c != b',');
                break;
            };
            p.skip(|c| c == b' ' || c == b'\t');
            if p.peek() != Some(b'=') {
                // A new challenge's scheme: rewind to it.
                p.i = save;
                break;
            }
            p.i += 1;
            // `name==` or `name=,` is a token68 ending in '=' padding.
            if matches!(p.peek(), Some(b'=') | Some(b',') | None) {
                p.skip(|c| c == b'=');
                p.skip(|c| c != b',');
                break;
            }
            p.skip(|c| c == b' ' || c == b'\t');
            let value = if p.peek() == Some(b'"') {
                p.quoted()
            } else {
                p.token().unwrap_or_default()
            };
            params.push((name.to_ascii_lowercase(), value));
            p.skip(|c| c == b' ' || c == b'\t');
            if p.peek() == Some(b',') {
                p.i += 1;
            } else if p.peek().is_none() {
                break;
            }
        }
        out.push((scheme, params));
        if p.peek().is_none() {
            return out;
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip(&mut self, f: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&f) {
            self.i += 1;
        }
    }

    /// An RFC 9110 token (tchar+).
    fn token(&mut self) -> Option<String> {
        let start = self.i;
        self.skip(|c| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~/:".contains(&c));
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    /// A quoted-string with backslash escapes; an unterminated one runs to the end.
    fn quoted(&mut self) -> String {
        self.i += 1;
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    if let Some(n) = self.peek() {
                        out.push(n);
                        self.i += 1;
                    }
                }
                _ => out.push(c),
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_bearer_parameters() {
        let c = Challenge::parse([
            r#"Bearer error="invalid_token", error_description="Missing Authorization header", resource_metadata="http://x/.well-known/oauth-protected-resource/mcp""#,
        ]);
        assert!(c.bearer);
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://x/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.scope, None);
    }

    #[test]
    fn scope_and_other_schemes() {
        let c = Challenge::parse([
            r#"Basic realm="x", DPoP algs="ES256""#,
            r#"Newauth realm="apps", type=1, Bearer scope="mcp:basic  mcp:write", error=insufficient_scope"#,
        ]);
        assert!(c.bearer);
        assert_eq!(c.scopes(), vec!["mcp:basic", "mcp:write"]);
        assert!(c.is_insufficient_scope());
    }

    #[test]
    fn dpop_challenges() {
        // DPoP alone (the MCP DPoP extension's servers): its parameters are read.
        let c = Challenge::parse(["DPoP resource_metadata=\"https://r.example/prm\", algs=\"ES256\""]);
        assert!(c.dpop && !c.bearer);
        assert_eq!(c.resource_metadata.as_deref(), Some("https://r.example/prm"));
        // Beside Bearer: Bearer's parameters win, the DPoP error is kept apart.
        let c = Challenge::parse([
            "Bearer scope=\"a\"",
            "DPoP error=\"use_dpop_nonce\", error_description=\"nonce\"",
        ]);
        assert!(c.bearer && c.dpop);
        assert_eq!((c.scope.as_deref(), c.error.as_deref()), (Some("a"), None));
        assert_eq!(c.dpop_error.as_deref(), Some("use_dpop_nonce"));
        assert!(!Challenge::parse(["Basic realm=\"x\""]).dpop);
    }

    #[test]
    fn token68_and_escapes() {
        let c = Challenge::parse([r#"Basic dXNlcjpwYXNz==, Bearer error_description="a \"quoted\" word""#]);
        assert!(c.bearer);
        assert_eq!(c.error_description.as_deref(), Some(r#"a "quoted" word"#));
        let none = Challenge::parse(["Basic realm=\"x\""]);
        assert!(!none.bearer);
        assert!(Challenge::parse(["Bearer"]).bearer);
    }
}
