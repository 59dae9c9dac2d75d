//! The tool list and the non-interactive tools (interactive ones are flows).

use crate::flows;
use crate::listen::Event;
use crate::mrtr::{self, Target};
use crate::server::{server_info, ClientFail, Ctx, Era};
use crate::wire::{Reply, RpcError};
use serde_json::{json, Map, Number, Value};
use std::thread;
use std::time::Duration;

/// Largest `big` payload, to keep a typo from exhausting memory.
const BIG_MAX: u64 = 64 * 1024 * 1024;

pub fn text_result(text: &str) -> Map<String, Value> {
    let body = json!({"content": [{"type": "text", "text": text}]});
    body.as_object().cloned().unwrap_or_default()
}

pub fn error_result(text: &str) -> Map<String, Value> {
    let mut body = text_result(text);
    body.insert("isError".into(), json!(true));
    body
}

fn structured_result(text: &str, structured: Value) -> Map<String, Value> {
    let mut body = text_result(text);
    body.insert("structuredContent".into(), structured);
    body
}

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

fn props(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

fn tool(name: &str, description: &str, input_schema: Value) -> Value {
    json!({"name": name, "description": description, "inputSchema": input_schema})
}

/// A schema kept verbatim ($schema, $defs, additionalProperties:false).
fn schema_echo_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "item": {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "label": {"type": "string"}},
                "required": ["id"],
                "additionalProperties": false
            }
        },
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
            "note": {"type": "string"}
        },
        "additionalProperties": false
    })
}

/// The tool list, built once: calls look tools up here rather than rebuilding the list.
/// `tools/list`: the definitions, and the apps tools with `--apps`.
pub fn listed(ctx: &Ctx) -> Vec<Value> {
    let mut all = definitions();
    if ctx.srv.cfg.apps {
        all.extend(crate::apps::tools());
    }
    all
}

pub fn definitions_cached() -> &'static [Value] {
    static DEFS: std::sync::OnceLock<Vec<Value>> = std::sync::OnceLock::new();
    DEFS.get_or_init(definitions)
}

pub fn definitions() -> Vec<Value> {
    let string = json!({"type": "string"});
    let integer = json!({"type": "integer", "minimum": 0});
    vec![
        tool("echo", "Returns its text", props(json!({"text": string}), &["text"])),
        tool(
            "add",
            "Adds two numbers",
            props(json!({"a": {"type": "number"}, "b": {"type": "number"}}), &["a", "b"]),
        ),
        tool("echo_meta", "Returns the request's params._meta verbatim", no_args()),
        tool(
            "schema_echo",
            "Returns its arguments as structuredContent",
            schema_echo_schema(),
        ),
        tool("fail", "Returns a tool error result (isError)", no_args()),
        tool("rpc_error", "Answers with JSON-RPC error -32050", no_args()),
        tool("elicit_once", "One elicitation round: asks for a name", no_args()),
        tool("three_rounds", "Three elicitation rounds, one value each", no_args()),
        tool(
            "elicit_and_sample",
            "One round with an elicitation and a sampling request",
            no_args(),
        ),
        tool("roots", "One roots/list round", no_args()),
        tool("state_only", "Two state-only rounds", no_args()),
        tool("always_input", "Asks for input forever", no_args()),
        tool("no_state", "One elicitation round without requestState", no_args()),
        tool("no_result_type", "A result without resultType", no_args()),
        tool("bad_result_type", "A result with resultType \"bogus\"", no_args()),
        tool("sample_only", "One sampling round", no_args()),
        tool(
            "progress",
            "Sends progress notifications and one log message",
            props(json!({"steps": integer, "delay_ms": integer}), &[]),
        ),
        tool(
            "slow",
            "Sleeps ms milliseconds, then answers",
            props(json!({"ms": integer}), &["ms"]),
        ),
        tool("hang", "Never answers", no_args()),
        tool("crash", "Exits the server with status 7", no_args()),
        tool("garbage", "Writes a non-JSON line and never answers", no_args()),
        tool(
            "big",
            "Returns bytes 'x' characters",
            props(json!({"bytes": integer}), &["bytes"]),
        ),
        tool("notify", "Sends list_changed notifications", no_args()),
        tool(
            "touch",
            "Sends notifications/resources/updated for uri",
            props(json!({"uri": string}), &["uri"]),
        ),
        tool(
            "end_listens",
            "Ends every open subscriptions/listen with its result",
            no_args(),
        ),
        tool("ping_client", "Legacy: pings the client", no_args()),
        tool(
            "roots_changed_count",
            "How many notifications/roots/list_changed arrived",
            no_args(),
        ),
        tool("log_level", "The level last set by logging/setLevel", no_args()),
        tool(
            "cancelled_ids",
            "The requestIds of notifications/cancelled received",
            no_args(),
        ),
        tool(
            "headers_echo",
            "Returns the Mcp-Param-* headers it received (HTTP)",
            headers_echo_schema(),
        ),
        tool(
            "big_numbers",
            "Returns integers beyond 64 bits and a long decimal (also in this schema)",
            big_numbers(),
        ),
        typed_tool(),
        tool(
            "media",
            "Returns text, a 1x1 PNG image, a resource link and an embedded text resource",
            no_args(),
        ),
    ]
}

