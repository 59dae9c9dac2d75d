//! Output schema validation: a `tools/call` result's `structuredContent` is checked against the
//! `outputSchema` the tool declared in the last `tools/list` (JSON Schema 2020-12 unless the
//! schema names another draft). A failure is `ErrorKind::OutputSchemaInvalid` carrying the
//! validation message and the raw result.
//!
//! Schemas are compiled on first use (`json_schema`, this crate's small validator) and kept
//! until the next first page of `tools/list` replaces the set. `$ref`s resolve only inside the
//! schema: any other is refused, so validation never touches the network or the file system.

use super::json_schema::Schema;
use crate::error::{Error, ErrorKind, Result};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

/// At most this many validation errors are quoted in the message.
const MAX_QUOTED: usize = 5;

/// One tool's declared output schema, compiled on first use.
struct Declared {
    schema: Value,
    compiled: OnceLock<std::result::Result<Schema, String>>,
}

#[derive(Default)]
struct State {
    /// A `tools/list` answer has been seen since the client was made.
    known: bool,
    tools: HashMap<String, Arc<Declared>>,
}

/// The output schemas of the tools the last `tools/list` named.
#[derive(Default)]
pub(crate) struct ToolSchemas {
    state: RwLock<State>,
}

#[derive(Deserialize)]
struct Page {
    #[serde(default)]
    tools: Vec<Tool>,
}

#[derive(Deserialize)]
struct Tool {
    name: String,
    #[serde(rename = "outputSchema")]
    output_schema: Option<Value>,
}

/// Whether a result's JSON text has a top-level `structuredContent` (read without building it).
pub(crate) fn has_structured_content(json: &str) -> bool {
    #[derive(Deserialize)]
    struct Probe {
        #[serde(rename = "structuredContent")]
        structured: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_str::<Probe>(json).is_ok_and(|p| p.structured.is_some())
}

impl ToolSchemas {
    /// Whether tool `name` declared an output schema in the last listing.
    pub fn declares(&self, name: &str) -> bool {
        self.state.read().unwrap().tools.contains_key(name)
    }

    /// Whether any `tools/list` answer has been seen.
    pub fn known(&self) -> bool {
        self.state.read().unwrap().known
    }

    /// Records one `tools/list` page (`json`, the result's text); the first page (no cursor)
    /// replaces what earlier listings declared.
    pub fn absorb(&self, json: &[u8], first_page: bool) {
        let Ok(page) = serde_json::from_slice::<Page>(json) else {
            return; // a malformed listing declares nothing; the caller gets it as it is
        };
        let mut state = self.state.write().unwrap();
        if first_page {
            state.tools.clear();
        }
        state.known = true;
        for tool in page.tools {
            match tool.output_schema {
                Some(schema) if !schema.is_null() => {
                    let declared = Declared {
                        schema,
                        compiled: OnceLock::new(),
                    };
                    state.tools.insert(tool.name, Arc::new(declared));
                }
                _ => {
                    state.tools.remove(&tool.name);
                }
            }
        }
    }

    /// Checks a complete `tools/call` result of tool `name`. Tools without a declared schema,
    /// and results with `isError: true`, pass.
    pub fn check(&self, name: &str, result: &Value) -> Result<()> {
        let Some(declared) = self.state.read().unwrap().tools.get(name).cloned() else {
            return Ok(());
        };
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            return Ok(());
        }
        let fail = |why: String| {
            Err(Error::new(
                ErrorKind::OutputSchemaInvalid,
                format!("the result of tool {}: {why}", crate::untrusted::shown(name)),
            )
            .with_result(result.clone()))
        };
        let Some(structured) = result.get("structuredContent") else {
            return fail("the tool declares an outputSchema but returned no structuredContent".into());
        };
        let compiled = declared.compiled.get_or_init(|| Schema::compile(&declared.schema));
        let validator = match compiled {
            Ok(v) => v,
            Err(why) => return fail(format!("its outputSchema is not a usable JSON Schema: {why}")),
        };
        let errors = validator.errors(structured, MAX_QUOTED + 1);
        if errors.is_empty() {
            return Ok(());
        }
        let more = if errors.len() > MAX_QUOTED { "; …" } else { "" };
        let quoted: Vec<&str> = errors.iter().take(MAX_QUOTED).map(String::as_str).collect();
        fail(format!(
            "structuredContent does not match the tool's outputSchema: {}{more}",
            crate::untrusted::shown(&quoted.join("; "))
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn listed(tools: Value) -> ToolSchemas {
        let s = ToolSchemas::default();
        s.absorb(json!({ "tools": tools }).to_string().as_bytes(), true);
        s
    }

    #[test]
    fn checks_structured_content_against_the_declared_schema() {
        let s = listed(json!([
            {"name": "add", "inputSchema": {"type": "object"},
             "outputSchema": {"type": "object", "properties": {"result": {"type": "number"}}, "required": ["result"]}},
            {"name": "plain", "inputSchema": {"type": "object"}}
        ]));
        assert!(s.known());
        assert!(s
            .check("add", &json!({"content": [], "structuredContent": {"result": 5}}))
            .is_ok());
        let e = s
            .check("add", &json!({"content": [], "structuredContent": {"result": "five"}}))
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::OutputSchemaInvalid);
        assert!(e.message().contains("/result"), "{}", e.message());
        assert_eq!(e.result().unwrap()["structuredContent"]["result"], "five");
        let e = s.check("add", &json!({"content": []})).unwrap_err();
        assert!(e.message().contains("no structuredContent"));
        // Tool errors and tools without a schema pass.
        assert!(s.check("add", &json!({"content": [], "isError": true})).is_ok());
        assert!(s.check("plain", &json!({"structuredContent": 1})).is_ok());
        assert!(s.check("unknown", &json!({"structuredContent": 1})).is_ok());
    }

    #[test]
    fn a_new_first_page_replaces_the_set() {
        let s = listed(json!([{"name": "t", "outputSchema": {"type": "string"}}]));
        assert!(s.check("t", &json!({"structuredContent": 1})).is_err());
        s.absorb(br#"{"tools":[{"name":"t"}]}"#, true);
        assert!(s.check("t", &json!({"structuredContent": 1})).is_ok());
    }

    #[test]
    fn refs_resolve_locally_and_never_remotely() {
        let s = listed(json!([
            {"name": "local", "outputSchema": {"$defs": {"n": {"type": "integer"}}, "$ref": "#/$defs/n"}},
            {"name": "remote", "outputSchema": {"$ref": "http://127.0.0.1:9/schema.json"}}
        ]));
        assert!(s.check("local", &json!({"structuredContent": 3})).is_ok());
        assert!(s.check("local", &json!({"structuredContent": "x"})).is_err());
        let e = s.check("remote", &json!({"structuredContent": 3})).unwrap_err();
        assert!(e.message().contains("not a usable JSON Schema"), "{}", e.message());
    }
}
