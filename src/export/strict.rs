//! OpenAI strict mode: `additionalProperties: false` on every object, every property required
//! (the optional ones accept `null` too, which dispatch removes again), and only the keywords
//! strict mode takes. A schema that cannot be put that way is refused with the reason, and the
//! tool goes out non-strict.

use super::notes::ToolReport;
use super::schema::is_annotation;
use super::walk::walk;
use serde_json::{json, Value};

/// Keywords that shape the value in ways strict mode cannot say: the tool goes out non-strict.
const REFUSED: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "dependentSchemas",
    "prefixItems",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
];
/// Assertions strict mode does not take: removed, reported as not expressed.
const DROPPED: &[&str] = &[
    "minLength",
    "maxLength",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "contains",
    "minContains",
    "maxContains",
    "dependentRequired",
    "propertyNames",
];
/// Annotations strict mode accepts.
const KEPT_ANNOTATIONS: &[&str] = &["description", "title", "$defs", "definitions"];
/// `format` values strict mode accepts.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
/// OpenAI's documented limits on a strict schema.
const MAX_NESTING: usize = 10;
const MAX_ENUM_VALUES: usize = 1000;
const MAX_PROPERTIES: usize = 5000;

/// The strict form of `schema`, or why there is none.
pub(crate) fn make_strict(schema: &Value, report: &mut ToolReport) -> Result<Value, String> {
    let mut out = schema.clone();
    let root = out.as_object().ok_or("the schema is not an object")?;
    for key in ["anyOf", "oneOf"] {
        if root.contains_key(key) {
            return Err(format!("a top-level {key}"));
        }
    }
    let (mut enums, mut props) = (0usize, 0usize);
    walk(&mut out, "", 0, &mut |node, at, depth| {
        strict_node(node, at, depth, report)?;
        if let Some(e) = node.get("enum").and_then(Value::as_array) {
            enums += e.len();
        }
        props += node.get("properties").and_then(Value::as_object).map_or(0, |p| p.len());
        if enums > MAX_ENUM_VALUES {
            return Err(format!("more than {MAX_ENUM_VALUES} enum values in all"));
        }
        if props > MAX_PROPERTIES {
            return Err(format!("more than {MAX_PROPERTIES} properties in all"));
        }
        Ok(())
    })?;
    let nesting = object_nesting(&out, 0);
    if nesting > MAX_NESTING {
        return Err(format!("objects nest {nesting} deep, more than {MAX_NESTING}"));
    }
    Ok(out)
}

fn strict_node(node: &mut Value, at: &str, depth: usize, report: &mut ToolReport) -> Result<(), String> {
    let s = match node {
        Value::Object(s) => s,
        Value::Bool(false) if at.ends_with("/additionalProperties") => return Ok(()),
        Value::Bool(_) => return Err(format!("a boolean schema at {}", shown(at))),
        _ => return Ok(()),
    };
    if let Some(k) = REFUSED.iter().find(|k| s.contains_key(**k)) {
        return Err(format!("{k} at {}", shown(at)));
    }
    let typed = ["type", "anyOf", "oneOf", "$ref", "enum", "const"]
        .iter()
        .any(|k| s.contains_key(*k));
    if !typed {
        return Err(format!("{} accepts any value (no type)", shown(at)));
    }
    if let Some(one) = s.remove("oneOf") {
        s.insert("anyOf".into(), one);
        report.lost(at, "oneOf's exactly-one (sent as anyOf)");
    }
    for key in DROPPED {
        if s.remove(*key).is_some() {
            report.lost(at, format!("{key} (strict mode does not take it)"));
        }
    }
    if let Some(f) = s.get("format").and_then(Value::as_str) {
        if !FORMATS.contains(&f) {
            report.rewrite(at, format!("format {f:?} removed (strict mode does not take it)"));
            s.remove("format");
        }
    }
    let annotations: Vec<String> = s
        .keys()
        .filter(|k| is_annotation(k) && k.as_str() != "format" && !KEPT_ANNOTATIONS.contains(&k.as_str()))
        .cloned()
        .collect();
    for k in annotations {
        s.remove(&k);
        report.rewrite(at, format!("{k} removed (strict mode refuses it)"));
    }
    let is_object = match s.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => false,
    } || s.contains_key("properties");
    if is_object {
        match s.get("additionalProperties") {
            None => {
                s.insert("additionalProperties".into(), json!(false));
                report.rewrite(at, "additionalProperties: false added");
            }
            Some(Value::Bool(false)) => {}
            Some(_) => return Err(format!("{} allows members it does not name", shown(at))),
        }
        if !s.contains_key("properties") {
            if depth > 0 {
                return Err(format!("{} is an object with no declared properties", shown(at)));
            }
            s.insert("properties".into(), json!({}));
        }
        let required: Vec<Value> = s.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
        let Some(Value::Object(props)) = s.get_mut("properties") else {
            return Err(format!("{}/properties is not an object", shown(at)));
        };
        let mut all = Vec::new();
        for (name, sub) in props.iter_mut() {
            all.push(json!(name));
            if !required.contains(&json!(name)) {
                nullable(sub);
                report.rewrite(
                    &super::walk::child(&format!("{at}/properties"), name),
                    "optional property made required and nullable (null means absent)",
                );
            }
        }
        s.insert("required".into(), Value::Array(all));
    }
    let is_array = matches!(s.get("type"), Some(Value::String(t)) if t == "array");
    if is_array && !s.contains_key("items") {
        return Err(format!("{} is an array whose items may be anything", shown(at)));
    }
    Ok(())
}

/// `sub` also accepts `null`.
pub(crate) fn nullable(sub: &mut Value) {
    let Some(s) = sub.as_object_mut() else { return };
    match s.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = t.clone();
            s.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(ts)) if !ts.iter().any(|t| t == "null") => ts.push(json!("null")),
        Some(_) => {}
        None => {
            let any_of_null = |v: &Value| v.get("type") == Some(&json!("null"));
            match s.get_mut("anyOf") {
                Some(Value::Array(list)) if !list.iter().any(any_of_null) => list.push(json!({"type": "null"})),
                Some(_) => {}
                None => {
                    let inner = std::mem::take(s);
                    s.insert("anyOf".into(), json!([Value::Object(inner), {"type": "null"}]));
                    return;
                }
            }
        }
    }
    if let Some(Value::Array(values)) = s.get_mut("enum") {
        if !values.contains(&Value::Null) {
            values.push(Value::Null);
        }
    }
}

/// How deep objects nest in `node` (the top object is 1).
fn object_nesting(node: &Value, depth: usize) -> usize {
    match node {
        Value::Object(m) => {
            let here = depth + usize::from(m.contains_key("properties"));
            m.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "enum" | "const"))
                .map(|(_, v)| object_nesting(v, here))
                .max()
                .unwrap_or(here)
                .max(here)
        }
        Value::Array(list) => list.iter().map(|v| object_nesting(v, depth)).max().unwrap_or(depth),
        _ => depth,
    }
}

fn shown(at: &str) -> &str {
    if at.is_empty() {
        "the top level"
    } else {
        at
    }
}
