//! Capability enforcement for modern MRTR rounds, as the official SDK servers do it: an input
//! request the request's `clientCapabilities` do not declare is not asked; the request gets
//! -32021 with the capabilities it needs (`--lax-capabilities` turns this off).

use crate::wire::{RpcError, MISSING_CAPABILITY};
use serde_json::{json, Map, Value};

/// The capability object an input request needs, or `None` when `caps` declare it.
fn needed(caps: &Map<String, Value>, request: &Value) -> Option<Value> {
    let method = request.get("method").and_then(Value::as_str)?;
    match method {
        "elicitation/create" => {
            let declared = caps.get("elicitation").and_then(Value::as_object);
            let url = request
                .get("params")
                .and_then(|p| p.get("mode"))
                .and_then(Value::as_str)
                == Some("url");
            let ok = match declared {
                None => false,
                // `elicitation: {}` means form mode only.
                Some(e) if url => e.contains_key("url"),
                Some(e) => e.is_empty() || e.contains_key("form"),
            };
            (!ok).then(|| match url {
                true => json!({"elicitation": {"url": {}}}),
                false => json!({"elicitation": {}}),
            })
        }
        "sampling/createMessage" if offers_tools(request) => {
            let declared = caps.get("sampling").is_some_and(|s| s.get("tools").is_some());
            (!declared).then(|| json!({"sampling": {"tools": {}}}))
        }
        "sampling/createMessage" => (!caps.contains_key("sampling")).then(|| json!({"sampling": {}})),
        "roots/list" => (!caps.contains_key("roots")).then(|| json!({"roots": {}})),
        _ => None,
    }
}

/// Whether a sampling request offers tools (SEP-1577: needs `sampling.tools`).
pub fn offers_tools(request: &Value) -> bool {
    request
        .get("params")
        .is_some_and(|p| p.get("tools").is_some() || p.get("toolChoice").is_some())
}

/// -32021 for the first input request of a round that `caps` do not declare.
pub fn undeclared(caps: &Map<String, Value>, requests: &[(String, Value)]) -> Option<RpcError> {
    let required = requests.iter().find_map(|(_, r)| needed(caps, r))?;
    let what = required
        .as_object()
        .and_then(|o| o.keys().next().cloned())
        .unwrap_or_default();
    Some(
        RpcError::new(
            MISSING_CAPABILITY,
            format!("Server requires the {what} capability for this request"),
        )
        .with_data(json!({"requiredCapabilities": required})),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_ask_only_for_declared_input() {
        let form = json!({"method": "elicitation/create", "params": {"mode": "form"}});
        let url = json!({"method": "elicitation/create", "params": {"mode": "url"}});
        let caps = |v: Value| v.as_object().cloned().unwrap();
        assert!(needed(&caps(json!({"elicitation": {}})), &form).is_none());
        assert!(needed(&caps(json!({"elicitation": {"url": {}}})), &form).is_some());
        assert_eq!(
            needed(&caps(json!({"elicitation": {"form": {}}})), &url),
            Some(json!({"elicitation": {"url": {}}}))
        );
        assert!(needed(&caps(json!({})), &json!({"method": "roots/list"})).is_some());
        let err = undeclared(&caps(json!({})), &[("k".into(), form)]).unwrap();
        assert_eq!(err.code, MISSING_CAPABILITY);
    }
}