/// A 1x1 transparent PNG, Base64.
pub const PNG_1X1: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

fn media_result() -> Map<String, Value> {
    let body = json!({"content": [
        {"type": "text", "text": "a picture"},
        {"type": "image", "data": PNG_1X1, "mimeType": "image/png"},
        {"type": "resource_link", "uri": "fixture://static", "name": "static", "mimeType": "text/plain"},
        {"type": "resource", "resource": {"uri": "fixture://note", "mimeType": "text/plain", "text": "embedded note"}}
    ]});
    body.as_object().cloned().unwrap_or_default()
}

/// A tool declaring an `outputSchema` (`{"result": integer, or a string of digits}`, required):
/// its structuredContent is `{"result": value}`, so the argument decides whether the result
/// conforms; `omit: true` leaves structuredContent out.
fn typed_tool() -> Value {
    let mut t = tool(
        "typed",
        "Returns {\"result\": value} against an outputSchema requiring an integer result or a string of digits",
        props(json!({"value": {}, "omit": {"type": "boolean"}}), &["value"]),
    );
    t["outputSchema"] = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"result": {"$ref": "#/$defs/count"}},
        "required": ["result"],
        "$defs": {"count": {"anyOf": [{"type": "integer"}, {"type": "string", "pattern": "^[0-9]+$"}]}}
    });
    t
}

/// Numbers no f64 (or u64) holds exactly, as JSON text: 10^29-ish, 2^64 and a 22-digit fraction.
/// The fixture's serde_json keeps them digit for digit (`arbitrary_precision`).
const BIG_NUMBERS: &str = r#"{"type": "object", "properties": {"n": {"type": "integer",
    "maximum": 123456789012345678901234567890, "minimum": -18446744073709551616,
    "multipleOf": 1.000000000000000000001}}}"#;

fn big_numbers() -> Value {
    serde_json::from_str(BIG_NUMBERS).unwrap_or(Value::Null)
}

/// Three properties mirrored into `Mcp-Param-*` headers (SEP-2243), one not.
fn headers_echo_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "query": {"type": "string"}
        }
    })
}

fn arg_str<'a>(args: &'a Map<String, Value>, name: &str) -> Result<&'a str, RpcError> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params(format!("Invalid arguments: {name} must be a string")))
}

fn arg_u64(args: &Map<String, Value>, name: &str, default: Option<u64>, max: u64) -> Result<u64, RpcError> {
    let bad = || RpcError::invalid_params(format!("Invalid arguments: {name} must be an integer 0..={max}"));
    match (args.get(name), default) {
        (None, Some(d)) => Ok(d),
        (None, None) => Err(bad()),
        (Some(v), _) => v.as_u64().filter(|n| *n <= max).ok_or_else(bad),
    }
}

fn arg_number<'a>(args: &'a Map<String, Value>, name: &str) -> Result<&'a Number, RpcError> {
    match args.get(name) {
        Some(Value::Number(n)) => Ok(n),
        _ => Err(RpcError::invalid_params(format!(
            "Invalid arguments: {name} must be a number"
        ))),
    }
}

/// a + b; integral results are integers (printed without ".0").
pub fn add_numbers(a: &Number, b: &Number) -> Value {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        if let Some(sum) = x.checked_add(y) {
            return json!(sum);
        }
    }
    let sum = a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0);
    if sum.fract() == 0.0 && sum.abs() < 9_007_199_254_740_992.0 {
        json!(sum as i64)
    } else {
        json!(sum)
    }
}

