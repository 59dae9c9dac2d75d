//! The model's tool calls, read from each API's own shape.

use super::Format;
use serde_json::Value;

/// One tool call the model asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The call's id (Chat `id`, Responses `call_id`, Anthropic `id`, Gemini `id` when given):
    /// the result message answers it.
    pub id: Option<String>,
    /// The exported tool name the model used.
    pub name: String,
    /// The arguments object (an empty object when the model sent none).
    pub arguments: Value,
    /// Why the arguments could not be read (Chat and Responses send them as JSON text, which
    /// the model may get wrong); the call is then answered with this as an error result.
    pub arguments_error: Option<String>,
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// Arguments given as JSON text (Chat, Responses) or as an object.
fn arguments(v: Option<&Value>) -> (Value, Option<String>) {
    match v {
        None | Some(Value::Null) => (Value::Object(Default::default()), None),
        Some(Value::String(s)) if s.trim().is_empty() => (Value::Object(Default::default()), None),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => (v, None),
            Ok(_) => (Value::Null, Some("the arguments are not a JSON object".into())),
            Err(e) => (Value::Null, Some(format!("the arguments are not valid JSON: {e}"))),
        },
        Some(v @ Value::Object(_)) => (v.clone(), None),
        Some(_) => (Value::Null, Some("the arguments are not a JSON object".into())),
    }
}

impl ToolCall {
    /// Reads one call in `format`'s shape: a Chat `tool_calls[i]` entry, a Responses
    /// `function_call` item, an Anthropic `tool_use` block, a Gemini `functionCall` part (or
    /// the `functionCall` object itself).
    pub fn parse(format: Format, call: &Value) -> Result<ToolCall, String> {
        let (id, name, args) = match format {
            Format::ChatCompletions => {
                let f = call.get("function").ok_or("a Chat tool call has no \"function\"")?;
                (text(call, "id"), text(f, "name"), f.get("arguments"))
            }
            Format::Responses => {
                if call.get("type").and_then(Value::as_str) != Some("function_call") {
                    return Err("a Responses tool call is an item of type \"function_call\"".into());
                }
                (text(call, "call_id"), text(call, "name"), call.get("arguments"))
            }
            Format::Anthropic => {
                if call.get("type").and_then(Value::as_str) != Some("tool_use") {
                    return Err("an Anthropic tool call is a content block of type \"tool_use\"".into());
                }
                (text(call, "id"), text(call, "name"), call.get("input"))
            }
            Format::Gemini => {
                let f = call.get("functionCall").unwrap_or(call);
                (text(f, "id"), text(f, "name"), f.get("args"))
            }
        };
        let name = name.ok_or("the tool call has no name")?;
        let (arguments, arguments_error) = self::arguments(args);
        Ok(ToolCall {
            id,
            name,
            arguments,
            arguments_error,
        })
    }

    /// Every call in a model's reply: a single call, a list of calls or items, or the message
    /// holding them (Chat `message.tool_calls` or a whole completion's `choices`, Responses
    /// `output`, Anthropic `content`, Gemini `parts`, `content.parts` or `candidates`).
    pub fn all_in(format: Format, reply: &Value) -> Result<Vec<ToolCall>, String> {
        find(format, reply)
            .into_iter()
            .map(|c| ToolCall::parse(format, c))
            .collect()
    }
}

/// The call objects in a model's reply, as they are (see [`ToolCall::all_in`]).
pub fn find(format: Format, reply: &Value) -> Vec<&Value> {
    let mut found = Vec::new();
    collect(format, reply, &mut found, 0);
    found
}

fn is_call(format: Format, v: &Value) -> bool {
    match format {
        Format::ChatCompletions => v.get("function").is_some(),
        Format::Responses => v.get("type").and_then(Value::as_str) == Some("function_call"),
        Format::Anthropic => v.get("type").and_then(Value::as_str) == Some("tool_use"),
        Format::Gemini => v.get("functionCall").is_some(),
    }
}

fn collect<'a>(format: Format, v: &'a Value, out: &mut Vec<&'a Value>, depth: usize) {
    if depth > 8 {
        return;
    }
    if is_call(format, v) {
        out.push(v);
        return;
    }
    match v {
        Value::Array(list) => list.iter().for_each(|x| collect(format, x, out, depth + 1)),
        Value::Object(m) => {
            let holders: &[&str] = match format {
                Format::ChatCompletions => &["tool_calls", "message", "choices"],
                Format::Responses => &["output"],
                Format::Anthropic => &["content"],
                Format::Gemini => &["parts", "content", "candidates"],
            };
            holders
                .iter()
                .filter_map(|k| m.get(*k))
                .for_each(|x| collect(format, x, out, depth + 1))
        }
        _ => {}
    }
}
