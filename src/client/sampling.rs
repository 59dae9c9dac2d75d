//! Sampling with tools (SEP-1577). A `sampling/createMessage` request may offer `tools` and a
//! `toolChoice` once the client declared `sampling.tools` (configuration key `sampling_tools`);
//! the host's sampling handler receives both in the request's params and may answer with
//! `tool_use` content. [`Checked`] wraps the sampling handler on both routes (MRTR rounds and
//! legacy server→client requests): it refuses tools offered to a client that never declared
//! them, and checks the answer's shape before the server sees it.
//!
//! Sampling itself is deprecated by the 2026-07-28 specification (SEP-2577; removal no earlier
//! than the first release after 2027-07-28). It keeps working here, on both eras.

use super::handlers::{HandlerError, InputHandler, InputRequest};
use crate::base::{codes, BoxFuture};
use serde_json::Value;
use std::sync::Arc;

/// The sampling handler with the checks of this module.
pub(crate) struct Checked {
    pub handler: Arc<dyn InputHandler>,
    /// The client declares `sampling.tools`.
    pub tools_declared: bool,
}

impl InputHandler for Checked {
    fn handle(&self, request: InputRequest) -> BoxFuture<'static, Result<Value, HandlerError>> {
        let offer = match Offer::of(request.params.as_ref(), self.tools_declared) {
            Ok(offer) => offer,
            Err(e) => return Box::pin(async move { Err(e) }),
        };
        let answer = self.handler.handle(request);
        Box::pin(async move {
            let answer = answer.await?;
            check_answer(&answer, &offer).map_err(|why| HandlerError {
                code: Some(codes::INTERNAL_ERROR),
                message: format!("the sampling handler's answer is malformed: {why}"),
            })?;
            Ok(answer)
        })
    }
}

/// The tools a request offered, and whether the model may use them.
#[derive(Debug, Default)]
struct Offer {
    names: Vec<String>,
    /// `toolChoice.mode` is `none`.
    forbidden: bool,
}

impl Offer {
    fn of(params: Option<&Value>, declared: bool) -> Result<Offer, HandlerError> {
        let invalid = |message: String| HandlerError {
            code: Some(codes::INVALID_PARAMS),
            message,
        };
        let tools = params.and_then(|p| p.get("tools")).filter(|t| !t.is_null());
        let choice = params.and_then(|p| p.get("toolChoice")).filter(|t| !t.is_null());
        if (tools.is_some() || choice.is_some()) && !declared {
            return Err(invalid(
                "the request offers tools, and this client did not declare sampling.tools".into(),
            ));
        }
        let names = match tools {
            None => Vec::new(),
            Some(Value::Array(list)) => list
                .iter()
                .map(|t| t.get("name").and_then(Value::as_str).map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| invalid("a tool in the request's tools has no name".into()))?,
            Some(_) => return Err(invalid("the request's tools is not an array".into())),
        };
        let forbidden = match choice {
            None => false,
            Some(c) => match c.get("mode") {
                None => false,
                Some(Value::String(m)) if matches!(m.as_str(), "auto" | "required") => false,
                Some(Value::String(m)) if m == "none" => true,
                Some(_) => {
                    return Err(invalid(
                        "the request's toolChoice.mode is not auto, required or none".into(),
                    ))
                }
            },
        };
        Ok(Offer { names, forbidden })
    }
}

/// A `CreateMessageResult`'s content: one block or an array of them, each with its `type`; a
/// `tool_use` block names an offered tool (the request allowing their use) with an `id` and an
/// object `input`; a `tool_result` block has a `toolUseId` and an array `content`.
fn check_answer(answer: &Value, offer: &Offer) -> Result<(), String> {
    let content = answer.get("content").ok_or("it has no content")?;
    let blocks: Vec<&Value> = match content {
        Value::Array(list) => list.iter().collect(),
        one => vec![one],
    };
    for block in blocks {
        let kind = block
            .get("type")
            .and_then(Value::as_str)
            .ok_or("a content block has no type")?;
        match kind {
            "tool_use" => check_tool_use(block, offer)?,
            "tool_result" => {
                if !block.get("toolUseId").is_some_and(Value::is_string) {
                    return Err("a tool_result block has no toolUseId".into());
                }
                if !block.get("content").is_some_and(Value::is_array) {
                    return Err("a tool_result block's content is not an array".into());
                }
            }
            "text" if !block.get("text").is_some_and(Value::is_string) => return Err("a text block has no text".into()),
            _ => {}
        }
    }
    if let Some(reason) = answer.get("stopReason") {
        if !reason.is_string() {
            return Err("its stopReason is not a string".into());
        }
    }
    Ok(())
}