pub fn call(ctx: &Ctx, params: &Map<String, Value>) -> Reply {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return RpcError::invalid_params("Missing required parameter: name").into();
    };
    let empty = Map::new();
    let args = match params.get("arguments") {
        None => &empty,
        Some(Value::Object(a)) => a,
        Some(_) => return RpcError::invalid_params("arguments must be an object").into(),
    };
    if let Some(flow) = flows::tool_flow(name).or_else(|| crate::url_elicit::tool_flow(name)) {
        return mrtr::run(ctx, flow, params, Target::Tool);
    }
    // Unlisted tools of the URL-elicitation and tasks tests (tools/list stays as it was).
    if let Some(reply) = crate::url_elicit::call(ctx, name)
        .or_else(|| crate::tasks::call(ctx, name, args))
        .or_else(|| crate::redefine::call(ctx, name, args))
    {
        return reply;
    }
    if let Some(reply) = ctx.srv.cfg.apps.then(|| crate::apps::call(name)).flatten() {
        return reply;
    }
    if !definitions_cached().iter().any(|t| t["name"] == name) {
        return RpcError::invalid_params(format!("Unknown tool: {name}")).into();
    }
    if let Some(err) = mrtr::unexpected_state(ctx, params) {
        return err.into();
    }
    match plain(ctx, name, args) {
        Ok(reply) => reply,
        Err(e) => e.into(),
    }
}

fn plain(ctx: &Ctx, name: &str, args: &Map<String, Value>) -> Result<Reply, RpcError> {
    let srv = &ctx.srv;
    let text = |t: &str| Ok(Reply::Result(text_result(t)));
    match name {
        "echo" => text(arg_str(args, "text")?),
        "big_numbers" => {
            let value = big_numbers()["properties"]["n"].clone();
            Ok(Reply::Result(structured_result(&value.to_string(), value)))
        }
        "add" => {
            let sum = add_numbers(arg_number(args, "a")?, arg_number(args, "b")?);
            Ok(Reply::Result(structured_result(
                &sum.to_string(),
                json!({"result": sum}),
            )))
        }
        "echo_meta" => {
            let meta = if ctx.meta.is_null() {
                json!({})
            } else {
                ctx.meta.clone()
            };
            Ok(Reply::Result(structured_result(&meta.to_string(), meta)))
        }
        "typed" => {
            let value = args.get("value").cloned().unwrap_or(Value::Null);
            if args.get("omit").and_then(Value::as_bool) == Some(true) {
                return text(&value.to_string());
            }
            Ok(Reply::Result(structured_result(
                &value.to_string(),
                json!({"result": value}),
            )))
        }
        "schema_echo" => {
            let value = Value::Object(args.clone());
            Ok(Reply::Result(structured_result(&value.to_string(), value)))
        }
        "fail" => Ok(Reply::Result(error_result("tool failed on purpose"))),
        "media" => Ok(Reply::Result(media_result())),
        "rpc_error" => Err(RpcError::new(-32050, "fixture error").with_data(json!({"detail": "on purpose"}))),
        "no_result_type" => Ok(Reply::ResultWithoutType(text_result("no resultType"))),
        "bad_result_type" => {
            let mut body = Map::new();
            body.insert("resultType".into(), json!("bogus"));
            body.extend(text_result("bad resultType"));
            Ok(Reply::Result(body))
        }
        "progress" => {
            let steps = arg_u64(args, "steps", Some(3), 10_000)?;
            let delay = arg_u64(args, "delay_ms", Some(10), 60_000)?;
            for i in 1..=steps {
                ctx.progress(i, steps, &format!("step {i}"));
                thread::sleep(Duration::from_millis(delay));
            }
            ctx.log("info", json!("progress tool ran"));
            text("progress done")
        }
        "slow" => {
            let ms = arg_u64(args, "ms", None, u64::MAX)?;
            thread::sleep(Duration::from_millis(ms));
            text(&format!("slept {ms}"))
        }
        "hang" => {
            eprintln!("fixture: hanging request {}", ctx.id);
            Ok(Reply::Nothing)
        }
        "crash" => {
            eprintln!("fixture: crashing on purpose");
            std::process::exit(7);
        }
        "garbage" => {
            ctx.out.send_raw("this is not json");
            Ok(Reply::Nothing)
        }
        "big" => {
            let bytes = arg_u64(args, "bytes", None, BIG_MAX)?;
            text(&"x".repeat(bytes as usize))
        }
        "notify" => {
            notify(ctx);
            text("notified")
        }
        "touch" => {
            let uri = arg_str(args, "uri")?;
            match ctx.era {
                Era::Legacy => {
                    if ctx.session().subscriptions.contains(uri) {
                        ctx.session
                            .outlet
                            .notify("notifications/resources/updated", Some(json!({"uri": uri})));
                    }
                }
                Era::Modern => {
                    srv.listens.broadcast(&Event::ResourceUpdated(uri));
                }
            }
            text("touched")
        }
        "end_listens" => {
            let n = srv.listens.end_all(&server_info());
            text(&format!("ended {n} listens"))
        }
        "ping_client" => {
            if ctx.era == Era::Modern {
                return Ok(Reply::Result(error_result(
                    "ping_client is only available in the legacy era",
                )));
            }
            match ctx.ask_client(&[("ping".to_string(), json!({"method": "ping"}))]) {
                Ok(_) => text("client answered ping"),
                Err(ClientFail::Error(m)) => Ok(Reply::Result(error_result(&format!("client error: {m}")))),
                Err(ClientFail::Lacks(c)) => Ok(Reply::Result(error_result(&format!("client lacks {c}")))),
            }
        }
        "roots_changed_count" => text(&ctx.session().roots_changed.to_string()),
        "log_level" => {
            let level = ctx.session().log_level.clone();
            text(level.as_deref().unwrap_or("unset"))
        }
        "headers_echo" => {
            let headers = Value::Object(ctx.param_headers.clone().unwrap_or_default());
            Ok(Reply::Result(structured_result(&headers.to_string(), headers)))
        }
        "cancelled_ids" => {
            let ids = Value::Array(ctx.session().cancelled.clone());
            text(&ids.to_string())
        }
        other => Err(RpcError::invalid_params(format!("Unknown tool: {other}"))),
    }
}

