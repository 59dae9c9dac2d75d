//! Gemini's legacy `parameters`: the OpenAPI 3.0 subset (`Schema` object). No `$ref`, upper-case
//! type names, `nullable` instead of type arrays, string-only `enum`, and a short list of
//! keywords; everything else is removed and reported.

use super::notes::ToolReport;
use super::schema::is_annotation;
use super::walk::MAX_DEPTH;
use serde_json::{json, Map, Value};

/// The keywords the legacy `Schema` object has.
const ALLOWED: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "items",
    "minimum",
    "maximum",
];

/// Largest inlined schema, in JSON values: references used many times multiply.
const MAX_NODES: usize = 100_000;

/// Data keywords: their values are data, not schemas, and hold no references.
fn is_data(key: &str) -> bool {
    matches!(key, "const" | "enum" | "default" | "examples" | "example")
}

/// `schema` with every local `$ref` replaced by what it names and `$defs`/`definitions`
/// dropped. A recursive reference cannot be inlined and is refused, and so is a chain of
/// references deeper than `max_depth` or a result past [`MAX_NODES`].
pub(crate) fn inline_refs(schema: &Value, max_depth: usize) -> Result<Value, String> {
    let mut budget = MAX_NODES;
    inline(schema, schema, &mut Vec::new(), max_depth, &mut budget, 0)
}

fn inline(
    root: &Value,
    node: &Value,
    stack: &mut Vec<String>,
    max_depth: usize,
    budget: &mut usize,
    depth: usize,
) -> Result<Value, String> {
    if *budget == 0 {
        return Err(format!(
            "inlining its $refs makes the schema larger than {MAX_NODES} values"
        ));
    }
    *budget -= 1;
    if depth > MAX_DEPTH * 2 {
        return Err(format!("the schema nests deeper than {MAX_DEPTH} levels"));
    }
    let map = match node {
        Value::Object(m) => m,
        Value::Array(list) => {
            return list
                .iter()
                .map(|v| inline(root, v, stack, max_depth, budget, depth + 1))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
        }
        other => return Ok(other.clone()),
    };
    let mut out = Map::new();
    for (k, v) in map {
        if k == "$ref" || k == "$defs" || k == "definitions" {
            continue;
        }
        let value = if is_data(k) {
            v.clone()
        } else {
            inline(root, v, stack, max_depth, budget, depth + 1)?
        };
        out.insert(k.clone(), value);
    }
    let Some(reference) = map.get("$ref") else {
        return Ok(Value::Object(out));
    };
    let r = reference.as_str().ok_or("a $ref is not a string")?;
    if stack.iter().any(|s| s == r) {
        return Err(format!(
            "the $ref {r:?} is recursive; this format needs every reference inlined, which a recursive \
             schema cannot be (Gemini's parametersJsonSchema keeps references)"
        ));
    }
    if stack.len() >= max_depth {
        return Err(format!("$refs nest deeper than {max_depth} levels at {r:?}"));
    }
    let target = crate::client::schema_ref(root, r)
        .ok_or_else(|| format!("the $ref {r:?} does not resolve inside the schema"))?;
    stack.push(r.to_string());
    let inlined = inline(root, target, stack, max_depth, budget, depth + 1);
    stack.pop();
    match inlined? {
        Value::Object(mut target) => {
            if out.keys().all(|k| !target.contains_key(k) || is_annotation(k)) {
                // Siblings of the reference add to what it names (annotations override).
                target.extend(out);
                Ok(Value::Object(target))
            } else {
                Ok(json!({"allOf": [Value::Object(target), Value::Object(out)]}))
            }
        }
        Value::Bool(true) => Ok(Value::Object(out)),
        other => Ok(json!({"allOf": [other, Value::Object(out)]})),
    }
}

/// Rewrites one schema object (its subschemas are visited after it) into the legacy subset.
pub(crate) fn legacy_node(node: &mut Value, at: &str, report: &mut ToolReport) {
    if let Value::Bool(b) = node {
        if !*b {
            report.lost(at, "a false schema (no value allowed)");
        }
        *node = json!({});
        return;
    }
    let Some(s) = node.as_object_mut() else { return };
    type_array(s, at, report);
    if let Some(c) = s.remove("const") {
        s.insert("enum".into(), json!([c]));
        report.rewrite(at, "const written as a one-value enum");
    }
    if let Some(Value::Array(values)) = s.get("enum") {
        if !values.iter().all(Value::is_string) {
            s.remove("enum");
            report.lost(at, "enum of non-string values (this format's enum holds strings only)");
        }
    }
    if let Some(one) = s.remove("oneOf") {
        report.lost(at, "oneOf's exactly-one (sent as anyOf)");
        match s.get_mut("anyOf") {
            None => {
                s.insert("anyOf".into(), one);
            }
            Some(_) => report.lost(at, "oneOf beside anyOf (dropped)"),
        }
    }
    merge_all_of(s, at, report);
    exclusive_bounds(s, at, report);
    if let Some(Value::Array(_)) = s.get("items") {
        s.remove("items");
        report.lost(at, "items as a list (tuple)");
    }
    match s.get("format").and_then(Value::as_str) {
        Some("enum" | "date-time" | "int32" | "int64" | "float" | "double") | None => {}
        Some(f) => {
            report.rewrite(
                at,
                format!("format {f:?} removed (an annotation this format does not take)"),
            );
            s.remove("format");
        }
    }
    let unknown: Vec<String> = s.keys().filter(|k| !ALLOWED.contains(&k.as_str())).cloned().collect();
    for key in unknown {
        let value = s.remove(&key).unwrap_or_default();
        if is_annotation(&key) || (key == "additionalProperties" && value == Value::Bool(true)) {
            report.rewrite(at, format!("{key} removed"));
        } else {
            report.lost(at, format!("{key} (removed: the format has no such keyword)"));
        }
    }
    if let Some(Value::String(t)) = s.get_mut("type") {
        *t = t.to_ascii_uppercase();
    }
}