fn check_tool_use(block: &Value, offer: &Offer) -> Result<(), String> {
    let name = block
        .get("name")
        .and_then(Value::as_str)
        .ok_or("a tool_use block has no name")?;
    if block.get("id").and_then(Value::as_str).is_none_or(str::is_empty) {
        return Err("a tool_use block has no id".into());
    }
    if !block.get("input").is_some_and(Value::is_object) {
        return Err("a tool_use block's input is not an object".into());
    }
    if offer.names.is_empty() {
        return Err("it uses a tool, and the request offered none".into());
    }
    if offer.forbidden {
        return Err("it uses a tool, and the request's toolChoice.mode is none".into());
    }
    if !offer.names.iter().any(|n| n == name) {
        return Err(format!("it uses the tool {name:?}, which the request did not offer"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn offer(params: Value, declared: bool) -> Result<Offer, HandlerError> {
        Offer::of(Some(&params), declared)
    }

    #[test]
    fn offers() {
        let tools =
            json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}], "toolChoice": {"mode": "auto"}});
        assert_eq!(offer(tools.clone(), true).unwrap().names, ["a"]);
        let refused = offer(tools, false).unwrap_err();
        assert_eq!(refused.code, Some(codes::INVALID_PARAMS));
        assert!(refused.message.contains("sampling.tools"), "{}", refused.message);
        assert!(offer(json!({"toolChoice": {"mode": "auto"}}), false).is_err());
        assert!(offer(json!({"tools": {}}), true).is_err());
        assert!(offer(json!({"tools": [{}]}), true).is_err());
        assert!(offer(json!({"tools": [], "toolChoice": {"mode": "sometimes"}}), true).is_err());
        assert!(
            offer(json!({"tools": [{"name": "a"}], "toolChoice": {"mode": "none"}}), true)
                .unwrap()
                .forbidden
        );
        assert!(offer(json!({"messages": []}), false).unwrap().names.is_empty());
        assert!(Offer::of(None, false).is_ok());
    }

    #[test]
    fn answers() {
        let a = Offer {
            names: vec!["get_weather".into()],
            forbidden: false,
        };
        let none = Offer::default();
        let use_ = |block: Value| json!({"role": "assistant", "model": "m", "stopReason": "toolUse", "content": block});
        let good = json!({"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Paris"}});
        assert!(check_answer(&use_(good.clone()), &a).is_ok());
        assert!(check_answer(
            &use_(json!([{"type": "text", "text": "let me look"}, good.clone()])),
            &a
        )
        .is_ok());
        assert!(check_answer(&use_(json!({"type": "text", "text": "hi"})), &none).is_ok());
        for (bad, why) in [
            (use_(good.clone()), "offered none"),
            (json!({"content": {"type": "text"}}), "no text"),
            (json!({"model": "m"}), "no content"),
            (use_(json!([{"text": "x"}])), "no type"),
            (
                json!({"content": {"type": "text", "text": "x"}, "stopReason": 3}),
                "stopReason",
            ),
        ] {
            assert!(check_answer(&bad, &none).unwrap_err().contains(why), "{bad}");
        }
        for (block, why) in [
            (
                json!({"type": "tool_use", "id": "t1", "name": "other", "input": {}}),
                "did not offer",
            ),
            (
                json!({"type": "tool_use", "id": "", "name": "get_weather", "input": {}}),
                "no id",
            ),
            (
                json!({"type": "tool_use", "id": "t1", "name": "get_weather", "input": "x"}),
                "not an object",
            ),
            (json!({"type": "tool_use", "id": "t1", "input": {}}), "no name"),
            (json!({"type": "tool_result", "content": []}), "toolUseId"),
            (
                json!({"type": "tool_result", "toolUseId": "t1", "content": {}}),
                "not an array",
            ),
        ] {
            assert!(
                check_answer(&use_(block.clone()), &a).unwrap_err().contains(why),
                "{block}"
            );
        }
        let forbidden = Offer {
            names: vec!["get_weather".into()],
            forbidden: true,
        };
        assert!(check_answer(&use_(good), &forbidden).unwrap_err().contains("none"));
    }
}
