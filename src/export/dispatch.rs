//! The model's tool calls routed back: name to server and tool, arguments checked against the
//! tool's original input schema, the call made, the result turned into the API's message.

use super::calls::ToolCall;
use super::results::{message, Outcome, ResultOptions};
use super::{Exported, Format, Route};
use crate::base::BoxFuture;
use crate::client::{Client, RequestOptions, Schema};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

/// At most this many schema mismatches are quoted back to the model.
const MAX_QUOTED: usize = 8;

/// What dispatch calls tools through: a [`Client`], or anything serving several servers (a
/// hub), given the route's server name.
pub trait ToolCaller: Send + Sync {
    /// Calls `tool` (on `server`, when the export named one) with `arguments` (an object);
    /// resolves to the `CallToolResult`.
    fn call_tool<'a>(
        &'a self,
        server: Option<&'a str>,
        tool: &'a str,
        arguments: Value,
        opts: &'a RequestOptions,
    ) -> BoxFuture<'a, crate::Result<Value>>;
}

/// A single client serves every route (the route's server name is not consulted).
impl ToolCaller for Client {
    fn call_tool<'a>(
        &'a self,
        _server: Option<&'a str>,
        tool: &'a str,
        arguments: Value,
        opts: &'a RequestOptions,
    ) -> BoxFuture<'a, crate::Result<Value>> {
        Box::pin(Client::call_tool(self, tool, Some(arguments), opts))
    }
}

/// Routes the model's calls for one export.
pub struct Dispatcher {
    exported: Exported,
    /// Original input schemas, compiled on first use; `None`: the schema could not be
    /// compiled (a `$ref` outside it), and the server checks the arguments itself.
    schemas: HashMap<String, OnceLock<Option<Schema>>>,
}

impl Dispatcher {
    /// A dispatcher for the tools of `exported`.
    pub fn new(exported: Exported) -> Dispatcher {
        let schemas = exported
            .routes
            .keys()
            .map(|name| (name.clone(), OnceLock::new()))
            .collect();
        Dispatcher { exported, schemas }
    }

    /// The export this dispatcher serves.
    pub fn exported(&self) -> &Exported {
        &self.exported
    }

    /// The format calls and results are in.
    pub fn format(&self) -> Format {
        self.exported.format
    }

    /// Every tool call in a model's reply (see [`ToolCall::all_in`]).
    pub fn calls(&self, reply: &Value) -> Result<Vec<ToolCall>, String> {
        ToolCall::all_in(self.format(), reply)
    }

    /// The route and the arguments to send for `call`, or the text to answer the model with
    /// (unknown tool, unreadable or mismatching arguments).
    pub fn check(&self, call: &ToolCall) -> Result<(&Route, Value), String> {
        let Some(route) = self.exported.routes.get(&call.name) else {
            let known: Vec<&str> = self.exported.routes.keys().map(String::as_str).take(50).collect();
            return Err(format!(
                "There is no tool named {:?}. The tools are: {}.",
                call.name,
                known.join(", ")
            ));
        };
        if let Some(why) = &call.arguments_error {
            return Err(format!(
                "The call to {} was not made: {why}. Send the arguments as one JSON object.",
                call.name
            ));
        }
        let mut args = call.arguments.clone();
        let compiled = self.schemas.get(&call.name).and_then(|cell| {
            cell.get_or_init(|| route.input_schema.as_ref().and_then(|s| Schema::compile(s).ok()))
                .as_ref()
        });
        if let (Some(schema), Some(original)) = (compiled, route.input_schema.as_ref()) {
            if route.strict {
                drop_strict_nulls(&mut args, original, original, schema, 0);
            }
            let errors = schema.errors(&args, MAX_QUOTED);
            if !errors.is_empty() {
                let list: Vec<String> = errors
                    .iter()
                    .map(|e| format!("- {}", crate::untrusted::shown(e)))
                    .collect();
                return Err(format!(
                    "The call to {} was not made: its arguments do not match the tool's input schema.\n{}\n\
                     Correct the arguments and call the tool again.",
                    call.name,
                    list.join("\n")
                ));
            }
        }
        Ok((route, args))
    }

    /// The API's tool-result message for `call`, from a `CallToolResult` the host got itself.
    pub fn result_message(&self, call: &ToolCall, result: &Value, opts: &ResultOptions) -> Value {
        message(self.format(), call, Outcome::Result(result), opts)
    }

    /// The API's tool-result message telling the model the call failed with `text`.
    pub fn error_message(&self, call: &ToolCall, text: &str, opts: &ResultOptions) -> Value {
        message(self.format(), call, Outcome::Error(text), opts)
    }

    /// Checks and makes `call` through `caller`, and answers with the API's tool-result
    /// message. A call that does not fit (unknown tool, bad arguments) is answered without
    /// calling; a failed call is answered with the error unless `opts.errors_as_results` is
    /// false, when the error is returned. `request` carries the call's cancellation, progress
    /// and timeout (`opts.timeout_ms`, when set, replaces its timeout).
    pub async fn dispatch(
        &self,
        caller: &dyn ToolCaller,
        call: &ToolCall,
        opts: &ResultOptions,
        request: &RequestOptions,
    ) -> crate::Result<Value> {
        let (route, args) = match self.check(call) {
            Ok(found) => found,
            Err(text) => return Ok(self.error_message(call, &text, opts)),
        };
        let mut request = request.clone();
        if let Some(ms) = opts.timeout_ms {
            request.timeout = Some(Duration::from_millis(ms));
        }
        match caller
            .call_tool(route.server.as_deref(), &route.tool, args, &request)
            .await
        {
            Ok(result) => Ok(self.result_message(call, &result, opts)),
            Err(e) if opts.errors_as_results => {
                let text = format!("the call to {} failed: {e}", call.name);
                Ok(self.error_message(call, &text, opts))
            }
            Err(e) => Err(e),
        }
    }
}

/// Strict mode made optional properties required and nullable: a `null` the model sent for a
/// property the original schema leaves optional (and would refuse as `null`) means absent.
fn drop_strict_nulls(args: &mut Value, schema: &Value, root: &Value, compiled: &Schema, depth: usize) {
    if depth > 32 {
        return;
    }
    let mut schema = schema;
    for _ in 0..16 {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(r) => match crate::client::schema_ref(root, r) {
                Some(target) => schema = target,
                None => return,
            },
            None => break,
        }
    }
    match args {
        Value::Object(members) => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            let required = |k: &str| {
                schema
                    .get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|n| n == k))
            };
            members.retain(|k, v| {
                !(v.is_null()
                    && !required(k)
                    && props.get(k).is_some_and(|sub| !compiled.valid_under(sub, &Value::Null)))
            });
            for (k, v) in members.iter_mut() {
                if let Some(sub) = props.get(k) {
                    drop_strict_nulls(v, sub, root, compiled, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items").filter(|s| s.is_object()) {
                for item in items {
                    drop_strict_nulls(item, sub, root, compiled, depth + 1);
                }
            }
        }
        _ => {}
    }
}
