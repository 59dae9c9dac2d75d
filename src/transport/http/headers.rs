//! The modern HTTP request headers that mirror the body (SEP-2243): `Mcp-Method`, `Mcp-Name`,
//! and `Mcp-Param-{Name}` for tool arguments annotated with `x-mcp-header`; the Base64 sentinel
//! for values a header cannot carry plainly; validation of the annotations; the tool cache.

use base64::Engine;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;

/// The annotation keyword in a tool's `inputSchema`.
pub const ANNOTATION: &str = "x-mcp-header";
/// Prefix of mirrored-argument headers.
pub const PARAM_PREFIX: &str = "Mcp-Param-";
/// The largest integer a header may carry: 2^53 − 1.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Schema keywords whose values are data, not subschemas: an `x-mcp-header` key inside them is
/// no annotation.
const DATA_KEYWORDS: &[&str] = &["enum", "const", "default", "examples"];

/// A header value: plain when it is printable ASCII without edge whitespace and does not itself
/// look like the sentinel (then borrowed, not copied); otherwise
/// `=?base64?<Base64 of the UTF-8 bytes>?=`.
pub fn encode_value(value: &str) -> Cow<'_, str> {
    encoded(Cow::Borrowed(value))
}

/// [`encode_value`] of text already held: kept when plain, no copy made.
fn encoded(value: Cow<'_, str>) -> Cow<'_, str> {
    if needs_sentinel(&value) {
        Cow::Owned(format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value.as_bytes())
        ))
    } else {
        value
    }
}

/// Whether `value` goes in the Base64 sentinel form (else it is sent as it is).
fn needs_sentinel(value: &str) -> bool {
    let bytes = value.as_bytes();
    let unsafe_byte = bytes.iter().any(|&b| !(0x20..0x7f).contains(&b));
    let edge_space = matches!(bytes.first(), Some(b' ' | b'\t')) || matches!(bytes.last(), Some(b' ' | b'\t'));
    let (head, tail) = (b"=?base64?", b"?=");
    let looks_encoded = bytes.len() >= head.len()
        && bytes[..head.len()].eq_ignore_ascii_case(head)
        && bytes[bytes.len() - tail.len()..].eq_ignore_ascii_case(tail);
    unsafe_byte || edge_space || looks_encoded
}

/// `Mcp-Name` for the methods that have one: the tool or prompt name, the resource URI, or the
/// task id (tasks extension), encoded; `member(key)` reads that member of the request's params
/// as text (none when absent or not a string).
pub fn name_for<'a>(method: &str, member: impl FnOnce(&str) -> Option<Cow<'a, str>>) -> Option<Cow<'a, str>> {
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        "tasks/get" | "tasks/result" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return None,
    };
    member(key).map(encoded)
}

/// The header form of one argument value, or `None` when no header is sent (null, absent, or a
/// value of a kind a header cannot mirror).
pub fn param_value(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(encode_value(s).into_owned()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER)
                    .contains(&i)
                    .then(|| i.to_string())
            } else if n.is_u64() {
                None
            } else {
                // An integer written as a float (`42.0`) is still the integer 42.
                let f = n.as_f64()?;
                (f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER as f64).then(|| format!("{}", f as i64))
            }
        }
        _ => None,
    }
}

/// RFC 9110 `tchar`.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// One mirrored argument: where it sits in `arguments`, and the header-name suffix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    pub path: Vec<String>,
    pub name: String,
}

/// What the cache knows about one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolHeaders {
    Valid(Vec<ParamHeader>),
    /// Left out of `tools/list`; calls to it get no `Mcp-Param-*` headers.
    Invalid(String),
}

/// Reads a tool's annotations: the headers to mirror, or why the tool must be left out.
pub fn tool_headers(tool: &Value) -> ToolHeaders {
    let Some(schema) = tool.get("inputSchema") else {
        return ToolHeaders::Valid(Vec::new());
    };
    let mut found = Vec::new();
    let mut problems = Vec::new();
    walk(schema, Some(Vec::new()), &mut found, &mut problems);
    let mut seen: HashMap<String, &str> = HashMap::new();
    for h in &found {
        if let Some(first) = seen.insert(h.name.to_ascii_lowercase(), &h.name) {
            problems.push(format!(
                "header name {:?} is used twice (also as {first:?}; names are case-insensitive)",
                h.name
            ));
        }
    }
    if problems.is_empty() {
        ToolHeaders::Valid(found)
    } else {
        ToolHeaders::Invalid(problems.join("; "))
    }
}

