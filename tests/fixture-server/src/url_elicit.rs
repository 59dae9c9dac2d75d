//! URL-mode elicitation (SEP-1036): the `url_login` flow (modern: an `inputRequests` entry with
//! `mode: "url"`; legacy: a pushed `elicitation/create` with an `elicitationId`, followed by
//! `notifications/elicitation/complete`), and the legacy -32042 error (`url_required`), whose
//! completion notification `url_complete` sends. These tools are not listed by `tools/list`.

use crate::mrtr::{elicit_answer, invalid_state, Flow, Leg, StateKind, Step};
use crate::server::{Ctx, Era};
use crate::tools::text_result;
use crate::wire::{self, Reply, RpcError};
use serde_json::{json, Value};

pub const LOGIN_URL: &str = "https://auth.example.com/login?session=fixture";
pub const ELICITATION_ID: &str = "fixture-elicitation-1";
/// -32042, URLElicitationRequiredError (2025-11-25).
pub const URL_ELICITATION_REQUIRED: i64 = -32042;

pub fn tool_flow(name: &str) -> Option<&'static Flow> {
    (name == URL_LOGIN.id).then_some(&URL_LOGIN)
}

pub static URL_LOGIN: Flow = Flow {
    id: "url_login",
    state: StateKind::Encoded,
    needs_elicitation: true,
    step: url_login,
};

fn ask_login(era: Era) -> Value {
    let mut params = json!({"mode": "url", "message": "Sign in to continue", "url": LOGIN_URL});
    if era == Era::Legacy {
        params["elicitationId"] = json!(ELICITATION_ID);
    }
    json!({"method": "elicitation/create", "params": params})
}

fn url_login(ctx: &Ctx, leg: &Leg) -> Result<Step, RpcError> {
    match (leg.round, leg.response("login")) {
        (0, _) | (1, None) => Ok(leg.ask(vec![("login", ask_login(ctx.era))], 1, &[])),
        (1, Some(answer)) => {
            let (action, content) = elicit_answer("login", answer)?;
            if content.is_some() {
                return Err(RpcError::invalid_params(
                    "Malformed input response 'login': a URL-mode answer carries no content",
                ));
            }
            if ctx.era == Era::Legacy && action == "accept" {
                // The out-of-band step "finished": tell the client, as 2025-11-25 servers do.
                complete_notification(ctx);
            }
            Ok(Step::Done(text_result(&format!("url login: {action}"))))
        }
        _ => Err(invalid_state()),
    }
}

fn complete_notification(ctx: &Ctx) {
    let params = json!({"elicitationId": ELICITATION_ID});
    ctx.out
        .send(&wire::notification("notifications/elicitation/complete", Some(params)));
}

/// `url_required` (legacy: -32042 with `data.elicitations`; modern: method not found, the code
/// no longer exists) and `url_complete` (sends the completion notification, then answers).
pub fn call(ctx: &Ctx, name: &str) -> Option<Reply> {
    match name {
        "url_required" if ctx.era == Era::Legacy => Some(
            RpcError::new(URL_ELICITATION_REQUIRED, "This request requires more information.")
                .with_data(json!({"elicitations": [{
                    "mode": "url",
                    "elicitationId": ELICITATION_ID,
                    "url": LOGIN_URL,
                    "message": "Authorize access to continue",
                }]}))
                .into(),
        ),
        "url_complete" if ctx.era == Era::Legacy => {
            complete_notification(ctx);
            Some(Reply::Result(text_result("completion sent")))
        }
        _ => None,
    }
}
