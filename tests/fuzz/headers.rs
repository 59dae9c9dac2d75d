//! The HTTP header encoder: `Mcp-Name`/`Mcp-Param-*` values and the `x-mcp-header` annotations.

use base64::Engine;
use mcp_client::fuzzing::{encode_header_value, tool_headers, ToolHeaders};
use mcp_client::fuzzing::{name_for, param_headers, param_value, ToolCache};
use proptest::prelude::*;
use reqwest::header::{HeaderName, HeaderValue};
use serde_json::{json, Value};
use std::borrow::Cow;

/// A receiver's decoding of a header value: the Base64 sentinel, or the value as it is.
fn decode(value: &str) -> String {
    let lower = value.to_ascii_lowercase();
    if lower.starts_with("=?base64?") && lower.ends_with("?=") && value.len() >= 11 {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&value[9..value.len() - 2])
            .expect("the sentinel carries Base64");
        String::from_utf8(bytes).expect("the sentinel carries UTF-8")
    } else {
        value.to_string()
    }
}

/// A value a header can carry as it is: visible ASCII and inner spaces only.
fn sendable(value: &str) -> bool {
    HeaderValue::from_str(value).is_ok()
        && value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !value.starts_with([' ', '\t'])
        && !value.ends_with([' ', '\t'])
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => any::<String>(),
        2 => "[ -~]{0,16}",
        1 => "(=\\?[bB][aA][sS][eE]64\\?)?[ -~\t]{0,8}(\\?=)?",
    ]
}

/// JSON values of every kind, with numbers near the 2^53 limit.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        ((1i64 << 53) - 3..(1i64 << 53) + 3).prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        (-1e16f64..1e16).prop_map(|f| Value::from(f.trunc())),
        text().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::vec(("[a-c]{1,2}", inner), 0..3).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// A tool whose input schema mixes valid and invalid `x-mcp-header` annotations.
fn tool() -> impl Strategy<Value = Value> {
    let annotation = prop_oneof![
        3 => "[A-Za-z0-9!#$%&'*+.^_`|~-]{1,8}".prop_map(Value::from),
        1 => text().prop_map(Value::from),
        1 => json_value(),
    ];
    let kind = prop::sample::select(vec!["string", "integer", "boolean", "number", "object", "array"]);
    let leaf = (kind, prop::option::of(annotation)).prop_map(|(kind, annotation)| {
        let mut schema = json!({ "type": kind });
        if let Some(a) = annotation {
            schema["x-mcp-header"] = a;
        }
        schema
    });
    let schema = leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(("[a-c]{1,2}", inner.clone()), 0..3).prop_map(|props| {
                json!({ "type": "object", "properties": Value::Object(props.into_iter().collect()) })
            }),
            prop::collection::vec(inner, 0..3).prop_map(|items| json!({ "anyOf": items })),
        ]
    });
    (schema, prop::option::of(json_value())).prop_map(|(schema, noise)| {
        let mut tool = json!({ "name": "t", "inputSchema": schema });
        if let Some(noise) = noise {
            tool["inputSchema"]["default"] = noise;
        }
        tool
    })
}

proptest! {
    #[test]
    fn encoded_values_are_sendable_and_decode_back(value in text()) {
        let encoded = encode_header_value(&value);
        prop_assert!(sendable(&encoded), "{:?} encodes to {:?}", value, encoded);
        prop_assert_eq!(decode(&encoded), value.clone());
        // Plain when plain is safe: the sentinel is used only when needed.
        if sendable(&value) && !value.to_ascii_lowercase().starts_with("=?base64?") {
            prop_assert_eq!(&encoded, &value);
        }
        prop_assert!(encoded.len() <= 11 + value.len().div_ceil(3) * 4);
    }

    #[test]
    fn argument_values_are_sendable_or_absent(value in json_value()) {
        if let Some(h) = param_value(&value) {
            prop_assert!(sendable(&h), "{:?} gives {:?}", value, h);
            match &value {
                Value::String(s) => prop_assert_eq!(decode(&h), s.clone()),
                Value::Bool(b) => prop_assert_eq!(h, b.to_string()),
                Value::Number(n) => {
                    // An integer within ±(2^53 − 1), written as one.
                    let i: i64 = h.parse().expect("an integer");
                    prop_assert!(i.unsigned_abs() < 1 << 53);
                    prop_assert_eq!(i as f64, n.as_f64().unwrap());
                }
                _ => prop_assert!(false, "{:?} should send no header", value),
            }
        }
        for method in ["tools/call", "prompts/get", "resources/read", "tasks/get", "ping"] {
            let params = json!({ "name": value, "uri": value, "taskId": value });
            if let Some(name) = name_for(method, |key| params.get(key)?.as_str().map(Cow::Borrowed)) {
                prop_assert!(sendable(&name));
                let decoded = decode(&name);
                prop_assert_eq!(Some(decoded.as_str()), value.as_str());
            }
        }
    }

    /// Whatever a server declares and a host passes, the headers sent are valid HTTP: a tool
    /// with a bad annotation is left out, never sent with a broken header.
    #[test]
    fn declared_headers_are_valid_http(tool in tool(), arguments in json_value()) {
        match tool_headers(&tool) {
            ToolHeaders::Valid(declared) => {
                for (name, value) in param_headers(&declared, Some(&arguments)) {
                    prop_assert!(HeaderName::from_bytes(name.as_bytes()).is_ok(), "bad name {:?}", name);
                    prop_assert!(sendable(&value), "bad value {:?}", value);
                }
                let mut names: Vec<String> = declared.iter().map(|h| h.name.to_ascii_lowercase()).collect();
                names.sort();
                let n = names.len();
                names.dedup();
                prop_assert_eq!(n, names.len(), "duplicate header names accepted");
            }
            ToolHeaders::Invalid(why) => prop_assert!(!why.is_empty()),
        }
        let mut page = json!({ "tools": [tool.clone(), { "name": "plain" }] });
        let mut cache = ToolCache::default();
        let warnings = cache.absorb(&mut page);
        let kept = page["tools"].as_array().unwrap().len();
        prop_assert_eq!(kept + warnings.len(), 2);
        prop_assert!(cache.get("plain").is_some());
    }
}