/// `"type": [..]` to one type plus `nullable`, or to `anyOf` of the types.
fn type_array(s: &mut Map<String, Value>, at: &str, report: &mut ToolReport) {
    let Some(Value::Array(types)) = s.get("type") else {
        return;
    };
    let named: Vec<String> = types.iter().filter_map(Value::as_str).map(str::to_string).collect();
    let others: Vec<&String> = named.iter().filter(|t| *t != "null").collect();
    let nullable = others.len() < named.len();
    match others.as_slice() {
        [] => {
            s.insert("type".into(), json!("null"));
        }
        [one] => {
            s.insert("type".into(), json!(one));
        }
        many => {
            let branches: Vec<Value> = many.iter().map(|t| json!({"type": t})).collect();
            s.remove("type");
            if s.contains_key("anyOf") {
                report.lost(at, "a type array beside anyOf (types not restricted)");
            } else {
                s.insert("anyOf".into(), Value::Array(branches));
            }
        }
    }
    if nullable && !others.is_empty() {
        s.insert("nullable".into(), json!(true));
    }
    report.rewrite(at, "type array written as one type with nullable, or anyOf");
}

/// `allOf` whose branches do not clash is merged into the node; otherwise it is removed.
fn merge_all_of(s: &mut Map<String, Value>, at: &str, report: &mut ToolReport) {
    let Some(all) = s.remove("allOf") else { return };
    let branches = all.as_array().cloned().unwrap_or_default();
    let mut merged = s.clone();
    for branch in &branches {
        let Some(b) = branch.as_object() else {
            report.lost(at, "allOf (a boolean branch)");
            return;
        };
        for (k, v) in b {
            match (k.as_str(), merged.get_mut(k)) {
                (_, None) => {
                    merged.insert(k.clone(), v.clone());
                }
                ("properties", Some(Value::Object(p))) => {
                    for (name, sub) in v.as_object().into_iter().flatten() {
                        if p.contains_key(name) {
                            report.lost(at, format!("allOf: property {name:?} constrained twice (one kept)"));
                        } else {
                            p.insert(name.clone(), sub.clone());
                        }
                    }
                }
                ("required", Some(Value::Array(r))) => {
                    for n in v.as_array().into_iter().flatten() {
                        if !r.contains(n) {
                            r.push(n.clone());
                        }
                    }
                }
                (_, Some(existing)) if existing == v || is_annotation(k) => {}
                _ => {
                    report.lost(at, format!("allOf: {k} in more than one branch (one kept)"));
                }
            }
        }
    }
    *s = merged;
    report.rewrite(at, "allOf merged into the schema");
}

/// `exclusiveMinimum`/`exclusiveMaximum`: exact as `minimum`/`maximum` for integers.
fn exclusive_bounds(s: &mut Map<String, Value>, at: &str, report: &mut ToolReport) {
    let integer = s.get("type").and_then(Value::as_str) == Some("integer");
    for (key, to, step) in [
        ("exclusiveMinimum", "minimum", 1.0),
        ("exclusiveMaximum", "maximum", -1.0),
    ] {
        let Some(bound) = s.get(key).and_then(Value::as_f64) else {
            continue;
        };
        s.remove(key);
        if integer && bound.is_finite() && bound.abs() < 9e15 {
            let inner = if step > 0.0 {
                bound.floor() + 1.0
            } else {
                bound.ceil() - 1.0
            };
            let tighter = match s.get(to).and_then(Value::as_f64) {
                Some(old) if step > 0.0 => old.max(inner),
                Some(old) => old.min(inner),
                None => inner,
            };
            s.insert(to.into(), json!(tighter as i64));
            report.rewrite(at, format!("{key} {bound} on an integer written as {to}"));
        } else {
            report.lost(at, format!("{key} {bound}"));
        }
    }
}
