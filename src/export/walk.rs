//! Visiting every subschema of a JSON Schema, bounded in depth.

use serde_json::{Map, Value};

/// Deepest nesting of subschemas a rewrite follows; deeper schemas are refused.
pub(crate) const MAX_DEPTH: usize = 64;

/// Keywords holding one subschema.
const ONE: &[&str] = &[
    "additionalProperties",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
];
/// Keywords holding a map of subschemas.
const MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords holding a list of subschemas.
const LIST: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// Appends `key` to a JSON pointer.
pub(crate) fn child(at: &str, key: &str) -> String {
    format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// Calls `f` with the pointer and the value of every direct subschema of `s`.
pub(crate) fn for_each_sub(s: &mut Map<String, Value>, at: &str, f: &mut dyn FnMut(&str, &mut Value)) {
    for (key, value) in s.iter_mut() {
        let k = key.as_str();
        let here = child(at, k);
        if ONE.contains(&k) || (k == "items" && !value.is_array()) {
            f(&here, value);
        } else if MAP.contains(&k) {
            if let Value::Object(m) = value {
                for (name, sub) in m.iter_mut() {
                    f(&child(&here, name), sub);
                }
            }
        } else if LIST.contains(&k) || k == "items" {
            if let Value::Array(list) = value {
                for (i, sub) in list.iter_mut().enumerate() {
                    f(&child(&here, &i.to_string()), sub);
                }
            }
        }
    }
}

/// Calls `f` on every schema object under `node` (itself first), with its pointer; `f` may
/// rewrite the node before its subschemas are visited. Fails past [`MAX_DEPTH`].
pub(crate) fn walk(
    node: &mut Value,
    at: &str,
    depth: usize,
    f: &mut dyn FnMut(&mut Value, &str, usize) -> Result<(), String>,
) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("the schema nests deeper than {MAX_DEPTH} levels at {at}"));
    }
    f(node, at, depth)?;
    let mut result = Ok(());
    if let Value::Object(s) = node {
        for_each_sub(s, at, &mut |here, sub| {
            if result.is_ok() {
                result = walk(sub, here, depth + 1, f);
            }
        });
    }
    result
}
