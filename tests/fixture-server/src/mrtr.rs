//! Multi round-trip requests. A [`Flow`] is a step function over rounds;
//! the modern driver turns a pending step into an `input_required` result
//! and validates the client's retry, the legacy driver (a "bridge") sends
//! the same input requests as real server→client requests and loops.

use crate::server::{ClientFail, Ctx, Era};
use crate::state;
use crate::tools::error_result;
use crate::wire::{self, Reply, RpcError};
use serde_json::{json, Map, Value};

/// The most legs the legacy bridge runs before giving up (always_input).
pub const LEGACY_MAX_LEGS: usize = 8;

/// How a flow's `requestState` looks.
pub enum StateKind {
    /// The flow never issues a requestState.
    None,
    /// [`state::encode`] strings.
    Encoded,
    /// `loop-<n>` strings.
    Loop,
}

pub struct Flow {
    pub id: &'static str,
    pub state: StateKind,
    /// With `--require-elicitation`, modern requests lacking the
    /// `elicitation` client capability get -32021.
    pub needs_elicitation: bool,
    pub step: fn(&Ctx, &Leg) -> Result<Step, RpcError>,
}

/// One leg of a flow: `round` is the round whose questions were asked (0 on
/// the first leg), `values` what earlier rounds gathered.
pub struct Leg<'a> {
    pub flow: &'a Flow,
    pub round: u32,
    pub values: Vec<String>,
    pub responses: Option<&'a Map<String, Value>>,
}

pub enum Step {
    Done(Map<String, Value>),
    Need {
        requests: Vec<(String, Value)>,
        state: Option<String>,
    },
}

/// What the flow answers; decides how legacy bridge failures are reported.
#[derive(Clone, Copy)]
pub enum Target {
    Tool,
    Prompt,
    Resource,
}

impl Leg<'_> {
    pub fn response(&self, key: &str) -> Option<&Value> {
        self.responses.and_then(|r| r.get(key))
    }

    pub fn has_response(&self, key: &str) -> bool {
        self.response(key).is_some()
    }

    /// Asks `requests` as round `round`, with `values` carried in the state.
    pub fn ask(&self, requests: Vec<(&str, Value)>, round: u32, values: &[String]) -> Step {
        let state = match self.flow.state {
            StateKind::None => None,
            StateKind::Encoded => Some(state::encode(self.flow.id, round, values)),
            StateKind::Loop => Some(state::loop_state(round)),
        };
        Step::Need {
            requests: requests.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            state,
        }
    }
}

pub fn invalid_state() -> RpcError {
    RpcError::invalid_params("Invalid requestState")
}

/// Modern only: a request whose handler never issues state must not carry one.
pub fn unexpected_state(ctx: &Ctx, params: &Map<String, Value>) -> Option<RpcError> {
    (ctx.era == Era::Modern && params.contains_key("requestState"))
        .then(|| RpcError::invalid_params("unexpected requestState"))
}

/// The `input_required` result body.
pub fn input_required(requests: Vec<(String, Value)>, state: Option<String>) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("resultType".into(), json!("input_required"));
    if !requests.is_empty() {
        body.insert("inputRequests".into(), Value::Object(requests.into_iter().collect()));
    }
    if let Some(s) = state {
        body.insert("requestState".into(), json!(s));
    }
    body
}

pub fn run(ctx: &Ctx, flow: &Flow, params: &Map<String, Value>, target: Target) -> Reply {
    match ctx.era {
        Era::Modern => run_modern(ctx, flow, params),
        Era::Legacy => run_legacy(ctx, flow, target),
    }
}

fn missing_elicitation() -> RpcError {
    RpcError::new(
        wire::MISSING_CAPABILITY,
        "Server requires the elicitation capability for this request",
    )
    .with_data(json!({"requiredCapabilities": {"elicitation": {}}}))
}

fn run_modern(ctx: &Ctx, flow: &Flow, params: &Map<String, Value>) -> Reply {
    if ctx.srv.cfg.require_elicitation && flow.needs_elicitation && !ctx.has_capability("elicitation") {
        return missing_elicitation().into();
    }
    let state = match params.get("requestState") {
        None => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => return RpcError::invalid_params("Invalid requestState: must be a string").into(),
    };
    let responses = match params.get("inputResponses") {
        None => None,
        Some(Value::Object(r)) => Some(r),
        Some(_) => return RpcError::invalid_params("inputResponses must be an object").into(),
    };
    let decoded = match (state, &flow.state) {
        (Some(_), StateKind::None) => Err(RpcError::invalid_params("unexpected requestState")),
        (Some(s), StateKind::Encoded) => state::decode(flow.id, s).ok_or_else(invalid_state),
        (Some(s), StateKind::Loop) => state::parse_loop(s).map(|n| (n, Vec::new())).ok_or_else(invalid_state),
        (None, StateKind::None) => Ok((0, Vec::new())),
        (None, _) if responses.is_some() => Err(RpcError::invalid_params(
            "Invalid requestState: missing, but this flow issued one",
        )),
        (None, _) => Ok((0, Vec::new())),
    };
    let (round, values) = match decoded {
        Ok(d) => d,
        Err(e) => return e.into(),
    };
    let leg = Leg {
        flow,
        round,
        values,
        responses,
    };
    match (flow.step)(ctx, &leg) {
        Ok(Step::Done(body)) => Reply::Result(body),
        Ok(Step::Need { requests, state }) => {
            if !ctx.srv.cfg.lax_capabilities {
                if let Some(err) = crate::caps::undeclared(&ctx.client_capabilities(), &requests) {
                    return err.into();
                }
            }
            Reply::Result(input_required(requests, state))
        }
        Err(e) => e.into(),
    }
}

