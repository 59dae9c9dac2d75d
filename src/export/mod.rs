//! Tools for the model: a tool list exported to the OpenAI (Chat Completions, Responses),
//! Anthropic Messages and Gemini function-calling formats, and the model's tool calls routed
//! back (`dispatch`). Sits above `client`, below `ffi`.
//!
//! The input is a plain tool list (`tools/list`'s `tools`, or a hub's merged catalogue) with an
//! optional map from listed names to `(server, tool)`; the output keeps everything dispatch
//! needs (names back to tools, the original input schemas, which tools went out strict), so it
//! can be stored as JSON and handed back later.
//!
//! ```
//! use mcp_client::export::{export_tools, Dispatcher, ExportOptions, Format};
//! use serde_json::json;
//!
//! let tools = json!({"tools": [{"name": "add", "inputSchema": {"type": "object",
//!     "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}}]});
//! let exported = export_tools(&tools, None, &ExportOptions::new(Format::Anthropic)).unwrap();
//! assert_eq!(exported.tools[0]["input_schema"]["required"], json!(["a", "b"])); // to the API
//! let dispatcher = Dispatcher::new(exported);
//! let reply = json!({"role": "assistant", "content": [
//!     {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1}}]});
//! let calls = dispatcher.calls(&reply).unwrap();
//! // Arguments are checked before any call; `dispatch(&client, &calls[0], ..)` would answer
//! // the model with this text in a `tool_result` block (`is_error: true`).
//! let refusal = dispatcher.check(&calls[0]).unwrap_err();
//! assert!(refusal.contains("required property \"b\" is missing"));
//! ```

mod calls;
mod dispatch;
mod gemini;
mod names;
mod notes;
mod results;
mod schema;
mod strict;
mod walk;

pub use calls::{find as find_calls, ToolCall};
pub use dispatch::{Dispatcher, ToolCaller};
pub use notes::{Note, ToolReport};
pub use results::ResultOptions;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

/// A model API's function-calling format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Format {
    /// OpenAI Chat Completions: `{"type": "function", "function": {name, description, parameters, strict}}`.
    #[default]
    #[serde(rename = "openai-chat")]
    ChatCompletions,
    /// OpenAI Responses: `{"type": "function", name, description, parameters, strict}`.
    #[serde(rename = "openai-responses")]
    Responses,
    /// Anthropic Messages: `{name, description, input_schema}`.
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Gemini `functionDeclarations`: `{name, description, parametersJsonSchema}` (or the legacy
    /// `parameters`, see [`ExportOptions::gemini_legacy_parameters`]).
    #[serde(rename = "gemini")]
    Gemini,
}

impl Format {
    /// The name used in JSON options (`"openai-chat"`, `"openai-responses"`, `"anthropic"`, `"gemini"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Format::ChatCompletions => "openai-chat",
            Format::Responses => "openai-responses",
            Format::Anthropic => "anthropic",
            Format::Gemini => "gemini",
        }
    }
}

/// How tools are exported. JSON form: `{"format": "anthropic", "strict": true, …}`, every key
/// optional.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExportOptions {
    /// The target format (default OpenAI Chat Completions).
    pub format: Format,
    /// OpenAI formats: export in strict mode where the schema allows it (default false).
    pub strict: bool,
    /// Gemini: the legacy OpenAPI-subset `parameters` instead of `parametersJsonSchema`.
    pub gemini_legacy_parameters: bool,
    /// Put the tool's title in front of its description.
    pub describe_title: bool,
    /// Add the read-only, destructive and idempotent hints to the description.
    pub describe_annotations: bool,
    /// Formats that need `$ref`s inlined: how deep a chain of references may go (default 8).
    pub max_ref_depth: usize,
}

impl Default for ExportOptions {
    fn default() -> ExportOptions {
        ExportOptions {
            format: Format::ChatCompletions,
            strict: false,
            gemini_legacy_parameters: false,
            describe_title: false,
            describe_annotations: false,
            max_ref_depth: 8,
        }
    }
}

impl ExportOptions {
    /// Options for `format`, the rest default.
    pub fn new(format: Format) -> ExportOptions {
        ExportOptions {
            format,
            ..ExportOptions::default()
        }
    }
}

/// Where an exported name leads: a server's tool, and what dispatch checks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Route {
    /// The server (a hub's member name); absent for a single client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The tool's name on that server.
    pub tool: String,
    /// Exported in OpenAI strict mode (dispatch then drops the `null`s strict mode asks for).
    #[serde(default)]
    pub strict: bool,
    /// The tool's original input schema: arguments are checked against it.
    #[serde(rename = "inputSchema", default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
}

