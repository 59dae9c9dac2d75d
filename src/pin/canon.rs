//! A tool's pinned definition: the members that reach the model or steer a call, in canonical
//! JSON (object keys sorted at every depth, no spaces), and its SHA-256 digest. Two listings
//! that differ only in key order or whitespace give the same digest; numbers keep their text.

use serde_json::{Map, Value};

/// The members of a tool that are pinned. Anything else a server adds is ignored.
pub(crate) const PINNED: &[&str] = &[
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "_meta",
];

/// The `_meta` keys left out by default: trace context that changes per listing (the
/// OpenTelemetry conventions for MCP carry it in `_meta`) and freshness stamps. A key is matched
/// by its last `/`-separated segment, so `io.example/etag` is `etag`.
pub(crate) const DEFAULT_IGNORED_META: &[&str] = &[
    "traceparent",
    "tracestate",
    "baggage",
    "etag",
    "lastModified",
    "timestamp",
];

/// `value` with every object's keys sorted, recursively.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&map[k]))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Whether `_meta` key `key` is left out under `ignored`.
fn ignored_meta(key: &str, ignored: &[String]) -> bool {
    let last = key.rsplit('/').next().unwrap_or(key);
    ignored.iter().any(|i| i == key || i == last)
}

/// The canonical definition of `tool` (a `tools/list` entry): its pinned members, sorted;
/// `_meta` without the `ignored` keys (and left out when nothing remains).
pub(crate) fn definition(tool: &Map<String, Value>, ignored: &[String]) -> Value {
    let mut out = Map::new();
    for key in PINNED {
        let Some(value) = tool.get(*key) else { continue };
        if *key == "_meta" {
            if let Value::Object(meta) = value {
                let kept: Map<String, Value> = meta
                    .iter()
                    .filter(|(k, _)| !ignored_meta(k, ignored))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if !kept.is_empty() {
                    out.insert((*key).into(), Value::Object(kept));
                }
                continue;
            }
        }
        out.insert((*key).into(), value.clone());
    }
    sorted(&Value::Object(out))
}

/// The lowercase hex SHA-256 of a canonical definition's compact JSON text.
pub(crate) fn digest(definition: &Value) -> String {
    let text = serde_json::to_string(definition).unwrap_or_default();
    let d = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// A readable difference between two canonical definitions, one line per changed place:
/// `path: old → new`, `path: added new`, `path: removed old` (paths as `inputSchema.properties.x`,
/// array items as `[i]`; values as compact JSON, long ones shortened).
pub(crate) fn diff(old: &Value, new: &Value) -> String {
    let mut lines = Vec::new();
    walk("", old, new, &mut lines);
    lines.join("\n")
}

const SHOWN: usize = 200;

fn shown(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(SHOWN) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn walk(path: &str, old: &Value, new: &Value, lines: &mut Vec<String>) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, va) in a {
                match b.get(k) {
                    Some(vb) => walk(&join(path, k), va, vb, lines),
                    None => lines.push(format!("{}: removed {}", join(path, k), shown(va))),
                }
            }
            for (k, vb) in b.iter().filter(|(k, _)| !a.contains_key(*k)) {
                lines.push(format!("{}: added {}", join(path, k), shown(vb)));
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                walk(&format!("{path}[{i}]"), va, vb, lines);
            }
        }
        _ if old != new => {
            let at = if path.is_empty() { "(definition)" } else { path };
            lines.push(format!("{at}: {} → {}", shown(old), shown(new)));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn def(v: Value) -> Value {
        definition(
            v.as_object().unwrap(),
            &DEFAULT_IGNORED_META.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        )
    }

    #[test]
    fn key_order_and_unpinned_members_do_not_count() {
        let a = def(
            json!({"name": "t", "description": "d", "inputSchema": {"type": "object", "properties": {"a": {}, "b": {}}}}),
        );
        let b = def(
            json!({"inputSchema": {"properties": {"b": {}, "a": {}}, "type": "object"}, "description": "d", "name": "t", "icons": []}),
        );
        assert_eq!(digest(&a), digest(&b));
        let c = def(
            json!({"name": "t", "description": "d", "inputSchema": {"type": "object", "properties": {"a": {}, "b": {}}},
                           "_meta": {"traceparent": "00-1", "io.x/etag": "1"}}),
        );
        assert_eq!(digest(&a), digest(&c), "ignored _meta keys leave the digest as it was");
        let d = def(
            json!({"name": "t", "description": "d", "inputSchema": {"type": "object", "properties": {"a": {}, "b": {}}},
                           "_meta": {"io.x/ui": "ui://a"}}),
        );
        assert_ne!(digest(&a), digest(&d));
    }

    #[test]
    fn the_diff_names_each_place() {
        let old = def(json!({"name": "t", "description": "d", "inputSchema": {"properties": {"a": {}}}}));
        let new = def(
            json!({"name": "t", "description": "e", "inputSchema": {"properties": {"a": {}, "x": {"type": "string"}}}}),
        );
        assert_eq!(
            diff(&old, &new),
            "description: \"d\" → \"e\"\ninputSchema.properties.x: added {\"type\":\"string\"}"
        );
        assert_eq!(diff(&old, &old), "");
    }
}
