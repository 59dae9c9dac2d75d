//! Arguments of a call: `key=value` pairs typed from the input schema, or a JSON object.

use crate::exit::Failure;
use serde_json::{Map, Value};
use std::io::Read;

/// The arguments object from `--args` (JSON text, `-` for stdin) and `key=value` pairs.
/// `schema` types each value; without one (or for prompts: `None`) values stay strings.
pub fn arguments(pairs: &[String], args: Option<&str>, schema: Option<&Value>) -> Result<Option<Value>, Failure> {
    let mut out = match args {
        None => Map::new(),
        Some(text) => {
            let text = if text == "-" {
                let mut s = String::new();
                std::io::stdin()
                    .read_to_string(&mut s)
                    .map_err(|e| Failure::usage(format!("--args -: cannot read stdin: {e}")))?;
                s
            } else {
                text.to_string()
            };
            match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(m)) => m,
                Ok(_) => return Err(Failure::usage("--args: not a JSON object")),
                Err(e) => return Err(Failure::usage(format!("--args: not JSON: {e}"))),
            }
        }
    };
    for pair in pairs {
        let (key, raw) = pair
            .split_once('=')
            .ok_or_else(|| Failure::usage(format!("`{pair}`: arguments are key=value")))?;
        let prop = schema.and_then(|s| s["properties"].get(key));
        let value = match schema {
            None => Value::String(raw.to_string()),
            Some(_) => typed(key, raw, prop)?,
        };
        out.insert(key.to_string(), value);
    }
    if args.is_none() && pairs.is_empty() {
        return Ok(None);
    }
    Ok(Some(Value::Object(out)))
}

/// `raw` as the property's type; a property without a type takes JSON when it parses.
fn typed(key: &str, raw: &str, prop: Option<&Value>) -> Result<Value, Failure> {
    let kinds: Vec<&str> = match prop.map(|p| &p["type"]) {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    let json = serde_json::from_str::<Value>(raw).ok();
    let fits = |v: &Value| {
        kinds.iter().any(|k| match *k {
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "boolean" => v.is_boolean(),
            "object" => v.is_object(),
            "array" => v.is_array(),
            "null" => v.is_null(),
            _ => false,
        })
    };
    if kinds.is_empty() {
        return Ok(json.unwrap_or_else(|| Value::String(raw.to_string())));
    }
    if let Some(v) = json.filter(|v| fits(v)) {
        return Ok(v);
    }
    if kinds.contains(&"string") {
        return Ok(Value::String(raw.to_string()));
    }
    Err(Failure::usage(format!(
        "{key}={raw}: the tool's schema wants {}",
        kinds.join(" or ")
    )))
}