/// Visits every schema node; `chain` is the property path while the node is reached from the root
/// through `properties` alone (`None` once any other keyword was crossed).
fn walk(node: &Value, chain: Option<Vec<String>>, found: &mut Vec<ParamHeader>, problems: &mut Vec<String>) {
    match node {
        Value::Object(obj) => {
            if let Some(annotation) = obj.get(ANNOTATION) {
                check_annotation(obj, annotation, chain.as_deref(), found, problems);
            }
            for (key, child) in obj {
                if key == ANNOTATION || DATA_KEYWORDS.contains(&key.as_str()) {
                    continue;
                }
                if key == "properties" {
                    if let Value::Object(props) = child {
                        for (name, sub) in props {
                            let next = chain.as_ref().map(|c| {
                                let mut c = c.clone();
                                c.push(name.clone());
                                c
                            });
                            walk(sub, next, found, problems);
                        }
                        continue;
                    }
                }
                walk(child, None, found, problems);
            }
        }
        Value::Array(items) => {
            for item in items {
                walk(item, None, found, problems);
            }
        }
        _ => {}
    }
}

fn check_annotation(
    schema: &Map<String, Value>,
    annotation: &Value,
    chain: Option<&[String]>,
    found: &mut Vec<ParamHeader>,
    problems: &mut Vec<String>,
) {
    let where_ = match chain {
        Some(path) if !path.is_empty() => path.join("."),
        _ => "a nested schema".to_string(),
    };
    let Value::String(name) = annotation else {
        problems.push(format!("{ANNOTATION} on {where_} is not a string"));
        return;
    };
    let mut bad = Vec::new();
    if name.is_empty() {
        bad.push("it is empty".to_string());
    } else if !name.chars().all(is_tchar) {
        bad.push("it is not an HTTP token (no spaces, colons, non-ASCII or control characters)".to_string());
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string" | "integer" | "boolean") => {}
        Some(other) => bad.push(format!(
            "it sits on a {other:?} property (string, integer or boolean only)"
        )),
        None => bad.push("its property has no single primitive type".to_string()),
    }
    let path = match chain {
        Some(path) if !path.is_empty() => Some(path),
        _ => {
            bad.push("it is not reached through `properties` alone".to_string());
            None
        }
    };
    if bad.is_empty() {
        if let Some(path) = path {
            found.push(ParamHeader {
                path: path.to_vec(),
                name: name.clone(),
            });
        }
    } else {
        problems.push(format!("{ANNOTATION} {name:?} on {where_}: {}", bad.join(", ")));
    }
}

/// The `Mcp-Param-*` headers for a `tools/call` with `arguments`.
pub fn param_headers(headers: &[ParamHeader], arguments: Option<&Value>) -> Vec<(String, String)> {
    let Some(arguments) = arguments else {
        return Vec::new();
    };
    headers
        .iter()
        .filter_map(|h| {
            let value = h.path.iter().try_fold(arguments, |v, key| v.get(key))?;
            param_value(value).map(|v| (format!("{PARAM_PREFIX}{}", h.name), v))
        })
        .collect()
}

/// Tool name → its header declarations, learnt from every `tools/list` page that passes by.
#[derive(Debug, Default)]
pub struct ToolCache {
    tools: HashMap<String, ToolHeaders>,
}

impl ToolCache {
    pub fn get(&self, name: &str) -> Option<&ToolHeaders> {
        self.tools.get(name)
    }

