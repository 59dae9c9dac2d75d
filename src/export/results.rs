//! A `CallToolResult` (or a failed call) as each API's tool-result message.

use super::calls::ToolCall;
use super::Format;
use serde::Deserialize;
use serde_json::{json, Map, Value};

/// How results are turned into the API's tool-result messages, and what dispatch does with
/// errors. JSON form: `{"max_chars": 20000, "resources_as_text": true, …}`, every key optional.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ResultOptions {
    /// Most characters of text a result carries; the rest is cut, and a line says so.
    pub max_chars: Option<usize>,
    /// Resource links and embedded resources as text (default true; false leaves them out).
    pub resources_as_text: bool,
    /// Images as image blocks where the format takes them (Anthropic, Responses; default
    /// true); elsewhere, or when false, a line of text names them.
    pub images: bool,
    /// Tool errors, protocol errors and timeouts become results the model reads (default
    /// true); false: dispatch returns them as errors to the host (a tool's own `isError`
    /// result stays a result).
    pub errors_as_results: bool,
    /// Dispatch: the call's timeout in milliseconds (default: the client's).
    pub timeout_ms: Option<u64>,
}

impl Default for ResultOptions {
    fn default() -> ResultOptions {
        ResultOptions {
            max_chars: None,
            resources_as_text: true,
            images: true,
            errors_as_results: true,
            timeout_ms: None,
        }
    }
}

enum Piece {
    Text(String),
    Image { mime: String, data: String },
}

/// Media types an Anthropic image block takes.
const ANTHROPIC_IMAGES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];

fn field<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn pieces(result: &Value, format: Format, opts: &ResultOptions) -> Vec<Piece> {
    let images = opts.images && matches!(format, Format::Anthropic | Format::Responses);
    let mut out = Vec::new();
    for block in result.get("content").and_then(Value::as_array).into_iter().flatten() {
        match field(block, "type") {
            "text" => out.push(Piece::Text(field(block, "text").to_string())),
            "image" => {
                let mime = field(block, "mimeType").to_string();
                let data = field(block, "data").to_string();
                if images && (format != Format::Anthropic || ANTHROPIC_IMAGES.contains(&mime.as_str())) {
                    out.push(Piece::Image { mime, data });
                } else {
                    out.push(Piece::Text(format!(
                        "[image {mime}, {} bytes, not shown]",
                        decoded_len(&data)
                    )));
                }
            }
            "audio" => out.push(Piece::Text(format!("[audio {}, not shown]", field(block, "mimeType")))),
            "resource_link" if opts.resources_as_text => {
                let mut line = format!("[resource link: {} <{}>", field(block, "name"), field(block, "uri"));
                for key in ["mimeType", "description"] {
                    if let Some(v) = block.get(key).and_then(Value::as_str) {
                        line.push_str(&format!("; {v}"));
                    }
                }
                line.push(']');
                out.push(Piece::Text(line));
            }
            "resource" if opts.resources_as_text => {
                let r = block.get("resource").unwrap_or(&Value::Null);
                let uri = field(r, "uri");
                match r.get("text").and_then(Value::as_str) {
                    Some(text) => out.push(Piece::Text(format!("[resource <{uri}>]\n{text}"))),
                    None => out.push(Piece::Text(format!(
                        "[resource <{uri}>: {} binary, not shown]",
                        field(r, "mimeType")
                    ))),
                }
            }
            "resource_link" | "resource" => {}
            _ => out.push(Piece::Text(block.to_string())),
        }
    }
    let has_text = out.iter().any(|p| matches!(p, Piece::Text(_)));
    if !has_text {
        if let Some(structured) = result.get("structuredContent") {
            out.insert(0, Piece::Text(structured.to_string()));
        }
    }
    out
}

/// How many bytes Base64 text holds.
fn decoded_len(data: &str) -> usize {
    let padding = data.bytes().rev().take_while(|b| *b == b'=').count();
    (data.len() / 4 * 3).saturating_sub(padding)
}

