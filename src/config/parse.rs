//! JSON to [`Config`], with errors that name the key, and the JSON Schema of it.

use super::{suggest, Config};
use crate::error::{Error, Result};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The keys whose value is itself a settings object (so null there too means absent). A unit
/// test checks this against the schema.
const NESTED: &[&str] = &["oauth", "reconnect", "tool_pinning"];

/// Reads the flat configuration object.
pub fn parse(value: &Value) -> Result<Config> {
    let mut value = value.clone();
    let Value::Object(obj) = &mut value else {
        return Err(Error::invalid("the configuration must be a JSON object"));
    };
    // The C builder and the bindings may leave a key at null: that means "not set", at the top
    // and inside the nested settings objects (not inside free-form values like capabilities).
    obj.retain(|_, v| !v.is_null());
    for key in NESTED {
        if let Some(Value::Object(inner)) = obj.get_mut(*key) {
            inner.retain(|_, v| !v.is_null());
        }
    }
    deserialize(value)
}

/// The `"oauth"` object alone (errors still say `oauth.<key>`).
pub(crate) fn parse_oauth(value: &Value) -> Result<super::OAuth> {
    #[derive(serde::Deserialize)]
    struct Wrap {
        oauth: super::OAuth,
    }
    let Value::Object(obj) = value else {
        return Err(Error::invalid("oauth must be a JSON object"));
    };
    let mut obj = obj.clone();
    obj.retain(|_, v| !v.is_null());
    Ok(deserialize::<Wrap>(serde_json::json!({ "oauth": obj }))?.oauth)
}

/// The value of one key alone (errors say `key: ...`).
pub(crate) fn parse_key<T: DeserializeOwned>(key: &str, value: &Value) -> Result<T> {
    T::deserialize(value).map_err(|e| Error::invalid(format!("{key}: {}", plain(&e.to_string()))))
}

/// `T` from `value`; an error says where (`oauth.client_id: ...`).
fn deserialize<T: DeserializeOwned>(value: Value) -> Result<T> {
    T::deserialize(&value).map_err(|e| locate::<T>(&value, e))
}

/// The error about `value`, with the key it is about. serde's errors from a `Value` carry no
/// position, so the key is found by deserializing smaller parts of `value`: each top-level key
/// alone, then each key of the first failing one's object under it. This runs only when the
/// configuration is bad, and keeps one deserializer in the shipped library (a path-tracking
/// wrapper would double the deserialization code).
fn locate<T: DeserializeOwned>(value: &Value, err: serde_json::Error) -> Error {
    let alone = |key: &str, v: Value| Value::Object(Map::from_iter([(key.to_string(), v)]));
    let fails = |v: Value| T::deserialize(&v).err();
    let mut path: Vec<&str> = Vec::new();
    let mut message = err.to_string();
    if let Value::Object(top) = value {
        if let Some((key, v, e)) = top.iter().find_map(|(k, v)| Some((k, v, fails(alone(k, v.clone()))?))) {
            path.push(key);
            message = e.to_string();
            if let Value::Object(inner) = v {
                let found = inner.iter().find_map(|(ik, iv)| {
                    let e = fails(alone(key, alone(ik, iv.clone())))?;
                    Some((ik, e))
                });
                if let Some((ik, e)) = found {
                    path.push(ik);
                    message = e.to_string();
                }
            }
        }
    }
    // "unknown field `x`, expected one of ..." → `unknown oauth key "x"`: short, and the form
    // the bindings' tests and users already know.
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let key = rest.split('`').next().unwrap_or_default();
        let section = match &path[..path.len().saturating_sub(1)] {
            [] => "configuration".to_string(),
            parents => parents.join("."),
        };
        let hint = match suggest::nearest(key, &suggest::expected_fields(&message)) {
            Some(near) => format!("; did you mean {near:?}?"),
            None => String::new(),
        };
        return Error::invalid(format!("unknown {section} key {key:?}{hint}"));
    }
    match path.is_empty() {
        true => Error::invalid(plain(&message)),
        false => Error::invalid(format!("{}: {}", path.join("."), plain(&message))),
    }
}

/// serde's Rust type names in messages, in the words of the JSON a host writes.
fn plain(message: &str) -> String {
    let mut m = message.to_string();
    for (rust, json) in [
        ("expected u64", "expected a non-negative integer"),
        ("expected u32", "expected a non-negative integer below 2^32"),
        ("expected u16", "expected an integer from 0 to 65535"),
        ("expected a boolean", "expected true or false"),
        ("expected a map", "expected a JSON object"),
        ("expected a sequence", "expected an array"),
        ("invalid type: map", "invalid type: object"),
        ("invalid type: sequence", "invalid type: array"),
    ] {
        m = m.replace(rust, json);
    }
    m
}

#[cfg(feature = "schema")]
/// The JSON Schema (draft 2020-12) of the configuration, from the types in [`super`]. It
/// lists each key's non-null form: null, which the parser takes as "absent", is left out so
/// the bindings' type hints say "omit the key" rather than "null".
pub fn schema() -> Value {
    let mut schema = schemars::schema_for!(Config).to_value();
    drop_null(&mut schema);
    schema
}

