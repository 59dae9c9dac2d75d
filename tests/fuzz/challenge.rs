//! The `WWW-Authenticate` parser.

use mcp_client::fuzzing::Challenge;
use proptest::prelude::*;

/// Header-shaped text: schemes, parameters, quotes, escapes, commas, token68 padding.
fn header() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("Bearer ".to_string()),
        Just("Basic ".to_string()),
        Just("DPoP ".to_string()),
        Just("scope=".to_string()),
        Just("error=".to_string()),
        Just("resource_metadata=".to_string()),
        Just("error_description=".to_string()),
        Just("\"".to_string()),
        Just("\\".to_string()),
        Just(",".to_string()),
        Just("=".to_string()),
        Just("==".to_string()),
        Just(" ".to_string()),
        Just("\t".to_string()),
        "[a-zA-Z0-9:/._~-]{1,8}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

/// A quoted-string holding `s` exactly.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

proptest! {
    #[test]
    fn any_header_parses_without_panic_into_bounded_fields(values in prop::collection::vec(header(), 0..3)) {
        let c = Challenge::parse(values.iter().map(String::as_str));
        let total: usize = values.iter().map(String::len).sum();
        for field in [&c.resource_metadata, &c.scope, &c.error, &c.error_description, &c.dpop_error].into_iter().flatten() {
            prop_assert!(field.len() <= total * 3);
        }
        prop_assert!(c.scopes().len() <= total);
        // Without a Bearer or DPoP challenge (a DPoP-only one is read like Bearer) nothing is set.
        if !c.bearer && !c.dpop {
            prop_assert_eq!(c, Challenge::default());
        }
    }

    /// A `Bearer` challenge written with quoted parameters (after other schemes, in any case)
    /// reads back exactly.
    #[test]
    fn a_written_bearer_challenge_reads_back(
        resource_metadata in any::<String>(),
        scope in any::<String>(),
        error in any::<String>(),
        description in any::<String>(),
        before in prop::sample::select(vec!["", "Basic realm=\"x\", ", "Basic dXNlcjpwYXNz==, ", "DPoP algs=\"ES256\", "]),
        scheme in prop::sample::select(vec!["Bearer", "bearer", "BEARER"]),
    ) {
        let header = format!(
            "{before}{scheme} resource_metadata={}, scope={}, error={}, error_description={}",
            quote(&resource_metadata), quote(&scope), quote(&error), quote(&description)
        );
        let c = Challenge::parse([header.as_str()]);
        prop_assert!(c.bearer);
        prop_assert_eq!(c.resource_metadata, Some(resource_metadata).filter(|v| !v.is_empty()));
        prop_assert_eq!(c.scope, Some(scope).filter(|v| !v.trim().is_empty()));
        prop_assert_eq!(c.error, Some(error).filter(|v| !v.is_empty()));
        prop_assert_eq!(c.error_description, Some(description));
    }
}