/// Cuts the text pieces to `max` characters in all, with a line saying how much was shown.
fn truncate(pieces: &mut Vec<Piece>, max: Option<usize>) {
    let Some(max) = max else { return };
    let total: usize = pieces
        .iter()
        .map(|p| match p {
            Piece::Text(t) => t.chars().count(),
            Piece::Image { .. } => 0,
        })
        .sum();
    if total <= max {
        return;
    }
    let mut left = max;
    pieces.retain_mut(|p| match p {
        Piece::Image { .. } => true,
        Piece::Text(t) => {
            let n = t.chars().count();
            if n <= left {
                left -= n;
                true
            } else if left > 0 {
                let cut = t.char_indices().nth(left).map_or(t.len(), |(i, _)| i);
                t.truncate(cut);
                left = 0;
                true
            } else {
                false
            }
        }
    });
    pieces.push(Piece::Text(format!("[truncated: {max} of {total} characters shown]")));
}

fn joined(pieces: &[Piece]) -> String {
    pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Text(t) => Some(t.as_str()),
            Piece::Image { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a call came to: the server's `CallToolResult`, or an error the model should read.
pub(crate) enum Outcome<'a> {
    Result(&'a Value),
    Error(&'a str),
}

/// The API's tool-result message answering `call`.
pub(crate) fn message(format: Format, call: &ToolCall, outcome: Outcome<'_>, opts: &ResultOptions) -> Value {
    let (result, is_error) = match outcome {
        Outcome::Result(r) => (r.clone(), r.get("isError").and_then(Value::as_bool) == Some(true)),
        Outcome::Error(text) => (json!({"content": [{"type": "text", "text": text}]}), true),
    };
    let mut parts = pieces(&result, format, opts);
    truncate(&mut parts, opts.max_chars);
    let id = call.id.clone().unwrap_or_default();
    let text = joined(&parts);
    let flagged = if is_error {
        format!("Error: {text}")
    } else {
        text.clone()
    };
    match format {
        Format::ChatCompletions => json!({"role": "tool", "tool_call_id": id, "content": flagged}),
        Format::Responses => {
            let output = if parts.iter().any(|p| matches!(p, Piece::Image { .. })) {
                let mut items: Vec<Value> = Vec::new();
                if is_error {
                    items.push(json!({"type": "input_text", "text": "Error:"}));
                }
                for p in &parts {
                    items.push(match p {
                        Piece::Text(t) => json!({"type": "input_text", "text": t}),
                        Piece::Image { mime, data } => {
                            json!({"type": "input_image", "image_url": format!("data:{mime};base64,{data}")})
                        }
                    });
                }
                Value::Array(items)
            } else {
                json!(flagged)
            };
            json!({"type": "function_call_output", "call_id": id, "output": output})
        }
        Format::Anthropic => {
            let content: Vec<Value> = parts
                .iter()
                .filter(|p| !matches!(p, Piece::Text(t) if t.is_empty()))
                .map(|p| match p {
                    Piece::Text(t) => json!({"type": "text", "text": t}),
                    Piece::Image { mime, data } => {
                        json!({"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}})
                    }
                })
                .collect();
            let mut m = Map::new();
            m.insert("type".into(), json!("tool_result"));
            m.insert("tool_use_id".into(), json!(id));
            m.insert("content".into(), Value::Array(content));
            if is_error {
                m.insert("is_error".into(), json!(true));
            }
            Value::Object(m)
        }
        Format::Gemini => {
            let structured = result.get("structuredContent").filter(|s| s.is_object());
            let fits = |s: &Value| opts.max_chars.is_none_or(|max| s.to_string().chars().count() <= max);
            let response = match structured {
                _ if is_error => json!({"error": text}),
                Some(s) if fits(s) => s.clone(),
                _ => json!({"output": text}),
            };
            let mut f = Map::new();
            if let Some(id) = &call.id {
                f.insert("id".into(), json!(id));
            }
            f.insert("name".into(), json!(call.name));
            f.insert("response".into(), response);
            json!({"functionResponse": Value::Object(f)})
        }
    }
}
