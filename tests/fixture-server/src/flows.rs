//! The MRTR flows behind the interactive tools, the `needs_input` prompt and
//! the `fixture://needs-input` resource.

use crate::catalog::{prompt_body, resource_body, text_contents};
use crate::mrtr::{elicit_answer, elicit_field, invalid_state, root_uris, sampling_text, Flow, Leg, StateKind, Step};
use crate::server::Ctx;
use crate::tools::text_result;
use crate::wire::RpcError;
use serde_json::{json, Value};

/// An `elicitation/create` form request for one string (or other) field.
fn elicit(message: &str, field: &str, field_type: &str) -> Value {
    json!({"method": "elicitation/create", "params": {
        "mode": "form",
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {field: {"type": field_type}},
            "required": [field],
        },
    }})
}

fn sample(text: &str, max_tokens: u32) -> Value {
    json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": max_tokens,
    }})
}

pub fn tool_flow(name: &str) -> Option<&'static Flow> {
    [
        &ELICIT_ONCE,
        &THREE_ROUNDS,
        &ELICIT_AND_SAMPLE,
        &ROOTS,
        &STATE_ONLY,
        &ALWAYS_INPUT,
        &NO_STATE,
        &SAMPLE_ONLY,
        &SAMPLE_WITH_TOOLS,
    ]
    .into_iter()
    .find(|f| f.id == name)
}

pub static ELICIT_ONCE: Flow = Flow {
    id: "elicit_once",
    state: StateKind::Encoded,
    needs_elicitation: true,
    step: elicit_once,
};

fn ask_name() -> Value {
    elicit("What is your name?", "name", "string")
}

fn elicit_once(_: &Ctx, leg: &Leg) -> Result<Step, RpcError> {
    match (leg.round, leg.response("name")) {
        (0, _) | (1, None) => Ok(leg.ask(vec![("name", ask_name())], 1, &[])),
        (1, Some(answer)) => {
            let text = match elicit_answer("name", answer)?.0 {
                "accept" => format!("Hello, {}!", elicit_field("name", answer, "name")?),
                "decline" => "Hello, stranger (declined)".to_string(),
                _ => "Hello, stranger (cancelled)".to_string(),
            };
            Ok(Step::Done(text_result(&text)))
        }
        _ => Err(invalid_state()),
    }
}

pub static THREE_ROUNDS: Flow = Flow {
    id: "three_rounds",
    state: StateKind::Encoded,
    needs_elicitation: true,
    step: three_rounds,
};

fn ask_step(n: u32) -> Value {
    elicit(&format!("Step {n} of 3: enter a value"), "value", "string")
}

fn three_rounds(_: &Ctx, leg: &Leg) -> Result<Step, RpcError> {
    let round = leg.round;
    if round == 0 {
        return Ok(leg.ask(vec![("step1", ask_step(1))], 1, &[]));
    }
    if round > 3 || leg.values.len() != (round - 1) as usize {
        return Err(invalid_state());
    }
    if (1..round).any(|earlier| leg.has_response(&format!("step{earlier}"))) {
        return Err(RpcError::invalid_params("accumulated inputResponses"));
    }
    let key = format!("step{round}");
    let Some(answer) = leg.response(&key) else {
        return Ok(leg.ask(vec![(&key, ask_step(round))], round, &leg.values));
    };
    let mut values = leg.values.clone();
    values.push(elicit_field(&key, answer, "value")?);
    if round == 3 {
        return Ok(Step::Done(text_result(&format!("steps: {}", values.join(",")))));
    }
    let next = format!("step{}", round + 1);
    Ok(leg.ask(vec![(&next, ask_step(round + 1))], round + 1, &values))
}

pub static ELICIT_AND_SAMPLE: Flow = Flow {
    id: "elicit_and_sample",
    state: StateKind::Encoded,
    needs_elicitation: true,
    step: elicit_and_sample,
};