pub fn notify(ctx: &Ctx) {
    let srv = &ctx.srv;
    match ctx.era {
        Era::Legacy => {
            for method in [
                "notifications/tools/list_changed",
                "notifications/prompts/list_changed",
                "notifications/resources/list_changed",
            ] {
                ctx.session.outlet.notify(method, None);
            }
            ctx.log("info", json!("notified"));
        }
        Era::Modern => {
            for event in [
                Event::ToolsListChanged,
                Event::PromptsListChanged,
                Event::ResourcesListChanged,
            ] {
                srv.listens.broadcast(&event);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(v: Value) -> Number {
        match v {
            Value::Number(n) => n,
            _ => unreachable!(),
        }
    }

    #[test]
    fn add_prints_integers_plainly() {
        assert_eq!(add_numbers(&n(json!(2)), &n(json!(3))).to_string(), "5");
        assert_eq!(add_numbers(&n(json!(1.5)), &n(json!(1.5))).to_string(), "3");
        assert_eq!(add_numbers(&n(json!(0.25)), &n(json!(1))).to_string(), "1.25");
        assert_eq!(add_numbers(&n(json!(-4)), &n(json!(1))).to_string(), "-3");
        assert_eq!(
            add_numbers(&n(json!(i64::MAX)), &n(json!(1))).to_string(),
            "9.223372036854776e+18"
        );
    }

    #[test]
    fn tool_names_are_unique_and_schema_echo_is_verbatim() {
        let defs = definitions();
        let mut names: Vec<&str> = defs.iter().filter_map(|t| t["name"].as_str()).collect();
        let total = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), total);
        let schema = &defs.iter().find(|t| t["name"] == "schema_echo").unwrap()["inputSchema"];
        assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
        assert_eq!(schema["additionalProperties"], false);
        assert!(schema["$defs"]["item"].is_object());
        for flow in ["elicit_once", "three_rounds", "roots", "no_state", "always_input"] {
            assert!(flows::tool_flow(flow).is_some(), "{flow}");
            assert!(names.contains(&flow));
        }
    }
}
