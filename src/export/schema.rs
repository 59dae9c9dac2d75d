//! Per-format input schema rewriting: the rules every format shares, the top-level object,
//! Anthropic's top-level combinators. Gemini's legacy subset is `gemini`, OpenAI strict mode
//! `strict`.

use super::notes::ToolReport;
use super::walk::{child, walk};
use super::{ExportOptions, Format};
use serde_json::{json, Map, Value};

/// Keywords that only annotate (no value is refused for them): removing one changes no verdict.
pub(crate) const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "$anchor",
    "$dynamicAnchor",
    "$vocabulary",
    "title",
    "description",
    "default",
    "examples",
    "example",
    "readOnly",
    "writeOnly",
    "deprecated",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "format",
];

/// Whether removing keyword `key` changes no verdict.
pub(crate) fn is_annotation(key: &str) -> bool {
    ANNOTATIONS.contains(&key) || key.starts_with("x-") || key == "$defs" || key == "definitions"
}

/// The schema the model sees for a tool whose input schema is `original`, or why the tool
/// cannot be exported in this format. Returns the schema and, for OpenAI formats, whether it is
/// strict.
pub(crate) fn rewrite(
    original: Option<&Value>,
    opts: &ExportOptions,
    report: &mut ToolReport,
) -> Result<(Value, Option<bool>), String> {
    let mut schema = match original {
        Some(Value::Object(_)) => original.cloned().unwrap_or_default(),
        Some(Value::Bool(true)) | None => {
            report.rewrite("", "no input schema object: an object with no declared properties");
            json!({"type": "object", "properties": {}})
        }
        Some(other) => return Err(format!("the input schema is not an object but {other}")),
    };
    // Every subschema must be reachable within the depth bound before anything else runs.
    walk(&mut schema, "", 0, &mut |_, _, _| Ok(()))?;
    let format = opts.format;
    if format == Format::Anthropic {
        wrap_combinators(&mut schema, report);
    }
    object_root(&mut schema, report);
    match format {
        Format::Gemini if opts.gemini_legacy_parameters => {
            let mut legacy = super::gemini::inline_refs(&schema, opts.max_ref_depth)?;
            if legacy != schema {
                report.rewrite("", "every $ref inlined, $defs removed");
            }
            walk(&mut legacy, "", 0, &mut |node, at, _| {
                super::gemini::legacy_node(node, at, report);
                Ok(())
            })?;
            Ok((legacy, None))
        }
        Format::Gemini => {
            if let Some(s) = schema.as_object_mut() {
                if s.remove("$schema").is_some() {
                    report.rewrite("/$schema", "$schema removed");
                }
            }
            Ok((schema, None))
        }
        Format::ChatCompletions | Format::Responses if opts.strict => {
            let mut attempt = ToolReport::default();
            match super::strict::make_strict(&schema, &mut attempt) {
                Ok(strict) => {
                    report.rewrites.extend(attempt.rewrites);
                    report.not_expressed.extend(attempt.not_expressed);
                    Ok((strict, Some(true)))
                }
                Err(why) => {
                    report.rewrite("", format!("exported non-strict: {why}"));
                    Ok((schema, Some(false)))
                }
            }
        }
        Format::ChatCompletions | Format::Responses => Ok((schema, Some(false))),
        Format::Anthropic => Ok((schema, None)),
    }
}

/// The root declares `"type": "object"` (every API wants an object of arguments).
fn object_root(schema: &mut Value, report: &mut ToolReport) {
    let Some(s) = schema.as_object_mut() else { return };
    match s.get("type") {
        None => {
            s.insert("type".into(), json!("object"));
            report.rewrite("/type", "\"type\": \"object\" added at the top level");
        }
        Some(Value::Array(types)) if types.iter().any(|t| t == "object") => {
            s.insert("type".into(), json!("object"));
            report.rewrite(
                "/type",
                "top-level type array narrowed to \"object\" (arguments are an object)",
            );
        }
        _ => {}
    }
}