fn bridge_failure(target: Target, text: String) -> Reply {
    match target {
        Target::Tool => Reply::Result(error_result(&text)),
        Target::Prompt | Target::Resource => RpcError::new(wire::INTERNAL_ERROR, text).into(),
    }
}

fn run_legacy(ctx: &Ctx, flow: &Flow, target: Target) -> Reply {
    let mut round = 0;
    let mut values = Vec::new();
    let mut responses: Option<Map<String, Value>> = None;
    for _ in 0..LEGACY_MAX_LEGS {
        let leg = Leg {
            flow,
            round,
            values: values.clone(),
            responses: responses.as_ref(),
        };
        let (requests, state) = match (flow.step)(ctx, &leg) {
            Err(e) => return e.into(),
            Ok(Step::Done(body)) => return Reply::Result(body),
            Ok(Step::Need { requests, state }) => (requests, state),
        };
        match ctx.ask_client(&requests) {
            Ok(answers) => responses = Some(answers),
            Err(ClientFail::Error(message)) => return bridge_failure(target, format!("client error: {message}")),
            Err(ClientFail::Lacks(cap)) => return bridge_failure(target, format!("client lacks {cap}")),
        }
        if let Some(s) = state {
            let decoded = match flow.state {
                StateKind::Encoded => state::decode(flow.id, &s),
                StateKind::Loop => state::parse_loop(&s).map(|n| (n, Vec::new())),
                StateKind::None => None,
            };
            match decoded {
                Some((r, v)) => (round, values) = (r, v),
                None => return RpcError::new(wire::INTERNAL_ERROR, "Internal error: own state").into(),
            }
        }
    }
    bridge_failure(target, format!("too many input rounds (more than {LEGACY_MAX_LEGS})"))
}

fn malformed(key: &str, what: &str) -> RpcError {
    RpcError::invalid_params(format!("Malformed input response '{key}': {what}"))
}

/// An ElicitResult's action and optional content.
pub type ElicitAnswer<'a> = (&'a str, Option<&'a Map<String, Value>>);

/// Parses an ElicitResult.
pub fn elicit_answer<'a>(key: &str, v: &'a Value) -> Result<ElicitAnswer<'a>, RpcError> {
    let action = v
        .get("action")
        .and_then(Value::as_str)
        .filter(|a| matches!(*a, "accept" | "decline" | "cancel"))
        .ok_or_else(|| malformed(key, "expected an ElicitResult with action accept|decline|cancel"))?;
    match v.get("content") {
        None => Ok((action, None)),
        Some(Value::Object(c)) => Ok((action, Some(c))),
        Some(_) => Err(malformed(key, "content must be an object")),
    }
}

/// The accepted value of `field`, or "(decline)" / "(cancel)".
pub fn elicit_field(key: &str, v: &Value, field: &str) -> Result<String, RpcError> {
    let (action, content) = elicit_answer(key, v)?;
    if action != "accept" {
        return Ok(format!("({action})"));
    }
    match content.and_then(|c| c.get(field)) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Ok(other.to_string()),
        None => Err(malformed(key, &format!("accepted without content.{field}"))),
    }
}

/// The text of a CreateMessageResult (first text block).
pub fn sampling_text(key: &str, v: &Value) -> Result<String, RpcError> {
    let content = v
        .get("content")
        .ok_or_else(|| malformed(key, "expected a CreateMessageResult with content"))?;
    let blocks: Vec<&Value> = match content {
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    Ok(blocks
        .iter()
        .find(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .and_then(|b| b.get("text"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string())
}

/// The URIs of a ListRootsResult.
pub fn root_uris(key: &str, v: &Value) -> Result<Vec<String>, RpcError> {
    v.get("roots")
        .and_then(Value::as_array)
        .and_then(|roots| {
            roots
                .iter()
                .map(|r| r.get("uri").and_then(Value::as_str).map(str::to_string))
                .collect::<Option<Vec<String>>>()
        })
        .ok_or_else(|| malformed(key, "expected a ListRootsResult"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_required_shape() {
        let body = input_required(vec![("k".into(), json!({"method": "roots/list"}))], Some("s".into()));
        assert_eq!(
            serde_json::to_string(&body).unwrap(),
            r#"{"resultType":"input_required","inputRequests":{"k":{"method":"roots/list"}},"requestState":"s"}"#
        );
        let state_only = input_required(Vec::new(), Some("s".into()));
        assert_eq!(
            Value::Object(state_only),
            json!({"resultType": "input_required", "requestState": "s"})
        );
    }

    #[test]
    fn parses_answers() {
        let accept = json!({"action": "accept", "content": {"name": "Ada"}});
        assert_eq!(elicit_field("k", &accept, "name").unwrap(), "Ada");
        assert_eq!(
            elicit_field("k", &json!({"action": "decline"}), "name").unwrap(),
            "(decline)"
        );
        assert!(elicit_field("k", &json!({"action": "accept"}), "name").is_err());
        assert!(elicit_answer("k", &json!({"action": "maybe"})).is_err());

        let single = json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"});
        assert_eq!(sampling_text("s", &single).unwrap(), "hi");
        let many = json!({"content": [{"type": "image", "data": "", "mimeType": "image/png"},
                                      {"type": "text", "text": "second"}]});
        assert_eq!(sampling_text("s", &many).unwrap(), "second");
        assert!(sampling_text("s", &json!({})).is_err());

        let roots = json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b", "name": "B"}]});
        assert_eq!(root_uris("r", &roots).unwrap(), vec!["file:///a", "file:///b"]);
        assert!(root_uris("r", &json!({"roots": [{}]})).is_err());
    }
}