    /// Records a `tools/list` result page and removes the tools with invalid annotations from it.
    /// Returns one warning per removed tool.
    pub fn absorb(&mut self, result: &mut Value) -> Vec<String> {
        let mut warnings = Vec::new();
        let Some(Value::Array(tools)) = result.get_mut("tools") else {
            return warnings;
        };
        tools.retain(|tool| {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                return true;
            };
            let headers = tool_headers(tool);
            let keep = matches!(headers, ToolHeaders::Valid(_));
            if let ToolHeaders::Invalid(why) = &headers {
                warnings.push(format!(
                    "left tool \"{}\" out of tools/list: invalid {ANNOTATION} annotation ({})",
                    crate::untrusted::shown(name),
                    crate::untrusted::shown(why)
                ));
            }
            self.tools.insert(name.to_string(), headers);
            keep
        });
        warnings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `name_for`'s reading of a `params` value.
    fn member<'a>(params: &'a Value) -> impl FnOnce(&str) -> Option<Cow<'a, str>> {
        move |key| params.get(key)?.as_str().map(Cow::Borrowed)
    }

    #[test]
    fn sentinel_rules() {
        assert_eq!(encode_value("us-west1"), "us-west1");
        assert_eq!(encode_value("us west 1"), "us west 1");
        assert_eq!(encode_value(""), "");
        assert_eq!(encode_value(" leading"), "=?base64?IGxlYWRpbmc=?=");
        assert_eq!(encode_value("Région"), "=?base64?UsOpZ2lvbg==?=");
        assert_eq!(encode_value("trailing "), "=?base64?dHJhaWxpbmcg?=");
        assert_eq!(encode_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(encode_value("line1\r\nline2"), "=?base64?bGluZTENCmxpbmUy?=");
        assert_eq!(encode_value("\tindented"), "=?base64?CWluZGVudGVk?=");
        assert_eq!(encode_value("a\u{7f}b"), "=?base64?YX9i?=");
        assert_eq!(encode_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        // A value that already looks like the sentinel is encoded so it cannot be misread.
        assert_eq!(encode_value("=?base64?abc?="), "=?base64?PT9iYXNlNjQ/YWJjPz0=?=");
        assert_eq!(encode_value("=?BASE64?x?="), "=?base64?PT9CQVNFNjQ/eD89?=");
        assert_eq!(encode_value("=?base64?"), "=?base64?");
        // Percent-escaped URIs are plain ASCII; raw spaces inside are fine, at the edges not.
        assert_eq!(
            encode_value("file:///path/to/file%20name.txt"),
            "file:///path/to/file%20name.txt"
        );
    }

    #[test]
    fn values_by_type() {
        assert_eq!(param_value(&json!("x")), Some("x".into()));
        assert_eq!(param_value(&json!(42)), Some("42".into()));
        assert_eq!(param_value(&json!(-7)), Some("-7".into()));
        assert_eq!(param_value(&json!(42.0)), Some("42".into()));
        assert_eq!(
            param_value(&json!(9007199254740991_i64)),
            Some("9007199254740991".into())
        );
        assert_eq!(
            param_value(&json!(-9007199254740991_i64)),
            Some("-9007199254740991".into())
        );
        assert_eq!(param_value(&json!(9007199254740992_i64)), None);
        assert_eq!(param_value(&json!(u64::MAX)), None);
        assert_eq!(param_value(&json!(3.5)), None);
        assert_eq!(param_value(&json!(true)), Some("true".into()));
        assert_eq!(param_value(&json!(false)), Some("false".into()));
        assert_eq!(param_value(&json!(null)), None);
        assert_eq!(param_value(&json!({"a": 1})), None);
    }

    #[test]
    fn names_per_method() {
        let p = json!({"name": "my-hyphenated-tool", "uri": "https://example.com/resource?id=123"});
        assert_eq!(
            name_for("tools/call", member(&p)).as_deref(),
            Some("my-hyphenated-tool")
        );
        assert_eq!(
            name_for("prompts/get", member(&p)).as_deref(),
            Some("my-hyphenated-tool")
        );
        assert_eq!(
            name_for("resources/read", member(&p)).as_deref(),
            Some("https://example.com/resource?id=123")
        );
        assert_eq!(name_for("tools/list", member(&p)), None);
        let spaced = json!({"uri": "file:///a b"});
        assert_eq!(
            name_for("resources/read", member(&spaced)).as_deref(),
            Some("file:///a b")
        );
        let edge = json!({"name": "tool "});
        assert_eq!(
            name_for("tools/call", member(&edge)).as_deref(),
            Some("=?base64?dG9vbCA=?=")
        );
    }

    fn tool(properties: Value) -> Value {
        json!({"name": "t", "inputSchema": {"type": "object", "properties": properties}})
    }

    #[test]
    fn valid_annotations_and_mirroring() {
        let t = tool(json!({
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "method_val": {"type": "string", "x-mcp-header": "Method"},
            "nested": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}},
            "float_val": {"type": "number"},
            "query": {"type": "string"},
            "choice": {"type": "string", "enum": [{"x-mcp-header": "NotAnAnnotation"}]}
        }));
        let ToolHeaders::Valid(headers) = tool_headers(&t) else {
            panic!()
        };
        let args = json!({
            "region": "us-west1", "priority": 42, "verbose": false, "method_val": "test-method",
            "nested": {"zone": "b"}, "float_val": 2.5, "query": "SELECT 1"
        });
        let mut got = param_headers(&headers, Some(&args));
        got.sort();
        assert_eq!(
            got,
            [
                ("Mcp-Param-Method".to_string(), "test-method".to_string()),
                ("Mcp-Param-Priority".into(), "42".into()),
                ("Mcp-Param-Region".into(), "us-west1".into()),
                ("Mcp-Param-Verbose".into(), "false".into()),
                ("Mcp-Param-Zone".into(), "b".into()),
            ]
        );
        let null_args = json!({"region": "us-east1", "priority": 1, "verbose": null});
        let names: Vec<String> = param_headers(&headers, Some(&null_args))
            .into_iter()
            .map(|h| h.0)
            .collect();
        assert!(!names.contains(&"Mcp-Param-Verbose".to_string()));
        assert!(param_headers(&headers, None).is_empty());
    }

    #[test]
    fn every_invalid_annotation_is_caught() {
        let cases = [
            json!({"v": {"type": "string", "x-mcp-header": ""}}),
            json!({"v": {"type": "object", "x-mcp-header": "Data"}}),
            json!({"v": {"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"}}),
            json!({"v": {"type": "null", "x-mcp-header": "Nil"}}),
            json!({"v": {"type": "number", "x-mcp-header": "FloatVal"}}),
            json!({"a": {"type": "string", "x-mcp-header": "Region"}, "b": {"type": "string", "x-mcp-header": "Region"}}),
            json!({"a": {"type": "string", "x-mcp-header": "MyField"}, "b": {"type": "string", "x-mcp-header": "myfield"}}),
            json!({"v": {"type": "string", "x-mcp-header": "My Region"}}),
            json!({"v": {"type": "string", "x-mcp-header": "Region:Primary"}}),
            json!({"v": {"type": "string", "x-mcp-header": "Région"}}),
            json!({"v": {"type": "string", "x-mcp-header": "Region\t1"}}),
            json!({"v": {"type": "string", "x-mcp-header": 7}}),
            json!({"v": {"x-mcp-header": "NoType"}}),
            json!({"v": {"type": "array", "items": {"type": "string", "x-mcp-header": "InItems"}}}),
            json!({"v": {"anyOf": [{"type": "string", "x-mcp-header": "InAnyOf"}]}}),
            json!({"v": {"$ref": "#/$defs/r"}}),
        ];
        for (i, props) in cases.iter().enumerate() {
            let mut t = tool(props.clone());
            if i == cases.len() - 1 {
                t["inputSchema"]["$defs"] = json!({"r": {"type": "string", "x-mcp-header": "ViaRef"}});
            }
            assert!(
                matches!(tool_headers(&t), ToolHeaders::Invalid(_)),
                "case {i} should be invalid: {props}"
            );
        }
        let root = json!({"name": "r", "inputSchema": {"type": "string", "x-mcp-header": "Root"}});
        assert!(matches!(tool_headers(&root), ToolHeaders::Invalid(_)));
    }

    #[test]
    fn the_cache_filters_and_warns() {
        let mut cache = ToolCache::default();
        let mut result = json!({"tools": [
            tool(json!({"region": {"type": "string", "x-mcp-header": "Region"}})),
            {"name": "bad", "inputSchema": {"type": "object", "properties": {"v": {"type": "string", "x-mcp-header": "a b"}}}},
            {"name": "plain", "inputSchema": {"type": "object"}}
        ], "nextCursor": "c"});
        let warnings = cache.absorb(&mut result);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("\"bad\""), "{}", warnings[0]);
        let names: Vec<&str> = result["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["t", "plain"]);
        assert_eq!(result["nextCursor"], "c");
        assert!(matches!(cache.get("t"), Some(ToolHeaders::Valid(h)) if h.len() == 1));
        assert!(matches!(cache.get("bad"), Some(ToolHeaders::Invalid(_))));
        assert!(cache.get("other").is_none());
    }
}
