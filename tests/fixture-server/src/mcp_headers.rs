//! Modern Streamable HTTP header rules (spec §6.2, §6.3): `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` and `Mcp-Param-{Name}` must agree with the
//! body, values may use the `=?base64?…?=` sentinel, and tools declare
//! mirrored arguments with `x-mcp-header`.

use crate::http_parse::Headers;
use crate::server::META_PROTOCOL_VERSION;
use crate::tools;
use serde_json::{Map, Value};

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (tests build header values with it).
#[cfg(test)]
pub fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= group.len() {
                out.push(B64[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Standard base64; padding is optional, anything else is an error.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let trimmed = text
        .strip_suffix("==")
        .or_else(|| text.strip_suffix('='))
        .unwrap_or(text);
    if !text.len().is_multiple_of(4) && trimmed.len() != text.len() {
        return None; // padded, but not to a multiple of 4
    }
    if trimmed.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(trimmed.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in trimmed.bytes() {
        let v = B64.iter().position(|b| *b == c)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // Leftover bits must be zero (canonical encoding).
    (acc == 0).then_some(out)
}

fn sentinel_body(value: &str) -> Option<&str> {
    value.strip_prefix("=?base64?")?.strip_suffix("?=")
}

/// Whether a value must travel as `=?base64?…?=`: non-ASCII, a control
/// character, leading or trailing whitespace, or itself sentinel-shaped.
pub fn needs_sentinel(value: &str) -> bool {
    value.chars().any(|c| !c.is_ascii() || c.is_ascii_control())
        || value.starts_with([' ', '\t'])
        || value.ends_with([' ', '\t'])
        || sentinel_body(value).is_some()
}

/// The header form of a value (what a client sends).
#[cfg(test)]
pub fn encode_header_value(value: &str) -> String {
    if needs_sentinel(value) {
        format!("=?base64?{}?=", base64_encode(value.as_bytes()))
    } else {
        value.to_string()
    }
}

/// A received header value, decoded. Plain values must be printable ASCII.
pub fn decode_header_value(raw: &str) -> Result<String, String> {
    if let Some(body) = sentinel_body(raw) {
        let bytes = base64_decode(body).ok_or_else(|| format!("invalid base64 in '{raw}'"))?;
        return String::from_utf8(bytes).map_err(|_| format!("base64 in '{raw}' is not UTF-8"));
    }
    if raw.chars().any(|c| !c.is_ascii() || c.is_ascii_control()) {
        return Err(format!("'{raw}' has non-ASCII or control characters; use =?base64?…?="));
    }
    Ok(raw.to_string())
}

/// The header value an argument is mirrored as: strings as-is, numbers in
/// decimal, booleans as true/false; null, absent, arrays and objects give
/// no header.
pub fn argument_header_value(arg: Option<&Value>) -> Option<String> {
    match arg? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The `x-mcp-header` annotations of a tool schema: (header name, property).
pub fn annotations(input_schema: &Value) -> Vec<(String, String)> {
    let Some(props) = input_schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .filter_map(|(prop, schema)| {
            let name = schema.get("x-mcp-header")?.as_str()?;
            Some((name.to_string(), prop.clone()))
        })
        .collect()
}

fn mismatch(header: &str, raw: Option<&str>, expected: Option<&str>, what: &str) -> String {
    match (raw, expected) {
        (Some(h), Some(b)) => {
            format!("Header mismatch: {header} header value '{h}' does not match {what} value '{b}'")
        }
        (None, Some(b)) => format!("Header mismatch: {header} header is missing ({what} value '{b}')"),
        (Some(h), None) => format!("Header mismatch: {header} header value '{h}' but the {what} has no value"),
        (None, None) => format!("Header mismatch: {header}"),
    }
}

/// Compares one header with the value the body implies (None: no header
/// expected).
fn compare(headers: &Headers, header: &str, expected: Option<&str>, what: &str) -> Result<(), String> {
    let raw = headers.get(header);
    match (raw.as_deref(), expected) {
        (None, None) => Ok(()),
        (Some(raw), Some(want)) => {
            let got = decode_header_value(raw).map_err(|e| format!("Header mismatch: {header}: {e}"))?;
            if got != want {
                return Err(mismatch(header, Some(raw), Some(want), what));
            }
            if needs_sentinel(want) && sentinel_body(raw).is_none() {
                return Err(format!(
                    "Header mismatch: {header} value '{raw}' must be sent as =?base64?…?="
                ));
            }
            Ok(())
        }
        (raw, want) => Err(mismatch(header, raw, want, what)),
    }
}

/// Checks a modern request's headers against its body. Err is the
/// message of the -32020 error.
pub fn check_modern(headers: &Headers, method: &str, params: Option<&Map<String, Value>>) -> Result<(), String> {
    let meta_version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    // Without a _meta version the handler answers -32602 (also a 400).
    if let Some(version) = meta_version {
        compare(
            headers,
            "MCP-Protocol-Version",
            Some(version),
            "body _meta protocolVersion",
        )?;
    }
    compare(headers, "Mcp-Method", Some(method), "body method")?;
    let name_field = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(field) = name_field {
        let body_name = params.and_then(|p| p.get(field)).and_then(Value::as_str);
        compare(headers, "Mcp-Name", body_name, &format!("body params.{field}"))?;
    }
    if method == "tools/call" {
        check_params(headers, params)?;
    }
    Ok(())
}

/// tools/call of a known tool: every `x-mcp-header` argument has its
/// `Mcp-Param-{Name}` header, and there are no other `Mcp-Param-*` headers.
fn check_params(headers: &Headers, params: Option<&Map<String, Value>>) -> Result<(), String> {
    let Some(params) = params else { return Ok(()) };
    let name = params.get("name").and_then(Value::as_str).unwrap_or_default();
    let Some(tool) = tools::definitions_cached().iter().find(|t| t["name"] == name) else {
        return Ok(()); // the handler answers "Unknown tool"
    };
    let declared = annotations(&tool["inputSchema"]);
    let args = params.get("arguments").and_then(Value::as_object);
    for (header_name, prop) in &declared {
        let expected = argument_header_value(args.and_then(|a| a.get(prop)));
        let header = format!("Mcp-Param-{header_name}");
        compare(headers, &header, expected.as_deref(), &format!("argument '{prop}'"))?;
    }
    for sent in headers.with_prefix("mcp-param-").keys() {
        let suffix = &sent["mcp-param-".len()..];
        if !declared.iter().any(|(h, _)| h.eq_ignore_ascii_case(suffix)) {
            return Err(format!(
                "Header mismatch: unexpected header {sent} (tool '{name}' has no x-mcp-header '{suffix}')"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn headers(list: &[(&str, &str)]) -> Headers {
        Headers(
            list.iter()
                .map(|(n, v)| (n.to_ascii_lowercase(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn base64_round_trips() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            (" leading", "IGxlYWRpbmc="),
            ("Région", "UsOpZ2lvbg=="),
        ] {
            assert_eq!(base64_encode(plain.as_bytes()), encoded);
            assert_eq!(base64_decode(encoded).unwrap(), plain.as_bytes());
        }
        assert_eq!(base64_decode("Zg").unwrap(), b"f");
        for bad in ["Z", "Zg=", "Z===", "Zh==", "ab$d", "Zm9v="] {
            assert_eq!(base64_decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn sentinel_rules() {
        assert_eq!(encode_header_value(" leading"), "=?base64?IGxlYWRpbmc=?=");
        assert_eq!(encode_header_value("Région"), "=?base64?UsOpZ2lvbg==?=");
        assert_eq!(encode_header_value("us west 1"), "us west 1");
        assert_eq!(encode_header_value("a\tb"), "=?base64?YQli?=");
        assert_eq!(encode_header_value("=?base64?x?="), "=?base64?PT9iYXNlNjQ/eD89?=");
        assert_eq!(encode_header_value(""), "");
        assert_eq!(decode_header_value("=?base64?UsOpZ2lvbg==?=").unwrap(), "Région");
        assert_eq!(decode_header_value("us-west1").unwrap(), "us-west1");
        assert!(decode_header_value("=?base64?!!?=").is_err());
        assert!(decode_header_value("=?base64?/w==?=").is_err()); // not UTF-8
        assert!(decode_header_value("Région").is_err()); // raw non-ASCII
    }

    #[test]
    fn argument_values() {
        assert_eq!(argument_header_value(Some(&json!("x"))).as_deref(), Some("x"));
        assert_eq!(argument_header_value(Some(&json!(42))).as_deref(), Some("42"));
        assert_eq!(argument_header_value(Some(&json!(-7))).as_deref(), Some("-7"));
        assert_eq!(argument_header_value(Some(&json!(false))).as_deref(), Some("false"));
        assert_eq!(argument_header_value(Some(&Value::Null)), None);
        assert_eq!(argument_header_value(None), None);
    }

    fn discover_params() -> Value {
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                         "io.modelcontextprotocol/clientCapabilities": {}}})
    }

    #[test]
    fn version_method_and_name() {
        let p = discover_params();
        let ok = headers(&[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "server/discover"),
        ]);
        assert_eq!(check_modern(&ok, "server/discover", p.as_object()), Ok(()));

        let wrong_version = headers(&[
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Method", "server/discover"),
        ]);
        let e = check_modern(&wrong_version, "server/discover", p.as_object()).unwrap_err();
        assert!(e.contains("MCP-Protocol-Version header value '2025-11-25'"), "{e}");

        let no_method = headers(&[("MCP-Protocol-Version", "2026-07-28")]);
        assert!(check_modern(&no_method, "server/discover", p.as_object())
            .unwrap_err()
            .contains("Mcp-Method header is missing"));

        let mut call = p.as_object().cloned().unwrap();
        call.insert("name".into(), json!("Région tool"));
        let hs = |name: &str| {
            headers(&[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", name),
            ])
        };
        assert_eq!(
            check_modern(&hs("=?base64?UsOpZ2lvbiB0b29s?="), "tools/call", Some(&call)),
            Ok(())
        );
        assert!(check_modern(&hs("Région tool"), "tools/call", Some(&call)).is_err());
        let e = check_modern(&hs("foo"), "tools/call", Some(&call)).unwrap_err();
        assert_eq!(
            e,
            "Header mismatch: Mcp-Name header value 'foo' does not match body params.name value 'Région tool'"
        );

        let mut read = p.as_object().cloned().unwrap();
        read.insert("uri".into(), json!("fixture://static"));
        let h = headers(&[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "resources/read"),
            ("Mcp-Name", "fixture://static"),
        ]);
        assert_eq!(check_modern(&h, "resources/read", Some(&read)), Ok(()));
    }

    #[test]
    fn param_headers() {
        let mut call = discover_params().as_object().cloned().unwrap();
        call.insert("name".into(), json!("headers_echo"));
        call.insert(
            "arguments".into(),
            json!({"region": " us-west1", "priority": 42, "verbose": false, "query": "x"}),
        );
        let base = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "headers_echo"),
        ];
        let check = |call: &Map<String, Value>, extra: &[(&str, &str)]| {
            let mut list = base.to_vec();
            list.extend_from_slice(extra);
            check_modern(&headers(&list), "tools/call", Some(call))
        };
        let with = |extra: &[(&str, &str)]| check(&call, extra);
        let good = [
            ("Mcp-Param-Region", "=?base64?IHVzLXdlc3Qx?="),
            ("mcp-param-priority", "42"),
            ("Mcp-Param-Verbose", "false"),
        ];
        assert_eq!(with(&good), Ok(()));
        // missing, wrong, unencoded, and extra headers
        assert!(with(&good[1..])
            .unwrap_err()
            .contains("Mcp-Param-Region header is missing"));
        assert!(with(&[good[0], ("Mcp-Param-Priority", "43"), good[2]]).is_err());
        assert!(with(&[good[0], good[1], ("Mcp-Param-Verbose", "False")]).is_err());
        assert!(with(&[("Mcp-Param-Region", "us-west1"), good[1], good[2]]).is_err());
        let extra = with(&[good[0], good[1], good[2], ("Mcp-Param-Query", "x")]).unwrap_err();
        assert!(extra.contains("unexpected header mcp-param-query"), "{extra}");

        // null / absent arguments: no header allowed
        let mut call = call.clone();
        call.insert("arguments".into(), json!({"region": null}));
        assert_eq!(check(&call, &[]), Ok(()));
        assert!(check(&call, &[("Mcp-Param-Region", "")]).is_err());
        call.insert("arguments".into(), json!({"region": ""}));
        assert_eq!(check(&call, &[("Mcp-Param-Region", "")]), Ok(()));
    }

    #[test]
    fn annotations_of_headers_echo() {
        let defs = tools::definitions();
        let tool = defs.iter().find(|t| t["name"] == "headers_echo").unwrap();
        assert_eq!(
            annotations(&tool["inputSchema"]),
            vec![
                ("Region".to_string(), "region".to_string()),
                ("Priority".to_string(), "priority".to_string()),
                ("Verbose".to_string(), "verbose".to_string()),
            ]
        );
        assert!(annotations(&json!({"type": "object"})).is_empty());
    }
}