fn elicit_and_sample(_: &Ctx, leg: &Leg) -> Result<Step, RpcError> {
    let ask = || {
        leg.ask(
            vec![
                ("confirm", elicit("Confirm the summary?", "confirmed", "boolean")),
                ("summary", sample("Summarise the fixture", 50)),
            ],
            1,
            &[],
        )
    };
    match (leg.round, leg.response("confirm"), leg.response("summary")) {
        (1, Some(confirm), Some(summary)) => {
            let action = elicit_answer("confirm", confirm)?.0;
            let text = sampling_text("summary", summary)?;
            Ok(Step::Done(text_result(&format!("confirm={action}; summary={text}"))))
        }
        (0 | 1, _, _) => Ok(ask()),
        _ => Err(invalid_state()),
    }
}

pub static ROOTS: Flow = Flow {
    id: "roots",
    state: StateKind::Encoded,
    needs_elicitation: false,
    step: roots,
};

fn roots(_: &Ctx, leg: &Leg) -> Result<Step, RpcError> {
    match (leg.round, leg.response("roots")) {
        (0, _) | (1, None) => Ok(leg.ask(vec![("roots", json!({"method": "roots/list"}))], 1, &[])),
        (1, Some(answer)) => {
            let uris = root_uris("roots", answer)?;
            Ok(Step::Done(text_result(&format!("roots: {}", uris.join(",")))))
        }
        _ => Err(invalid_state()),
    }
}

pub static STATE_ONLY: Flow = Flow {
    id: "state_only",
    state: StateKind::Encoded,
    needs_elicitation: false,
    step: state_only,
};

fn state_only(_: &Ctx, leg: &Leg) -> Result<Step, RpcError> {
    match leg.round {
        0 | 1 => Ok(leg.ask(Vec::new(), leg.round + 1, &[])),
        2 => Ok(Step::Done(text_result("done after 2 state-only rounds"))),
        _ => Err(invalid_state()),
    }
}

pub static ALWAYS_INPUT: Flow = Flow {
    id: "always_input",
    state: StateKind::Loop,
    needs_elicitation: true,
    step: always_input,
};

fn always_input(_: &Ctx, leg: &Leg) -> Result<Step, RpcError> {
    let next = leg.round.checked_add(1).ok_or_else(invalid_state)?;
    let again = elicit("Again? (this tool never completes)", "value", "string");
    Ok(leg.ask(vec![("again", again)], next, &[]))
}

pub static NO_STATE: Flow = Flow {
    id: "no_state",
    state: StateKind::None,
    needs_elicitation: true,
    step: no_state,
};

fn no_state(_: &Ctx, leg: &Leg) -> Result<Step, RpcError> {
    match leg.response("ok") {
        Some(answer) => {
            elicit_answer("ok", answer)?;
            Ok(Step::Done(text_result("no state ok")))
        }
        None => Ok(leg.ask(vec![("ok", elicit("OK to continue?", "ok", "boolean"))], 0, &[])),
    }
}

pub static SAMPLE_ONLY: Flow = Flow {
    id: "sample_only",
    state: StateKind::Encoded,
    needs_elicitation: false,
    step: sample_only,
};

fn sample_only(_: &Ctx, leg: &Leg) -> Result<Step, RpcError> {
    match (leg.round, leg.response("s")) {
        (0, _) | (1, None) => Ok(leg.ask(vec![("s", sample("Say something", 20))], 1, &[])),
        (1, Some(answer)) => Ok(Step::Done(text_result(&format!(
            "sampled: {}",
            sampling_text("s", answer)?
        )))),
        _ => Err(invalid_state()),
    }
}

/// Sampling with tools (SEP-1577), unlisted: round 1 offers `get_weather` (toolChoice auto);
/// a `tool_use` answer gets round 2, whose messages carry the tool use and its `tool_result`
/// (toolChoice none); the final text names the model's text, the tool, its input and its id.
pub static SAMPLE_WITH_TOOLS: Flow = Flow {
    id: "sample_with_tools",
    state: StateKind::Encoded,
    needs_elicitation: false,
    step: sample_with_tools,
};

const WEATHER_QUESTION: &str = "What is the weather in Paris?";

fn weather_tools() -> Value {
    json!([{
        "name": "get_weather",
        "description": "The weather in a city",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }])
}

fn sample_tools(messages: Value, mode: &str) -> Value {
    json!({"method": "sampling/createMessage", "params": {
        "messages": messages,
        "tools": weather_tools(),
        "toolChoice": {"mode": mode},
        "maxTokens": 100,
    }})
}