#[cfg(feature = "schema")]
/// `"type": ["string", "null"]` → `"type": "string"`; `"anyOf": [{"$ref": ..}, {"type": "null"}]`
/// → `"$ref": ..`; everywhere in the schema.
fn drop_null(schema: &mut Value) {
    match schema {
        Value::Object(obj) => {
            if let Some(Value::Array(types)) = obj.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    obj.insert("type".into(), only);
                }
            }
            let is_null = |v: &Value| v.get("type").is_some_and(|t| t == "null");
            if let Some(Value::Array(alts)) = obj.get_mut("anyOf") {
                alts.retain(|a| !is_null(a));
                if alts.len() == 1 {
                    if let Some(Value::Object(only)) = alts.pop() {
                        obj.remove("anyOf");
                        obj.extend(only);
                    }
                }
            }
            obj.values_mut().for_each(drop_null);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null),
        _ => {}
    }
}

#[cfg(feature = "schema")]
/// The keys of the top-level object, and of each nested settings object by its key (from the
/// schema, so the fuzzer and the docs follow new keys).
pub fn keys() -> Vec<(String, Vec<String>)> {
    let schema = schema();
    let props = |s: &Value| -> Vec<String> {
        s["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    };
    let mut out = vec![(String::new(), props(&schema))];
    for (key, prop) in schema["properties"].as_object().into_iter().flatten() {
        if let Some(def) = super::parse::nested_def(&schema, prop) {
            out.push((key.clone(), props(def)));
        }
    }
    out
}

#[cfg(feature = "schema")]
/// The definition a property refers to when it is a settings object.
fn nested_def<'a>(schema: &'a Value, prop: &'a Value) -> Option<&'a Value> {
    let reference = prop["$ref"]
        .as_str()
        .or_else(|| prop["anyOf"].as_array()?.iter().find_map(|alt| alt["$ref"].as_str()))?;
    let def = &schema["$defs"][reference.strip_prefix("#/$defs/")?];
    def.get("properties").map(|_| def)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    #[cfg(feature = "schema")]
    fn nested_lists_the_settings_objects() {
        let nested: Vec<String> = keys().into_iter().skip(1).map(|(k, _)| k).collect();
        assert_eq!(nested, NESTED);
    }

    #[test]
    fn errors_name_the_key() {
        let err = |v: Value| parse(&v).unwrap_err().message().to_string();
        assert_eq!(
            err(json!({"comand": "x"})),
            "unknown configuration key \"comand\"; did you mean \"command\"?"
        );
        assert_eq!(
            err(json!({"command": "x", "request_timeout": 5})),
            "unknown configuration key \"request_timeout\"; did you mean \"request_timeout_ms\"?"
        );
        assert_eq!(
            err(json!({"command": "x", "reconnect": {"max_attempt": 1}})),
            "unknown reconnect key \"max_attempt\"; did you mean \"max_attempts\"?"
        );
        assert_eq!(
            err(json!({"url": "x", "oauth": {"client_ids": "a"}})),
            "unknown oauth key \"client_ids\"; did you mean \"client_id\"?"
        );
        assert_eq!(
            err(json!({"command": "x", "reconnect": {"tries": 1}})),
            "unknown reconnect key \"tries\""
        );
        assert_eq!(
            err(json!({"url": "x", "oauth": {"client": 1}})),
            "unknown oauth key \"client\"; did you mean \"client_id\"?"
        );
        let m = err(json!({"command": "x", "request_timeout_ms": "5"}));
        assert!(m.starts_with("request_timeout_ms: invalid type: string"), "{m}");
        assert!(m.contains("non-negative integer"), "{m}");
        let m = err(json!({"url": "x", "oauth": {"client_id": 5}}));
        assert!(
            m.starts_with("oauth.client_id: invalid type: number, expected a string"),
            "{m}"
        );
        let m = err(json!({"url": "x", "headers": {"X-A": 1}}));
        assert!(m.starts_with("headers.X-A: "), "{m}");
        let m = err(json!({"command": "x", "mode": "fast"}));
        assert!(m.starts_with("mode: unknown variant `fast`"), "{m}");
        let m = err(json!({"url": "x", "oauth": {"scopes": 5}}));
        assert!(
            m.contains("oauth.scopes: ") && m.contains("array of scope strings"),
            "{m}"
        );
        assert_eq!(err(json!([1])), "the configuration must be a JSON object");
    }

    #[test]
    fn null_is_absent_in_settings_objects_only() {
        let c = parse(&json!({"command": "x", "args": null, "reconnect": {"max_attempts": null}})).unwrap();
        assert_eq!(
            c.reconnect.unwrap().max_attempts,
            super::super::defaults::RECONNECT_MAX_ATTEMPTS
        );
        assert!(parse(&json!({"url": "x", "headers": {"X-A": null}})).is_err());
    }
}