/// A tool list in one format, with the routes back and the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Exported {
    /// The format of `tools`.
    pub format: Format,
    /// The tool entries to send to the API (for Gemini, the `functionDeclarations` list).
    pub tools: Vec<Value>,
    /// Exported name → where it leads.
    pub routes: BTreeMap<String, Route>,
    /// Per tool, what was rewritten, what could not be expressed, what was refused (written
    /// out, not read back: dispatch does not need it).
    #[serde(skip_deserializing)]
    pub report: Vec<ToolReport>,
}

/// A listed name's server and tool, as a hub's merged catalogue gives them.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Origin {
    /// The server the tool belongs to.
    #[serde(default)]
    pub server: Option<String>,
    /// The tool's name on that server.
    pub tool: String,
}

/// Exports `tools` (a `tools/list` result, or its `tools` array) in the format `opts` names.
/// `origins` maps a listed name to its server and tool (a hub's namespaced names:
/// `crate::hub::origins`); without an entry, the listed name is the tool's own. A tool whose
/// schema cannot be put in the format is left out and its report says why; a list that is not
/// a list of tools is an error.
pub fn export_tools(
    tools: &Value,
    origins: Option<&HashMap<String, Origin>>,
    opts: &ExportOptions,
) -> Result<Exported, String> {
    let list = match tools {
        Value::Array(list) => list,
        Value::Object(m) => m
            .get("tools")
            .and_then(Value::as_array)
            .ok_or("the tool list is an object without a \"tools\" array")?,
        _ => return Err("the tool list is neither an array nor an object with \"tools\"".into()),
    };
    let mut out = Exported {
        format: opts.format,
        tools: Vec::new(),
        routes: BTreeMap::new(),
        report: Vec::new(),
    };
    let mut taken = HashSet::new();
    for (i, tool) in list.iter().enumerate() {
        let name = tool
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("tool {i} has no name"))?;
        let mut report = ToolReport {
            tool: name.to_string(),
            ..ToolReport::default()
        };
        if let Some(why) = hidden_from_model(tool) {
            report.refused = Some(why);
            out.report.push(report);
            continue;
        }
        let original = tool.get("inputSchema");
        let (schema, strict) = match schema::rewrite(original, opts, &mut report) {
            Ok(done) => done,
            Err(why) => {
                report.refused = Some(why);
                out.report.push(report);
                continue;
            }
        };
        let exported = names::unique(name, opts.format, &|n| taken.contains(n)).ok_or("no free name for a tool")?;
        if exported != name {
            report.rewrite("", format!("name {name:?} exported as {exported:?}"));
        }
        taken.insert(exported.clone());
        let description = schema::description(tool, opts, &mut report);
        out.tools.push(entry(opts, &exported, description, schema, strict));
        let origin = origins.and_then(|o| o.get(name));
        out.routes.insert(
            exported.clone(),
            Route {
                server: origin.and_then(|o| o.server.clone()),
                tool: origin.map_or_else(|| name.to_string(), |o| o.tool.clone()),
                strict: strict == Some(true),
                input_schema: original.cloned(),
            },
        );
        report.exported_name = Some(exported);
        report.strict = strict;
        out.report.push(report);
    }
    Ok(out)
}

/// MCP Apps: a tool whose `_meta.ui.visibility` leaves out `"model"` is for the app only.
fn hidden_from_model(tool: &Value) -> Option<String> {
    (!crate::apps::model_may_call(tool))
        .then(|| "its _meta.ui.visibility does not include \"model\" (an app-only tool)".to_string())
}

/// One tool entry in the format's shape.
fn entry(opts: &ExportOptions, name: &str, description: Option<String>, schema: Value, strict: Option<bool>) -> Value {
    let mut m = Map::new();
    if opts.format == Format::Responses {
        m.insert("type".into(), json!("function"));
    }
    m.insert("name".into(), json!(name));
    if let Some(d) = description {
        m.insert("description".into(), json!(d));
    }
    let key = match opts.format {
        Format::ChatCompletions | Format::Responses => "parameters",
        Format::Anthropic => "input_schema",
        Format::Gemini if opts.gemini_legacy_parameters => "parameters",
        Format::Gemini => "parametersJsonSchema",
    };
    m.insert(key.into(), schema);
    if let Some(strict) = strict {
        m.insert("strict".into(), json!(strict));
    }
    match opts.format {
        Format::ChatCompletions => json!({"type": "function", "function": Value::Object(m)}),
        _ => Value::Object(m),
    }
}

impl Exported {
    /// The exported list as JSON text's value: `{format, tools, routes, report}`.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Reads back what [`Exported::to_value`] wrote.
    pub fn from_value(value: &Value) -> Result<Exported, String> {
        Exported::deserialize(value).map_err(|e| format!("not an exported tool list: {e}"))
    }
}

#[cfg(test)]
mod tests;