fn sample_with_tools(_: &Ctx, leg: &Leg) -> Result<Step, RpcError> {
    let question = json!({"role": "user", "content": {"type": "text", "text": WEATHER_QUESTION}});
    match (leg.round, leg.response("s"), leg.response("s2")) {
        (0, _, _) | (1, None, _) => Ok(leg.ask(vec![("s", sample_tools(json!([question]), "auto"))], 1, &[])),
        (1, Some(answer), _) => {
            let Some(used) = tool_use("s", answer)? else {
                return Ok(Step::Done(text_result(&format!(
                    "no tool used: {}",
                    sampling_text("s", answer)?
                ))));
            };
            let id = used["id"].as_str().unwrap_or_default().to_string();
            let messages = json!([
                question,
                {"role": "assistant", "content": [used.clone()]},
                {"role": "user", "content": [{"type": "tool_result", "toolUseId": id,
                    "content": [{"type": "text", "text": "18 degrees and sunny"}]}]},
            ]);
            let values = [
                used["name"].as_str().unwrap_or_default().to_string(),
                used["input"].to_string(),
                id,
            ];
            Ok(leg.ask(vec![("s2", sample_tools(messages, "none"))], 2, &values))
        }
        (2, _, Some(answer)) if leg.values.len() == 3 => Ok(Step::Done(text_result(&format!(
            "weather: {}; tool {}({}) id {}",
            sampling_text("s2", answer)?,
            leg.values[0],
            leg.values[1],
            leg.values[2]
        )))),
        _ => Err(invalid_state()),
    }
}

/// The `tool_use` block of a sampling answer, checked; `None` without one.
fn tool_use(key: &str, answer: &Value) -> Result<Option<Value>, RpcError> {
    let blocks: Vec<&Value> = match answer.get("content") {
        Some(Value::Array(list)) => list.iter().collect(),
        Some(one) => vec![one],
        None => {
            return Err(RpcError::invalid_params(format!(
                "Malformed input response '{key}': no content"
            )))
        }
    };
    let Some(used) = blocks.into_iter().find(|b| b["type"] == "tool_use") else {
        return Ok(None);
    };
    let ok = used["id"].is_string() && used["name"] == "get_weather" && used["input"].is_object();
    match ok {
        true => Ok(Some(used.clone())),
        false => Err(RpcError::invalid_params(format!(
            "Malformed input response '{key}': a tool_use needs an id, the name get_weather and an object input"
        ))),
    }
}

pub static PROMPT_NEEDS_INPUT: Flow = Flow {
    id: "prompt:needs_input",
    state: StateKind::Encoded,
    needs_elicitation: true,
    step: prompt_needs_input,
};

fn prompt_needs_input(_: &Ctx, leg: &Leg) -> Result<Step, RpcError> {
    match (leg.round, leg.response("topic")) {
        (0, _) | (1, None) => Ok(leg.ask(vec![("topic", elicit("Which topic?", "topic", "string"))], 1, &[])),
        (1, Some(answer)) => {
            let topic = elicit_field("topic", answer, "topic")?;
            Ok(Step::Done(prompt_body(
                "A prompt that needed input",
                &format!("Topic: {topic}"),
            )))
        }
        _ => Err(invalid_state()),
    }
}

pub static RESOURCE_NEEDS_INPUT: Flow = Flow {
    id: "resource:needs-input",
    state: StateKind::Encoded,
    needs_elicitation: true,
    step: resource_needs_input,
};

fn resource_needs_input(ctx: &Ctx, leg: &Leg) -> Result<Step, RpcError> {
    match (leg.round, leg.response("password")) {
        (0, _) | (1, None) => {
            let ask = elicit("Password for fixture://needs-input?", "password", "string");
            Ok(leg.ask(vec![("password", ask)], 1, &[]))
        }
        (1, Some(answer)) => {
            let text = match elicit_answer("password", answer)?.0 {
                "accept" => "secret accepted",
                _ => "secret refused",
            };
            let contents = vec![text_contents("fixture://needs-input", text)];
            Ok(Step::Done(resource_body(ctx, contents)))
        }
        _ => Err(invalid_state()),
    }
}