/// Anthropic refuses `anyOf`/`oneOf`/`allOf` at the top of `input_schema`: their branches'
/// properties are merged into one object. `allOf`'s `required` lists merge exactly; for `anyOf`
/// and `oneOf` a property is required when every branch requires it, and which branch must hold
/// is reported as not expressed (dispatch checks the original schema).
fn wrap_combinators(schema: &mut Value, report: &mut ToolReport) {
    let root_copy = schema.clone();
    let Some(s) = schema.as_object_mut() else { return };
    for key in ["allOf", "anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = s.remove(key) else {
            continue;
        };
        let at = format!("/{key}");
        let branches: Vec<Map<String, Value>> = branches
            .iter()
            .map(|b| resolve_local(&root_copy, b).as_object().cloned().unwrap_or_default())
            .collect();
        let mut props = s
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut required: Vec<Value> = s.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
        for (i, branch) in branches.iter().enumerate() {
            for (name, sub) in branch
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                if !props.contains_key(name) {
                    props.insert(name.clone(), sub.clone());
                }
            }
            for (k, _) in branch.iter() {
                let handled = matches!(k.as_str(), "properties" | "required" | "type");
                if !handled && !is_annotation(k) {
                    report.lost(
                        &child(&child(&at, &i.to_string()), k),
                        format!("{k} inside top-level {key}"),
                    );
                }
            }
        }
        let names = |b: &Map<String, Value>| -> Vec<Value> {
            b.get("required").and_then(Value::as_array).cloned().unwrap_or_default()
        };
        let merged: Vec<Value> = if key == "allOf" {
            branches.iter().flat_map(names).collect()
        } else {
            let first = branches.first().map(names).unwrap_or_default();
            first
                .into_iter()
                .filter(|n| branches.iter().all(|b| names(b).contains(n)))
                .collect()
        };
        for n in merged {
            if !required.contains(&n) {
                required.push(n);
            }
        }
        s.insert("properties".into(), Value::Object(props));
        if !required.is_empty() {
            s.insert("required".into(), Value::Array(required));
        }
        report.rewrite(
            &at,
            format!("top-level {key} merged into one object (Anthropic refuses it there)"),
        );
        if key != "allOf" && branches.len() > 1 {
            report.lost(&at, format!("top-level {key}: which branch the arguments must match"));
        }
    }
}

/// A `{"$ref": "#..."}` branch as the subschema it names (itself otherwise).
fn resolve_local<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(r) => crate::client::schema_ref(root, r).unwrap_or(node),
        None => node,
    }
}

/// The tool's description with its title and annotations when the options ask for them.
pub(crate) fn description(tool: &Value, opts: &ExportOptions, report: &mut ToolReport) -> Option<String> {
    let mut text = tool
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let annotations = tool.get("annotations");
    if opts.describe_title {
        let title = tool
            .get("title")
            .or_else(|| annotations.and_then(|a| a.get("title")))
            .and_then(Value::as_str);
        if let Some(title) = title.filter(|t| !t.is_empty()) {
            text = if text.is_empty() {
                title.to_string()
            } else {
                format!("{title}: {text}")
            };
            report.rewrite("", "title added to the description");
        }
    }
    if opts.describe_annotations {
        let hint = |k: &str| annotations.and_then(|a| a.get(k)).and_then(Value::as_bool);
        let mut said = Vec::new();
        if hint("readOnlyHint") == Some(true) {
            said.push("read-only");
        } else if hint("destructiveHint") == Some(true) {
            said.push("destructive");
        }
        if hint("idempotentHint") == Some(true) {
            said.push("idempotent");
        }
        if !said.is_empty() {
            let line = format!("({})", said.join(", "));
            text = if text.is_empty() {
                line
            } else {
                format!("{text}\n{line}")
            };
            report.rewrite("", "annotations added to the description");
        }
    }
    (!text.is_empty()).then_some(text)
}
